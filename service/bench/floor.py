"""The framework floor: a view of the same app (same JSON provider, errors, metrics, request
ids, logs) that parses a small JSON body and returns it. Registered only when SIZING_BENCH=1,
which the benchmark sets and no deployment does."""

from flask import Blueprint, Flask, request

from ..api.jsonio import json_body

bp = Blueprint("bench", __name__)


@bp.post("/bench/echo")
def echo():
    return json_body(request)


def init_floor(app: Flask) -> None:
    app.register_blueprint(bp)
