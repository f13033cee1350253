"""Training compute, time on N cards, the guide's scaling curve, and gradient sync."""

import math

# Guide section 5.3: 4 to 8 cards 85 %, 8 to 16 80 %, 16 to 32 75 %; each doubling loses
# 5-15 %. Read as the efficiency at 8, 16 and 32 cards, five points lost per doubling from one
# card, interpolated in log2(cards).
SCALING_ANCHORS = ((1, 1.00), (2, 0.95), (4, 0.90), (8, 0.85), (16, 0.80), (32, 0.75))
# Beyond 32 cards "network and scheduling complexity rise steeply": each further doubling
# keeps 90 % (the midpoint of the guide's 5-15 % loss).
SCALING_PER_DOUBLING_BEYOND_32 = 0.90


MODEL_FLOPS_PER_PARAM_TOKEN = 6  # forward 2, backward 4


def training_compute_flops(params_per_token: int, tokens: float) -> float:
    """6 x parameters x tokens (forward 2, backward 4), in FLOPs."""
    return MODEL_FLOPS_PER_PARAM_TOKEN * params_per_token * tokens


def scaling_efficiency(cards: int) -> float:
    """The guide's empirical scaling efficiency of `cards` cards against linear (1.0 at one)."""
    if cards <= 1:
        return 1.0
    x = math.log2(cards)
    for (n0, e0), (n1, e1) in zip(SCALING_ANCHORS, SCALING_ANCHORS[1:], strict=False):
        x0, x1 = math.log2(n0), math.log2(n1)
        if x <= x1:
            return e0 + (e1 - e0) * (x - x0) / (x1 - x0)
    last_n, last_e = SCALING_ANCHORS[-1]
    return last_e * SCALING_PER_DOUBLING_BEYOND_32 ** (x - math.log2(last_n))


def training_time_s(
    compute_flops: float, cards: int, peak_flops: float, mfu: float, efficiency: float = 1.0
) -> float:
    """compute / (cards x peak x utilisation x scaling efficiency), in seconds."""
    return compute_flops / (cards * peak_flops * mfu * efficiency)


def gradient_sync_s(gradient_bytes: float, link_bytes_per_s: float) -> float:
    """The guide's first-order sync: gradient bytes / interconnect bytes per second."""
    return gradient_bytes / link_bytes_per_s

