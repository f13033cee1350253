"""The real server under gunicorn on loopback: answers, metrics that add up, signals, logs."""

import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

import service

from . import delay_app
from . import server as srv

ESTIMATE = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with srv.running(tmp_path_factory.mktemp("server"), workers=2, threads=4) as running:
        yield running


def samples(base: str, name: str, **labels: str) -> float:
    text = requests.get(f"{base}/metrics", timeout=5).text
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


def test_probes_and_an_estimate_over_the_wire(server):
    assert requests.get(f"{server.base}/healthz", timeout=5).json() == {"status": "ok"}
    response = requests.post(f"{server.base}/estimate", json={**ESTIMATE, "lang": "zh"}, timeout=5)
    assert response.status_code == 200 and "放得下" in response.json()["summary"]
    bad = requests.post(f"{server.base}/estimate", data="{", timeout=5,
                        headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.headers["Content-Type"] == "application/problem+json"


def test_the_request_counter_sums_to_what_was_sent_across_workers(server):
    route = {"route": "/throughput", "method": "POST"}
    before = samples(server.base, "sizing_http_requests_total", **route)
    sent = 53
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: requests.post(
            f"{server.base}/throughput", json=ESTIMATE, timeout=10).status_code, range(sent)))
    assert codes == [200] * sent
    assert samples(server.base, "sizing_http_requests_total", **route) - before == sent
    assert samples(server.base, "sizing_http_request_duration_seconds_count", **route) == \
        samples(server.base, "sizing_http_requests_total", **route)
    assert samples(server.base, "sizing_estimates_total", endpoint="throughput", line="consumer") >= sent
    assert samples(server.base, "sizing_build_info", version=service.__version__) == 1  # the release it serves


def test_request_id_is_taken_echoed_and_logged_as_json(server):
    response = requests.post(f"{server.base}/estimate", json={"model": "nope", "hardware": {"card": "D-M"}},
                             headers={"X-Request-ID": "trace-abc.123"}, timeout=5)
    assert response.headers["X-Request-ID"] == "trace-abc.123"
    assert response.json()["request_id"] == "trace-abc.123"
    made = requests.get(f"{server.base}/healthz", timeout=5).headers["X-Request-ID"]
    assert len(made) == 32
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        access = [line for line in server.log_lines() if line.get("request_id") == "trace-abc.123"]
        if access:
            break
        time.sleep(0.1)
    assert access and access[0]["status"] == 422 and access[0]["route"] == "/estimate"
    assert access[0]["logger"] == "sizing.access" and access[0]["level"] == "info"


def test_sigterm_lets_every_in_flight_request_finish(tmp_path):
    with srv.running(tmp_path, workers=2, threads=4, app=delay_app.APP) as server:
        in_flight = 6
        with ThreadPoolExecutor(in_flight) as pool:
            futures = [pool.submit(requests.post, f"{server.base}/estimate", json=ESTIMATE, timeout=30,
                                   headers={delay_app.DELAY_HEADER: "2000"}) for _ in range(in_flight)]
            time.sleep(0.7)  # all six are inside the workers, sleeping
            server.proc.send_signal(signal.SIGTERM)
            codes = [f.result().status_code for f in futures]
        assert codes == [200] * in_flight
        assert server.proc.wait(timeout=30) == 0


def exited_at(pid: int, deadline: float) -> float:
    """When every thread of the process had exited (each a zombie, or the process reaped): its
    files, sockets included, are closed once the last thread is gone; the leader alone turns
    zombie while the others may still be on their way out. Polled every millisecond."""
    while time.monotonic() < deadline:
        if all(state in ("Z", "X") for state in _thread_states(pid)):
            return time.monotonic()
        time.sleep(0.001)
    raise AssertionError(f"process {pid} still running 10 s after SIGKILL")


def _thread_states(pid: int) -> list[str]:
    """The state letter of each of the process's threads (none once it is reaped)."""
    states = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return states
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            continue
    return states


def test_a_killed_worker_is_replaced_and_only_its_requests_fail(tmp_path):
    with srv.running(tmp_path, workers=2, threads=4, app=delay_app.APP) as server:
        results: list[tuple[float, bool]] = []
        stop = threading.Event()

        def client():
            while not stop.is_set():
                started = time.monotonic()
                try:
                    ok = requests.post(f"{server.base}/estimate", json=ESTIMATE, timeout=10,
                                       headers={delay_app.DELAY_HEADER: "150"}).status_code == 200
                except requests.RequestException:
                    ok = False
                results.append((started, ok))

        clients = [threading.Thread(target=client) for _ in range(6)]
        for thread in clients:
            thread.start()
        time.sleep(1.0)
        victim = min(server.children())
        killed_at = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        # Each worker listens on a socket of its own (reuse_port): until the kernel has closed the
        # dead worker's files, connections it hashes there still complete and are then reset with
        # it. Those are the dead worker's requests too; none sent after its socket closed may fail.
        closed_at = exited_at(victim, deadline=time.monotonic() + 10)
        time.sleep(2.0)
        stop.set()
        for thread in clients:
            thread.join()
        failed = [started for started, ok in results if not ok]
        assert len(failed) <= 6 + sum(killed_at <= started <= closed_at for started, _ in results), \
            "more failures than requests in flight or queued for the dead worker"
        assert all(started <= closed_at for started in failed), "a request sent after the dead worker's socket closed failed"
        assert sum(ok for started, ok in results if started > closed_at + 0.1) > 0
        assert victim not in server.children() and len(server.children()) == 2


@pytest.mark.parametrize(("name", "value"), [
    ("workers", 2), ("threads", 4), ("worker_class", "service.front.worker.FrontWorker"),
    ("timeout", 30), ("graceful_timeout", 20), ("accesslog", None), ("control_socket_disable", True),
    ("reuse_port", True)])
def test_gunicorn_settings_are_pinned(monkeypatch, name, value):
    for var in ("WORKERS", "THREADS", "PORT", "HOST"):
        monkeypatch.delenv(var, raising=False)
    settings: dict = {}
    exec((srv.ROOT / "deploy" / "gunicorn.conf.py").read_text(), settings)
    assert settings[name] == value
    assert settings["bind"] == "127.0.0.1:8000"
    assert settings["worker_tmp_dir"] in ("/dev/shm", None)
    assert callable(settings["child_exit"])


def test_a_worker_hands_the_gil_over_within_half_a_millisecond():
    settings: dict = {}
    exec((srv.ROOT / "deploy" / "gunicorn.conf.py").read_text(), settings)
    before = sys.getswitchinterval()
    try:
        settings["post_fork"](None, None)
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    finally:
        sys.setswitchinterval(before)


def test_a_worker_freezes_what_it_loaded_out_of_the_collectors_sweeps(monkeypatch):
    import gc

    settings: dict = {}
    exec((srv.ROOT / "deploy" / "gunicorn.conf.py").read_text(), settings)
    monkeypatch.setattr("service.metrics.count_worker_start", lambda: None)  # the worker's, not this process's
    try:
        settings["post_worker_init"](None)
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()


def test_the_front_doors_own_errors_are_problem_json_too(server):
    """A request line over the front door's limit never reaches the app; it still gets problem+json."""
    response = requests.get(f"{server.base}/troubleshoot?q={'x' * 9000}", timeout=5)
    assert response.status_code in (400, 414)
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json()["status"] == response.status_code


def test_the_workers_share_the_connections_and_a_second_server_on_the_port_stops(server, tmp_path):
    """Each worker has a socket of its own on the port (reuse_port): sixteen kept-alive
    connections are spread over both, never all held by the worker that woke first; a second
    instance on the same port is refused, not let in to share it."""
    import socket as sockets

    def sockets_of(pid: int) -> int:
        return sum(1 for fd in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"))

    port = int(server.base.rsplit(":", 1)[1])
    before = {pid: sockets_of(pid) for pid in server.children()}
    opened = [sockets.create_connection(("127.0.0.1", port), timeout=10) for _ in range(32)]
    try:
        for sock in opened:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for sock in opened:
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        gained = {pid: sockets_of(pid) - count for pid, count in before.items()}
        assert sum(gained.values()) >= 32 and min(gained.values()) >= 4, gained  # 16 +- 12: P(miss) < 1e-5
    finally:
        for sock in opened:
            sock.close()
    with pytest.raises(RuntimeError) as info:
        srv.start(tmp_path, workers=1, threads=1, PORT=str(port))
    assert "in use" in str(info.value)


def test_a_key_setting_without_a_key_stops_gunicorn(tmp_path):
    with pytest.raises(RuntimeError) as info:
        srv.start(tmp_path, workers=1, threads=1, SIZING_API_KEYS=" , ")
    assert "SIZING_API_KEYS is set but holds no key" in str(info.value)
