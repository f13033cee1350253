"""The front door's parts in this process (tests/deploy/test_front_door.py attacks the real
server): its settings, the WSGI bridge's environ and answers, the body reader's bounds, and the
guarded protocol served by uvicorn in a thread on a loopback socket, driven with raw bytes."""

import asyncio
import contextlib
import io
import json
import socket
import time
from collections.abc import Iterator

import pytest
from gunicorn.config import Config as GunicornConfig

from service.front import door, worker
from service.front.door import BodyHolds, FrontDoor, Problem, build_environ, call_wsgi, read_body
from service.front.limits import MIB, FrontLimits, from_env
from service.front.protocol import Tally, guarded_protocol
from tests.deploy.server import read_all

from .support import uvicorn_in_thread

WAIT_S = 10.0


# --- settings ------------------------------------------------------------------------------------

def test_the_limits_come_from_the_environment_over_the_defaults():
    limits = from_env({"SIZING_MAX_CONNECTIONS": "10", "SIZING_HEADER_TIMEOUT_S": "2.5",
                       "SIZING_BODY_BUFFER_MIB": "0.5", "SIZING_ARRIVING_PER_PEER": "3"}, idle_timeout_s=7.0)
    assert (limits.max_connections, limits.header_timeout_s, limits.body_buffer_bytes) == (10, 2.5, MIB // 2)
    assert limits.max_arriving_per_peer == 3 and limits.idle_timeout_s == 7.0
    assert from_env({}) == FrontLimits()


@pytest.mark.parametrize(("name", "value", "says"), [
    ("SIZING_MAX_CONNECTIONS", "many", "whole number"), ("SIZING_MAX_CONNECTIONS", "2.5", "whole number"),
    ("SIZING_HEADER_TIMEOUT_S", "0", "above zero"), ("SIZING_BODY_TIMEOUT_S", "inf", "above zero"),
    ("SIZING_WRITE_TIMEOUT_S", "nan", "above zero"), ("SIZING_BODY_BUFFER_MIB", "-1", "above zero"),
    ("SIZING_ARRIVAL_S", "10", "SIZING_HEADER_TIMEOUT_S and SIZING_BODY_TIMEOUT_S"),
    ("SIZING_ARRIVAL_BUFFER_MIB", "32", "SIZING_BODY_BUFFER_MIB"),
])
def test_a_bad_or_retired_setting_stops_the_start(name, value, says):
    with pytest.raises(ValueError, match=says) as refused:
        from_env({name: value})
    assert name in str(refused.value)


def test_a_worker_raises_its_open_files_limit_or_fits_its_connections_under_it(monkeypatch):
    set_to = []
    monkeypatch.setattr(worker.resource, "setrlimit", lambda kind, limits: set_to.append(limits))
    monkeypatch.setattr(worker.resource, "getrlimit", lambda kind: (1024, 4096))
    assert worker.descriptors_for(1000) == 1000 and set_to == [(1000 + worker.RESERVED_FDS, 4096)]
    monkeypatch.setattr(worker.resource, "getrlimit", lambda kind: (256, 512))
    assert worker.descriptors_for(1000) == 512 - worker.RESERVED_FDS
    monkeypatch.setattr(worker.resource, "getrlimit", lambda kind: (worker.resource.RLIM_INFINITY,) * 2)
    assert worker.descriptors_for(1000) == 1000


class Log:
    def __init__(self):
        self.error_log = self.access_log = __import__("logging").getLogger("test.front")


def test_the_worker_wraps_the_app_gunicorn_loads_in_the_front_door_and_refuses_tls():
    cfg = GunicornConfig()
    cfg.set("threads", 3)
    made = worker.FrontWorker(1, 0, [], None, 30, cfg, Log())
    try:
        assert made.limits.idle_timeout_s == cfg.keepalive
        made.protocol = guarded_protocol(made.limits)
        made.app = type("App", (), {"wsgi": staticmethod(lambda: lambda environ, start: [b""])})()
        made.load_wsgi()
        assert isinstance(made.wsgi, FrontDoor) and made.wsgi.threads._max_workers == 3
        made.wsgi.threads.shutdown()
    finally:
        made.tmp.close()
    tls = GunicornConfig()
    tls.set("certfile", __file__)
    tls.set("keyfile", __file__)
    with pytest.raises(RuntimeError, match="TLS"):
        worker.FrontWorker(1, 0, [], None, 30, tls, Log())


# --- the WSGI bridge -----------------------------------------------------------------------------

SCOPE = {"type": "http", "method": "POST", "http_version": "1.1", "scheme": "http", "path": "/v1/x y",
         "raw_path": b"/v1/x%20y%E9", "query_string": b"a=1&b=\xe9", "root_path": "",
         "client": ("10.0.0.1", 5555), "server": ("127.0.0.1", 8000),
         "headers": [(b"host", b"h"), (b"content-type", b"application/json"), (b"content-length", b"2"),
                     (b"x-api-key", b"one"), (b"x_api_key", b"posing"), (b"accept", b"a"), (b"accept", b"b")]}


def test_the_environ_is_pep_3333s_with_the_whole_body():
    environ = build_environ(SCOPE, b"{}")
    assert environ["PATH_INFO"] == "/v1/x y\xe9" and environ["QUERY_STRING"] == "a=1&b=\xe9"
    assert environ["CONTENT_LENGTH"] == "2" and environ["CONTENT_TYPE"] == "application/json"
    assert environ["HTTP_X_API_KEY"] == "one"  # never the underscored name posing as it
    assert environ["HTTP_ACCEPT"] == "a,b" and environ["REMOTE_ADDR"] == "10.0.0.1"
    assert environ["wsgi.input"].read() == b"{}" and environ["wsgi.input_terminated"]
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"], environ["SERVER_PROTOCOL"]) == ("127.0.0.1", "8000",
                                                                                           "HTTP/1.1")
    bare = build_environ({**SCOPE, "headers": [], "client": None, "server": None}, b"")
    assert "CONTENT_LENGTH" not in bare and "REMOTE_ADDR" not in bare and bare["SERVER_NAME"] == "localhost"


def test_the_app_runs_to_the_end_of_its_answer_before_anything_is_sent():
    closed = []

    class Body(list):
        def close(self):
            closed.append(True)

    def app(environ, start_response):
        write = start_response("500 Oops", [("X-A", "1")])
        try:
            raise ValueError("late")
        except ValueError:
            import sys
            write = start_response("418 Teapot", [("Content-Type", "text/plain")], sys.exc_info())
        write(b"written ")
        return Body([b"", b"then yielded"])

    status, headers, body = call_wsgi(app, {})
    assert status == 418 and body == b"written then yielded" and closed == [True]
    assert (b"content-length", b"20") in headers and (b"x-a", b"1") not in headers

    def twice(environ, start_response):
        start_response("200 OK", [])
        start_response("200 OK", [])
        return []

    with pytest.raises(AssertionError):
        call_wsgi(twice, {})
    with pytest.raises(RuntimeError, match="start_response"):
        call_wsgi(lambda environ, start_response: [], {})
    no_content = call_wsgi(lambda e, s: (s("204 No Content", []), [])[1], {})
    assert no_content == (204, [], b"")


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, WAIT_S))


def receiving(*messages, then="wait"):
    queue = list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        if then == "wait":
            await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    return receive


def scope_with(*headers, client="10.0.0.1"):
    return {**SCOPE, "client": (client, 1), "headers": list(headers)}


LIMITS = FrontLimits(max_body_bytes=100, body_timeout_s=0.2, body_buffer_bytes=250, body_buffer_per_peer_bytes=150,
                     max_arriving_per_peer=2)


@pytest.mark.parametrize(("headers", "messages", "expected"), [
    ([(b"content-length", b"5")], [{"type": "http.request", "body": b"hello", "more_body": False}], b"hello"),
    ([(b"transfer-encoding", b"chunked")], [{"type": "http.request", "body": b"ab", "more_body": True},
                                            {"type": "http.request", "body": b"cd", "more_body": False}], b"abcd"),
    ([], [{"type": "http.request", "body": b"", "more_body": False}], b""),
    ([(b"content-length", b"101")], [], (413, "a body too large (413)")),
    ([(b"transfer-encoding", b"gzip, chunked")], [], (400, "a transfer coding not served (400)")),
    ([(b"transfer-encoding", b"chunked")], [{"type": "http.request", "body": b"x" * 101, "more_body": True}],
     (413, "a body too large (413)")),
    ([(b"content-length", b"10")], [{"type": "http.request", "body": b"12345", "more_body": True}],
     (408, "a body not whole in time (408)")),
    ([(b"content-length", b"3")], [{"type": "http.disconnect"}], None),
])
def test_the_body_is_read_whole_within_its_bounds(headers, messages, expected):
    holds = BodyHolds(LIMITS)

    async def read():
        with holds.hold("10.0.0.1") as hold:
            return await read_body(scope_with(*headers), receiving(*messages), hold, LIMITS)

    got = run(read())
    if isinstance(expected, tuple):
        assert isinstance(got, Problem) and (got.status, got.reason) == expected and got.detail
    else:
        assert got == expected
    assert holds.total == 0 and not holds.by_peer and not holds.arriving  # all given back


def test_bodies_held_are_bounded_per_address_and_in_all_and_arriving_ones_per_address():
    holds = BodyHolds(LIMITS)
    with holds.hold("a") as first, holds.hold("a") as second, holds.hold("b") as third:
        assert first.grow(100) is None and second.grow(60).status == 503  # past a's 150
        assert second.grow(50) is None and third.grow(101).status == 503  # past the 250 in all
        assert "in flight" in third.grow(101).detail and holds.total == 150 and third.grow(100) is None
        assert first.arrive() is None and second.arrive() is None
        with holds.hold("a") as fourth:
            refused = fourth.arrive()
            assert refused.status == 503 and refused.retry_after_s == 1 and "arriving" in refused.detail
        assert third.arrive() is None  # another address
    assert holds.total == 0 and not holds.arriving


def test_the_front_door_answers_with_the_app_and_refuses_without_it(caplog):
    seen = []

    def app(environ, start_response):
        seen.append(environ["wsgi.input"].read())
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    front = FrontDoor(app, LIMITS, threads=2, tally=Tally())
    said = []

    async def send(message):
        said.append(message)

    run(front(scope_with((b"content-length", b"2")), receiving({"type": "http.request", "body": b"{}"}), send))
    assert said[0]["status"] == 200 and said[1]["body"] == b"ok" and seen == [b"{}"]
    said.clear()
    run(front(scope_with((b"content-length", b"500")), receiving(), send))
    assert said[0]["status"] == 413 and json.loads(said[1]["body"])["status"] == 413
    assert front.tally.counts["a body too large (413)"] == 1
    said.clear()
    run(front(scope_with((b"content-length", b"2")), receiving({"type": "http.disconnect"}), send))
    assert said == []  # the client left: no one to answer
    front.app = lambda environ, start_response: 1 / 0
    run(front(scope_with(), receiving({"type": "http.request", "body": b""}), send))
    assert said[0]["status"] == 500 and "failure is logged" in json.loads(said[1]["body"])["detail"]
    assert "the app failed" in caplog.text
    said.clear()
    run(front({"type": "websocket"}, receiving(), send))
    assert said == []
    run(front({"type": "lifespan"}, receiving({"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}), send))
    assert [m["type"] for m in said] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert front.threads._shutdown


def test_the_tally_says_its_counts_in_one_line_and_starts_again(caplog):
    tally = Tally()
    tally.add("x (400)")  # no loop running: said at once
    tally.add("y (408)")
    tally.write()
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == ["1 x x (400)", "1 x y (408)"]
    assert not tally.counts


# --- the guarded protocol over real sockets, uvicorn in a thread ----------------------------------

def echo_app(environ, start_response):
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("X-Seen", environ.get("HTTP_X_REQUEST_ID", "-"))])
    return [json.dumps({"path": environ["PATH_INFO"], "body": body.decode("latin-1"),
                        "addr": environ["REMOTE_ADDR"]}).encode()]


@contextlib.contextmanager
def serving(limits: FrontLimits, app=echo_app) -> Iterator[tuple[int, type]]:
    protocol = guarded_protocol(limits)
    with uvicorn_in_thread(lambda port: FrontDoor(app, limits, 2, protocol.tally), protocol, lifespan="on",
                           proxy_headers=False, loop="asyncio") as port:
        yield port, protocol


def connect(port, source="127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT_S, source_address=(source, 0))


def exchange(port, raw: bytes, half_close=True, source="127.0.0.1") -> bytes:
    with connect(port, source) as sock:
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_all(sock)


def status_of(said: bytes) -> int:
    return int(said.split(b" ", 2)[1])


FAST = FrontLimits(idle_timeout_s=0.3, header_timeout_s=0.3, body_timeout_s=0.3, write_timeout_s=0.3,
                   close_grace_s=0.5, max_connections=4, max_connections_per_peer=3, max_head_bytes=2048,
                   max_request_line_bytes=512, max_header_fields=10)


def test_requests_are_answered_and_bad_ones_refused_as_problems():
    with serving(FAST) as (port, protocol):
        said = exchange(port, b"POST /a%20b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        assert status_of(said) == 200 and b'"path": "/a b"' in said
        cases = [
            (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-6\r\nhello\r\n", 400),
            (b"GET / HTTP/2.0\r\n\r\n", 505),
            (b"GET /" + b"x" * 600 + b" HTTP/1.1\r\n\r\n", 414),
            (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(11)) + b"\r\n", 431),
            (b"GET / HTTP/1.1\r\nX-Big: " + b"y" * 3000 + b"\r\n\r\n", 431),
            (b"GET / HTTP/1.1\r\nX-Big: " + b"y" * 3000, 431),  # never ends: the wire count
            (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-T: " + b"t" * 3000 + b"\r\n\r\n", 431),
        ]
        for raw, status in cases:
            said = exchange(port, raw)
            assert status_of(said) == status, raw[:40]
            assert b"application/problem+json" in said and b"connection: close" in said
        too_large = FrontLimits(max_body_bytes=10, max_head_bytes=100, max_request_line_bytes=100)
    with serving(too_large) as (port, _):
        chunks = b"".join(b"1\r\nx\r\n" for _ in range(100))  # 10 bytes of body past 300 on the wire
        said = exchange(port, b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
        assert status_of(said) in (413,)


def test_trailers_and_underscored_names_never_become_headers_and_upgrades_and_half_closes_are_answered():
    with serving(FAST) as (port, _):
        said = exchange(port, b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
                              b"X-Request-ID: trailer\r\n\r\n")
        assert status_of(said) == 200 and b"x-seen: -" in said and b'"body": "{}"' in said
        said = exchange(port, b"GET / HTTP/1.1\r\nX_Request_ID: posing\r\n\r\n")
        assert b"x-seen: -" in said
        said = exchange(port, b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", half_close=False)
        assert status_of(said) == 200 and said.count(b"HTTP/1.1") == 1  # answered, then closed


def test_http_1_0_hears_no_100_continue_and_1_1_does():
    with serving(FAST) as (port, _):
        with connect(port) as sock:
            sock.sendall(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
            sock.settimeout(0.2)
            with pytest.raises(TimeoutError):
                sock.recv(10)
            sock.sendall(b"{}")
            assert b"100 Continue" not in read_all(sock)
        with connect(port) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
            assert sock.recv(64) == b"HTTP/1.1 100 Continue\r\n\r\n"


def test_slow_heads_and_bodies_end_in_408_and_idle_connections_close():
    with serving(FAST) as (port, protocol):
        with connect(port) as idle, connect(port) as head, connect(port) as body:
            head.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            body.sendall(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n123")
            assert read_all(idle) == b""
            assert status_of(read_all(head)) == 408 and status_of(read_all(body)) == 408
        assert protocol.tally.counts["a head not whole in time (408)"] >= 1
        with connect(port) as kept:  # kept alive after an answer, then idle: closed too
            kept.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert status_of(read_all(kept)) == 200


def test_connections_past_a_cap_close_the_idlest_or_are_refused():
    with serving(FAST) as (port, protocol):
        mine = [connect(port, "127.0.0.2") for _ in range(3)]
        others = []
        try:
            time.sleep(0.05)
            others.append(connect(port, "127.0.0.2"))  # past 3 from one address: its own idlest goes
            assert read_all(mine[0]) == b""
            others += [connect(port, "127.0.0.3") for _ in range(2)]  # past 4 in all: the idlest goes
            time.sleep(0.1)
            for sock in mine[1:]:  # each one busy now: a head begun
                with contextlib.suppress(OSError):
                    sock.sendall(b"GET / HTTP/1.1\r\n")
            for sock in others:
                with contextlib.suppress(OSError):
                    sock.sendall(b"GET / HTTP/1.1\r\n")
            time.sleep(0.05)
            late = exchange(port, b"", half_close=False, source="127.0.0.4")
            assert status_of(late) == 503 and b"retry-after: 1" in late.lower()
            assert protocol.tally.counts["an idle connection closed to make room"] >= 1
        finally:
            for sock in [*mine, *others]:
                sock.close()


def test_past_the_cap_in_all_the_address_holding_the_most_gives_way_first():
    with serving(FrontLimits(max_connections=4, max_connections_per_peer=3)) as (port, _):
        caller = connect(port, "127.0.0.5")  # the oldest idle connection, its address's only one
        time.sleep(0.05)
        flood = [connect(port, "127.0.0.6") for _ in range(3)]
        time.sleep(0.05)
        newcomer = connect(port, "127.0.0.7")
        try:
            assert read_all(flood[0]) == b""  # the flood's idlest went, not the older caller
            caller.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            caller.settimeout(WAIT_S)
            assert caller.recv(12) == b"HTTP/1.1 200"
        finally:
            for sock in [caller, newcomer, *flood]:
                sock.close()


def test_an_answer_nobody_reads_is_dropped_after_the_write_timeout():
    big = b"z" * (4 * MIB)

    def large(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [big]

    with serving(FAST, large) as (port, protocol):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        try:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 4)
            time.sleep(1.5)
            assert len(read_all(sock)) < 4 * len(big)
        finally:
            sock.close()
        assert protocol.tally.counts["an answer not read in time (dropped)"] >= 1


def test_a_fault_in_a_parser_callback_is_a_400_and_is_logged_once(monkeypatch, caplog):
    with serving(FAST) as (port, protocol):
        monkeypatch.setattr(protocol, "on_url", lambda self, url: 1 / 0)
        for _ in range(2):
            assert status_of(exchange(port, b"GET / HTTP/1.1\r\n\r\n")) == 400
    assert caplog.text.count("a parser callback failed") == 1


def test_read_body_of_a_real_request_through_uvicorn_holds_nothing_after():
    with serving(FAST) as (port, protocol):
        raw = b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
        assert b'"body": "hello"' in exchange(port, raw)
        assert protocol.books.open >= 0


def test_the_environ_of_a_request_with_no_client():
    environ = build_environ({**SCOPE, "client": None}, b"")
    assert isinstance(environ["wsgi.input"], io.BytesIO)
    assert door.Problem(400, "r", "d").retry_after_s is None
