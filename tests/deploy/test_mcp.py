"""The MCP server as assistants run it: a separate process on stdio (python -m, and make -s mcp as
the README's configuration starts it), and streamable HTTP on loopback, in process or beside a
running service under gunicorn as deploy/k8s runs it. Each time the library's own client lists
the tools and asks the README's question, and gets POST /estimate's numbers."""

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import anyio
import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from service.mcp_server import main
from service.tools import tools_from_spec
from tests import processes
from tests.api.support import answer_of
from tests.contract.test_spec_lint import SPEC
from tests.deploy import server as srv

QUESTION = {"model": "Llama 3.1 70B", "hardware": {"card": "RTX 4090", "count": 2},
            "workload": {"precision": "int4"}}
TOOL_NAMES = [tool.name for tool in tools_from_spec(SPEC)]
# the estimate tool's default fields (x-tool-defaults): what a call that names none gets
TOOL_FIELDS = {"fields": next(t for t in tools_from_spec(SPEC) if t.name == "estimate").defaults["fields"]}


def ask(target, **headers):
    """Lists the tools, asks the question, and asks it with a bad card, in one session; over HTTP
    with the headers given."""
    async def run():
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(target, http_client=http) if headers else target
            return await session(transport)

    async def session(transport):
        async with Client(transport) as client:
            tools = await client.list_tools()
            good = await client.call_tool("estimate", QUESTION)
            bad = await client.call_tool("estimate", {**QUESTION, "hardware": {"card": "RTX 4099", "count": 2}})
            return [t.name for t in tools.tools], good, bad
    return anyio.run(run)


def check(answers, expected):
    names, good, bad = answers
    assert names == TOOL_NAMES
    assert not good.is_error and answer_of(good) == expected
    assert good.content[0].text == expected["summary"]
    assert bad.is_error and "closest: rtx-4090" in bad.content[0].text


@pytest.fixture(scope="module")
def expected(app):
    """The endpoint's answer to the call the tool makes: the question, with the tool's default fields."""
    return app.test_client().post("/estimate", json=QUESTION, query_string=TOOL_FIELDS).get_json()


def test_over_stdio_as_a_module(expected):
    check(ask(StdioServerParameters(command=sys.executable, args=["-m", "service.mcp_server"], cwd=srv.ROOT)), expected)


@pytest.mark.skipif(not (srv.ROOT / ".venv" / ".installed-mcp").exists(),
                    reason="make -s mcp runs from the project's .venv, which make test installs")
def test_over_stdio_as_the_readmes_configuration_starts_it(expected):
    """`make -s -C <project> mcp`: nothing but the protocol may reach stdout, make's included."""
    params = StdioServerParameters(command="make", args=["-s", "-C", str(srv.ROOT), "mcp"],
                                   env={"PATH": os.environ["PATH"]})
    check(ask(params), expected)


def wait_for(url, statuses=(200,)):
    """The first answer of `url` with one of `statuses`, or the last answer (None if nothing ever
    answered) after 30 s."""
    reply, deadline = None, time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            reply = requests.get(url, timeout=2)
            if reply.status_code in statuses:
                break
        except requests.RequestException:
            pass
        time.sleep(0.1)
    return reply


@contextmanager
def mcp_http(tmp_path, *flags, **env):
    """The MCP server over HTTP on a free loopback port, with `flags` and `env`; stopped (and
    killed if it will not stop) however the test ends."""
    port = srv.free_port()
    log = tmp_path / f"mcp-{port}.log"
    with log.open("wb") as err:
        proc = processes.spawn([sys.executable, "-m", "service.mcp_server", "--http", "--port", str(port), *flags],
                               cwd=srv.ROOT, env={**os.environ, **env}, stderr=err)
    base = f"http://127.0.0.1:{port}"
    try:
        reply = wait_for(f"{base}/healthz", statuses=(200, 503))
        assert reply is not None, f"the MCP server did not start: {log.read_text()[-2000:]}"
        yield base
    finally:
        processes.stop(proc, grace_s=10)


def test_over_streamable_http_in_process(expected, tmp_path):
    with mcp_http(tmp_path, SIZING_URL="") as base:
        check(ask(f"{base}/mcp"), expected)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with srv.running(tmp_path_factory.mktemp("api"), workers=2, threads=4, SIZING_API_KEYS="k1-test-key-0000000000000000000000,k2-test-key-0000000000000000000000") as running:
        yield running


def test_beside_a_keyed_service_as_deployed_the_callers_key_goes_on(api, tmp_path):
    over_the_wire = requests.post(f"{api.base}/v1/estimate", json=QUESTION, params=TOOL_FIELDS,
                                  headers={"X-API-Key": "k2-test-key-0000000000000000000000"}, timeout=30)
    # a key in the MCP server's environment is not lent to callers over HTTP
    with mcp_http(tmp_path, SIZING_URL=api.base, SIZING_API_KEY="k1-test-key-0000000000000000000000") as base:
        check(ask(f"{base}/mcp", Authorization="Bearer k1-test-key-0000000000000000000000"), over_the_wire.json())
        # the contract is public, so the tools list; a call without a key is the API's 401
        names, good, _ = ask(f"{base}/mcp")
        assert names == TOOL_NAMES
        assert good.is_error and answer_of(good)["status"] == 401
        assert "API key" in good.content[0].text
        _, good, _ = ask(f"{base}/mcp", **{"X-API-Key": "k3"})
        assert good.is_error and answer_of(good)["status"] == 401
    # each call reached the API with the caller's key: key_id in its access log, never the key
    callers = {line.get("key_id") for line in api.log_lines() if line.get("path") == "/v1/estimate"}
    assert len(callers - {None}) == 2


def rpc(base, method, params=None, **headers):
    """One JSON-RPC request to /mcp, as a stateless server takes it (no session to start)."""
    return requests.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}},
                         headers={"Accept": "application/json, text/event-stream", **headers}, timeout=30)


def test_the_http_endpoint_reports_the_service_behind_it_but_never_its_address(tmp_path):
    down = f"http://127.0.0.1:{srv.free_port()}"
    with mcp_http(tmp_path, SIZING_URL=down) as base:
        reply = wait_for(f"{base}/healthz", statuses=(503,))
        assert reply.status_code == 503 and reply.json() == {"status": "service not ready"}
        listed = rpc(base, "tools/list").json()
        called = rpc(base, "tools/call", {"name": "estimate", "arguments": QUESTION}).json()
    assert listed["error"]["message"] == "the tools could not be read from the sizing service (ConnectionError)"
    assert called["result"]["isError"]
    assert called["result"]["content"][0]["text"] == "the sizing service did not answer (ConnectionError)"
    said = json.dumps([reply.json(), listed, called])
    assert down.split("//")[1] not in said and "in process" not in said
    # the operators' log names it
    assert down in "".join(path.read_text() for path in tmp_path.glob("mcp-*.log"))


def test_main_serves_http_on_the_host_and_port_given(monkeypatch):
    served = {}
    monkeypatch.setenv("SIZING_URL", "http://127.0.0.1:1")
    main(["--http", "--host", "0.0.0.0", "--port", "8123"], serve=lambda app, **kw: served.update(app=app, **kw))
    assert (served["host"], served["port"]) == ("0.0.0.0", 8123)
    assert {route.path for route in served["app"].routes} == {"/mcp", "/healthz"}


def test_the_readmes_transcript_is_what_the_server_says():
    lines = (srv.ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    sent = [line[2:] for line in lines if line.startswith("> {")]
    said = {message["id"]: message for message in (json.loads(line[2:]) for line in lines if line.startswith("< {"))}
    assert len(sent) == 4 and sorted(said) == [1, 2, 3]
    proc = subprocess.Popen([sys.executable, "-m", "service.mcp_server"], cwd=srv.ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        proc.stdin.write("".join(line + "\n" for line in sent))
        proc.stdin.flush()
        answers = {}
        while len(answers) < len(said):  # stdin stays open: at its end the server drops what is pending
            line = proc.stdout.readline()
            assert line, "the server stopped before answering"
            message = json.loads(line)
            answers[message["id"]] = message
    finally:
        watchdog.cancel()
        proc.stdin.close()
        proc.wait(timeout=10)
        proc.stdout.close()
    assert answers == said
