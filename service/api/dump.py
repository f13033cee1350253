"""Answers dumped by plain functions compiled once per response schema.

marshmallow's `Schema.dump` walks every field of every nested object through a chain of generic
calls (serialize, get_value, accessor, _serialize) on each request; for an 8 KB estimate that was
half of the request's CPU. The schemas stay the one declaration of each answer (apispec writes
openapi.yaml from them); `dumper(schema)` reads a schema once and returns a function that does
the same work with one closure per field. The contract test dumps every answer both ways and
requires them equal.

Only the field types the answers use are compiled; any other raises at import, never dumps
something different.
"""

import functools
import threading
from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields
from marshmallow.utils import missing

from . import problem_messages as P
from .schemas import StrictBoolean
from .shapes import SELF, Grouped, Num, Said, Scaled, said

_MISSING = object()
Convert = Callable[[Any], Any]


def _number(value):
    return None if value is None else float(f"{value:.12g}")


def _integer(value):
    return None if value is None else int(value)


def _string(value):
    return None if value is None else str(value)


def _same(value):
    return value


def _converter(field: fields.Field) -> Convert:
    """What `field._serialize` does to a value, as one function."""
    if isinstance(field, Scaled):
        divisor = field.divisor
        return lambda value: None if value is None else _number(value / divisor)
    if isinstance(field, Num):
        return _number
    if isinstance(field, Said):
        return said
    if isinstance(field, fields.Integer):
        return _integer
    if isinstance(field, fields.String):
        return _string
    if type(field) in (fields.Boolean, fields.Raw, StrictBoolean):
        return _same
    if isinstance(field, Grouped):  # null where the part is absent
        grouped, absent = dumper(type(field.schema)), field.absent
        return lambda value: None if absent(value) else grouped(value)
    if isinstance(field, fields.Nested):
        if field.many:
            raise TypeError("dump: Nested(many=True) is not compiled; use List(Nested(...))")
        nested = dumper(type(field.schema))
        return lambda value: None if value is None else nested(value)
    if isinstance(field, fields.List):
        inner = _converter(field.inner)
        return lambda value: None if value is None else [inner(item) for item in value]
    if isinstance(field, fields.Dict):
        key = _converter(field.key_field) if field.key_field else _same
        val = _converter(field.value_field) if field.value_field else _same
        return lambda value: None if value is None else {key(k): val(v) for k, v in value.items()}
    raise TypeError(f"dump: no compiled form for {type(field).__name__}")


def _walk(obj, keys: tuple[str, ...]):
    """marshmallow's accessor along a dotted path: each step a mapping's key, else the attribute."""
    for key in keys:
        if hasattr(obj, "__getitem__"):
            try:
                obj = obj[key]
                continue
            except (KeyError, IndexError, TypeError, AttributeError):
                pass
        obj = getattr(obj, key, _MISSING)
        if obj is _MISSING:
            return obj
    return obj


_COMPILED: dict[type[Schema], Callable[[Any], dict]] = {}


def _inline(convert: Convert, i: int) -> str:
    """The conversion as an expression of `v`: the plain ones written out, the rest called."""
    return {_number: 'v if v is None else float(format(v, ".12g"))', _integer: "v if v is None else int(v)",
            _string: "v if v.__class__ is str or v is None else str(v)", _same: "v"}.get(convert, f"c{i}(v)")


def _source(plan: list[tuple[str, str]], converters: list[Convert], mapping: bool) -> str:
    """Straight-line code that reads each attribute (a mapping's key, else the attribute, as
    marshmallow's accessor does) and converts it: no per-field calls beyond the conversion."""
    lines = ["def dump(obj):", "    out = {}"]
    for i, (key, attribute) in enumerate(plan):
        if attribute == SELF:  # a group of the answer's own fields: the nested schema reads the object
            lines.append("    v = obj")
        elif "." in attribute:  # a flattened answer's field: marshmallow's accessor, step by step
            lines.append(f"    v = walk(obj, {tuple(attribute.split('.'))!r})")
        elif mapping:
            lines.append(f"    v = obj.get({attribute!r}, M)")
            if hasattr(dict, attribute):
                lines.append(f"    if v is M: v = getattr(obj, {attribute!r}, M)")
        else:
            lines.append(f"    v = getattr(obj, {attribute!r}, M)")
        lines.append(f"    if v is not M: out[{key!r}] = {_inline(converters[i], i)}")
    lines.append("    return out")
    return "\n".join(lines)


def _compile(plan, converters, mapping: bool) -> Callable[[Any], dict]:
    namespace: dict[str, Any] = {"M": _MISSING, "walk": _walk, **{f"c{i}": c for i, c in enumerate(converters)}}
    exec(_source(plan, converters, mapping), namespace)  # noqa: S102 - the code is built from field names only
    return namespace["dump"]


# A dumper is registered in _COMPILED before its fields are compiled (a schema may nest itself), so
# other threads read only _WHOLE: the dumpers whose outermost build has finished. One lock builds,
# re-entered by the thread that builds the nested ones.
_WHOLE: dict[type[Schema], Callable[[Any], dict]] = {}
_BUILDING = threading.RLock()
_depth = 0


def dumper(schema_class: type[Schema]) -> Callable[[Any], dict]:
    """A function equal to `schema_class().dump`, built once per schema class (thread-safe)."""
    made = _WHOLE.get(schema_class)
    if made is not None:
        return made
    global _depth
    with _BUILDING:
        before = set(_COMPILED) if _depth == 0 else None
        _depth += 1
        try:
            if schema_class not in _COMPILED:
                _COMPILED[schema_class] = _build(schema_class, None)
            made = _COMPILED[schema_class]
        except BaseException:
            if before is not None:  # the outermost build failed: none of what it began is kept
                for half_built in set(_COMPILED) - before:
                    del _COMPILED[half_built]
            raise
        finally:
            _depth -= 1
        if _depth == 0:  # everything this build made is whole now
            _WHOLE.update(_COMPILED)
        return made


@functools.lru_cache(maxsize=256)
def sparse_dumper(schema_class: type[Schema], paths: tuple[str, ...]) -> Callable[[Any], dict]:
    """A dumper of only the fields named in `paths` (`summary`, `throughput.bound`), in the
    answer's order: the sparse answer a caller asks for with `fields=`. ValueError names a
    path the answer does not have."""
    selection: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        selection.setdefault(head, [])
        if rest:
            selection[head].append(rest)
    return _build(schema_class, {k: tuple(v) for k, v in selection.items()})


def _nested_schema(field: fields.Field) -> type[Schema] | None:
    inner = field.inner if isinstance(field, fields.List) else field
    return type(inner.schema) if isinstance(inner, fields.Nested) else None


def _part_converter(name: str, field: fields.Field, below: tuple[str, ...]) -> Convert:
    """The converter of a nested answer (or a list of them) that keeps only the fields `below`."""
    nested = _nested_schema(field)
    if nested is None:
        raise ValueError(P.PLAIN_VALUE(name=name, below=below[0]))
    part = sparse_dumper(nested, below)
    if isinstance(field, Grouped):  # null where the part is absent, as in the full answer
        absent = field.absent
        return lambda v: None if absent(v) else part(v)
    if isinstance(field, fields.List):
        return lambda v: None if v is None else [part(x) for x in v]
    return lambda v: None if v is None else part(v)


def _build(schema_class: type[Schema], selection: dict[str, tuple[str, ...]] | None) -> Callable[[Any], dict]:
    schema = schema_class()
    pre = schema._hooks.get("pre_dump", [])
    if schema.many or schema._hooks.get("post_dump") or any(collection for _, collection, _ in pre):
        raise TypeError(f"dump: {schema_class.__name__} needs marshmallow's own dump")
    hooks = [getattr(schema, name) for name, _, _ in pre]
    compiled: dict[bool, Callable[[Any], dict]] = {}

    by_type: dict[type, Callable[[Any], dict]] = {}  # the compiled form for each type it is given

    def dump(obj) -> dict:
        for hook in hooks:
            obj = hook(obj, many=False)
        compiled_for = by_type.get(obj.__class__)
        if compiled_for is None:
            if not isinstance(obj, dict) and hasattr(obj, "__getitem__"):
                raise TypeError(f"dump: {schema_class.__name__} given a {type(obj).__name__}")
            compiled_for = by_type[obj.__class__] = compiled[isinstance(obj, dict)]
        return compiled_for(obj)

    dump.schema = schema_class  # type: ignore[attr-defined]  # the contract test checks against it
    if selection is None:
        _COMPILED[schema_class] = dump  # before the fields: a schema may nest itself
    unknown = sorted(set(selection or ()) - set(schema.dump_fields))
    if unknown:
        raise ValueError(P.NO_SUCH_FIELD(part=schema_class.__name__.removesuffix("Schema"), name=unknown[0],
                                         known=tuple(schema.dump_fields)))
    plan, converters = [], []
    for name, field in schema.dump_fields.items():
        if selection is not None and name not in selection:
            continue
        if field.dump_default is not missing:
            raise TypeError(f"dump: {schema_class.__name__}.{name} has a dump default")
        if isinstance(field, Grouped):  # the answer's own object, or the one it was flattened from
            plan.append((field.data_key or name, field.source or SELF))
        else:
            plan.append((field.data_key or name, field.attribute or name))
        below = selection.get(name) if selection else None
        converters.append(_part_converter(name, field, below) if below else _converter(field))
    compiled[True] = _compile(plan, converters, mapping=True)
    compiled[False] = _compile(plan, converters, mapping=False)
    return dump
