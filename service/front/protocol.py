"""uvicorn's HTTP/1.1 protocol on httptools (llhttp, Node.js's parser, fuzzed continuously by
OSS-Fuzz), with the bounds a public server needs that uvicorn leaves out.

uvicorn parses; this class only counts and times what the parser reports through its callbacks
and asyncio's protocol methods, and closes what passes a bound (FrontLimits, limits.py):

- connections: at most `max_connections` open, `max_connections_per_peer` from one address; past
  either, an idle connection in the way is closed (HTTP lets a server close an idle connection:
  the address's idlest, or in all the idlest of the address holding the most), or the new one
  is answered 503 and closed when every one is busy;
- time: a connection that sends nothing within `idle_timeout_s` of its accept (or of its last
  answer, uvicorn's keep-alive) is closed; a head not whole within `header_timeout_s` of its first
  byte gets a 408; an answer the client does not read for `write_timeout_s` is dropped, and a
  closed connection's last answer has `close_grace_s` to leave;
- size: a request line over `max_request_line_bytes` is a 414, a head over `max_head_bytes` or
  `max_header_fields` a 431, a request past `max_message_bytes` on the wire a 413. A chunked
  body's trailers are counted and dropped, never added to the request's headers;
- a request the parser refuses is a 400 problem, with llhttp's reason, and a version other than
  HTTP/1.0 or 1.1 a 505; `Expect: 100-continue` is honoured for HTTP/1.1 only; an `Upgrade` is
  ignored (the request is answered, then the connection closed); a client that half-closes
  after a whole request still gets its answer.

Every refusal is problem+json and is counted; the counts are logged at most every LOG_EVERY_S.
The attributes of uvicorn's protocol read here (cycle, pipeline, expect_100_continue, parser)
are those of the uvicorn minor release pyproject.toml pins; tests/deploy/test_front_door.py
drives each bound over real sockets.
"""

import asyncio
import logging
import time
from collections import Counter
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .limits import FrontLimits
from .problems import Problem

log = logging.getLogger("sizing.front")
LOG_EVERY_S = 10.0


class Refused(Exception):
    """Raised in a parser callback to stop the parse: the request is answered `problem`."""

    def __init__(self, status: int, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.problem = Problem(status, reason, detail)


class Tally:
    """What the front door refused or closed, by reason, logged as one line at most every
    LOG_EVERY_S (a flood of bad requests must not become a flood of log lines)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.flush: asyncio.TimerHandle | None = None
        self.since = 0.0

    def add(self, reason: str) -> None:
        if not self.counts:
            self.since = time.monotonic()
        self.counts[reason] += 1
        if self.flush is None:
            try:
                self.flush = asyncio.get_running_loop().call_later(LOG_EVERY_S, self.write)
            except RuntimeError:  # no loop running (a test calling in directly): say it now
                self.write()

    def write(self) -> None:
        if self.flush is not None:
            self.flush.cancel()
        self.flush = None
        if self.counts:
            log.warning("the front door refused or closed, in %.0f s: %s", time.monotonic() - self.since,
                        ", ".join(f"{n} x {reason}" for reason, n in self.counts.most_common()),
                        extra={"front_door": dict(self.counts)})
            self.counts.clear()


class Books:
    """A worker's open connections, in all and by peer address."""

    def __init__(self) -> None:
        self.open = 0
        self.by_peer: Counter[str] = Counter()


class GuardedProtocol(HttpToolsProtocol):
    """One connection (the module's docstring). guarded_protocol() makes the class a server uses,
    with its limits and its books."""

    limits = FrontLimits()
    books = Books()
    tally = Tally()
    faults: set[str] = set()  # the kinds of callback faults logged in this process

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_keep_alive = self.limits.idle_timeout_s  # uvicorn's, between two requests
        self.peer = "-"
        self.counted = False  # in the books
        self.idle_since = time.monotonic()
        self.in_head = False  # a request's head has begun and not ended
        self.reading = False  # a request has begun and its body has not ended
        self.url_bytes = self.head_bytes = self.fields = self.wire_bytes = self.trailer_bytes = 0
        self.timer: asyncio.TimerHandle | None = None  # the idle or the head deadline
        self.write_timer: asyncio.TimerHandle | None = None
        self.drop_timer: asyncio.TimerHandle | None = None

    # --- connections ---------------------------------------------------------------------------
    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.peer = self.client[0] if self.client else "-"
        refusal = self._make_room()
        if refusal is not None:
            self.tally.add(refusal)
            transport.write(Problem(503, refusal, f"{refusal}; retry in a second", retry_after_s=1).response())
            self._close()
            return
        self.books.open += 1
        self.books.by_peer[self.peer] += 1
        self.counted = True
        self._arm(self.limits.idle_timeout_s, self._idle_out)

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self.timer, self.write_timer, self.drop_timer):
            if timer is not None:
                timer.cancel()
        self._uncount()
        super().connection_lost(exc)

    def waiting(self) -> bool:
        """Open, with no request in progress: before the first one or between two."""
        return not self.reading and not self.pipeline and (self.cycle is None or self.cycle.response_complete) \
            and not self.transport.is_closing()

    def _make_room(self) -> str | None:
        """None when this connection may stay, after closing an idle one in its way if needed;
        else why it may not. Past the cap from its own address, that address's idlest goes;
        past the cap in all, the idlest of the address holding the most: a flood of connections
        from many addresses closes its own before a caller's one or two."""
        if self.books.by_peer[self.peer] >= self.limits.max_connections_per_peer \
                and not self._close_idlest(lambda c: c.peer == self.peer):
            return f"too many connections from one address (at most {self.limits.max_connections_per_peer})"
        if self.books.open >= self.limits.max_connections and not self._close_idlest(lambda c: True):
            return f"too many connections (at most {self.limits.max_connections})"
        return None

    def _close_idlest(self, among) -> bool:
        idle = [c for c in self.connections
                if isinstance(c, GuardedProtocol) and c.counted and c.waiting() and among(c)]
        if not idle:
            return False
        held = self.books.by_peer
        idlest = min(idle, key=lambda c: (-held[c.peer], c.idle_since))
        idlest._uncount()
        idlest._close()
        self.tally.add("an idle connection closed to make room")
        return True

    def _uncount(self) -> None:
        if self.counted:
            self.counted = False
            self.books.open -= 1
            self.books.by_peer[self.peer] -= 1
            if self.books.by_peer[self.peer] <= 0:
                del self.books.by_peer[self.peer]

    # --- time ------------------------------------------------------------------------------------
    def _arm(self, delay_s: float, then) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.loop.call_later(delay_s, then)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _idle_out(self) -> None:
        self.timer = None
        if self.waiting():
            self._close()

    def _head_late(self) -> None:
        self.timer = None
        self.tally.add("a head not whole in time (408)")
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.keep_alive = False  # a pipelined head behind an answer in progress: close after it
            return
        self._answer_and_close(Problem(408, "a head not whole in time (408)",
                                       f"the request's head did not arrive within {self.limits.header_timeout_s:g} s"))

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing():
            self._close()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.write_timer is None:
            self.write_timer = self.loop.call_later(self.limits.write_timeout_s, self._write_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.write_timer is not None:
            self.write_timer.cancel()
            self.write_timer = None

    def _write_stalled(self) -> None:
        self.write_timer = None
        self.tally.add("an answer not read in time (dropped)")
        self.transport.abort()

    def _close(self) -> None:
        """Close once what is written has left, and drop the socket if that takes too long."""
        self.transport.close()
        if self.drop_timer is None:
            self.drop_timer = self.loop.call_later(self.limits.close_grace_s, self.transport.abort)

    def _answer_and_close(self, problem: Problem) -> None:
        if not self.transport.is_closing():
            self.transport.write(problem.response())
        self._close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.idle_since = time.monotonic()
        if self.transport.is_closing():
            self._close()

    def shutdown(self) -> None:
        super().shutdown()
        if self.transport.is_closing():
            self._close()

    def eof_received(self) -> bool | None:
        """The client sent all it will send: a whole request is still answered (then the
        connection closes); a request cut short is not, and the connection closes now."""
        if self.reading or self.cycle is None or (self.cycle.response_complete and not self.pipeline):
            return None
        self.cycle.keep_alive = False  # the newest request's answer is the last
        return True

    # --- the parse ---------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._no_upgrade()
            return
        except httptools.HttpParserCallbackError as exc:
            refused = exc.__context__
            if isinstance(refused, Refused):
                self._refuse(refused.problem)
            else:  # a fault of a callback's own: logged, once a kind
                self._fault(refused or exc)
                self._refuse(Problem(400, "unreadable (400)", "the request could not be read"))
            return
        except httptools.HttpParserError as exc:
            self._refuse(Problem(400, "malformed (400)", f"the request is not valid HTTP/1.1: {exc}"))
            return
        self.wire_bytes += len(data)
        if self.in_head and self.wire_bytes > self.limits.max_request_line_bytes + self.limits.max_head_bytes:
            self._refuse(Problem(431, "a head too large (431)",
                                 f"the request's head is larger than {self.limits.max_head_bytes} bytes"))
        elif self.reading and self.wire_bytes > self.limits.max_message_bytes:
            self._refuse(Problem(413, "a request too large (413)",
                                 f"the request is larger than {self.limits.max_message_bytes} bytes on the wire"))

    def _fault(self, exc: BaseException) -> None:
        kind = type(exc).__name__
        if kind not in self.faults:
            self.faults.add(kind)
            log.error("a parser callback failed on a request (answered 400; later ones of this kind are counted)",
                      exc_info=exc)

    def _refuse(self, problem: Problem) -> None:
        """Answer `status` for the request being read, and close. When it is a request pipelined
        behind one whose answer is in progress, that answer is abandoned too (without writing
        ahead of it)."""
        self.tally.add(problem.reason)
        cycle = self.cycle
        in_progress = cycle is not None and not cycle.response_complete
        if in_progress:
            cycle.disconnected = True  # the app's answer, if any comes, is not written
            cycle.message_event.set()
        if not in_progress or (not self.in_head and not cycle.response_started):
            self._answer_and_close(problem)
        else:
            self._close()

    def _no_upgrade(self) -> None:
        """An Upgrade (h2c, websocket) is not served: the request is answered as plain HTTP/1.1;
        what follows it on the connection is not HTTP/1.1, so the connection closes after it."""
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.keep_alive = False
        else:
            self._close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.in_head = self.reading = True
        self.url_bytes = self.head_bytes = self.fields = self.wire_bytes = self.trailer_bytes = 0
        self._arm(self.limits.header_timeout_s, self._head_late)

    def on_url(self, url: bytes) -> None:
        self.url_bytes += len(url)
        if self.url_bytes > self.limits.max_request_line_bytes:
            raise Refused(414, "a request line too long (414)",
                          f"the request's target is longer than {self.limits.max_request_line_bytes} bytes")
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.in_head:  # a chunked body's trailer: counted, never one of the request's headers
            self.trailer_bytes += len(name) + len(value)
            if self.trailer_bytes > self.limits.max_head_bytes:
                raise Refused(431, "trailers too large (431)",
                              f"the chunked body's trailers are larger than {self.limits.max_head_bytes} bytes")
            return
        self.fields += 1
        self.head_bytes += len(name) + len(value)
        if self.fields > self.limits.max_header_fields or self.head_bytes > self.limits.max_head_bytes:
            raise Refused(431, "a head too large (431)",
                          f"the request's head is larger than {self.limits.max_head_bytes} bytes or "
                          f"{self.limits.max_header_fields} fields")
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.in_head = False
        self._disarm()
        version = self.parser.get_http_version()
        if version not in ("1.0", "1.1"):  # llhttp reads any digit.digit; HTTP/2 is not spoken in text
            raise Refused(505, "a version not served (505)", f"HTTP/{version[:8]} is not served here: use HTTP/1.1")
        if version == "1.0":
            self.expect_100_continue = False  # RFC 9110: an HTTP/1.0 client is never sent a 100
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self.reading = False
        super().on_message_complete()


def guarded_protocol(limits: FrontLimits) -> type[GuardedProtocol]:
    """The protocol class a server gives uvicorn (which makes one per connection), with its own
    limits, books of open connections and tally of refusals."""
    return type("Guarded", (GuardedProtocol,), {"limits": limits, "books": Books(), "tally": Tally()})
