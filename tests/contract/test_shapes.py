"""answer_schema: the answer's fields are the ones it shows, read from a dataclass's attributes,
each type mapped once."""

from dataclasses import dataclass, field

import pytest
from marshmallow import fields

from service.api.dump import dumper
from service.api.shapes import Num, answer_schema


@dataclass(frozen=True, kw_only=True)
class Inner:
    tokens_per_s: float
    """Tokens one stream decodes per second,
    on one copy."""
    bound: str


@dataclass(frozen=True, kw_only=True)
class Outer:
    cards: int
    fits: bool
    memory_bytes: int
    speed: Inner
    note: str | None
    points: tuple[Inner, ...]
    rates: dict[str, float]
    value: float | int | str
    hidden: object = None
    latency_s: float = field(default=0.0, metadata={"description": "Seconds to the first token."})


InnerSchema = answer_schema(Inner, "ShapeInner", show="tokens_per_s bound")
OuterSchema = answer_schema(Outer, "ShapeOuter", show="cards fits memory_bytes speed note points rates value latency_s")
FlatSchema = answer_schema(Outer, "ShapeFlat", show="cards fits memory_bytes speed note rates value latency_s",
                           flatten=("speed",))
OUTER = Outer(cards=2, fits=True, memory_bytes=3 * 2**30, speed=Inner(tokens_per_s=0.1 + 0.2, bound="memory"),
              note=None, points=(Inner(tokens_per_s=1.0, bound="compute"),), rates={"bf16": 1e15},
              value="auto", latency_s=0.25)


@pytest.mark.parametrize(("name", "kind", "nullable"), [
    ("cards", fields.Integer, False),
    ("fits", fields.Boolean, False),
    ("speed", fields.Nested, False),
    ("note", fields.String, True),
    ("points", fields.List, False),
    ("rates", fields.Dict, False),
    ("value", fields.Raw, False),
    ("latency_s", Num, False),
])
def test_each_type_maps_to_its_field(name, kind, nullable):
    made = OuterSchema._declared_fields[name]
    assert isinstance(made, kind) and made.required and made.allow_none is nullable


def test_the_answer_has_the_fields_it_shows_in_that_order():
    assert list(OuterSchema._declared_fields) == [
        "cards", "fits", "memory_bytes", "speed", "note", "points", "rates", "value", "latency_s"]
    assert list(answer_schema(Outer, "ShapeFew", show="latency_s cards")._declared_fields) == ["latency_s", "cards"]


def test_a_description_in_the_dataclass_metadata_reaches_the_schema():
    assert OuterSchema._declared_fields["latency_s"].metadata["description"] == "Seconds to the first token."


@pytest.mark.parametrize("dump", [lambda s, o: s().dump(o), lambda s, o: dumper(s)(o)],
                         ids=["marshmallow", "compiled"])
def test_the_dump_rounds_converts_and_flattens(dump):
    assert dump(OuterSchema, OUTER) == {
        "cards": 2, "fits": True, "memory_bytes": 3 * 2**30,
        "speed": {"tokens_per_s": 0.3, "bound": "memory"}, "note": None,
        "points": [{"tokens_per_s": 1.0, "bound": "compute"}], "rates": {"bf16": 1e15},
        "value": "auto", "latency_s": 0.25}
    flat = dump(FlatSchema, OUTER)
    assert flat["tokens_per_s"] == 0.3 and flat["bound"] == "memory" and "speed" not in flat


def test_a_field_the_domain_adds_stays_out_of_the_answer_until_it_is_shown():
    @dataclass(frozen=True, kw_only=True)
    class Grown(Inner):
        time_to_first_token_s: float

    grown = Grown(tokens_per_s=2.0, bound="memory", time_to_first_token_s=0.5)
    assert dumper(answer_schema(Grown, "ShapeGrown", show="tokens_per_s bound"))(grown) == dumper(InnerSchema)(grown)
    shown = answer_schema(Grown, "ShapeGrownShown", show="tokens_per_s bound time_to_first_token_s")
    assert dumper(shown)(grown)["time_to_first_token_s"] == 0.5


def test_a_rename_in_the_domain_fails_at_import_and_one_mapping_keeps_the_callers_answer():
    @dataclass(frozen=True, kw_only=True)
    class Renamed:  # Inner, with tokens_per_s renamed in the domain
        decode_tokens_per_s: float
        bound: str

    with pytest.raises(TypeError, match="show 'tokens_per_s' reads 'tokens_per_s'.*rename"):
        answer_schema(Renamed, "ShapeRenamed", show="tokens_per_s bound")
    mapped = answer_schema(Renamed, "ShapeRenamed", show="tokens_per_s bound",
                           rename={"tokens_per_s": "decode_tokens_per_s"})
    assert dumper(mapped)(Renamed(decode_tokens_per_s=0.3, bound="memory")) == \
        dumper(InnerSchema)(Inner(tokens_per_s=0.3, bound="memory")) == {"tokens_per_s": 0.3, "bound": "memory"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"show": "cards nope"}, "nope"),
    ({"show": "cards missing", "flatten": ("missing",)}, "missing"),
    ({"show": "cards", "flatten": ("speed",)}, "not shown"),  # declared for nothing
    ({"show": "cards", "rename": {"count": "cards"}}, "not shown"),
    ({"show": "cards cards"}, "twice"),
    ({"show": "cards hidden"}, "object"),  # `hidden: object` has no JSON form
])
def test_what_has_no_form_is_an_error_not_a_dropped_field(kwargs, message):
    with pytest.raises(TypeError, match=message):
        answer_schema(Outer, "ShapeBad", **kwargs)


def test_a_nested_answer_must_be_declared_first():
    @dataclass(frozen=True)
    class Orphan:
        x: int

    @dataclass(frozen=True)
    class Parent:
        child: Orphan

    with pytest.raises(TypeError, match="Orphan has no answer schema"):
        answer_schema(Parent, show="child")


def test_a_docstring_under_a_field_is_its_description():
    inner, outer, flat = InnerSchema().fields, OuterSchema().fields, FlatSchema().fields
    assert inner["tokens_per_s"].metadata["description"] == "Tokens one stream decodes per second, on one copy."
    assert "description" not in inner["bound"].metadata
    assert flat["tokens_per_s"].metadata["description"] == inner["tokens_per_s"].metadata["description"]
    assert outer["latency_s"].metadata["description"] == "Seconds to the first token."


@dataclass(frozen=True, kw_only=True)
class Run:
    time_s: float
    time_s_guide: float
    """The guide's time."""
    sync_s_guide: float


@dataclass(frozen=True, kw_only=True)
class RunAnswer:
    run: Run
    cards: int


RunSchema = answer_schema(Run, "ShapeRun", show="time_s guide", group={"guide": (
    "The guide's figures.", "ShapeRunGuide", {"time_s": "time_s_guide", "sync_s": "sync_s_guide"})})
RunAnswerSchema = answer_schema(RunAnswer, "ShapeRunAnswer", show="run cards", flatten=("run",))


def test_a_group_shows_the_answers_own_fields_as_one_nested_object():
    run = RunAnswer(run=Run(time_s=10.0, time_s_guide=12.0, sync_s_guide=0.5), cards=8)
    expected = {"time_s": 10.0, "guide": {"time_s": 12.0, "sync_s": 0.5}}
    assert dumper(RunSchema)(run.run) == RunSchema().dump(run.run) == expected
    assert dumper(RunAnswerSchema)(run) == RunAnswerSchema().dump(run) == {**expected, "cards": 8}
    inner = RunSchema().fields["guide"].schema.fields
    assert inner["time_s"].metadata["description"] == "The guide's time."
    with pytest.raises(TypeError, match="group 'guide' reads 'speed_s'"):
        answer_schema(Run, "ShapeBad", show="guide", group={"guide": ("", "ShapeBadGuide", {"speed": "speed_s"})})


def test_a_flattened_answer_renamed_in_the_domain_is_mapped_like_any_field_and_when_is_checked():
    @dataclass(frozen=True, kw_only=True)
    class Moved:  # RunAnswer, with run renamed in the domain
        the_run: Run
        cards: int

    mapped = answer_schema(Moved, "ShapeMoved", show="run cards", flatten=("run",), rename={"run": "the_run"})
    run = Run(time_s=10.0, time_s_guide=12.0, sync_s_guide=0.5)
    assert dumper(mapped)(Moved(the_run=run, cards=8)) == dumper(RunAnswerSchema)(RunAnswer(run=run, cards=8))
    with pytest.raises(TypeError, match="when it is"):
        answer_schema(Run, "ShapeBadWhen", show="guide", group={"guide": ("", "ShapeBadWhenGuide", {
            "time_s": "time_s_guide"}, "no_such_attribute")})
