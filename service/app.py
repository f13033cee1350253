"""create_app(): config -> JSON -> catalogs -> blueprints -> errors -> security -> metrics -> logs."""

from flask import Flask, request
from flask_swagger_ui import get_swaggerui_blueprint

from .api import catalog, compare, decisions, ops, plots, resources
from .api.cache import init_cache
from .api.catalogs import init_catalogs
from .api.errors import register_errors
from .api.jsonio import StrictJSONProvider
from .front.limits import MAX_BODY_BYTES as FRONT_MAX_BODY_BYTES
from .limits import init_limits
from .logs import init_access_log
from .metrics import init_metrics
from .security import init_security, spared

# The front door refuses a larger body before it is read; the app refuses one that reaches it
# another way (the test client, another WSGI server) the same.
MAX_BODY_BYTES = FRONT_MAX_BODY_BYTES

# The API's paths carry its major version (/v1/estimate). The unversioned paths of 0.x answer the
# same and are deprecated (RFC 9745's Deprecation header, a Link to the successor); the probes,
# /metrics, the contract and its docs page stay unversioned.
API_PREFIX = "/v1"
UNVERSIONED = "_unversioned"  # the suffix of a blueprint registered again at the unversioned paths
DEPRECATED_SINCE = "@1796083200"  # 2026-12-01T00:00:00Z, as RFC 9745 writes a date


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.json = StrictJSONProvider(app)
    app.config.from_mapping(MAX_CONTENT_LENGTH=MAX_BODY_BYTES)
    if test_config:
        app.config.from_mapping(test_config)
    app.url_map.strict_slashes = False
    init_catalogs(app)
    init_cache(app)
    for blueprint in API_BLUEPRINTS:
        app.register_blueprint(blueprint, url_prefix=API_PREFIX)
        app.register_blueprint(blueprint, name=blueprint.name + UNVERSIONED)
    for blueprint in (ops.bp, _docs()):
        app.register_blueprint(blueprint)
    app.after_request(_deprecation)
    app.after_request(_negotiated)
    register_errors(app)
    init_metrics(app)
    init_security(app)
    init_limits(app, spared)
    init_access_log(app)
    return app


API_BLUEPRINTS = (resources.bp, compare.bp, decisions.bp, catalog.bp, plots.bp)
NEGOTIATED = frozenset(name for b in API_BLUEPRINTS for name in (b.name, b.name + UNVERSIONED))
NEGOTIATED_VARY = "Accept, Accept-Language"


def _negotiated(response):
    """An API answer is made for its request's Accept (JSON, CSV or a page) and Accept-Language,
    and for its caller (a key, a bucket): a cache keys on the first two and never shares it."""
    if request.blueprint in NEGOTIATED:
        headers = response.headers  # set as text: werkzeug's parsed views cost 8 us a request
        vary = headers.get("Vary")
        headers["Vary"] = f"{vary}, {NEGOTIATED_VARY}" if vary else NEGOTIATED_VARY
        if "Cache-Control" in headers:
            response.cache_control.private = True
        else:
            headers["Cache-Control"] = "private"
    return response


def _deprecation(response):
    """An unversioned API path answers as /v1 does, saying that it is deprecated and where to go."""
    if request.blueprint and request.blueprint.endswith(UNVERSIONED):
        response.headers["Deprecation"] = DEPRECATED_SINCE
        response.headers["Link"] = f'<{API_PREFIX}{request.path}>; rel="successor-version"'
    return response


def _docs():
    """Swagger UI at /docs from the package's bundled assets (no internet), reading /openapi.yaml;
    the online validator is off."""
    return get_swaggerui_blueprint("/docs", "/openapi.yaml", blueprint_name="docs", config={
        "app_name": "Accelerator sizing service", "validatorUrl": None})

