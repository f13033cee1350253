"""Start the real server (deploy/entrypoint.sh, gunicorn) on a free loopback port for a test."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

from tests import processes

ROOT = Path(__file__).parents[2]


def read_all(sock: socket.socket, timeout_s: float = 30.0) -> bytes:
    """Everything a server sends on `sock` until it closes the connection (a reset is a close)."""
    sock.settimeout(timeout_s)
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


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
        return processes.children(self.proc.pid)

    def listening(self) -> set[int]:
        """The workers that listen on the port (each binds its own socket once its app is loaded)."""
        port = int(self.base.rsplit(":", 1)[1])
        inodes = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with contextlib.suppress(OSError), open(table) as rows:
                for row in list(rows)[1:]:
                    fields = row.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                        inodes.add(f"socket:[{fields[9]}]")
        out = set()
        for pid in self.children():
            with contextlib.suppress(OSError):
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") in inodes for fd in os.listdir(f"/proc/{pid}/fd")):
                    out.add(pid)
        return out

    def log_lines(self) -> list[dict]:
        lines = []
        for line in self.log_path.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                lines.append({"unparsed": line})
        return lines

    def stop(self) -> None:
        """SIGTERM (gunicorn's graceful stop), then SIGKILL to whatever of it is left."""
        processes.stop(self.proc)


# How long a start may take on a busy two-core machine before the test fails.
READY_S = 60.0


def start(tmp_path: Path, workers: int = 2, threads: int = 4, app: str | None = None,
          **env: str | None) -> Server:
    """A started server (of `app`, a WSGI path gunicorn serves in place of the production
    service.wsgi:app); an `env` value of None leaves that variable unset. A server that does
    not become ready is stopped before the error is raised."""
    port = free_port()
    environment = {
        **os.environ, "PORT": str(port), "WORKERS": str(workers), "THREADS": str(threads),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "GUNICORN": str(Path(sys.executable).with_name("gunicorn")), **env,
    }
    environment = {name: value for name, value in environment.items() if value is not None}
    tmp_path.mkdir(parents=True, exist_ok=True)
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        proc = processes.spawn([str(ROOT / "deploy" / "entrypoint.sh"), *([app] if app else [])], cwd=ROOT,
                               env=environment,
                               stdout=log, stderr=subprocess.STDOUT)
    server = Server(proc, f"http://127.0.0.1:{port}", log_path)
    try:
        _wait_ready(server, workers, time.monotonic() + READY_S)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_ready(server: Server, workers: int, deadline: float) -> None:
    """Until `deadline`: /readyz answers 200 and the master has all its workers. Any request
    error while it starts (refused, reset, slow) is one more poll, not a failure."""
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"gunicorn did not start: {server.log_path.read_text()[-3000:]}")
        try:
            ready = requests.get(f"{server.base}/readyz", timeout=max(0.1, min(5.0, deadline - time.monotonic())))
            if ready.status_code == 200 and len(server.children()) == workers:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"gunicorn was not ready within {READY_S:.0f} s: {server.log_path.read_text()[-3000:]}")


@contextmanager
def running(tmp_path: Path, workers: int = 2, threads: int = 4, app: str | None = None,
            **env: str | None) -> Iterator[Server]:
    """A started server, stopped when the block ends, whether its assertions held or not."""
    server = start(tmp_path, workers, threads, app, **env)
    try:
        yield server
    finally:
        server.stop()
