"""Limits that keep one costly request, or one greedy client, from hurting everyone else.

Every request has a cost in units, one unit being a plain estimate: a model of up to 64 layers,
about UNIT_CPU_MS (2 ms) of a worker thread's CPU. A request is weighed twice:

- before it runs, by what it asks: a model with more layers weighs layers / 64 units (for
  /estimate, /memory, /throughput and /scaling alike), a batch the sum of its items, a sweep or
  a capacity question one per card, a comparison two per option, a ranking or recommendation
  three times the model's weight, and a plot PLOT_COST units (nothing when it is cached). This
  decides the 413 before any work is done, and is paid into the client's bucket; a request
  that asks for HEAVY_UNITS (20) or more runs in a batch slot, as a batch does;
- after it ran, by the CPU time its worker thread spent on it, in units of UNIT_CPU_MS: where
  that is more than was paid (an unknown name's closest-match search, a huge custom model, a
  body of many unknown fields), the bucket pays the difference. What a request did, not what it
  said, decides what it costs.

SIZING_MAX_REQUEST_COST   the most units one request may ask for (default 2,000: a 1000-item
                          batch of 400B-class models). A request above it is refused with 413,
                          and the problem names the limit.
SIZING_RATE_LIMIT         units per second each client earns, in each worker (unset or 0: off).
                          A client is its API key, or its address when no keys are configured.
                          An empty bucket answers 429 with Retry-After.
SIZING_RATE_BURST         the most units a client may hold (default: the per-request limit, so
                          that one largest request fits).
SIZING_UNIT_CPU_MS        the CPU time of one unit (default 2 ms: a plain estimate takes about
                          1.5 ms of CPU on the machines the benchmarks run on).
SIZING_HEAVY_CONCURRENCY  batch-like and plot requests one worker runs at once, for each of the
                          two kinds (default 1).
SIZING_HEAVY_WAIT_S       how long a heavy request waits for a slot before a 503 with
                          Retry-After (default 2 s).
SIZING_HEAVY_QUEUE        how many heavy requests may wait for a slot in one worker (default
                          THREADS - SIZING_HEAVY_CONCURRENCY - 1, at least 0: a waiting request
                          holds one of the worker's threads, and one thread always stays free for
                          light requests). A client waits with at most one request per worker,
                          and a freed slot goes to the waiting client served least recently, so
                          that one client's many threads cannot keep another's batch waiting.

The buckets live in each worker's memory. A client whose requests spread over W workers and R
replicas may spend up to W x R times the rate; set the rate to the per-client rate wanted
divided by W x R. Exact limits across replicas need a shared store (Redis), which this service
does not require. The bucket is off by default: without keys every caller behind one NAT or
ingress shares an address, so a per-address bucket would throttle them all as one. The
Kubernetes manifests, which require keys, turn it on. What requests cost is counted in /metrics
whether or not the bucket is on (sizing_request_units_total, sizing_request_cpu_seconds_total).
"""

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps

import cachetools
from flask import Flask, Response, current_app, g, request
from werkzeug.exceptions import RequestEntityTooLarge, ServiceUnavailable, TooManyRequests

from .api.problem_messages import COST_TOO_HIGH, RATE_SPENT, SLOT_BUSY, SLOTS_BUSY
from .front.limits import env_number
from .metrics import count_cost
from .sizing import Message

UNIT_LAYERS = 64  # a plain estimate's model: up to this many layers costs one unit
PLOT_COST = 100   # a plot takes 0.3-1 s against 1-2 ms for an estimate
DEFAULT_MAX_REQUEST_COST = 2000
DEFAULT_UNIT_CPU_MS = 2.0
DEFAULT_HEAVY_CONCURRENCY = 1
DEFAULT_HEAVY_WAIT_S = 2.0
# A request that asks for this many units or more (a ranking of a 400-layer model, an estimate of
# a 1,300-layer one) takes a batch slot like a batch does: its CPU is a batch's.
HEAVY_UNITS = 20
DEFAULT_THREADS = 4  # gunicorn's THREADS default (deploy/gunicorn.conf.py)
MAX_CLIENTS = 10_000  # buckets kept per worker; the least recently seen client is forgotten first
HEAVY_KINDS = ("batch", "plot")
_KEY = "sizing.limits"


def _number(name: str, default: float | None, integer: bool = False) -> float | None:
    return env_number(os.environ, name, default, integer=integer, zero=True)


def _default_queue(slots: float | None) -> int:
    """Waiting heavy requests a worker allows: its threads less the running ones, less one
    thread kept for light requests."""
    threads = _number("THREADS", DEFAULT_THREADS, integer=True) or 1
    return max(0, int(threads) - int(slots or 0) - 1)


def settings_from_env() -> dict:
    """The limits, read from the environment (create_app's config overrides them)."""
    slots = _number("SIZING_HEAVY_CONCURRENCY", DEFAULT_HEAVY_CONCURRENCY, integer=True)
    return {
        "MAX_REQUEST_COST": _number("SIZING_MAX_REQUEST_COST", DEFAULT_MAX_REQUEST_COST),
        "RATE_LIMIT": _number("SIZING_RATE_LIMIT", 0.0),
        "RATE_BURST": _number("SIZING_RATE_BURST", None),
        "UNIT_CPU_MS": _number("SIZING_UNIT_CPU_MS", DEFAULT_UNIT_CPU_MS),
        "HEAVY_CONCURRENCY": slots,
        "HEAVY_WAIT_S": _number("SIZING_HEAVY_WAIT_S", DEFAULT_HEAVY_WAIT_S),
        "HEAVY_QUEUE": _number("SIZING_HEAVY_QUEUE", _default_queue(slots), integer=True),
    }


def weight(layers) -> float:
    """Units one estimate of a model with `layers` layers costs (1 when unknown)."""
    if isinstance(layers, bool) or not isinstance(layers, int) or layers <= 0:
        return 1.0
    return max(1.0, layers / UNIT_LAYERS)


def model_weight(model) -> float:
    """Units one estimate of `model` (a ModelSpec, or None for the default) costs."""
    return weight(getattr(model, "layers", None))


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
    the cost is known only once the body is read, and in full only once the answer is made."""

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


@dataclass(eq=False)
class _Waiter:
    client: str
    order: int
    granted: threading.Event = field(default_factory=threading.Event)


class FairSlots:
    """`count` slots for heavy requests in one worker. A request that finds none free waits up
    to `wait_s` in a queue of at most `queue` places, one per client; a freed slot goes to the
    waiting client that was served least recently (then the first come). Beyond that, or after
    the wait, the request is refused."""

    def __init__(self, count: int, queue: int, wait_s: float) -> None:
        self.count, self.queue, self.wait_s = count, queue, wait_s
        self._free = count
        self._waiting: list[_Waiter] = []
        self._served: cachetools.LRUCache = cachetools.LRUCache(maxsize=MAX_CLIENTS)  # client -> turn
        self._turns = 0
        self._lock = threading.Lock()

    def _grant(self, client: str) -> None:
        self._turns += 1
        self._served[client] = self._turns

    def acquire(self, client: str) -> bool:
        """True once the caller holds a slot (release it), False when refused."""
        with self._lock:
            if self._free > 0:
                self._free -= 1
                self._grant(client)
                return True
            if self.wait_s <= 0 or len(self._waiting) >= self.queue or \
                    any(w.client == client for w in self._waiting):
                return False
            waiter = _Waiter(client, self._turns)
            self._waiting.append(waiter)
        waiter.granted.wait(self.wait_s)
        with self._lock:
            if waiter.granted.is_set():  # granted, perhaps just as the wait ran out
                return True
            self._waiting.remove(waiter)
            return False

    def release(self) -> None:
        with self._lock:
            if not self._waiting:
                self._free += 1
                return
            waiter = min(self._waiting, key=lambda w: (self._served.get(w.client, 0), w.order))
            self._waiting.remove(waiter)
            self._grant(waiter.client)
            waiter.granted.set()  # the slot passes straight to it: never free in between


class Limits:
    """One worker's limits: the request budget, the buckets and the heavy requests' slots."""

    def __init__(self, config) -> None:
        self.max_cost = float(config["MAX_REQUEST_COST"])
        self.unit_cpu_s = float(config["UNIT_CPU_MS"]) / 1e3
        rate = float(config["RATE_LIMIT"] or 0)
        burst = config["RATE_BURST"]
        self.buckets = TokenBuckets(rate, float(burst) if burst else max(self.max_cost, 1.0)) if rate > 0 else None
        slots = int(config["HEAVY_CONCURRENCY"])
        self.slots = {kind: FairSlots(slots, int(config["HEAVY_QUEUE"]), float(config["HEAVY_WAIT_S"]))
                      if slots > 0 else None for kind in HEAVY_KINDS}
        self.slot_count = slots


def _limits() -> Limits:
    return current_app.extensions[_KEY]


def _drained() -> None:
    """Read the body a refused request sent (MAX_CONTENT_LENGTH bounds it), so that the client
    reads a clean 429 or 503 on a connection it may keep, rather than a reset mid-upload."""
    stream = request.stream
    while stream.read(1 << 16):
        pass


def charge(units: float, what: Message) -> None:
    """This request asks for `units` in all (its first unit was paid on admission): refused with
    413 above the per-request limit, else taken from the client's bucket."""
    limits = _limits()
    if units > limits.max_cost:
        raise RequestEntityTooLarge(COST_TOO_HIGH(what=what, units=units, limit=limits.max_cost))
    if units > g.get("units", 1.0):
        if limits.buckets is not None and g.get("admitted"):
            limits.buckets.pay(g.client_id, units - g.get("units", 1.0))
        g.units = units
    if units >= HEAVY_UNITS:
        # as costly as a batch, whatever the endpoint: it runs in a batch slot, so that a
        # worker's threads are not all busy with such requests
        _take_slot("batch")


def _take_slot(kind: str) -> None:
    """A heavy slot of `kind` for the rest of this request (given back at its teardown), unless
    it holds one already or slots are off; 503 with Retry-After when none comes in time."""
    limits = _limits()
    slots = limits.slots[kind]
    if slots is None or "slot_taken" in g:
        return
    if not slots.acquire(g.get("client_id", "-")):
        _drained()
        busy = SLOTS_BUSY if limits.slot_count > 1 else SLOT_BUSY
        raise ServiceUnavailable(busy(slots=limits.slot_count, kind=kind, wait_s=slots.wait_s), retry_after=1)
    g.slot_taken = slots


def heavy(kind: str) -> Callable:
    """A view of which each worker runs at most SIZING_HEAVY_CONCURRENCY at once; more wait a
    moment for a slot, fairly between clients, then get a 503 with Retry-After."""

    def decorate(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            _take_slot(kind)
            return view(*args, **kwargs)

        return wrapper

    return decorate


def _check(config) -> None:
    """Settings given in code only in their documented types."""
    for name in ("MAX_REQUEST_COST", "RATE_LIMIT", "UNIT_CPU_MS", "HEAVY_CONCURRENCY", "HEAVY_WAIT_S",
                 "HEAVY_QUEUE"):
        value = config[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            raise TypeError(f"{name} must be a number of zero or more, got {value!r}")
    if config["UNIT_CPU_MS"] <= 0:
        raise TypeError(f"UNIT_CPU_MS must be above zero, got {config['UNIT_CPU_MS']!r}")


def _admit() -> None:
    """Refuse a client whose bucket is empty (429), else take one unit; start the CPU clock."""
    buckets = _limits().buckets
    if buckets is not None:
        wait = buckets.wait_s(g.client_id)
        if wait > 0:
            _drained()
            raise TooManyRequests(RATE_SPENT(rate=buckets.rate, burst=buckets.burst, wait_s=math.ceil(wait)),
                                  retry_after=math.ceil(wait))
        buckets.pay(g.client_id, 1)
        g.admitted = True
    g.units = 1.0
    g.cpu_started_s = time.thread_time()


def _settle(response: Response) -> Response:
    """Pay what the request's CPU time says it cost beyond what it paid, and count both."""
    started = g.pop("cpu_started_s", None)
    if started is None:
        return response
    limits = _limits()
    cpu_s = time.thread_time() - started
    units = max(g.get("units", 1.0), cpu_s / limits.unit_cpu_s)
    if limits.buckets is not None and g.get("admitted") and units > g.get("units", 1.0):
        limits.buckets.pay(g.client_id, units - g.get("units", 1.0))
    route = request.url_rule.rule if request.url_rule is not None else None
    count_cost(route, g.get("key_id"), units, cpu_s)
    return response


def _release(_exc: BaseException | None) -> None:
    """The heavy slot the request took, given back however it ended."""
    slots = g.pop("slot_taken", None)
    if slots is not None:
        slots.release()


def init_limits(app: Flask, exempt: Callable[[], bool]) -> None:
    """Keep the limits in `app`; admit each request that `exempt()` does not spare (probes,
    metrics, docs) only while its client's bucket holds units, paying one for it; after the
    answer, pay what the request's CPU time says it cost beyond what it paid."""
    for name, value in settings_from_env().items():
        app.config.setdefault(name, value)
    _check(app.config)
    app.extensions[_KEY] = Limits(app.config)
    app.before_request(lambda: None if exempt() else _admit())
    app.after_request(_settle)
    app.teardown_request(_release)
