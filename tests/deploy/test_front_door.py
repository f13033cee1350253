"""The front door (service/front) against an attacker with raw sockets: each finding of the
security review of 0.4.4 as a test against the real server as `make run` starts it
(deploy/entrypoint.sh, gunicorn with deploy/gunicorn.conf.py, 2 workers x 4 threads), with short
timeouts so that the suite is quick.

Every test runs under a Watch: a thread that asks /healthz every 0.1 s from 127.0.0.1 on a new
connection and records the master's workers, while the attacks come from other loopback
addresses (127.0.0.2 and up: a per-address limit is what protects the probe, as the kubelet's
address differs from a client's). Each test ends by requiring every probe answered 200 within
PROBE_S and the same workers alive as at its start: no request stopped, killed or froze one.
"""

import contextlib
import json
import re
import resource
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.front.limits import FrontLimits

from . import server as srv
from .server import read_all

DEFAULTS = FrontLimits()
TIMEOUT_S = 2  # the header, body and write timeouts of the server under attack
SETTINGS = {"SIZING_HEADER_TIMEOUT_S": str(TIMEOUT_S), "SIZING_BODY_TIMEOUT_S": str(TIMEOUT_S),
            "SIZING_WRITE_TIMEOUT_S": str(TIMEOUT_S)}
PROBE_S = 1.0  # the bound: /healthz answers within a second throughout
WAIT_S = 30.0  # the most any single read below waits before the test fails: far past what each needs
ESTIMATE = b'{"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}'
STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) [^\r\n]*\r\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with srv.running(tmp_path_factory.mktemp("front"), workers=2, threads=4, **SETTINGS) as running:
        yield running


def port_of(server) -> int:
    return int(server.base.rsplit(":", 1)[1])


def connect(server, source: str = "127.0.0.2") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port_of(server)), timeout=WAIT_S, source_address=(source, 0))


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict:
        assert self.headers["content-type"] == "application/problem+json", self.headers
        problem = json.loads(self.body)
        assert problem["status"] == self.status and problem["detail"]
        return problem


def answers(said: bytes) -> list[Answer]:
    """The HTTP/1.1 answers in `said`, each whole (a status line, headers, a Content-Length body);
    AssertionError for anything else."""
    out, at = [], 0
    while at < len(said):
        status = STATUS.match(said, at)
        assert status, f"not an answer at byte {at}: {said[at:at + 80]!r}"
        end = said.index(b"\r\n\r\n", at) + 4
        headers = {}
        for line in said[status.end():end - 4].split(b"\r\n"):
            name, _, value = line.partition(b":")
            headers[name.decode().lower()] = value.decode().strip()
        length = int(headers["content-length"])
        body = said[end:end + length]
        assert len(body) == length, f"a body cut short: {len(body)} of {length} bytes"
        out.append(Answer(int(status[1]), headers, body))
        at = end + length
    return out


def ask(server, raw: bytes, source: str = "127.0.0.2") -> list[Answer]:
    """Sends `raw` on a new connection, half-closes it, and reads the answers until the close."""
    with connect(server, source) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        return answers(read_all(sock))


def post(body: bytes, *extra: bytes, path: bytes = b"/v1/estimate", close: bool = True) -> bytes:
    head = [b"POST " + path + b" HTTP/1.1", b"Host: x", b"Content-Type: application/json", *extra]
    if close:
        head.append(b"Connection: close")
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


@dataclass
class Watch:
    """/healthz every 0.1 s from 127.0.0.1 on a new connection, and the master's workers."""

    server: srv.Server
    probes: list[tuple[float, bool]] = field(default_factory=list)  # (seconds, answered 200)
    failures: list[str] = field(default_factory=list)  # what a probe that failed got
    workers: list[set[int]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.wait(0.1):
            started = time.monotonic()
            try:
                with connect(self.server, "127.0.0.1") as sock:
                    sock.settimeout(10)
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
                    said = read_all(sock, 10)
                    ok = said.startswith(b"HTTP/1.1 200 ")
                    if not ok:
                        self.failures.append(repr(said[:300]))
            except OSError as exc:
                ok = False
                self.failures.append(repr(exc))
            self.probes.append((time.monotonic() - started, ok))
            self.workers.append(self.server.children())

    def verdict(self) -> None:
        """Every probe answered 200 within PROBE_S; the workers of the start alive throughout."""
        seen, deadline = len(self.probes), time.monotonic() + WAIT_S
        while len(self.probes) < seen + 2 and time.monotonic() < deadline:  # probes after the attack too
            time.sleep(0.05)
        assert len(self.probes) >= seen + 2, "the watch stopped probing"
        slow = [(round(s, 3), ok) for s, ok in self.probes if not ok or s > PROBE_S]
        assert not slow, f"/healthz failed or took over {PROBE_S} s: {slow} of {len(self.probes)} probes; " \
                         f"the failures got {self.failures}"
        assert all(w == self.workers[0] for w in self.workers) and len(self.workers[0]) == 2, \
            f"the workers changed: {self.workers[0]} -> {[w for w in self.workers if w != self.workers[0]][:3]}"
        print(f"/healthz: {len(self.probes)} probes, worst {max(s for s, _ in self.probes) * 1e3:.0f} ms; "
              f"workers {sorted(self.workers[0])} throughout")


@pytest.fixture()
def watch(server) -> Iterator[Watch]:
    watching = Watch(server)
    thread = threading.Thread(target=watching.run, daemon=True)
    thread.start()
    time.sleep(0.3)  # a few probes before the attack
    try:
        yield watching
    finally:
        watching.stop.set()
        thread.join(WAIT_S)


def answered_estimate(server, source: str = "127.0.0.1") -> None:
    """A real caller from another address is answered meanwhile: the worker's threads are free."""
    (answer,) = ask(server, post(ESTIMATE, b"Content-Length: %d" % len(ESTIMATE)), source)
    assert answer.status == 200 and b'"fits"' in answer.body


# --- one small request must not stop a worker ------------------------------------------------

MALFORMED = [
    ("a negative chunk size (looped forever in 0.4.4)", post(b"-6\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked")),
    ("a chunk size that is not hex", post(b"zz\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked")),
    ("a chunk without its CRLF", post(b"5\r\nhelloXX0\r\n\r\n", b"Transfer-Encoding: chunked")),
    ("a Content-Length of 5,000 digits (raised out of the loop in 0.4.4)",
     post(b"{}", b"Content-Length: " + b"9" * 5000)),
    ("a signed Content-Length", post(b"{}", b"Content-Length: +2")),
    ("two Content-Lengths that differ", post(b"{}", b"Content-Length: 2", b"Content-Length: 3")),
    ("Content-Length beside chunked", post(chunked(b"{}"), b"Content-Length: 2", b"Transfer-Encoding: chunked")),
    ("gzip before chunked (handed to a thread in 0.4.4)", post(chunked(b"{}"), b"Transfer-Encoding: gzip, chunked")),
    ("identity before chunked", post(chunked(b"{}"), b"Transfer-Encoding: identity, chunked")),
    ("chunked twice", post(chunked(b"{}"), b"Transfer-Encoding: chunked, chunked")),
    ("a NUL in a header value", post(b"{}", b"Content-Length: 2", b"X-Test: a\x00b")),
    ("a header line without a colon", post(b"{}", b"Content-Length: 2", b"NoColonHere")),
    ("a space before a header's colon", post(b"{}", b"Content-Length : 2")),
    ("a folded header line", post(b"{}", b"Content-Length: 2", b"X-Test: a", b" folded")),
    ("a request line of garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 a TLS hello\r\n\r\n"),
    ("a version that is not HTTP/1.x", b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"),
    ("bytes past 127 in the path", b"GET /h\xffz HTTP/1.1\r\nHost: x\r\n\r\n"),
]


@pytest.mark.parametrize(("case", "raw"), MALFORMED, ids=[c for c, _ in MALFORMED])
def test_a_malformed_request_is_a_400_problem_and_the_connection_closes(server, case, raw):
    (answer,) = ask(server, raw)
    assert answer.status in (400, 505), case
    assert answer.problem()["title"] in ("Bad Request", "HTTP Version Not Supported")
    assert answer.headers["connection"] == "close"


def test_a_hundred_malformed_requests_a_second_leave_the_workers_and_probes_alone(server, watch):
    deadline = time.monotonic() + 3
    sent = 0
    while time.monotonic() < deadline:
        for _, raw in MALFORMED:
            with connect(server) as sock:
                sock.sendall(raw)
            sent += 1
        time.sleep(0.05)
    answered_estimate(server)
    watch.verdict()
    print(f"{sent} malformed requests sent")


def test_a_content_length_padded_with_spaces_is_parsed_once(server, watch):
    """30 KB of spaces around a Content-Length froze a worker's loop for 7.5 s in 0.4.4 (its regex
    backtracked): llhttp skips them in one pass and the request is answered (its body is not
    JSON: 400). A head still not whole past 40 KiB on the wire is a 431, however it is padded."""
    for _ in range(5):
        (answer,) = ask(server, post(b"hello", b"Content-Length:" + b" " * 30_000 + b"5"))
        assert answer.status == 400 and "JSON" in answer.problem()["detail"]
    head_limit = DEFAULTS.max_request_line_bytes + DEFAULTS.max_head_bytes
    with connect(server) as sock:
        sock.sendall(post(b"")[:-4] + b"\r\nContent-Length:" + b" " * head_limit)  # never ends
        (answer,) = answers(read_all(sock))
    assert answer.status == 431 and answer.problem()
    watch.verdict()


def test_a_head_or_a_request_line_past_its_limit_is_refused(server):
    (answer,) = ask(server, b"GET /v1/troubleshoot?q=" + b"x" * DEFAULTS.max_request_line_bytes + b" HTTP/1.1\r\n\r\n")
    assert answer.status == 414 and answer.problem()
    fields = b"".join(b"X-%d: 1\r\n" % i for i in range(DEFAULTS.max_header_fields + 1))
    (answer,) = ask(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n")
    assert answer.status == 431 and answer.problem()
    # a header value that never ends is cut at the limit, not buffered without end
    with connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Long: ")
        with contextlib.suppress(OSError):  # the server may close while this is still sending
            for _ in range(64):
                sock.sendall(b"y" * 1024)
        said = read_all(sock)
    assert answers(said)[0].status == 431


# --- requests reach a thread only whole; nothing waits without a timeout --------------------------

SLOW = [
    ("a head that never ends", b"POST /v1/estimate HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n", 408),
    ("a body that stops short", post(ESTIMATE[:10], b"Content-Length: %d" % len(ESTIMATE)), 408),
    ("a chunk line over 1 KiB that never ends", post(b"5;" + b"e" * 2000, b"Transfer-Encoding: chunked"), 408),
    ("trailers over 8 KiB that never end",
     post(b"2\r\n{}\r\n0\r\n" + b"".join(b"X-T%d: %s\r\n" % (i, b"t" * 100) for i in range(90)),
          b"Transfer-Encoding: chunked"), 408),
    ("gzip before chunked, the rest never sent", post(b"5\r\nhel", b"Transfer-Encoding: gzip, chunked"), 400),
]


def test_requests_that_never_arrive_whole_hold_no_thread_and_end_in_time(server, watch):
    """Three of each kind (15 against 8 threads): the probe and a real caller are answered
    throughout; each slow one gets its 408 (the 400 at once) and is closed."""
    opened = []
    try:
        for _, raw, _ in SLOW * 3:
            sock = connect(server)
            sock.sendall(raw)
            opened.append(sock)
        started = time.monotonic()
        while time.monotonic() - started < TIMEOUT_S * 0.75:
            answered_estimate(server)
            time.sleep(0.1)
        for sock, (case, _, status) in zip(opened, SLOW * 3):
            (answer,) = answers(read_all(sock))
            assert answer.status == status and answer.problem(), case
        assert time.monotonic() - started < TIMEOUT_S + 10
    finally:
        for sock in opened:
            sock.close()
    watch.verdict()


def test_a_request_sent_in_slow_pieces_within_the_limit_is_answered(server):
    request = post(ESTIMATE, b"Content-Length: %d" % len(ESTIMATE))
    with connect(server) as sock:
        for piece in (request[:7], request[7:40], request[40:-5], request[-5:]):
            sock.sendall(piece)
            time.sleep(0.3)
        (answer,) = answers(read_all(sock))
    assert answer.status == 200 and b'"fits"' in answer.body


def test_a_chunked_body_with_trailers_and_pipelined_requests_are_answered_and_trailers_are_no_headers(server):
    body = chunked(ESTIMATE[:20], ESTIMATE[20:])[:-2] + b"X-Request-ID: from-a-trailer\r\n\r\n"
    raw = (post(body, b"Transfer-Encoding: chunked", close=False)
           + b"GET /healthz HTTP/1.1\r\nHost: x\r\nX_Request_ID: underscored\r\n\r\n"
           + b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    first, second, third = ask(server, raw)
    assert (first.status, second.status, third.status) == (200, 200, 200)
    assert b'"fits"' in first.body and b'"ready"' in third.body
    # a trailer never becomes a header, and a name with an underscore never poses as one with a dash
    assert first.headers["x-request-id"] != "from-a-trailer" and second.headers["x-request-id"] != "underscored"


def test_http_1_0_is_never_sent_100_continue_and_http_1_1_is(server):
    with connect(server) as sock:
        sock.sendall(b"POST /v1/estimate HTTP/1.0\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(ESTIMATE))
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(64)
        sock.sendall(ESTIMATE)
        said = read_all(sock)
    assert b"100 Continue" not in said and answers(said)[0].status == 200
    with connect(server) as sock:
        sock.sendall(post(b"", b"Content-Length: %d" % len(ESTIMATE), b"Expect: 100-continue"))
        assert sock.recv(64) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(ESTIMATE)
        assert answers(read_all(sock))[0].status == 200


def test_a_body_over_the_limit_is_413_before_it_is_read_and_when_it_arrives_chunked(server):
    (declared,) = ask(server, post(b"", b"Content-Length: %d" % (3 << 20), b"Expect: 100-continue"))
    assert declared.status == 413 and declared.problem()
    big = b"x" * (DEFAULTS.max_body_bytes // 4)
    with connect(server) as sock:
        sock.sendall(post(b"", b"Transfer-Encoding: chunked"))
        with contextlib.suppress(OSError):  # the server may answer and close while this still sends
            for _ in range(6):
                sock.sendall(b"%x\r\n%s\r\n" % (len(big), big))
        (answer,) = answers(read_all(sock))
    assert answer.status == 413 and answer.problem()


def test_an_upgrade_is_answered_as_http_1_1_and_the_connection_then_closes(server):
    (answer,) = ask(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                            b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n")
    assert answer.status == 200


def test_a_client_that_half_closes_after_its_request_gets_its_answer(server):
    (answer,) = ask(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # ask() half-closes; no Connection: close
    assert answer.status == 200


# --- closing never blocks; answers nobody reads are dropped -------------------------------------

def test_clients_that_never_close_after_connection_close_or_a_400_freeze_nothing(server, watch):
    held = []
    try:
        for raw in [post(ESTIMATE, b"Content-Length: %d" % len(ESTIMATE))] * 5 + [b"NOT HTTP\r\n\r\n"] * 5:
            sock = connect(server)
            sock.sendall(raw)  # never read, never closed by this side
            held.append(sock)
        time.sleep(TIMEOUT_S + 1)
        answered_estimate(server)
        for sock in held:  # the server answered and closed its side of each
            said = answers(read_all(sock))
            assert said and said[0].status in (200, 400)
    finally:
        for sock in held:
            sock.close()
    watch.verdict()


def test_an_answer_the_client_never_reads_is_dropped_after_the_write_timeout(server, watch):
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    sock.bind(("127.0.0.2", 0))
    sock.settimeout(WAIT_S)
    try:
        sock.connect(("127.0.0.1", port_of(server)))
        sock.sendall(b"GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n" * 50)  # pipelined, never read
        time.sleep(TIMEOUT_S + 1.5)
        answered_estimate(server)
        started = time.monotonic()
        said = read_all(sock)  # what the buffers on the way held, then the drop
        assert time.monotonic() - started < WAIT_S
        one = int(re.search(rb"content-length: (\d+)", said)[1])
        assert len(said) < 25 * one  # most of the 50 answers were never written
    finally:
        sock.close()
    watch.verdict()


# --- memory and connections are bounded per address and in all ----------------------------------

def test_bodies_held_in_flight_are_bounded_per_address_and_leave_probes_and_callers_alone(server, watch):
    """33 connections each declaring a 1 MiB body and sending a quarter of it (33 MiB, past the
    32 MiB a worker held in 0.4.4, when every newcomer, /healthz included, got 503): an address
    holds 8 MiB a worker, so most are refused at once; the probe and a caller from another
    address are answered; the held ones end with a 408."""
    head = post(b"", b"Content-Length: %d" % (1 << 20))
    quarter = b" " * (1 << 18)
    opened, statuses = [], []
    try:
        for _ in range(33):
            sock = connect(server)
            sock.sendall(head)
            with contextlib.suppress(OSError):
                sock.sendall(quarter)
            opened.append(sock)
        answered_estimate(server)
        for sock in opened:
            said = answers(read_all(sock))
            statuses.append(said[0].status)
    finally:
        for sock in opened:
            sock.close()
    held = 2 * DEFAULTS.body_buffer_per_peer_bytes // (1 << 20)
    assert statuses.count(503) >= 33 - held and set(statuses) <= {503, 408}, statuses
    watch.verdict()


def more_descriptors(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted <= hard or (hard == resource.RLIM_INFINITY and soft < wanted):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < wanted:
        pytest.skip(f"this test opens {wanted} sockets; the open-files limit here is {hard}")


def test_a_thousand_idle_connections_a_worker_keep_out_no_one(server, watch):
    """2,000 connections that send nothing, from 40 addresses: accept never stops (0.4.4 stopped
    it for 10 s); past 64 from one address, or 1,000 in a worker, the idlest makes room."""
    count = 2 * DEFAULTS.max_connections
    more_descriptors(count + 500)
    opened = []
    try:
        for i in range(count):
            opened.append(connect(server, f"127.0.0.{2 + i % 40}"))
        answered_estimate(server)
        time.sleep(0.5)
        answered_estimate(server)
    finally:
        for sock in opened:
            sock.close()
    watch.verdict()


def read_one_answer(sock: socket.socket) -> Answer:
    """The next whole answer on a kept-alive connection (its head and body may come apart)."""
    sock.settimeout(WAIT_S)
    said = b""
    while True:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {said!r}"
        said += chunk
        head, sep, body = said.partition(b"\r\n\r\n")
        length = re.search(rb"content-length: (\d+)", head, re.I)
        if sep and length and len(body) >= int(length[1]):
            return answers(said)[0]


def test_one_address_past_its_connections_closes_its_own_idlest_first(server):
    more: list[socket.socket] = []
    with connect(server, "127.0.0.9") as keep:
        try:
            keep.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_one_answer(keep).status == 200  # answered, kept alive: idle from now on
            more += [connect(server, "127.0.0.9") for _ in range(2 * DEFAULTS.max_connections_per_peer)]
            assert read_all(keep, 10) == b""  # closed to make room: it was the idlest
        finally:
            for sock in more:
                sock.close()


# --- anything at all: a well-formed answer or a closed connection -----------------------------------

FRAGMENTS = st.sampled_from([
    b"GET ", b"POST ", b"HEAD ", b"PUT ", b"/v1/estimate", b"/healthz", b"/metrics", b"/v1/cards?limit=1", b" ",
    b"HTTP/1.1", b"HTTP/1.0", b"\r\n", b"\n", b"\r\n\r\n", b"Host: x\r\n", b"Content-Length: ", b"Transfer-Encoding: ",
    b"chunked", b"gzip", b"Expect: 100-continue\r\n", b"Connection: close\r\n", b"Connection: Upgrade\r\n",
    b"Upgrade: h2c\r\n", b"0", b"5", b"-1", b"ffffffffffffffffff", b";ext=1", b"{}", ESTIMATE, b"\x00", b":", b"\t",
    b"Content-Type: application/json\r\n", b"X_Underscore: 1\r\n", b"\xff\xfe",
])
GARBAGE = st.one_of(st.binary(max_size=600), st.lists(st.one_of(FRAGMENTS, st.binary(max_size=8)),
                                                     max_size=40).map(b"".join))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(raw=GARBAGE)
def test_any_bytes_get_well_formed_answers_or_a_closed_connection(server, raw):
    """Whatever arrives, then the client's half-close: the server answers each request it could
    read with a whole HTTP/1.1 answer (a problem for a refusal) and closes, within the timeouts;
    never a 500, never bytes that are not an answer."""
    started = time.monotonic()
    said = ask(server, raw, "127.0.0.3")
    assert time.monotonic() - started < WAIT_S
    for answer in said:
        assert answer.status < 500 or answer.status in (503, 505), answer
        if answer.status >= 400:
            answer.problem()
