"""The front door's own answers: RFC 9457 problem details, as the app answers every error, for
the requests it refuses before the app sees them (malformed, too large, too slow, too many).
They are said in English: the request's language is in a part the front door does not read."""

import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

PROBLEM_MIME = b"application/problem+json"


@dataclass(frozen=True)
class Problem:
    """A refusal the front door answers itself, after which the connection closes: its status,
    what it is (the worker's tally of refusals counts by it) and what the caller is told."""

    status: int
    reason: str
    detail: str
    retry_after_s: int | None = None

    def body(self) -> bytes:
        return json.dumps({"type": "about:blank", "title": HTTPStatus(self.status).phrase, "status": self.status,
                           "detail": self.detail, "instance": "", "errors": [], "request_id": "-"}).encode()

    def headers(self, body: bytes) -> list[tuple[bytes, bytes]]:
        headers = [(b"content-type", PROBLEM_MIME), (b"content-length", b"%d" % len(body)),
                   (b"connection", b"close"), (b"cache-control", b"no-store")]
        if self.retry_after_s is not None:
            headers.append((b"retry-after", b"%d" % self.retry_after_s))
        return headers

    def response(self) -> bytes:
        """The whole HTTP/1.1 answer, for a connection refused before an ASGI cycle exists."""
        body = self.body()
        head = [b"HTTP/1.1 %d %s\r\n" % (self.status, HTTPStatus(self.status).phrase.encode())]
        head += [name + b": " + value + b"\r\n" for name, value in self.headers(body)]
        return b"".join(head) + b"\r\n" + body

    async def send(self, send: Any) -> None:
        """The answer as ASGI messages, through the server's `send`."""
        body = self.body()
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers(body)})
        await send({"type": "http.response.body", "body": body})
