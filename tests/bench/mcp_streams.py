"""Many open connections against the MCP server over HTTP: its memory, and whether it still answers.

    python -m tests.bench.mcp_streams [--streams 3000] [--mode both] [--hold 8] [-- server flags...]

Starts `python -m service.mcp_server --http` (the domain in process: SIZING_URL unset) on a free
loopback port, then opens --streams connections to it from this process, each either a GET /mcp
stream (Accept: text/event-stream, as a client waiting for server messages opens one: --mode get)
or a connection that sends nothing at all (--mode idle); both runs one and then the other, each
against a fresh server. While they are held (--hold seconds) it samples the server's resident
memory (VmRSS of /proc/<pid>/status, and VmHWM, the kernel's own peak), and right after the last
one is open it asks POST /mcp tools/list and GET /healthz on new connections. It prints how many
of the connections the server refused (an answer other than 200) or closed, the peak RSS in MiB,
and whether the server still answered. Not a test: a measurement, for the README and a review.
Arguments after `--` go to the server (--max-connections 5000, say, to see it without its cap).
"""

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).parents[2]
MIB = 1024 * 1024
LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


@dataclass
class Run:
    mode: str
    opened: int = 0
    failed_to_open: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    peak_rss_mib: float = 0.0
    hwm_mib: float = 0.0
    start_rss_mib: float = 0.0
    answers: dict[str, str] = field(default_factory=dict)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raise_nofile(needed: int) -> None:
    """This process (and the server it starts, which inherits it) may hold `needed` sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed + 512
    if soft != resource.RLIM_INFINITY and soft < want:
        limit = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    """The server's VmRSS every 20 ms, the highest kept."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kib, self.stop = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak_kib = max(self.peak_kib, status_kib(self.pid, "VmRSS"))
            except OSError:
                return
            self.stop.wait(0.02)


def http(port: int, method: str, path: str, body: bytes = b"", timeout_s: float = 10.0) -> str:
    """One request on a new connection: the status line's code, or what went wrong."""
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
            s.sendall(head + body)
            reply = b""
            while b"\r\n" not in reply:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
    except OSError as exc:
        return type(exc).__name__
    return reply.split(b" ", 2)[1].decode() if reply.startswith(b"HTTP/") else "no answer"


def start_server(root: Path, port: int, server_args: list[str]) -> subprocess.Popen:
    env = {name: value for name, value in os.environ.items() if name != "SIZING_URL"}
    proc = subprocess.Popen([sys.executable, "-m", "service.mcp_server", "--http", "--port", str(port), *server_args],
                            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the MCP server exited with {proc.returncode}")
        if http(port, "GET", "/healthz", timeout_s=2) in ("200", "503"):
            return proc
        time.sleep(0.1)
    raise RuntimeError("the MCP server did not answer /healthz within 60 s")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def open_connections(port: int, count: int, mode: str, run: Run, sockets: list[socket.socket]) -> None:
    request = (f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
               .encode() if mode == "get" else b"")
    for _ in range(count):
        s = socket.socket()
        sockets.append(s)
        try:
            s.settimeout(5)
            s.connect(("127.0.0.1", port))
            if request:
                s.sendall(request)
            s.setblocking(False)
            run.opened += 1
        except OSError:
            run.failed_to_open += 1


def classify(s: socket.socket) -> str:
    """What the server did with one connection: closed it, refused it (a status other than 200),
    or holds it (a 200 stream, or nothing said)."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return "closed" if not data.startswith(b"HTTP/1.1 200") else "stream closed"
            data += chunk
    except BlockingIOError:
        pass
    except OSError:
        return "reset"
    if not data:
        return "held, silent"
    status = data.split(b" ", 2)[1].decode(errors="replace")
    return "held, 200 stream" if status == "200" else f"{status}, held"


def measure(mode: str, streams: int, hold_s: float, root: Path, server_args: list[str]) -> Run:
    run, sockets, port = Run(mode), [], free_port()
    proc = start_server(root, port, server_args)
    sampler = Sampler(proc.pid)
    try:
        run.start_rss_mib = status_kib(proc.pid, "VmRSS") / 1024
        sampler.start()
        open_connections(port, streams, mode, run, sockets)
        run.answers["POST /mcp tools/list"] = http(port, "POST", "/mcp", LIST_TOOLS)
        run.answers["GET /healthz"] = http(port, "GET", "/healthz")
        time.sleep(hold_s)
        for s in sockets:
            kind = classify(s)
            run.kinds[kind] = run.kinds.get(kind, 0) + 1
        run.answers["POST /mcp tools/list, after the hold"] = http(port, "POST", "/mcp", LIST_TOOLS)
        run.hwm_mib = status_kib(proc.pid, "VmHWM") / 1024
    finally:
        sampler.stop.set()
        for s in sockets:
            s.close()
        stop_server(proc)
        if sampler.is_alive():
            sampler.join(timeout=5)
    run.peak_rss_mib = sampler.peak_kib / 1024
    return run


def report(run: Run, streams: int) -> None:
    held = sum(n for kind, n in run.kinds.items() if kind.startswith("held"))
    what = "GET /mcp streams" if run.mode == "get" else "idle connections (nothing sent)"
    print(f"{streams} {what}: opened {run.opened}, failed to open {run.failed_to_open}")
    print(f"  refused or closed by the server: {run.opened - held} of {run.opened}; still held: {held}")
    print(f"  by kind: {', '.join(f'{kind} {n}' for kind, n in sorted(run.kinds.items()))}")
    print(f"  server RSS: {run.start_rss_mib:.1f} MiB at start, peak {max(run.peak_rss_mib, run.hwm_mib):.1f} MiB "
          f"(sampled {run.peak_rss_mib:.1f}, VmHWM {run.hwm_mib:.1f})")
    answered = all(code == "200" for code in run.answers.values())
    print(f"  still answered: {'yes' if answered else 'NO'} "
          f"({', '.join(f'{name} {code}' for name, code in run.answers.items())})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=3000, help="connections to open (default 3000)")
    parser.add_argument("--mode", choices=("get", "idle", "both"), default="both")
    parser.add_argument("--hold", type=float, default=8.0, help="seconds to hold them open (default 8)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to run the server from (another version)")
    parser.add_argument("server_args", nargs=argparse.REMAINDER, help="after --: flags for the server")
    args = parser.parse_args()
    server_args = args.server_args[1:] if args.server_args[:1] == ["--"] else args.server_args
    raise_nofile(args.streams)
    for mode in ("get", "idle") if args.mode == "both" else (args.mode,):
        report(measure(mode, args.streams, args.hold, args.root, server_args), args.streams)


if __name__ == "__main__":
    main()
