"""The ASGI side of the front door: a request's body read whole in the event loop, then the WSGI
app called in a thread with the whole request in hand, and its whole answer written back.

A thread never waits on a client: not for a body that arrives slowly (the loop reads it, within
`body_timeout_s`), nor for a client that reads its answer slowly (the thread hands the answer
over whole and is free; the loop writes it, within `write_timeout_s`). a2wsgi, the maintained
WSGI-in-ASGI adapter, reads the body and writes each piece of the answer from the thread by
waiting on the loop, which is the blocking this module exists to avoid; the service's answers
are whole bytes, never streams, so nothing is lost by handing them over whole.

The bytes of request bodies a worker holds (arriving, waiting for a thread, being answered) are
bounded in all and per peer address (BodyHolds); a request without a body never counts, so the
probes are answered whatever the bodies in flight.
"""

import asyncio
import io
import logging
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote_to_bytes

from .limits import FrontLimits
from .problems import Problem
from .protocol import Tally

log = logging.getLogger("sizing.front")
Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyHolds:
    """The request bodies one worker holds: their bytes in all and by peer address, and how many
    of a peer's are still arriving."""

    def __init__(self, limits: FrontLimits) -> None:
        self.limits = limits
        self.total = 0
        self.by_peer: Counter[str] = Counter()
        self.arriving: Counter[str] = Counter()

    def hold(self, peer: str) -> "Hold":
        return Hold(self, peer)


class Hold:
    """What one request's body holds of its worker's BodyHolds, given back when it ends (a
    context manager around the request)."""

    def __init__(self, holds: BodyHolds, peer: str) -> None:
        self.holds, self.peer, self.bytes, self.counted = holds, peer, 0, False

    def arrive(self) -> "Problem | None":
        """The body starts to arrive: None, or the 503 when the peer has too many arriving."""
        holds = self.holds
        if holds.arriving[self.peer] >= holds.limits.max_arriving_per_peer:
            return Problem(503, "bodies arriving from one address (503)",
                           "too many request bodies from this address are arriving at once "
                           f"(at most {holds.limits.max_arriving_per_peer}); retry in a second", 1)
        holds.arriving[self.peer] += 1
        self.counted = True
        return None

    def arrived(self) -> None:
        """The body is whole (or will never be): it no longer counts as arriving."""
        if self.counted:
            self.counted = False
            self.holds.arriving[self.peer] -= 1
            if self.holds.arriving[self.peer] <= 0:
                del self.holds.arriving[self.peer]

    def grow(self, size: int) -> "Problem | None":
        """Hold `size` bytes in all for this body: None, or the 503 when that passes a bound."""
        more = size - self.bytes
        if more <= 0:
            return None
        holds, limits = self.holds, self.holds.limits
        if holds.by_peer[self.peer] + more > limits.body_buffer_per_peer_bytes:
            return Problem(503, "bodies held for one address (503)",
                           "too many request bodies from this address are in flight "
                           f"(at most {limits.body_buffer_per_peer_bytes >> 20} MiB); retry in a second", 1)
        if holds.total + more > limits.body_buffer_bytes:
            return Problem(503, "bodies held (503)", "too many request bodies are in flight; retry in a second", 1)
        holds.by_peer[self.peer] += more
        holds.total += more
        self.bytes = size
        return None

    def __enter__(self) -> "Hold":
        return self

    def __exit__(self, *_: object) -> None:
        self.arrived()
        if self.bytes:  # most requests (probes, GETs) held nothing
            holds = self.holds
            holds.total -= self.bytes
            holds.by_peer[self.peer] -= self.bytes
            if holds.by_peer[self.peer] <= 0:
                del holds.by_peer[self.peer]
            self.bytes = 0


def _header(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


def declared_body(scope: Scope, limits: FrontLimits) -> int | Problem:
    """The body's length as the head declares it (0 when chunked or absent), or the refusal of a
    framing the service does not take: a transfer coding other than chunked (llhttp decodes the
    chunks and passes any coding before them on, which the app would read as JSON), or a body
    longer than the app accepts (refused before it is read, so before a 100 Continue)."""
    codings = [c.strip().lower() for v in _header(scope, b"transfer-encoding") for c in v.split(b",") if c.strip()]
    if codings and codings != [b"chunked"]:
        return Problem(400, "a transfer coding not served (400)",
                       "the body must come as is or chunked; the transfer coding "
                       f"{b', '.join(codings).decode('latin-1')[:200]!r} is not supported")
    lengths = _header(scope, b"content-length")  # llhttp has checked it: one value, digits only
    length = int(lengths[0]) if lengths and not codings else 0
    if length > limits.max_body_bytes:
        return Problem(413, "a body too large (413)", f"the body is larger than {limits.max_body_bytes} bytes")
    return length


async def read_body(scope: Scope, receive: Receive, hold: Hold, limits: FrontLimits) -> bytes | Problem | None:
    """The request's whole body, within `body_timeout_s` and the bounds; a Problem to answer
    instead; None when the client left."""
    declared = declared_body(scope, limits)
    if isinstance(declared, Problem):
        return declared
    refusal = hold.grow(declared) or hold.arrive()  # a declared length is held at once
    if refusal is not None:
        return refusal
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                if chunk:
                    size += len(chunk)
                    if size > limits.max_body_bytes:
                        return Problem(413, "a body too large (413)",
                                       f"the body is larger than {limits.max_body_bytes} bytes")
                    refusal = hold.grow(size)
                    if refusal is not None:
                        return refusal
                    chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        return Problem(408, "a body not whole in time (408)",
                       f"the request's body did not arrive within {limits.body_timeout_s:g} s")
    finally:
        hold.arrived()


def build_environ(scope: Scope, body: bytes) -> dict[str, Any]:
    """The WSGI environ (PEP 3333) of a request whose body is whole. PATH_INFO is the raw path
    unquoted to bytes and read as latin-1, as WSGI servers give it; a header whose name holds an
    underscore is dropped (as gunicorn and nginx do), so that X_Api_Key cannot pose as
    X-API-Key; the body's length is what arrived, its framing the server's business."""
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(scope["raw_path"]).decode("latin-1"),
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.input_terminated": True,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    client = scope.get("client")
    if client:
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = client[0], str(client[1])
    framed = False
    for name, value in scope["headers"]:
        if name in (b"content-length", b"transfer-encoding"):
            framed = True
            continue
        if b"_" in name:
            continue
        key = "CONTENT_TYPE" if name == b"content-type" else "HTTP_" + name.decode("latin-1").upper().replace("-", "_")
        text = value.decode("latin-1")
        environ[key] = f"{environ[key]},{text}" if key in environ else text
    if framed or body:
        environ["CONTENT_LENGTH"] = str(len(body))
    return environ


def call_wsgi(app: Callable, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Run the WSGI app to the end of its answer: (status, headers, body). Nothing is sent
    before it returns, so a start_response called again (with exc_info, as PEP 3333 allows)
    replaces what the first said."""
    said: list[tuple[str, list[tuple[str, str]]]] = []
    chunks: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable:
        if said and exc_info is None:
            raise AssertionError("start_response called a second time without exc_info")
        said[:] = [(status, headers)]
        return chunks.append

    result: Iterable[bytes] = app(environ, start_response)
    try:
        chunks.extend(chunk for chunk in result if chunk)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    if not said:
        raise RuntimeError("the WSGI app returned without calling start_response")
    status, headers = said[0]
    code = int(status.split(" ", 1)[0])
    out = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
    body = b"".join(chunks)
    if code >= 200 and code not in (204, 304) and not any(name == b"content-length" for name, _ in out):
        out.append((b"content-length", b"%d" % len(body)))
    return code, out, body


class FrontDoor:
    """The ASGI app a worker serves: each request's body read whole (read_body), then
    `wsgi_app` called with it in one of `threads` threads, and its answer sent whole."""

    def __init__(self, wsgi_app: Callable, limits: FrontLimits, threads: int, tally: Tally | None = None) -> None:
        self.app, self.limits, self.tally = wsgi_app, limits, tally or Tally()
        self.holds = BodyHolds(limits)
        self.threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sizing-wsgi")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        if scope["type"] != "http":  # uvicorn runs with websockets off
            return
        peer = scope["client"][0] if scope.get("client") else "-"
        with self.holds.hold(peer) as hold:
            body = await read_body(scope, receive, hold, self.limits)
            if body is None:
                return
            if isinstance(body, Problem):
                self.tally.add(body.reason)
                await body.send(send)
                return
            try:
                status, headers, content = await asyncio.get_running_loop().run_in_executor(
                    self.threads, call_wsgi, self.app, build_environ(scope, body))
            except Exception:  # a fault of the WSGI app's own, outside its error handlers
                log.exception("the app failed on %s %s", scope["method"], scope["path"][:200])
                await Problem(500, "a failure of the app (500)",
                              "the server failed to answer; the failure is logged").send(send)
                return
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})

    async def lifespan(self, receive: Receive, send: Send) -> None:
        """The worker's start and stop: on the way out (after the connections' last answers), the
        refusals counted since the last log line are logged, and the threads are let go."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.tally.write()
                self.threads.shutdown(wait=False)
                await send({"type": "lifespan.shutdown.complete"})
                return
