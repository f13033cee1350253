"""The card count a deadline needs: the least count, in whole copies of the plan, whose training
time meets it."""

from collections.abc import Callable

BACKWARD_SHARE = 2 / 3  # of a step's compute: backward is 4 of the 6 FLOPs per parameter


def least_cards_for(time_s: Callable[[int], float], deadline_s: float, start: int, step: int,
                    limit: int) -> int | None:
    """The least count (from `start`, in multiples of `step`) whose time meets the deadline.

    Time falls as cards are added (cards x efficiency rises), so this doubles, then bisects.
    """
    if time_s(start) <= deadline_s:
        return start
    low, high = start, start
    while time_s(high) > deadline_s:
        if high >= limit:
            return None
        low, high = high, min(limit, high * 2)
    low_k, high_k = low // step, high // step
    while low_k + 1 < high_k:
        middle = (low_k + high_k) // 2
        if time_s(middle * step) <= deadline_s:
            high_k = middle
        else:
            low_k = middle
    return high_k * step
