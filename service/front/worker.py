"""The gunicorn worker: uvicorn's event loop with the guarded httptools protocol in front, the
WSGI app gunicorn loads behind it (FrontDoor), in THREADS threads.

gunicorn stays the process manager (workers, their heartbeat and replacement, graceful stops,
the hooks of deploy/gunicorn.conf.py); uvicorn-worker, uvicorn's own gunicorn worker, runs the
loop. Each setting is explicit: httptools (not h11), asyncio's loop, no websockets, the lifespan
(FrontDoor logs its last counts and lets its threads go on the way out), no proxy headers (the
client's address is the TCP peer's: limits and logs key on it), no Server header, no uvicorn
access log (the app writes one JSON line per request). TLS is the ingress's business and is
refused here.

This module is imported by gunicorn's master when it reads its settings, never the app: the
front door's limits are read from the environment then, so a bad one stops the start.
"""

import logging
import resource
import socket
from dataclasses import replace
from typing import Any

from gunicorn import sock, util
from uvicorn.config import Config
from uvicorn_worker import UvicornWorker

from .door import FrontDoor
from .limits import from_env
from .protocol import guarded_protocol

LIMITS = from_env()
# File descriptors a worker keeps besides its connections: the listener, the event loop's, logs,
# the metric files, the catalogs' reads.
RESERVED_FDS = 64
log = logging.getLogger("sizing.front")


def descriptors_for(connections: int) -> int:
    """The soft limit of open files, raised toward the hard limit for `connections` and the
    reserve; the number of connections that fit under it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + RESERVED_FDS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return connections if soft == resource.RLIM_INFINITY else min(connections, soft - RESERVED_FDS)


def _own_sockets(cfg: Any) -> bool:
    """Whether each worker binds a socket of its own, as gunicorn's arbiter decides it (reuse_port
    where the platform has SO_REUSEPORT); else the workers share the master's listeners."""
    return bool(cfg.reuse_port) and hasattr(socket, "SO_REUSEPORT")


class FrontWorker(UvicornWorker):
    """gunicorn's worker for the service (the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.cfg.is_ssl:
            self.tmp.close()  # the heartbeat file gunicorn's worker opened
            raise RuntimeError("TLS is not served by the sizing service's workers: terminate it at the ingress")
        self.limits = replace(LIMITS, idle_timeout_s=float(self.cfg.keepalive))

    def init_process(self) -> None:
        """In the worker, after the fork: room for its connections under the open-files limit
        (a worker out of descriptors stops accepting, the probes' connections too), then
        uvicorn's settings, then gunicorn's start (which loads the app and runs)."""
        fits = descriptors_for(self.limits.max_connections)
        if fits < self.limits.max_connections:
            log.warning("the open-files limit leaves room for %d connections, not SIZING_MAX_CONNECTIONS=%d: "
                        "the cap is %d", max(fits, 1), self.limits.max_connections, max(fits, 1))
            self.limits = replace(self.limits, max_connections=max(fits, 1))
        if _own_sockets(self.cfg):
            # The arbiter bound this worker's own socket right after the fork; while the app loads
            # (seconds on a busy machine) the kernel would already hash new connections to it and
            # they would wait. It is bound again once the app is loaded (load_wsgi).
            for listener in self.sockets:
                listener.close()
            self.sockets = []
        self.protocol = guarded_protocol(self.limits)
        self.config = Config(
            app=None, log_config=None, http=self.protocol, loop="asyncio", ws="none",
            lifespan="on", interface="asgi3", proxy_headers=False, server_header=False, access_log=False,
            timeout_keep_alive=self.cfg.keepalive, timeout_notify=self.timeout, callback_notify=self.callback_notify,
            limit_max_requests=self.max_requests, timeout_graceful_shutdown=self.cfg.graceful_timeout,
            backlog=self.cfg.backlog)
        super().init_process()

    def load_wsgi(self) -> None:
        """The app gunicorn loads, behind the front door; then, with reuse_port, this worker's
        socket, so that it joins the port's group only when it can answer."""
        super().load_wsgi()
        self.wsgi = FrontDoor(self.wsgi, self.limits, threads=self.cfg.threads, tally=self.protocol.tally)
        if _own_sockets(self.cfg) and not self.sockets:
            self.sockets = sock.create_sockets(self.cfg, self.log)
            for listener in self.sockets:
                util.close_on_exec(listener)
            self.wait_fds = [*self.sockets, self.PIPE[0]]
