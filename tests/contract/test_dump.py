"""The compiled dumpers answer exactly what marshmallow's own dump of the same schema answers,
and the compiled writers write exactly its JSON.

Every view's dumper and writer is swapped for one that works both ways and compares, then the
endpoints are asked questions that reach every shape: inference and training, several cards, MoE,
targets, custom cards and hf_config models, the catalog, the decisions.
"""

import inspect
import json
from dataclasses import dataclass, field

import pytest
from marshmallow import fields

from service.api import operations, resources, schemas, write
from service.api.dump import dumper, sparse_dumper
from service.api.shapes import Num, answer_schema
from service.app import create_app

QUESTIONS = [
    ("POST", "/estimate", {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}),
    ("POST", "/estimate", {"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm", "count": 16},
                           "workload": {"mode": "full_finetune", "train_tokens": 1e9}, "lang": "zh"}),
    ("POST", "/estimate", {"model": "deepseek-v3", "hardware": {"card": "h200-sxm", "count": 16},
                           "target": {"concurrent_users": 64, "tokens_per_s_per_user": 10}}),
    ("POST", "/estimate", {"model": "qwen2.5-7b", "hardware": {"card": "a100-80gb-sxm"}, "card_price": 9000,
                           "workload": {"mode": "qlora", "train_tokens": 1e8}}),
    ("POST", "/estimate", {"model": {"params_billion": 3}, "hardware": {"card": {
        "memory_gib": 16, "bandwidth_gb_per_s": 500, "dense_tflops": {"bf16": 50}, "power_w": 200,
        "line": "consumer"}}}),
    ("GET", "/estimate?model=mixtral-8x7b&card=l40s&count=2", None),
    ("POST", "/estimate?fields=summary,fit.fits,throughput.full_load,throughput.decode_curve,alternatives,warnings",
     {"model": "deepseek-v3", "hardware": {"card": "h200-sxm", "count": 8}, "lang": "zh"}),
    ("GET", "/estimate?model=llama-3.1-8b&card=l4&fields=memory.components,energy", None),
    ("POST", "/estimate/batch", {"items": [{"model": "llama-3.1-8b", "hardware": {"card": "l4"}},
                                           {"model": "nope", "hardware": {"card": "l4"}}]}),
    ("POST", "/memory", {"model": "llama-3.1-8b", "workload": {"mode": "lora"}}),
    ("POST", "/memory", {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090", "count": 4}}),
    ("POST", "/throughput", {"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm", "count": 4}}),
    ("POST", "/scaling", {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm", "count": 8},
                          "workload": {"mode": "pretrain", "train_tokens": 1e11}, "deadline_days": 10}),
    ("POST", "/cost", {"hardware": {"card": "h100-sxm", "count": 8}, "card_price": 25000}),
    ("POST", "/cost", {"power_w": 450}),
    ("POST", "/capacity", {"model": "llama-3.1-70b", "cards": ["h100-sxm", "rtx-4090"],
                           "target": {"concurrent_users": 20, "tokens_per_s_per_user": 15}}),
    ("GET", "/cards", None),
    ("GET", "/cards/h100-sxm", None),
    ("GET", "/models", None),
    ("GET", "/models/deepseek-v3", None),
    ("POST", "/rank", {"model": "llama-3.1-8b", "line": "consumer"}),
    ("POST", "/recommend", {"model": "llama-3.1-70b", "workload": {"mode": "inference"}, "lang": "zh"}),
    ("POST", "/recommend", {"scenario": "team_inference"}),
    ("POST", "/normalize", {"value": 1979, "precision": "fp8", "sparse": True}),
    ("GET", "/troubleshoot?q=out%20of%20memory", None),
    ("POST", "/compare", {"model": "llama-3.1-70b", "options": [{"card": "h100-sxm", "count": 4}, {"card": "l40s"}],
                          "target": {"concurrent_users": 20, "tokens_per_s_per_user": 15},
                          "prices": {"h100-sxm": 25000}, "rent_per_card_hour": {"h100-sxm": 2.5}}),
    ("POST", "/compare", {"model": "llama-3.1-8b", "options": [{"card": "h100-sxm", "count": 8}, {"card": "rtx-4090"}],
                          "workload": {"mode": "pretrain", "train_tokens": 1e10}, "deadline_days": 30}),
]

checked: list[str] = []


def _checking(compiled):
    schema = compiled.schema()

    def dump(obj):
        fast = compiled(obj)
        assert fast == schema.dump(obj), type(schema).__name__
        checked.append(type(schema).__name__)
        return fast

    return dump


def _checking_text(compiled, paths=None):
    """A writer that checks its text against the dumper's dict as the provider encodes it, and
    (for a sparse answer, whose order is the answer's, not `only`'s) against marshmallow's dump."""
    schema_class = compiled.schema
    reference = dumper(schema_class) if paths is None else sparse_dumper(schema_class, paths)
    schema = schema_class(only=paths)

    def written(obj):
        text = compiled(obj)
        name = schema_class.__name__
        assert text == json.dumps(reference(obj), ensure_ascii=False, allow_nan=False, separators=(",", ":")), name
        assert json.loads(text) == schema.dump(obj), name
        checked.append(name)
        return text

    return written


@pytest.fixture()
def both_ways(monkeypatch):
    """The dumper `answered()` uses for each route's declared answer, the estimate's own, and the
    writers of answers written straight to JSON."""
    monkeypatch.setattr(operations, "dumper", lambda schema: _checking(dumper(schema)))
    real_writer, real_sparse = write.writer, write.sparse_writer
    monkeypatch.setattr(write, "writer", lambda schema: _checking_text(real_writer(schema)))
    monkeypatch.setattr(write, "sparse_writer", lambda schema, paths: _checking_text(real_sparse(schema, paths), paths))
    for name, value in list(vars(resources).items()):
        if inspect.isfunction(value) and hasattr(value, "schema"):
            monkeypatch.setattr(resources, name, _checking(value))


@pytest.fixture(scope="module")
def uncached():
    """An app without the answer cache: every question reaches its dumper."""
    return create_app({"TESTING": True, "CACHE_SIZE": 0}).test_client()


@pytest.mark.parametrize(("method", "path", "body"), QUESTIONS, ids=[q[1] for q in QUESTIONS])
def test_compiled_dump_equals_marshmallow_dump(both_ways, uncached, method, path, body):
    checked.clear()
    response = uncached.open(path, method=method, json=body)
    assert response.status_code == 200, response.get_json()
    assert checked, "no dumper was called"


def test_numbers_keep_twelve_significant_digits():
    dump = dumper(schemas.RangeSchema)
    assert dump({"low": 61319.999999999996, "typical": 0.1 + 0.2, "high": None}) == {
        "low": 61320.0, "typical": 0.3, "high": None}


def test_a_field_type_without_a_compiled_form_is_refused():
    class Odd(schemas.Schema):
        when = fields.DateTime()

    with pytest.raises(TypeError, match="DateTime"):
        dumper(Odd)


FORMS = [pytest.param(dumper, lambda value: value, id="dumper"),
         pytest.param(write.writer, lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False),
                      id="writer")]


@pytest.mark.parametrize(("compiled", "as_made"), FORMS)
def test_a_thread_asking_for_a_dumper_being_built_waits_for_the_whole_one(monkeypatch, compiled, as_made):
    """A dumper is registered before its fields are compiled (a schema may nest itself). The
    builder here stops right there until the second thread has its dumper (or half a second has
    passed): a second thread given the half-built one calls it while the builder waits (a
    KeyError, a 500 under gunicorn's threads before); one that waits for the lock gets it whole."""
    import threading

    from marshmallow import Schema

    from service.api import dump as dump_module

    inner = Schema.from_dict({"x": Num()}, name="RaceInner")
    outer = Schema.from_dict({"inner": fields.Nested(inner), "y": fields.Integer()}, name="RaceOuter")
    obj = {"inner": {"x": 1 / 3}, "y": 2}
    building, given, real = threading.Event(), threading.Event(), dump_module._compile

    def compile_after_the_second_thread(*args, **kwargs):
        if not building.is_set():
            building.set()
            given.wait(timeout=0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(dump_module, "_compile", compile_after_the_second_thread)
    answers, errors = [], []

    def second():
        building.wait(timeout=10)
        try:
            made = compiled(outer)
            given.set()
            answers.append(made(obj))
        except Exception as exc:  # noqa: BLE001 - what the half-built dumper raised
            errors.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    first = compiled(outer)(obj)
    thread.join(timeout=10)
    assert not errors and answers == [first] == [as_made(outer().dump(obj))]


@pytest.mark.parametrize("compiled", [dumper, write.writer])
def test_a_dumper_whose_build_failed_is_not_kept_half_built(compiled):
    from marshmallow import Schema

    odd = Schema.from_dict({"when": fields.DateTime(), "y": fields.Integer()}, name="HalfBuilt")
    for _ in range(2):  # the second time fails the same way, not with the half-built dumper's KeyError
        with pytest.raises(TypeError, match="DateTime"):
            compiled(odd)


@dataclass(frozen=True)
class _Held:
    low: float
    high: float | None
    label: str
    later: int = field(init=False, default=7)  # not set by __init__: read as any attribute is


_HeldSchema = answer_schema(_Held, "DumpHeld", show="low high label later")


class _Lookalike:  # another type with some of the same attributes: what it lacks is left out
    low, label = 1 / 3, "x"


@pytest.mark.parametrize(("compiled", "as_made"), FORMS)
@pytest.mark.parametrize("obj", [_Held(1 / 3, None, "a\u00e9"), {"low": 2.5, "label": "b"}, _Lookalike()],
                         ids=["the answer's dataclass", "a mapping", "another type"])
def test_an_answer_schema_reads_its_dataclass_directly_and_anything_else_as_marshmallow_does(compiled, as_made, obj):
    """The code for the dataclass an answer schema was read from reads each field its __init__
    sets without asking whether it is there; any other object or a mapping goes through the
    dispatch, which leaves out what it lacks, as marshmallow does."""
    made = compiled(_HeldSchema)
    assert made(obj) == as_made(_HeldSchema().dump(obj))
    assert made(obj) == made(obj)  # the second time through the kept form for its type
