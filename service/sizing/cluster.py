"""Clusters: ring all-reduce inside a node and across nodes, overlap with compute, step time,
and the card count a deadline needs.

The communication model beside the guide's empirical scaling curve: a step takes its compute
plus the part of the gradient all-reduce that the backward pass does not hide.
"""

import math
from collections.abc import Callable

BACKWARD_SHARE = 2 / 3  # of a step's compute: backward is 4 of the 6 FLOPs per parameter


def ring_allreduce_s(bytes_total: float, members: int, link_bytes_per_s: float,
                     hop_latency_s: float) -> float:
    """Ring all-reduce: 2(N-1)/N of the bytes over each link, plus 2(N-1) hops of latency."""
    if members <= 1:
        return 0.0
    return (2 * (members - 1) / members * bytes_total / link_bytes_per_s
            + 2 * (members - 1) * hop_latency_s)


def hierarchical_allreduce_s(
    bytes_total: float, cards: int, cards_per_node: int, link_bytes_per_s: float,
    link_latency_s: float, nic_bytes_per_s: float, network_latency_s: float,
) -> float:
    """Reduce-scatter and all-gather inside each node over the card links (a ring), and an
    all-reduce of each card's 1/g shard across the nodes over its share of the network."""
    in_node = min(cards, cards_per_node)
    nodes = math.ceil(cards / in_node)
    inside = ring_allreduce_s(bytes_total, in_node, link_bytes_per_s, link_latency_s)
    across = ring_allreduce_s(bytes_total / in_node, nodes, nic_bytes_per_s, network_latency_s)
    return inside + across


def exposed_comm_s(comm_s: float, step_compute_s: float, overlap: float) -> float:
    """Communication the backward pass does not hide: comm - overlap x backward time."""
    return max(0.0, comm_s - overlap * BACKWARD_SHARE * step_compute_s)


def comm_model_efficiency(step_compute_s: float, exposed_s: float) -> float:
    """Share of a step spent computing: compute / (compute + exposed communication)."""
    return step_compute_s / (step_compute_s + exposed_s)


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
