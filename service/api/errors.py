"""One error vocabulary: RFC 9457 problem+json, with an `errors` member naming each bad field.

The title, the detail and each error's message are coded messages (problem_messages.py, and the
domain's errors), said in the request's language (problem_lang); each error also carries its
`code` and `params`, as every message of an answer does."""

import logging

from flask import Flask, Response, json, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from ..security import request_id
from ..sizing import Message, SizingError, Verbatim, as_json, defaults, said_in
from . import problem_messages as P
from .lang import problem_lang

PROBLEM_MIME = "application/problem+json"
log = logging.getLogger(__name__)


def problem_body(status: int, detail: Message | str, errors: list[dict] | None = None,
                 title: str | None = None, lang: str | None = None) -> dict:
    """RFC 9457 problem details for this request, said in its language (`lang` where a part of
    it names its own, a batch item): the status's title, the detail, and each error as {field,
    code, message, params}."""
    lang = lang if lang in defaults.LANGS else problem_lang()
    coded_title = P.TITLES.get(status)
    return {
        "type": "about:blank",
        "title": _say(coded_title() if coded_title is not None else title or str(status), lang),
        "status": status,
        "detail": _say(detail, lang),
        "instance": request.path,
        "errors": [_error(e["field"], e["message"], lang) for e in errors or ()],
        "request_id": request_id(),
    }


def problem(status: int, detail: Message | str, errors: list[dict] | None = None) -> Response:
    """A problem+json response."""
    return _respond(problem_body(status, detail, errors))


# What a problem quotes of the request (a value, a field's name) is cut to this many characters:
# a 1 MB value is not sent back in the detail, the error's message and its params.
ECHO_CHARS = 200
CUT = "\u2026"


def _coded(text: Message | str) -> Message:
    """`text` as a coded message: itself, the template of a werkzeug detail, or the text quoted;
    whatever it quotes cut short (ECHO_CHARS)."""
    if isinstance(text, Message):
        return _short(text)
    known = P.HTTP_DETAILS.get(text)
    return known() if known is not None else P.UNTRANSLATED(text=Verbatim(_short_value(text)))


def _short(message: Message) -> Message:
    params = {name: _short_value(value) for name, value in message.params.items()}
    if all(params[name] is value for name, value in message.params.items()):
        return message
    return Message(message.template, params)


def _short_value(value: object) -> object:
    """A parameter as a problem quotes it: text cut to ECHO_CHARS, each of a list of the service's
    own (names, fields) too; a value as the request sent it (a JSON list or object where text was
    expected) as its JSON, cut the same."""
    if isinstance(value, Message):
        return _short(value)
    if isinstance(value, str):
        return type(value)(value[:ECHO_CHARS] + CUT) if len(value) > ECHO_CHARS else value
    if isinstance(value, tuple):
        return tuple(_short_value(v) for v in value)
    if isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return Verbatim(text[:ECHO_CHARS] + CUT if len(text) > ECHO_CHARS else text)
    return value


def _say(text: Message | str, lang: str) -> str:
    return str(said_in(lang, _coded(text)))


def _error(field: str, message: Message | str, lang: str) -> dict:
    return {"field": field, **as_json(said_in(lang, _coded(message)))}


def flatten_messages(messages, prefix: str = "") -> list[dict]:
    """marshmallow's nested messages as a flat list of {field, message}, fields dotted."""
    if isinstance(messages, dict):
        out = []
        for key, value in messages.items():
            key = str(key)[:ECHO_CHARS]  # a field name is quoted back: an unknown key may be long
            name = prefix if key == "_schema" else (f"{prefix}.{key}" if prefix else key)
            out.extend(flatten_messages(value, name))
        return out
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return [{"field": prefix or "body", "message": m} for m in messages]
    if isinstance(messages, list):
        return [e for m in messages for e in flatten_messages(m, prefix)]
    return [{"field": prefix or "body", "message": str(messages)}]


# A problem names at most this many bad fields: a body of 60,000 unknown keys gets a short
# answer saying how many more there were, not a 3 MB list.
MAX_PROBLEM_ERRORS = 20


def validation_problem(exc: ValidationError, detail: Message | None = None, lang: str | None = None) -> dict:
    """The 422 body for invalid input: the bad fields (the first MAX_PROBLEM_ERRORS, and how
    many more), named in the detail unless one is given."""
    errors = flatten_messages(exc.messages)
    more = len(errors) - MAX_PROBLEM_ERRORS
    if more > 0:  # which ones are listed does not depend on the order marshmallow found them in
        errors = [*sorted(errors, key=lambda e: (e["field"], e["message"]))[:MAX_PROBLEM_ERRORS],
                  {"field": "body", "message": P.MORE_NOT_LISTED(more=more)}]
    if detail is None:
        named = tuple(sorted({e["field"] for e in errors[:MAX_PROBLEM_ERRORS]}))
        detail = P.INVALID_FIELDS_MORE(fields=named, more=more) if more > 0 else P.INVALID_FIELDS(fields=named)
    return problem_body(422, detail, errors, lang=lang)


def sizing_problem(exc: SizingError, lang: str | None = None) -> dict:
    """The 422 body for input the domain refused (an unknown card, a count out of range...)."""
    return problem_body(422, exc.message, [{"field": exc.field or "body", "message": exc.message}], lang=lang)


def _respond(body: dict) -> Response:
    return Response(json.dumps(body), status=body["status"], mimetype=PROBLEM_MIME)


def _validation(exc: ValidationError) -> Response:
    return _respond(validation_problem(exc))


def _sizing(exc: SizingError) -> Response:
    return _respond(sizing_problem(exc))


def _http(exc: HTTPException) -> Response:
    response = _respond(problem_body(exc.code or 500, exc.description or exc.name, title=exc.name))
    if exc.code == 405 and exc.valid_methods:
        response.headers["Allow"] = ", ".join(exc.valid_methods)
    if exc.code == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="sizing"'
    retry_after = getattr(exc, "retry_after", None)  # 429 and 503 say when to come back
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _unexpected(exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.path)
    return problem(500, P.SERVER_FAILED())


def register_errors(app: Flask) -> None:
    """Every error leaves as problem+json: validation 422, HTTP errors as they are, the rest 500."""
    app.register_error_handler(ValidationError, _validation)
    app.register_error_handler(SizingError, _sizing)
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(Exception, _unexpected)
