"""A client generated from openapi.yaml by openapi-python-client, as a caller would generate it,
calls the app in process and parses every answer: each operation with an example, whole, and the
operations that take `fields=`, sparse. A contract that a generated client cannot parse (it
failed with KeyError 'model' on sparse answers while every answer field was required) fails here."""

import importlib
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import attrs
import httpx
import pytest
import yaml

SPEC_PATH = Path(__file__).parents[2] / "openapi.yaml"
SPEC = yaml.safe_load(SPEC_PATH.read_text())
PACKAGE = "sizing_generated_client"
METHODS = {"get", "post", "put", "patch", "delete"}


def _operations() -> dict[str, tuple[str, str, dict]]:
    return {op["operationId"]: (method, path, op)
            for path, item in SPEC["paths"].items() for method, op in item.items() if method in METHODS}


OPERATIONS = _operations()


def _module_name(operation_id: str) -> str:
    """The generated module's name for an operation: its id in snake case (estimateGet: estimate_get)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", operation_id).lower()


def _json_answer(op: dict) -> str | None:
    """The component a 200 answers in JSON, or None for an operation that answers no JSON."""
    schema = op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema")
    return schema["$ref"].rsplit("/", 1)[1] if schema else None


def _example(op: dict):
    return op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")


# The GETs take no body to carry an example: their arguments, by operation id (the unversioned
# aliases take the same).
GET_ARGUMENTS = {
    "estimateGet": {"model": "llama-3.1-8b", "card": "h100-sxm"},
    "troubleshoot": {"q": "out of memory"},
    "listCards": {},
    "getCard": {"card_id": "h100-sxm"},
    "listModels": {},
    "getModel": {"model_id": "llama-3.1-8b"},
    "healthz": {},
    "readyz": {},
}


def _get_arguments(operation_id: str) -> dict | None:
    return GET_ARGUMENTS.get(operation_id.removesuffix("Unversioned"))


WHOLE = sorted(name for name, (_, _, op) in OPERATIONS.items()
               if _json_answer(op) and (_example(op) is not None or _get_arguments(name) is not None))

# fields= per operation: what each sparse call names (dotted below an estimate, or a list's entries).
# An operation that takes fields= and is not named here names what its tool asks for by default
# (x-tool-defaults), else its answer's first two fields.
ESTIMATE_FIELDS = ["summary,fit.fits,fit.cards_needed", "model.name,throughput.full_load.bound",
                   "memory.total_bytes_range.low,training.run,alternatives"]
SPARSE_FIELDS = {"estimate": ESTIMATE_FIELDS, "estimateGet": ESTIMATE_FIELDS[:1],
                 "estimateBatch": ESTIMATE_FIELDS[:1], "estimateSweep": ESTIMATE_FIELDS[:1],
                 "listCards": ["count,cards.id", "total,offset,cards.id,cards.memory_gib"],
                 "listModels": ["count,models.id", "total,models.id,models.params"]}
TAKES_FIELDS = sorted(name for name, (_, _, op) in OPERATIONS.items()
                      if any(p.get("name") == "fields" and p.get("in") == "query" for p in op.get("parameters", [])))
ITEMS_ANSWER = "BatchResponse"  # fields= shapes each item's estimate, not the answer around them


def _sparse_cases(operation_id: str) -> list:
    named = SPARSE_FIELDS.get(operation_id.removesuffix("Unversioned"))
    if named:
        return [pytest.param(operation_id, fields, id=f"{operation_id}-{fields}") for fields in named]
    op = OPERATIONS[operation_id][2]
    if "fields" in op.get("x-tool-defaults", {}):
        return [pytest.param(operation_id, op["x-tool-defaults"]["fields"], id=f"{operation_id}-tool-defaults")]
    fields = ",".join(list(SPEC["components"]["schemas"][_json_answer(op)]["properties"])[:2])
    return [pytest.param(operation_id, fields, id=f"{operation_id}-{fields}")]


SPARSE = [case for name in TAKES_FIELDS for case in _sparse_cases(name)]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated package, imported; generated once for the module, and forgotten after it."""
    root = tmp_path_factory.mktemp("generated")
    config = root / "config.json"
    config.write_text(json.dumps({"post_hooks": []}))  # no formatter runs: the code is imported, not read
    command = [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(SPEC_PATH),
               "--output-path", str(root / PACKAGE), "--meta", "none", "--config", str(config)]
    try:
        subprocess.run(command, check=True, timeout=120, capture_output=True, text=True)
    except subprocess.CalledProcessError as failed:
        pytest.fail(f"openapi-python-client could not generate a client from openapi.yaml:\n{failed.stdout}"
                    f"{failed.stderr}", pytrace=False)
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module(PACKAGE)
        api = importlib.import_module(f"{PACKAGE}.api")
        modules = {}
        for info in pkgutil.walk_packages(api.__path__, prefix=f"{PACKAGE}.api."):
            if not info.ispkg:
                module = importlib.import_module(info.name)
                modules[info.name.rsplit(".", 1)[1]] = module
        yield {"package": package, "modules": modules,
               "models": importlib.import_module(f"{PACKAGE}.models"),
               "types": importlib.import_module(f"{PACKAGE}.types")}
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def caller(generated, app):
    """The generated Client, its requests handed to the app in process (no socket)."""
    client = generated["package"].Client(base_url="http://testserver",
                                         httpx_args={"transport": httpx.WSGITransport(app=app)})
    with client as entered:
        yield entered


def _call(generated, caller, operation_id: str, **query):
    method, _, op = OPERATIONS[operation_id]
    module = generated["modules"][_module_name(operation_id)]
    arguments = dict(_get_arguments(operation_id) or {}) if method == "get" else {}
    example = _example(op)
    if example is not None:
        schema = op["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        arguments["body"] = getattr(generated["models"], schema).from_dict(example)
    return module.sync_detailed(client=caller, **arguments, **query)


def _expected_type(generated, operation_id: str):
    return getattr(generated["models"], _json_answer(OPERATIONS[operation_id][2]))


@pytest.mark.parametrize("operation_id", WHOLE)
def test_a_generated_client_parses_each_whole_answer(generated, caller, operation_id):
    response = _call(generated, caller, operation_id)
    answer = json.loads(response.content)
    assert response.status_code == 200, answer
    assert isinstance(response.parsed, _expected_type(generated, operation_id)), type(response.parsed)
    assert response.parsed.to_dict() == answer


def _set_fields(model, unset) -> set[str]:
    return {f.name for f in attrs.fields(type(model))
            if f.name != "additional_properties" and not isinstance(getattr(model, f.name), unset)}


def _assert_only(model, paths: list[str], unset) -> None:
    """`model` has the fields `paths` name (dotted for nested ones) set, and every other one unset."""
    below: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        below.setdefault(head, [])
        if rest:
            below[head].append(rest)
    assert _set_fields(model, unset) == set(below), type(model).__name__
    assert getattr(model, "additional_properties", {}) == {}  # a schema open to more keys kept none
    for head, rests in below.items():
        if not rests:
            continue
        value = getattr(model, head)
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                _assert_only(item, rests, unset)


@pytest.mark.parametrize(("operation_id", "fields"), SPARSE)
def test_a_generated_client_parses_each_sparse_answer(generated, caller, operation_id, fields):
    response = _call(generated, caller, operation_id, fields=fields)
    answer = json.loads(response.content)
    assert response.status_code == 200, answer
    parsed = response.parsed
    assert isinstance(parsed, _expected_type(generated, operation_id)), type(parsed)
    assert parsed.to_dict() == answer
    unset = generated["types"].Unset
    if _json_answer(OPERATIONS[operation_id][2]) == ITEMS_ANSWER:
        estimates = [item.estimate for item in parsed.items if item.ok]
        assert estimates
        for estimate in estimates:
            _assert_only(estimate, fields.split(","), unset)
    else:
        _assert_only(parsed, fields.split(","), unset)


def test_every_operation_that_answers_json_is_called():
    """A new operation answering JSON needs an example body, or arguments here, to be called above."""
    assert {name for name, (_, _, op) in OPERATIONS.items() if _json_answer(op)} == set(WHOLE)
    assert set(SPARSE_FIELDS) <= {name.removesuffix("Unversioned") for name in TAKES_FIELDS}, "fields= gone"


def test_a_generated_client_and_a_plain_request_get_the_same_answer_when_no_precision_is_given(
        generated, caller, app):
    """The contract once declared precision=bf16 as GET /estimate's default, which a generated
    client sends: gpt-oss-20b on one RTX 4090 then needed 2 cards (bf16) through the client and fit
    (mxfp4, its released format) through curl. Declared defaults are the service's own."""
    query = {"model": "gpt-oss-20b", "card": "rtx-4090", "count": 1}
    generated_answer = generated["modules"]["estimate_get"].sync_detailed(client=caller, **query)
    plain = app.test_client().get("/v1/estimate", query_string=query).get_json()
    through_client = json.loads(generated_answer.content)
    assert generated_answer.status_code == 200
    # the client sends the declared defaults it knows (mode=inference, ...), which assumptions
    # then call given rather than defaulted; every figure is the same
    assert {k: v for k, v in through_client.items() if k != "assumptions"} == \
        {k: v for k, v in plain.items() if k != "assumptions"}
    assert plain["precision"] == "mxfp4" and plain["fit"]["fits"] is True
