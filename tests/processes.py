"""The processes the suite starts, and the check that none outlives it.

Each process a test starts goes through `spawn`: it runs in a session of its own, so that
`stop` reaches everything it started (gunicorn's workers, a server's children) even when the
leader is gone. tests/conftest.py fails the run when any of them, or any other descendant of
the test process, is still alive at the end (and kills it, so that the next run starts clean).
"""

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

# Session ids (each the pid of the process spawn started, which leads its own session).
STARTED: list[int] = []


def spawn(args: list[str], **kwargs) -> subprocess.Popen:
    """subprocess.Popen in a session of its own, remembered for `leftovers`."""
    proc = subprocess.Popen(args, start_new_session=True, **kwargs)
    STARTED.append(proc.pid)
    return proc


def _table() -> dict[int, tuple[int, int]]:
    """Every live process on the host: pid -> (parent pid, session id). Zombies are dead."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone while we read
        if fields[0] != "Z":
            table[int(stat.parent.name)] = (int(fields[1]), int(fields[3]))
    return table


def children(parent: int) -> set[int]:
    """The live processes whose parent is `parent` (gunicorn's workers, for its master)."""
    return {pid for pid, (ppid, _) in _table().items() if ppid == parent}


def members(session: int) -> list[int]:
    """The live processes of one session the suite started."""
    return [pid for pid, (_, sid) in _table().items() if sid == session]


def leftovers(root: int | None = None) -> list[int]:
    """Live processes in the sessions the suite started, and live descendants of `root` (this
    process by default), except `root` itself."""
    root = os.getpid() if root is None else root
    table = _table()
    sessions = set(STARTED)

    def descends(pid: int) -> bool:
        seen = set()
        while pid in table and pid not in seen:
            seen.add(pid)
            pid = table[pid][0]
            if pid == root:
                return True
        return False

    return sorted(pid for pid, (_, sid) in table.items() if pid != root and (sid in sessions or descends(pid)))


def describe(pid: int) -> str:
    """A process's pid and command line, for a report."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = "?"
    return f"{pid} {command[:160]}"


def kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def stop(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    """SIGTERM to the process, up to `grace_s` for it to finish, then SIGKILL to whatever of
    its session is still alive (a hung leader, a worker it left behind)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = members(proc.pid)
        if not left:
            break
        kill(left)
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)
