"""Answers written as JSON text by plain functions compiled once per response schema.

`dumper(schema)` (dump.py) makes an answer's dict, which the JSON encoder then walks again; half
of a whole estimate's 18 KB is coded messages (`{code, message, params}`), most of them the same
objects from one question to the next (assumptions' notes, ranges' notes, kept sentences), each
encoded anew. `writer(schema)` goes from the answer to the compact JSON text in one pass, the
same text `json.dumps(dumper(schema)(answer))` writes with the service's compact settings
(ensure_ascii off, allow_nan off, keys in the schema's order), and writes a message's JSON once
a message, kept with it as its dict is. The contract test writes every answer both ways and
requires the same text.

A field whose type has no written form here is written as the encoder writes its dumped value,
never differently.
"""

import functools
import json
from collections.abc import Callable
from typing import Any

from flask import Response, current_app
from flask.json.provider import DefaultJSONProvider
from marshmallow import Schema, fields

from ..sizing import Message
from .dump import Form, _converter, dumper, part_schema, sparse_dumper
from .jsonio import StrictJSONProvider, indented
from .schemas import StrictBoolean
from .shapes import Grouped, Num, Said, Scaled, said

STRING = json.encoder.encode_basestring  # the C function the encoder writes a str with (ensure_ascii off)
# The encoder with the settings every compact answer is written with (StrictJSONProvider's, compact),
# made once: json.dumps makes one a call.
_ENCODER = json.encoder.c_make_encoder(None, DefaultJSONProvider.default, STRING, None, ":", ",", False, False, False)


def encode(value) -> str:
    """`value` as the service's compact JSON; ValueError for a number that is not finite."""
    return "".join(_ENCODER(value, 0))


def _value(value) -> str:
    """A value of any JSON type, the plain ones written here."""
    kind = value.__class__
    if kind is str:
        return STRING(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and value - value == 0.0:
        return float.__repr__(value)
    return encode(value)


def _said(value) -> str:
    """A message's JSON, written once a message and kept with it, as its dict is (messages.as_json)."""
    if value is None:
        return "null"
    made = value.__dict__.get("_json_text") if value.__class__ is Message else None
    if made is None:  # said() refuses text that is not a coded message, as the dump does
        made = value.__dict__["_json_text"] = encode(said(value))
    return made


def _number(text: str) -> str:
    """The JSON of the float written `text` (12 significant digits at most, as "%.12g" writes
    it): its repr, as the encoder writes a float; ValueError where it is not finite."""
    value = float(text)
    if value - value != 0.0:
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return float.__repr__(value)


# A number rounded to 12 significant digits, as the dump rounds it and the encoder writes it. A
# decimal of at most 15 significant digits is the only one that short to round-trip its float,
# so the float's repr has the same digits; in fixed notation (a point, no exponent) it is the
# same text, and only the rest (an integer, which repr writes with ".0", an exponent repr writes
# out, nan or inf) goes through the float.
_NUMBER = '(t if "." in (t := format({}, ".12g")) and "e" not in t else N(t))'


# A message's kept JSON, or _said (which writes and keeps it, and refuses what is not a message).
_SAID = '((({0}).__dict__.get("_json_text") if ({0}).__class__ is MESSAGE else None) or S({0}))'
# _value's plain types written in place, any other value through it.
_VALUE = ('T(v) if (k := v.__class__) is str else I(v) if k is int else F(v) if k is float and v - v == 0.0 '
          'else E(v)')


def _braced(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class _Text(Form):
    name, opening, closing = "write", "    out = []", '    return "{" + ",".join(out) + "}"'

    def store(self, key: str, expression: str) -> str:
        return f"out.append({STRING(key) + ':'!r} + ({expression}))"

    def made(self, items: list[tuple[str, str]]) -> str:
        # one f-string: the keys' JSON as its text (braces doubled), each value's text a field of it
        text = ",".join(f"{_braced(STRING(key))}:{{{value}}}" for key, value in items)
        return "f" + repr("{{" + text + "}}")

    def expression(self, field: fields.Field, i: int, namespace: dict) -> str:
        if isinstance(field, Scaled):
            namespace[f"d{i}"] = field.divisor
            return '"null" if v is None else ' + _NUMBER.format(f"v / d{i}")
        if isinstance(field, Num):
            return '"null" if v is None else ' + _NUMBER.format("v")
        if isinstance(field, Said):
            return _SAID.format("v")
        if isinstance(field, fields.Integer):
            return '"null" if v is None else I(int(v))'
        if isinstance(field, fields.String):
            return '"null" if v is None else T(v if v.__class__ is str else str(v))'
        if type(field) in (fields.Boolean, StrictBoolean):
            return '"true" if v is True else "false" if v is False else E(v)'
        if isinstance(field, Grouped):  # null where the part is absent
            namespace[f"w{i}"], namespace[f"a{i}"] = self.of(type(field.schema)), field.absent
            return f'"null" if a{i}(v) else w{i}(v)'
        if isinstance(field, fields.Nested) and not field.many:
            namespace[f"w{i}"] = self.of(type(field.schema))
            return f'"null" if v is None else w{i}(v)'
        if isinstance(field, fields.List) and isinstance(field.inner, fields.Nested) and not field.inner.many:
            namespace[f"w{i}"] = self.of(type(field.inner.schema))
            return f'"null" if v is None else "[" + ",".join(map(w{i}, v)) + "]"'
        if isinstance(field, fields.List) and isinstance(field.inner, Said):
            return '"null" if v is None else "[" + ",".join([' + _SAID.format("x") + ' for x in v]) + "]"'
        if type(field) is fields.Raw:  # a value of any JSON type: the plain ones written here
            return _VALUE
        namespace[f"c{i}"] = _converter(field)  # any other: its dumped value as the encoder writes it
        return f"E(c{i}(v))"

    def part(self, name: str, field: fields.Field, below: tuple[str, ...], i: int, namespace: dict) -> str:
        namespace[f"w{i}"] = sparse_writer(part_schema(name, field, below), below)
        if isinstance(field, Grouped):  # null where the part is absent, as in the full answer
            namespace[f"a{i}"] = field.absent
            return f'"null" if a{i}(v) else w{i}(v)'
        if isinstance(field, fields.List):
            return f'"null" if v is None else "[" + ",".join(map(w{i}, v)) + "]"'
        return f'"null" if v is None else w{i}(v)'

    def helpers(self) -> dict:
        return {"N": _number, "S": _said, "I": int.__repr__, "T": STRING, "E": _value, "F": float.__repr__,
                "MESSAGE": Message}


TEXT = _Text()


def writer(schema_class: type[Schema]) -> Callable[[Any], str]:
    """A function equal to the compact JSON of `dumper(schema_class)`'s dict, built once per
    schema class (thread-safe)."""
    return TEXT.of(schema_class)


@functools.lru_cache(maxsize=256)
def sparse_writer(schema_class: type[Schema], paths: tuple[str, ...]) -> Callable[[Any], str]:
    """The compact JSON of `sparse_dumper(schema_class, paths)`'s dict."""
    return TEXT.sparse(schema_class, paths)


def _writes_as_provider(app) -> bool:
    """Whether the app's JSON is the text the writers write: the service's provider, with its
    settings, in the compact layout."""
    provider = app.json
    return (isinstance(provider, StrictJSONProvider) and not provider.sort_keys and not provider.ensure_ascii
            and provider.default is DefaultJSONProvider.default and not indented(app))


def json_answer(answer, schema_class: type[Schema], paths: tuple[str, ...] | None = None) -> Response:
    """The answer (only the fields in `paths` when given) as jsonify returns its dump: written
    straight to its text, or (in debug mode, or with other JSON settings) dumped and jsonified."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    if _writes_as_provider(app):
        write = writer(schema_class) if paths is None else sparse_writer(schema_class, paths)
        return app.response_class(write(answer) + "\n", mimetype=app.json.mimetype)
    dump = dumper(schema_class) if paths is None else sparse_dumper(schema_class, paths)
    return app.json.response(dump(answer))
