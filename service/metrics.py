"""Prometheus metrics: requests by route template, method and status; estimates by endpoint
and product line; build info. Correct under gunicorn's multiprocess mode.

With PROMETHEUS_MULTIPROC_DIR set, each worker writes its samples to files there and every
scrape builds a fresh registry that merges them; without it, the process's default registry is
served. Under gunicorn it is always set before the workers start: a configured folder is
emptied by deploy/entrypoint.sh, and otherwise the master makes a fresh one of its own
(deploy/gunicorn.conf.py), so instances on one host never share or wipe each other's.
"""

import os
import platform
import time

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
)

from . import __version__

REQUESTS = Counter(
    "sizing_http_requests_total", "HTTP requests answered.", ("route", "method", "status"))
LATENCY = Histogram(
    "sizing_http_request_duration_seconds", "Time from request to response.",
    ("route", "method", "status"),
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
ESTIMATES = Counter(
    "sizing_estimates_total", "Answers computed, by endpoint and the card's product line.",
    ("endpoint", "line"))
BUILD_INFO = Gauge(
    "sizing_build_info", "Always 1; the labels say what is running.", ("version", "python"),
    multiprocess_mode="max")

UNMATCHED = "unmatched"  # 404s share one label value, so cardinality stays bounded
# Methods a client may send are unbounded; the label takes these, or "other".
METHODS = frozenset({"GET", "POST", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
OTHER = "other"


def count_estimate(endpoint: str, line: str) -> None:
    ESTIMATES.labels(endpoint=endpoint, line=line).inc()


def _start() -> None:
    g.started = time.perf_counter()


def _observe(response: Response) -> Response:
    route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
    method = request.method if request.method in METHODS else OTHER
    labels = {"route": route, "method": method, "status": str(response.status_code)}
    REQUESTS.labels(**labels).inc()
    LATENCY.labels(**labels).observe(time.perf_counter() - g.get("started", time.perf_counter()))
    return response


def _scrape() -> Response:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def init_metrics(app: Flask) -> None:
    """Time and count every request, and serve /metrics."""
    BUILD_INFO.labels(version=__version__, python=platform.python_version()).set(1)
    app.before_request(_start)
    app.after_request(_observe)
    app.add_url_rule("/metrics", "metrics", _scrape, methods=["GET"])
