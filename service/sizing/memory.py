"""Memory: weights, KV cache, training state, activations, and how they split over cards."""

import math
from dataclasses import dataclass

# Guide section 4.1: mixed-precision training with Adam, bytes per parameter.
FULL_FINETUNE_STATE = (
    ("weights (bf16)", 2.0),
    ("gradients (bf16)", 2.0),
    ("master weights (fp32)", 4.0),
    ("Adam m (fp32)", 4.0),
    ("Adam v (fp32)", 4.0),
)
FULL_FINETUNE_BYTES_PER_PARAM = sum(b for _, b in FULL_FINETUNE_STATE)  # 16

# Guide: LoRA fine-tune needs 2.5 to 3 bytes per parameter (frozen 16-bit base 2 B, the rest
# adapters, their gradients and optimizer state, and buffers).
LORA_BYTES_PER_PARAM_LOW = 2.5
LORA_BYTES_PER_PARAM = 3.0

def weights_bytes(params: int, bytes_per_param: float) -> int:
    """params x bytes per parameter, in bytes."""
    return round(params * bytes_per_param)


def kv_cache_bytes_per_token(
    layers: int, kv_heads: int, head_dim: int, bytes_per_value: float
) -> int:
    """2 (K and V) x layers x kv_heads x head_dim x bytes, in bytes per token of one sequence."""
    return round(2 * layers * kv_heads * head_dim * bytes_per_value)


def kv_cache_bytes_per_sequence(
    values_per_layer: int,
    bytes_per_value: float,
    layers: int,
    context_tokens: int,
    sliding_layers: int = 0,
    sliding_window: int | None = None,
) -> int:
    """One sequence's KV cache: values x bytes x (full layers x context + sliding layers x
    min(context, window)), in bytes."""
    capped = min(context_tokens, sliding_window) if sliding_window else context_tokens
    tokens = (layers - sliding_layers) * context_tokens + sliding_layers * capped
    return round(values_per_layer * bytes_per_value * tokens)


def kv_cache_bytes(bytes_per_token: int, context_tokens: int, batch_size: int) -> int:
    """KV bytes per token x tokens per sequence x sequences, in bytes."""
    return bytes_per_token * context_tokens * batch_size


@dataclass(frozen=True)
class Fit:
    """How a memory need lands on `count` cards of `card_bytes` each.

    The shardable bytes (weights, training state, KV cache, activations) split evenly over the
    cards; each card also keeps `overhead_bytes` for itself, and only `usable_fraction` of its
    memory is allocatable.
    """

    count: int
    card_bytes: int
    usable_bytes_per_card: int
    need_bytes_per_card: int
    free_bytes_per_card: int
    fits: bool


def usable_bytes(card_bytes: int, usable_fraction: float) -> int:
    """The part of a card's memory an engine can allocate, in bytes."""
    return math.floor(card_bytes * usable_fraction)


def fit_on_cards(
    shardable_bytes: int, overhead_bytes: int, card_bytes: int, usable_fraction: float, count: int
) -> Fit:
    """Per-card need = shardable / count + overhead; fits when it is within the usable bytes."""
    usable = usable_bytes(card_bytes, usable_fraction)
    need = math.ceil(shardable_bytes / count) + overhead_bytes
    return Fit(count, card_bytes, usable, need, usable - need, need <= usable)


def least_cards(
    shardable_bytes: int, overhead_bytes: int, card_bytes: int, usable_fraction: float
) -> int | None:
    """The least count whose cards hold the shardable bytes beside their overhead.

    None when not even one byte fits beside the overhead on a card.
    """
    room = usable_bytes(card_bytes, usable_fraction) - overhead_bytes
    if room <= 0:
        return None
    return max(1, math.ceil(shardable_bytes / room))


def max_concurrent_sequences(
    room_bytes: int, kv_bytes_per_sequence: int
) -> int:
    """How many sequences' KV caches fit in the room left beside everything else."""
    if kv_bytes_per_sequence <= 0 or room_bytes <= 0:
        return 0
    return room_bytes // kv_bytes_per_sequence
