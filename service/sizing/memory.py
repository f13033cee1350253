"""Memory: weights, KV cache, training state, activations, and how they split over cards."""

import math

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


def usable_bytes(card_bytes: int, usable_fraction: float) -> int:
    """The part of a card's memory an engine can allocate, in bytes."""
    return math.floor(card_bytes * usable_fraction)
