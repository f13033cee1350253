"""create_app(): config -> JSON -> catalogs -> blueprints -> errors."""

from flask import Flask

from .api import catalog, ops, resources
from .api.catalogs import init_catalogs
from .api.errors import register_errors
from .api.jsonio import StrictJSONProvider

# Sizing requests are small; a batch of a thousand items stays well under this.
MAX_BODY_BYTES = 1 << 20


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.json_provider_class = StrictJSONProvider
    app.json = StrictJSONProvider(app)
    app.config.from_mapping(MAX_CONTENT_LENGTH=MAX_BODY_BYTES)
    if test_config:
        app.config.from_mapping(test_config)
    app.url_map.strict_slashes = False
    init_catalogs(app)
    for blueprint in (resources.bp, catalog.bp, ops.bp):
        app.register_blueprint(blueprint)
    register_errors(app)
    return app
