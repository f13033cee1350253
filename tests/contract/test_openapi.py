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
