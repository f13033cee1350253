"""Roofline: ridge point, arithmetic intensity, attainable FLOP/s, and decode tokens/s."""

from dataclasses import dataclass


def ridge_flops_per_byte(peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """Ridge point = peak FLOP/s / bandwidth bytes/s, in FLOP per byte."""
    return peak_flops / bandwidth_bytes_per_s


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOPs done per byte moved from memory, in FLOP per byte."""
    return flops / bytes_moved


def attainable_flops(peak_flops: float, bandwidth_bytes_per_s: float, intensity: float) -> float:
    """Roofline: min(peak, bandwidth x intensity), in FLOP/s."""
    return min(peak_flops, bandwidth_bytes_per_s * intensity)


def bound(intensity: float, ridge: float) -> str:
    """'memory' below the ridge point, 'compute' at or above it."""
    return "memory" if intensity < ridge else "compute"


def decode_flops_per_token(params_per_token: int) -> int:
    """2 FLOPs (a multiply and an add) per parameter a token passes through."""
    return 2 * params_per_token


def decode_step_bytes(weights_read_bytes: int, kv_bytes_per_sequence: int, batch_size: int) -> int:
    """Bytes one decode step reads: the weights once for the batch, the KV cache per sequence."""
    return weights_read_bytes + batch_size * kv_bytes_per_sequence


@dataclass(frozen=True)
class DecodeRoofline:
    """One decode step of a batch on the given bandwidth and compute (totals over cards)."""

    step_bytes: int
    step_flops: int
    intensity_flops_per_byte: float
    ridge_flops_per_byte: float
    attainable_flops_per_s: float
    bound: str
    total_tokens_per_s_ceiling: float


def decode_roofline(
    *,
    bandwidth_bytes_per_s: float,
    peak_flops: float,
    weights_read_bytes: int,
    kv_bytes_per_sequence: int,
    batch_size: int,
    flops_per_token: int,
) -> DecodeRoofline:
    """The decode step on the roofline; the ceiling is batch / step time.

    Step time = step bytes / bandwidth when memory-bound, step FLOPs / peak when compute-bound;
    for batch 1 and 14 GB of weights at 1500 GB/s that is 107.1 tokens/s.
    """
    step_bytes = decode_step_bytes(weights_read_bytes, kv_bytes_per_sequence, batch_size)
    step_flops = batch_size * flops_per_token
    intensity = arithmetic_intensity(step_flops, step_bytes)
    ridge = ridge_flops_per_byte(peak_flops, bandwidth_bytes_per_s)
    attainable = attainable_flops(peak_flops, bandwidth_bytes_per_s, intensity)
    return DecodeRoofline(
        step_bytes=step_bytes,
        step_flops=step_flops,
        intensity_flops_per_byte=intensity,
        ridge_flops_per_byte=ridge,
        attainable_flops_per_s=attainable,
        bound=bound(intensity, ridge),
        total_tokens_per_s_ceiling=attainable / flops_per_token,
    )

