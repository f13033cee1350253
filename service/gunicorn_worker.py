"""gunicorn's threaded worker, with each request read whole before a thread takes it.

gunicorn's gthread worker hands a connection to one of its threads as soon as the connection
is readable, and the thread then reads the rest of the request with blocking reads: a client
that sends one header line every few seconds holds a thread for as long as it likes, and eight
such clients hold every thread of a 2 x 4 service (/healthz then times out). gunicorn's
deployment notes answer this with a buffering proxy in front (nginx); this worker does the
proxy's part of that job inside gunicorn, so that `make run`, the image and the pod get the
same protection with nothing more to run, and the client's address reaches the app unchanged.

The worker's main loop, which already waits on every idle connection, reads each request into
memory without blocking: the head, then the body by its Content-Length or its chunks. Only a
request that has arrived whole goes to a thread, so a thread never waits on a client. A request
must arrive within ARRIVAL_S of its connection's accept (or of its first byte, on a kept-alive
connection); after that the connection gets a 408 and is closed, and the worker logs how many
it closed. What is too large to buffer (a head past gunicorn's own limits, a body past
BODY_BYTES) goes to a thread at once, where gunicorn or the app refuse it. Connections per
worker stay bounded by gunicorn's worker_connections, and the bytes held for requests still
arriving by BUFFER_BYTES (SIZING_ARRIVAL_BUFFER_MIB, 32 MiB; past it, 503).

Only plain HTTP/1.x is buffered. With TLS, HTTP/2 or the uWSGI protocol configured, this is
gthread unchanged.
"""

import contextlib
import errno
import os
import re
import selectors
import time
from functools import partial

from gunicorn.workers.gthread import TConn, ThreadWorker

from .gunicorn_errors import problem_response


def _arrival_s() -> float:
    value = os.environ.get("SIZING_ARRIVAL_S", "").strip()
    seconds = float(value) if value else 10.0
    if not 0 < seconds < 3600:
        raise ValueError(f"SIZING_ARRIVAL_S must be a number of seconds above 0, got {value!r}")
    return seconds


# A request must arrive whole within this many seconds (SIZING_ARRIVAL_S, default 10: a real
# client sends a sizing request, at most 1 MiB, in milliseconds).
ARRIVAL_S = _arrival_s()
# Bodies buffered in the main loop: the app refuses more than 1 MiB (service/app.py's
# MAX_BODY_BYTES, not imported: this module is loaded by gunicorn's master, which must not
# import the app), so a larger body goes straight to a thread to be refused there.
BODY_BYTES = 1 << 20
RECV_BYTES = 1 << 16
# Closed slow requests are logged at most this often, with their count.
LOG_EVERY_S = 10.0


def _buffer_bytes() -> int:
    value = os.environ.get("SIZING_ARRIVAL_BUFFER_MIB", "").strip()
    mib = float(value) if value else 32.0
    if not 0 < mib < 1 << 20:
        raise ValueError(f"SIZING_ARRIVAL_BUFFER_MIB must be a number of MiB above 0, got {value!r}")
    return int(mib * (1 << 20))


# The most bytes one worker holds for requests still arriving (SIZING_ARRIVAL_BUFFER_MIB, 32):
# what the kernel's socket buffers held before is in the worker's memory now, and a thousand
# connections each sending a megabyte must not take the pod past its memory limit. A request
# whose bytes would pass it gets a 503 with Retry-After and is closed.
BUFFER_BYTES = _buffer_bytes()

_HEAD_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"^content-length[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.I | re.M)
_TRANSFER_ENCODING = re.compile(rb"^transfer-encoding[ \t]*:(.*)$", re.I | re.M)
_EXPECT_CONTINUE = re.compile(rb"^expect[ \t]*:[ \t]*100-continue[ \t]*\r\n", re.I | re.M)
# A chunk's size line, and a chunked body's trailers, are short; longer ones go to gunicorn's
# parser to be refused. Bounding them keeps every read's scan short, so that a client feeding
# a request one byte at a time costs the loop a constant per byte, never a rescan of all of it.
CHUNK_LINE_BYTES = 1024
TRAILER_BYTES = 8192


class _Conn(TConn):
    """A connection with the bytes read for its request in the main loop, and how far that
    request has arrived: `body` is where its body starts once the head is whole, `framing` how
    its end is known, `scanned` and `chunk_at` where the next scan starts."""

    def __init__(self, cfg, sock, client, server) -> None:
        super().__init__(cfg, sock, client, server)
        self.deadline = 0.0
        self.counted = 0  # the bytes of it the worker's `buffered` counts
        self.ready = False  # the request in `inbox` is whole: a thread may take it
        self.restart(b"")

    def restart(self, held: bytes) -> None:
        self.inbox = bytearray(held)
        self.scanned = 0
        self.body: int | None = None
        self.framing: tuple[str, int] = ("now", 0)
        self.chunk_at = 0

    def init(self) -> None:
        super().init()
        self.give_parser_the_inbox()

    def give_parser_the_inbox(self) -> None:
        if self.inbox and self.parser is not None:
            self.parser.unreader.unread(bytes(self.inbox))
            self.restart(b"")


def head_limit(cfg) -> int:
    """The most bytes a head gunicorn accepts can take: past it, gunicorn refuses it anyway."""
    return cfg.limit_request_line + 2 + cfg.limit_request_fields * (cfg.limit_request_field_size + 2) + 2


def framing(head: bytes) -> tuple[str, int]:
    """How the end of a request with this head is known: ("length", n) bytes of body,
    ("chunked", 0), or ("now", 0) when it has no body or its framing is for gunicorn's parser to
    judge (and refuse): a transfer coding other than chunked alone, conflicting or malformed
    lengths, a body too large to buffer."""
    codings = _TRANSFER_ENCODING.findall(head)
    if codings:
        return ("chunked", 0) if [c.strip().lower() for c in codings] == [b"chunked"] else ("now", 0)
    lengths = set(_CONTENT_LENGTH.findall(head))
    if len(lengths) != 1:
        return "now", 0
    (length,) = lengths
    if not length.isdigit() or int(length) > BODY_BYTES:
        return "now", 0
    return "length", int(length)


def chunked_progress(data: bytearray, pos: int) -> tuple[bool, int]:
    """Reads whole chunks from `pos`: (True, end) once the last chunk and its trailers are in,
    else (False, where the first chunk not yet whole starts). ValueError for a malformed or
    overlong size line or trailer section."""
    while True:
        eol = data.find(b"\r\n", pos, pos + CHUNK_LINE_BYTES)
        if eol < 0:
            if len(data) - pos >= CHUNK_LINE_BYTES:
                raise ValueError("chunk size line too long")
            return False, pos
        size = int(bytes(data[pos:eol]).split(b";", 1)[0].strip() or b"x", 16)
        if size == 0:
            end = data.find(_HEAD_END, eol, eol + TRAILER_BYTES)  # the trailers end with an empty line
            if end < 0:
                if len(data) - eol >= TRAILER_BYTES:
                    raise ValueError("trailer section too long")
                return False, pos
            return True, end + 4
        if len(data) < eol + 2 + size + 2:
            return False, pos
        pos = eol + 2 + size + 2


class BufferingThreadWorker(ThreadWorker):
    """gthread, with requests read whole in the main loop before a thread takes them."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.arriving: set[_Conn] = set()
        self.buffered = 0  # the bytes of the requests in `arriving`
        self.slow_closed = 0
        self.slow_logged_at = 0.0
        self.buffering = not (self.cfg.is_ssl or getattr(self.cfg, "protocol", "http") != "http"
                              or "h2" in (getattr(self.cfg, "http_protocols", None) or ()))

    def accept(self, listener) -> None:
        if not self.buffering:
            return super().accept(listener)
        try:
            sock, client = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        self._arrive(_Conn(self.cfg, sock, client, listener.getsockname()))

    def enqueue_req(self, conn) -> None:
        """Every way to a thread passes here: a request read whole goes on, any other (a
        kept-alive connection that became readable, bytes left after a pipelined request)
        comes back to the main loop to be read."""
        if not self.buffering or getattr(conn, "ready", False):
            if isinstance(conn, _Conn):
                conn.ready = False
            return super().enqueue_req(conn)
        self._arrive(conn)

    def _arrive(self, conn: _Conn) -> None:
        conn.deadline = time.monotonic() + ARRIVAL_S
        if conn.parser is not None:  # what a previous request's read left over
            conn.restart(conn.parser.unreader.take_buffered())
        if conn.inbox and self._whole(conn):
            return self._hand_over(conn)
        conn.sock.setblocking(False)
        self.arriving.add(conn)
        conn.counted = len(conn.inbox)
        self.buffered += conn.counted
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))

    def _on_readable(self, conn: _Conn, _sock) -> None:
        try:
            data = conn.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away
            self._forget(conn)
            self.nr_conns -= 1
            conn.close()
            return
        conn.inbox += data
        conn.counted += len(data)
        self.buffered += len(data)
        if self.buffered > BUFFER_BYTES:
            self._forget(conn)
            self._refuse(conn, 503, "Service Unavailable", "too many requests are arriving at once; retry in a second")
            self.nr_conns -= 1
            conn.close()
        elif self._whole(conn):
            self._forget(conn)
            self._hand_over(conn)

    def _whole(self, conn: _Conn) -> bool:
        """Whether a thread should take the connection's request now: it has arrived whole, or
        it is not this loop's to judge (too large, or framed in a way gunicorn must refuse)."""
        data = conn.inbox
        if conn.body is None:
            end = data.find(_HEAD_END, max(0, conn.scanned - 3))
            if end < 0:
                conn.scanned = len(data)
                return len(data) > head_limit(self.cfg)
            conn.body = conn.chunk_at = end + 4
            conn.framing = framing(bytes(data[:conn.body]))
            if conn.framing[0] != "now":
                self._continue(conn)
        kind, length = conn.framing
        if kind == "length":
            return len(conn.inbox) - conn.body >= length
        if kind == "chunked":
            if len(conn.inbox) - conn.body > BODY_BYTES:
                return True
            try:
                done, conn.chunk_at = chunked_progress(conn.inbox, conn.chunk_at)
            except ValueError:
                return True
            return done
        return True

    def _continue(self, conn: _Conn) -> None:
        """A client waiting for 100 Continue before it sends its body gets it from here, and the
        expectation is taken out of the head: the body will be in hand when a thread reads it."""
        head = bytes(conn.inbox[:conn.body])
        taken = _EXPECT_CONTINUE.sub(b"", head, count=1)
        if taken == head:
            return
        conn.inbox[:conn.body] = taken
        conn.body = conn.chunk_at = len(taken)
        if len(conn.inbox) == conn.body:  # nothing of the body sent yet: the client is waiting
            with contextlib.suppress(OSError):
                conn.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _hand_over(self, conn: _Conn) -> None:
        conn.give_parser_the_inbox()  # a kept-alive connection: its parser reads these first
        conn.data_ready = True  # the data is in hand: the thread must not wait on the socket
        conn.ready = True
        self.enqueue_req(conn)

    def _forget(self, conn: _Conn) -> None:
        if conn in self.arriving:
            self.arriving.discard(conn)
            self.buffered -= conn.counted  # not len(inbox): taking out an Expect line shortens it
            conn.counted = 0
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)

    def murder_pending(self) -> None:
        """gthread's sweep of its pending connections, then ours: a request not whole by its
        deadline gets a 408; on the way out, connections that sent nothing are closed now."""
        super().murder_pending()
        now = time.monotonic()
        for conn in [c for c in self.arriving if c.deadline <= now or (not self.alive and not c.inbox)]:
            self._forget(conn)
            if conn.inbox:
                self.slow_closed += 1
                self._refuse(conn, 408, "Request Timeout", f"the request did not arrive whole within {ARRIVAL_S:g} s")
            self.nr_conns -= 1
            conn.close()
        self._log_slow(now)

    @staticmethod
    def _refuse(conn: _Conn, status: int, title: str, detail: str) -> None:
        """A problem+json answer, best effort (the socket is not blocking), before the close."""
        with contextlib.suppress(OSError):
            conn.sock.send(problem_response(status, title, detail, 1 if status == 503 else None))

    def _log_slow(self, now: float) -> None:
        if self.slow_closed and now - self.slow_logged_at >= LOG_EVERY_S:
            self.log.warning("closed %d connection(s) whose request did not arrive whole within %g s",
                             self.slow_closed, ARRIVAL_S)
            self.slow_closed, self.slow_logged_at = 0, now
