"""The service's operations as tools for assistants, read from the contract (openapi.yaml).

An operation marked `x-tool: true` is a tool. Its operationId is the tool's name, its summary
the title, the first sentence of its description (when to use it) the description; its input
schema is the request body's properties with the operation's path and query parameters beside
them, in the tools' compact profile
(`compact`): every component inlined, bounds and long enumerations left to the service (which
refuses a value out of range with the field's name and limits), and a large object trimmed to
the properties the contract marks `x-tool`, the others named in one line. An assistant reads
every tool's schema in every conversation, so the whole list stays a few thousand tokens (under
20 KB; tests/contract/test_tools.py keeps it there). Nothing
here names an endpoint: marking a new operation in openapi.yaml makes it a tool, and the MCP
server (service/mcp_server.py) only carries the calls.

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
    """A tool's result: the texts an assistant reads (the summary first, then the rest of the
    answer as JSON), the structured answer, and whether it is an error. A result carries the
    answer once, as text (`as_text`, what assistants read), unless the server is asked for
    structuredContent too (`as_structured`)."""

    is_error: bool
    texts: tuple[str, ...]
    structured: Json | None

    def as_text(self) -> tuple[tuple[str, ...], None]:
        return self.texts, None

    def as_structured(self) -> tuple[tuple[str, ...], Json | None]:
        """The texts beside structuredContent, as the MCP specification asks of a tool that
        returns structured content (the client asked for both)."""
        return self.texts, self.structured


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
        if SHOWN in param:
            schema[SHOWN] = param[SHOWN]
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
    return ToolOperation(
        name=op["operationId"], title=op.get("summary", op["operationId"]),
        description=_first_sentence(op.get("description", "")), input_schema=compact(input_schema, spec),
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


# What a tool's schema leaves to the service: bounds and lengths (a value out of range is refused
# with the field's name and its limits) and the contract's documentation keys.
LEFT_TO_THE_SERVICE = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "minProperties", "maxProperties", "pattern", "format", "title",
    "example", "readOnly", "writeOnly", "deprecated", "nullable"})
LONGEST_ENUM = 10  # a longer list of accepted values is said in the property's x-tool text instead
SHOWN = "x-tool"  # on a property: shown in tools' schemas, with this text (or none, when true)


def compact(schema: Json, spec: Json) -> Json:
    """A tool's input schema in the compact profile. Each argument keeps its type, its short text
    (its `x-tool` text, else the first sentence of its description) and its default; objects are
    inlined; an object whose properties the contract marks with `x-tool` shows those and its
    required ones, names the rest in its description ("More: ...") and accepts them (the service
    judges them as it judges any call)."""
    return _Compact(spec.get("components", {}).get("schemas", {})).node(copy.deepcopy(schema), 0, ())


@dataclass(frozen=True)
class _Compact:
    components: Json

    def node(self, node: Any, depth: int, inside: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self.node(v, depth, inside) for v in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            return self.inlined(node, depth, inside)
        out: Json = {}
        for key, value in node.items():
            if key in LEFT_TO_THE_SERVICE or key.startswith("x-") or key in ("required", "description"):
                continue
            if key == "enum" and len(value) > LONGEST_ENUM:
                continue
            if key == "properties" and isinstance(value, dict):
                out.update(_shown(node, value, lambda v: self.node(v, depth + 1, inside), top=depth == 0))
            elif key == "oneOf" and depth > 0:
                out.update(_name_or_object(node, [self.node(v, depth, inside) for v in value]))
            elif key not in out:  # what _shown or _name_or_object said stands
                out[key] = self.node(value, depth, inside)
        return _finished(node, out, depth)

    def inlined(self, node: Json, depth: int, inside: tuple[str, ...]) -> Json:
        """A reference as its component, with the referring property's own words over the
        component's."""
        ref = node["$ref"]
        name = ref.removeprefix(COMPONENTS)
        if not ref.startswith(COMPONENTS) or name not in self.components:
            raise ToolSpecError(f"reference to a missing component {name!r}")
        if name in inside:  # a component that holds itself: an object, described by the service
            return {"type": "object"}
        own = {k: v for k, v in node.items() if k != "$ref"}
        merged = {**self.components[name], **own}
        if "description" in own and SHOWN not in own:
            merged.pop(SHOWN, None)
        return self.node(merged, depth, (*inside, name))


def _finished(node: Json, out: Json, depth: int) -> Json:
    """The node's words, its required properties among those shown, and no
    `additionalProperties` where the others are accepted (JSON Schema's default)."""
    text = _text(node, depth)
    if text and "description" not in out:
        out["description"] = text
    if out.get("additionalProperties", False) is None:
        del out["additionalProperties"]
    if "required" in node:
        out["required"] = [name for name in node["required"] if name in out.get("properties", {})]
    return out


def _text(node: Json, depth: int) -> str:
    """A node's words in a tool: its x-tool text; none for `x-tool: true` or below the tool's
    own arguments; else its description's first sentence (past an "Omitted: ..." sentence
    where the tool gives a default)."""
    shown = node.get(SHOWN)
    if isinstance(shown, str):
        return shown
    if shown is True or depth > 1 or not node.get("description"):
        return ""
    return _first_sentence(_after_omitted(node["description"]) if "default" in node else node["description"])


def _shown(node: Json, properties: Json, walk: Any, *, top: bool) -> Json:
    """An object's properties as a tool shows them: all of them at the top (the tool's own
    arguments) or where the contract marks none; else the marked and the required ones, the
    others named in the object's description and accepted."""
    marked = {name for name, prop in properties.items() if isinstance(prop, dict) and SHOWN in prop}
    if top or not marked:
        return {"properties": {name: walk(prop) for name, prop in properties.items()}}
    kept = [name for name in properties if name in marked or name in node.get("required", ())]
    rest = [name for name in properties if name not in kept]
    out: Json = {"properties": {name: walk(properties[name]) for name in kept}}
    if rest:
        said = node.get(SHOWN) if isinstance(node.get(SHOWN), str) else _first_sentence(node.get("description", ""))
        out["description"] = (said + " " if said else "") + "More: " + ", ".join(rest) + "."
        out["additionalProperties"] = None  # the others are accepted: dropped by the caller
    return out


def _name_or_object(node: Json, branches: list[Json]) -> Json:
    """A name or an object (a model id or its figures): the contract's x-tool text says the
    shapes and the branches keep their types; without one, each object branch is one `{...}` in
    the text. The service judges the object's fields."""
    if isinstance(node.get(SHOWN), str):
        bare = [_bare(b) for b in branches]
        return {"oneOf": [b for i, b in enumerate(bare) if b not in bare[:i]], "description": node[SHOWN]}
    objects = [b for b in branches if b.get("type") == "object" and "properties" in b]
    if not objects:
        return {"oneOf": branches}
    said = _first_sentence(node.get("description", ""))
    shapes = " or ".join("{" + ", ".join(b["properties"]) + (", ..." if "additionalProperties" not in b else "") + "}"
                         for b in objects)
    kept = [b for b in branches if b not in objects]
    return {"oneOf": [*kept, {"type": "object"}], "description": f"{said.rstrip('.')}: {shapes}." if said else shapes}


def _bare(branch: Json) -> Json:
    """A branch by its type alone (an array by its items' type), when the text says its shape."""
    bare = {"type": branch.get("type", "object")}
    if bare["type"] == "array" and isinstance(branch.get("items"), dict):
        bare["items"] = {"type": branch["items"].get("type", "object")}
    return bare


def _after_omitted(text: str) -> str:
    """A parameter's text without its "Omitted: ..." sentence, where the tool gives a default (a
    tool call that leaves it out gets the default, not what the endpoint does without it)."""
    if text.startswith("Omitted:"):
        return text[len(_first_sentence(text)):].strip() or text
    return text


def _first_sentence(text: str) -> str:
    """The text up to its first full stop that ends a sentence (not "e.g." or "0.5")."""
    for i, char in enumerate(text):
        ends = i + 1 == len(text) or text[i + 1] == " "
        if char == "." and ends and not text[:i + 1].endswith(("e.g.", "i.e.")):
            return text[:i + 1]
    return text


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
    for), then the rest of the answer as JSON (the summary said once); a problem is a tool error
    led by its detail."""
    text = payload.decode("utf-8", errors="replace")
    decoded = _json(text) if "json" in content_type else None
    if status >= 400:
        problem = decoded if isinstance(decoded, dict) else {"status": status, "detail": text.strip()}
        shown = {k: problem[k] for k in ("status", "title", "detail", "errors") if k in problem}
        return ToolAnswer(is_error=True, texts=(_lead(problem, status), _compact(shown)), structured=shown)
    if decoded is None:
        return ToolAnswer(is_error=False, texts=(text,), structured=None)
    summary = decoded.get("summary") if isinstance(decoded, dict) else None
    if not (isinstance(summary, str) and summary):
        return ToolAnswer(is_error=False, texts=(_compact(decoded),),
                          structured=decoded if isinstance(decoded, dict) else None)
    rest = {k: v for k, v in decoded.items() if k != "summary"}
    return ToolAnswer(is_error=False, texts=(summary, _compact(rest)) if rest else (summary,), structured=decoded)


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
