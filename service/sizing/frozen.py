"""Frozen dataclasses an answer makes and copies many times, made for less: an __init__ that
stores its fields directly, and a fast dataclasses.replace."""

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, Generic, TypeVar, overload

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
    cached beside its fields (frozen.cached) is not copied: it was worked out from
    the old values."""
    cls: type = type(obj)
    names = _field_names(cls)
    if not changes.keys() <= names:
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - names)[0]!r}")
    state = obj.__dict__.copy()
    if len(state) != len(names):  # something cached beside the fields
        for cached in state.keys() - names:
            del state[cached]
    state.update(changes)
    made: T = object.__new__(cls)
    object.__setattr__(made, "__dict__", state)
    return made


def stores_fields(cls: type[T]) -> type[T]:
    """`cls`, a frozen dataclass, with an __init__ that writes each field into the new object's
    __dict__, where dataclasses' frozen __init__ sets each through object.__setattr__ (about
    70 ns a field more; a whole estimate sets some 900 fields). The same signature (parameters,
    defaults, default factories), then __post_init__; setting a field afterwards is refused as
    before. For a class with a __dict__ whose __init__ takes its fields and nothing else (no
    slots, no InitVar, no field left out of __init__)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" in cls.__dict__:
        raise TypeError(f"stores_fields takes a frozen dataclass with a __dict__; {cls.__name__} is not one")
    before = inspect.signature(cls.__init__)
    given = fields(cls)  # type: ignore[arg-type]
    if [f.name for f in given] != list(before.parameters)[1:]:
        raise TypeError(f"stores_fields: {cls.__name__}'s __init__ takes other than its fields")
    scope: dict[str, object] = {}
    positional: list[str] = ["self"]
    keyword: list[str] = []
    lines = ["    __dict = self.__dict__"]
    for f in given:
        param, value = f.name, f.name
        default = before.parameters[f.name].default  # a factory's: dataclasses' marker for it
        if default is not inspect.Parameter.empty:
            scope[f"_default_{f.name}"] = default
            param = f"{f.name}=_default_{f.name}"
        if f.default_factory is not MISSING:
            scope[f"_factory_{f.name}"] = f.default_factory
            value = f"_factory_{f.name}() if {f.name} is _default_{f.name} else {f.name}"
        (keyword if f.kw_only else positional).append(param)
        lines.append(f"    __dict[{f.name!r}] = {value}")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    signature = ", ".join(positional + (["*", *keyword] if keyword else []))
    made: dict[str, Callable] = {}
    exec(f"def __init__({signature}):\n" + "\n".join(lines), scope, made)  # noqa: S102  # as dataclasses does
    init = made["__init__"]
    init.__annotations__ = dict(cls.__init__.__annotations__)
    if inspect.signature(init) != before:
        raise TypeError(f"stores_fields: {cls.__name__}'s __init__ would take other arguments")
    init.__qualname__, init.__module__ = f"{cls.__qualname__}.__init__", cls.__module__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def keeps_hash(cls: type[T]) -> type[T]:
    """`cls`, a frozen dataclass that keys the caches every answer reads (a model, an engine, a
    fabric: hashed again and again over 20-40 fields), with its hash worked out once per object
    and kept in its __dict__. Equal objects still hash alike: the hash is of the same fields."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or cls.__hash__ is None or "__slots__" in cls.__dict__:
        raise TypeError(f"keeps_hash takes a hashable frozen dataclass with a __dict__; {cls.__name__} is not one")
    of_fields = cls.__hash__

    def __hash__(self) -> int:
        made = self.__dict__.get("_hash")
        if made is None:
            made = self.__dict__["_hash"] = of_fields(self)
        return made

    def __getstate__(self) -> dict:  # a copy, pickled or not, hashes its fields afresh (another
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}  # process hashes text otherwise)

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    cls.__getstate__ = __getstate__  # type: ignore[method-assign]
    return cls


K = TypeVar("K")
R = TypeVar("R")


def kept_by_argument(fn: Callable[[T, K], R]) -> Callable[[T, K], R]:
    """fn(obj, key) worked out once per object and key, and kept in the object's __dict__ (as
    frozen.cached keeps what it works out): a deployment's prefill by prompt, a
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


class cached(Generic[R]):  # noqa: N801 - a decorator, named as functools.cached_property is
    """functools.cached_property without its lock: a value worked out from a frozen object's
    fields, once, and kept in the object's __dict__. Python 3.11's holds one lock per property,
    for every object of the class, while the value is worked out: under gunicorn's threads every
    deployment's rates waited on every other's (3.12 dropped the lock). Two threads that meet on
    one new object may both work the value out; it is the same value."""

    def __init__(self, func: Callable[[Any], R]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> "cached[R]": ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> R: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> "R | cached[R]":
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)  # read from the __dict__ from then on
        return value
