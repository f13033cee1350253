"""What operators see: the docs page offers API keys only where the service checks them."""

import json
import re
from pathlib import Path

import pytest
import yaml

from service.api import ops
from service.app import create_app

SPEC = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text())
CONFIG = re.compile(r"var user_config = (.*?);\s*// User config", re.S)


def page_config(client, url: str = "/docs") -> dict:
    """The Swagger UI configuration the docs page hands the browser."""
    response = client.get(url)
    assert response.status_code == 200
    return json.loads(CONFIG.search(response.get_data(as_text=True)).group(1))


def requirements(spec: dict) -> list:
    """Every security requirement: the global one and each operation's."""
    found = [spec["security"]] if "security" in spec else []
    return found + [op["security"] for item in spec["paths"].values() for op in item.values()
                    if isinstance(op, dict) and op.get("security")]


@pytest.fixture()
def open_client():
    return create_app({"TESTING": True, "API_KEYS": ()}).test_client()


@pytest.fixture()
def keyed_client():
    return create_app({"TESTING": True, "API_KEYS": ("k1-test-key-0000000000000000000000",)}).test_client()


@pytest.mark.parametrize("url", ["/docs", "/docs/", "/docs/index.html"])
def test_without_keys_the_docs_page_declares_no_security(open_client, url):
    spec = page_config(open_client, url)["spec"]
    assert "security" not in spec and "securitySchemes" not in spec["components"]
    assert requirements(spec) == []
    # Everything else is the contract as written: the same operations, schemas and answers.
    assert spec["paths"].keys() == SPEC["paths"].keys()
    assert spec["components"]["schemas"] == SPEC["components"]["schemas"]
    assert spec["paths"]["/estimate"]["post"]["responses"] == SPEC["paths"]["/estimate"]["post"]["responses"]


def test_with_keys_the_docs_page_loads_the_contract_with_its_security(keyed_client):
    config = page_config(keyed_client)
    assert config["url"] == "/openapi.yaml" and "spec" not in config
    response = keyed_client.get("/openapi.yaml")  # public: the page loads it without a key
    assert response.status_code == 200
    served = yaml.safe_load(response.get_data(as_text=True))
    assert served["security"] and {"bearerKey", "apiKey"} <= served["components"]["securitySchemes"].keys()


def test_the_served_contract_is_the_file_either_way(open_client, keyed_client):
    for client in (open_client, keyed_client):
        assert yaml.safe_load(client.get("/openapi.yaml").get_data(as_text=True)) == SPEC


def test_the_inline_contract_cannot_close_the_pages_script(open_client, monkeypatch):
    hostile = {"info": {"description": "</script><script>alert(1)</script>"}, "paths": {}}
    monkeypatch.setattr(ops, "open_spec", lambda: hostile)
    html = open_client.get("/docs").get_data(as_text=True)
    assert "alert(1)</script>" not in html
    assert json.loads(CONFIG.search(html).group(1))["spec"] == hostile
