"""Operations endpoints: liveness, readiness and the contract itself."""

import os
from functools import cache
from pathlib import Path

from flask import Blueprint, Response, current_app

from .catalogs import current_catalogs

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
    # Ready once the catalogs (loaded at start) and the contract are in memory.
    current_catalogs()
    spec_text()
    return {"status": "ready"}


@bp.get("/openapi.yaml")
def openapi_yaml():
    return Response(spec_text(), mimetype="application/yaml")


@bp.get("/docs")
def docs():
    """The Swagger UI page without the trailing slash (the blueprint serves /docs/ and assets)."""
    return current_app.view_functions["docs.show"]()
