"""Requests loaded by plain functions compiled once per request schema (dump.py's mirror).

marshmallow's `Schema.load` runs each field through generic machinery on every request (an
error store, a getter closure per field, partial and unknown handling, hook lookups): 35-75 us
of an estimate's parse, a fifth of a batch item. `loader(schema)` reads a schema once and
returns a function that does the same work for a body it takes as it comes: a dict of the
schema's own keys, every field of which loads. The fields themselves (types, validators,
catalog lookups) and the schema's validators and post_load hooks are marshmallow's and the
schema's own, called as `Schema.load` calls them. Any other body (a field's error, an unknown
key, not an object) is loaded by `schema.load` itself, so every error a caller sees is
marshmallow's, word for word. A schema this module cannot load alike (pre_load hooks, field
validators, `many`, dotted attributes, another `unknown`) is always loaded by marshmallow.
tests/contract/test_loaders.py loads bodies both ways and requires them equal.
"""

import functools
from collections.abc import Callable
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields
from marshmallow.decorators import POST_LOAD, PRE_LOAD, VALIDATES, VALIDATES_SCHEMA
from marshmallow.error_store import ErrorStore
from marshmallow.utils import missing

Load = Callable[[Any, Any], Any]


class _NotAsItComes(Exception):
    """A body the compiled load does not take as it comes: `schema.load` loads it."""


@functools.cache
def loads_with(schema_class: type[Schema]) -> Callable[[Any], Any]:
    """`loader` of one instance of `schema_class`, made once (as dump.dumper is per class): a
    route's body, a batch's items, an object a field takes."""
    return loader(schema_class())


def loader(schema: Schema) -> Callable[[Any], Any]:
    """A function equal to `schema.load` (for its default options), compiled once per schema
    object (loads_with makes one per class)."""
    compiled = _compiled(schema)
    if compiled is None:
        return schema.load

    def load(data: Any) -> Any:
        try:
            return compiled(data, None)
        except (ValidationError, _NotAsItComes):
            return schema.load(data)  # the same body through marshmallow: its errors, all of them

    return load


def _loadable(schema: Schema) -> bool:
    hooks = schema._hooks
    return (not schema.many and schema.unknown == RAISE and schema.dict_class is dict
            and not hooks[PRE_LOAD] and not hooks[VALIDATES]
            and not any("." in (f.attribute or name) for name, f in schema.load_fields.items()))


def _plain_nested(field: fields.Field) -> bool:
    """A Nested field whose load is its schema's load and nothing more (Field.deserialize adds
    nothing for an object given)."""
    return (type(field) is fields.Nested and not field.many and field.unknown is None and not field.validators
            and not field.pre_load and not field.post_load)


@functools.lru_cache(maxsize=256)
def _compiled(schema: Schema) -> Load | None:
    """`schema`'s load for a body as it comes, or None when it cannot load it alike."""
    if not _loadable(schema):
        return None
    plan: list[tuple[str, str, fields.Field, Load | None]] = []
    for name, field in schema.load_fields.items():
        nested = _compiled(field.schema) if _plain_nested(field) else None
        plan.append((field.data_key if field.data_key is not None else name, field.attribute or name, field, nested))
    known = frozenset(data_key for data_key, _, _, _ in plan)

    def load(data: Any, partial: Any) -> Any:
        if type(data) is not dict or not data.keys() <= known:
            raise _NotAsItComes
        partial = _partial(schema, partial)
        passed = {} if partial is None else {"partial": partial}  # as Schema._deserialize passes it on
        out = {}
        for data_key, key, field, nested in plan:
            raw = data.get(data_key, missing)
            if raw is missing and partial is True:
                continue
            if nested is not None and type(raw) is dict:
                value = nested(raw, partial)  # Nested.deserialize of an object: its schema's load
            else:
                value = field.deserialize(raw, data_key, data, **passed)
            if value is not missing:
                out[key] = value
        return _finished(schema, out, data, partial)

    return load


def _partial(schema: Schema, given: Any) -> bool | None:
    """The load's partial, as Schema._do_load resolves it; a collection of names is left to
    marshmallow, which splits it per field."""
    partial = schema.partial if given is None else given
    if partial is not None and partial is not True and partial is not False:
        raise _NotAsItComes
    return partial


def _finished(schema: Schema, out: dict, data: dict, partial: bool | None) -> Any:
    """The schema's own validators, then its post_load hooks, as Schema._do_load calls them."""
    if schema._hooks[VALIDATES_SCHEMA]:
        errors = ErrorStore()
        for collection in (True, False):
            schema._invoke_schema_validators(error_store=errors, pass_collection=collection, data=out,
                                             original_data=data, many=False, partial=partial,
                                             unknown=schema.unknown, field_errors=False)
        if errors.errors:
            raise _NotAsItComes
    if schema._hooks[POST_LOAD]:
        return schema._invoke_load_processors(POST_LOAD, out, many=False, original_data=data, partial=partial,
                                              unknown=schema.unknown)
    return out
