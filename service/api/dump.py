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

import dataclasses
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


class Form:
    """What a compiled function makes of an answer, field by field: a dict (`DICT`, the dumper) or
    its JSON text (write.py). Each form keeps its functions, one per schema class, built once."""

    name: str  # the form's name in its code's file name
    opening: str
    closing: str

    def __init__(self) -> None:
        self.compiled: dict[type[Schema], Callable[[Any], Any]] = {}
        # A function is registered in `compiled` before its fields are compiled (a schema may nest
        # itself), so other threads read only `whole`: those whose outermost build has finished.
        # One lock builds, re-entered by the thread that builds the nested ones.
        self.whole: dict[type[Schema], Callable[[Any], Any]] = {}
        self.building = threading.RLock()
        self.depth = 0

    def store(self, key: str, expression: str) -> str:
        """The statement that puts the value `expression` under `key` in `out`."""
        raise NotImplementedError

    def made(self, items: list[tuple[str, str]]) -> str:
        """The expression of the whole answer from each key and the name holding its value."""
        raise NotImplementedError

    def expression(self, field: fields.Field, i: int, namespace: dict) -> str:
        """The field's value `v` in this form, as an expression of `v` (helpers in `namespace`)."""
        raise NotImplementedError

    def part(self, name: str, field: fields.Field, below: tuple[str, ...], i: int, namespace: dict) -> str:
        """The expression of a nested answer's value (or a list of them) with only the fields `below`."""
        raise NotImplementedError

    def helpers(self) -> dict:
        """The names the compiled code calls beside its own fields' helpers."""
        return {}

    def of(self, schema_class: type[Schema]) -> Callable[[Any], Any]:
        """The whole answer's function, built once per schema class (thread-safe)."""
        made = self.whole.get(schema_class)
        if made is not None:
            return made
        with self.building:
            before = set(self.compiled) if self.depth == 0 else None
            self.depth += 1
            try:
                if schema_class not in self.compiled:
                    self.compiled[schema_class] = _build(schema_class, None, self)
                made = self.compiled[schema_class]
            except BaseException:
                if before is not None:  # the outermost build failed: none of what it began is kept
                    for half_built in set(self.compiled) - before:
                        del self.compiled[half_built]
                raise
            finally:
                self.depth -= 1
            if self.depth == 0:  # everything this build made is whole now
                self.whole.update(self.compiled)
            return made

    def sparse(self, schema_class: type[Schema], paths: tuple[str, ...]) -> Callable[[Any], Any]:
        """The function of only the fields named in `paths` (`summary`, `throughput.bound`), in the
        answer's order. ValueError names a path the answer does not have."""
        selection: dict[str, list[str]] = {}
        for path in paths:
            head, _, rest = path.partition(".")
            selection.setdefault(head, [])
            if rest:
                selection[head].append(rest)
        return _build(schema_class, {k: tuple(v) for k, v in selection.items()}, self)


class _Dicts(Form):
    name, opening, closing = "dump", "    out = {}", "    return out"

    def store(self, key: str, expression: str) -> str:
        return f"out[{key!r}] = {expression}"

    def made(self, items: list[tuple[str, str]]) -> str:
        return "{" + ", ".join(f"{key!r}: {value}" for key, value in items) + "}"

    def expression(self, field: fields.Field, i: int, namespace: dict) -> str:
        convert = namespace[f"c{i}"] = _converter(field)
        return {_number: 'v if v is None else float(format(v, ".12g"))', _integer: "v if v is None else int(v)",
                _string: "v if v.__class__ is str or v is None else str(v)", _same: "v"}.get(convert, f"c{i}(v)")

    def part(self, name: str, field: fields.Field, below: tuple[str, ...], i: int, namespace: dict) -> str:
        namespace[f"c{i}"] = _part_converter(name, field, below)
        return f"c{i}(v)"


DICT = _Dicts()


def dumper(schema_class: type[Schema]) -> Callable[[Any], dict]:
    """A function equal to `schema_class().dump`, built once per schema class (thread-safe)."""
    return DICT.of(schema_class)


@functools.lru_cache(maxsize=256)
def sparse_dumper(schema_class: type[Schema], paths: tuple[str, ...]) -> Callable[[Any], dict]:
    """A dumper of only the fields named in `paths` (`summary`, `throughput.bound`), in the
    answer's order: the sparse answer a caller asks for with `fields=`. ValueError names a
    path the answer does not have."""
    return DICT.sparse(schema_class, paths)


def part_schema(name: str, field: fields.Field, below: tuple[str, ...]) -> type[Schema]:
    """The schema of the nested answer (or of each in a list) whose fields `below` are asked;
    ValueError where the field is a plain value."""
    inner = field.inner if isinstance(field, fields.List) else field
    if not isinstance(inner, fields.Nested):
        raise ValueError(P.PLAIN_VALUE(name=name, below=below[0]))
    return type(inner.schema)


def _part_converter(name: str, field: fields.Field, below: tuple[str, ...]) -> Convert:
    """The converter of a nested answer (or a list of them) that keeps only the fields `below`."""
    part = sparse_dumper(part_schema(name, field, below), below)
    if isinstance(field, Grouped):  # null where the part is absent, as in the full answer
        absent = field.absent
        return lambda v: None if absent(v) else part(v)
    if isinstance(field, fields.List):
        return lambda v: None if v is None else [part(x) for x in v]
    return lambda v: None if v is None else part(v)


def _read(attribute: str, mapping: bool, present: frozenset[str]) -> tuple[list[str], bool]:
    """The lines that set `v` to the attribute (a mapping's key, else the attribute, as
    marshmallow's accessor reads it), and whether it is always there (never the marker M)."""
    if attribute == SELF:  # a group of the answer's own fields: the nested schema reads the object
        return ["    v = obj"], True
    if attribute in present:  # a field every object of the answer's dataclass holds
        return [f"    v = obj.{attribute}"], True
    if "." in attribute:  # a flattened answer's field: marshmallow's accessor, step by step
        return [f"    v = walk(obj, {tuple(attribute.split('.'))!r})"], False
    if mapping:
        lines = [f"    v = obj.get({attribute!r}, M)"]
        if hasattr(dict, attribute):
            lines.append(f"    if v is M: v = getattr(obj, {attribute!r}, M)")
        return lines, False
    return [f"    v = getattr(obj, {attribute!r}, M)"], False


def _source(plan: list[tuple[str, str, str]], mapping: bool, form: Form, present: frozenset[str] = frozenset(),
            guard: str | None = None) -> str:
    """Straight-line code that reads each attribute and converts it: no per-field calls beyond
    the conversion. `present` are the attributes every object it is given holds (the fields of
    the answer's dataclass); when every field is one, the answer is made in one expression. A
    guarded function hands an object the guard (`obj.__class__ <guard>`) turns away to DISPATCH."""
    lines = ["def dump(obj):"]
    if guard:
        lines.append(f"    if obj.__class__ {guard}: return DISPATCH(obj)")
    reads = [_read(attribute, mapping, present) for _, attribute, _ in plan]
    if all(sure for _, sure in reads):
        for i, ((_, _, expression), (read, _)) in enumerate(zip(plan, reads, strict=True)):
            lines += [*read, f"    t{i} = {expression}"]
        lines.append("    return " + form.made([(key, f"t{i}") for i, (key, _, _) in enumerate(plan)]))
        return "\n".join(lines)
    lines.append(form.opening)
    for (key, _, expression), (read, sure) in zip(plan, reads, strict=True):
        lines += read
        lines.append(("    " if sure else "    if v is not M: ") + form.store(key, expression))
    lines.append(form.closing)
    return "\n".join(lines)


def _compile(name: str, plan, namespace: dict, mapping: bool, form: Form, present: frozenset[str] = frozenset(),
             guard: str | None = None) -> Callable[[Any], Any]:
    """The code, named in tracebacks and profiles by its form and schema (`<write RangeSchema>`)."""
    namespace = {"M": _MISSING, "walk": _walk, **namespace}
    where = f"<{form.name} {name}{' mapping' if mapping else ''}>"
    exec(compile(_source(plan, mapping, form, present, guard), where, "exec"), namespace)  # noqa: S102 - from field names only
    return namespace["dump"]


def _dispatch(schema_class: type[Schema], hooks: list, compiled: dict[bool, Callable[[Any], Any]],
              objects: set[type]) -> Callable[[Any], Any]:
    """The schema's function for any object: its pre_dump hooks, then the compiled form for the
    object's type (a mapping's, or an object's, whose types are added to `objects`)."""
    by_type: dict[type, Callable[[Any], Any]] = {}  # the compiled form for each type it is given

    def dump(obj):
        for hook in hooks:
            obj = hook(obj, many=False)
        compiled_for = by_type.get(obj.__class__)
        if compiled_for is None:
            if not isinstance(obj, dict) and hasattr(obj, "__getitem__"):
                raise TypeError(f"dump: {schema_class.__name__} given a {type(obj).__name__}")
            mapping = isinstance(obj, dict)
            compiled_for = by_type[obj.__class__] = compiled[mapping]
            if not mapping:
                objects.add(obj.__class__)
        return compiled_for(obj)

    dump.schema = schema_class  # type: ignore[attr-defined]  # the contract test checks against it
    return dump


def _fields_held(schema_class: type[Schema]) -> tuple[type | None, frozenset[str]]:
    """The dataclass an answer schema was read from (shapes.answer_schema) and the fields each of
    its objects holds (those its __init__ sets); none for a hand-written schema."""
    cls = getattr(schema_class, "answer", None)
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        return None, frozenset()
    return cls, frozenset(f.name for f in dataclasses.fields(cls) if f.init)


def _plan(schema: Schema, selection: dict[str, tuple[str, ...]] | None, form: Form) -> tuple[list, dict]:
    """Each field shown (those in `selection`, when given): its key, the attribute it reads and
    its value's expression in `form`; and the helpers the expressions call."""
    name_of = type(schema).__name__
    unknown = sorted(set(selection or ()) - set(schema.dump_fields))
    if unknown:
        raise ValueError(P.NO_SUCH_FIELD(part=name_of.removesuffix("Schema"), name=unknown[0],
                                         known=tuple(schema.dump_fields)))
    plan, namespace = [], form.helpers()
    for i, (name, field) in enumerate(schema.dump_fields.items()):
        if selection is not None and name not in selection:
            continue
        if field.dump_default is not missing:
            raise TypeError(f"dump: {name_of}.{name} has a dump default")
        # a grouped field reads the answer's own object, or the one it was flattened from
        attribute = (field.source or SELF) if isinstance(field, Grouped) else (field.attribute or name)
        below = selection.get(name) if selection else None
        expression = form.part(name, field, below, i, namespace) if below else form.expression(field, i, namespace)
        plan.append((field.data_key or name, attribute, expression))
    return plan, namespace


def _build(schema_class: type[Schema], selection: dict[str, tuple[str, ...]] | None,
           form: Form) -> Callable[[Any], Any]:
    schema = schema_class()
    pre = schema._hooks.get("pre_dump", [])
    if schema.many or schema._hooks.get("post_dump") or any(collection for _, collection, _ in pre):
        raise TypeError(f"dump: {schema_class.__name__} needs marshmallow's own dump")
    hooks = [getattr(schema, name) for name, _, _ in pre]
    compiled: dict[bool, Callable[[Any], Any]] = {}
    objects: set[type] = set()  # the types read by attribute, which the guarded function takes itself
    dump = _dispatch(schema_class, hooks, compiled, objects)
    if selection is None:
        form.compiled[schema_class] = dump  # before the fields: a schema may nest itself
    plan, namespace = _plan(schema, selection, form)
    name = schema_class.__name__
    compiled[True] = _compile(name, plan, namespace, True, form)
    compiled[False] = _compile(name, plan, namespace, False, form)
    if hooks:
        return dump
    # Without hooks the object's code is the function itself, one call a nested answer, not two:
    # for an answer schema, the code for its dataclass, which reads each field it holds directly;
    # for another, the code for objects, taking the types the dispatch has been given.
    cls, present = _fields_held(schema_class)
    if cls is not None:
        guarded = _compile(name, plan, {**namespace, "CLS": cls, "DISPATCH": dump}, False, form, present, "is not CLS")
    else:
        guarded = _compile(name, plan, {**namespace, "OBJECTS": objects, "DISPATCH": dump}, False, form,
                           guard="not in OBJECTS")
    guarded.schema = schema_class  # type: ignore[attr-defined]
    return guarded
