"""Start the real server (deploy/entrypoint.sh, gunicorn) on a free loopback port for a test."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    base: str
    log_path: Path

    def children(self) -> set[int]:
        """The master's live worker pids."""
        pids = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid and fields[0] != "Z":
                pids.add(int(stat.parent.name))
        return pids

    def log_lines(self) -> list[dict]:
        lines = []
        for line in self.log_path.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                lines.append({"unparsed": line})
        return lines

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start(tmp_path: Path, workers: int = 2, threads: int = 4, **env: str | None) -> Server:
    """A started server; an `env` value of None leaves that variable unset."""
    port = free_port()
    environment = {
        **os.environ, "PORT": str(port), "WORKERS": str(workers), "THREADS": str(threads),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "GUNICORN": str(Path(sys.executable).with_name("gunicorn")), **env,
    }
    environment = {name: value for name, value in environment.items() if value is not None}
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([str(ROOT / "deploy" / "entrypoint.sh")], cwd=ROOT, env=environment,
                                stdout=log, stderr=subprocess.STDOUT)
    server = Server(proc, f"http://127.0.0.1:{port}", log_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            if requests.get(f"{server.base}/readyz", timeout=1).status_code == 200 and \
                    len(server.children()) == workers:
                return server
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"gunicorn did not start: {log_path.read_text()[-3000:]}")


@contextmanager
def running(tmp_path: Path, workers: int = 2, threads: int = 4, **env: str | None) -> Iterator[Server]:
    """A started server, stopped when the block ends, whether its assertions held or not."""
    server = start(tmp_path, workers, threads, **env)
    try:
        yield server
    finally:
        server.stop()
