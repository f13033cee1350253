"""Serving: decode on the roofline with an engine's efficiency range, the batched-decode curve,
prefill and time to first token."""

from dataclasses import dataclass

from . import defaults as d
from . import throughput as t
from . import weights
from .catalog import Card, measured_bandwidth_fraction, measured_compute_fraction
from .engines import ENGINES
from .inputs import Notes, Workload, compute_flops
from .memory_answer import FitAnswer, MemoryBreakdown
from .model import ModelSpec
from .units import BILLION

# The guide: several cards over a dedicated interconnect keep 70 % of the ideal, over PCIe
# 50 %, against 60 % on one card; the same ratios scale an engine's single-card figure.
MULTI_CARD_FACTOR = {
    "dedicated": d.DECODE_EFFICIENCY_DEDICATED.value / d.DECODE_EFFICIENCY_SINGLE.value,
    "pcie": d.DECODE_EFFICIENCY_PCIE.value / d.DECODE_EFFICIENCY_SINGLE.value,
}
PREFILL_EFFICIENCY_RANGE = (0.6, 0.65, 0.7)  # guide: large matmuls reach 60-70 % of peak
CURVE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


@dataclass(frozen=True)
class Range:
    """A headline figure as low, typical and high, from the ranges of its factors."""

    low: float
    typical: float
    high: float


@dataclass(frozen=True)
class CurvePoint:
    """Decode at one batch size: per stream and in total (expected), and what binds."""

    batch_size: int
    decode_tokens_per_s: float
    total_tokens_per_s: float
    total_tokens_per_s_ceiling: float
    bound: str
    fits: bool


@dataclass(frozen=True)
class ThroughputAnswer:
    """Decode and prefill on `cards` cards (tensor parallel): roofline, tokens/s, ranges."""

    cards: int
    batch_size: int
    engine: str
    compute_precision: str
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    ridge_flops_per_byte: float
    arithmetic_intensity_flops_per_byte: float
    attainable_flops_per_s: float
    bound: str
    bytes_per_step: int
    weights_read_bytes_per_step: int
    flops_per_token: int
    decode_efficiency: float
    achievable_bandwidth_fraction: float
    decode_tokens_per_s_ceiling: float
    decode_tokens_per_s_achievable: float
    decode_tokens_per_s_expected: float
    decode_tokens_per_s_range: Range
    total_tokens_per_s_ceiling: float
    total_tokens_per_s: float
    total_tokens_per_s_range: Range
    max_concurrent_sequences: int | None
    prompt_tokens: int
    prefill_flops: float
    prefill_bound: str
    time_to_first_token_s: float
    time_to_first_token_s_range: Range
    prefill_tokens_per_s: float
    decode_curve: tuple[CurvePoint, ...]


def achievable_fraction(card: Card, notes: Notes) -> float:
    """The share of datasheet bandwidth a copy really reaches: measured on this card, or the
    default measured fraction."""
    fraction = measured_bandwidth_fraction(card)
    if fraction is None:
        default = d.ACHIEVABLE_BANDWIDTH_FRACTION
        notes.assume("achievable_bandwidth_fraction", round(default.value, 4),
                     f"the default measured fraction: {default.note}")
        return default.value
    notes.assume("achievable_bandwidth_fraction", round(fraction, 4), _measured_on(card))
    return fraction


def decode_efficiency_range(card: Card, cards: int, workload: Workload, notes: Notes,
                            ceiling_fraction: float = 1.0) -> Range:
    """The engine's share of the ceiling (the guide's when none is named), scaled for several
    cards by the guide's dedicated-interconnect or PCIe ratio, never above what the memory
    itself reaches (`ceiling_fraction`); a given efficiency is exact."""
    if workload.decode_efficiency is not None:
        e = workload.decode_efficiency
        return Range(e, e, e)
    engine = ENGINES[workload.engine]
    why = engine.why
    factor = 1.0 if cards == 1 else MULTI_CARD_FACTOR[card.interconnect]
    scaled = Range(*(min(ceiling_fraction, x * factor) for x in (engine.low, engine.typical, engine.high)))
    where = "one card" if cards == 1 else f"{cards} cards over {card.interconnect}"
    notes.assume("decode_efficiency", round(scaled.typical, 4),
                 f"{why}; {where}; range {scaled.low:.2f}-{scaled.high:.2f}")
    return scaled


def _roof(model, workload, breakdown, card, cards, batch, peak, notes=None):
    read = (weights.decode_read_bytes(model, workload.precision, batch) if notes is None
            else _weights_read_bytes(model, workload, batch, notes))
    return t.decode_roofline(
        bandwidth_bytes_per_s=cards * card.bandwidth_bytes_per_s, peak_flops=peak,
        weights_read_bytes=read, kv_bytes_per_sequence=breakdown.kv_cache_bytes_per_sequence or 0,
        batch_size=batch, flops_per_token=t.decode_flops_per_token(model.params_per_token)), read


def throughput_answer(
    model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, card: Card, fit: FitAnswer,
    cards: int, notes: Notes, curve: bool = True,
) -> ThroughputAnswer:
    """Tensor-parallel decode and prefill over `cards`: bandwidths and peaks add."""
    peak = cards * compute_flops(card, workload.precision.compute_keys, notes, "compute")
    roof, read = _roof(model, workload, breakdown, card, cards, workload.batch_size, peak, notes)
    fraction = achievable_fraction(card, notes)
    eff = decode_efficiency_range(card, cards, workload, notes, fraction)
    overhead = step_overhead_s(model, workload, notes)
    total = _scale(roof.total_tokens_per_s_ceiling, workload.batch_size, eff, overhead)
    per_stream = Range(*(x / workload.batch_size for x in (total.low, total.typical, total.high)))
    prefill = _prefill(model, workload, peak, cards * card.bandwidth_bytes_per_s, read, notes,
                       _compute_fraction(card, workload, notes))
    concurrency = fit.max_concurrent_sequences if cards == fit.count else None
    return ThroughputAnswer(
        cards=cards, batch_size=workload.batch_size,
        engine=workload.engine or "guide",
        compute_precision=_compute_key(card, workload),
        peak_flops_per_s=peak, bandwidth_bytes_per_s=cards * card.bandwidth_bytes_per_s,
        ridge_flops_per_byte=roof.ridge_flops_per_byte,
        arithmetic_intensity_flops_per_byte=roof.intensity_flops_per_byte,
        attainable_flops_per_s=roof.attainable_flops_per_s, bound=roof.bound,
        bytes_per_step=roof.step_bytes, weights_read_bytes_per_step=read,
        flops_per_token=t.decode_flops_per_token(model.params_per_token),
        decode_efficiency=eff.typical,
        achievable_bandwidth_fraction=fraction,
        decode_tokens_per_s_ceiling=roof.total_tokens_per_s_ceiling / workload.batch_size,
        decode_tokens_per_s_achievable=fraction * roof.total_tokens_per_s_ceiling / workload.batch_size,
        decode_tokens_per_s_expected=per_stream.typical, decode_tokens_per_s_range=per_stream,
        total_tokens_per_s_ceiling=roof.total_tokens_per_s_ceiling,
        total_tokens_per_s=total.typical, total_tokens_per_s_range=total,
        max_concurrent_sequences=concurrency,
        decode_curve=_curve(model, workload, breakdown, card, cards, peak, eff.typical, overhead,
                            concurrency) if curve else (),
        **prefill,
    )


def step_overhead_s(model: ModelSpec, workload: Workload, notes: Notes) -> float:
    """The engine's fixed cost of one decode step: its per-layer cost x the layers (0 when the
    layers are unknown or the efficiency was given)."""
    if workload.decode_efficiency is not None or not model.layers:
        return 0.0
    per_layer = ENGINES[workload.engine].layer_overhead_s
    if per_layer:
        notes.assume("step_overhead_s", round(per_layer * model.layers, 6),
                     f"{per_layer * 1e6:g} us per layer and decode step (kernel launches and "
                     "synchronisation), calibrated on published runs")
    return per_layer * model.layers


def expected_total(ceiling_total: float, batch: int, efficiency: float, overhead_s: float) -> float:
    """Total tokens/s: the batch over the step time, which is the bandwidth-bound time at the
    engine's efficiency plus its fixed cost per step."""
    return batch / (batch / (ceiling_total * efficiency) + overhead_s)


def _scale(ceiling_total: float, batch: int, eff: Range, overhead_s: float) -> Range:
    return Range(*(expected_total(ceiling_total, batch, e, overhead_s)
                   for e in (eff.low, eff.typical, eff.high)))


def _compute_fraction(card: Card, workload: Workload, notes: Notes) -> float:
    key = _compute_key(card, workload)
    fraction = measured_compute_fraction(card, key)
    if fraction is None:
        return d.ACHIEVABLE_COMPUTE_FRACTION.value
    notes.assume("achievable_compute_fraction", round(fraction, 4), _measured_on(card))
    return fraction


def _measured_on(card: Card) -> str:
    return f"measured on {card.id}: {card.measured_source}"


def _prefill(model: ModelSpec, workload: Workload, peak: float, bandwidth: float, read: int,
             notes: Notes, compute_fraction: float = 1.0) -> dict:
    """Prefill of one prompt: 2 x active params x tokens plus causal attention, compute-bound
    at 60-70 % of peak (never above what a large matmul reaches on the card), and never faster
    than reading the weights once."""
    prompt = workload.prompt_tokens
    attention = 0.0
    if model.layers and model.attention_heads and model.resolved_head_dim:
        attention = 2.0 * prompt * prompt * model.attention_heads * model.resolved_head_dim * model.layers
    flops = 2.0 * model.params_per_token * prompt + attention
    notes.assume("prefill_efficiency", d.PREFILL_EFFICIENCY.value, d.PREFILL_EFFICIENCY.note)
    memory_s = read / bandwidth
    times = [max(flops / (peak * min(e, compute_fraction)), memory_s) for e in PREFILL_EFFICIENCY_RANGE]
    return {
        "prompt_tokens": prompt,
        "prefill_flops": flops,
        "prefill_bound": "compute" if flops / (peak * PREFILL_EFFICIENCY_RANGE[1]) >= memory_s else "memory",
        "time_to_first_token_s": times[1],
        "time_to_first_token_s_range": Range(times[2], times[1], times[0]),
        "prefill_tokens_per_s": prompt / times[1],
    }


def _curve(model, workload, breakdown, card, cards, peak, efficiency, overhead_s, concurrency) -> tuple:
    """Tokens/s per stream and in total against batch, up to where memory or compute binds."""
    points = []
    for batch in CURVE_BATCHES:
        roof, _ = _roof(model, workload, breakdown, card, cards, batch, peak)
        total = expected_total(roof.total_tokens_per_s_ceiling, batch, efficiency, overhead_s)
        fits = concurrency is None or batch <= concurrency
        points.append(CurvePoint(batch, total / batch, total, roof.total_tokens_per_s_ceiling,
                                 roof.bound, fits))
        if not fits or roof.bound == "compute":
            break
    return tuple(points)


def _compute_key(card: Card, workload: Workload) -> str:
    for key in workload.precision.compute_keys:
        if key in card.dense_flops:
            return key
    return "bf16"


def _weights_read_bytes(model: ModelSpec, workload: Workload, batch: int, notes: Notes) -> int:
    """Weight bytes a decode step reads, and an assumption saying which parameters those are."""
    read = weights.decode_read_bytes(model, workload.precision, batch)
    if model.expert_params and model.experts and model.experts_per_token:
        fraction = weights.expert_fraction_touched(model.experts, model.experts_per_token, batch)
        notes.assume("decode_weights", "shared weights + routed experts",
                     f"MoE: memory holds all {model.params / BILLION:.1f}B parameters; a decode step "
                     f"reads the shared weights and the {fraction:.0%} of experts a batch of "
                     f"{batch} routes to ({model.experts_per_token} of "
                     f"{model.experts} per token; {model.params_per_token / BILLION:.1f}B active)")
    elif model.is_moe:
        notes.assume("decode_weights", "min(batch x active, all)",
                     f"MoE: memory holds all {model.params / BILLION:.1f}B parameters; decode reads "
                     f"{model.params_per_token / BILLION:.1f}B active per sequence, at most all of them")
    elif model.decode_skipped_params:
        notes.assume("decode_weights", "all but the input embedding",
                     "each token reads one row of the input embedding table, every other weight "
                     "once per step")
    return read
