"""A fast dataclasses.replace for the frozen dataclasses an answer copies many times."""

import functools
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    if not is_dataclass(cls) or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        raise TypeError(f"evolve copies plain dataclasses; {cls.__name__} is not one")
    if any(not f.init for f in fields(cls)):
        raise TypeError(f"evolve: {cls.__name__} has a field __init__ does not take")
    return frozenset(f.name for f in fields(cls))


def evolve(obj: T, **changes: Any) -> T:
    """dataclasses.replace(obj, **changes) for a dataclass whose __init__ only stores its fields
    (no __post_init__, every field taken by __init__): the same object, made by copying the old
    one's field values instead of calling __init__ with every one of them (a frozen dataclass's
    __init__ sets each through object.__setattr__: 3-8 us for 15-25 fields). What the old object
    cached beside its fields (functools.cached_property) is not copied: it was worked out from
    the old values."""
    cls: type = type(obj)
    names = _field_names(cls)
    if not changes.keys() <= names:
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - names)[0]!r}")
    state = obj.__dict__.copy()
    if len(state) != len(names):  # something cached beside the fields
        state = {name: value for name, value in state.items() if name in names}
    state.update(changes)
    made: T = object.__new__(cls)
    object.__setattr__(made, "__dict__", state)
    return made


K = TypeVar("K")
R = TypeVar("R")


def kept_by_argument(fn: Callable[[T, K], R]) -> Callable[[T, K], R]:
    """fn(obj, key) worked out once per object and key, and kept in the object's __dict__ (as
    functools.cached_property keeps what it works out): a deployment's prefill by prompt, a
    copy's step by batch, a fabric's scaled ends. The memo goes with the object; evolve does not
    copy it to another."""
    slot = f"_kept_{fn.__name__}"

    @functools.wraps(fn)
    def kept(obj: T, key: K) -> R:
        memo = obj.__dict__.setdefault(slot, {})
        if key not in memo:
            memo[key] = fn(obj, key)
        return memo[key]

    return kept
