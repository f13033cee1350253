"""The sizing service as a Model Context Protocol server, its tools generated from openapi.yaml.

    python -m service.mcp_server                    stdio, the domain in process (make mcp)
    SIZING_URL=http://host:8000 python -m service.mcp_server
                                                    stdio, calling a running service
    python -m service.mcp_server --http --port 8001  streamable HTTP at /mcp (make mcp-http)

Every tool call becomes the operation's HTTP request, answered by the service's own app: in
process through Flask's test client, or by the service at SIZING_URL. Validation, limits, keys,
metrics and the answer cache are the service's, so a tool answers exactly what the endpoint
does. A result carries the answer once: its summary as the first text, the rest of the answer as
JSON in the second (what assistants read); with --structured (MCP_STRUCTURED=1), the same texts
beside structuredContent too, as the specification asks of structured results, for clients that
read it. Over HTTP the caller's
Authorization, X-API-Key, Accept-Language and X-Request-ID headers go on to the service, which
judges the key. SIZING_API_KEY is the key a stdio server sends; over HTTP it is ignored, so that
no caller spends a key that is not theirs.

Over HTTP the server answers only the names it serves, and holds a bounded amount of memory
whatever a caller opens (a flag, or the environment variable beside it; a flag wins):

--allowed-hosts    MCP_ALLOWED_HOSTS    Host values answered besides the loopback ones (127.0.0.1,
                                        localhost and [::1], each on --port), comma-separated
                                        name[:port]. A name without a port is answered on any port
                                        (a port-forward or a Service may map it); * answers any Host.
                                        Another Host is refused with 421 Misdirected Request (RFC 9110:
                                        not a name this server answers for; 400 would say the request
                                        is malformed, 403 is the Origin's). /healthz is exempt: the
                                        kubelet's probe names the pod's IP.
--allowed-origins  MCP_ALLOWED_ORIGINS  browser origins answered besides http://127.0.0.1:<port>,
                                        http://localhost:<port> and http://[::1]:<port>, comma-separated
                                        scheme://host[:port] as a browser sends them; * answers any. A
                                        request without Origin (not a browser) passes; another Origin
                                        is refused with 403. With the Host check this keeps a web page
                                        (DNS rebinding included) from calling the tools with its
                                        visitor's network position.
--max-connections  MCP_MAX_CONNECTIONS  open connections (default 256). A connection past it closes
                                        the longest-idle one, or is answered 503 (problem+json) and
                                        closed when every one is serving a request.
--max-requests     MCP_MAX_REQUESTS     /mcp requests in flight, counted from the end of their body,
                                        those whose caller left included (default 16); past it, 503
                                        with Retry-After. A body still arriving takes no slot.
--body-timeout     MCP_BODY_TIMEOUT_S   seconds an /mcp request's body may take to arrive (default 10),
                                        then 408: a body sent slowly, or never, is held that long at
                                        most.
--idle-timeout     MCP_IDLE_TIMEOUT_S   seconds a connection may wait without a request in progress,
                                        before its first one or between two (default 5), then closed.
--max-body         MCP_MAX_BODY_BYTES   the largest /mcp body (default 1 MiB, the API's own limit);
                                        past it, 413.

The connections are the service's front door's (service/front): llhttp parses, a head must be
whole within 10 s of its first byte (408), one peer address holds at most 64 connections, 16
bodies arriving at once and 8 MiB of bodies (503 past either), and an answer the caller does not
read is dropped after 10 s.

Refusals are small JSON bodies, made before the SDK sees the request. Stateless with JSON
replies, the server never sends a message of its own, so GET /mcp (a stream for such messages)
would only hold memory: it, and every method but POST, is 405 with Allow: POST.
"""

import argparse
import http.cookiejar
import logging
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
import requests
import uvicorn
import yaml
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .front.door import BodyHolds, read_body
from .front.limits import FrontLimits
from .front.problems import Problem
from .front.protocol import guarded_protocol
from .tools import ToolArgumentError, ToolOperation, ToolRequest, request_for, tool_answer, tools_from_spec

Json = dict[str, Any]
# The headers of an MCP request over HTTP that the service reads: the caller's key, language and
# request id (so the service's logs and problems name the caller's id).
FORWARDED = ("Authorization", "X-API-Key", "Accept-Language", "X-Request-ID")
# A readiness probe waits 2 s (deploy/k8s); a hung service must not hold its thread longer.
READY_TIMEOUT_S = 1.5
INTERNAL_ERROR = -32603
# Every operation of this service is a computation over its inputs and read-only catalogs (the
# idempotent hint means something only for a tool that writes, so it is not sent).
ANNOTATIONS = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
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


def build_server(backend: InProcess | Remote, *, api_key: str | None = None, structured: bool = False) -> Server:
    # api_key: what calls send when the caller brings no key of its own (stdio only: main() never
    # gives one to the HTTP server, where callers are other people)
    """The MCP server: tools/list from the contract, tools/call through the backend. A result
    carries the answer once: the summary, then the rest as JSON text (what assistants read); with
    `structured`, structuredContent beside them (for clients that read it)."""
    tools = Tools(backend)
    default_headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        try:
            found = await tools.get()
        except Exception as exc:  # the contract could not be read: say so, not "internal error"
            # the service's address is for operators, not for whoever calls: the log has it
            log.warning("the contract from %s could not be read: %r", backend.where, exc)
            raise MCPError(INTERNAL_ERROR, f"the tools could not be read from the sizing service "
                                           f"({type(exc).__name__})") from None
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
            return _error(f"the sizing service did not answer ({type(exc).__name__})")
        except Exception as exc:  # never a crash of the server, nor a protocol error, for one call
            log.exception("tool %s failed", params.name)
            return _error(f"the call failed inside the MCP server ({type(exc).__name__}); its log has the cause")
        answer = tool_answer(status, content_type, payload)
        texts, data = answer.as_structured() if structured else answer.as_text()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in texts],
            structured_content=data, is_error=answer.is_error)

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


MCP_PATH = "/mcp"
# The kubelet's readiness probe sends Host: <pod IP>:<port>, which no allow-list can name ahead.
HOST_EXEMPT = frozenset({"/healthz"})
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
# name[:port]: a bracketed IPv6 address or a name without colons; anything else is no host at all.
HOST_PORT = re.compile(r"(\[[0-9a-f:.]+\]|[^:\[\]/@\s]+)(?::(\d{1,5}))?")
Host = tuple[str, int | None]  # a port of None: any port


@dataclass(frozen=True)
class HttpSettings:
    """What the HTTP server answers, and how much it holds at once (the module's docstring)."""

    port: int = 8001
    hosts: tuple[Host, ...] = ()  # besides the loopback names on `port`
    origins: tuple[str, ...] = ()  # besides the loopback origins on `port`
    max_connections: int = 256
    max_requests: int = 16
    idle_timeout_s: float = 5.0
    body_timeout_s: float = 10.0
    max_body_bytes: int = 1 << 20  # the API's own limit (service/app.py): a tool's arguments are its body

    def host_allowed(self, value: str | None) -> bool:
        found = _host_port(value or "")
        if found is None:
            return False
        name, port = found
        allowed = [(loopback, self.port) for loopback in LOOPBACK] + list(self.hosts)
        return any(entry in ("*", name) and entry_port in (None, port) for entry, entry_port in allowed)

    def origin_allowed(self, value: str | None) -> bool:
        if value is None:  # not a browser's request: Origin is what a browser cannot leave out
            return True
        allowed = {f"http://{loopback}:{self.port}" for loopback in LOOPBACK} | set(self.origins)
        return "*" in allowed or _origin(value) in allowed


def _host_port(value: str) -> Host | None:
    match = HOST_PORT.fullmatch(value.strip().lower())
    if not match or (match[2] and not 0 < int(match[2]) < 65536):
        return None
    name = match[1] if match[1].startswith("[") else match[1].rstrip(".")  # "sizing.ns.svc." is "sizing.ns.svc"
    return (name, int(match[2]) if match[2] else None) if name else None


def _origin(value: str) -> str:
    return value.strip().lower().rstrip("/")


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def host_list(text: str) -> tuple[Host, ...]:
    """--allowed-hosts: a typo is an error at start, not a server that refuses every caller."""
    hosts = []
    for item in _items(text):
        found = _host_port(item)
        if found is None:
            raise argparse.ArgumentTypeError(f"{item!r} is not a host or host:port")
        hosts.append(found)
    return tuple(hosts)


def origin_list(text: str) -> tuple[str, ...]:
    """--allowed-origins: each scheme://host[:port], as a browser sends it (or *)."""
    origins = tuple(_origin(item) for item in _items(text))
    for origin in origins:
        if origin != "*" and "://" not in origin:
            raise argparse.ArgumentTypeError(f"{origin!r} is not an origin (scheme://host[:port])")
    return origins


class Guard:
    """The checks in front of the SDK, made before it sets up anything for a request: the Host
    and the Origin against the allow-lists, POST only on /mcp, each body whole within
    max_body_bytes and body_timeout_s (the front door's read_body: bodies still arriving are
    bounded per peer address, in number and bytes), then at most max_requests /mcp requests in
    flight (counted from the body's end until the app returns, so a caller who left still counts
    while its call runs, and a slow body never takes a slot). The SDK's own Host/Origin check is
    off in http_app: it answers in plain text, compares case-sensitively, only runs once the SDK
    has started a server task for the request, and would refuse the names configured here when
    the bind is loopback."""

    def __init__(self, app: ASGIApp, settings: HttpSettings) -> None:
        self.app, self.settings = app, settings
        self.limits = front_limits(settings)
        self.holds = BodyHolds(self.limits)
        self.in_flight = 0
        self.warned: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a websocket (uvicorn runs with ws="none"; another server may not)
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["path"] != MCP_PATH:
            await self.app(scope, receive, send)
            return
        await self._mcp(scope, receive, send)

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        """/mcp, its body read whole first and handed on whole, then a slot in flight."""
        peer = scope["client"][0] if scope.get("client") else "-"
        with self.holds.hold(peer) as hold:
            body = await read_body(scope, receive, hold, self.limits)
            if body is None:  # the caller left
                return
            if isinstance(body, Problem):
                await JSONResponse({"error": BODY_REFUSALS.get(body.status, body.detail)}, body.status,
                                   headers={"Connection": "close", **({"Retry-After": str(body.retry_after_s)}
                                                                     if body.retry_after_s else {})})(
                    scope, receive, send)
                return
            if self.in_flight >= self.settings.max_requests:
                await JSONResponse({"error": "too many requests in flight"}, 503,
                                   headers={"Retry-After": "1"})(scope, receive, send)
                return
            whole: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

            async def replay() -> Message:
                return whole.pop() if whole else await receive()

            self.in_flight += 1
            try:
                await self.app(scope, replay, send)
            finally:
                self.in_flight -= 1

    def _refusal(self, scope: Scope) -> JSONResponse | None:
        headers, path = Headers(scope=scope), scope["path"]
        if path not in HOST_EXEMPT and not self.settings.host_allowed(headers.get("host")):
            return self._refuse(421, "host not allowed", headers.get("host"), "MCP_ALLOWED_HOSTS")
        if not self.settings.origin_allowed(headers.get("origin")):
            return self._refuse(403, "origin not allowed", headers.get("origin"), "MCP_ALLOWED_ORIGINS")
        if path != MCP_PATH:
            return None
        if scope["method"] != "POST":  # no server-initiated messages, so no GET stream to open
            return JSONResponse({"error": "method not allowed: POST only"}, 405, headers={"Allow": "POST"})
        return None

    def _refuse(self, status: int, error: str, value: str | None, setting: str) -> JSONResponse:
        # the first refusal of each kind is a warning (a setting may be missing); the rest, which
        # a caller can make as many of as it likes, are debug lines
        level = logging.DEBUG if error in self.warned else logging.WARNING
        self.warned.add(error)
        log.log(level, "refused a request: %s (%r); %s lists what is answered", error, value[:200] if value else value,
                setting)
        return JSONResponse({"error": error}, status)


# What a caller hears when its /mcp body is refused, by status (the front door's reasons, said the
# way this server says its refusals).
BODY_REFUSALS = {413: "body too large", 408: "body not received in time"}


def front_limits(settings: HttpSettings) -> FrontLimits:
    """The front door's bounds for the MCP server: its connections, its idle and body timeouts
    and its largest body; the rest as the service's workers have them."""
    return FrontLimits(max_connections=settings.max_connections, idle_timeout_s=settings.idle_timeout_s,
                       body_timeout_s=settings.body_timeout_s, max_body_bytes=settings.max_body_bytes)


def http_app(server: Server, backend: InProcess | Remote, settings: HttpSettings | None = None) -> Any:
    """The streamable-HTTP app: /mcp, stateless (any replica answers any request, so no sticky
    sessions behind a Service) with plain JSON replies, behind the Guard; /healthz says whether
    the service behind answers its readiness."""
    settings = settings or HttpSettings()

    async def healthz(_: Request) -> JSONResponse:
        ready = await anyio.to_thread.run_sync(_service_ready, backend)
        return JSONResponse({"status": "ok" if ready else "service not ready"}, status_code=200 if ready else 503)

    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
        max_request_body_size=settings.max_body_bytes, custom_starlette_routes=[Route("/healthz", healthz)],
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))  # the Guard's
    app.add_middleware(Guard, settings=settings)
    return app


def _service_ready(backend: InProcess | Remote) -> bool:
    try:
        status, _, _ = backend.send(ToolRequest(method="GET", path="/readyz", query={}, body=None), {},
                                    READY_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - whatever stops the service answering, it is not ready
        return False
    return status == 200


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        value = kind(text)
        if not 0 < value < math.inf:  # nan and inf too: a timer that never fires is no bound
            raise ValueError(text)
        return value
    parse.__name__ = f"positive {kind.__name__}"  # argparse names the type in its error
    return parse


def _parser(environ: dict[str, str]) -> argparse.ArgumentParser:
    """The flags; each HTTP setting's default is its environment variable (argparse parses a
    string default as it parses the flag, so a bad variable is the same error as a bad flag)."""
    parser = argparse.ArgumentParser(prog="python -m service.mcp_server", description=__doc__.split("\n")[0])
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="the HTTP bind (0.0.0.0 in a container)")
    parser.add_argument("--port", type=int, default=8001, help="the HTTP port")
    parser.add_argument("--structured", action="store_true",
                        default=environ.get("MCP_STRUCTURED", "").strip().lower() in ("1", "true", "yes"),
                        help="answer with structuredContent beside the texts, for clients that read it "
                             "(MCP_STRUCTURED=1)")
    defaults = HttpSettings()
    for flag, name, kind, default, what in (
            ("--allowed-hosts", "MCP_ALLOWED_HOSTS", host_list, "", "Host values answered besides loopback"),
            ("--allowed-origins", "MCP_ALLOWED_ORIGINS", origin_list, "", "origins answered besides loopback"),
            ("--max-connections", "MCP_MAX_CONNECTIONS", _positive(int), defaults.max_connections,
             "open connections"),
            ("--max-requests", "MCP_MAX_REQUESTS", _positive(int), defaults.max_requests, "/mcp requests in flight"),
            ("--idle-timeout", "MCP_IDLE_TIMEOUT_S", _positive(float), defaults.idle_timeout_s,
             "seconds a connection may wait without a request"),
            ("--body-timeout", "MCP_BODY_TIMEOUT_S", _positive(float), defaults.body_timeout_s,
             "seconds an /mcp body may take"),
            ("--max-body", "MCP_MAX_BODY_BYTES", _positive(int), defaults.max_body_bytes, "the largest /mcp body")):
        parser.add_argument(flag, type=kind, default=environ.get(name, str(default)), help=f"{what} ({name})")
    return parser


def http_settings(args: argparse.Namespace) -> HttpSettings:
    return HttpSettings(port=args.port, hosts=args.allowed_hosts, origins=args.allowed_origins,
                        max_connections=args.max_connections, max_requests=args.max_requests,
                        idle_timeout_s=args.idle_timeout, body_timeout_s=args.body_timeout,
                        max_body_bytes=args.max_body)


def main(argv: list[str] | None = None, *, serve: Callable[..., Any] = uvicorn.run) -> None:
    args = _parser(dict(os.environ)).parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout is the protocol's
    backend = backend_from_env()
    api_key = os.environ.get("SIZING_API_KEY") or None
    if args.http:
        if api_key:
            log.warning("SIZING_API_KEY is ignored over HTTP: each caller sends its own key")
        settings = http_settings(args)
        app = http_app(build_server(backend, structured=args.structured), backend, settings)
        serve(app, host=args.host, port=args.port, log_level="warning", ws="none", proxy_headers=False,
              server_header=False, http=guarded_protocol(front_limits(settings)),
              timeout_keep_alive=settings.idle_timeout_s)
        return
    anyio.run(_stdio, build_server(backend, api_key=api_key, structured=args.structured))


async def _stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    main()
