"""A batch's items yield the GIL with a cheap sleep: the yielding thread's timer slack is 1 us,
and no other thread's changes (service/yielding.py)."""

import ctypes
import sys
import threading

import pytest

from service.yielding import SLACK_NS, yield_to_other_threads

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl timer slack is Linux's")
PR_SET_TIMERSLACK, PR_GET_TIMERSLACK = 29, 30
DEFAULT_SLACK_NS = 50_000  # Linux's


def _slack_ns() -> int:
    return ctypes.CDLL(None, use_errno=True).prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)


def test_a_thread_that_yields_sleeps_with_a_1_us_slack_and_others_keep_theirs():
    seen = {}

    def worker():
        seen["before"] = _slack_ns()
        yield_to_other_threads()
        seen["after"] = _slack_ns()

    # a new thread starts with its creator's slack: this one's, at the default (an in-process batch
    # run earlier on this thread may have set it)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, DEFAULT_SLACK_NS, 0, 0, 0)
    try:
        main_before = _slack_ns()
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(timeout=10)
        assert (seen["before"], seen["after"]) == (DEFAULT_SLACK_NS, SLACK_NS)
        assert _slack_ns() == main_before == DEFAULT_SLACK_NS  # this thread's slack is its own
    finally:  # as this thread yields in later in-process batches, which set it once
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0)
