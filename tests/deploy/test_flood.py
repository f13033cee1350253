"""One client floods batch requests while another asks single estimates, on loopback against the
real server: the limits (service/limits.py) keep the second client's answers quick and whole."""

import json
import multiprocessing
import threading
import time

import pytest
import requests

from . import server as srv

FLOOD_S = 8.0
CALM_PAUSE_S = 0.02  # a dashboard's pace, well inside its own key's rate
# Encoded once: the flooding threads spend their time sending, not encoding, so that the test
# process takes as little as it can of the CPU the server needs.
BATCH = json.dumps({"items": [{"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"},
                               "workload": {"batch_size": b}} for b in range(1, 1001)]}).encode()


# As deployed (deploy/k8s: keys, and a bucket per key), and as `make run` starts (no bucket: the
# per-request budget and one batch at a time per worker).
SETTINGS = {
    "as-deployed": {"SIZING_API_KEYS": "flood-key,calm-key", "SIZING_RATE_LIMIT": "50", "SIZING_RATE_BURST": "2000"},
    "defaults": {"SIZING_API_KEYS": "flood-key,calm-key"},
}


def flood(base: str, seconds: float, started, results) -> None:
    """Four threads sending batches for `seconds`, in a process of its own: a flooder is another
    client. As threads of the test's own interpreter they took its GIL from the calm client,
    whose requests then waited 120-160 ms in its own process while the server spent 2-5 ms on
    them (one run in about eight)."""
    stop = time.monotonic() + seconds
    statuses: list[int] = []

    def one():
        with requests.Session() as session:
            session.headers.update({"X-API-Key": "flood-key", "Content-Type": "application/json"})
            while time.monotonic() < stop:
                try:
                    statuses.append(session.post(f"{base}/estimate/batch", data=BATCH, timeout=30).status_code)
                except requests.ConnectionError:
                    statuses.append(0)  # counted: a refusal must come as an answer

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    started.set()
    for t in threads:
        t.join()
    results.put(statuses)


@pytest.mark.parametrize("settings", sorted(SETTINGS))
def test_a_flooding_client_does_not_slow_a_calm_one(tmp_path, settings):
    with srv.running(tmp_path, workers=2, threads=4, **SETTINGS[settings]) as server:
        spawn = multiprocessing.get_context("spawn")
        started, results = spawn.Event(), spawn.Queue()
        flooder = spawn.Process(target=flood, args=(server.base, FLOOD_S, started, results))
        flooder.start()
        assert started.wait(30), "the flooding process did not start"
        stop = time.monotonic() + FLOOD_S
        time.sleep(0.5)  # the flood is on before the calm client starts
        latencies, statuses = [], []
        with requests.Session() as calm:
            calm.headers["X-API-Key"] = "calm-key"
            i = 0
            while time.monotonic() < stop - 0.5:
                time.sleep(CALM_PAUSE_S)
                i += 1  # a new question each time: the answer cache does not help
                body = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"},
                        "workload": {"batch_size": 1 + i % 64, "context_tokens": 1024 + i}}
                started_s = time.perf_counter()
                response = calm.post(f"{server.base}/estimate", json=body, timeout=10)
                latencies.append(time.perf_counter() - started_s)
                statuses.append(response.status_code)
        flood_statuses = results.get(timeout=60)
        flooder.join(timeout=30)
        results.close()
    latencies.sort()
    p99 = latencies[int(0.99 * (len(latencies) - 1))]
    refused = sum(s in (429, 503) for s in flood_statuses)
    print(f"calm: {len(latencies)} estimates, p50 {latencies[len(latencies) // 2] * 1e3:.1f} ms, "
          f"p99 {p99 * 1e3:.1f} ms; flood: {len(flood_statuses)} batches, "
          f"{flood_statuses.count(200)} served, {flood_statuses.count(429)} x 429, {flood_statuses.count(503)} x 503")
    assert set(statuses) == {200}
    assert len(latencies) >= 50
    assert p99 < 0.100, f"p99 {p99 * 1e3:.0f} ms"
    assert refused > 0 and 200 in flood_statuses  # the limits bit, and the flooder still got some work done
    assert 0 not in flood_statuses  # every refusal came as an answer, never a dropped connection
