"""gunicorn settings for the sizing service: explicit, from the environment, never from the host.

PORT (8000), HOST (127.0.0.1), WORKERS (2) and THREADS (4) set the bind and the pool; the
worker count is never derived from the host's CPU count, which inside a container is the
node's, not the pod's share.
"""

import os


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
graceful_timeout = 20
keepalive = 5
# Heartbeat files on tmpfs: a disk-backed /tmp can stall the arbiter's liveness check.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
