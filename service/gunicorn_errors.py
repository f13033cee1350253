"""gunicorn answers a request it cannot parse (a request line over its limit, a bad header)
before the app sees it, with an HTML page. This makes those answers problem+json too, so
that no caller ever gets HTML. Installed in each worker by deploy/gunicorn.conf.py. The
buffering worker (service/gunicorn_worker.py) answers its own refusals with the same bytes."""

import json

from gunicorn import util


def problem_response(status_int: int, reason: str, mesg: str, retry_after_s: int | None = None) -> bytes:
    """A whole HTTP/1.1 answer of RFC 9457 problem details, after which the connection closes."""
    body = json.dumps({"type": "about:blank", "title": reason, "status": status_int,
                       "detail": mesg or reason, "instance": "", "errors": [],
                       "request_id": "-"}).encode()
    retry = f"Retry-After: {retry_after_s}\r\n" if retry_after_s is not None else ""
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n{retry}"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_problem(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn.util.write_error's signature, writing RFC 9457 problem details."""
    util.write_nonblock(sock, problem_response(status_int, reason, mesg))


def install() -> None:
    util.write_error = write_problem
