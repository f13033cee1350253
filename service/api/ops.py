"""Operations endpoints: liveness, readiness and the contract itself."""

import json
import os
from functools import cache
from pathlib import Path

import yaml
from flask import Blueprint, Flask, Response, before_render_template, current_app
from jinja2 import Template

from ..metrics import folder_problem
from .catalogs import current_catalogs
from .errors import problem
from .problem_messages import DEGRADED

bp = Blueprint("ops", __name__)

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"


@cache
def spec_text() -> str:
    """openapi.yaml, the contract, read once: SIZING_OPENAPI_PATH (the container image sets
    it), else the project root."""
    return Path(os.environ.get("SIZING_OPENAPI_PATH") or SPEC_PATH).read_text(encoding="utf-8")


@bp.get("/healthz")
def healthz():
    return {"status": "ok"}


@bp.get("/readyz")
def readyz():
    """Ready once the catalogs (loaded at start) and the contract are in memory, and while the
    metrics can be written. A metrics folder lost or full leaves the answers as they are, but
    this instance can no longer be watched: it says so here (503) and in /metrics
    (sizing_metrics_folder_ok 0), so that it is taken out of rotation and an operator looks."""
    current_catalogs()
    spec_text()
    degraded = folder_problem()
    if degraded:
        return problem(503, DEGRADED(why=degraded))
    return {"status": "ready"}


@bp.get("/openapi.yaml")
def openapi_yaml():
    return Response(spec_text(), mimetype="application/yaml")


@bp.get("/docs")
def docs():
    """The Swagger UI page without the trailing slash (the blueprint serves /docs/ and assets)."""
    return current_app.view_functions["docs.show"]()


# The docs page when no API keys are set. openapi.yaml declares the keys (security and
# securitySchemes) for the deployments that set SIZING_API_KEYS, and /openapi.yaml serves the
# file as written; but a page that loads it shows an Authorize button and a padlock on every
# operation, offering keys nobody checks. Without keys the page is handed the contract inline
# instead, without its security, and /openapi.yaml stays the file.
DOCS_TEMPLATE = "index.template.html"  # flask-swagger-ui's page


@cache
def open_spec() -> dict:
    """The contract as an API without keys applies it: no security requirement anywhere and no
    security schemes."""
    spec = yaml.safe_load(spec_text())
    spec.pop("security", None)
    spec.get("components", {}).pop("securitySchemes", None)
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict):
                operation.pop("security", None)
    return spec


def _docs_page_without_keys(app: Flask, template: Template, context: dict, **_) -> None:
    if template.name != DOCS_TEMPLATE or "config_json" not in context or app.config.get("API_KEYS"):
        return
    config = json.loads(context["config_json"])
    config.pop("url", None)  # Swagger UI reads `spec` then; `url` would be fetched instead
    config["spec"] = open_spec()
    # The config is written into a <script>: no "<" may reach the HTML parser ("</script>").
    context["config_json"] = json.dumps(config, default=str).replace("<", "\\u003c")


@bp.record_once
def _connect_docs_page(state) -> None:
    before_render_template.connect(_docs_page_without_keys, state.app)
