"""gunicorn settings for the sizing service: explicit, from the environment, never from the host.

PORT (8000), HOST (127.0.0.1), WORKERS (2), THREADS (4) and LOG_LEVEL (info) set the bind, the
pool and the logs. The worker count is never derived from the host's CPU count, which inside
a container is the node's, not the pod's share.

PROMETHEUS_MULTIPROC_DIR, the folder the workers write their metric samples to: when it is
set (the image and the Kubernetes pod set it), deploy/entrypoint.sh empties it before gunicorn
starts, so it must belong to this one instance. When it is unset, the master makes a fresh
folder of its own under TMPDIR (sizing-metrics-<pid>-<random>) and removes it when it exits,
so two instances on one host neither share nor wipe each other's counts.

SIZING_CATALOG_FILE, the operator's catalog file, is read and checked once, by the master at
start: a bad file stops the start with its file and line, and every worker (those of the start,
and any that replaces a dead one) serves what the master read, whatever the file on disk says
later. A SIGHUP reads it again and keeps the old catalog if the new file is bad.

The worker is uvicorn's event loop with llhttp's parser (service/front/worker.py): each request
is read whole within the front door's limits (service/front/limits.py, SIZING_* variables)
before one of the worker's THREADS threads runs the app, so a slow or idle client holds no
thread and cannot stop a worker.
"""

import atexit
import gc
import os
import shutil
import socket
import sys
import tempfile

from service.logs import logging_config


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    number = int(value)
    if number < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return number


wsgi_app = "service.wsgi:app"
bind = f"{os.environ.get('HOST', '127.0.0.1')}:{_int('PORT', 8000)}"
# Each worker binds a socket of its own with SO_REUSEPORT, and the kernel spreads new
# connections over them. On one socket shared by event-loop workers, the worker that wakes
# first accepts every connection waiting: wrk's 16 connections went 16/0 in one run in six,
# and the pair served 1,665 requests/s instead of 4,800-5,100. on_starting checks that no
# other server listens on the port, which a second instance would otherwise share silently.
# The price: a worker that dies takes with it the connections still waiting in its socket's
# queue (they are reset), besides those it was serving; the next ones go to the others. A new
# worker binds its socket once its app is loaded (service/front/worker.py), so no connection
# waits for a worker that is still starting; while every worker is starting, none listens.
reuse_port = True
# uvicorn's loop and llhttp in front, the app in THREADS threads behind (service/front).
worker_class = "service.front.worker.FrontWorker"
workers = _int("WORKERS", 2)
threads = _int("THREADS", 4)
# An estimate takes microseconds; a request still running after 30 s means a stuck worker.
timeout = 30
# On SIGTERM workers stop accepting and finish what they hold within this many seconds;
# the Kubernetes grace period (deploy/k8s/deployment.yaml) must be longer.
graceful_timeout = 20
keepalive = 5
# Heartbeat files on tmpfs: a disk-backed or read-only /tmp stalls or breaks the arbiter's
# liveness check (the container's root filesystem is read-only).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
# The app writes one JSON access line per request (service/logs.py); gunicorn's own is off.
accesslog = None
logconfig_dict = logging_config(os.environ.get("LOG_LEVEL", "info").upper())
# Each worker builds its own app after the fork, so metric files are per worker pid.
preload_app = False
# No control socket: by default it sits at ~/.gunicorn/gunicorn.ctl, shared by every instance a
# user runs, and anyone who reaches it can resize or stop this one.
control_socket_disable = True


def on_starting(server):
    """The master, before it forks: the port free, a metrics folder of its own unless one is
    configured, and the operator's catalog file read once (a bad file stops the start)."""
    _port_free(server)
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        folder = tempfile.mkdtemp(prefix=f"sizing-metrics-{os.getpid()}-")
        # Workers are forked from the master, so they inherit the folder with the environment.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
        atexit.register(_remove_own_folder, folder, os.getpid())
    from service.overlay import CatalogFileError

    try:
        _pin_catalog(server)
    except CatalogFileError as exc:
        server.log.error("cannot start: %s", exc)
        raise SystemExit(1) from None


def _port_free(server):
    """Stop the start when another server listens on the bind: with reuse_port the master binds
    nothing, and the workers' SO_REUSEPORT sockets would join another instance of the same user
    on that port and split its connections with it."""
    for address in server.cfg.address:
        if not isinstance(address, tuple):  # a unix socket path: gunicorn binds it itself
            continue
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past a previous run's TIME_WAIT
            try:
                probe.bind(address[:2])
            except OSError as exc:
                server.log.error("cannot start: %s:%s is in use (%s)", address[0], address[1], exc.strerror)
                raise SystemExit(1) from None
    server.log.info("each worker listens on %s with a socket of its own (SO_REUSEPORT)",
                    ", ".join(f"{a[0]}:{a[1]}" if isinstance(a, tuple) else str(a) for a in server.cfg.address))


def on_reload(server):
    """SIGHUP: the catalog file read again for the new workers; a bad one is logged and the
    catalog read before is kept, so a broken edit never stops a running master."""
    from service.overlay import CatalogFileError

    try:
        _pin_catalog(server)
    except CatalogFileError as exc:
        server.log.error("the catalog file was not reloaded, the one read before is kept: %s", exc)


def _pin_catalog(server):
    path = os.environ.get("SIZING_CATALOG_FILE")
    if path:
        from service.overlay import pin_catalog_file
        from service.sizing import packaged_catalogs

        pin_catalog_file(path, packaged_catalogs())
        server.log.info("catalog file %s read; every worker serves it until the next start", path)


def _remove_own_folder(folder: str, master_pid: int) -> None:
    # Workers inherit the master's exit handlers and also leave through sys.exit: only the
    # master that made the folder removes it (on SIGTERM, SIGINT, SIGQUIT, or a failed bind).
    if os.getpid() == master_pid:
        shutil.rmtree(folder, ignore_errors=True)


def post_worker_init(worker):
    """A worker has loaded the app and serves: counted, so that replaced workers show. What it
    loaded (the catalogs, the schemas, the code: about 78,000 objects) is frozen out of the
    garbage collector's sweeps: a full sweep of them paused every thread of the worker for
    50-60 ms about once every 1,500 whole answers, and never found any of it garbage (a worker
    keeps its app until it is replaced)."""
    from service.metrics import count_worker_start

    count_worker_start()
    gc.freeze()


# A worker's threads hand the GIL to one another within 0.5 ms, not Python's 5 ms: a light
# request beside a batch, a sweep or a capacity over the catalog waits at most that long each
# time it needs the interpreter (a dozen times a request), and a thread that runs alone pays
# nothing (the interval only counts while another thread waits). Measured with
# tests/deploy/test_flood.py's calm client beside flooding batches, 2 x 4 on 2 cores: p99
# 35-53 ms at 0.5 ms, against 64-101 ms at 5 ms and 50-58 ms with the sleep each batch item
# took before (17-24 us an item).
SWITCH_INTERVAL_S = 0.0005


def post_fork(server, worker):
    """The worker's threads (its event loop's and the app's) switching every SWITCH_INTERVAL_S."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def child_exit(server, worker):
    """Drop a dead worker's live-gauge files so a scrape does not count a ghost (multiprocess)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        try:
            multiprocess.mark_process_dead(worker.pid)
        except OSError as exc:  # a folder gone or failing must never stop the master
            server.log.warning("the dead worker's live gauges were not cleared: %s", exc)
