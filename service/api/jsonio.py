"""Strict JSON both ways: no NaN, Infinity or out-of-range numbers in, none out."""

import json
import math
import re
from collections.abc import Iterable

from flask import Flask, Request, Response, current_app, g
from flask.json.provider import DefaultJSONProvider
from marshmallow import ValidationError
from werkzeug.exceptions import BadRequest, UnsupportedMediaType

from . import problem_messages as P


class MalformedJSON(BadRequest):
    """The body is not strict JSON (RFC 8259)."""


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


def _has_lone_surrogate(value) -> bool:
    """Whether a parsed value holds a string with an unpaired UTF-16 surrogate ("\\ud800"),
    which no UTF-8 answer could echo."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and any("\ud800" <= ch <= "\udfff" for ch in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# In a body of ASCII bytes (no NUL: json.loads reads it as UTF-8, not UTF-16 or UTF-32) a lone
# surrogate reaches a parsed string only through a \\u escape of D800-DFFF; such a body without
# one is not walked for them. Any other body is (a UTF-8-encoded surrogate, which json.loads
# lets through, or another encoding).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _may_hold_surrogate(data: bytes | str) -> bool:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return not raw.isascii() or b"\x00" in raw or _SURROGATE_ESCAPE.search(raw) is not None


def loads_strict(data: bytes | str):
    """Parse JSON, refusing NaN, Infinity, numbers that overflow, absurd nesting and text that
    is not Unicode (unpaired surrogates)."""
    try:
        value = json.loads(data, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise MalformedJSON(P.JSON_TOO_DEEP()) from None
    except (ValueError, UnicodeDecodeError) as exc:
        # json.JSONDecodeError is a ValueError; so are integers over Python's digit limit.
        raise MalformedJSON(P.BAD_JSON(reason=str(exc))) from None
    if _may_hold_surrogate(data) and _has_lone_surrogate(value):
        raise MalformedJSON(P.JSON_SURROGATE())
    return value


def json_body(request: Request):
    """The request's JSON body; 415 unless it is sent as JSON, 400 unless it is strict JSON."""
    if not request.is_json:
        raise UnsupportedMediaType(P.NOT_JSON())
    body = loads_strict(request.get_data(cache=False))
    if isinstance(body, dict) and isinstance(body.get("lang"), str):
        g.asked_lang = body["lang"]  # the language of an error answer, should the body be refused
    return body


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON with allow_nan off: a non-finite number is a bug, never invalid output. An
    answer is a tree the dumpers make afresh (its messages' objects shared, never cyclic), so the
    encoder does not keep a table of every object it enters to find a cycle: about 13 % of the
    encoding of a whole estimate."""

    ensure_ascii = False
    sort_keys = False

    def dumps(self, obj, **kwargs) -> str:
        kwargs.setdefault("allow_nan", False)
        kwargs.setdefault("check_circular", False)
        return super().dumps(obj, **kwargs)


def indented(app: Flask) -> bool:
    """Whether jsonify indents the app's answers (in debug mode, or where the app says so), not the
    compact layout of every deployment."""
    compact = getattr(app.json, "compact", None)
    return (compact is None and app.debug) or compact is False


def json_items(items: Iterable[object]) -> Response:
    """`{"count": n, "items": [...]}` as jsonify writes it, each item encoded as it comes in the
    compact layout (every deployment's): a long list is held as text, not as the objects it was
    made from. In debug mode, indented like every other answer."""
    provider = current_app.json
    if indented(current_app):  # jsonify indents: the same document, whole
        listed = list(items)
        return provider.response({"count": len(listed), "items": listed})
    encoded = [provider.dumps(item, separators=(",", ":")) for item in items]
    return current_app.response_class(f'{{"count":{len(encoded)},"items":[{",".join(encoded)}]}}\n',
                                      mimetype=provider.mimetype)


def query_args(request: Request) -> dict:
    """The query parameters, each at most once: a repeated one is a 422, not silently the first."""
    repeated = sorted(k for k, values in request.args.lists() if len(values) > 1)
    if repeated:
        raise ValidationError({k: [P.REPEATED_PARAMETER()] for k in repeated})
    return request.args.to_dict()
