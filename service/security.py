"""Request ids, optional API keys and a CORS allow-list.

SIZING_API_KEYS      comma-separated keys; unset, the API is open. A key comes as
                     `Authorization: Bearer <key>` or `X-API-Key: <key>`.
SIZING_AUTH_PROBES   "true" to require a key on /healthz and /readyz too (default open).
SIZING_AUTH_METRICS  "true" to require a key on /metrics too (default open).
SIZING_CORS_ORIGINS  comma-separated origins a browser dashboard may call from.
"""

import hmac
import os
import re
import uuid

from flask import Flask, Response, g, request
from werkzeug.exceptions import Unauthorized

REQUEST_ID_HEADER = "X-Request-ID"
_VALID_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
PROBES = ("/healthz", "/readyz")
# The contract and its docs page: public, so browsers (which cannot add a key to asset
# requests) and tool-calling clients can read what the API offers.
PUBLIC_PREFIXES = ("/docs", "/openapi.yaml")
CORS_HEADERS = "Content-Type, Authorization, X-API-Key, X-Request-ID"


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def settings_from_env() -> dict:
    """The security settings, read from the environment (create_app's config overrides them)."""
    return {
        "API_KEYS": _split(os.environ.get("SIZING_API_KEYS")),
        "AUTH_PROBES": _flag(os.environ.get("SIZING_AUTH_PROBES")),
        "AUTH_METRICS": _flag(os.environ.get("SIZING_AUTH_METRICS")),
        "CORS_ORIGINS": _split(os.environ.get("SIZING_CORS_ORIGINS")),
    }


def request_id() -> str:
    """This request's id: the caller's X-Request-ID if it is a sane token, else a new one."""
    return g.get("request_id") or "-"


def _assign_request_id() -> None:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    g.request_id = given if _VALID_ID.match(given) else uuid.uuid4().hex


def _presented_key() -> str | None:
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    return request.headers.get("X-API-Key")


def _key_matches(presented: str, keys: tuple[str, ...]) -> bool:
    # Compare against every key, each in constant time, so timing says nothing about which.
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(presented.encode(), key.encode())
    return matched


def _needs_key(app: Flask) -> bool:
    if request.method == "OPTIONS":
        return False  # CORS preflight carries no credentials
    if request.path.startswith(PUBLIC_PREFIXES):
        return False
    if request.path in PROBES:
        return app.config["AUTH_PROBES"]
    if request.path == "/metrics":
        return app.config["AUTH_METRICS"]
    return True


# CORS by hand, not flask-cors (6.0), for two behaviours measured against test_security: with
# one allowed origin flask-cors sends no `Vary: Origin`, though the allow header comes and goes
# with the Origin (a shared cache could hand one caller's answer to another), and a preflight
# echoes the requested header names instead of the allow-list. The cost was the same (~155 us
# a request through the test client either way).
def _cors(app: Flask, response: Response) -> Response:
    origin = request.headers.get("Origin")
    if origin and origin in app.config["CORS_ORIGINS"]:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = REQUEST_ID_HEADER
        if request.method == "OPTIONS":
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = CORS_HEADERS
            response.headers["Access-Control-Max-Age"] = "600"
    if app.config["CORS_ORIGINS"]:
        response.vary.add("Origin")
    return response


def init_security(app: Flask) -> None:
    """Request ids on every request; API keys when configured; CORS for allowed origins."""
    for name, value in settings_from_env().items():
        app.config.setdefault(name, value)

    @app.before_request
    def check_key():
        _assign_request_id()
        keys = app.config["API_KEYS"]
        if keys and _needs_key(app):
            presented = _presented_key()
            if not presented or not _key_matches(presented, tuple(keys)):
                raise Unauthorized("A valid API key is required: Authorization: Bearer <key>.")

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers[REQUEST_ID_HEADER] = request_id()
        return _cors(app, response)
