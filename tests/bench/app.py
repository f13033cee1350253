"""The WSGI entry point the benchmark serves under gunicorn: `tests.bench.app:app`, the service's
app with the framework floor view (/bench/echo) beside its routes."""

from .floor import bench_app

app = bench_app()
