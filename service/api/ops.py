"""Operations endpoints: liveness, readiness and the contract itself."""

import json
import os
from functools import cache
from pathlib import Path

import yaml
from flask import Blueprint, Flask, Response, before_render_template, current_app
from jinja2 import Template

from ..metrics import folder_problem
from . import schemas as s
from .catalogs import current_catalogs
from .errors import problem
from .operations import operation
from .problem_messages import DEGRADED

bp = Blueprint("ops", __name__)

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"


@cache
def spec_text() -> str:
    """openapi.yaml, the contract, read once: SIZING_OPENAPI_PATH (the container image sets
    it), else the project root."""
    return Path(os.environ.get("SIZING_OPENAPI_PATH") or SPEC_PATH).read_text(encoding="utf-8")


@bp.get("/healthz")
@operation(
    operation_id="healthz",
    summary="Liveness",
    answer=s.HealthSchema,
    answer_description="Alive.")
def healthz():
    """For liveness probes. Answers 200 with a JSON status while the process serves requests."""
    return {"status": "ok"}


# Ready once the catalogs (loaded at start) and the contract are in memory, and while the
# metrics can be written. A metrics folder lost or full leaves the answers as they are, but
# this instance can no longer be watched: it says so here (503) and in /metrics
# (sizing_metrics_folder_ok 0), so that it is taken out of rotation and an operator looks.
@bp.get("/readyz")
@operation(
    operation_id="readyz",
    summary="Readiness",
    answer=s.HealthSchema,
    answer_description="Ready.")
def readyz():
    """For readiness probes. Answers 200 with a JSON status once the catalog and the contract have
    loaded, and 503 (a problem naming the folder) while the metrics folder is missing, full or
    failing, so that an instance that cannot be watched leaves rotation; its answers are
    unaffected."""
    current_catalogs()
    spec_text()
    degraded = folder_problem()
    if degraded:
        return problem(503, DEGRADED(why=degraded))
    return {"status": "ready"}


@bp.get("/openapi.yaml")
@operation(
    operation_id="openapiSpec",
    summary="This contract",
    media=("application/yaml",),
    answer_description="The contract.")
def openapi_yaml():
    """For tool-calling clients and code generators. The OpenAPI 3.1 document the service follows, as
    YAML."""
    return Response(spec_text(), mimetype="application/yaml")


# The Swagger UI page without the trailing slash (the blueprint serves /docs/ and assets).
@bp.get("/docs")
@operation(
    operation_id="docs",
    summary="Interactive API docs",
    media=("text/html",),
    answer_description="The docs page.",
    public=True)
def docs():
    """For people. An HTML page (Swagger UI, served with its own assets, no internet needed) that
    renders this contract and lets you try each operation."""
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
        for op in path_item.values():
            if isinstance(op, dict):
                op.pop("security", None)
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
