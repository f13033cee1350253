"""The front door's own answers: RFC 9457 problem details, as the app answers every error, for
the requests it refuses before the app sees them (malformed, too large, too slow, too many).
They are said in English: the request's language is in a part the front door does not read."""

import json
from http import HTTPStatus

PROBLEM_MIME = b"application/problem+json"


def problem_body(status: int, detail: str) -> bytes:
    return json.dumps({"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
                       "detail": detail, "instance": "", "errors": [], "request_id": "-"}).encode()


def problem_headers(body: bytes, retry_after_s: int | None = None) -> list[tuple[bytes, bytes]]:
    """The headers of a problem answer after which the connection closes."""
    headers = [(b"content-type", PROBLEM_MIME), (b"content-length", b"%d" % len(body)),
               (b"connection", b"close"), (b"cache-control", b"no-store")]
    if retry_after_s is not None:
        headers.append((b"retry-after", b"%d" % retry_after_s))
    return headers


def problem_response(status: int, detail: str, retry_after_s: int | None = None) -> bytes:
    """A whole HTTP/1.1 answer, for a connection refused before an ASGI cycle exists."""
    body = problem_body(status, detail)
    head = [b"HTTP/1.1 %d %s\r\n" % (status, HTTPStatus(status).phrase.encode())]
    head += [name + b": " + value + b"\r\n" for name, value in problem_headers(body, retry_after_s)]
    return b"".join(head) + b"\r\n" + body
