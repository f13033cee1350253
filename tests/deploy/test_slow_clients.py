"""Slow clients hold no thread (service/gunicorn_worker.py): a request is read whole in the
worker's main loop before a thread takes it, and one that does not arrive in time gets a 408.
Over real sockets against gunicorn as `make run` starts it, then the reading's pieces as tables."""

import contextlib
import selectors
import socket
import threading
import time
from collections import deque

import pytest
import requests
from gunicorn.config import Config
from gunicorn.workers.gthread import ThreadWorker

from service import gunicorn_worker
from service.app import MAX_BODY_BYTES
from service.gunicorn_worker import (
    BODY_BYTES,
    CHUNK_LINE_BYTES,
    BufferingThreadWorker,
    _Conn,
    chunked_progress,
    framing,
    head_limit,
)

from . import server as srv

ARRIVAL_S = 2  # SIZING_ARRIVAL_S for these servers: short, so that the tests are
ESTIMATE = b'{"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}'


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # One worker with two threads: two slow clients would have held all of it before.
    with srv.running(tmp_path_factory.mktemp("slow"), workers=1, threads=2, SIZING_ARRIVAL_S=str(ARRIVAL_S)) as s:
        yield s


def connect(server) -> socket.socket:
    host, port = server.base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def post(body: bytes, *extra: bytes, close: bool = True) -> bytes:
    head = [b"POST /estimate HTTP/1.1", b"Host: x", b"Content-Type: application/json", *extra]
    if close:
        head.append(b"Connection: close")
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def test_slow_headers_and_bodies_hold_no_thread_and_are_cut_with_a_408(server):
    slow = [connect(server) for _ in range(6)]  # three times the threads
    try:
        for i, sock in enumerate(slow):
            if i % 2:  # a head that never ends
                sock.sendall(b"POST /estimate HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
            else:  # a head, and a body that stops short
                sock.sendall(post(ESTIMATE[:10], b"Content-Length: %d" % len(ESTIMATE)))
        started = time.monotonic()
        while time.monotonic() - started < ARRIVAL_S * 0.75:  # all of them held open meanwhile
            assert requests.get(f"{server.base}/healthz", timeout=10).status_code == 200
            answer = requests.post(f"{server.base}/estimate", data=ESTIMATE, timeout=10,
                                   headers={"Content-Type": "application/json"})
            assert answer.status_code == 200
            time.sleep(0.1)
        for sock in slow:
            said = read_all(sock)
            assert said.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), said[:80]
            assert b"application/problem+json" in said and b'"status": 408' in said
    finally:
        for sock in slow:
            sock.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any("did not arrive whole" in line.get("message", "")
                                                  for line in server.log_lines()):
        time.sleep(0.2)
    assert any("did not arrive whole" in line.get("message", "") for line in server.log_lines())


def test_a_request_sent_in_slow_pieces_within_the_limit_is_answered(server):
    request = post(ESTIMATE, b"Content-Length: %d" % len(ESTIMATE))
    with connect(server) as sock:
        for piece in (request[:7], request[7:40], request[40:-5], request[-5:]):
            sock.sendall(piece)
            time.sleep(0.2)
        said = read_all(sock)
    assert said.startswith(b"HTTP/1.1 200 OK") and b'"fits"' in said


def test_a_client_waiting_for_100_continue_gets_one_then_its_answer(server):
    with connect(server) as sock:
        sock.sendall(post(b"", b"Content-Length: %d" % len(ESTIMATE), b"Expect: 100-continue"))
        interim = sock.recv(64)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(ESTIMATE)
        said = read_all(sock)
    assert said.startswith(b"HTTP/1.1 200 OK") and b"100 Continue" not in said


def test_a_chunked_body_and_pipelined_requests_are_answered(server):
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (ESTIMATE[:20], ESTIMATE[20:])) + b"0\r\n\r\n"
    with connect(server) as sock:
        sock.sendall(post(chunks, b"Transfer-Encoding: chunked", close=False)[:-3])  # the end comes later
        time.sleep(0.2)
        sock.sendall(chunks[-3:] + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n"
                     b"Connection: close\r\n\r\n")
        said = read_all(sock)
    assert said.count(b"HTTP/1.1 200 OK") == 3 and b'"fits"' in said and b'"ready"' in said


def test_kept_alive_connections_and_a_body_over_the_limit(server):
    with requests.Session() as session:
        for _ in range(3):
            assert session.post(f"{server.base}/estimate", data=ESTIMATE, timeout=10,
                                headers={"Content-Type": "application/json"}).status_code == 200
    too_large = requests.post(f"{server.base}/estimate", data=b" " * (3 << 20), timeout=30,
                              headers={"Content-Type": "application/json"})
    assert too_large.status_code == 413 and too_large.headers["Content-Type"] == "application/problem+json"


def test_many_slow_clients_at_once_leave_the_probe_answering(server):
    stop = threading.Event()
    opened: list[socket.socket] = []

    def trickle():
        with connect(server) as sock:
            opened.append(sock)
            sock.sendall(b"POST /estimate HTTP/1.1\r\n")
            while not stop.wait(0.3):
                try:
                    sock.sendall(b"X: 1\r\n")
                except OSError:
                    return

    threads = [threading.Thread(target=trickle) for _ in range(40)]
    for t in threads:
        t.start()
    try:
        for _ in range(10):
            assert requests.get(f"{server.base}/healthz", timeout=10).status_code == 200
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert len(opened) == 40


@pytest.mark.parametrize(("head", "expected"), [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", ("now", 0)),
    (b"POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n", ("length", 12)),
    (b"POST / HTTP/1.1\r\ncontent-length:  7 \r\n\r\n", ("length", 7)),
    (b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", ("now", 0)),  # gunicorn refuses it
    (b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", ("length", 5)),
    (b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", ("now", 0)),
    (b"POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", ("now", 0)),  # too large to buffer
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", ("chunked", 0)),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", ("now", 0)),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", ("chunked", 0)),
    (b"POST / HTTP/1.1\r\nX-Content-Length: 3\r\n\r\n", ("now", 0)),
])
def test_how_the_end_of_a_request_is_known(head, expected):
    assert framing(head) == expected


@pytest.mark.parametrize(("body", "expected"), [
    (b"", (False, 0)),
    (b"5\r\nhel", (False, 0)),
    (b"5\r\nhello\r\n", (False, 10)),
    (b"5\r\nhello\r\n0\r\n", (False, 10)),
    (b"5\r\nhello\r\n0\r\n\r\n", (True, 15)),
    (b"5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n", (True, 33)),
    (b"0\r\n\r\nGET / HTTP/1.1\r\n", (True, 5)),
])
def test_how_far_a_chunked_body_has_arrived(body, expected):
    assert chunked_progress(bytearray(body), 0) == expected


@pytest.mark.parametrize("body", [b"zz\r\n", b"\r\n", b"1" * CHUNK_LINE_BYTES])
def test_a_malformed_chunk_is_left_to_gunicorn_to_refuse(body):
    with pytest.raises(ValueError):
        chunked_progress(bytearray(body), 0)


# --- the main loop's part, in process: a worker without its loop, fed over socket pairs ----------

class Log:
    def __init__(self):
        self.warnings = []

    def warning(self, message, *args):
        self.warnings.append(message % args)


@pytest.fixture()
def loop(monkeypatch):
    """A BufferingThreadWorker's main-loop state, with gthread's hand-over to a thread recorded
    instead (the connections a thread would take, in order)."""
    worker = BufferingThreadWorker.__new__(BufferingThreadWorker)
    worker.cfg = Config()
    worker.poller = selectors.DefaultSelector()
    worker.arriving, worker.nr_conns, worker.alive, worker.log, worker.buffered = set(), 0, True, Log(), 0
    worker.slow_closed, worker.slow_logged_at, worker.buffering = 0, 0.0, True
    worker.pending_conns, worker.keepalived_conns = deque(), deque()
    worker.handed = []
    monkeypatch.setattr(ThreadWorker, "enqueue_req", lambda self, conn: self.handed.append(conn))
    pairs = []

    def connection():
        ours, theirs = socket.socketpair()
        pairs.append((ours, theirs))
        conn = _Conn(worker.cfg, ours, ("127.0.0.1", 1), ("127.0.0.1", 2))
        worker.nr_conns += 1
        worker._arrive(conn)
        return conn, theirs

    def turn(timeout=1.0):
        for key, _ in worker.poller.select(timeout):
            key.data(key.fileobj)

    worker.connection, worker.turn = connection, turn
    yield worker
    worker.poller.close()
    for ours, theirs in pairs:
        ours.close()
        theirs.close()


def test_the_loop_hands_a_request_over_only_once_it_is_whole_and_the_parser_reads_it(loop):
    conn, client = loop.connection()
    request = post(ESTIMATE, b"Content-Length: %d" % len(ESTIMATE))
    for piece in (request[:30], request[30:-4]):
        client.sendall(piece)
        loop.turn()
        assert loop.handed == [] and conn in loop.arriving
    client.sendall(request[-4:])
    loop.turn()
    assert loop.handed == [conn] and conn.data_ready and not loop.arriving
    conn.sock.setblocking(True)
    conn.init()  # in the thread: the parser starts with the bytes the loop read
    parsed = next(conn.parser)
    assert (parsed.method, parsed.path, parsed.body.read()) == ("POST", "/estimate", ESTIMATE)


def test_the_loop_answers_100_continue_and_takes_the_expectation_out(loop):
    conn, client = loop.connection()
    client.sendall(post(b"", b"Content-Length: %d" % len(ESTIMATE), b"Expect: 100-continue"))
    loop.turn()
    assert client.recv(64) == b"HTTP/1.1 100 Continue\r\n\r\n" and loop.handed == []
    client.sendall(ESTIMATE)
    loop.turn()
    assert loop.handed == [conn] and b"expect" not in bytes(conn.inbox).lower()
    assert loop.buffered == 0  # the shortened head is still accounted for whole


def test_a_request_late_past_its_deadline_gets_a_408_and_an_idle_one_is_closed_quietly(loop):
    late, late_client = loop.connection()
    idle, idle_client = loop.connection()
    late_client.sendall(b"POST /estimate HTTP/1.1\r\nHost: x\r\n")
    loop.turn()
    late.deadline = idle.deadline = time.monotonic() - 1
    loop.murder_pending()
    assert late_client.recv(200).startswith(b"HTTP/1.1 408 Request Timeout") and idle_client.recv(200) == b""
    assert loop.nr_conns == 0 and not loop.arriving
    assert loop.log.warnings == ["closed 1 connection(s) whose request did not arrive whole within 10 s"]


def test_on_the_way_out_connections_that_sent_nothing_close_and_others_may_finish(loop):
    quiet, _ = loop.connection()
    busy, busy_client = loop.connection()
    busy_client.sendall(b"GET /healthz HTTP/1.1\r\n")
    loop.turn()
    loop.alive = False
    loop.murder_pending()
    assert loop.arriving == {busy} and loop.nr_conns == 1
    busy_client.sendall(b"Host: x\r\n\r\n")
    loop.turn()
    assert loop.handed == [busy]


def test_a_client_that_goes_away_is_forgotten(loop):
    conn, client = loop.connection()
    client.sendall(b"GET / HTTP/1.1\r\n")
    loop.turn()
    client.close()
    loop.turn()
    assert not loop.arriving and loop.nr_conns == 0 and loop.handed == []


def test_a_head_past_gunicorns_limits_goes_to_gunicorn_to_refuse(loop):
    conn, client = loop.connection()
    client.setblocking(False)
    sent = 0
    with contextlib.suppress(BlockingIOError):
        while sent <= head_limit(loop.cfg):
            sent += client.send(b"X" * 65536)
            loop.turn(0.1)
    while not loop.handed and loop.arriving:
        loop.turn(0.1)
    assert loop.handed == [conn]


def test_bytes_a_kept_alive_request_left_behind_are_read_by_the_loop_first(loop):
    conn, client = loop.connection()
    client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHo")
    loop.turn()
    conn.sock.setblocking(True)
    conn.init()
    assert next(conn.parser).path == "/healthz"
    conn.ready = False
    loop.enqueue_req(conn)  # what gthread does with a pipelined rest: back to the loop, not a thread
    assert loop.handed == [conn] and conn in loop.arriving
    client.sendall(b"st: x\r\n\r\n")
    loop.turn()
    assert loop.handed == [conn, conn]
    conn.give_parser_the_inbox()
    assert next(conn.parser).path == "/readyz"


def test_a_new_connection_is_read_by_the_loop_from_its_accept(loop):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        loop.accept(listener)
        (conn,) = loop.arriving
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        loop.turn()
        assert loop.handed == [conn] and loop.nr_conns == 1
        conn.sock.close()
        client.close()


def test_a_chunked_body_is_read_whole_and_a_malformed_one_goes_to_gunicorn(loop):
    conn, client = loop.connection()
    client.sendall(post(b"", b"Transfer-Encoding: chunked") + b"5\r\nhello\r\n")
    loop.turn()
    assert loop.handed == []
    client.sendall(b"0\r\n\r\n")
    loop.turn()
    assert loop.handed == [conn]
    bad, bad_client = loop.connection()
    bad_client.sendall(post(b"", b"Transfer-Encoding: chunked") + b"zz\r\n")
    loop.turn()
    assert loop.handed == [conn, bad]


@pytest.mark.parametrize(("settings", "buffering"), [({}, True), ({"protocol": "uwsgi"}, False)])
def test_only_plain_http_is_buffered(settings, buffering):
    cfg = Config()
    for name, value in settings.items():
        cfg.set(name, value)
    worker = BufferingThreadWorker(1, 0, [], None, 30, cfg, Log())
    try:
        assert worker.buffering is buffering and worker.arriving == set()
    finally:
        worker.tmp.close()


def test_the_bytes_held_for_arriving_requests_are_bounded_and_accounted(loop, monkeypatch):
    monkeypatch.setattr(gunicorn_worker, "BUFFER_BYTES", 1200)
    first, first_client = loop.connection()
    first_client.sendall(post(b"x" * 400, b"Content-Length: 900"))
    loop.turn()
    assert loop.buffered == len(first.inbox) > 400 and loop.arriving == {first}
    second, second_client = loop.connection()
    second_client.sendall(post(b"y" * 700, b"Content-Length: 900"))
    loop.turn()
    said = second_client.recv(500)
    assert said.startswith(b"HTTP/1.1 503 Service Unavailable") and b"Retry-After: 1" in said
    assert loop.arriving == {first} and loop.nr_conns == 1 and loop.buffered == len(first.inbox)
    first_client.sendall(b"x" * 500)
    loop.turn()
    assert loop.handed == [first] and loop.buffered == 0


def test_the_loop_buffers_no_more_body_than_the_app_accepts():
    assert BODY_BYTES == MAX_BODY_BYTES
