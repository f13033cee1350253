"""openapi.yaml is the contract: it validates, and the app's routes and schemas equal it."""

import difflib
import re
from pathlib import Path

import yaml
from openapi_spec_validator import validate

from service.api import spec

SPEC_PATH = Path(__file__).parents[2] / "openapi.yaml"
SPEC = yaml.safe_load(SPEC_PATH.read_text())
METHODS = {"get", "post", "put", "patch", "delete"}


def test_spec_validates_as_openapi_3_1():
    assert SPEC["openapi"].startswith("3.1")
    validate(SPEC)


def _app_routes(app) -> set[tuple[str, str]]:
    routes = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or (rule.endpoint == "docs.show" and "<" in rule.rule):
            continue  # the docs page's bundled assets are not operations
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule).rstrip("/") or "/"
        routes |= {(path, m.lower()) for m in rule.methods if m.lower() in METHODS}
    return routes


def test_paths_and_methods_equal_the_apps_routes(app):
    in_spec = {(path, m) for path, ops in SPEC["paths"].items() for m in ops if m in METHODS}
    assert in_spec == _app_routes(app)


def test_the_committed_spec_is_generated_from_the_schemas():
    """components.schemas is `make spec`'s output: a field declared on an answer dataclass or a
    request schema and not regenerated fails here, with the diff."""
    current = SPEC_PATH.read_text()
    wanted = spec.render(current)
    diff = "".join(difflib.unified_diff(current.splitlines(keepends=True), wanted.splitlines(keepends=True),
                                        "openapi.yaml", "make spec", n=1))
    assert not diff, f"openapi.yaml is stale; run `make spec`:\n{diff[:4000]}"


def test_every_answer_and_request_schema_is_a_component():
    assert set(spec.schema_classes()) == set(SPEC["components"]["schemas"])


def test_a_stale_spec_is_caught_with_its_diff(capsys, tmp_path, monkeypatch):
    stale = tmp_path / "openapi.yaml"
    stale.write_text(SPEC_PATH.read_text().replace("          description: Model width.\n", "", 1))
    monkeypatch.setattr(spec, "SPEC_PATH", stale)
    assert spec.main(["--check"]) == 1
    assert "+          description: Model width." in capsys.readouterr().out


def test_the_served_spec_is_the_file(client):
    response = client.get("/openapi.yaml")
    assert response.status_code == 200
    assert yaml.safe_load(response.get_data(as_text=True)) == SPEC


def _answer_components() -> set[str]:
    """Every component an operation's responses reach, through any depth of $ref."""
    def refs(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "$ref" and item.startswith("#/components/schemas/"):
                    yield item.rsplit("/", 1)[1]
                else:
                    yield from refs(item)
        elif isinstance(value, list):
            for item in value:
                yield from refs(item)

    components = SPEC["components"]["schemas"]
    todo = [name for item in SPEC["paths"].values() for op in item.values() if isinstance(op, dict)
            for name in refs(op.get("responses", {}))]
    todo += [name for response in SPEC["components"].get("responses", {}).values() for name in refs(response)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(refs(components[name]))
    return seen


def test_every_answer_field_has_a_description():
    """As vLLM's config check requires a docstring of every engine argument: a field a caller
    reads says what it is (written under the dataclass field, or in a hand-written schema's
    metadata), or this fails naming it."""
    components = SPEC["components"]["schemas"]
    answers = _answer_components()
    assert {"EstimateResponse", "Throughput", "Message", "Problem"} <= answers
    bare = [f"{name}.{field}" for name in sorted(answers)
            for field, schema in components[name].get("properties", {}).items() if not schema.get("description")]
    assert not bare, f"{len(bare)} answer fields without a description: {', '.join(bare[:20])}"
