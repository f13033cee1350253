"""The framework floor: a view of the same app (same JSON provider, errors, metrics, request
ids, logs) that parses a small JSON body and returns it. The benchmark serves its own app with
it (tests/bench/app.py); the production app (service.wsgi) never has it."""

from flask import Blueprint, Flask, request

from service.api.jsonio import json_body

bp = Blueprint("bench", __name__)


@bp.post("/bench/echo")
def echo():
    return json_body(request)


def init_floor(app: Flask) -> None:
    app.register_blueprint(bp)


def bench_app(test_config: dict | None = None) -> Flask:
    """The service's app with the floor view beside its routes."""
    from service.app import create_app

    app = create_app(test_config)
    init_floor(app)
    return app
