"""openapi.yaml is written for tool-calling clients: this lint keeps it that way, and the
mutation tests prove the lint catches each broken rule."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from service.tools import TOOL_MARK, ToolSpecError, tools_from_spec

SPEC = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text())
OPERATION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
WHEN = ("Use ", "For ")
# How an operation answers: units for numbers, or the format for the rest.
UNITS = ("bytes", "GB", "GiB", "tokens/s", "FLOP", "TFLOP", " s,", " s)", "in s", " W", "kWh", "GB/s",
         "0-100", "per year", "JSON", "YAML", "HTML", "SVG", "CSV", "text", "dense")
METHODS = ("get", "post", "put", "patch", "delete")


def operations(spec):
    """Every current operation (a deprecated one is its /v1 twin marked, which test_versioned
    checks, and is no tool)."""
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method in METHODS and not op.get("deprecated"):
                yield path, method, op


def lint(spec) -> list[str]:
    """Every rule a chatbot relies on; the problems found, empty when the spec keeps them."""
    problems, seen = [], set()
    for path, method, op in operations(spec):
        where = f"{method.upper()} {path}"
        op_id = op.get("operationId", "")
        if not OPERATION_ID.match(op_id):
            problems.append(f"{where}: operationId {op_id!r} is not letters, digits, _ and - (<= 64)")
        if op_id in seen:
            problems.append(f"{where}: operationId {op_id!r} is used twice")
        seen.add(op_id)
        description = op.get("description", "")
        if not description or len(description) >= 300:
            problems.append(f"{where}: description must be present and under 300 characters")
        if not description.startswith(WHEN):
            problems.append(f"{where}: description must say when to use it ('Use ...' or 'For ...')")
        if not any(unit in description for unit in UNITS):
            problems.append(f"{where}: description must say in which units (or format) it answers")
        for param in op.get("parameters", []):
            schema = param.get("schema", {})
            if schema.get("type") in ("object", "array"):
                problems.append(f"{where}: parameter {param['name']} is not flat")
            if not param.get("required") and "default" not in schema and \
                    not param.get("description", "").startswith("Omitted"):
                problems.append(f"{where}: optional parameter {param['name']} has no default")
        answers = op.get("responses", {}).get("200", {}).get("content", {})
        if op.get(TOOL_MARK) and "application/json" not in answers:
            problems.append(f"{where}: a tool must answer application/json")
    try:
        tools_from_spec(spec)  # what the MCP server lists: each marked operation must make a tool
    except ToolSpecError as exc:
        problems.append(f"tools: {exc}")
    return problems


def test_the_spec_keeps_every_rule():
    assert lint(SPEC) == []


def _op(spec, path, method):
    return spec["paths"][path][method]


@pytest.mark.parametrize(
    ("break_it", "finding"),
    [
        (lambda s: _op(s, "/v1/estimate", "post").update(operationId="estimate the whole thing"), "operationId"),
        (lambda s: _op(s, "/v1/memory", "post").update(operationId="estimate"), "used twice"),
        (lambda s: _op(s, "/v1/cost", "post").update(description="Use it. " + "x" * 300), "300"),
        (lambda s: _op(s, "/v1/cost", "post").update(description="Electricity per year in kWh."), "when to use"),
        (lambda s: _op(s, "/v1/rank", "post").update(description="Use to rank cards."), "units"),
        (lambda s: _op(s, "/v1/estimate", "get")["parameters"][3]["schema"].pop("default"), "no default"),
        (lambda s: _op(s, "/v1/estimate", "get")["parameters"][2].update(description="How many."), "no default"),
        (lambda s: _op(s, "/v1/estimate", "get")["parameters"][0]["schema"].update(type="object"), "not flat"),
        (lambda s: _op(s, "/v1/plots/roofline.svg", "get").update({TOOL_MARK: True}), "a tool must answer"),
        (lambda s: _op(s, "/v1/memory", "post").update(parameters=[{"name": "model", "in": "query", "required": True,
                                                                  "schema": {"type": "string"}}]), "tools:"),
    ],
    ids=["bad-operation-id", "duplicate-id", "long-description", "no-when", "no-units",
         "no-default", "undocumented-omission", "nested-parameter", "tool-not-json", "tool-name-clash"],
)
def test_the_lint_fails_when_a_rule_is_broken(break_it, finding):
    broken = copy.deepcopy(SPEC)
    break_it(broken)
    assert any(finding in problem for problem in lint(broken))


def test_get_estimate_takes_the_flat_parameters_chatbots_send():
    names = {p["name"] for p in _op(SPEC, "/v1/estimate", "get")["parameters"]}
    assert {"model", "card", "count", "mode", "precision", "context_tokens", "batch_size", "lang"} <= names
