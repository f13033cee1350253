"""Request ids, optional API keys and a CORS allow-list.

SIZING_API_KEYS      comma-separated keys; unset, the API is open. Set but holding no key
                     (blank, or only commas) the service refuses to start rather than serve
                     open, and so it does for a key shorter than MIN_KEY_CHARS (32: `openssl
                     rand -hex 24` makes one of 48), which could be guessed. A key comes as
                     `Authorization: Bearer <key>` or `X-API-Key: <key>`; the access log names it
                     by an id (`key-` and 8 hex digits of its SHA-256), never by the key.
SIZING_METRICS_KEYS  keys that open /metrics only (a scraper's), as long; with
                     SIZING_AUTH_METRICS, /metrics takes these or an API key.
SIZING_AUTH_PROBES   "true" to require a key on /healthz and /readyz too (default open).
SIZING_AUTH_METRICS  "true" to require a key on /metrics too (default open; deploy/k8s sets it:
                     the metrics name each key's id and what it spent).
SIZING_CORS_ORIGINS  comma-separated origins a browser dashboard may call from.

A request refused for its key (401) is charged to a small bucket of its peer address (a burst of
REFUSALS_BURST, REFUSALS_PER_S a second, per worker); once it is empty, that address's requests
without a valid key are answered 429 with Retry-After, so that guessing costs the guesser time
and the server almost nothing. A request with a valid key never touches it.
"""

import hashlib
import hmac
import math
import os
import re
import uuid

from flask import Flask, Response, g, request
from werkzeug.exceptions import TooManyRequests, Unauthorized

from .api.problem_messages import API_KEY, KEYS_REFUSED
from .limits import TokenBuckets

REQUEST_ID_HEADER = "X-Request-ID"
MIN_KEY_CHARS = 32
REFUSALS_PER_S = 1.0
REFUSALS_BURST = 20.0
_REFUSALS = "sizing.refusals"
_VALID_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")  # matched whole (fullmatch): no trailing newline
PROBES = ("/healthz", "/readyz")
# The contract and its docs page: public, so browsers (which cannot add a key to asset
# requests) and tool-calling clients can read what the API offers.
PUBLIC_PREFIXES = ("/docs", "/openapi.yaml")
CORS_HEADERS = "Content-Type, Authorization, X-API-Key, X-Request-ID"
# What a page or picture of ours may load. The compare report and the plots are self-contained:
# inline styles and data: images (the report's charts), nothing else, no script. The docs page
# runs Swagger UI from this service's own assets, with its config in an inline script.
_LOCKED = "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
CONTENT_SECURITY = {
    "text/html": f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; {_LOCKED}",
    "image/svg+xml": f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; {_LOCKED}",
    "docs": "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            f"img-src 'self' data:; connect-src 'self'; {_LOCKED}",
}


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def settings_from_env() -> dict:
    """The security settings, read from the environment (create_app's config overrides them)."""
    keys = os.environ.get("SIZING_API_KEYS")
    if keys is not None and not _split(keys):
        raise ValueError("SIZING_API_KEYS is set but holds no key: give at least one key, or unset it "
                         "to run the API open")
    return {
        "API_KEYS": _split(keys),
        "METRICS_KEYS": _split(os.environ.get("SIZING_METRICS_KEYS")),
        "AUTH_PROBES": _flag(os.environ.get("SIZING_AUTH_PROBES")),
        "AUTH_METRICS": _flag(os.environ.get("SIZING_AUTH_METRICS")),
        "CORS_ORIGINS": _split(os.environ.get("SIZING_CORS_ORIGINS")),
    }


def request_id() -> str:
    """This request's id: the caller's X-Request-ID if it is a sane token, else a new one."""
    return g.get("request_id") or "-"


def valid_request_id(text: str) -> bool:
    """A caller's X-Request-ID is kept only when the whole of it is a sane token."""
    return _VALID_ID.fullmatch(text) is not None


def _assign_request_id() -> None:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    g.request_id = given if valid_request_id(given) else uuid.uuid4().hex


def key_id(key: str) -> str:
    """A key's name in logs and limits: never the key, the same on every replica."""
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:8]


def _check_settings(config) -> None:
    """Settings only in their documented types: a string where keys are expected would split
    into one-letter keys, and a truthy string would turn a check on or off by accident."""
    for name in ("API_KEYS", "METRICS_KEYS", "CORS_ORIGINS"):
        value = config[name]
        if isinstance(value, str) or not isinstance(value, tuple | list | set | frozenset) \
                or not all(isinstance(v, str) and v.strip() for v in value):
            raise TypeError(f"{name} must be a tuple of non-empty strings, got {value!r}")
    for name in ("API_KEYS", "METRICS_KEYS"):
        short = sorted({len(key) for key in config[name] if len(key) < MIN_KEY_CHARS})
        if short:  # the key itself is never repeated: an error message ends up in logs
            raise ValueError(f"SIZING_{name} holds a key of {short[0]} characters: each key needs at least "
                             f"{MIN_KEY_CHARS} (openssl rand -hex 24 makes one of 48)")
    for name in ("AUTH_PROBES", "AUTH_METRICS"):
        if not isinstance(config[name], bool):
            raise TypeError(f"{name} must be True or False, got {config[name]!r}")


def spared() -> bool:
    """Requests no key and no rate limit applies to: probes, the contract and its docs page."""
    return request.method == "OPTIONS" or request.path.startswith(PUBLIC_PREFIXES) or \
        request.path in (*PROBES, "/metrics")


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
    """Every request but the spared ones; probes and /metrics too when their setting says so."""
    if not spared():
        return True
    if request.path in PROBES:
        return request.method != "OPTIONS" and app.config["AUTH_PROBES"]
    if request.path == "/metrics":
        return request.method != "OPTIONS" and app.config["AUTH_METRICS"]
    return False  # a CORS preflight (no credentials), the contract and its docs page


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


def _refuse_key(app: Flask) -> None:
    """401 for a request without a valid key, charged to its address's bucket of refusals; 429
    once that is empty."""
    refusals: TokenBuckets = app.extensions[_REFUSALS]
    address = f"addr-{request.remote_addr}"
    wait_s = refusals.wait_s(address)
    if wait_s > 0:
        raise TooManyRequests(KEYS_REFUSED(wait_s=math.ceil(wait_s)), retry_after=math.ceil(wait_s))
    refusals.pay(address, 1)
    raise Unauthorized(API_KEY())


def init_security(app: Flask) -> None:
    """Request ids on every request; API keys when configured; CORS for allowed origins."""
    for name, value in settings_from_env().items():
        app.config.setdefault(name, value)
    _check_settings(app.config)
    app.extensions[_REFUSALS] = TokenBuckets(REFUSALS_PER_S, REFUSALS_BURST)

    @app.before_request
    def check_key():
        _assign_request_id()
        keys = tuple(app.config["API_KEYS"])
        if request.path == "/metrics":  # a scraper's key opens /metrics, and nothing else
            keys += tuple(app.config["METRICS_KEYS"])
        presented = _presented_key() if keys else None
        matched = bool(presented) and _key_matches(presented, keys)
        g.key_id = key_id(presented) if matched else None
        g.client_id = g.key_id or f"addr-{request.remote_addr}"
        if keys and _needs_key(app) and not matched:
            _refuse_key(app)

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers[REQUEST_ID_HEADER] = request_id()
        # Every answer is what its Content-Type says: no browser may sniff it into a page.
        response.headers["X-Content-Type-Options"] = "nosniff"
        policy = CONTENT_SECURITY.get("docs" if request.path.startswith("/docs") and response.mimetype == "text/html"
                                      else response.mimetype)
        if policy:
            response.headers["Content-Security-Policy"] = policy
        return _cors(app, response)
