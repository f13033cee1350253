"""openapi.yaml is the contract: it validates, and the app's routes and schemas equal it."""

import re
from pathlib import Path

import pytest
import yaml
from openapi_spec_validator import validate

from .oracle import generated_components

SPEC = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text())
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


def _shape(prop: dict) -> dict:
    """What the contract fixes of a property: its types, bounds, references and item shapes."""
    out: dict = {}
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in prop:
            out[key] = float(prop[key])
    if "type" in prop:
        types = prop["type"]
        out["type"] = sorted(types) if isinstance(types, list) else [types]
    for key in ("$ref",):
        if key in prop:
            out[key] = prop[key]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in prop:
            out[key] = sorted((_shape(p) for p in prop[key]), key=repr)
    if isinstance(prop.get("items"), dict):
        out["items"] = _shape(prop["items"])
    if isinstance(prop.get("additionalProperties"), dict):
        out["additionalProperties"] = _shape(prop["additionalProperties"])
    return out


ORACLE = generated_components()


def test_every_schema_has_a_component_and_no_component_is_orphaned():
    assert set(ORACLE) == set(SPEC["components"]["schemas"])


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_component_equals_its_marshmallow_schema(name):
    expected, actual = ORACLE[name], SPEC["components"]["schemas"][name]
    assert set(actual.get("properties", {})) == set(expected.get("properties", {})), name
    assert sorted(actual.get("required", [])) == sorted(expected.get("required", [])), name
    assert actual.get("additionalProperties", True) == expected.get("additionalProperties", True)
    for prop, schema in expected.get("properties", {}).items():
        assert _shape(actual["properties"][prop]) == _shape(schema), f"{name}.{prop}"


def test_the_served_spec_is_the_file(client):
    response = client.get("/openapi.yaml")
    assert response.status_code == 200
    assert yaml.safe_load(response.get_data(as_text=True)) == SPEC
