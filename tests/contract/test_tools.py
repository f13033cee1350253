"""The tools assistants see are the contract's operations marked `x-tool`: names, descriptions and
input schemas come from openapi.yaml and nowhere else."""

import copy
import json

import jsonschema
import pytest

from service.tools import (
    ToolArgumentError,
    ToolSpecError,
    compact,
    request_for,
    tool_answer,
    tools_from_spec,
)
from tests.contract.test_spec_lint import SPEC, operations

TOOLS = {tool.name: tool for tool in tools_from_spec(SPEC)}
MARKED = {op["operationId"]: (path, method, op) for path, method, op in operations(SPEC) if op.get("x-tool")}


def test_every_operation_marked_for_tools_is_a_tool_with_the_operations_own_words():
    """The title is the operation's summary, the description its first sentence: when to use it."""
    assert TOOLS.keys() == MARKED.keys()
    for name, (path, method, op) in MARKED.items():
        tool = TOOLS[name]
        assert tool.title == op["summary"]
        assert tool.description.startswith("Use ") and tool.description.endswith(".")
        assert op["description"].startswith(tool.description) and len(tool.description) < len(op["description"])
        assert (tool.method, tool.path) == (method.upper(), path)


def test_the_tools_answer_the_questions_a_buyer_asks():
    assert TOOLS.keys() == {"estimate", "memory", "cost", "capacity", "compare", "recommend", "rankCards",
                            "normalizeFigure", "troubleshoot", "listCards", "getCard", "listModels", "getModel"}
    # one tool per question: the flat GET twin of estimate, the dashboards' batch and sweep, plots
    # and the operators' endpoints are not tools; nor are throughput and scaling, whose answers the
    # estimate tool gives (fields=throughput, training.run) and compare sizes for a deadline
    assert not {"estimateGet", "estimateBatch", "estimateSweep", "plotRoofline", "healthz", "metrics",
                "throughput", "scaling"} & TOOLS.keys()


def test_marking_a_new_operation_makes_it_a_tool_without_code():
    spec = copy.deepcopy(SPEC)
    spec["paths"]["/v1/estimate/batch"]["post"]["x-tool"] = True
    spec["paths"]["/v1/questions/new"] = {"post": {
        "operationId": "newQuestion", "summary": "A new question", "x-tool": True,
        "description": "Use for a question asked tomorrow; answers memory in bytes.",
        "parameters": [{"name": "detail", "in": "query", "schema": {"type": "string", "default": "short"}}],
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/MemoryRequest"}}}},
        "responses": {"200": {"content": {"application/json": {}}}}}}
    tools = {tool.name: tool for tool in tools_from_spec(spec)}
    assert tools.keys() == TOOLS.keys() | {"estimateBatch", "newQuestion"}
    new = tools["newQuestion"]
    assert new.description == "Use for a question asked tomorrow; answers memory in bytes."
    assert {"detail", "lang", "model", "hardware", "workload"} <= new.input_schema["properties"].keys()
    assert new.input_schema["properties"]["model"]["oneOf"] == [{"type": "string"}, {"type": "object"}]
    assert tools["estimateBatch"].input_schema["required"] == ["items"]


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_input_schema_is_json_schema_that_stands_alone(name):
    schema = TOOLS[name].input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema  # every component inlined
    assert schema["type"] == "object" and schema["additionalProperties"] is False


def _typed(node):
    """Every schema node says its type, or each of its branches does."""
    if "oneOf" in node:
        return all(_typed(branch) for branch in node["oneOf"])
    return "type" in node and all(_typed(p) for p in node.get("properties", {}).values())


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_argument_says_its_type(name):
    """Clients that build a call from the types (the MCP Inspector CLI sends `hardware={...}` as a
    string otherwise, "Invalid input type") see every argument and nested property typed."""
    for prop, said in TOOLS[name].input_schema["properties"].items():
        assert _typed(said), (name, prop, said)


def test_the_whole_tool_list_is_what_an_assistant_can_afford():
    """tools/list was 97-107 KB (about 25,000 tokens in every conversation); the compact profile
    keeps it under 20 KB (tests/api/test_mcp.py measures the protocol's own reply)."""
    listed = [{"name": t.name, "title": t.title, "description": t.description, "inputSchema": t.input_schema}
              for t in TOOLS.values()]
    assert len(json.dumps(listed, separators=(",", ":"))) < 19_000


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_contracts_example_and_its_hidden_fields_are_valid_tool_inputs(name):
    """The compact schema accepts what the service accepts: the operation's example, and the
    properties an object names under "More" rather than showing."""
    path, method, op = MARKED[name]
    schema = TOOLS[name].input_schema
    example = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")
    validator = jsonschema.Draft202012Validator(schema)
    if example is not None:
        validator.validate(example)
    if "workload" in schema["properties"]:
        said = schema["properties"]["workload"]
        assert "More: kv_precision" in said["description"] and "mfu" not in said["properties"]
        needed = {k: "x" for k in schema.get("required", ())} | {"hardware": {"card": "c"}, "options": [{"card": "c"}],
                                                                 "target": {"concurrent_users": 1}}
        call = {k: v for k, v in needed.items() if k in schema["properties"]}
        validator.validate({**call, "workload": {"mfu": 0.5, "parallelism": {"tensor": 2}}})


def _component(name, properties, **rest):
    return {"type": "object", "description": f"The {name}. Its second sentence.", "properties": properties, **rest}


def test_the_compact_profile_shows_what_the_contract_marks_and_names_the_rest():
    """An object whose properties carry `x-tool` shows those and its required ones, names the
    others under "More" and accepts them; `x-tool: true` shows no text, a string is the text; an
    object with no marks shows every property; bounds and long value lists are left to the
    service; a component that holds itself ends in a plain object."""
    spec = {"components": {"schemas": {
        "Big": _component("big", {
            "shown": {"type": "integer", "minimum": 1, "description": "Long words, e.g. these. More.", "x-tool": True},
            "said": {"type": "string", "description": "Long.", "x-tool": "short"},
            "needed": {"type": "number", "description": "Needed."},
            "hidden": {"type": "number", "description": "Hidden."},
            "many": {"type": "string", "enum": [str(i) for i in range(11)], "description": "Many."}},
            required=["needed"], additionalProperties=False),
        "Small": _component("small", {"a": {"type": "number", "description": "A."}, "me": {"$ref": "#/components/schemas/Small"}},
                            additionalProperties=False)}}}
    made = compact({"type": "object", "additionalProperties": False, "properties": {
        "big": {"$ref": "#/components/schemas/Big"},
        "small": {"$ref": "#/components/schemas/Small", "description": "Its own words, e.g. these. Not these."},
        "page": {"type": "integer", "default": 25, "description": "Omitted: every one. At most this many."}}}, spec)
    big, small = made["properties"]["big"], made["properties"]["small"]
    assert big == {"type": "object", "description": "The big. More: hidden, many.",
                   "properties": {"shown": {"type": "integer"}, "said": {"type": "string", "description": "short"},
                                  "needed": {"type": "number"}},
                   "required": ["needed"]}
    assert small == {"type": "object", "description": "Its own words, e.g. these.", "additionalProperties": False,
                     "properties": {"a": {"type": "number"}, "me": {"type": "object"}}}
    assert made["properties"]["page"] == {"type": "integer", "default": 25, "description": "At most this many."}
    assert jsonschema.Draft202012Validator(made).is_valid({"big": {"needed": 1, "hidden": 2, "many": "10"}})


def test_an_input_the_contract_refuses_the_tool_schema_refuses_too():
    schema = TOOLS["estimate"].input_schema
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid({"model": "llama-3.1-8b"})  # hardware is required
    assert not validator.is_valid({"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "colour": "red"})
    assert validator.is_valid({"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "fields": "summary"})


@pytest.mark.parametrize(
    ("name", "arguments", "path", "query", "body"),
    [
        ("estimate", {"model": "m", "hardware": {"card": "c"}, "fields": "summary,fits"},
         "/v1/estimate", {"fields": "summary,fits"}, {"model": "m", "hardware": {"card": "c"}}),
        ("estimate", None, "/v1/estimate", dict(TOOLS["estimate"].defaults), {}),  # a call naming nothing: the defaults
        ("getCard", {"card_id": "H100 SXM/80GB"}, "/v1/cards/H100%20SXM%2F80GB", {}, None),
        ("troubleshoot", {"q": "out of memory", "limit": 3}, "/v1/troubleshoot", {"q": "out of memory", "limit": "3"}, None),
        ("listCards", {"min_memory_gib": 80.0, "line": "datacenter", "limit": 5, "fields": "cards.id"}, "/v1/cards",
         {"min_memory_gib": "80.0", "line": "datacenter", "limit": "5", "fields": "cards.id"}, None),
        ("listModels", {"limit": 100, "fields": "models"}, "/v1/models", {"limit": "100", "fields": "models"}, None),
    ],
)
def test_a_call_becomes_the_operations_request(name, arguments, path, query, body):
    req = request_for(TOOLS[name], arguments)
    assert (req.method, req.path, req.query, req.body) == (TOOLS[name].method, path, query, body)


def test_a_booleans_query_value_is_written_as_json_writes_it():
    req = request_for(TOOLS["troubleshoot"], {"q": "oom", "limit": 2, "line": True})
    assert req.query == {"q": "oom", "limit": "2", "line": "true"}


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("getCard", {}, "getCard needs 'card_id'"),
        ("getModel", {"model_id": "x", "colour": "red"}, "does not take 'colour'; it takes model_id, lang"),
        ("listModels", {"q": "x"}, "it takes limit, offset, lang, fields"),
        # what str() would silently turn into other text, or a URL would resolve away
        ("troubleshoot", {"q": None}, "q takes one string, number or boolean, not null"),
        ("troubleshoot", {"q": ["oom", "xid"]}, "not an array"),
        ("listCards", {"line": {"is": "datacenter"}}, "not an object"),
        ("estimate", {"fields": ["summary", "fits"]}, "a list of fields is one string, comma-separated"),
        ("getCard", {"card_id": ""}, "card_id must name something, not ''"),
        ("getCard", {"card_id": "."}, "not '.'"),
        ("getModel", {"model_id": " .. "}, "not ' .. '"),
        # what the service's strict JSON could not read
        ("estimate", {"model": "x", "hardware": {"count": float("inf")}}, "a number JSON cannot carry"),
        ("estimate", {"model": "x", "workload": {"context_tokens": float("nan")}}, "a number JSON cannot carry"),
        ("troubleshoot", {"q": "\ud800"}, "not valid Unicode"),
    ],
)
def test_arguments_that_fit_no_request_are_refused_with_what_the_tool_takes(name, arguments, message):
    with pytest.raises(ToolArgumentError, match=message):
        request_for(TOOLS[name], arguments)


PROBLEM = {"type": "about:blank", "title": "Unprocessable Content", "status": 422, "request_id": "r1",
           "detail": "unknown card 'x'; closest: rtx-4090", "errors": [{"field": "hardware.card", "message": "unknown card 'x'; closest: rtx-4090"}]}


@pytest.mark.parametrize(
    ("status", "content_type", "payload", "is_error", "texts", "structured"),
    [
        (200, "application/json", {"summary": "Es passt.", "fits": True}, False,
         ("Es passt.", '{"fits":true}'), {"summary": "Es passt.", "fits": True}),
        (200, "application/json", {"summary": "放得下", "n": 1}, False,
         ("放得下", '{"n":1}'), {"summary": "放得下", "n": 1}),
        (200, "application/json", {"summary": "Only this."}, False, ("Only this.",), {"summary": "Only this."}),
        (200, "application/json", {"count": 0, "cards": []}, False, ('{"count":0,"cards":[]}',),
         {"count": 0, "cards": []}),
        (200, "application/json", [1, 2], False, ("[1,2]",), None),
        (422, "application/problem+json", PROBLEM, True,
         ("unknown card 'x'; closest: rtx-4090", json.dumps({k: PROBLEM[k] for k in ("status", "title", "detail", "errors")},
                                                            separators=(",", ":"))),
         {k: PROBLEM[k] for k in ("status", "title", "detail", "errors")}),
        (502, "text/html", "<h1>Bad Gateway</h1>", True,
         ("<h1>Bad Gateway</h1>", '{"status":502,"detail":"<h1>Bad Gateway</h1>"}'),
         {"status": 502, "detail": "<h1>Bad Gateway</h1>"}),
    ],
    ids=["summary-first", "chinese-kept", "summary-alone", "no-summary", "not-an-object", "problem", "not-json-error"],
)
def test_an_answer_becomes_a_tool_result_led_by_its_summary(status, content_type, payload, is_error, texts, structured):
    raw = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    answer = tool_answer(status, content_type, raw.encode("utf-8"))
    assert (answer.is_error, answer.texts, answer.structured) == (is_error, texts, structured)


def test_a_result_carries_the_answer_once_as_text_or_beside_structured_content():
    """Text (the default) is what assistants read: the summary, then the rest as JSON, and no
    structuredContent. A server asked for structuredContent gives it beside the same texts, as
    the MCP specification asks of structured results."""
    answer = tool_answer(200, "application/json", b'{"summary":"It fits.","fit":{"fits":true}}')
    assert answer.as_text() == (("It fits.", '{"fit":{"fits":true}}'), None)
    assert answer.as_structured() == (("It fits.", '{"fit":{"fits":true}}'), {"summary": "It fits.", "fit": {"fits": True}})
    listed = tool_answer(200, "application/json", b"[1,2]")
    assert listed.as_structured() == (("[1,2]",), None)  # not an object: no structuredContent to carry it


def test_a_problems_lead_adds_each_fields_message_the_detail_does_not_say():
    problem = {"status": 422, "title": "Unprocessable Content", "detail": "Invalid input: fields, lang.",
               "errors": [{"field": "fields", "message": "no field 'x'"}, {"field": "lang", "message": "en or zh"}]}
    answer = tool_answer(422, "application/problem+json", json.dumps(problem).encode())
    assert answer.texts[0] == "Invalid input: fields, lang.\n- fields: no field 'x'\n- lang: en or zh"


def _mark(path, method):
    spec = copy.deepcopy(SPEC)
    spec["paths"][path][method]["x-tool"] = True
    return spec


@pytest.mark.parametrize(
    ("spec", "finding"),
    [
        (lambda: _mark("/v1/plots/roofline.svg", "get"), None),  # no body: a tool, but the lint refuses SVG
        (lambda: _with(_mark("/v1/memory", "post"), "/v1/memory", "post",
                       parameters=[{"name": "model", "in": "query", "schema": {"type": "string"}}]),
         "body field 'model' has the name of a parameter"),
        (lambda: _with(_mark("/v1/memory", "post"), "/v1/memory", "post",
                       requestBody={"content": {"text/csv": {"schema": {"type": "string"}}}}),
         "must be application/json"),
        (lambda: _with(_mark("/v1/memory", "post"), "/v1/memory", "post",
                       requestBody={"content": {"application/json": {"schema": {"type": "array"}}}}),
         "must be an object with properties"),
        (lambda: _with(_mark("/v1/memory", "post"), "/v1/memory", "post",
                       requestBody={"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Nope"}}}}),
         "Nope"),
        (lambda: _with(_mark("/v1/memory", "post"), "/v1/memory", "post", **{"x-tool-defaults": {"limit": 5}}),
         "x-tool-defaults names 'limit', which is not a parameter"),
    ],
    ids=["svg-is-lint", "name-clash", "not-json", "not-object", "missing-component", "default-for-nothing"],
)
def test_an_operation_that_cannot_be_a_tool_is_named(spec, finding):
    if finding is None:
        assert "plotRoofline" in {tool.name for tool in tools_from_spec(spec())}
        return
    with pytest.raises(ToolSpecError, match=finding):
        tools_from_spec(spec())


def _with(spec, path, method, **changes):
    spec["paths"][path][method].update(changes)
    return spec



@pytest.mark.parametrize(("name", "entries"), [("listCards", "cards"), ("listModels", "models")])
def test_a_listing_tool_answers_a_compact_page_unless_asked_for_more(app, name, entries):
    """listCards answered 210 KB and listModels 160 KB, which an assistant pays on every call: by
    default a tool call gets 25 entries of a few fields (under 8 KB), and says so in its schema;
    an argument given replaces the default (`cards` in fields for whole entries)."""
    tool = TOOLS[name]
    assert tool.input_schema["properties"]["limit"]["default"] == 25
    client = app.test_client()

    def call(arguments):
        req = request_for(tool, arguments)
        return client.get(req.path, query_string=req.query)

    page = call({})
    assert page.status_code == 200 and len(page.get_data()) < 8_000
    answer = page.get_json()
    assert answer["count"] == 25 < answer["total"] and set(answer[entries][0]) >= {"id", "name"}
    rest = call({"offset": 25, "limit": 100}).get_json()
    assert rest["offset"] == 25 and rest["count"] == answer["total"] - 25
    whole = call({"fields": f"count,{entries}", "limit": 2}).get_json()
    assert whole["count"] == 2 and "source" in whole[entries][0]


def test_an_estimate_tool_call_answers_the_summary_and_headline_figures_unless_asked_for_more(app):
    """A full estimate is 17-28 KB, which an assistant pays on every call: a call that names no
    fields gets the summary and the headline figures, a few KB; fields names more."""
    tool, client = TOOLS["estimate"], app.test_client()
    question = {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090", "count": 2}}

    def call(arguments):
        req = request_for(tool, arguments)
        return client.post(req.path, query_string=req.query, json=req.body)

    headline = call(question)
    assert headline.status_code == 200 and len(headline.get_data()) < 5_000
    assert {"summary", "fit", "throughput", "energy"} <= headline.get_json().keys()
    more = call({**question, "fields": "summary,alternatives,memory"}).get_json()
    assert set(more) == {"summary", "alternatives", "memory"} and more["alternatives"]
    assert "fields" in tool.input_schema["properties"] and tool.input_schema["properties"]["fields"]["default"]


@pytest.mark.parametrize(("name", "arguments"), [
    ("capacity", {"model": "qwen2.5-72b", "target": {"concurrent_users": 50}, "cards": ["h20", "l20", "h100-sxm", "rtx-4090"]}),
    ("compare", {"model": "qwen2.5-72b", "target": {"concurrent_users": 50},
                 "options": [{"card": "h20"}, {"card": "l20"}, {"card": "h100-sxm"}, {"card": "rtx-4090"}]}),
    ("rankCards", {"line": "consumer", "model": "llama-3.1-8b"}),
])
def test_the_decision_tools_answer_the_summary_and_headline_figures_unless_asked_for_more(app, name, arguments):
    """capacity answered 16 KB for four cards (370 KB for the catalog), compare 8 KB for three
    options (73 KB for a line), rankCards 53 KB: a call that names no fields gets the summary and
    each option's headline figures; fields names more."""
    tool, client = TOOLS[name], app.test_client()

    def call(args):
        req = request_for(tool, args)
        return client.post(req.path, query_string=req.query, json=req.body)

    headline = call(arguments)
    whole = call({**arguments, "fields": "summary,ranking,excluded" if name == "rankCards" else "summary,options"})
    assert headline.status_code == whole.status_code == 200
    assert len(headline.get_data()) < 5_000 < len(whole.get_data())
    assert headline.get_json()["summary"] == whole.get_json()["summary"]
