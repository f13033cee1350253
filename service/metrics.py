"""Prometheus metrics: requests by route template, method and status; what requests cost; estimates
by endpoint and product line; worker starts; build info. Correct under gunicorn's multiprocess
mode, and never in the way of an answer.

With PROMETHEUS_MULTIPROC_DIR set, each worker writes its samples to files there and every
scrape builds a fresh registry that merges them; without it, the process's default registry is
served. Under gunicorn it is always set before the workers start: a configured folder is
emptied by deploy/entrypoint.sh, and otherwise the master makes a fresh one of its own
(deploy/gunicorn.conf.py), so instances on one host never share or wipe each other's.

The folder can be lost (deleted under a running server) or fill up (a small tmpfs). Neither
may cost an answer or a worker: a sample that cannot be written is dropped and the failure
noted; the files' pages are reserved before they are written (`_ReservedMmapedDict`), so that a
full tmpfs is an error to catch, not a SIGBUS that kills the worker. /metrics then still
answers, with `sizing_metrics_folder_ok 0` and whatever samples it can read, and /readyz says
why the instance is degraded (service/api/ops.py).
"""

import logging
import os
import platform
import struct
import threading
import time
from collections.abc import Callable, Iterator

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    values,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.mmap_dict import MmapedDict

try:
    from prometheus_client.mmap_dict import _INITIAL_MMAP_SIZE as FIRST_FILE_BYTES
except ImportError:  # pragma: no cover - a release that renamed it: reserve what 0.26 maps first
    FIRST_FILE_BYTES = 1 << 16

from . import __version__
from .api.operations import operation

log = logging.getLogger(__name__)


class _ReservedMmapedDict(MmapedDict):
    """prometheus_client's sample file, with its pages reserved (posix_fallocate) before the
    library maps and writes them. A sparse file on a full tmpfs raises SIGBUS on the first write
    to a new page, which kills the process; a reservation fails with ENOSPC instead."""

    def __init__(self, filename: str, read_mode: bool = False) -> None:
        if not read_mode:
            with open(filename, "a+b") as f:
                size = os.fstat(f.fileno()).st_size
                try:
                    _reserve(f.fileno(), max(size, FIRST_FILE_BYTES))
                except OSError:
                    if size == 0:  # an empty file would break every scrape that reads it
                        os.unlink(filename)
                    raise
        super().__init__(filename, read_mode)

    def _init_value(self, key: str) -> None:
        grown = self._capacity
        needed = self._used + len(key.encode("utf-8")) + 32  # the entry's length, key, padding, two doubles
        while needed > grown:
            grown *= 2
        if grown > self._capacity:
            _reserve(self._f.fileno(), grown)
        super()._init_value(key)


def _reserve(fd: int, size: int) -> None:
    """Allocate the file's first `size` bytes now (ENOSPC if the filesystem cannot). Where the
    platform has no posix_fallocate (macOS), the library's sparse file is kept as it is."""
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)


# Every sample file the workers open is made by values.MultiProcessValue through this name.
values.MmapedDict = _ReservedMmapedDict  # type: ignore[misc]

REQUESTS = Counter(
    "sizing_http_requests_total", "HTTP requests answered.", ("route", "method", "status"))
LATENCY = Histogram(
    "sizing_http_request_duration_seconds", "Time from request to response.",
    ("route", "method", "status"),
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
UNITS = Counter(
    "sizing_request_units_total",
    "Units requests cost: the larger of what they asked for and their CPU time over SIZING_UNIT_CPU_MS "
    "(service/limits.py), by route and client (the API key's id, or 'anonymous' without a key).",
    ("route", "client"))
CPU = Counter(
    "sizing_request_cpu_seconds_total", "CPU time the worker threads spent on requests, by route.", ("route",))
ESTIMATES = Counter(
    "sizing_estimates_total", "Answers computed, by endpoint and the card's product line.",
    ("endpoint", "line"))
BUILD_INFO = Gauge(
    "sizing_build_info", "Always 1; the labels say what is running.", ("version", "python"),
    multiprocess_mode="max")

UNMATCHED = "unmatched"  # 404s share one label value, so cardinality stays bounded
ANONYMOUS = "anonymous"  # every caller without a key: addresses would be unbounded
# Methods a client may send are unbounded; the label takes these, or "other".
METHODS = frozenset({"GET", "POST", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
OTHER = "other"
# How long a failed write marks the folder as failing, after the last failure.
FAILURE_MEMORY_S = 60.0


class _Failures:
    """This worker's last failed metrics write: when, and why."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.why = ""
        self._lock = threading.Lock()

    def note(self, exc: BaseException) -> None:
        with self._lock:
            first = self.at is None or time.monotonic() - self.at > FAILURE_MEMORY_S
            # the error's kind and reason, never its path: /readyz says it to whoever asks
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "the worker's log says more"
            self.at, self.why = time.monotonic(), f"{type(exc).__name__}: {reason}"
        if first:  # once a minute at most: a full folder fails every request
            log.error("a metrics sample could not be written (answers go on without it): %s: %s",
                      type(exc).__name__, exc)

    def recent(self) -> str | None:
        with self._lock:
            if self.at is not None and time.monotonic() - self.at <= FAILURE_MEMORY_S:
                return self.why
        return None


FAILURES = _Failures()


def _safely(record: Callable[[], None]) -> None:
    """Record a sample; a folder that is gone or full loses the sample, never the answer."""
    try:
        record()
    except (OSError, ValueError, RuntimeError) as exc:  # missing folder, ENOSPC, a corrupt file
        FAILURES.note(exc)


def folder_problem() -> str | None:
    """Why the multiprocess metrics folder cannot be trusted now, or None when it can (or when
    there is none: the process's own registry)."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return None
    if not os.path.isdir(folder):
        return "the metrics folder (PROMETHEUS_MULTIPROC_DIR) is missing"
    try:
        stat = os.statvfs(folder)
    except OSError as exc:
        return f"the metrics folder (PROMETHEUS_MULTIPROC_DIR) cannot be read: {exc.strerror or type(exc).__name__}"
    if stat.f_bavail == 0:
        return "the metrics folder (PROMETHEUS_MULTIPROC_DIR) is full"
    failed = FAILURES.recent()
    return f"writing to the metrics folder (PROMETHEUS_MULTIPROC_DIR) failed: {failed}" if failed else None


def count_estimate(endpoint: str, line: str) -> None:
    _safely(lambda: ESTIMATES.labels(endpoint=endpoint, line=line).inc())


def count_cost(route: str | None, key: str | None, units: float, cpu_s: float) -> None:
    """What one request cost (service/limits.py)."""
    route = route or UNMATCHED

    def record() -> None:
        UNITS.labels(route=route, client=key or ANONYMOUS).inc(units)
        CPU.labels(route=route).inc(cpu_s)

    _safely(record)


_worker_starts: list[Counter] = []


def count_worker_start() -> None:
    """A gunicorn worker is ready to serve (deploy/gunicorn.conf.py's post_worker_init). The
    counter is made here, not at import: a metric without labels opens its sample file when it
    is made, and a folder that is gone must not stop a worker from importing the app."""

    def record() -> None:
        if not _worker_starts:
            _worker_starts.append(Counter(
                "sizing_worker_starts_total", "gunicorn workers started: the workers of a start, then one "
                "for each worker replaced after it died.", registry=None))
        _worker_starts[0].inc()

    _safely(record)


def _start() -> None:
    g.started = time.perf_counter()


def _observe(response: Response) -> Response:
    route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
    method = request.method if request.method in METHODS else OTHER
    labels = {"route": route, "method": method, "status": str(response.status_code)}
    elapsed_s = time.perf_counter() - g.get("started", time.perf_counter())

    def record() -> None:
        REQUESTS.labels(**labels).inc()
        LATENCY.labels(**labels).observe(elapsed_s)

    _safely(record)
    return response


class _FolderHealth:
    """`sizing_metrics_folder_ok`, worked out at each scrape rather than read from a file."""

    def __init__(self, problem: str | None) -> None:
        self.problem = problem

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("sizing_metrics_folder_ok", "1 while the multiprocess metrics folder is "
                                   "usable; 0 when it is missing, full or failing (samples are then lost).")
        family.add_metric([], 0.0 if self.problem else 1.0)
        yield family


@operation(
    operation_id="metrics",
    summary="Prometheus metrics",
    media=("text/plain",),
    answer_description="The metrics.",
    public=True)
def _scrape() -> Response:
    """For Prometheus, in the text exposition format. Requests and latency in seconds by route,
    method and status; request costs in units and CPU seconds; estimates by endpoint and line;
    worker starts; whether the metrics folder is usable; build info."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        registry = CollectorRegistry()
        if os.path.isdir(folder):  # gone: only the folder's health is said
            multiprocess.MultiProcessCollector(registry)
        registry.register(_FolderHealth(folder_problem()))
    else:
        registry = REGISTRY
    try:
        text = generate_latest(registry)
    except (OSError, ValueError, RuntimeError, struct.error) as exc:  # a file removed or cut short mid-scrape
        FAILURES.note(exc)
        fallback = CollectorRegistry()
        fallback.register(_FolderHealth(f"{type(exc).__name__}: {exc}"))
        text = generate_latest(fallback)
    return Response(text, mimetype=CONTENT_TYPE_LATEST)


def init_metrics(app: Flask) -> None:
    """Time and count every request, and serve /metrics."""
    _safely(lambda: BUILD_INFO.labels(version=__version__, python=platform.python_version()).set(1))
    app.before_request(_start)
    app.after_request(_observe)
    app.add_url_rule("/metrics", "metrics", _scrape, methods=["GET"])
