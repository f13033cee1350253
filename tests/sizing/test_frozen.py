"""frozen.evolve: dataclasses.replace, faster, for the answer's plain frozen dataclasses."""

import dataclasses

import pytest

from service.sizing.catalog import get_card, get_model
from service.sizing.frozen import cached, evolve, keeps_hash
from service.sizing.inputs import Notes, WorkloadInput, resolve_workload
from service.sizing.links import fabric_for
from service.sizing.memory import memory_breakdown
from service.sizing.plan import Parallelism
from service.sizing.precision import get_precision
from service.sizing.ranges import Range
from service.sizing.throughput import setup

MODEL = get_model("llama-3.1-8b").spec
CARD = get_card("rtx-4090")


def _workload(context: int):
    return resolve_workload(WorkloadInput(context_tokens=context), Notes.unread(), MODEL)


def _deployment(context: int):
    workload = _workload(context)
    breakdown = memory_breakdown(MODEL, workload, Notes.unread())
    return setup(MODEL, workload, breakdown, CARD, Parallelism(), fabric_for(CARD, 8, None, Notes.unread()),
                 Notes.unread()).typical


@pytest.mark.parametrize("made, changes", [
    (Range(1.0, 2.0, 3.0), {"note": None, "low": 0.5}),
    (_workload(4096), {"precision": get_precision("fp8"), "parallelism": None}),
    (_workload(4096), {}),
    (_deployment(4096), {"ideal": True}),
])
def test_evolve_makes_what_replace_makes(made, changes):
    assert evolve(made, **changes) == dataclasses.replace(made, **changes)
    assert type(evolve(made, **changes)) is type(made)


def test_what_an_object_cached_from_its_old_fields_is_worked_out_again():
    short, long = _deployment(1000), _deployment(100_000)
    assert short.rates.kv_bytes_per_sequence < long.rates.kv_bytes_per_sequence  # cached on `short`
    moved = evolve(short, breakdown=long.breakdown)
    assert moved.rates == long.rates
    assert short.rates != long.rates  # the old one keeps its own


def test_evolve_refuses_what_replace_would_not_copy_plainly():
    with pytest.raises(TypeError, match="no field 'nope'"):
        evolve(Range(1.0, 2.0, 3.0), nope=1)
    with pytest.raises(TypeError, match="Parallelism"):  # a __post_init__ checks its degrees
        evolve(Parallelism(), tensor=2)


def _moe_deployment(context: int, tensor: int = 1):
    model = get_model("mixtral-8x7b").spec
    workload = resolve_workload(WorkloadInput(context_tokens=context), Notes.unread(), model)
    breakdown = memory_breakdown(model, workload, Notes.unread())
    return setup(model, workload, breakdown, get_card("h100-sxm"), Parallelism(tensor=tensor),
                 fabric_for(get_card("h100-sxm"), 8, None, Notes.unread()), Notes.unread()).typical


def _rates(deployment) -> dict:
    return {name: value for name, value in dataclasses.asdict(deployment.rates).items() if name != "reads"}


@pytest.mark.parametrize("deployment", [_deployment(1000), _moe_deployment(1000, tensor=2)], ids=["dense", "moe"])
@pytest.mark.parametrize("changes", [
    {"ideal": True},
    {"bandwidth_efficiency": 0.5, "compute_fraction": 0.3, "overhead_scale": 1.5},
    {"priced": False},
    "another context",
    "another context, at an end",
])
def test_a_varied_deployment_carries_the_rates_it_would_work_out_afresh(deployment, changes):
    if isinstance(changes, str):
        longer = _moe_deployment(50_000, tensor=2) if deployment.model.is_moe else _deployment(50_000)
        changes = {"breakdown": longer.breakdown, **({"overhead_scale": 1.5} if "end" in changes else {})}
    varied, fresh = deployment.varied(**changes), evolve(deployment, **changes)
    assert varied == fresh
    assert _rates(varied) == _rates(fresh)
    assert _rates(varied) != _rates(deployment)


def test_a_deployment_varies_only_in_what_its_carried_rates_allow():
    """varied works out again only the rates the engine's shares or the breakdown set: another
    model, plan, format or engine sets every rate, and is refused."""
    with pytest.raises(TypeError, match="group"):
        _deployment(1000).varied(group=Parallelism(tensor=2))


def test_what_is_kept_by_argument_is_worked_out_once_per_object_and_not_copied():
    from service.sizing.frozen import kept_by_argument

    made: list = []

    @dataclasses.dataclass(frozen=True)
    class Thing:
        size: int

        @kept_by_argument
        def times(self, k: int) -> int:
            made.append(k)
            return self.size * k

    one = Thing(2)
    assert (one.times(3), one.times(3), one.times(4)) == (6, 6, 8) and made == [3, 4]
    other = evolve(one, size=5)  # its own, not the first one's
    assert other.times(3) == 15 and made == [3, 4, 3]


def _twins(**options):
    """A frozen dataclass with every kind of field, as dataclasses makes it and with stores_fields."""
    from service.sizing.frozen import stores_fields

    def declare():
        @dataclasses.dataclass(frozen=True, **options)
        class Thing:
            size: int
            name: str = "one"
            parts: list = dataclasses.field(default_factory=list)
            note: str | None = dataclasses.field(default=None, kw_only=True)
            unit: str = dataclasses.field(kw_only=True)

            def __post_init__(self):
                object.__setattr__(self, "label", f"{self.size} {self.unit}")

        return Thing

    return declare(), stores_fields(declare())


@pytest.mark.parametrize("args, kwargs", [
    ((1,), {"unit": "B"}),
    ((1, "two", [3]), {"unit": "B", "note": "n"}),
    ((), {"size": 1, "parts": [], "unit": "B"}),
    ((1,), {}),  # the keyword-only unit missing
    ((1, "two", [3], "n"), {"unit": "B"}),  # note is keyword-only
    ((1,), {"unit": "B", "nope": 2}),
    ((), {"unit": "B"}),
])
def test_an_init_that_stores_fields_takes_and_makes_what_dataclasses_does(args, kwargs):
    plain, stored = _twins()
    try:
        expected = plain(*args, **kwargs)
    except TypeError as refused:
        with pytest.raises(TypeError) as also:
            stored(*args, **kwargs)
        assert str(also.value) == str(refused)
        return
    made = stored(*args, **kwargs)
    assert made.__dict__ == expected.__dict__  # fields, the default factory's value, what __post_init__ adds
    assert repr(made) == repr(expected).replace(plain.__qualname__, stored.__qualname__)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.size = 2


def test_each_object_gets_its_own_default_factory_value_and_the_same_signature():
    import inspect

    plain, stored = _twins()
    one, two = stored(1, unit="B"), stored(2, unit="B")
    assert one.parts == [] and one.parts is not two.parts
    assert inspect.signature(stored) == inspect.signature(plain)


def test_stores_fields_refuses_what_it_cannot_store_alike():
    from service.sizing.frozen import stores_fields

    @dataclasses.dataclass(frozen=True)
    class Given:
        size: int
        scale: dataclasses.InitVar[int] = 1

    @dataclasses.dataclass(frozen=True)
    class Derived:
        size: int
        double: int = dataclasses.field(init=False, default=0)

    @dataclasses.dataclass
    class Mutable:
        size: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        size: int

    for cls in (Given, Derived, Mutable, Slotted):
        with pytest.raises(TypeError, match="stores_fields"):
            stores_fields(cls)


@keeps_hash
@dataclasses.dataclass(frozen=True)
class _Kept:
    name: str
    size: int


@dataclasses.dataclass(frozen=True)
class _Plain:
    name: str
    size: int


def test_a_kept_hash_is_the_fields_hash_and_not_carried_by_a_copy():
    import copy
    import pickle

    made = _Kept("a", 1)
    assert hash(made) == hash(_Plain("a", 1)) == hash(made)  # worked out once, then kept
    assert made.__dict__["_hash"] == hash(_Plain("a", 1))
    assert made == _Kept("a", 1) and {made: 1}[_Kept("a", 1)] == 1
    for copied in (copy.copy(made), copy.deepcopy(made), pickle.loads(pickle.dumps(made))):
        assert "_hash" not in copied.__dict__ and copied == made and hash(copied) == hash(made)
    with pytest.raises(TypeError, match="keeps_hash"):
        keeps_hash(dataclasses.make_dataclass("Loose", [("name", str)]))


def test_a_cached_value_is_worked_out_once_per_object_and_read_from_it_after():
    calls = []

    @dataclasses.dataclass(frozen=True)
    class Box:
        side: float

        @cached
        def area(self) -> float:
            """The side squared."""
            calls.append(self.side)
            return self.side**2

    first, second = Box(2.0), Box(3.0)
    assert (first.area, first.area, second.area) == (4.0, 4.0, 9.0)
    assert calls == [2.0, 3.0] and first.__dict__["area"] == 4.0  # kept in the frozen object itself
    assert isinstance(Box.area, cached) and Box.area.__doc__ == "The side squared."
    assert evolve(first, side=5.0).area == 25.0  # a copy works it out from its own fields


def test_a_cached_value_is_worked_out_without_a_lock_another_thread_waits_on():
    """functools.cached_property (3.11) held one lock per property, for every object of the
    class, while it worked a value out: a thread working out one object's value held up every
    other thread that wanted another object's. Here one object's value waits for a second thread
    to work out another's, which it could not while the first held the lock."""
    import threading

    started, other_done, waited = threading.Event(), threading.Event(), []

    @dataclasses.dataclass(frozen=True)
    class Slow:
        name: str

        @cached
        def value(self) -> str:
            if self.name == "first":
                started.set()
                if not other_done.wait(timeout=2):
                    waited.append("the other object's value waited on this one's")
            return self.name

    first, other = Slow("first"), Slow("other")
    thread = threading.Thread(target=lambda: first.value)
    thread.start()
    try:
        assert started.wait(timeout=5)
        assert other.value == "other"
        other_done.set()
    finally:
        other_done.set()
        thread.join(timeout=10)
    assert not thread.is_alive() and not waited and first.__dict__["value"] == "first"
