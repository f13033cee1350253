"""The gunicorn worker: uvicorn's event loop with the guarded httptools protocol in front, the
WSGI app gunicorn loads behind it (FrontDoor), in THREADS threads.

gunicorn stays the process manager (workers, their heartbeat and replacement, graceful stops,
the hooks of deploy/gunicorn.conf.py); uvicorn-worker, uvicorn's own gunicorn worker, runs the
loop. Each setting is explicit: httptools (not h11), asyncio's loop, no websockets, no lifespan,
no proxy headers (the client's address is the TCP peer's: limits and logs key on it), no Server
header, no uvicorn access log (the app writes one JSON line per request). TLS is the ingress's
business and is refused here.

This module is imported by gunicorn's master when it reads its settings, never the app: the
front door's limits are read from the environment then, so a bad one stops the start.
"""

from dataclasses import replace
from typing import Any

from uvicorn.config import Config
from uvicorn_worker import UvicornWorker

from .door import FrontDoor
from .limits import from_env
from .protocol import guarded_protocol

LIMITS = from_env()


class FrontWorker(UvicornWorker):
    """gunicorn's worker for the service (the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.cfg.is_ssl:
            raise RuntimeError("TLS is not served by the sizing service's workers: terminate it at the ingress")
        self.limits = replace(LIMITS, idle_timeout_s=float(self.cfg.keepalive))
        self.config = Config(
            app=None, log_config=None, http=guarded_protocol(self.limits), loop="asyncio", ws="none",
            lifespan="off", interface="asgi3", proxy_headers=False, server_header=False, access_log=False,
            timeout_keep_alive=self.cfg.keepalive, timeout_notify=self.timeout, callback_notify=self.callback_notify,
            limit_max_requests=self.max_requests, timeout_graceful_shutdown=self.cfg.graceful_timeout,
            backlog=self.cfg.backlog)

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = FrontDoor(self.wsgi, self.limits, threads=self.cfg.threads)
