"""`make flood`: one client floods the service with its costliest requests while another asks
plain estimates, against gunicorn with the Kubernetes settings (keys, 50 units a second per key,
a burst of 2,000, one heavy request per worker, 2 workers x 4 threads), on loopback.

    python -m tests.bench.flood [--seconds 15]

Three rounds, each reported with its commands' figures, and the thresholds they must meet:

1. costly: the flooding key runs 8 threads, in turn, of a 3,900-character unknown model name
   (GET /models/<name>), /rank with a huge custom model and a 1000-item batch of unknown model
   names; the calm key asks a new estimate every 20 ms. The calm key's p99 must stay under
   100 ms, every one of its requests answered 200, and the flooding key refused with 429.
2. slow clients: the same, with 8 more connections that send one header line every 2 s; /healthz,
   asked every 100 ms, must answer within 1 s throughout.
3. a procurement system's thread pool: four concurrent 50-item batches from one client with the
   project's Python client (which honours Retry-After): all must succeed.

The flooder is a process of its own (`flooder` below), as another client is. Exits non-zero
when a threshold is missed. Timing thresholds live here, not in `make test`: a benchmark is run
on a quiet machine, the test suite anywhere (tests/deploy/test_flood.py keeps the functional
part of this).
"""

import argparse
import json
import random
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from service.client import SizingClient

from .run import free_port, start_server, stop_server

# The two clients' keys, as long as the service requires (service/security.py, MIN_KEY_CHARS).
FLOOD_KEY = "flood-key-0000000000000000000000000"
CALM_KEY = "calm-key-00000000000000000000000000"
AS_DEPLOYED = {"SIZING_API_KEYS": f"{FLOOD_KEY},{CALM_KEY}", "SIZING_RATE_LIMIT": "50", "SIZING_RATE_BURST": "2000",
               "SIZING_MAX_REQUEST_COST": "2000", "SIZING_HEAVY_CONCURRENCY": "1"}
CALM_PAUSE_S = 0.02
P99_LIMIT_S = 0.100
HEALTHZ_LIMIT_S = 1.0
HUGE_MODEL = {"name": "huge", "params_billion": 2000, "layers": 4000, "hidden_size": 65536,
              "attention_heads": 512, "kv_heads": 8}


def _unknown_name(rng: random.Random, length: int) -> str:
    return "".join(rng.choices(string.ascii_lowercase + string.digits + " -", k=length))


def costly_requests(seed: int = 7) -> list[tuple[str, str, bytes | None]]:
    """(method, path, body) of the costliest requests a review found, each encoded once."""
    rng = random.Random(seed)
    batch = {"items": [{"model": f"model-{i}-{_unknown_name(rng, 150)}", "hardware": {"card": "h100-sxm"}}
                       for i in range(1000)]}
    return [
        ("GET", "/v1/models/" + _unknown_name(rng, 3900).replace(" ", "-"), None),
        ("POST", "/v1/rank", json.dumps({"line": "datacenter", "model": HUGE_MODEL}).encode()),
        ("POST", "/v1/estimate/batch", json.dumps(batch).encode()),
    ]


def plain_batches(items: int = 1000) -> list[tuple[str, str, bytes | None]]:
    batch = {"items": [{"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"}, "workload": {"batch_size": b}}
                       for b in range(1, items + 1)]}
    return [("POST", "/v1/estimate/batch", json.dumps(batch).encode())]


def slow_headers(base: str, connections: int, stop: threading.Event, every_s: float = 2.0) -> list[str]:
    """Connections that send a request one header line every `every_s`, each reopened when the
    server closes it; what the server said when it closed them."""
    host, port = base.removeprefix("http://").split(":")
    said: list[str] = []

    def one() -> None:
        while not stop.is_set():
            try:
                with socket.create_connection((host, int(port)), timeout=5) as sock:
                    sock.sendall(b"POST /estimate HTTP/1.1\r\nHost: x\r\n")
                    line = 0
                    while not stop.wait(every_s):
                        sock.sendall(b"X-Slow-%d: %d\r\n" % (line, line))
                        line += 1
            except OSError as exc:
                said.append(type(exc).__name__)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(connections)]
    for t in threads:
        t.start()
    return said


def flooder(base: str, key: str, seconds: float, threads: int, kind: str, slow: int) -> dict:
    """`threads` threads sending `kind` requests in turn for `seconds` (and `slow` slow-header
    connections); the statuses they got (0: a connection error, never expected)."""
    work = costly_requests() if kind == "costly" else plain_batches()
    stop_at = time.monotonic() + seconds
    statuses: Counter = Counter()
    lock = threading.Lock()

    def one(offset: int) -> None:
        with requests.Session() as session:
            session.headers.update({"X-API-Key": key, "Content-Type": "application/json"})
            turn = offset
            while time.monotonic() < stop_at:
                method, path, body = work[turn % len(work)]
                turn += 1
                try:
                    status = session.request(method, base + path, data=body, timeout=60).status_code
                except requests.RequestException:
                    status = 0
                with lock:
                    statuses[status] += 1

    stop_slow = threading.Event()
    slow_said = slow_headers(base, slow, stop_slow) if slow else []
    pool = [threading.Thread(target=one, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    stop_slow.set()
    return {"statuses": {str(k): v for k, v in sorted(statuses.items())}, "slow_closed": len(slow_said)}


def spawn_flooder(base: str, seconds: float, threads: int, kind: str, slow: int = 0, key: str = FLOOD_KEY,
                  start_new_session: bool = False) -> subprocess.Popen:
    """The flooder as a process of its own; its report is the last line of its stdout."""
    return subprocess.Popen([sys.executable, "-m", "tests.bench.flood", "flooder", "--base", base, "--key", key,
                             "--seconds", str(seconds), "--threads", str(threads), "--kind", kind,
                             "--slow", str(slow)], stdout=subprocess.PIPE, text=True,
                            start_new_session=start_new_session)


def calm(base: str, key: str, until: float, probe_healthz: bool = False) -> dict:
    """A new estimate every CALM_PAUSE_S (and /healthz every 100 ms when asked) until `until`:
    latencies and statuses."""
    latencies, statuses, healthz = [], Counter(), []
    stop = threading.Event()

    def prober() -> None:
        with requests.Session() as session:
            while not stop.wait(0.1):
                started = time.perf_counter()
                try:
                    ok = session.get(base + "/healthz", timeout=10).status_code == 200
                except requests.RequestException:
                    ok = False
                healthz.append((time.perf_counter() - started, ok))

    thread = threading.Thread(target=prober) if probe_healthz else None
    if thread:
        thread.start()
    with requests.Session() as session:
        session.headers["X-API-Key"] = key
        i = 0
        while time.monotonic() < until:
            time.sleep(CALM_PAUSE_S)
            i += 1  # a new question each time: the answer cache does not help
            body = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"},
                    "workload": {"batch_size": 1 + i % 64, "context_tokens": 1024 + i}}
            started = time.perf_counter()
            try:
                status = session.post(base + "/v1/estimate", json=body, timeout=30).status_code
            except requests.RequestException:
                status = 0
            latencies.append(time.perf_counter() - started)
            statuses[status] += 1
    stop.set()
    if thread:
        thread.join()
    return {"latencies": sorted(latencies), "statuses": statuses, "healthz": healthz}


def quantile(values: list[float], q: float) -> float:
    return values[int(q * (len(values) - 1))] if values else float("nan")


def four_batches(base: str, key: str) -> list[str]:
    """Four concurrent 50-item batches from one client's thread pool: what each came to."""
    client = SizingClient(base, api_key=key, timeout_s=60)
    items = [{"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"}, "workload": {"batch_size": b}}
             for b in range(1, 51)]

    def one(_: int) -> str:
        try:
            return "ok" if client.estimate_batch(items)["count"] == 50 else "short"
        except Exception as exc:  # noqa: BLE001 - reported, not raised: the round counts them
            return f"{type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, range(4)))


def round_with_flood(base: str, seconds: float, slow: int) -> dict:
    proc = spawn_flooder(base, seconds, 8, "costly", slow)
    time.sleep(1.0)  # the flood is on before the calm client starts
    calm_result = calm(base, CALM_KEY, time.monotonic() + seconds - 1.5, probe_healthz=bool(slow))
    out, _ = proc.communicate(timeout=seconds + 120)
    return {**calm_result, "flood": json.loads(out.strip().splitlines()[-1])}


def report(name: str, result: dict) -> tuple[list[str], bool]:
    lat = result["latencies"]
    p50, p99 = quantile(lat, 0.5), quantile(lat, 0.99)
    flood = result["flood"]["statuses"]
    lines = [f"{name}: calm key {len(lat)} estimates, p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
             f"max {lat[-1] * 1e3:.1f} ms, statuses {dict(result['statuses'])}; flooding key {flood}"]
    ok = set(result["statuses"]) == {200} and p99 < P99_LIMIT_S and flood.get("429", 0) > 0 and "0" not in flood
    if result["healthz"]:
        worst = max(s for s, _ in result["healthz"])
        lines.append(f"{name}: /healthz asked {len(result['healthz'])} times, worst {worst * 1e3:.1f} ms, "
                     f"all 200: {all(ok_ for _, ok_ in result['healthz'])}; slow connections closed by the "
                     f"server: {result['flood']['slow_closed']}")
        ok = ok and worst < HEALTHZ_LIMIT_S and all(ok_ for _, ok_ in result["healthz"])
    return lines, ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    worker = sub.add_parser("flooder", help="run as the flooding client (used by the rounds)")
    worker.add_argument("--base", required=True)
    worker.add_argument("--key", default=FLOOD_KEY)
    worker.add_argument("--seconds", type=float, default=15)
    worker.add_argument("--threads", type=int, default=8)
    worker.add_argument("--kind", choices=("costly", "batches"), default="costly")
    worker.add_argument("--slow", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=15)
    args = parser.parse_args(argv)
    if args.command == "flooder":
        print(json.dumps(flooder(args.base, args.key, args.seconds, args.threads, args.kind, args.slow)), flush=True)
        return 0
    port = free_port()
    log = Path(tempfile.mkdtemp()) / "server.log"
    proc = start_server(port, 2, 4, log, **AS_DEPLOYED)
    base = f"http://127.0.0.1:{port}"
    verdicts = []
    try:
        print(f"gunicorn 2 workers x 4 threads on {base}, settings {AS_DEPLOYED}", flush=True)
        for name, slow in (("costly", 0), ("costly + 8 slow-header connections", 8)):
            lines, ok = report(name, round_with_flood(base, args.seconds, slow))
            print("\n".join(lines) + f"\n  -> {'pass' if ok else 'FAIL'}", flush=True)
            verdicts.append(ok)
            time.sleep(3)  # the flooding key's debt is its own; the next round starts on quiet workers
        outcomes = four_batches(base, CALM_KEY)
        ok = outcomes == ["ok"] * 4
        print(f"four concurrent 50-item batches from one Python client: {outcomes}\n  -> {'pass' if ok else 'FAIL'}")
        verdicts.append(ok)
    finally:
        stop_server(proc)
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
