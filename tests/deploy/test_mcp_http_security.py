"""The MCP server over HTTP answers only the names it serves and holds a bounded amount, whatever
a caller opens: real servers on loopback, asked with raw requests and sockets. Hosts and origins
are checked against allow-lists (loopback by default, more by flag or environment), GET /mcp is
refused, and idle or surplus connections cannot keep out a new caller or the readiness probe."""

import select
import socket
import time
from contextlib import ExitStack

import pytest
import requests

from service.mcp_server import HttpSettings, main
from tests.deploy.test_mcp import mcp_http, rpc, wait_for

SLOW_BODY = b'{"jsonrpc": "2.0", "id": 1, '  # short of its Content-Length: arriving until the body timeout


@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    """Loopback plus a Service's name on its port, a name on any port, and one origin: the
    hosts from the environment, the origins from a flag."""
    with mcp_http(tmp_path_factory.mktemp("mcp"), "--allowed-origins", "https://app.example/", SIZING_URL="",
                  MCP_ALLOWED_HOSTS="sizing:8001, mcp.example") as base:
        yield base


def port_of(base):
    return int(base.rsplit(":", 1)[1])


def test_a_web_pages_origin_is_refused_and_a_non_browser_caller_is_not(listed):
    refused = rpc(listed, "tools/list", Origin="http://attacker.example")
    assert refused.status_code == 403 and refused.json() == {"error": "origin not allowed"}
    assert rpc(listed, "tools/list", Origin="null").status_code == 403
    assert rpc(listed, "tools/list").status_code == 200  # no Origin: not a browser
    for origin in (f"http://127.0.0.1:{port_of(listed)}", f"http://localhost:{port_of(listed)}", "https://APP.example"):
        assert rpc(listed, "tools/list", Origin=origin).status_code == 200, origin
    assert rpc(listed, "tools/list", Origin="http://localhost:1").status_code == 403  # loopback on another port


def test_a_host_not_on_the_list_is_misdirected_and_the_listed_ones_are_answered(listed):
    port = port_of(listed)
    for host in ("attacker.example", f"attacker.example:{port}", "sizing:9999", f"127.0.0.1:{port + 1}", "sizing"):
        refused = rpc(listed, "tools/list", Host=host)
        assert refused.status_code == 421 and refused.json() == {"error": "host not allowed"}, host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "sizing:8001", "SIZING:8001",
                 "mcp.example", "mcp.example:443"):
        answered = rpc(listed, "tools/list", Host=host)
        assert answered.status_code == 200 and answered.json()["result"]["tools"], host
    # both checks, Host first
    assert rpc(listed, "tools/list", Host="attacker.example", Origin="http://attacker.example").status_code == 421


def test_the_readiness_probe_is_answered_on_the_pods_address(listed):
    reply = requests.get(f"{listed}/healthz", headers={"Host": f"10.1.2.3:{port_of(listed)}"}, timeout=30)
    assert reply.status_code == 200 and reply.json() == {"status": "ok"}
    assert requests.get(f"{listed}/nowhere", headers={"Host": "attacker.example"}, timeout=30).status_code == 421


def test_get_mcp_is_refused_at_once_with_allow_post(listed):
    for method in ("GET", "DELETE", "PUT"):
        reply = requests.request(method, f"{listed}/mcp", headers={"Accept": "text/event-stream"}, timeout=10)
        assert reply.status_code == 405 and reply.headers["Allow"] == "POST", method
        assert reply.json() == {"error": "method not allowed: POST only"}


def connect(base, count, source="127.0.0.1"):
    return [socket.create_connection(("127.0.0.1", port_of(base)), timeout=10, source_address=(source, 0))
            for _ in range(count)]


def closed_by_server(sockets, deadline, enough=None):
    """The sockets the server has closed by `deadline`, or as soon as `enough` of them are."""
    closed, watching = set(), list(sockets)
    enough = len(sockets) if enough is None else enough
    while watching and len(closed) < enough and time.monotonic() < deadline:
        readable, _, _ = select.select(watching, [], [], 0.1)
        for s in readable:
            try:
                if not s.recv(65536):  # the end of the stream (what came before it is read first)
                    closed.add(s)
            except OSError:  # a reset is a close too
                closed.add(s)
        watching = [s for s in watching if s not in closed]
    return closed


def slow_posts(base, count, source="127.0.0.1"):
    """`count` POST /mcp whose bodies never arrive: arriving until the body timeout."""
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port_of(base)}\r\nContent-Type: application/json\r\n"
            "Accept: application/json\r\nContent-Length: 1000\r\n\r\n").encode()
    sockets = connect(base, count, source)
    for s in sockets:
        s.sendall(head + SLOW_BODY)
    return sockets


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    with mcp_http(tmp_path_factory.mktemp("mcp"), "--max-connections", "20", "--max-requests", "2",
                  "--idle-timeout", "60", "--body-timeout", "4", "--max-body", "2000", SIZING_URL="") as base:
        yield base


def test_idle_connections_past_the_cap_keep_out_no_one(capped):
    with ExitStack() as stack:
        idle = connect(capped, 30)
        for s in idle:
            stack.callback(s.close)
        # a new caller is answered: the longest-idle connections made room for it
        assert rpc(capped, "tools/list").status_code == 200
        assert requests.get(f"{capped}/healthz", timeout=30).status_code == 200
        # 30 idle and the call's connection past a cap of 20 (the probe's came after the call's had
        # gone): at least 11 idle ones were closed, long before their idle timeout of 60 s
        assert len(closed_by_server(idle, time.monotonic() + 20, enough=11)) >= 11


def test_slow_bodies_take_no_slot_and_one_address_cannot_lock_callers_out(capped):
    """16 bodies that never arrive (the cap of requests in flight is 2) from one address: another
    caller is answered; a 17th from that address is refused at once; each slow one is a 408 and
    closed after the body timeout."""
    with ExitStack() as stack:
        slow = slow_posts(capped, 16, source="127.0.0.2")
        for s in slow:
            stack.callback(s.close)
        time.sleep(0.5)  # all of them are arriving
        started = time.monotonic()
        for _ in range(3):
            assert rpc(capped, "tools/list").status_code == 200
        assert time.monotonic() - started < 3.0  # not held to the body timeout
        (extra,) = slow_posts(capped, 1, source="127.0.0.2")
        stack.callback(extra.close)
        extra.settimeout(10)
        said = b""
        while chunk := extra.recv(65536):  # the answer, then the close
            said += chunk
        assert said.startswith(b"HTTP/1.1 503 ") and b"arriving at once" in said and b"retry-after: 1" in said.lower()
        assert requests.get(f"{capped}/healthz", timeout=30).status_code == 200
        # a body that does not arrive within 4 s is a 408, and its connection is closed
        assert closed_by_server(slow, time.monotonic() + 30) == set(slow)
        assert rpc(capped, "tools/list").status_code == 200


def test_a_body_past_the_limit_is_refused(capped):
    reply = requests.post(f"{capped}/mcp", data=b'{"pad": "' + b"x" * 3000 + b'"}', timeout=30,
                          headers={"Content-Type": "application/json", "Accept": "application/json"})
    assert reply.status_code == 413 and reply.json() == {"error": "body too large"}


def test_when_every_connection_is_busy_a_new_one_hears_503_and_idle_ones_time_out(tmp_path):
    with mcp_http(tmp_path, "--max-connections", "3", "--max-requests", "3", "--idle-timeout", "1",
                  "--body-timeout", "60", SIZING_URL="") as base, ExitStack() as stack:
        idle = connect(base, 1)[0]
        stack.callback(idle.close)
        started = time.monotonic()
        assert closed_by_server([idle], started + 20) == {idle}  # it sent nothing: closed after about 1 s
        assert time.monotonic() - started >= 0.5
        slow = slow_posts(base, 3)
        for s in slow:
            stack.callback(s.close)
        time.sleep(1.5)  # past the idle timeout: a connection serving a request is not idle
        assert not closed_by_server(slow, time.monotonic() + 0.5)
        late = connect(base, 1)[0]
        stack.callback(late.close)
        late.settimeout(10)
        said = b""
        try:
            while chunk := late.recv(65536):
                said += chunk
        except ConnectionResetError:
            pass
        assert said.startswith(b"HTTP/1.1 503 ") and b"application/problem+json" in said
        assert b"too many connections" in said
        for s in slow:
            s.close()
        reply = wait_for(f"{base}/healthz")
        assert reply is not None and reply.status_code == 200


def test_the_settings_come_from_flags_over_the_environment(monkeypatch):
    served = {}

    def serve(app, **kw):
        served.update(app=app, **kw)

    monkeypatch.setenv("SIZING_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("MCP_ALLOWED_HOSTS", "sizing:8001,sizing.ns.svc:8001")
    monkeypatch.setenv("MCP_ALLOWED_ORIGINS", "https://env.example")
    monkeypatch.setenv("MCP_MAX_CONNECTIONS", "50")
    main(["--http", "--port", "8123", "--allowed-origins", "https://flag.example", "--idle-timeout", "2.5"],
         serve=serve)
    assert served["http"].limits.max_connections == 50 and served["http"].limits.idle_timeout_s == 2.5
    assert served["timeout_keep_alive"] == 2.5 and served["ws"] == "none"
    settings = HttpSettings(port=8123, hosts=(("sizing", 8001), ("sizing.ns.svc", 8001)),
                            origins=("https://flag.example",), max_connections=50, idle_timeout_s=2.5)
    guard = next(m for m in served["app"].user_middleware if m.cls.__name__ == "Guard")
    assert guard.kwargs["settings"] == settings


@pytest.mark.parametrize("argv", [["--allowed-hosts", "sizing:port"], ["--allowed-hosts", "a b"],
                                  ["--allowed-origins", "localhost:8001"], ["--max-connections", "0"],
                                  ["--idle-timeout", "soon"], ["--idle-timeout", "nan"]])
def test_a_setting_that_cannot_be_right_stops_the_start(argv, monkeypatch, capsys):
    monkeypatch.setenv("SIZING_URL", "http://127.0.0.1:1")
    with pytest.raises(SystemExit):
        main(["--http", *argv], serve=lambda app, **kw: pytest.fail("served"))
    assert argv[0] in capsys.readouterr().err
