"""Letting a worker's other threads run between the items of a long request.

`time.sleep(0)` releases the GIL and sleeps for the thread's timer slack: Linux's default slack
of 50 us made each yield cost about 75 us, a sixth of a batch item. A thread that yields sets its
own slack to 1 us once (prctl PR_SET_TIMERSLACK; other threads and processes keep theirs), and
each yield then costs about 17 us while still handing the GIL over, so that a light request
beside a batch waits for one item, not for the interpreter's 5 ms switch interval."""

import ctypes
import sys
import threading
import time

PR_SET_TIMERSLACK = 29  # linux/prctl.h
SLACK_NS = 1_000
_set = threading.local()


def _slack_setter():
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    return lambda: prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0)


_SET_SLACK = _slack_setter()


def yield_to_other_threads() -> None:
    """Release the GIL for a moment (see the module's docstring)."""
    if _SET_SLACK is not None and not getattr(_set, "done", False):
        _SET_SLACK()
        _set.done = True
    time.sleep(0)
