"""The API's paths carry its major version; the unversioned 0.x paths answer the same, deprecated."""

import re
from pathlib import Path

import pytest
import yaml

import service
from service.api import spec

from .support import ok

ROOT = Path(__file__).parents[2]
SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text())

QUESTIONS = [
    ("post", "/estimate", {"json": {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}}),
    ("get", "/estimate", {"query_string": {"model": "qwen2.5-7b", "card": "l40s", "lang": "zh"}}),
    ("post", "/recommend", {"json": {"scenario": "developer"}}),
    ("get", "/cards/h100-sxm", {}),
    ("get", "/troubleshoot", {"query_string": {"q": "out of memory"}}),
]


def _without_request_id(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k != "request_id"}


@pytest.mark.parametrize(("method", "path", "kwargs"), QUESTIONS)
def test_an_unversioned_path_answers_as_v1_and_says_it_is_deprecated(client, method, path, kwargs):
    current = getattr(client, method)(f"/v1{path}", **kwargs)
    old = getattr(client, method)(path, **kwargs)
    assert _without_request_id(ok(old)) == _without_request_id(ok(current))
    assert "Deprecation" not in current.headers
    assert re.fullmatch(r"@\d+", old.headers["Deprecation"])
    assert old.headers["Link"] == f'</v1{path}>; rel="successor-version"'


def test_probes_and_the_contract_stay_unversioned_and_current(client):
    for path in ("/healthz", "/readyz", "/openapi.yaml"):
        response = client.get(path)
        assert response.status_code == 200 and "Deprecation" not in response.headers
        assert client.get(f"/v1{path}").status_code == 404


def test_every_deprecated_operation_is_its_v1_operation_marked():
    paths = SPEC["paths"]
    deprecated = {(p, m): op for p, item in paths.items() for m, op in item.items() if op.get("deprecated")}
    assert len(deprecated) == sum(len(item) for p, item in paths.items() if p.startswith("/v1/"))
    for (path, method), op in deprecated.items():
        current = paths[f"/v1{path}"][method]
        assert op["operationId"] == current["operationId"] + "Unversioned" and "x-tool" not in op
        for part in ("parameters", "requestBody", "responses"):
            assert op.get(part) == current.get(part), (path, part)
    assert not any(p.startswith("/v1/") for p in spec.unversioned({"/healthz": {}}))


def test_the_version_is_one_semantic_version_everywhere_and_in_the_changelog():
    version = SPEC["info"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'version = "{version}"' in pyproject and service.__version__ == version
    newest = re.search(r"^## (\S+) \((\d{4}-\d{2}-\d{2})\)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert newest is not None and newest[1] == version  # the top entry is the release that ships
