"""One error vocabulary: RFC 9457 problem+json, with an `errors` member naming each bad field."""

import logging

from flask import Flask, Response, json, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from ..security import request_id
from ..sizing import SizingError

PROBLEM_MIME = "application/problem+json"
log = logging.getLogger(__name__)


def problem_body(status: int, title: str, detail: str, errors: list[dict] | None = None) -> dict:
    """RFC 9457 problem details for this request."""
    return {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": request.path,
        "errors": errors or [],
        "request_id": request_id(),
    }


def problem(status: int, title: str, detail: str, errors: list[dict] | None = None) -> Response:
    """A problem+json response."""
    return _respond(problem_body(status, title, detail, errors))


def flatten_messages(messages, prefix: str = "") -> list[dict]:
    """marshmallow's nested messages as a flat list of {field, message}, fields dotted."""
    if isinstance(messages, dict):
        out = []
        for key, value in messages.items():
            name = prefix if key == "_schema" else (f"{prefix}.{key}" if prefix else str(key))
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


def validation_problem(exc: ValidationError, detail: str | None = None) -> dict:
    """The 422 body for invalid input: the bad fields (the first MAX_PROBLEM_ERRORS, and how
    many more), named in the detail unless one is given."""
    errors = flatten_messages(exc.messages)
    more = len(errors) - MAX_PROBLEM_ERRORS
    if more > 0:  # which ones are listed does not depend on the order marshmallow found them in
        errors = [*sorted(errors, key=lambda e: (e["field"], e["message"]))[:MAX_PROBLEM_ERRORS],
                  {"field": "body", "message": f"{more:,} more invalid fields are not listed"}]
    if detail is None:
        named = sorted({e["field"] for e in errors[:MAX_PROBLEM_ERRORS]})
        detail = f"Invalid input: {', '.join(named)}{f' and {more:,} more' if more > 0 else ''}."
    return problem_body(422, "Unprocessable Content", detail, errors)


def sizing_problem(exc: SizingError) -> dict:
    """The 422 body for input the domain refused (an unknown card, a count out of range...)."""
    return problem_body(422, "Unprocessable Content", exc.message,
                        [{"field": exc.field or "body", "message": exc.message}])


def _respond(body: dict) -> Response:
    return Response(json.dumps(body), status=body["status"], mimetype=PROBLEM_MIME)


def _validation(exc: ValidationError) -> Response:
    return _respond(validation_problem(exc))


def _sizing(exc: SizingError) -> Response:
    return _respond(sizing_problem(exc))


def _http(exc: HTTPException) -> Response:
    response = problem(exc.code or 500, exc.name, exc.description or exc.name)
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
    return problem(500, "Internal Server Error", "The server failed to answer; it has been logged.")


def register_errors(app: Flask) -> None:
    """Every error leaves as problem+json: validation 422, HTTP errors as they are, the rest 500."""
    app.register_error_handler(ValidationError, _validation)
    app.register_error_handler(SizingError, _sizing)
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(Exception, _unexpected)
