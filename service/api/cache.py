"""A response cache for the pure computing endpoints.

An answer depends only on the request and on the catalogs loaded at start, so the same body
(with the same Accept and Accept-Language) always gets the same bytes: chatbots and dashboards
ask the same questions again and again. Bounded LRU per worker, by count and by bytes:
SIZING_CACHE_SIZE sets the number of answers kept (0 turns it off), SIZING_CACHE_BYTES the bytes
their bodies hold at most (32 MiB). An answer weighs its body's bytes, and at least the budget's
share of one entry, so neither bound is passed: a capacity over the whole catalog (370 KB) or a
comparison of a line (80 KB) is kept beside fewer others, and one larger than the budget is not
kept. Only successful answers are kept; problems carry a request id and are never reused.
"""

import contextlib
import functools
import hashlib
import os
import threading

import cachetools
from flask import Flask, Response, current_app, request

DEFAULT_SIZE = 1024
DEFAULT_BYTES = 32 << 20
_KEY = "sizing.cache"


class ResponseCache:
    """cachetools' LRU behind a lock (the gthread workers share it), weighing each entry by its
    body (see the module's docstring). It costs about 0.5 us a get or put: nothing beside a 1 ms
    answer."""

    def __init__(self, size: int, budget_bytes: int = DEFAULT_BYTES) -> None:
        self.size = size
        floor = max(1, budget_bytes // size) if size else 1  # at most `size` entries of the floor's weight
        self._items: cachetools.LRUCache | None = cachetools.LRUCache(
            maxsize=budget_bytes, getsizeof=lambda entry: max(floor, len(entry[0]))) if size else None
        self._lock = threading.Lock()

    def get(self, key):
        if self._items is None:
            return None
        with self._lock:
            return self._items.get(key)

    def put(self, key, entry) -> None:
        if self._items is None:
            return
        with self._lock, contextlib.suppress(ValueError):  # larger than the whole budget: answered, not kept
            self._items[key] = entry


def init_cache(app: Flask) -> None:
    size = app.config.get("CACHE_SIZE", int(os.environ.get("SIZING_CACHE_SIZE", DEFAULT_SIZE)))
    budget = app.config.get("CACHE_BYTES", int(os.environ.get("SIZING_CACHE_BYTES", DEFAULT_BYTES)))
    app.extensions[_KEY] = ResponseCache(size, budget)


def request_key() -> tuple:
    """What an answer depends on: the route, the body (as a digest, so a kept key stays small)
    and the media type it was sent as, the query, and the negotiated headers. The media type
    belongs here: the same bytes sent as text/plain are a 415, never a kept JSON answer."""
    asked = request._get_current_object()  # type: ignore[attr-defined]  # read seven times: the proxy once
    digest = hashlib.blake2b(asked.get_data(cache=True), digest_size=20).digest()
    headers = asked.headers
    return (asked.path, asked.method, asked.mimetype, digest, asked.query_string,
            headers.get("Accept", ""), headers.get("Accept-Language", ""))


def counting_hits(response: Response, kind: str, line: str = "none") -> Response:
    """`response`, whose later cache hits still count as answers of `kind` on `line` (the
    metrics count every answer, kept or computed)."""
    from ..metrics import count_estimate

    response.on_hit = lambda: count_estimate(kind, line)  # type: ignore[attr-defined]
    return response


def cached(view):
    """Serve a kept answer for the same request; keep a fresh 200 answer."""

    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        cache: ResponseCache = current_app.extensions[_KEY]
        key = request_key()
        entry = cache.get(key)
        if entry is not None:
            body, mimetype, on_hit = entry
            if on_hit:
                on_hit()
            return Response(body, mimetype=mimetype)
        response = current_app.make_response(view(*args, **kwargs))
        if response.status_code == 200:
            cache.put(key, (response.get_data(), response.mimetype, getattr(response, "on_hit", None)))
        return response

    return wrapper
