"""gunicorn answers a request it cannot parse (a request line over its limit, a bad header)
before the app sees it, with an HTML page. This makes those answers problem+json too, so
that no caller ever gets HTML. Installed in each worker by deploy/gunicorn.conf.py."""

import json

from gunicorn import util


def write_problem(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn.util.write_error's signature, writing RFC 9457 problem details."""
    body = json.dumps({"type": "about:blank", "title": reason, "status": status_int,
                       "detail": mesg or reason, "instance": "", "errors": [],
                       "request_id": "-"}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n")
    util.write_nonblock(sock, head.encode("latin-1") + body)


def install() -> None:
    util.write_error = write_problem
