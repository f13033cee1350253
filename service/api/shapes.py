"""Response schemas: the answers callers read, each declared by the fields it shows.

A figure is declared once, on the domain's answer dataclass, with its type and its description:
the docstring written under the field (or a description in the field's metadata). What an answer
shows is declared apart, by `answer_schema(cls, show="...")`: the fields it names, in its order,
read from the dataclass's attributes (renamed where the names differ). The contract is that list,
not the domain's record: a field the domain adds stays out until shown, and a renamed attribute
fails at import until mapped. apispec turns the schemas into openapi.yaml's components (`make
spec`). Hand-written schemas remain only where an answer converts units or flattens several
domain objects into one JSON object.

The mapping of types: int -> integer, float -> number (rounded to 12 significant digits),
str -> string, a coded Message -> a Message object {code, message, params}, bool -> boolean,
`X | None` -> nullable, a nested answer dataclass -> its own component, tuple[X, ...] / list[X] ->
array, Mapping[str, X] -> object. A type outside it is an error at import, never a field dropped
without a word.
"""

import ast
import copy
import dataclasses
import functools
import inspect
import sys
import textwrap
import types
import typing
from collections.abc import Mapping

from marshmallow import Schema, fields

from ..sizing import Message, as_json

DESCRIPTION = "description"  # the metadata key a dataclass field's description sits under

_SCHEMAS: dict[type, type[Schema]] = {}


class Num(fields.Float):
    """A float in an answer, rounded to 12 significant digits."""

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        return float(f"{value:.12g}")


class Said(fields.Field):
    """A coded message in an answer: `{code, message, params}` (component Message), the message
    said in the answer's language."""

    def _serialize(self, value, attr, obj, **kwargs):
        return said(value)


def said(value):
    """A message as JSON; TypeError for text that is not a coded message (a bug, never dumped as
    bare text)."""
    if value is None:
        return None
    if not isinstance(value, Message):
        raise TypeError(f"an answer's message is not coded: {value!r}")
    return as_json(value)


class Grouped(fields.Nested):
    """Fields of the answer's own object shown together as one nested object (the guide's figures
    beside the service's model): the nested schema reads the same object. With `when`, the object
    is null where that attribute is (a part the answer does not have: no link on one card, no
    full-load figures), instead of a run of null fields."""

    def __init__(self, nested, *, when: str | None = None, **kwargs):
        super().__init__(nested, allow_none=when is not None, **kwargs)
        self.when = when
        self.source: str | None = None  # flattened into another answer: the dotted path to the object it reads

    def get_value(self, obj, attr, accessor=None, default=None):
        for step in self.source.split(".") if self.source else ():
            obj = read(obj, step)
        return None if self.absent(obj) else obj

    def absent(self, obj) -> bool:
        """Whether the group is null for the object it reads: none, or its `when` attribute null."""
        return obj is None or (self.when is not None and read(obj, self.when) is None)


def read(obj, attribute: str):
    """An answer's attribute, or a mapping's key (as marshmallow's accessor reads either)."""
    return obj.get(attribute) if isinstance(obj, Mapping) else getattr(obj, attribute, None)


SELF = ""  # the attribute a grouped field reads: the object itself


def nested(cls: type) -> type[Schema]:
    """The schema of a nested answer dataclass (made by `answer_schema` first)."""
    try:
        return _SCHEMAS[cls]
    except KeyError:
        raise TypeError(f"{cls.__name__} has no answer schema yet; declare it before its users") from None


def _field(hint, metadata: dict, name: str) -> fields.Field:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) not in args:
        return fields.Raw(required=True, metadata=metadata)  # a value of several plain types
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            return fields.Raw(required=True, allow_none=True, metadata=metadata)
        return _plain(rest[0], {"required": True, "allow_none": True, "metadata": metadata}, name)
    return _plain(hint, {"required": True, "metadata": metadata}, name)


def _plain(hint, kwargs: dict, name: str) -> fields.Field:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return fields.Boolean(**kwargs)
    if hint is int:
        return fields.Integer(**kwargs)
    if hint is float:
        return Num(**kwargs)
    if hint is str:
        return fields.String(**kwargs)
    if hint is Message:
        return Said(**kwargs)
    if hint is typing.Any:
        return fields.Raw(**kwargs)
    if dataclasses.is_dataclass(hint):
        return fields.Nested(nested(hint), **kwargs)
    if origin in (tuple, list) and args and (origin is list or args[-1] is Ellipsis):
        return fields.List(_plain(args[0], {}, name), **kwargs)
    if origin in (dict, Mapping) and args and args[0] is str:
        return fields.Dict(keys=fields.String(), values=_plain(args[1], {}, name), **kwargs)
    raise TypeError(f"{name}: no schema for the type {hint!r}")


class Scaled(Num):
    """A number an answer holds in SI units, shown in the unit a reader expects (bytes as GiB):
    the attribute divided by `divisor`, then rounded like every number."""

    def __init__(self, divisor: float, **kwargs):
        super().__init__(**kwargs)
        self.divisor = divisor

    def _serialize(self, value, attr, obj, **kwargs):
        return super()._serialize(None if value is None else value / self.divisor, attr, obj)


def register(cls: type, schema: type[Schema]) -> type[Schema]:
    """Make `schema` the nested form of `cls` in answers made after this (a hand-written schema
    for a domain class that is not an answer, such as a card shown briefly)."""
    _SCHEMAS[cls] = schema
    return schema


@functools.cache
def _module_classes(module: str) -> dict[str, ast.ClassDef]:
    """A module's top-level classes as parsed from its source, the module parsed once."""
    tree = ast.parse(inspect.getsource(sys.modules[module]))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


@functools.cache
def _attribute_docs(cls: type) -> dict[str, str]:
    """The docstrings written under a dataclass's fields (PEP 257's attribute docstrings, as vLLM
    documents its engine arguments), its bases' included: each field's description."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        body = _module_classes(klass.__module__).get(klass.__qualname__)
        if body is None:  # a class defined inside a function: its own source
            parsed = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0]
            assert isinstance(parsed, ast.ClassDef)
            body = parsed
        for node, after in zip(body.body, body.body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _made(cls: type, field: dataclasses.Field, key: str, hint, docs: Mapping[str, str],
          declared: Mapping[str, fields.Field]) -> fields.Field:
    """The schema field of the JSON name `key`, reading the dataclass field `field`."""
    metadata = dict(field.metadata)
    if field.name in docs:
        metadata.setdefault(DESCRIPTION, docs[field.name])
    made = declared.get(key) or _field(hint, metadata, f"{cls.__name__}.{field.name}")
    if key != field.name:
        made.attribute = field.name
    return made


def _group(cls: type, key: str, spec: tuple, attribute_field) -> Grouped:
    """The group `key` (description, component, {JSON name: attribute, or (attribute, its
    description)}, optionally the attribute whose null makes the group null)."""
    description, component, members, *when = spec
    taken = {}
    for json_name, said in members.items():
        attribute, inner_description = (said, None) if isinstance(said, str) else said
        made = copy.copy(attribute_field(attribute, f"group {key!r}"))
        made.attribute = attribute
        if inner_description is not None:
            made.metadata = {**made.metadata, DESCRIPTION: inner_description}
        taken[json_name] = made
    if when:
        attribute_field(when[0], f"group {key!r} (null when it is)")
    inner = Schema.from_dict(taken, name=f"{component}Schema")
    inner.__doc__ = description
    return Grouped(inner, required=True, when=when[0] if when else None, metadata={DESCRIPTION: description})


def _declared(cls: type, show: tuple[str, ...], rename: Mapping[str, str], flatten: tuple[str, ...],
              declared: Mapping[str, fields.Field], group: Mapping[str, tuple]) -> dict[str, fields.Field]:
    hints = typing.get_type_hints(cls)
    docs = _attribute_docs(cls)
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    if len(set(show)) != len(show):
        raise TypeError(f"{cls.__name__}: show names a field twice")
    unused = (set(rename) | set(flatten) | set(declared) | set(group)) - set(show)
    if unused:
        raise TypeError(f"{cls.__name__}: {sorted(unused)} renamed, flattened, declared or grouped but not shown")
    json_name = {v: k for k, v in rename.items()}

    def attribute_field(attribute: str, where: str) -> fields.Field:
        if attribute not in by_name:
            raise TypeError(f"{cls.__name__}: {where} reads {attribute!r}, which {cls.__name__} does not have "
                            "(renamed in the domain? map the answer's name to the new one in rename=)")
        return _made(cls, by_name[attribute], json_name.get(attribute, attribute), hints[attribute], docs, declared)

    out: dict[str, fields.Field] = {}
    for key in show:
        if key in flatten:  # the nested answer's own fields, read through this attribute, here
            attribute = rename.get(key, key)
            attribute_field(attribute, f"flatten {key!r}")
            for inner_key, inner in nested(hints[attribute])._declared_fields.items():
                spliced = copy.copy(inner)
                if isinstance(inner, Grouped):  # read through the field (several groups: no shared attribute)
                    spliced.source = f"{attribute}.{inner.source}" if inner.source else attribute
                else:
                    spliced.attribute = f"{attribute}.{inner.attribute or inner_key}"
                out[inner_key] = spliced
        elif key in group:
            out[key] = _group(cls, key, group[key], attribute_field)
        else:
            out[key] = attribute_field(rename.get(key, key), f"show {key!r}")
    return out


def answer_schema(cls: type, name: str | None = None, *, show: str, rename: Mapping[str, str] | None = None,
                  flatten: tuple[str, ...] = (), declare: Mapping[str, fields.Field] | None = None,
                  group: Mapping[str, tuple] | None = None,
                  description: str | None = None) -> type[Schema]:
    """The response schema of an answer read from the dataclass `cls`: the answer's fields are
    the ones `show` names (separated by spaces), in that order, not the dataclass's.

    The contract is this list, not the domain's record: a field the domain adds stays out of the
    answer until it is shown, and an attribute the domain renames fails here, at import, naming
    the answer's field; mapping that name to the new attribute in `rename` keeps every caller's
    answer as it was. A shown name reads the attribute of the same name, or the one `rename`
    maps it to (`{"card": "card_id"}`); its type and its description (the docstring under the
    attribute, or its metadata) are the attribute's. A shown name may also be one of
    `flatten`, the attributes holding a nested answer whose fields stand here, in its place;
    or one of `group`, fields of the answer shown together as one nested object
    (`{"guide": (description, component, {JSON name: attribute, or (attribute, description)})}`),
    null where the attribute a fourth element names is (`(..., "link")`: no link, no `link`
    object). `declare` declares a shown field by hand where its type alone does not say it.
    `name` is the component's name (default: the class name), `description` the component's.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a dataclass")
    declared = _declared(cls, tuple(show.split()), rename or {}, flatten, declare or {}, group or {})
    schema = Schema.from_dict(declared, name=f"{name or cls.__name__}Schema")
    schema.__doc__ = description
    schema.answer = cls  # type: ignore[attr-defined]  # the dataclass it was read from
    _SCHEMAS[cls] = schema
    return schema
