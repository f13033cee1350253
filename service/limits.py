"""Limits that keep one costly request, or one greedy client, from hurting everyone else.

Every request has a cost in units, one unit being a plain estimate (a model of up to 64
layers). A model with more layers weighs layers / 64 units. A batch costs the sum of its items,
a sweep or a capacity question one per card, and a comparison two per option. A plot costs
PLOT_COST units, and nothing when it is served from the cache.

SIZING_MAX_REQUEST_COST   the most units one request may cost (default 2,000: a 1000-item batch
                          of 400B-class models). A request above it is refused with 413, and
                          the problem names the limit.
SIZING_RATE_LIMIT         units per second each client earns, in each worker (unset or 0: off).
                          A client is its API key, or its address when no keys are configured.
                          An empty bucket answers 429 with Retry-After.
SIZING_RATE_BURST         the most units a client may hold (default: the per-request limit, so
                          that one largest request fits).
SIZING_HEAVY_CONCURRENCY  batch-like and plot requests one worker runs at once, for each of the
                          two kinds (default 1). Above it the answer is 503 with Retry-After
                          1, at once: a waiting request would hold one of the worker's threads
                          that light requests need.

The buckets live in each worker's memory. A client whose requests spread over W workers and R
replicas may spend up to W x R times the rate; set the rate to the per-client rate wanted
divided by W x R. Exact limits across replicas need a shared store (Redis), which this service
does not require. The bucket is off by default: without keys every caller behind one NAT or
ingress shares an address, so a per-address bucket would throttle them all as one. The
Kubernetes manifests, which require keys, turn it on.
"""

import math
import os
import threading
import time
from collections.abc import Callable
from functools import wraps

import cachetools
from flask import Flask, current_app, g, request
from werkzeug.exceptions import RequestEntityTooLarge, ServiceUnavailable, TooManyRequests

UNIT_LAYERS = 64  # a plain estimate's model: up to this many layers costs one unit
PLOT_COST = 100   # a plot takes 0.3-1 s against 1-2 ms for an estimate
DEFAULT_MAX_REQUEST_COST = 2000
DEFAULT_HEAVY_CONCURRENCY = 1
MAX_CLIENTS = 10_000  # buckets kept per worker; the least recently seen client is forgotten first
HEAVY_KINDS = ("batch", "plot")
_KEY = "sizing.limits"


def _number(name: str, default: float | None, integer: bool = False) -> float | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value) if integer else float(value)
    except ValueError:
        raise ValueError(f"{name} must be a {'whole ' if integer else ''}number, got {value!r}") from None
    if not 0 <= number < math.inf:
        raise ValueError(f"{name} must be zero or more, got {value!r}")
    return number


def settings_from_env() -> dict:
    """The limits, read from the environment (create_app's config overrides them)."""
    return {
        "MAX_REQUEST_COST": _number("SIZING_MAX_REQUEST_COST", DEFAULT_MAX_REQUEST_COST),
        "RATE_LIMIT": _number("SIZING_RATE_LIMIT", 0.0),
        "RATE_BURST": _number("SIZING_RATE_BURST", None),
        "HEAVY_CONCURRENCY": _number("SIZING_HEAVY_CONCURRENCY", DEFAULT_HEAVY_CONCURRENCY, integer=True),
    }


def weight(layers) -> float:
    """Units one estimate of a model with `layers` layers costs (1 when unknown)."""
    if isinstance(layers, bool) or not isinstance(layers, int) or layers <= 0:
        return 1.0
    return max(1.0, layers / UNIT_LAYERS)


def raw_model_weight(raw) -> float:
    """The weight of a model as a request gives it, before it is checked: a preset name, a
    ModelSpec's `layers`, or an hf_config's layer count."""
    if isinstance(raw, str):
        from .api.catalogs import current_catalogs
        from .sizing import SizingError

        try:
            return weight(current_catalogs().models.get(raw, "model").spec.layers)
        except SizingError:
            return 1.0
    if not isinstance(raw, dict):
        return 1.0
    config = raw.get("hf_config")
    source = config if isinstance(config, dict) else raw
    text = config.get("text_config") if isinstance(config, dict) else None
    if isinstance(text, dict):
        source = {**source, **text}
    counts = [source.get(k) for k in ("layers", "num_hidden_layers", "n_layer", "num_layers", "n_layers")]
    return max((weight(c) for c in counts), default=1.0)


class TokenBuckets:
    """A bucket of units per client: `rate` units a second up to `burst`. A request is admitted
    while the bucket is above zero and then pays its whole cost, which may leave it in debt:
    the cost is known only once the body is read."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: cachetools.LRUCache = cachetools.LRUCache(maxsize=MAX_CLIENTS)
        self._lock = threading.Lock()

    def _level(self, client: str, now: float) -> float:
        level, then = self._buckets.get(client, (self.burst, now))
        return min(self.burst, level + (now - then) * self.rate)

    def wait_s(self, client: str) -> float:
        """0 when the client may send a request now, else the seconds until it may."""
        with self._lock:
            level = self._level(client, time.monotonic())
        return 0.0 if level > 0 else (1e-3 - level) / self.rate

    def pay(self, client: str, units: float) -> None:
        with self._lock:
            now = time.monotonic()
            self._buckets[client] = (self._level(client, now) - units, now)


class Limits:
    """One worker's limits: the request budget, the buckets and the heavy requests' slots."""

    def __init__(self, config) -> None:
        self.max_cost = float(config["MAX_REQUEST_COST"])
        rate = float(config["RATE_LIMIT"] or 0)
        burst = config["RATE_BURST"]
        self.buckets = TokenBuckets(rate, float(burst) if burst else max(self.max_cost, 1.0)) if rate > 0 else None
        slots = int(config["HEAVY_CONCURRENCY"])
        self.slots = {kind: threading.BoundedSemaphore(slots) if slots > 0 else None for kind in HEAVY_KINDS}
        self.slot_count = slots


def _limits() -> Limits:
    return current_app.extensions[_KEY]


def _drained() -> None:
    """Read the body a refused request sent (MAX_CONTENT_LENGTH bounds it), so that the client
    reads a clean 429 or 503 on a connection it may keep, rather than a reset mid-upload."""
    stream = request.stream
    while stream.read(1 << 16):
        pass


def charge(units: float, what: str) -> None:
    """This request costs `units` in all (its first unit was paid on admission): refused with
    413 above the per-request limit, else taken from the client's bucket."""
    limits = _limits()
    if units > limits.max_cost:
        raise RequestEntityTooLarge(
            f"{what} costs {units:,.0f} units (one unit is a plain estimate), above the limit of "
            f"{limits.max_cost:,.0f} per request (SIZING_MAX_REQUEST_COST): split it into smaller requests")
    if limits.buckets is not None and units > 1:
        limits.buckets.pay(g.get("client_id", "-"), units - 1)


def heavy(kind: str) -> Callable:
    """A view of which each worker runs at most SIZING_HEAVY_CONCURRENCY at once (503 above)."""

    def decorate(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            limits = _limits()
            slot = limits.slots[kind]
            if slot is None:
                return view(*args, **kwargs)
            if not slot.acquire(blocking=False):
                _drained()
                raise ServiceUnavailable(
                    f"this instance is already running {limits.slot_count} {kind} request"
                    f"{'s' if limits.slot_count > 1 else ''} at once; retry in a second", retry_after=1)
            try:
                return view(*args, **kwargs)
            finally:
                slot.release()

        return wrapper

    return decorate


def init_limits(app: Flask, exempt: Callable[[], bool]) -> None:
    """Keep the limits in `app` and admit each request that `exempt()` does not spare (probes,
    metrics, docs) only while its client's bucket holds units, paying one for it."""
    for name, value in settings_from_env().items():
        app.config.setdefault(name, value)
    for name in ("MAX_REQUEST_COST", "RATE_LIMIT", "HEAVY_CONCURRENCY"):
        value = app.config[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            raise TypeError(f"{name} must be a number of zero or more, got {value!r}")
    app.extensions[_KEY] = Limits(app.config)

    @app.before_request
    def admit():
        buckets = _limits().buckets
        if buckets is None or exempt():
            return
        client = g.get("client_id", "-")
        wait = buckets.wait_s(client)
        if wait > 0:
            _drained()
            raise TooManyRequests(f"this client has spent its units (SIZING_RATE_LIMIT {buckets.rate:g} a "
                                  f"second, burst {buckets.burst:g}); retry in {math.ceil(wait)} s",
                                  retry_after=math.ceil(wait))
        buckets.pay(client, 1)
