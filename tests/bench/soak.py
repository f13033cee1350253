"""`make soak`: a bounded soak at twice the benchmark's concurrency, one worker killed midway.

Drives POST /estimate with a new question every time (no answer from the cache) in
consecutive segments, kills one worker with SIGKILL halfway, and reports for each segment
requests/s, p50, p99, failures and the resident memory of each surviving worker; then the
error count, the latency drift (last segment against the first after warm-up) and the
memory drift. Exits non-zero when failures exceed what the killed worker could have held
(an answer from the app for each of its threads; a connection reset for each connection it
held, since the front door reads whole requests into the worker, which queues them for its
threads), when a connection fails in another segment, or when a surviving worker's memory
drifts more than 10 %.
"""

import argparse
import os
import re
import signal
import sys
import tempfile
from pathlib import Path

from .run import children, free_port, load, rss_mib, start_server, stop_server

MAX_MEMORY_DRIFT = 0.10


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--segment-seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=32, help="twice the benchmark's 16")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "docs" / "performance.md")
    args = parser.parse_args(argv)
    port = free_port()
    proc = start_server(port, args.workers, args.threads, Path(tempfile.mkdtemp()) / "server.log")
    url = f"http://127.0.0.1:{port}/v1/estimate"
    rows, killed, victim, lines = [], None, None, []
    try:
        load(url, None, args.connections, 10, 2)  # warm up: fill each worker's answer cache
        for segment in range(args.segments):
            if segment == args.segments // 2:
                victim = min(children(proc.pid))
                os.kill(victim, signal.SIGKILL)
                killed = segment
            result = load(url, None, args.connections, args.segment_seconds, 2)
            workers = {pid: rss_mib(pid) for pid in children(proc.pid)}
            rows.append((segment, result, workers))
            line = (f"| {segment}{' (worker killed)' if segment == killed else ''} | {result['rps']:.0f} | "
                    f"{result['p50_ms']:.1f} | {result['p99_ms']:.1f} | {result['errors']} | "
                    f"{result['socket_errors']} | {', '.join(f'{m:.0f}' for m in workers.values())} |")
            lines.append(line)
            print(line, flush=True)
    finally:
        stop_server(proc)
    code, summary = verdict(rows, victim, args.threads, args.connections)
    write_section(args.out, args, lines, summary)
    return code


def write_section(path: Path, args, lines: list[str], summary: list[str]) -> None:
    """Replace the soak section of docs/performance.md with this run."""
    head = (f"## Soak\n\n`make soak`: {args.segments} segments of {args.segment_seconds} s at "
            f"{args.connections} connections (twice the benchmark's), a new question every request, "
            f"{args.workers} workers x {args.threads} threads; one worker SIGKILLed at the start of "
            f"segment {args.segments // 2}.\n\n| segment | requests/s | p50 ms | p99 ms | non-2xx | "
            "socket errors | RSS per worker MiB |\n|---|---|---|---|---|---|---|\n")
    section = head + "\n".join(lines) + "\n\n" + "\n".join(f"- {s}" for s in summary) + "\n"
    text = path.read_text() if path.exists() else "# Performance\n"
    text = text.split("## Soak")[0].rstrip() + "\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def socket_failures(result: dict) -> int:
    """Requests whose connection failed (wrk's connect, read, write and timeout errors)."""
    return sum(int(n) for n in re.findall(r"\d+", result.get("socket_errors", "")))


def verdict(rows, victim, threads, connections) -> tuple[int, list[str]]:
    first, last = rows[0][1], rows[-1][1]
    failures = sum(r["errors"] for _, r, _ in rows)
    killed = len(rows) // 2
    lost = socket_failures(rows[killed][1])
    elsewhere = sum(socket_failures(r) for segment, r, _ in rows if segment != killed)
    survivors = [pid for pid in rows[0][2] if pid != victim and all(pid in w for _, _, w in rows)]
    drifts = {pid: rows[-1][2][pid] / rows[0][2][pid] - 1 for pid in survivors}
    ok = failures <= threads and lost <= connections and not elsewhere \
        and all(abs(d) <= MAX_MEMORY_DRIFT for d in drifts.values())
    summary = [
        f"failures: {failures} non-2xx (an answer for each of the killed worker's {threads} threads at most); "
        f"{lost} requests lost with the killed worker's connections (reset: at most the {connections} "
        f"connections, each with its one request in flight or queued), {elsewhere} in the other segments",
        f"latency drift, first to last segment: p50 {first['p50_ms']:.1f} -> {last['p50_ms']:.1f} ms, "
        f"p99 {first['p99_ms']:.1f} -> {last['p99_ms']:.1f} ms",
        "memory drift of the surviving worker(s): " + ", ".join(f"{d:+.1%}" for d in drifts.values()),
        "verdict: " + ("PASS" if ok else "FAIL"),
    ]
    print("\n".join(summary))
    return (0 if ok else 1), summary


if __name__ == "__main__":
    sys.exit(main())
