"""The app the shutdown tests serve under gunicorn: the service's own, holding each request the
X-Test-Delay-Ms header asks for (at most 10 s) before answering it, so that a test can keep
requests in flight while it stops the server. The production app (service.wsgi) has no such hook."""

import time

from flask import request

from service.app import create_app

DELAY_HEADER = "X-Test-Delay-Ms"
APP = "tests.deploy.delay_app:app"


def _delay() -> None:
    delay_ms = request.headers.get(DELAY_HEADER, "")
    if delay_ms.isdigit():
        time.sleep(min(int(delay_ms), 10_000) / 1e3)


app = create_app()
app.before_request(_delay)
