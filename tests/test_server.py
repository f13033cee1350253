"""The real server: gunicorn with deploy/gunicorn.conf.py answers on loopback."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "WORKERS": "2", "THREADS": "2"}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    log_path = tmp_path_factory.mktemp("gunicorn") / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([str(gunicorn), "--config", "deploy/gunicorn.conf.py"], cwd=ROOT,
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            time.sleep(0.1)
    else:
        proc.kill()
        proc.wait()
        pytest.fail(f"gunicorn did not start: {log_path.read_text()[-2000:]}")
    yield base
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def test_healthz_and_readyz(server):
    assert requests.get(f"{server}/healthz", timeout=5).json() == {"status": "ok"}
    assert requests.get(f"{server}/readyz", timeout=5).json() == {"status": "ready"}


def test_an_estimate_over_the_wire(server):
    body = {"model": "llama-3.1-70b", "hardware": {"card": "W-B", "count": 3}, "lang": "zh"}
    response = requests.post(f"{server}/estimate", json=body, timeout=5)
    assert response.status_code == 200
    answer = response.json()
    assert answer["fits"] is False and answer["cards_needed"] == 4
    assert "放不下" in answer["summary"]


def test_errors_over_the_wire_are_problem_json(server):
    response = requests.post(f"{server}/estimate", data="{", headers={"Content-Type": "application/json"}, timeout=5)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize(("name", "value"), [("workers", 2), ("threads", 4), ("worker_class", "gthread"), ("timeout", 30)])
def test_gunicorn_settings_are_pinned(name, value):
    settings: dict = {}
    env_before = {k: os.environ.pop(k, None) for k in ("WORKERS", "THREADS", "PORT")}
    try:
        exec((ROOT / "deploy" / "gunicorn.conf.py").read_text(), settings)
    finally:
        os.environ.update({k: v for k, v in env_before.items() if v is not None})
    assert settings[name] == value
    assert settings["bind"] == "127.0.0.1:8000"
