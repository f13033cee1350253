"""gunicorn settings for the sizing service: explicit, from the environment, never from the host.

PORT (8000), HOST (127.0.0.1), WORKERS (2), THREADS (4) and LOG_LEVEL (info) set the bind, the
pool and the logs. The worker count is never derived from the host's CPU count, which inside
a container is the node's, not the pod's share.

PROMETHEUS_MULTIPROC_DIR, the folder the workers write their metric samples to: when it is
set (the image and the Kubernetes pod set it), deploy/entrypoint.sh empties it before gunicorn
starts, so it must belong to this one instance. When it is unset, the master makes a fresh
folder of its own under TMPDIR (sizing-metrics-<pid>-<random>) and removes it when it exits,
so two instances on one host neither share nor wipe each other's counts.
"""

import atexit
import os
import shutil
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
worker_class = "gthread"
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


def on_starting(server):
    """The master, before it binds or forks: a metrics folder of its own unless one is configured."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        folder = tempfile.mkdtemp(prefix=f"sizing-metrics-{os.getpid()}-")
        # Workers are forked from the master, so they inherit the folder with the environment.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
        atexit.register(_remove_own_folder, folder, os.getpid())


def _remove_own_folder(folder: str, master_pid: int) -> None:
    # Workers inherit the master's exit handlers and also leave through sys.exit: only the
    # master that made the folder removes it (on SIGTERM, SIGINT, SIGQUIT, or a failed bind).
    if os.getpid() == master_pid:
        shutil.rmtree(folder, ignore_errors=True)


def post_fork(server, worker):
    """gunicorn's own error pages (a request line too long, a malformed header) as problem+json."""
    from service.gunicorn_errors import install

    install()


def child_exit(server, worker):
    """Drop a dead worker's live-gauge files so a scrape does not count a ghost (multiprocess)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
