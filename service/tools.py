"""The service's operations as tools for assistants, read from the contract (openapi.yaml).

An operation marked `x-tool: true` is a tool. Its operationId is the tool's name, its summary
the title, its description the description; its input schema is the request body's properties
with the operation's path and query parameters beside them, made self-contained (the components
it refers to copied under `$defs`). Nothing here names an endpoint: marking a new operation in
openapi.yaml makes it a tool, and the MCP server (service/mcp_server.py) only carries the calls.

No MCP import here, so the contract's lint can build the tools without the protocol library.
"""

import copy
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

Json = dict[str, Any]
TOOL_MARK = "x-tool"
COMPONENTS = "#/components/schemas/"
DEFS = "#/$defs/"
METHODS = ("get", "post", "put", "patch", "delete")


class ToolSpecError(ValueError):
    """An operation is marked for tools but cannot be one (the contract's lint reports it)."""


class ToolArgumentError(ValueError):
    """A call's arguments cannot be put into a request (a missing path parameter, say)."""


@dataclass(frozen=True, kw_only=True)
class ToolOperation:
    """One tool: what an assistant sees, and the HTTP operation a call becomes."""

    name: str
    title: str
    description: str
    input_schema: Json
    method: str
    path: str
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    has_body: bool
    defaults: Json = field(default_factory=dict)  # x-tool-defaults: query values a call gets unless it gives its own


@dataclass(frozen=True, kw_only=True)
class ToolRequest:
    method: str
    path: str
    query: dict[str, str]
    body: Json | None


@dataclass(frozen=True, kw_only=True)
class ToolAnswer:
    """A tool's result: the texts an assistant reads (the summary first), the structured answer,
    and whether it is an error."""

    is_error: bool
    texts: tuple[str, ...]
    structured: Json | None


def tools_from_spec(spec: Json) -> list[ToolOperation]:
    """Every operation of the contract marked for tools, in the contract's order."""
    return [tool_for(path, method, op, spec)
            for path, item in spec.get("paths", {}).items()
            for method, op in item.items()
            if method in METHODS and isinstance(op, dict) and op.get(TOOL_MARK) is True]


def tool_for(path: str, method: str, op: Json, spec: Json) -> ToolOperation:
    where = f"{method.upper()} {path}"
    params = [p for p in op.get("parameters", []) if p.get("in") in ("path", "query")]
    properties: Json = {}
    required: list[str] = []
    for param in params:
        schema = dict(param.get("schema", {}))
        if param.get("description"):
            schema["description"] = param["description"]
        properties[param["name"]] = schema
        if param.get("required") or param["in"] == "path":
            required.append(param["name"])
    body = _body_schema(op, spec, where)
    if body is not None:
        for name, schema in body.get("properties", {}).items():
            if name in properties:
                raise ToolSpecError(f"{where}: body field {name!r} has the name of a parameter")
            properties[name] = schema
        required += body.get("required", [])
    defaults: Json = dict(op.get("x-tool-defaults") or {})
    for name, value in defaults.items():
        if name not in properties:
            raise ToolSpecError(f"{where}: x-tool-defaults names {name!r}, which is not a parameter")
        properties[name] = {**properties[name], "default": value}
    input_schema: Json = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        input_schema["required"] = required
    example = (op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example"))
    if example is not None:
        input_schema["examples"] = [example]
    return ToolOperation(
        name=op["operationId"], title=op.get("summary", op["operationId"]),
        description=op.get("description", ""), input_schema=self_contained(input_schema, spec),
        method=method.upper(), path=path,
        path_params=tuple(p["name"] for p in params if p["in"] == "path"),
        query_params=tuple(p["name"] for p in params if p["in"] == "query"),
        has_body=body is not None, defaults=defaults)


def _body_schema(op: Json, spec: Json, where: str) -> Json | None:
    """The JSON request body's schema, which must be an object so that its fields can sit beside
    the parameters; None when the operation takes no body."""
    content = op.get("requestBody", {}).get("content", {})
    if not content:
        return None
    if "application/json" not in content:
        raise ToolSpecError(f"{where}: a tool's request body must be application/json")
    schema = _resolve(content["application/json"].get("schema", {}), spec)
    if schema.get("type") != "object" or not schema.get("properties"):
        raise ToolSpecError(f"{where}: a tool's request body must be an object with properties")
    return schema


def _resolve(schema: Json, spec: Json) -> Json:
    ref = schema.get("$ref", "")
    if not ref:
        return schema
    components = spec.get("components", {}).get("schemas", {})
    if not ref.startswith(COMPONENTS) or ref.removeprefix(COMPONENTS) not in components:
        raise ToolSpecError(f"reference to a missing component {ref!r}")
    return _resolve(components[ref.removeprefix(COMPONENTS)], spec)


def self_contained(schema: Json, spec: Json) -> Json:
    """The schema with every component it reaches copied under `$defs` and its references
    pointing there, so a tool's schema stands alone."""
    components = spec.get("components", {}).get("schemas", {})
    defs: Json = {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(COMPONENTS):
                name = ref.removeprefix(COMPONENTS)
                if name not in components:
                    raise ToolSpecError(f"reference to a missing component {name!r}")
                if name not in defs:
                    defs[name] = {}  # claimed first: a component may refer to itself
                    defs[name] = walk(copy.deepcopy(components[name]))
                made = {**{k: walk(v) for k, v in node.items() if k != "$ref"}, "$ref": DEFS + name}
                if "type" in components[name]:  # said beside the reference: clients that do not follow
                    made.setdefault("type", components[name]["type"])  # it (MCP Inspector) send an object
                return made
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(copy.deepcopy(schema))
    if defs:
        out["$defs"] = defs
    return out


def request_for(tool: ToolOperation, arguments: Json | None) -> ToolRequest:
    """The HTTP request a call becomes: path parameters into the path, query parameters into the
    query, the rest into the JSON body, where the service's own validation judges them."""
    arguments = {**tool.defaults, **(arguments or {})}
    _carried_by_json(arguments)
    path = tool.path
    for name in tool.path_params:
        if name not in arguments:
            raise ToolArgumentError(f"{tool.name} needs {name!r}")
        path = path.replace("{" + name + "}", quote(_path_value(name, arguments.pop(name)), safe=""))
    query = {name: _query_value(name, arguments.pop(name)) for name in tool.query_params if name in arguments}
    if not tool.has_body and arguments:
        takes = ", ".join(tool.path_params + tool.query_params) or "no arguments"
        raise ToolArgumentError(f"{tool.name} does not take {', '.join(map(repr, arguments))}; it takes {takes}")
    return ToolRequest(method=tool.method, path=path, query=query, body=arguments if tool.has_body else None)


def _carried_by_json(arguments: Json) -> None:
    """Arguments the service's strict JSON could not read are refused here, by name of the
    reason, rather than failing inside the call."""
    try:
        json.dumps(arguments, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except ValueError as exc:  # UnicodeEncodeError is a ValueError too
        reason = ("text that is not valid Unicode (a lone surrogate)" if isinstance(exc, UnicodeError)
                  else "a number JSON cannot carry (infinite or NaN)")
        raise ToolArgumentError(f"the arguments hold {reason}") from None


def _query_value(name: str, value: Any) -> str:
    """One value in the query string: a string, number or boolean as the service reads it. Null,
    lists and objects are refused by name, since str() would turn them into other text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    kind = "null" if value is None else "an array" if isinstance(value, list) else "an object"
    raise ToolArgumentError(f"{name} takes one string, number or boolean, not {kind}"
                            + (" (a list of fields is one string, comma-separated)" if name == "fields" else ""))


def _path_value(name: str, value: Any) -> str:
    """A path segment: a non-empty value that is not a dot segment, which a URL would resolve away
    (`/cards/.` is the catalog, not a card)."""
    text = _query_value(name, value)
    if text.strip() in ("", ".", ".."):
        raise ToolArgumentError(f"{name} must name something, not {text!r}")
    return text


def tool_answer(status: int, content_type: str, payload: bytes) -> ToolAnswer:
    """A service answer as a tool result: the summary first (in the language the caller asked
    for), then the whole answer as JSON; a problem is a tool error led by its detail."""
    text = payload.decode("utf-8", errors="replace")
    decoded = _json(text) if "json" in content_type else None
    if status >= 400:
        problem = decoded if isinstance(decoded, dict) else {"status": status, "detail": text.strip()}
        shown = {k: problem[k] for k in ("status", "title", "detail", "errors") if k in problem}
        return ToolAnswer(is_error=True, texts=(_lead(problem, status), _compact(shown)), structured=shown)
    if decoded is None:
        return ToolAnswer(is_error=False, texts=(text,), structured=None)
    summary = decoded.get("summary") if isinstance(decoded, dict) else None
    texts = ((summary,) if isinstance(summary, str) and summary else ()) + (_compact(decoded),)
    return ToolAnswer(is_error=False, texts=texts, structured=decoded if isinstance(decoded, dict) else None)


def _lead(problem: Json, status: int) -> str:
    """A problem's detail, then each field's own message where the detail does not already say
    it ("Invalid input: fields." alone would not tell a model what to change)."""
    detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
    errors = problem.get("errors") if isinstance(problem.get("errors"), list) else []
    lines = [f"- {e.get('field')}: {e.get('message')}" for e in errors
             if isinstance(e, dict) and e.get("message") and e.get("message") != detail]
    return "\n".join([detail, *lines])


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
