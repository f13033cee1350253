"""`make bench`: the real server on loopback with the production config, driven by wrk (or a
Python load generator when wrk is missing), POST /estimate against the framework floor.

Each load runs in turn, a few rounds (the machine's speed drifts; a round's loads share a
minute of it). Reports requests per second, p50 and p99 latency, each load's share of the
floor, a 1000-item batch in items/s,
cold start (import to first answer) and resident memory per worker, and writes
docs/performance.md with the machine's cores and the commands to reproduce.
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import requests

from . import inprocess

ROOT = Path(__file__).resolve().parents[2]
ESTIMATE = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}
ECHO = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The service's app with the floor view, served in place of service.wsgi:app (gunicorn takes the
# app named on its command line over the config's wsgi_app).
BENCH_APP = "tests.bench.app:app"


def start_server(port: int, workers: int, threads: int, log: Path, **env) -> subprocess.Popen:
    """gunicorn as deploy/entrypoint.sh starts it, in a session of its own, ready within 60 s (a
    busy machine); stopped again, whole, if it is not."""
    environment = {**os.environ, "PORT": str(port), "WORKERS": str(workers), "THREADS": str(threads),
                   "LOG_LEVEL": "warning",
                   "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="sizing-metrics-"),
                   "GUNICORN": str(Path(sys.executable).with_name("gunicorn")), **env}
    with log.open("wb") as out:
        proc = subprocess.Popen([str(ROOT / "deploy" / "entrypoint.sh"), BENCH_APP], cwd=ROOT, env=environment,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if requests.get(f"{base}/readyz", timeout=max(0.1, min(5.0, deadline - time.monotonic()))).ok:
                return proc
        except requests.RequestException:
            pass
        time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError(log.read_text()[-2000:])


def stop_server(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    """SIGTERM to the master, then SIGKILL to its whole session if it outstays `grace_s`."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # a worker the master left behind
    proc.wait(timeout=10)


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def cpu_s(pids: list[int]) -> float:
    """User and system CPU seconds the processes have spent (/proc/<pid>/stat)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


LUA = """wrk.method = "POST"
wrk.body = [[{body}]]
wrk.headers["Content-Type"] = "application/json"
"""
# A question never asked before in the run, every request: `slot` n's questions have contexts of
# 2,000-31,999 tokens (llama-3.1-8b on one rtx-4090, no warning: one regime for every load) and
# output lengths of their own (100 + 20 x slot, then one more each 30,000 questions), so that no
# load finds the answers, or the messages, of another in a cache. A slot holds 600,000; an output
# stays below the shortest context for MAX_SLOTS slots.
DISTINCT_CONTEXTS = 30_000
OUTPUTS_PER_SLOT = 20
MAX_SLOTS = 90  # 100 + 20 x 90 = 1,900 tokens of output, under 2,000 of context
SLOTS_PER_LOAD = 2  # wrk's threads (one slot each); the Python generator takes the first


def distinct_body(slot: int, n: int) -> dict:
    assert slot < MAX_SLOTS and n < OUTPUTS_PER_SLOT * DISTINCT_CONTEXTS
    return {**ESTIMATE, "workload": {"context_tokens": 2000 + n % DISTINCT_CONTEXTS,
                                     "output_tokens": 100 + OUTPUTS_PER_SLOT * slot + n // DISTINCT_CONTEXTS}}


LUA_DISTINCT = """local threads_n = 0
function setup(thread)
  thread:set("slot", {first_slot} + threads_n)
  threads_n = threads_n + 1
end
function init(args)
  n = 0
end
function request()
  local context = 2000 + n % {contexts}
  local output = 100 + {outputs} * slot + math.floor(n / {contexts}) % {outputs}
  n = n + 1
  local body = string.format('{{"model": "llama-3.1-8b", "hardware": {{"card": "rtx-4090"}}, ' ..
    '"workload": {{"context_tokens": %d, "output_tokens": %d}}}}', context, output)
  return wrk.format("POST", nil, {{["Content-Type"] = "application/json"}}, body)
end
"""


def wrk(url: str, body: dict | None, connections: int, seconds: int, threads: int, slot: int = 0) -> dict:
    """requests/s, p50 and p99 in ms, and errors from wrk --latency (body None: distinct
    questions, from `slot` on, one slot per wrk thread)."""
    assert body is not None or threads <= SLOTS_PER_LOAD
    script = Path(tempfile.mkdtemp()) / "post.lua"
    script.write_text(LUA_DISTINCT.format(first_slot=slot, contexts=DISTINCT_CONTEXTS, outputs=OUTPUTS_PER_SLOT)
                      if body is None
                      else LUA.format(body=json.dumps(body)))
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "-s", str(script), url], capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        value, unit = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)", out, re.M).groups()
        return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "requests": int(re.search(r"(\d+) requests in", out).group(1)),
            "p50_ms": ms("50"), "p99_ms": ms("99"),
            "errors": int(errors.group(1)) if errors else 0,
            "socket_errors": socket_errors.group(1) if socket_errors else "none", "raw": out}


def python_load(url: str, body: dict | None, connections: int, seconds: int, slot: int = 0) -> dict:
    """A fallback load generator: `connections` threads, each on its own keep-alive session
    (body None: distinct questions, in `slot`)."""
    latencies: list[float] = []
    errors = 0
    stop = time.monotonic() + seconds
    lock = threading.Lock()
    counter = iter(range(10**9))

    def worker():
        nonlocal errors
        session = requests.Session()
        while time.monotonic() < stop:
            payload = body or distinct_body(slot, next(counter))
            start = time.perf_counter()
            ok = session.post(url, json=payload, timeout=10).status_code == 200
            with lock:
                latencies.append(time.perf_counter() - start)
                errors += not ok

    pool = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    latencies.sort()
    return {"rps": len(latencies) / seconds, "requests": len(latencies),
            "p50_ms": latencies[len(latencies) // 2] * 1e3,
            "p99_ms": latencies[int(len(latencies) * 0.99)] * 1e3, "errors": errors,
            "socket_errors": "n/a", "raw": ""}


def load(url, body, connections, seconds, wrk_threads, slot=0):
    if shutil.which("wrk"):
        return wrk(url, body, connections, seconds, wrk_threads, slot)
    return python_load(url, body, connections, seconds, slot)


def batch_items_per_s(base: str, slot: int, items: int = 1000, rounds: int = 3) -> float:
    """A batch of new questions (in `slot`) over HTTP, in items/s."""
    best = float("inf")
    for r in range(rounds):
        body = {"items": [distinct_body(slot, r * items + i) for i in range(items)]}
        start = time.perf_counter()
        response = requests.post(f"{base}/v1/estimate/batch", json=body, timeout=120)
        response.raise_for_status()
        best = min(best, time.perf_counter() - start)
    return items / best


def cold_start_s() -> float:
    code = ("import time; t = time.perf_counter(); from service.app import create_app; "
            "c = create_app().test_client(); "
            "r = c.post('/estimate', json={'model': 'llama-3.1-8b', 'hardware': {'card': 'rtx-4090'}}); "
            "assert r.status_code == 200; print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout) for _ in range(3)]
    return statistics.median(runs)


SPARSE_FIELDS = "summary,fit.fits,fit.cards_needed"  # a chatbot's question: the sentence and the verdict


def _row(label: str, r: dict) -> str:
    return (f"| {label} | {r['rps']:,.0f} | {r['share']:.0%} ({', '.join(f'{s:.0%}' for s in r['shares'])}) "
            f"| {r['cpu_ms']:.2f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['errors']} |")


LOADS = ("floor", "estimate", "distinct", "distinct_sparse")


def alternating(base: str, args, workers: list[int]) -> dict:
    """Each load in turn, `args.rounds` short rounds, the floor at both ends of each, so that a
    load is compared with the floor of its own few seconds on a machine whose speed drifts (a
    shared two-core machine's floor moved 1,100-4,700 requests/s from one round to the next):
    per load the median over rounds of requests/s, p50, p99, of each round's share of that
    round's floor (the mean of its two: requests/s, p50 and p99), and of the `workers`' CPU time
    per request, which that drift moves less; the new questions of each round in slots of their
    own."""
    runs: dict[str, list[dict]] = {name: [] for name in LOADS}

    def timed(url: str, body: dict | None, slot: int = 0) -> dict:
        before = cpu_s(workers)
        result = load(url, body, args.connections, args.seconds, 2, slot)
        result["cpu_ms"] = (cpu_s(workers) - before) / max(1, result["requests"]) * 1e3
        return result

    for r in range(args.rounds):
        first = r * 2 * SLOTS_PER_LOAD
        before = timed(f"{base}/bench/echo", ECHO)
        runs["distinct"].append(timed(f"{base}/v1/estimate", None, slot=first))
        runs["distinct_sparse"].append(timed(f"{base}/v1/estimate?fields={SPARSE_FIELDS}", None,
                                             slot=first + SLOTS_PER_LOAD))
        runs["estimate"].append(timed(f"{base}/v1/estimate", ESTIMATE))
        after = timed(f"{base}/bench/echo", ECHO)
        requests = before["requests"] + after["requests"]
        runs["floor"].append({
            "rps": (before["rps"] + after["rps"]) / 2, "requests": requests,
            "p50_ms": (before["p50_ms"] + after["p50_ms"]) / 2, "p99_ms": (before["p99_ms"] + after["p99_ms"]) / 2,
            "errors": before["errors"] + after["errors"],
            "cpu_ms": (before["cpu_ms"] * before["requests"] + after["cpu_ms"] * after["requests"]) / max(1, requests)})
    out = {}
    for name, rounds in runs.items():
        shares = [r["rps"] / f["rps"] for r, f in zip(rounds, runs["floor"])]
        cpu_shares = [f["cpu_ms"] / r["cpu_ms"] for r, f in zip(rounds, runs["floor"])]
        out[name] = {"rps": statistics.median(r["rps"] for r in rounds),
                     "p50_ms": statistics.median(r["p50_ms"] for r in rounds),
                     "p99_ms": statistics.median(r["p99_ms"] for r in rounds),
                     "errors": sum(r["errors"] for r in rounds), "share": statistics.median(shares),
                     "shares": shares, "cpu_ms": statistics.median(r["cpu_ms"] for r in rounds),
                     "cpu_share": statistics.median(cpu_shares)}
    return out


def report(results: dict, args) -> str:
    e, b, m, p = results["estimate"], results["floor"], results["distinct"], results["in_process"]
    sparse = results["distinct_sparse"]
    peer = p["peer_ms"]
    versus = ("llm-analysis was not installed (make bench installs it in .venv-llm-analysis)" if peer is None
              else f"llm-analysis 0.2.2 needs **{peer:.3f} ms** for one inference estimate of the same model "
                   f"and card (its logging disabled), so the same question costs "
                   f"**{p['batch_peer_fields_item_ms'] / peer:.2f}x** its time (the whole answer "
                   f"{p['batch_item_ms'] / peer:.1f}x)")
    cmd = (f"make bench  # = python -m tests.bench.run --workers {args.workers} --threads {args.threads} "
           f"--connections {args.connections} --seconds {args.seconds} --rounds {args.rounds}")
    rows = "\n".join([
        _row("POST /estimate, **a new question every time** (context and output vary)", m),
        _row(f"POST /estimate?fields={SPARSE_FIELDS}, a new question every time", sparse),
        _row("POST /estimate, the same question again (llama-3.1-8b on rtx-4090)", e),
        _row("POST /bench/echo (the framework floor)", b)])
    return textwrap.dedent(f"""\
    # Performance

    Measured by `make bench` on {results['cores']} cores ({results['cpu']}), Python {sys.version.split()[0]},
    gunicorn with deploy/gunicorn.conf.py ({args.workers} workers x {args.threads} threads), the load
    generator ({results['generator']}) on the same machine, {args.connections} connections, each load
    {args.seconds} s in turn, {args.rounds} rounds with the floor at both ends of each (medians over
    rounds; the share of the floor is each round's share of the mean of its two floors, their
    median first), on {results['date']}.

    | endpoint | requests/s | of the floor (each round) | workers' CPU ms a request | p50 ms | p99 ms | non-2xx |
    |---|---|---|---|---|---|---|
    {{rows}}

    - By the workers' CPU time a request (medians over rounds; a slow host inflates it too), a new
      question costs {m['cpu_ms']:.2f} ms against the floor's {b['cpu_ms']:.2f} ms: by each round's
      CPU, it can reach **{m['cpu_share']:.0%}** of the floor's throughput (median of rounds); a new
      sparse one {sparse['cpu_ms']:.2f} ms (**{sparse['cpu_share']:.0%}**).
    - A new question every request (no cache hit): **{m['share']:.0%}** of the floor's
      throughput, p99 {m['p99_ms']:.1f} ms (the full computation: memory, fit, the engine's plan,
      roofline, decode curve, full-load capacity, four alternatives, ranges, host sizing, summary).
    - A new sparse question every request (`fields={SPARSE_FIELDS}`: the parts they need, no
      alternatives, curve or costs): **{sparse['share']:.0%}** of the floor, p99
      {sparse['p99_ms']:.1f} ms.
    - The same question again, served from the per-worker answer cache: {e['share']:.0%} of
      the floor, p99 {e['p99_ms']:.1f} ms.
    - A 1000-item `POST /estimate/batch` of new questions over HTTP: **{results['batch_items_per_s']:,.0f} items/s**.
    - In process (Flask's test client, no network, cache off; best of 5 alternating rounds), per
      request: a new question **{p['estimate_ms']:.2f} ms**; the same answer without its
      alternatives **{p['without_alternatives_ms']:.2f} ms** (the whole answer costs
      **{p['estimate_ms'] / p['without_alternatives_ms']:.2f}x**); with `fields={SPARSE_FIELDS}`
      **{p['sparse_ms']:.2f} ms**; a trivial POST through the same middleware (the floor view)
      **{p['trivial_ms']:.2f} ms**.
    - In process, a 1000-item batch of new questions (llama-2-7b on a100-80gb-sxm, a prompt of
      1,000-3,999 tokens and 128 generated, as the peer is asked) costs **{p['batch_item_ms']:.3f} ms
      per item** whole and **{p['batch_peer_fields_item_ms']:.3f} ms** with `fields=` naming what the
      peer answers (memory, fit and cards, decode tokens/s per stream, time to first token);
      {{versus}} (rounds alternating in one run, medians).
    - Cold start (import to the first answer, in-process): **{results['cold_start_s'] * 1e3:.0f} ms**.
    - Resident memory per worker after the load: {', '.join(f'{m:.0f} MiB' for m in results['rss_mib'])}.

    The floor is a view of the same app (JSON provider, errors, metrics, request ids, JSON logs)
    that parses a small JSON body and returns it, served only by the benchmark's own app
    (tests.bench.app).

    Reproduce: `{cmd}`; the in-process figures alone: `python -m tests.bench.inprocess`
    (LLM_ANALYSIS_PYTHON=.venv-llm-analysis/bin/python); the soak: `make soak`.
    """).replace("{rows}", rows).replace("{versus}", versus)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=2, help="each load, each round")
    parser.add_argument("--rounds", type=int, default=8, choices=range(1, 21), metavar="1-20")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    args = parser.parse_args(argv)
    port = free_port()
    log = Path(tempfile.mkdtemp()) / "server.log"
    proc = start_server(port, args.workers, args.threads, log)
    base = f"http://127.0.0.1:{port}"
    try:
        load(f"{base}/v1/estimate", ESTIMATE, args.connections, 2, 2)  # warm every worker
        results = {
            **alternating(base, args, children(proc.pid)),
            "batch_items_per_s": batch_items_per_s(base, slot=2 * SLOTS_PER_LOAD * args.rounds),
            "rss_mib": [rss_mib(pid) for pid in children(proc.pid)],
        }
        # the in-process figures after the server's load: the two never share the cores
        stop_server(proc)
        results["in_process"] = {**inprocess.single_requests(),
                                 **inprocess.batch_vs_peer(os.environ.get("LLM_ANALYSIS_PYTHON"))}
    finally:
        if proc.poll() is None:
            stop_server(proc)
    results.update(cold_start_s=cold_start_s(), cores=os.cpu_count(), cpu=_cpu(),
                   generator="wrk" if shutil.which("wrk") else "python threads",
                   date=time.strftime("%Y-%m-%d"))
    text = report(results, args)
    if args.out.exists() and "## Soak" in args.out.read_text(encoding="utf-8"):  # make soak's own section
        text = text.rstrip() + "\n\n## Soak" + args.out.read_text(encoding="utf-8").split("## Soak", 1)[1]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
