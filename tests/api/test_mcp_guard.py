"""The MCP server's HTTP hardening, in process: the Guard driven as an ASGI app around a small app
of our own (hand-made scope, receive and send), the capped uvicorn protocol and http_app served
by uvicorn in a thread of this process on a loopback socket, a Remote backend against the service
served by werkzeug in a thread, and main() with its flags, its environment and stdio.
(tests/deploy/test_mcp_http_security.py checks the same over HTTP, with the server a process.)"""

import argparse
import io
import json
import os
import runpy
import socket
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
import pytest
import requests
import yaml
from mcp import Client
from werkzeug.serving import make_server

from service.api.ops import spec_text
from service.app import create_app
from service.front.limits import FrontLimits
from service.front.protocol import guarded_protocol
from service.mcp_server import (
    Guard,
    HttpSettings,
    InProcess,
    Remote,
    _service_ready,
    build_server,
    host_list,
    http_app,
    main,
    origin_list,
)
from service.tools import ToolRequest, tools_from_spec
from tests.api.support import answer_of, uvicorn_in_thread
from tests.contract.test_spec_lint import SPEC
from tests.deploy.server import free_port

LOOPBACK_HOST = {"Host": "127.0.0.1:8001"}
SETTINGS = HttpSettings(port=8001, hosts=(("sizing", 8001), ("mcp.example", None)), origins=("https://app.example",),
                        max_requests=1, body_timeout_s=0.3, max_body_bytes=100)
DEADLINE_S = 10  # the most any wait below takes before it fails: far past what each needs


# --- the Guard, as an ASGI app ----------------------------------------------------------------

@dataclass
class Inner:
    """The app behind the Guard: reads each request's body to its end (or to the caller's leaving),
    records it, and answers 200 with the body. /mcp waits for `release` first when one is given."""

    release: anyio.Event | None = None
    entered: anyio.Event = field(default_factory=anyio.Event)
    seen: list[tuple] = field(default_factory=list)  # (type, method, path, body, how it ended)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            self.seen.append((scope["type"], None, None, None, None))
            return
        self.entered.set()
        if self.release is not None and scope["path"] == "/mcp":
            await self.release.wait()
        body, ended = b"", "whole"
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                ended = "left"
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.seen.append((scope["type"], scope["method"], scope["path"], body, ended))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": body})


@dataclass
class Said:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


async def ask(app, method="POST", path="/mcp", headers=None, chunks=(b"{}",), complete=True, then=None,
              client=("127.0.0.1", 40000)):
    """One request through `app`, as a server hands it over: the body in `chunks`, the last one
    ending it when `complete`. After them receive() returns `then`, or else, the body complete, the
    caller leaving, and the body incomplete, nothing ever (a caller who stalls)."""
    headers = LOOPBACK_HOST if headers is None else headers
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
             "client": client, "server": ("127.0.0.1", 8001)}
    messages = [{"type": "http.request", "body": c, "more_body": not complete or i < len(chunks) - 1}
                for i, c in enumerate(chunks)]
    said = Said(0, {}, b"")

    async def receive():
        if messages:
            return messages.pop(0)
        if then is not None:
            return then
        if not complete:
            await anyio.sleep_forever()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            said.status = message["status"]
            said.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        else:
            said.body += message.get("body", b"")

    await app(scope, receive, send)
    return said


def run(test):
    """Runs `test()` (a coroutine function) to its end, failing it if it takes past DEADLINE_S."""
    async def bounded():
        with anyio.fail_after(DEADLINE_S):
            return await test()
    return anyio.run(bounded)


def test_hosts_on_the_lists_are_handed_on_and_any_other_is_misdirected():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        for host in ("127.0.0.1:8001", "LOCALHOST:8001", "[::1]:8001", "sizing:8001", "mcp.example",
                     "mcp.example:443", " Sizing:8001 "):
            said = await ask(guard, headers={"Host": host}, chunks=(b'{"n": 1}',))
            assert (said.status, said.body) == (200, b'{"n": 1}'), host
        assert len(inner.seen) == 7
        for host in ("attacker.example", "127.0.0.1:8002", "127.0.0.1", "sizing", "sizing:9999", "[::2]:8001",
                     "user@127.0.0.1:8001", "127.0.0.1:8001/x", ""):
            said = await ask(guard, headers={"Host": host})
            assert said.status == 421 and said.json() == {"error": "host not allowed"}, host
        refused = await ask(guard, headers={})  # no Host at all (HTTP/1.0)
        assert refused.status == 421
        assert len(inner.seen) == 7  # none of the refused reached the app
        anyone = Guard(inner, HttpSettings(hosts=(("*", None),)))
        assert (await ask(anyone, headers={"Host": "whatever.example:1"})).status == 200
    run(test)


def test_the_readiness_probe_is_exempt_from_the_host_check_and_nothing_else_is():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        probe = await ask(guard, "GET", "/healthz", headers={"Host": "10.1.2.3:8001"}, chunks=(b"",))
        assert probe.status == 200 and inner.seen == [("http", "GET", "/healthz", b"", "whole")]
        for path in ("/nowhere", "/mcp", "/healthz/"):
            assert (await ask(guard, "GET", path, headers={"Host": "10.1.2.3:8001"})).status == 421, path
        # exempt from the Host check only: a web page's Origin is refused there too
        assert (await ask(guard, "GET", "/healthz", headers={"Host": "10.1.2.3", "Origin": "http://evil"})).status == 403
        assert len(inner.seen) == 1
    run(test)


def test_a_browsers_origin_must_be_listed_and_a_request_without_one_passes():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        for origin in (None, "http://127.0.0.1:8001", "http://localhost:8001/", "HTTP://[::1]:8001", "https://APP.example",
                       "https://app.example/"):
            headers = LOOPBACK_HOST if origin is None else {**LOOPBACK_HOST, "Origin": origin}
            assert (await ask(guard, headers=headers)).status == 200, origin
        for origin in ("http://attacker.example", "null", "http://localhost:1", "https://app.example:8443",
                       "http://app.example", ""):
            said = await ask(guard, headers={**LOOPBACK_HOST, "Origin": origin})
            assert said.status == 403 and said.json() == {"error": "origin not allowed"}, origin
        assert len(inner.seen) == 6
        # both wrong: the Host is judged first
        assert (await ask(guard, headers={"Host": "evil", "Origin": "http://evil"})).status == 421
        anyone = Guard(inner, HttpSettings(origins=origin_list("*")))
        assert (await ask(anyone, headers={**LOOPBACK_HOST, "Origin": "http://anywhere.example"})).status == 200
    run(test)


def test_mcp_answers_post_only_with_405_and_allow_post():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        for method in ("GET", "DELETE", "PUT", "HEAD", "OPTIONS"):
            said = await ask(guard, method, "/mcp", headers={**LOOPBACK_HOST, "Accept": "text/event-stream"})
            assert said.status == 405 and said.headers["allow"] == "POST", method
            if method != "HEAD":
                assert said.json() == {"error": "method not allowed: POST only"}
        assert inner.seen == [] and guard.in_flight == 0
        assert (await ask(guard, "GET", "/healthz", chunks=(b"",))).status == 200  # other paths: the app's to judge
    run(test)


def test_mcp_requests_past_the_cap_are_503_until_one_in_flight_returns():
    async def test():
        inner = Inner(release=anyio.Event())
        guard = Guard(inner, SETTINGS)  # max_requests=1
        answers = []
        async with anyio.create_task_group() as tg:
            async def first():
                answers.append(await ask(guard, chunks=(b'"first"',)))
            tg.start_soon(first)
            await inner.entered.wait()
            assert guard.in_flight == 1
            refused = await ask(guard, chunks=(b'"second"',))
            assert refused.status == 503 and refused.headers["retry-after"] == "1"
            assert refused.json() == {"error": "too many requests in flight"}
            # the cap is /mcp's: the probe is answered while it is full
            assert (await ask(guard, "GET", "/healthz", chunks=(b"",))).status == 200
            inner.release.set()
        assert [a.body for a in answers] == [b'"first"'] and answers[0].status == 200
        assert guard.in_flight == 0
        assert (await ask(guard, chunks=(b'"third"',))).status == 200
        assert [s[3] for s in inner.seen if s[2] == "/mcp"] == [b'"first"', b'"third"']
    run(test)


def test_a_request_whose_app_fails_gives_its_slot_back():
    async def failing(scope, receive, send):
        raise RuntimeError("boom")

    async def test():
        guard = Guard(failing, SETTINGS)
        with pytest.raises(RuntimeError, match="boom"):
            await ask(guard)
        assert guard.in_flight == 0
        guard.app = Inner()
        assert (await ask(guard)).status == 200  # not refused as "in flight"
    run(test)


def test_the_body_is_read_whole_then_handed_on_in_one_piece_and_the_caller_is_heard_after_it():
    heard = []

    async def app(scope, receive, send):
        while (message := await receive())["more_body"]:
            heard.append(message["body"])
        heard.append(message["body"])
        heard.append((await receive())["type"])  # past the body: the server's own receive
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def test():
        guard = Guard(app, SETTINGS)
        said = await ask(guard, chunks=(b"a" * 40, b"b" * 40, b"c" * 20))  # exactly max_body_bytes
        assert said.status == 204
        assert heard == [b"a" * 40 + b"b" * 40 + b"c" * 20, "http.disconnect"]
    run(test)


def test_a_body_past_the_limit_is_413_and_never_reaches_the_app():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        for chunks in ((b"x" * 101,), (b"x" * 60, b"y" * 41), (b"x" * 60, b"y" * 41, b"z" * 10)):
            said = await ask(guard, chunks=chunks)
            assert said.status == 413 and said.json() == {"error": "body too large"}
            assert said.headers["connection"] == "close"
        # one whose declared end never comes, but which is already too large: refused at once, not at the timeout
        started = time.monotonic()
        assert (await ask(guard, chunks=(b"x" * 200,), complete=False)).status == 413
        assert time.monotonic() - started < SETTINGS.body_timeout_s
        assert inner.seen == [] and guard.in_flight == 0
    run(test)


def test_a_body_that_stalls_is_408_after_the_body_timeout_and_frees_its_slot():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)  # body_timeout_s=0.3
        started = time.monotonic()
        said = await ask(guard, chunks=(b'{"jsonrpc": "2.0", ',), complete=False)
        waited = time.monotonic() - started
        assert said.status == 408 and said.json() == {"error": "body not received in time"}
        assert said.headers["connection"] == "close"
        assert 0.25 <= waited < 2.5  # the setting's 0.3 s, not some other bound
        assert inner.seen == [] and guard.in_flight == 0
        assert (await ask(guard)).status == 200
    run(test)


def test_a_caller_who_leaves_mid_body_reaches_no_app_and_takes_no_slot():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        started = time.monotonic()
        said = await ask(guard, chunks=(b'{"part',), complete=False, then={"type": "http.disconnect"})
        assert time.monotonic() - started < SETTINGS.body_timeout_s  # not held to the body timeout
        assert said.status == 0 and inner.seen == [] and guard.in_flight == 0  # no one to answer
        assert guard.holds.total == 0 and not guard.holds.arriving
    run(test)


def test_bodies_still_arriving_take_no_slot_and_are_capped_per_address():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)  # max_requests=1; 16 bodies arriving per address
        async with anyio.create_task_group() as tg:
            for _ in range(16):
                tg.start_soon(lambda: ask(guard, chunks=(b"{",), complete=False))
            for _ in range(16):  # each task started and waiting for the rest of its body
                await anyio.sleep(0)
            assert guard.in_flight == 0 and guard.holds.arriving["127.0.0.1"] == 16
            refused = await ask(guard, chunks=(b"{",), complete=False)
            assert refused.status == 503 and refused.headers["retry-after"] == "1"
            assert "arriving at once" in refused.json()["error"]
            other = await ask(guard, chunks=(b"{}",), client=("10.0.0.9", 1))  # another address: answered
            assert other.status == 200
            tg.cancel_scope.cancel()
        assert guard.in_flight == 0
    run(test)


def test_the_lifespan_goes_through_unchecked():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)

        async def nothing():
            return {"type": "lifespan.startup"}

        async def ignore(message):
            pass

        await guard({"type": "lifespan"}, nothing, ignore)
        assert inner.seen == [("lifespan", None, None, None, None)]
    run(test)


def test_the_first_refusal_of_each_kind_is_a_warning_and_the_rest_are_debug_lines(caplog):
    caplog.set_level("DEBUG", logger="service.mcp")

    async def test():
        guard = Guard(Inner(), SETTINGS)
        for _ in range(3):
            assert (await ask(guard, headers={"Host": "evil.example"})).status == 421
        for _ in range(2):
            assert (await ask(guard, headers={**LOOPBACK_HOST, "Origin": "http://evil.example"})).status == 403
        # a Guard of its own warns again (each server warns once)
        assert (await ask(Guard(Inner(), SETTINGS), headers={"Host": "evil.example"})).status == 421
    run(test)
    refusals = [r for r in caplog.records if r.name == "service.mcp" and "refused a request" in r.getMessage()]
    assert [(r.levelname, "host" in r.getMessage()) for r in refusals] == [
        ("WARNING", True), ("DEBUG", True), ("DEBUG", True), ("WARNING", False), ("DEBUG", False), ("WARNING", True)]
    assert "'evil.example'" in refusals[0].getMessage() and "MCP_ALLOWED_HOSTS" in refusals[0].getMessage()
    assert "'http://evil.example'" in refusals[3].getMessage() and "MCP_ALLOWED_ORIGINS" in refusals[3].getMessage()


# --- settings: lists, flags and the environment ---------------------------------------------

def test_a_websocket_is_closed_unchecked_by_nothing():
    async def test():
        inner = Inner()
        sent = []

        async def receive():
            return {"type": "websocket.connect"}

        async def send(message):
            sent.append(message)

        await Guard(inner, SETTINGS)({"type": "websocket", "path": "/mcp", "headers": []}, receive, send)
        assert sent == [{"type": "websocket.close", "code": 1008}] and inner.seen == []
    run(test)


def test_a_declared_length_past_the_limit_is_refused_before_a_byte_is_read():
    async def test():
        inner = Inner()
        guard = Guard(inner, SETTINGS)
        said = await ask(guard, headers={**LOOPBACK_HOST, "Content-Length": "101"}, chunks=(b"",), complete=False)
        assert said.status == 413 and said.headers["connection"] == "close" and guard.in_flight == 0
        assert inner.seen == []
    run(test)


def test_host_and_origin_lists_are_parsed_and_a_typo_stops_the_start():
    assert host_list(" sizing:8001, MCP.example ,[::1]:9 ,") == (("sizing", 8001), ("mcp.example", None), ("[::1]", 9))
    assert host_list("") == ()
    assert host_list("sizing.ns.svc.:8001") == (("sizing.ns.svc", 8001),)  # the fully qualified spelling
    for bad in ("sizing:port", "a b", "user@host", "http://host", "[nope]:1", "host:123456", "host:99999", "host:0"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a host or host:port"):
            host_list(f"ok, {bad}")
    assert origin_list("https://App.example/, *, http://localhost:3000") == (
        "https://app.example", "*", "http://localhost:3000")
    for bad in ("localhost:8001", "app.example"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not an origin"):
            origin_list(bad)


@pytest.fixture()
def no_service_env(monkeypatch):
    """main() reads the environment: none of the service's or the MCP server's variables leak in."""
    for name in list(os.environ):
        if name.startswith(("MCP_", "SIZING_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SIZING_URL", "http://127.0.0.1:1")  # a Remote: nothing is built in process
    return monkeypatch


def served_by(argv):
    served = {}
    main(argv, serve=lambda app, **kw: served.update(app=app, **kw))
    guard = next(m for m in served["app"].user_middleware if m.cls is Guard)
    return served, guard.kwargs["settings"]


def test_every_http_setting_comes_from_its_variable_and_a_flag_wins(no_service_env):
    env = {"MCP_MAX_REQUESTS": "3", "MCP_BODY_TIMEOUT_S": "2.5", "MCP_MAX_BODY_BYTES": "4096",
           "MCP_IDLE_TIMEOUT_S": "7", "MCP_MAX_CONNECTIONS": "40", "MCP_ALLOWED_HOSTS": "sizing:8001",
           "MCP_ALLOWED_ORIGINS": "https://env.example"}
    for name, value in env.items():
        no_service_env.setenv(name, value)
    from_env = HttpSettings(port=8124, hosts=(("sizing", 8001),), origins=("https://env.example",), max_requests=3,
                            body_timeout_s=2.5, max_body_bytes=4096, idle_timeout_s=7.0, max_connections=40)
    served, settings = served_by(["--http", "--port", "8124"])
    assert settings == from_env
    assert served["http"].limits.max_connections == 40 and served["http"].limits.idle_timeout_s == 7.0
    assert served["port"] == 8124 and served["timeout_keep_alive"] == 7.0
    for flag, value, changed in (("--max-requests", "5", {"max_requests": 5}),
                                 ("--body-timeout", "0.5", {"body_timeout_s": 0.5}),
                                 ("--max-body", "10", {"max_body_bytes": 10}),
                                 ("--allowed-hosts", "mcp.example", {"hosts": (("mcp.example", None),)})):
        _, settings = served_by(["--http", "--port", "8124", flag, value])
        assert settings == HttpSettings(**{**from_env.__dict__, **changed}), flag
    for name in env:
        no_service_env.delenv(name)
    _, defaults = served_by(["--http"])
    assert defaults == HttpSettings()


@pytest.mark.parametrize(("argv", "env", "named"), [
    (["--max-requests", "0"], {}, "--max-requests"),
    (["--body-timeout", "inf"], {}, "--body-timeout"),
    (["--max-body", "-1"], {}, "--max-body"),
    (["--idle-timeout", "nan"], {}, "--idle-timeout"),
    ([], {"MCP_MAX_CONNECTIONS": "many"}, "--max-connections"),
    ([], {"MCP_BODY_TIMEOUT_S": "0"}, "--body-timeout"),
    ([], {"MCP_ALLOWED_HOSTS": "sizing:port"}, "--allowed-hosts"),
    ([], {"MCP_ALLOWED_ORIGINS": "sizing.example"}, "--allowed-origins"),
])
def test_a_bad_flag_or_variable_stops_the_start_naming_it(argv, env, named, no_service_env, capsys):
    for name, value in env.items():
        no_service_env.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        main(["--http", *argv], serve=lambda app, **kw: pytest.fail("served"))
    assert stopped.value.code == 2 and named in capsys.readouterr().err


def test_a_key_for_stdio_is_ignored_over_http_with_a_warning(no_service_env, caplog):
    no_service_env.setenv("SIZING_API_KEY", "k1-test-key-0000000000000000000000")
    served_by(["--http"])
    assert any(r.levelname == "WARNING" and "SIZING_API_KEY is ignored over HTTP" in r.getMessage()
               for r in caplog.records)


def test_without_http_main_speaks_the_protocol_over_stdio_with_its_key(no_service_env):
    """The domain in process (no SIZING_URL), keys required, SIZING_API_KEY the stdio server's:
    initialize and a tool call over stdin and stdout."""
    no_service_env.delenv("SIZING_URL")
    no_service_env.setenv("SIZING_API_KEYS", "k1-test-key-0000000000000000000000")
    no_service_env.setenv("SIZING_API_KEY", "k1-test-key-0000000000000000000000")
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "getCard", "arguments": {"card_id": "h100-sxm"}}}]
    read_fd, write_fd = os.pipe()
    stdin = io.TextIOWrapper(os.fdopen(read_fd, "rb"), encoding="utf-8")
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")

    def caller():
        """Writes the requests, and ends stdin once both answers are out (or at the deadline)."""
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write("".join(json.dumps(line) + "\n" for line in lines).encode())
            pipe.flush()
            deadline = time.monotonic() + DEADLINE_S
            while stdout.buffer.getvalue().count(b"\n") < 2 and time.monotonic() < deadline:
                time.sleep(0.01)

    thread = threading.Thread(target=caller, daemon=True)
    thread.start()
    no_service_env.setattr(sys, "stdin", stdin)
    no_service_env.setattr(sys, "stdout", stdout)
    try:
        main([])
    finally:
        thread.join(DEADLINE_S)
        stdin.close()
    answers = {a["id"]: a for a in map(json.loads, stdout.buffer.getvalue().decode().splitlines())}
    assert not thread.is_alive()
    assert answers[1]["result"]["serverInfo"]["name"] == "accelerator-sizing"
    result = answers[2]["result"]
    assert not result["isError"] and json.loads(result["content"][-1]["text"])["id"] == "h100-sxm"  # the key was sent


@pytest.mark.filterwarnings("ignore:'service.mcp_server' found in sys.modules:RuntimeWarning")
def test_the_module_runs_as_a_program(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["python -m service.mcp_server", "--help"])
    with pytest.raises(SystemExit) as stopped:
        runpy.run_module("service.mcp_server", run_name="__main__")
    assert stopped.value.code == 0
    said = capsys.readouterr().out
    for flag, name in (("--allowed-hosts", "MCP_ALLOWED_HOSTS"), ("--max-body", "MCP_MAX_BODY_BYTES")):
        assert flag in said and name in said


# --- a Remote backend: the service served in a thread -------------------------------------------

@pytest.fixture(scope="module")
def service():
    """The service's app on a loopback port, served by werkzeug in a thread of this process."""
    served = make_server("127.0.0.1", 0, create_app({"TESTING": True}), threaded=True)
    thread = threading.Thread(target=served.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{served.server_port}"
    finally:
        served.shutdown()
        thread.join(DEADLINE_S)
        served.server_close()
    assert not thread.is_alive()


@pytest.fixture()
def remote(service):
    backend = Remote(service + "/", timeout_s=DEADLINE_S)
    yield backend
    backend.session.close()


def test_a_remote_backend_reads_the_services_contract_and_calls_it(remote):
    assert remote.base_url == remote.where and not remote.base_url.endswith("/")
    assert remote.contract() == yaml.safe_load(spec_text())
    status, content_type, payload = remote.send(ToolRequest(method="GET", path="/cards/h100-sxm", query={}, body=None),
                                                {"Accept-Language": "zh"})
    assert (status, content_type) == (200, "application/json") and json.loads(payload)["id"] == "h100-sxm"
    status, _, payload = remote.send(ToolRequest(method="POST", path="/estimate", query={}, body={"model": "x"}), {})
    assert status == 422 and json.loads(payload)["status"] == 422


def test_the_mcp_server_over_a_remote_backend_lists_and_calls_the_services_tools(remote):
    async def calls():
        async with Client(build_server(remote)) as client:
            return await client.list_tools(), await client.call_tool("getCard", {"card_id": "h100-sxm"})
    listed, called = anyio.run(calls)
    assert [t.name for t in listed.tools] == [t.name for t in tools_from_spec(SPEC)]
    assert not called.is_error and answer_of(called)["id"] == "h100-sxm"


def test_a_remote_backend_follows_no_redirect_so_a_callers_key_stays_with_the_service():
    """A service that redirects: the reply is the redirect itself, and the key goes nowhere else."""
    landed = []

    def redirecting(environ, start_response):
        if environ["PATH_INFO"] == "/land":
            landed.append(environ.get("HTTP_X_API_KEY"))
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b"{}"]
        start_response("307 Temporary Redirect", [("Location", "/land"), ("Content-Length", "0")])
        return [b""]

    served = make_server("127.0.0.1", 0, redirecting)
    thread = threading.Thread(target=served.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    backend = Remote(f"http://127.0.0.1:{served.server_port}", timeout_s=DEADLINE_S)
    try:
        status, _, _ = backend.send(ToolRequest(method="GET", path="/cards/x", query={}, body=None), {"X-API-Key": "k1-test-key-0000000000000000000000"})
    finally:
        backend.session.close()
        served.shutdown()
        thread.join(DEADLINE_S)
        served.server_close()
    assert status == 307 and landed == []
    assert not thread.is_alive()


class Answering:
    """A backend whose /readyz answers `status` (or raises `error`)."""

    where = "a stub"

    def __init__(self, status=200, error=None):
        self.status, self.error, self.asked = status, error, []

    def send(self, req, headers, timeout_s=None):
        self.asked.append((req.method, req.path, timeout_s))
        if self.error is not None:
            raise self.error
        return self.status, "application/json", b"{}"


def test_the_service_is_ready_only_when_its_readyz_answers_200(remote):
    assert _service_ready(remote) is True
    down = Remote(f"http://127.0.0.1:{free_port()}", timeout_s=DEADLINE_S)
    assert _service_ready(down) is False  # refused: a RequestException, not a crash
    down.session.close()
    not_ready = Answering(status=503)
    assert _service_ready(not_ready) is False
    assert not_ready.asked == [("GET", "/readyz", 1.5)]  # the probe's own bound, not the backend's minute
    assert _service_ready(Answering(error=requests.Timeout("slow"))) is False
    assert _service_ready(Answering(error=RuntimeError("the app in process failed"))) is False  # 503, never a 500


# --- uvicorn in a thread: the capped protocol and http_app over real sockets -----------------------

def uvicorn_serving(make_app, *, max_connections=256, idle_timeout_s=30.0, lifespan="off"):
    """`make_app(port)` served by uvicorn with the front door's protocol, in a thread of this process."""
    limits = FrontLimits(max_connections=max_connections, idle_timeout_s=idle_timeout_s)
    return uvicorn_in_thread(make_app, guarded_protocol(limits), lifespan=lifespan)


class Counting:
    """An ASGI app that counts the requests it has started (from any thread's point of view), reads
    each body whole and answers 200 "ok"; a caller who leaves mid-body gets nothing."""

    def __init__(self):
        self.started = threading.Semaphore(0)

    async def __call__(self, scope, receive, send):
        self.started.release()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


GET = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
PARTIAL_POST = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n12345"


@contextmanager
def connections(port, count):
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S) for _ in range(count)]
    try:
        yield sockets
    finally:
        for s in sockets:
            s.close()


def answered(sock, request=GET):
    """Sends `request` on `sock` and returns the response to it (ending in its 2-byte body)."""
    sock.sendall(request)
    said = b""
    while not said.endswith(b"\r\n\r\nok"):
        chunk = sock.recv(65536)
        assert chunk, f"closed by the server after {said!r}"
        said += chunk
    return said


def closed_by_server(sock, deadline):
    """Whether the server closed `sock` by `deadline`, and all it sent before."""
    said = b""
    sock.settimeout(0.05)
    try:
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                return True, said
            said += chunk
        return False, said
    except ConnectionResetError:
        return True, said
    finally:
        sock.settimeout(DEADLINE_S)


def started(app, count):
    for _ in range(count):
        assert app.started.acquire(timeout=DEADLINE_S), "a request did not reach the app"


def test_a_connection_past_the_cap_closes_the_longest_idle_one_not_the_oldest():
    app = Counting()
    with uvicorn_serving(lambda port: app, max_connections=2) as port, connections(port, 2) as (oldest, newer):
        assert answered(newer).startswith(b"HTTP/1.1 200 ")
        assert answered(oldest).startswith(b"HTTP/1.1 200 ")  # now `newer` has been idle longest
        with connections(port, 1) as (late,):
            closed, _ = closed_by_server(newer, time.monotonic() + DEADLINE_S)
            assert closed
            assert answered(late).startswith(b"HTTP/1.1 200 ")
            assert answered(oldest).startswith(b"HTTP/1.1 200 ")  # kept, and still served


def test_when_every_connection_is_busy_a_new_one_hears_503_and_is_closed():
    app = Counting()
    with uvicorn_serving(lambda port: app, max_connections=2) as port, connections(port, 2) as busy:
        for s in busy:
            s.sendall(PARTIAL_POST)  # in progress until the rest of the body comes
        started(app, 2)
        with connections(port, 1) as (late,):
            closed, said = closed_by_server(late, time.monotonic() + DEADLINE_S)
            assert closed and said.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
            assert b"application/problem+json" in said and b"too many connections" in said
        assert app.started.acquire(timeout=0) is False  # the late one reached no app
        assert answered(busy[0], b"67890").startswith(b"HTTP/1.1 200 ")  # the busy ones go on
        # one that has finished is idle again: a new caller makes room by closing it
        with connections(port, 1) as (again,):
            assert answered(again).startswith(b"HTTP/1.1 200 ")
            closed, _ = closed_by_server(busy[0], time.monotonic() + DEADLINE_S)
            assert closed


def test_an_idle_connection_is_closed_after_the_idle_timeout_and_a_busy_one_is_not():
    app = Counting()
    with uvicorn_serving(lambda port: app, idle_timeout_s=0.3) as port, connections(port, 1) as (busy,):
        busy.sendall(PARTIAL_POST)
        started(app, 1)  # its timer is armed: it was made before its request began
        with connections(port, 1) as (idle,):
            began = time.monotonic()
            closed, said = closed_by_server(idle, began + DEADLINE_S)
            assert closed and said == b"" and time.monotonic() - began >= 0.25
        # the busy connection's timer (set before the idle one's) has fired too: it was left to finish
        assert answered(busy, b"67890").startswith(b"HTTP/1.1 200 ")
        # then it is idle, and closed after the timeout: not uvicorn's keep-alive default of 5 s
        began = time.monotonic()
        closed, _ = closed_by_server(busy, began + DEADLINE_S)
        assert closed and time.monotonic() - began < 3


class Switchable:
    """The in-process service behind a switch: while `down`, every call fails as an unreachable one."""

    def __init__(self, app):
        self.inner, self.down, self.where = InProcess(app), False, "in process"

    def contract(self):
        return self.inner.contract()

    def send(self, req, headers, timeout_s=None):
        if self.down:
            raise requests.ConnectionError("down")
        return self.inner.send(req, headers, timeout_s)


def rpc(port, method, params=None, **headers):
    return requests.post(f"http://127.0.0.1:{port}/mcp",
                         json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}},
                         headers={"Accept": "application/json, text/event-stream", **headers}, timeout=DEADLINE_S)


def test_http_app_passes_the_callers_key_on_and_its_probe_follows_the_service():
    backend = Switchable(create_app({"TESTING": True, "API_KEYS": ("k1-test-key-0000000000000000000000",)}))

    def make_app(port):
        return http_app(build_server(backend), backend, HttpSettings(port=port))

    with uvicorn_serving(make_app, lifespan="on") as port, requests.Session() as http:
        assert http.get(f"http://127.0.0.1:{port}/healthz", timeout=DEADLINE_S).json() == {"status": "ok"}
        card = {"name": "getCard", "arguments": {"card_id": "h100-sxm"}}
        keyed = rpc(port, "tools/call", card, **{"X-API-Key": "k1-test-key-0000000000000000000000", "X-Request-ID": "r-1"}).json()["result"]
        assert not keyed.get("isError") and json.loads(keyed["content"][-1]["text"])["id"] == "h100-sxm"
        bearer = rpc(port, "tools/call", card, Authorization="Bearer k1-test-key-0000000000000000000000").json()["result"]
        assert not bearer.get("isError")
        # no key of the caller's: the server's own is not spent for it, and the service says 401
        keyless = rpc(port, "tools/call", card).json()["result"]
        assert keyless["isError"] and json.loads(keyless["content"][-1]["text"])["status"] == 401
        assert rpc(port, "tools/list", Host="evil.example").status_code == 421  # the Guard is in front
        backend.down = True
        probe = http.get(f"http://127.0.0.1:{port}/healthz", timeout=DEADLINE_S)
        assert probe.status_code == 503 and probe.json() == {"status": "service not ready"}
