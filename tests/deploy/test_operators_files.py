"""The files an operator gives the running server: the catalog file is read once per start (one
price per revision, and a broken edit never takes a running master down), and the metrics
folder lost or full degrades /metrics and /readyz, never the answers or the master. Against
gunicorn on loopback, as `make run` and the pod start it."""

import os
import signal
import subprocess
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from . import server as srv

GOOD = "prices:\n  h100-sxm: {{amount: {amount}, currency: USD, source: framework contract}}\n"
BROKEN = "prices:\n  h100-sxm: {amount: -5, currency: USD, source: a typo}\n"


def prices(server, asks: int = 24) -> set[float]:
    """The H100 price every answer gave, over new connections (so both workers answer)."""
    return {requests.get(f"{server.base}/cards/h100-sxm", timeout=30).json()["price"]["amount"] for _ in range(asks)}


def replace_worker(server, victim: int) -> None:
    """Kill one worker and wait, with a deadline, for the master to have replaced it and the new
    worker to listen (it binds its socket once its app is loaded)."""
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = server.children()
        if victim not in children and len(children) == 2 and server.listening() == children:
            return
        time.sleep(0.1)
    raise AssertionError(f"worker {victim} was not replaced: {server.children()}")


def test_one_catalog_per_start_whatever_the_file_becomes(tmp_path):
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(GOOD.format(amount=25000))
    env = {"SIZING_CATALOG_FILE": str(catalog)}
    with srv.running(tmp_path / "first", workers=2, threads=2, **env) as server:
        assert prices(server) == {25000}
        catalog.write_text(GOOD.format(amount=99999))  # a good edit in place (a ConfigMap updated in place)
        for victim in sorted(server.children()):  # every worker replaced after the edit
            replace_worker(server, victim)
        assert prices(server) == {25000}, "a worker re-read the file: two prices in one revision"
        catalog.write_text(BROKEN)
        replace_worker(server, min(server.children()))
        assert server.proc.poll() is None, "a broken file on disk took the master down"
        assert prices(server) == {25000}
        server.proc.send_signal(signal.SIGHUP)  # an operator asks for a reload: the bad file is refused
        time.sleep(2)
        assert server.proc.poll() is None and prices(server) == {25000}
        assert any("not reloaded" in line.get("message", "") for line in server.log_lines())
    catalog.write_text(GOOD.format(amount=99999))
    with srv.running(tmp_path / "second", workers=2, threads=2, **env) as server:  # the next revision
        assert prices(server) == {99999}
    catalog.write_text(BROKEN)
    with pytest.raises(RuntimeError) as info:
        srv.start(tmp_path / "third", workers=2, threads=2, **env)
    assert f"{catalog}:2: prices[0]: amount must be a positive number" in str(info.value)


def scrape(server) -> dict[str, float]:
    text = requests.get(f"{server.base}/metrics", timeout=30).text
    return {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples
            if not s.labels}


ESTIMATE = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}


def test_a_deleted_metrics_folder_costs_no_answer_and_no_master(tmp_path):
    folder = tmp_path / "metrics"
    with srv.running(tmp_path, workers=2, threads=2, PROMETHEUS_MULTIPROC_DIR=str(folder)) as server:
        assert scrape(server)["sizing_metrics_folder_ok"] == 1
        deadline = time.monotonic() + 30  # the second worker may still be starting after the first answered
        while scrape(server).get("sizing_worker_starts_total") != 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert scrape(server)["sizing_worker_starts_total"] == 2
        subprocess.run(["rm", "-rf", str(folder)], check=True)
        for _ in range(10):
            assert requests.post(f"{server.base}/estimate", json=ESTIMATE, timeout=30).status_code == 200
        assert scrape(server)["sizing_metrics_folder_ok"] == 0
        ready = requests.get(f"{server.base}/readyz", timeout=30)
        assert ready.status_code == 503 and "metrics folder" in ready.json()["detail"]
        assert requests.get(f"{server.base}/healthz", timeout=30).status_code == 200
        replace_worker(server, min(server.children()))
        assert server.proc.poll() is None
        assert requests.post(f"{server.base}/estimate", json=ESTIMATE, timeout=30).status_code == 200


@pytest.fixture()
def small_tmpfs(tmp_path):
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()}); CI runs as root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder) -> None:
    with open(folder / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


ROUTES = ["/estimate", "/memory", "/throughput", "/scaling", "/cost", "/rank", "/recommend", "/normalize",
          "/capacity", "/compare", "/cards", "/models", "/troubleshoot", "/healthz", "/openapi.yaml",
          "/cards/h100-sxm", "/models/llama-3.1-8b", "/estimate/batch", "/estimate/sweep", "/nowhere"]


def test_a_full_metrics_tmpfs_costs_no_answer_and_no_worker(tmp_path, small_tmpfs):
    """Without reserved pages, the first sample written to a new page of a sparse file on a full
    tmpfs is a SIGBUS: the worker dies, and its replacement too (2,278 times in 10 minutes)."""
    folder = small_tmpfs / "metrics"
    with srv.running(tmp_path, workers=2, threads=2, PROMETHEUS_MULTIPROC_DIR=str(folder)) as server:
        workers = server.children()
        fill(small_tmpfs)
        answered = []
        for route in ROUTES:  # many new label sets: the sample files must grow
            for method in ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"):
                answered.append(requests.request(method, server.base + route, json={}, timeout=30).status_code)
        assert all(status < 500 for status in answered), answered
        assert requests.post(f"{server.base}/estimate", json=ESTIMATE, timeout=30).status_code == 200
        assert server.children() == workers, "a worker died"
        assert scrape(server)["sizing_metrics_folder_ok"] == 0
        ready = requests.get(f"{server.base}/readyz", timeout=30)
        assert ready.status_code == 503 and "full" in ready.json()["detail"]


def test_no_control_socket_is_left_for_others_to_reach(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with srv.running(tmp_path, workers=1, threads=2, HOME=str(home), XDG_RUNTIME_DIR=None) as server:
        assert requests.get(f"{server.base}/healthz", timeout=30).status_code == 200
        assert not (home / ".gunicorn").exists()
