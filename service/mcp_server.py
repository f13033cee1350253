"""The sizing service as a Model Context Protocol server, its tools generated from openapi.yaml.

    python -m service.mcp_server                    stdio, the domain in process (make mcp)
    SIZING_URL=http://host:8000 python -m service.mcp_server
                                                    stdio, calling a running service
    python -m service.mcp_server --http --port 8001  streamable HTTP at /mcp (make mcp-http)

Every tool call becomes the operation's HTTP request, answered by the service's own app: in
process through Flask's test client, or by the service at SIZING_URL. Validation, limits, keys,
metrics and the answer cache are the service's, so a tool answers exactly what the endpoint
does. Over HTTP the caller's Authorization, X-API-Key, Accept-Language and X-Request-ID
headers go on to the service, which judges the key. SIZING_API_KEY is the key a stdio server
sends; over HTTP it is ignored, so that no caller spends a key that is not theirs.
"""

import argparse
import http.cookiejar
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import requests
import uvicorn
import yaml
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .tools import ToolArgumentError, ToolOperation, ToolRequest, request_for, tool_answer, tools_from_spec

Json = dict[str, Any]
# The headers of an MCP request over HTTP that the service reads: the caller's key, language and
# request id (so the service's logs and problems name the caller's id).
FORWARDED = ("Authorization", "X-API-Key", "Accept-Language", "X-Request-ID")
# A readiness probe waits 2 s (deploy/k8s); a hung service must not hold its thread longer.
READY_TIMEOUT_S = 1.5
INTERNAL_ERROR = -32603
# Every operation of this service is a computation over its inputs and read-only catalogs.
ANNOTATIONS = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# A reply from the service: status, content type, body.
Reply = tuple[int, str, bytes]

log = logging.getLogger("service.mcp")


class InProcess:
    """Calls the service's app in this process (no network); the contract is the app's own."""

    def __init__(self, app: Any = None) -> None:
        if app is None:
            from .app import create_app

            app = create_app()
        self.client = app.test_client()
        self.where = "in process"

    def contract(self) -> Json:
        from .api.ops import spec_text

        return yaml.safe_load(spec_text())

    def send(self, req: ToolRequest, headers: dict[str, str], timeout_s: float | None = None) -> Reply:
        reply = self.client.open(req.path, method=req.method, query_string=req.query, json=req.body,
                                 headers={"Accept": "application/json", **headers})
        return reply.status_code, reply.content_type or "", reply.get_data()


class Remote:
    """Calls a running service; the contract is the one it serves, so the tools are its tools.
    The session carries callers' keys, so it follows no redirect (a key could go to another
    host), takes nothing from the environment (.netrc, proxies) and keeps no cookie between
    callers."""

    def __init__(self, base_url: str, *, timeout_s: float = 60.0) -> None:
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        self.where = self.base_url

    def contract(self) -> Json:
        reply = self.session.get(self.base_url + "/openapi.yaml", timeout=self.timeout_s, allow_redirects=False)
        reply.raise_for_status()
        return yaml.safe_load(reply.text)

    def send(self, req: ToolRequest, headers: dict[str, str], timeout_s: float | None = None) -> Reply:
        reply = self.session.request(req.method, self.base_url + req.path, params=req.query, json=req.body,
                                     headers={"Accept": "application/json", **headers},
                                     timeout=timeout_s or self.timeout_s, allow_redirects=False)
        return reply.status_code, reply.headers.get("Content-Type", ""), reply.content


class Tools:
    """The contract's tools, read on first use (a service beside this one may start later) and
    kept once read."""

    def __init__(self, backend: InProcess | Remote) -> None:
        self.backend = backend
        self._tools: dict[str, ToolOperation] | None = None

    async def get(self) -> dict[str, ToolOperation]:
        if self._tools is None:  # read off the event loop: a remote contract is a request
            self._tools = await anyio.to_thread.run_sync(self._read)
        return self._tools

    def _read(self) -> dict[str, ToolOperation]:
        return {tool.name: tool for tool in tools_from_spec(self.backend.contract())}


def build_server(backend: InProcess | Remote, *, api_key: str | None = None) -> Server:
    # api_key: what calls send when the caller brings no key of its own (stdio only: main() never
    # gives one to the HTTP server, where callers are other people)
    """The MCP server: tools/list from the contract, tools/call through the backend."""
    tools = Tools(backend)
    default_headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        try:
            found = await tools.get()
        except Exception as exc:  # the contract could not be read: say so, not "internal error"
            log.warning("the contract from %s could not be read: %r", backend.where, exc)
            raise MCPError(INTERNAL_ERROR, f"the tools could not be read from the sizing service at "
                                           f"{backend.where} ({type(exc).__name__})") from None
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, title=t.title, description=t.description, input_schema=t.input_schema,
                       annotations=ANNOTATIONS)
            for t in found.values()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        forwarded = _forwarded(ctx)
        caller_key = "Authorization" in forwarded or "X-API-Key" in forwarded
        headers = {**({} if caller_key else default_headers), **forwarded}
        try:
            tool = (await tools.get()).get(params.name)
            if tool is None:
                return _error(f"unknown tool {params.name!r}; tools/list names them")
            req = request_for(tool, params.arguments)
            status, content_type, payload = await anyio.to_thread.run_sync(backend.send, req, headers)
        except ToolArgumentError as exc:
            return _error(str(exc))
        except requests.RequestException as exc:
            log.warning("the sizing service at %s did not answer: %s", backend.where, exc)
            return _error(f"the sizing service at {backend.where} did not answer ({type(exc).__name__})")
        except Exception as exc:  # never a crash of the server, nor a protocol error, for one call
            log.exception("tool %s failed", params.name)
            return _error(f"the call failed inside the MCP server ({type(exc).__name__}); its log has the cause")
        answer = tool_answer(status, content_type, payload)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in answer.texts],
            structured_content=answer.structured, is_error=answer.is_error)

    return Server("accelerator-sizing", version=_version(), title="Accelerator sizing service",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


INSTRUCTIONS = (
    "Sizing answers for accelerator (GPU) purchases: memory a model needs, whether it fits and on "
    "how many cards, tokens/s, training time, power and cost. Quote the first text of a result: it is "
    "the answer's summary, in the language asked for (lang: en or zh). Unknown card or model names "
    "come back as errors naming the closest ones.")


def _forwarded(ctx: Any) -> dict[str, str]:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:
        return {}
    return {name: headers[name] for name in FORWARDED if headers.get(name)}


def _error(detail: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=detail)], is_error=True)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("accelerator-sizing-service")
    except PackageNotFoundError:  # pragma: no cover - run from a tree that was never installed
        return "0"


def backend_from_env(environ: dict[str, str] | None = None) -> InProcess | Remote:
    url = (environ if environ is not None else os.environ).get("SIZING_URL", "").strip()
    return Remote(url) if url else InProcess()


def http_app(server: Server, backend: InProcess | Remote, *, host: str) -> Any:
    """The streamable-HTTP app: /mcp, stateless (any replica answers any request, so no sticky
    sessions behind a Service) with plain JSON replies; /healthz says whether the service behind
    answers its readiness."""

    async def healthz(_: Request) -> JSONResponse:
        ready = await anyio.to_thread.run_sync(_service_ready, backend)
        return JSONResponse({"status": "ok" if ready else "service not ready"}, status_code=200 if ready else 503)

    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                      host=host, custom_starlette_routes=[Route("/healthz", healthz)])


def _service_ready(backend: InProcess | Remote) -> bool:
    try:
        status, _, _ = backend.send(ToolRequest(method="GET", path="/readyz", query={}, body=None), {},
                                    READY_TIMEOUT_S)
    except requests.RequestException:
        return False
    return status == 200


def main(argv: list[str] | None = None, *, serve: Callable[..., Any] = uvicorn.run) -> None:
    parser = argparse.ArgumentParser(prog="python -m service.mcp_server", description=__doc__.split("\n")[0])
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="the HTTP bind (0.0.0.0 in a container)")
    parser.add_argument("--port", type=int, default=8001, help="the HTTP port")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout is the protocol's
    backend = backend_from_env()
    api_key = os.environ.get("SIZING_API_KEY") or None
    if args.http:
        if api_key:
            log.warning("SIZING_API_KEY is ignored over HTTP: each caller sends its own key")
        server = build_server(backend)
        serve(http_app(server, backend, host=args.host), host=args.host, port=args.port, log_level="warning")
        return
    anyio.run(_stdio, build_server(backend, api_key=api_key))


async def _stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    main()
