"""One client floods the real server while another asks single estimates, on loopback: the limits
(service/limits.py) and the front door (service/front) keep the second client's requests
answered, refuse the flood with answers, never with dropped connections.

These are the functional halves of `make flood` (tests/bench/flood.py), which also holds the
timing thresholds (p99, /healthz within 1 s): timings belong to a benchmark on a quiet machine,
and this suite must pass on a busy one. Each test prints what it measured."""

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from service.client import SizingClient
from tests import processes
from tests.bench import flood as bench

from . import server as srv

FLOOD_S = 8.0
# As deployed (deploy/k8s: keys, and a bucket per key), and as `make run` starts (no bucket: the
# per-request budget and one batch at a time per worker).
SETTINGS = {
    "as-deployed": {"SIZING_API_KEYS": f"{bench.FLOOD_KEY},{bench.CALM_KEY}", "SIZING_RATE_LIMIT": "50", "SIZING_RATE_BURST": "2000"},
    "defaults": {"SIZING_API_KEYS": f"{bench.FLOOD_KEY},{bench.CALM_KEY}"},
}


def flooded(base: str, kind: str, slow: int = 0, probe_healthz: bool = False) -> tuple[dict, dict]:
    """The calm client's result while a flooding process (the benchmark's) runs `kind`."""
    # 8 threads: more than the workers' batch slots and waiting places take (2 x (1 + 1) for one
    # client), so that the limits must refuse some whatever the machine's speed
    proc = bench.spawn_flooder(base, FLOOD_S, 8, kind, slow, start_new_session=True)
    processes.STARTED.append(proc.pid)
    try:
        time.sleep(1.0)  # the flood is on before the calm client starts
        calm = bench.calm(base, bench.CALM_KEY, time.monotonic() + FLOOD_S - 1.5, probe_healthz)
        out, _ = proc.communicate(timeout=FLOOD_S + 120)
    finally:
        processes.stop(proc, grace_s=5)
    report = json.loads(out.strip().splitlines()[-1])
    lat = calm["latencies"]
    print(f"{kind}: calm {len(lat)} estimates, p50 {bench.quantile(lat, 0.5) * 1e3:.1f} ms, "
          f"p99 {bench.quantile(lat, 0.99) * 1e3:.1f} ms, statuses {dict(calm['statuses'])}; flood {report}")
    return calm, report


@pytest.mark.parametrize("settings", sorted(SETTINGS))
def test_a_client_flooding_batches_is_refused_and_a_calm_one_answered(tmp_path, settings):
    with srv.running(tmp_path, workers=2, threads=4, **SETTINGS[settings]) as server:
        calm, report = flooded(server.base, "batches")
    statuses = report["statuses"]
    assert set(calm["statuses"]) == {200} and len(calm["latencies"]) >= 10
    assert statuses.get("200", 0) > 0  # the flooder still got some work done
    assert statuses.get("429", 0) + statuses.get("503", 0) > 0  # and the limits bit
    assert "0" not in statuses  # every refusal came as an answer, never a dropped connection


def test_a_client_flooding_its_costliest_requests_and_slow_headers_is_refused_and_probes_answered(tmp_path):
    """A long unknown name, a huge /rank and 1000 unknown names in a batch, from 8 threads, with 8
    connections sending one header line every 2 s: the costs follow CPU, so the flooding key is
    refused with 429; the calm key and /healthz are answered throughout."""
    with srv.running(tmp_path, workers=2, threads=4, SIZING_HEADER_TIMEOUT_S="3", **SETTINGS["as-deployed"]) as server:
        calm, report = flooded(server.base, "costly", slow=8, probe_healthz=True)
    statuses = report["statuses"]
    assert set(calm["statuses"]) == {200} and len(calm["latencies"]) >= 10
    assert statuses.get("429", 0) > 0 and "0" not in statuses
    assert calm["healthz"] and all(ok for _, ok in calm["healthz"])
    print(f"/healthz worst {max(s for s, _ in calm['healthz']) * 1e3:.1f} ms over {len(calm['healthz'])} probes")
    assert report["slow_closed"] > 0  # the server closed slow requests (408 after 3 s here)


def test_four_concurrent_batches_from_one_python_client_all_succeed(tmp_path):
    """A procurement system's thread pool: more heavy requests than the workers have slots. The
    extra ones wait a moment for a slot, or are refused with Retry-After, which the client honours."""
    with srv.running(tmp_path, workers=2, threads=4, SIZING_API_KEYS=bench.CALM_KEY) as server:
        client = SizingClient(server.base, api_key=bench.CALM_KEY, timeout_s=60)
        items = [{"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"}, "workload": {"batch_size": b}}
                 for b in range(1, 51)]
        with ThreadPoolExecutor(4) as pool:
            counts = list(pool.map(lambda _: client.estimate_batch(items)["count"], range(4)))
    assert counts == [50] * 4
