"""Throughput: the roofline's formulas, and serving on them: decode speed per stream and in total
on the plan's cards, priced on the links the plan crosses; the batched-decode curve; prefill and
time to first token; and the capacity of a continuously batched engine at full load, prefill and
decode sharing the cards."""

import functools
import math
from dataclasses import dataclass, replace

from . import calibration, weights
from . import defaults as d
from . import messages as M
from .cards import Card, measured_bandwidth_fraction, measured_compute_fraction
from .decode import Deployment, StepCost, StepTime, attention_flops_per_token, decode_step, step_time
from .engines import DEFAULT_ENGINE, ENGINES, Engine, batch_cap, engine_name
from .frozen import cached, evolve, kept_by_argument, stores_fields
from .inputs import Notes, Workload, compute_flops
from .links import Fabric, Link
from .memory import MemoryBreakdown, memory_breakdown
from .model import ModelSpec
from .placement import Placement
from .plan import Parallelism
from .precision import GGUF_ENGINES, Precision
from .ranges import Range
from .units import GIB

PREFILL_EFFICIENCY_RANGE = (0.6, 0.65, 0.7)  # guide: large matmuls reach 60-70 % of peak
CURVE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
# Under load a prompt is prefilled in chunks between decode steps: TensorRT-LLM's default token
# budget per step (max_num_tokens) is 8192; each chunk waits for one step of the running batch.
PREFILL_CHUNK_TOKENS = 8192
# The engine's own spread of fixed costs (per-layer cost, link latencies, collectives), which rest
# on few published runs: its ends take them at 1.5x and 0.67x.
OVERHEAD_RANGE = (1.5, 1.0, 1 / 1.5)
# The guide's multi-card rule: several cards keep 70 % of the summed bandwidth over a dedicated
# link and 50 % over PCIe; one card 60 %.
GUIDE_SPREAD = 0.1  # the guide's rule, ten points either side (its 60 % and 70 % are that apart)
GUIDE_EFFICIENCY = {"single": d.DECODE_EFFICIENCY_SINGLE.value,
                    "dedicated": d.DECODE_EFFICIENCY_DEDICATED.value,
                    "pcie": d.DECODE_EFFICIENCY_PCIE.value}


# --- the roofline ---------------------------------------------------------------------------


def ridge_flops_per_byte(peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """Ridge point = peak FLOP/s / bandwidth bytes/s, in FLOP per byte."""
    return peak_flops / bandwidth_bytes_per_s


def attainable_flops(peak_flops: float, bandwidth_bytes_per_s: float, intensity: float) -> float:
    """Roofline: min(peak, bandwidth x intensity), in FLOP/s."""
    return min(peak_flops, bandwidth_bytes_per_s * intensity)


def decode_flops_per_token(params_per_token: int) -> int:
    """2 FLOPs (a multiply and an add) per parameter a token passes through."""
    return 2 * params_per_token


@stores_fields
@dataclass(frozen=True)
class DecodePoint:
    """Decode at one batch size: per stream and in total (expected), and what binds."""

    batch_size: int
    """Sequences decoded at once at this point, over all copies of the plan."""
    decode_tokens_per_s: float
    """Expected tokens/s each stream gets at this batch size."""
    total_tokens_per_s: float
    """Expected tokens/s of all streams together at this batch size: batch_size x decode_tokens_per_s."""
    total_tokens_per_s_ceiling: float
    """Roofline ceiling in tokens/s for all streams together at this batch size: full datasheet bandwidth and peak, no
    engine costs or communication."""
    bound: str
    """What limits the ideal roofline step at this batch size: memory or compute (unlike Throughput.bound, which reads
    the typical step)."""
    fits: bool
    """Whether this many sequences of context_tokens fit in the plan's memory (at most max_concurrent_sequences); true
    when that is unknown."""


@stores_fields
@dataclass(frozen=True)
class ThroughputAnswer:
    """Decode and prefill on the plan's cards: roofline, tokens/s, ranges, and full-load capacity."""

    cards: int
    """Cards the plan behind the speed figures uses, idle ones excluded: the cards asked when they hold the job, else
    the least count that does. The same as parallelism.cards."""
    batch_size: int
    """Sequences decoded at once, as asked (workload.batch_size, default 1), shared over all copies of the plan."""
    engine: str
    """Engine class the speed is priced for: the one named, the default engine marked "(default)", or "guide" where
    the guide's rule prices a guide tier or a card given by its figures."""
    compute_precision: str
    """Precision of the dense rate the matmuls run at on this card (bf16, fp8, int8, ...): the fastest the engine
    would use for the weight format, e.g. int8 for GGUF under llama.cpp."""
    peak_flops_per_s: float
    """Datasheet dense peak in FLOP/s at compute_precision, summed over the cards one pipeline stage of a copy splits
    a step over (tensor x attention groups); on one card, its own peak."""
    bandwidth_bytes_per_s: float
    """Datasheet memory bandwidth in bytes/s, summed over the same cards as peak_flops_per_s (one pipeline stage of
    one copy)."""
    ridge_flops_per_byte: float
    """Roofline ridge point, peak FLOP/s over bandwidth bytes/s, in FLOP per byte: a step with a lower arithmetic
    intensity is bandwidth-bound."""
    arithmetic_intensity_flops_per_byte: float
    """FLOPs per byte read of the typical decode step at the asked batch: its matmul and attention FLOPs over the
    weight and KV cache bytes it reads."""
    attainable_flops_per_s: float
    """Roofline on datasheet figures: min(peak_flops_per_s, bandwidth_bytes_per_s x
    arithmetic_intensity_flops_per_byte), in FLOP/s."""
    bound: str
    """What limits the typical decode step at the asked batch: memory (reading the weights takes longer than their
    matmuls) or compute."""
    bytes_per_step: int
    """Bytes one copy's cards read in one decode step of the asked batch, summed over its cards: the weights plus
    every sequence's KV cache."""
    weights_read_bytes_per_step: int
    """The weights part of bytes_per_step: weight bytes one copy reads per decode step (an MoE step reads only the
    routed experts its tokens touch)."""
    flops_per_token: int
    """Matmul FLOPs of one decoded token: 2 x the parameters it passes through (the active parameters of an MoE
    model); attention not included."""
    decode_efficiency: float
    """Share (0-1) of datasheet memory bandwidth the engine streams at, typical: the engine's figure, the guide's rule
    (0.6 one card, 0.7 dedicated link, 0.5 PCIe) or workload.decode_efficiency."""
    decode_efficiency_range: Range
    """decode_efficiency at the low, typical and high ends of the engine's range; all three equal when
    workload.decode_efficiency is given."""
    achievable_bandwidth_fraction: float
    """Share (0-1) of datasheet bandwidth the card's memory really reaches: measured on this card, else the default
    0.9 (said in assumptions)."""
    decode_tokens_per_s_ceiling: float
    """Roofline ceiling in tokens/s per stream at the asked batch: full datasheet bandwidth and peak, no engine costs
    or communication. total_tokens_per_s_ceiling / batch_size."""
    decode_tokens_per_s_achievable: float
    """decode_tokens_per_s_ceiling x achievable_bandwidth_fraction: tokens/s per stream the card's measured memory
    bandwidth allows, before any engine losses."""
    decode_tokens_per_s_expected: float
    """Expected tokens/s each stream gets at the asked batch, with the engine's bandwidth share, fixed costs and the
    plan's communication: 1 / decode_step.step_s."""
    decode_tokens_per_s_range: Range
    """decode_tokens_per_s_expected as low, typical and high: the 10th and 90th percentile of published one-stream runs
    of this kind (the cards' maker, the weights' format class, dense or MoE) against the service's estimates out of
    sample, never above decode_tokens_per_s_ceiling; the note names the runs and how often the range held."""
    decode_tokens_per_s_guide: float
    """The guide's rule for one stream (batch 1, whatever batch was asked): 60/70/50 % of one copy's summed bandwidth
    over the bytes a token reads, in tokens/s."""
    total_tokens_per_s_guide: float
    """The guide's rule for the asked batch, all copies together: each copy's share of its summed bandwidth over the
    weights read once plus each stream's KV cache, in tokens/s."""
    total_tokens_per_s_ceiling: float
    """Roofline ceiling in tokens/s for all streams of the asked batch together: batch_size x
    decode_tokens_per_s_ceiling."""
    total_tokens_per_s: float
    """Expected tokens/s of all streams of the asked batch together, over all copies: batch_size x
    decode_tokens_per_s_expected."""
    total_tokens_per_s_range: Range
    """total_tokens_per_s as low, typical and high, by the same factors as decode_tokens_per_s_range, never above
    total_tokens_per_s_ceiling."""
    max_concurrent_sequences: int | None
    """Most sequences of context_tokens the plan's copies hold at once beside the weights and runtime; null when the
    model's KV cache shape is unknown. Equals fit's when the cards asked fit."""
    link: str | None
    """Name of the slowest link one copy's collectives cross (e.g. NVLink 4, PCIe, network (400 GB/s per machine));
    null when one copy is one card."""
    link_bytes_per_s: float | None
    """Achievable bytes/s one way per card on that link: half the vendor's two-way figure at the collective
    efficiency, or the card's share of the network; null when one copy is one card."""
    link_latency_s: float | None
    """Latency of one collective round over that link, in seconds; null when one copy is one card."""
    decode_step: StepCost  # the asked batch on one copy, by part
    """The typical decode step of the asked batch on one copy, split into its parts, in seconds."""
    prompt_tokens: int
    """Prompt length of one request, for prefill, time to first token and full-load capacity: as given, else
    context_tokens less output_tokens."""
    prefill_flops: float
    """FLOPs to prefill one prompt: 2 x active parameters x prompt_tokens, plus causal attention over the prompt."""
    prefill_bound: str
    """What limits one prompt's prefill on one copy: compute (its matmuls at the copy's share of peak) or memory (one
    read of the weights)."""
    time_to_first_token_s: float
    """Seconds to prefill one prompt alone on one copy, with no queue: the larger of matmul time and one weight read,
    plus fixed costs and collectives. Under load: capacity_time_to_first_token_s."""
    time_to_first_token_s_range: Range
    """time_to_first_token_s as a range in seconds, low the fastest: the 10th and 90th percentile of published first
    tokens at light load of this kind against the service's estimates out of sample; the note says which."""
    prefill_tokens_per_s: float
    """Prompt tokens per second one copy prefills for a single prompt: prompt_tokens / time_to_first_token_s."""
    output_tokens: int
    """Tokens generated per request, for full-load capacity: as given, else 1000 (at most half the context), or the
    rest of the context when only prompt_tokens is given."""
    max_total_tokens_per_s: float | None
    """Output tokens/s all copies sustain at full load: the largest batch whose KV cache fits (engine cap applied),
    with chunked prefill. Null when no sequence fits or the KV shape is unknown."""
    max_total_tokens_per_s_range: Range | None
    """max_total_tokens_per_s as low, typical and high: the 10th and 90th percentile of published full-load runs of this
    kind against the service's estimates out of sample, never above max_total_tokens_per_s_ceiling; null with it."""
    max_total_tokens_per_s_ceiling: float | None
    """Output tokens/s if every card ran at dense peak on this work alone (decode, attention and each token's share of
    prefill); no batch or engine beats it. Null with max_total_tokens_per_s."""
    capacity_batch_size: int | None
    """Sequences running at once over all copies at full load, the batch max_total_tokens_per_s is for; null with
    it."""
    capacity_time_to_first_token_s: float | None
    """Time to first token at full load, in seconds: one prompt's prefill plus one full-load step for each 8192-token
    chunk of it; null with max_total_tokens_per_s."""
    time_per_output_token_s: float | None
    """Seconds between two output tokens of one sequence at full load (the step at capacity_batch_size), not at the
    asked batch; null with max_total_tokens_per_s."""
    capacity_bound: str | None
    """What limits the full-load step: memory or compute; null with max_total_tokens_per_s."""
    decode_curve: tuple[DecodePoint, ...]
    """Decode at batch sizes 1, 2, 4, ... up to 4096, stopping after the first batch that no longer fits in memory or
    turns compute-bound."""
    # The plan the full-load figures (max_total_tokens_per_s and its kin) are for: the plan shown
    # serves the batch asked fastest, and on the same cards another may serve most at full load.
    capacity_parallelism: M.Message | None = None
    """The plan the full-load figures are priced on (described as parallelism.description); it can differ from the
    plan shown, which serves the asked batch fastest. Null with max_total_tokens_per_s."""


@stores_fields
@dataclass(frozen=True, kw_only=True)
class Setup:
    """What a plan's speed depends on besides the batch: one copy's deployments at the low,
    typical and high ends of the engine's own range, the ideal roofline, and the copies. The ends
    and the ideal are made when first asked for; the answers' ranges come from published runs
    (calibration.py), so an answer prices only the typical and the ideal."""

    typical: Deployment
    copies: int
    bandwidth_fraction: float  # of the datasheet bandwidth the card's memory really reaches
    efficiency: Range  # of the bandwidth, low to high
    compute: Range  # of the peak, low to high
    engine_name: str = "guide"  # as answered: the engine named, the default engine, or the guide's rule
    prefill_note: M.Message  # the prefill's share of peak, and where it comes from
    compute_key: str = "bf16"  # the rate the matmuls run at (_compute_key)

    @property
    def engine(self) -> Engine:
        return self.typical.engine

    @cached
    def low(self) -> Deployment:
        """The engine's slow end: the low shares, fixed costs and link latencies at 1.5x."""
        return self._end(self.efficiency.low, self.compute.low, OVERHEAD_RANGE[0])

    @cached
    def high(self) -> Deployment:
        """The engine's fast end: the high shares, fixed costs and link latencies at 0.67x."""
        return self._end(self.efficiency.high, self.compute.high, OVERHEAD_RANGE[2])

    @cached
    def ideal(self) -> Deployment:
        return self.typical.varied(ideal=True)

    def _end(self, efficiency: float, compute: float, scale: float) -> Deployment:
        return self.typical.varied(bandwidth_efficiency=efficiency, compute_fraction=compute,
                                   overhead_scale=scale, fabric=self.typical.fabric.scaled(scale))


def achievable_fraction(card: Card, notes: Notes) -> float:
    """The share of datasheet bandwidth a copy really reaches: measured on this card, or the
    default measured fraction."""
    fraction = measured_bandwidth_fraction(card)
    if fraction is None:
        default = d.ACHIEVABLE_BANDWIDTH_FRACTION
        notes.assume("achievable_bandwidth_fraction", round(default.value, 4),
                     lambda: M.DEFAULT_FRACTION(why=default.note))
        return default.value
    notes.assume("achievable_bandwidth_fraction", round(fraction, 4), lambda: _measured_on(card))
    return fraction


def setup(model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, card: Card,
          par: Parallelism, fabric: Fabric, notes: Notes) -> Setup:
    """The deployments of one copy of `par` (its replicas are the copies)."""
    group = par if par.data == 1 and par.replicas == 1 else replace(par, data=1, replicas=1)
    priced = _pricing(model, workload.precision, ENGINES[workload.engine], workload.engine, workload.decode_efficiency,
                      card, group, fabric)
    notes.replay(priced.notes)
    base = Deployment(model, workload.precision, breakdown, card, priced.engine, group, fabric, priced.peak_flops,
                      priced.compute.typical, priced.efficiency.typical, priced=priced.priced)
    return Setup(typical=base, copies=par.replicas * par.data, bandwidth_fraction=priced.bandwidth_fraction,
                 efficiency=priced.efficiency, compute=priced.compute, engine_name=priced.engine_name,
                 prefill_note=priced.prefill_note, compute_key=priced.compute_key)


@dataclass(frozen=True)
class _Pricing:
    """What a copy's speed is priced with besides its memory: the engine, the peak its matmuls
    run at, the shares of bandwidth and peak it reaches, and the notes that say so."""

    engine: Engine
    peak_flops: float
    bandwidth_fraction: float
    efficiency: Range
    compute: Range
    priced: bool  # False: the guide's rule or a given efficiency, no fixed costs added
    engine_name: str
    prefill_note: M.Message
    compute_key: str
    notes: Notes


@functools.lru_cache(maxsize=1024)
def _pricing(model: ModelSpec, precision: Precision, engine: Engine, engine_name: str | None,
             decode_efficiency: float | None, card: Card, group: Parallelism, fabric: Fabric) -> _Pricing:
    """A copy of `group` priced on `card`: the same for every question on that model, format,
    engine (its constants, not only its name: a refit changes them) and card (each answer's
    memory differs, not this), so worked out once, with its notes, which setup says again in
    order."""
    notes = Notes()
    path = compute_path(card, precision, engine_name, notes)
    peak = compute_flops(card, path, notes, "compute")
    fraction = achievable_fraction(card, notes)
    key = _compute_key(card, precision, engine_name, path)
    measured = _compute_fraction(card, key, notes)
    if engine_name is None and card.kind != "card" and decode_efficiency is None:
        efficiency, shares, priced = _guide_tier(card, group, fraction, notes), PREFILL_EFFICIENCY_RANGE, False
        name = "guide"
    else:
        efficiency = _efficiency_range(precision, decode_efficiency, engine, card, fraction, notes)
        shares, priced = engine.compute_efficiency or PREFILL_EFFICIENCY_RANGE, decode_efficiency is None
        name = engine_name or f"{DEFAULT_ENGINE} (default)"
    kept = engine.fp4_compute_share if key == "fp4" else 1.0
    compute = Range(*(min(e, measured) * kept for e in shares))
    why = engine.fitted if shares is engine.compute_efficiency else d.PREFILL_EFFICIENCY.note
    if priced:
        _fixed_cost_notes(model, engine, group, fabric, notes)
    prefill_note = M.PREFILL_MATMULS(low=compute.low, high=compute.high, why=why)
    return _Pricing(engine, peak, fraction, efficiency, compute, priced, name, prefill_note, key, notes)


def guide_share(card: Card, group: Parallelism) -> float:
    """The guide's share of the bandwidth for a copy of `group` on `card`: 60 % on one card, 70 %
    over a dedicated link, 50 % over PCIe."""
    return GUIDE_EFFICIENCY["single" if group.group == 1 else card.interconnect]


def _guide_tier(card: Card, group: Parallelism, ceiling_fraction: float, notes: Notes) -> Range:
    """One of the guide's tiers (or a card described by its figures) with no engine named is
    answered by the guide's own rule: the step is the roofline at 60 % of the bandwidth on one
    card, 70 % over a dedicated link and 50 % over PCIe, with no fixed costs added (2 x D-M, 70B
    fp16: 70 % of 28.6 = 20 tokens/s); its range ten points either side, as the guide's 60 % for
    one card and 70 % for a tuned engine are apart."""
    share = guide_share(card, group)
    notes.assume("decode_efficiency", share, M.GUIDE_DECODE_RULE(card=card.id, share=share))
    return Range(*(min(ceiling_fraction, x) for x in (share - GUIDE_SPREAD, share, share + GUIDE_SPREAD)))


def stream_speed(workload: Workload, s: Setup) -> float:
    """typical_speed's tokens/s per stream alone (the step's time, not its parts)."""
    batch = workload.batch_size
    per_copy = math.ceil(batch / s.copies)
    return _stream_and_total(step_time(s.typical, per_copy, workload.context_tokens), per_copy, batch)[0]


def _stream_and_total(step: StepCost | StepTime, per_copy: int, batch: int) -> tuple[float, float]:
    """Tokens/s per stream and of the whole batch, from one copy's step of `per_copy` sequences."""
    speed = per_copy / step.step_s
    return speed / per_copy, speed * batch / per_copy


def typical_speed(workload: Workload, s: Setup) -> tuple[int, StepCost, float, float]:
    """The asked batch on the plan: the sequences on each copy, the typical step by part,
    tokens/s per stream and in total."""
    batch = workload.batch_size
    per_copy = math.ceil(batch / s.copies)
    step = decode_step(s.typical, per_copy, workload.context_tokens)
    return per_copy, step, *_stream_and_total(step, per_copy, batch)


# The ranges of the decode figures and the roofline ceiling: one more decode step, the ideal one
# (an answer that shows none of them computes only the typical).
ENDS_FIELDS = frozenset({"decode_tokens_per_s_range", "total_tokens_per_s_range", "decode_tokens_per_s_ceiling",
                         "decode_tokens_per_s_achievable", "total_tokens_per_s_ceiling"})


def throughput_answer(
    model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, placement: Placement,
    s: Setup, notes: Notes, curve: bool = True, full_load: "tuple[Placement, Setup] | None" = None,
    full_load_shown: bool = True, ends: bool = True, prefill_range: bool = True, full_load_range: bool = True,
) -> ThroughputAnswer:
    """Decode and prefill of the plan in `placement`, priced by `s`, and full-load capacity on it
    or on `full_load`, the plan that serves most at full load on the same cards. Without `curve`
    the decode curve is left empty, without `full_load_shown` the full-load figures null, without
    `ends` the ENDS_FIELDS null, without `prefill_range` or `full_load_range` the range of time
    to first token or of full-load output (an answer that does not show them)."""
    batch = workload.batch_size
    context = workload.context_tokens
    per_copy, typical, per_stream_typical, total_typical = typical_speed(workload, s)
    decode = calibrated(calibration.DECODE, model, workload, s)
    group = s.typical.group
    width = group.tensor * group.expert  # the cards a token's step reads from at once
    # A pipelined step reads every stage's share; a layer split's step already holds them all.
    rounds = group.pipeline if s.engine.pipelined else 1
    card_bandwidth = s.typical.card.bandwidth_bytes_per_s
    peak, bandwidth = width * s.typical.peak_flops, width * card_bandwidth
    step_bytes = typical.weights_read_bytes_per_card + typical.kv_read_bytes_per_card
    intensity = typical.flops_per_card / step_bytes if step_bytes else 0.0
    prefill = _prefill(model, workload, s, notes, prefill_range)
    capacity_placement, capacity_setup = full_load or (placement, s)
    capacity = serving_capacity(model, workload, capacity_setup, capacity_placement, notes, full_load_range) \
        if full_load_shown else dict.fromkeys(CAPACITY_FIELDS)
    concurrency = placement.max_concurrent_sequences
    link = _link_crossed(s.typical)
    # the ends' shares, as s.low and s.high are set up (without setting them up)
    efficiency = Range(s.efficiency.low, s.typical.bandwidth_efficiency, s.efficiency.high)
    # the figures on the ends and the ceiling; without `ends` null, as the answer does not show them
    at_ends: dict = dict.fromkeys(ENDS_FIELDS)
    if ends:
        ideal = step_time(s.ideal, per_copy, context)
        at_ends = {"decode_tokens_per_s_ceiling": 1 / ideal.step_s,
                   "decode_tokens_per_s_achievable": s.bandwidth_fraction / ideal.step_s,
                   "decode_tokens_per_s_range": decode.range(per_stream_typical, 1 / ideal.step_s),
                   "total_tokens_per_s_ceiling": batch / ideal.step_s,
                   "total_tokens_per_s_range": decode.range(total_typical, batch / ideal.step_s)}

    return ThroughputAnswer(
        cards=placement.parallelism.cards, batch_size=batch,
        engine=s.engine_name,
        compute_precision=s.compute_key,
        peak_flops_per_s=peak, bandwidth_bytes_per_s=bandwidth,
        ridge_flops_per_byte=ridge_flops_per_byte(s.typical.peak_flops, card_bandwidth),
        arithmetic_intensity_flops_per_byte=intensity,
        attainable_flops_per_s=attainable_flops(peak, bandwidth, intensity), bound=typical.bound,
        bytes_per_step=step_bytes * width * rounds,
        weights_read_bytes_per_step=typical.weights_read_bytes_per_card * width * rounds,
        flops_per_token=decode_flops_per_token(model.params_per_token),
        decode_efficiency=s.typical.bandwidth_efficiency,
        decode_efficiency_range=efficiency,
        achievable_bandwidth_fraction=s.bandwidth_fraction,
        decode_tokens_per_s_expected=at_ends["decode_tokens_per_s_range"].typical if ends
        else _at_most_roofline(decode, per_stream_typical, s, per_copy, context, 1),
        decode_tokens_per_s_guide=_guide_rule(model, workload, s, 1),
        total_tokens_per_s_guide=s.copies * _guide_rule(model, workload, s, per_copy),
        total_tokens_per_s=at_ends["total_tokens_per_s_range"].typical if ends
        else _at_most_roofline(decode, total_typical, s, per_copy, context, batch),
        **at_ends,
        max_concurrent_sequences=concurrency,
        link=None if link is None else link.name,
        link_bytes_per_s=None if link is None else link.bytes_per_s,
        link_latency_s=None if link is None else link.latency_s,
        decode_step=typical,
        **prefill,
        output_tokens=workload.output_tokens or 1,
        **capacity,
        decode_curve=_curve(s, context, concurrency, {per_copy: (typical, ideal)} if ends else {}) if curve else (),
        capacity_parallelism=capacity_placement.parallelism.said()
        if capacity["max_total_tokens_per_s"] is not None else None,
    )


def _at_most_roofline(band: calibration.Calibrated, model_figure: float, s: Setup, per_copy: int, context: int,
                      streams: int) -> float:
    """A decode figure at its typical, never above the roofline of `streams` streams (priced only
    when the typical moves the model's figure up)."""
    value = band.value(model_figure)
    if band.typical <= 1:
        return value
    return min(value, streams / step_time(s.ideal, per_copy, context).step_s)


def calibrated(figure: str, model: ModelSpec, workload: Workload, s: Setup,
                load: str = calibration.ANY) -> calibration.Calibrated:
    """The factors of a figure's range for this question (service/sizing/calibration.py): from the
    out-of-sample error of published runs of its kind."""
    return calibration.for_question(figure, s.typical.card.vendor, workload.precision.bits_per_value, model.is_moe,
                                    engine_name(workload.engine), load)


def _link_crossed(dep: Deployment) -> Link | None:
    """The slowest link one copy's collectives cross (None on one card)."""
    par = dep.group
    if par.group <= 1:
        return None
    return dep.fabric.link(par.group)


def _efficiency_range(precision: Precision, decode_efficiency: float | None, engine: Engine, card: Card,
                      ceiling_fraction: float, notes: Notes) -> Range:
    """The engine's share of the bandwidth (the guide's when none is named), never above what the
    memory itself reaches; a given efficiency is exact."""
    if decode_efficiency is not None:
        e = decode_efficiency
        notes.assume("decode_efficiency", e, M.DECODE_EFFICIENCY_GIVEN())
        return Range(e, e, e)
    hbm_shares = engine.hbm_efficiency if (card.memory_type or "").upper().startswith("HBM") else None
    hbm = hbm_shares is not None
    shares = hbm_shares if hbm_shares is not None else (engine.low, engine.typical, engine.high)
    factor = engine.quantized_factor if precision.bits_per_value < 16 else 1.0
    scaled = Range(*(min(ceiling_fraction, x * factor) for x in shares))

    def why() -> M.Message:
        return M.CLAUSES(clauses=(engine.why, *((M.HBM_KERNELS_REACH_LESS(),) if hbm else ()),
                                  *((M.QUANTISED_FACTOR(factor=factor),) if factor != 1.0 else ()),
                                  M.SHARE_RANGE(low=scaled.low, high=scaled.high)))

    notes.assume("decode_efficiency", round(scaled.typical, 4), why)
    return scaled


def _fixed_cost_notes(model, engine: Engine, group: Parallelism, fabric: Fabric, notes: Notes) -> None:
    if notes.quiet:
        return
    if model.layers and (engine.layer_overhead_s or engine.moe_layer_overhead_s):
        layers = model.layers
        moe = model.resolved_moe_layers
        total = layers * engine.layer_overhead_s + moe * engine.moe_layer_overhead_s
        per_moe = bool(moe and engine.moe_layer_overhead_s)
        said = {(True, True): M.STEP_OVERHEAD_MOE, (True, False): M.STEP_OVERHEAD,
                (False, True): M.STEP_OVERHEAD_MOE_ASSUMED, (False, False): M.STEP_OVERHEAD_ASSUMED}[
            (bool(engine.fitted), per_moe)]
        notes.assume("step_overhead_s", round(total, 6), said(
            layer_s=engine.layer_overhead_s, **({"moe_layer_s": engine.moe_layer_overhead_s} if per_moe else {}),
            **({"fitted": engine.fitted} if engine.fitted else {})))
    if group.tensor > 1:
        link = fabric.link(group.tensor)
        notes.assume("tensor_collectives_per_layer", engine.syncs_per_layer, M.TENSOR_COLLECTIVES(
            syncs=engine.syncs_per_layer, link=link.name, latency_s=link.latency_s, engine_s=engine.collective_s))
    if group.expert > 1:
        notes.assume("expert_collectives_per_layer", 2, M.EXPERT_COLLECTIVES())
    if group.pipeline > 1:
        notes.assume("pipeline_hop_s", round(engine.hop_s + fabric.inside.latency_s, 6),
                     M.PIPELINE_HOP(hop_s=engine.hop_s))


def _compute_fraction(card: Card, key: str, notes: Notes) -> float:
    fraction = measured_compute_fraction(card, key)
    if fraction is None:
        return d.ACHIEVABLE_COMPUTE_FRACTION.value
    notes.assume("achievable_compute_fraction", round(fraction, 4), lambda: _measured_on(card))
    return fraction


def _measured_on(card: Card) -> M.Message:
    return M.MEASURED_ON(card=card.id, source=card.measured_source)


def _guide_rule(model: ModelSpec, workload: Workload, s: Setup, batch: int) -> float:
    """The guide's figure in tokens/s for `batch` streams on one copy: the summed bandwidth of its
    cards over the bytes a step reads (the weights once, the KV cache per stream), at 60 % on one
    card, 70 % over a dedicated link, 50 % over PCIe."""
    group = s.typical.group
    read = weights.decode_read_bytes(model, workload.precision, batch)
    kv = s.typical.breakdown.kv_cache_bytes_per_sequence or 0
    share = guide_share(s.typical.card, group)
    return share * group.group * s.typical.card.bandwidth_bytes_per_s * batch / (read + batch * kv)


def _prefill(model: ModelSpec, workload: Workload, s: Setup, notes: Notes, ranged: bool = True) -> dict:
    """Prefill of one prompt on one copy: 2 x active params x tokens plus causal attention, at
    60-70 % of the copy's peak (never above what a large matmul reaches on the card), never faster
    than reading the weights once, plus the plan's fixed costs and collectives for the prompt.
    Without `ranged`, the typical time alone (no range)."""
    prompt = workload.prompt_tokens
    notes.assume("prefill_efficiency", round(s.typical.compute_fraction, 4), s.prefill_note)
    typical = prefill_s(s.typical, prompt)
    light = calibrated(calibration.TTFT, model, workload, s, "light")
    compute_s, memory_s = _prefill_roof(s.typical, prompt)
    return {
        "prompt_tokens": prompt,
        "prefill_flops": prefill_flops(model, prompt),
        "prefill_bound": "compute" if compute_s >= memory_s else "memory",
        "time_to_first_token_s": light.value(typical),
        # one prompt alone: the light-load band of published times to first token
        "time_to_first_token_s_range": light.range(typical) if ranged else None,
        "prefill_tokens_per_s": prompt / light.value(typical),
    }


def prefill_flops(model: ModelSpec, prompt: int) -> float:
    """2 x active parameters per token, plus causal attention over half the prompt on average."""
    return 2.0 * model.params_per_token * prompt + attention_flops_per_token(model, prompt / 2) * prompt


@kept_by_argument
def prefill_s(dep: Deployment, prompt: int) -> float:
    """One prompt through one copy: every card of the copy computes its share (pipelines split a
    prompt into chunks that overlap across stages), never faster than reading the weights once,
    plus the fixed costs and collectives of pushing the prompt's tokens through the layers and the
    engine's fixed time per request (kept with the deployment: the answer's prefill and its full
    load's are the same prompt's)."""
    compute, memory = _prefill_roof(dep, prompt)
    step = step_time(dep, 0, 0, prefill_tokens=prompt)
    return max(compute, memory) + step.engine_s + step.comm_s + dep.engine.request_overhead_s


def _prefill_roof(dep: Deployment, prompt: int) -> tuple[float, float]:
    """A prompt's matmuls at the copy's share of peak, and one read of its weights, in seconds."""
    cards = dep.group.group
    return (prefill_flops(dep.model, prompt) / (cards * dep.peak_flops * dep.compute_fraction),
            dep.breakdown.weights_bytes / (cards * dep.card.bandwidth_bytes_per_s))


CAPACITY_FIELDS = ("max_total_tokens_per_s", "max_total_tokens_per_s_range", "max_total_tokens_per_s_ceiling",
                   "capacity_batch_size", "capacity_time_to_first_token_s", "time_per_output_token_s",
                   "capacity_bound")


def serving_capacity(model: ModelSpec, workload: Workload, s: Setup, placement: Placement,
                     notes: Notes, ends: bool = True) -> dict:
    """Output tokens per second at full load: the largest batch whose KV cache fits (at the
    average length a sequence has while it is generated, prompt plus half the output), capped
    by the engine, with each step also prefilling prompt/output tokens per sequence (chunked
    prefill keeps the mix steady). Without `ends`, no range (max_total_tokens_per_s_range null)."""
    empty = dict.fromkeys(CAPACITY_FIELDS)
    prompt, output = workload.prompt_tokens, workload.output_tokens or 1
    copy = capacity_copy(model, workload, s, placement.parallelism, prompt, output,
                         placement.usable_bytes_per_card)
    if copy is None:
        return empty
    point = copy.at(None)
    notes.assume("capacity_request", f"{prompt} in / {output} out", M.FULL_LOAD())
    # at the typical of published full-load runs of this kind, the range around it, never above
    # the cards' peak; the first token under load by the loaded band
    full = calibrated(calibration.FULL_LOAD, model, workload, s)
    loaded = calibrated(calibration.TTFT, model, workload, s, "loaded")
    raw, ceiling = point.total_tokens_per_s, compute_ceiling(model, s, prompt, output)
    total = min(full.value(raw), ceiling)
    return {
        "max_total_tokens_per_s": total,
        "max_total_tokens_per_s_range": full.range(raw, ceiling) if ends else None,
        "max_total_tokens_per_s_ceiling": ceiling,
        "capacity_batch_size": point.batch * s.copies,
        "capacity_time_to_first_token_s": loaded.value(point.time_to_first_token_s),
        "time_per_output_token_s": point.step_s * raw / total,  # the step the output stated implies
        "capacity_bound": point.bound,
    }


def compute_ceiling(model: ModelSpec, s: Setup, prompt: int, output: int) -> float:
    """Output tokens/s if every card ran at its peak FLOP/s on nothing but this work: the FLOPs
    of one output token (its decode step, attention over the average context, and its share of
    a prompt's prefill) against the copies' summed peak. No batch or engine beats it."""
    per_token = (2.0 * model.params_per_token + attention_flops_per_token(model, prompt + output / 2)
                 + prefill_flops(model, prompt) / output)
    return s.copies * s.typical.group.group * s.typical.peak_flops / per_token


@stores_fields
@dataclass(frozen=True)
class CapacityPoint:
    """One copy at `batch` running sequences of prompt + output tokens."""

    batch: int
    step_s: float
    time_to_first_token_s: float
    total_tokens_per_s: float  # all copies, at the typical step
    bound: str


@stores_fields
@dataclass(frozen=True)
class CapacityCopy:
    """One copy of a plan serving requests of `prompt` + `output` tokens: what does not change with
    its batch, priced once (the deployment with each sequence's KV cache at its average length,
    the sequences its memory holds, the engine's batch limit, one prompt's prefill alone). The
    ends of the engine's range are priced only for a point that asks for them."""

    setup: Setup
    live: MemoryBreakdown  # each sequence's KV cache at its average length
    most: int
    cap: int | None
    copies: int
    prompt: int
    output: int
    prefill_alone_s: float

    @property
    def largest(self) -> int:
        """The largest batch that fits and the engine allows."""
        return min(self.most, self.cap) if self.cap else self.most

    @cached
    def _typical(self) -> Deployment:
        return self._live(self.setup.typical)

    def _live(self, dep: Deployment) -> Deployment:
        return dep if dep.breakdown is self.live else dep.varied(breakdown=self.live)

    def _step(self, dep: Deployment, batch: int) -> StepTime:
        prompt = self.prompt
        return step_time(dep, batch, prompt + self.output / 2, batch * prompt / self.output, prompt / 2)

    @kept_by_argument
    def _typical_step(self, batch: int) -> StepTime:
        """The typical step at `batch`, priced once (a search asks the same batch again)."""
        return self._step(self._typical, batch)

    def _ttft_s(self, step: StepTime) -> float:
        return self.prefill_alone_s + math.ceil(self.prompt / PREFILL_CHUNK_TOKENS) * step.step_s

    def typical(self, batch: int) -> tuple[float, float]:
        """The typical step and time to first token at `batch`, in seconds."""
        step = self._typical_step(batch)
        return step.step_s, self._ttft_s(step)

    def time_to_first_token_s(self, requests: int) -> float:
        """Time to first token with `requests` in flight on this copy, each sent when the one
        before it ends (a closed loop, as serving benchmarks run): the prompt's prefill and its
        chunks' waits at that batch, or, once the copy completes requests more slowly than they
        come back, the wait Little's law gives: requests / completion rate - the answer's decode."""
        point = self.at(max(1, min(requests, self.largest)))
        completed_per_s = self._full.total_tokens_per_s / self.copies / self.output
        queued_s = requests / completed_per_s - self.output * point.step_s
        return max(self._prefill_queue_s(requests, point), queued_s)

    @cached
    def _full(self) -> CapacityPoint:
        return self.at(None)

    def _prefill_queue_s(self, requests: int, point: CapacityPoint) -> float:
        """Below saturation: the prompt also waits behind the prompts that came just before it
        (an M/D/1 queue of prefills, each `prefill_alone_s` long, arriving at the rate the
        closed loop sends them: requests / (time to first token + the answer's decode))."""
        base, prefill = point.time_to_first_token_s, self.prefill_alone_s
        ttft = base
        for _ in range(50):
            load = requests / (ttft + self.output * point.step_s) * prefill
            if load >= 1:  # saturated: the caller's Little's-law wait holds
                return base
            nxt = base + load * prefill / (2 * (1 - load))
            if abs(nxt - ttft) <= 1e-6 * nxt:
                break
            ttft = nxt
        return ttft

    def at(self, batch: int | None) -> CapacityPoint:
        """The copy at `batch` (None: the largest)."""
        batch = self.largest if batch is None else batch
        typical = self._typical_step(batch)
        total = self.copies * batch / typical.step_s
        return CapacityPoint(batch, typical.step_s, self._ttft_s(typical), total, typical.bound)


def capacity_copy(model: ModelSpec, workload: Workload, s: Setup, par: Parallelism, prompt: int,
                  output: int, usable: int) -> CapacityCopy | None:
    """One copy of `par` under load; None when its memory holds no sequence (or no KV shape)."""
    live = _at_context(model, workload, s.typical.breakdown, prompt + output / 2)
    group = par if par.data == 1 and par.replicas == 1 else replace(par, data=1, replicas=1)  # one copy
    most = live.max_sequences(group, usable)
    if most is None or most < 1:
        return None
    default = batch_cap(s.engine, s.typical.card.memory_bytes / GIB, s.typical.card.id)
    cap = default and max(default, workload.batch_size)
    return CapacityCopy(s, live, most, cap, s.copies, prompt, output, prefill_s(s.typical, prompt))


def _at_context(model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, context: float) -> MemoryBreakdown:
    """The breakdown with each sequence's KV cache at `context` tokens."""
    tokens = max(1, round(context))
    if tokens == workload.context_tokens:
        return breakdown
    return memory_breakdown(model, evolve(workload, context_tokens=tokens), Notes.unread(), breakdown.tensor,
                            said=False)


def _curve(s: Setup, context: int, concurrency: int | None,
           steps: dict[int, tuple[StepCost | StepTime, StepTime]]) -> tuple:
    """Tokens/s per stream and in total against the batch, up to where memory or compute binds;
    `steps` holds the (typical, ideal) steps already priced, by sequences per copy."""
    points = []
    for batch in CURVE_BATCHES:
        per_copy = math.ceil(batch / s.copies)
        if per_copy not in steps:
            steps[per_copy] = (step_time(s.typical, per_copy, context), step_time(s.ideal, per_copy, context))
        step, ideal = steps[per_copy]
        fits = concurrency is None or batch <= concurrency
        points.append(DecodePoint(batch, 1 / step.step_s, batch / step.step_s, batch / ideal.step_s,
                                 ideal.bound, fits))
        if not fits or ideal.bound == "compute":
            break
    return tuple(points)


def _compute_key(card: Card, precision: Precision, engine: str | None, path: tuple[str, ...] | None = None) -> str:
    """The first of the compute path's rates the card lists (`path`, when already found), else bf16."""
    for key in path or compute_path(card, precision, engine, None):
        if key in card.dense_flops:
            return key
    return "bf16"


def compute_path(card: Card, precision: Precision, engine: str | None, notes: Notes | None) -> tuple[str, ...]:
    """The rate the engine multiplies the format's weights through on this card: the fastest it
    would use, not only the format's own. Any engine can compute in FP32 (a Tesla P40 runs
    half precision at 1/64 rate, so llama.cpp computes in FP32 there), and llama.cpp multiplies
    GGUF-quantised weights through INT8 dot products (DP4A or INT8 tensor cores)."""
    candidates = precision.compute_keys + ("fp32",)
    if precision.family == "gguf" and engine in GGUF_ENGINES:
        candidates = ("int8",) + candidates
    listed = [k for k in dict.fromkeys(candidates) if k in card.dense_flops]
    if not listed:
        return precision.compute_keys
    fastest = max(listed, key=lambda k: card.dense_flops[k])  # the first listed on a tie
    own = next((k for k in precision.compute_keys if k in card.dense_flops), None)
    if notes is not None and fastest != own:
        said = dict(precision=precision.name, key=fastest, card=card.id, flops=card.dense_flops[fastest])
        if engine:
            alone, against, said = M.COMPUTE_PATH, M.COMPUTE_PATH_AGAINST, {**said, "engine": engine}
        else:
            alone, against = M.COMPUTE_PATH_ANY_ENGINE, M.COMPUTE_PATH_ANY_ENGINE_AGAINST
        notes.assume("compute_path", fastest, alone(**said) if own is None else
                     against(**said, own_flops=card.dense_flops[own], own=own))
    return (fastest,)


def decode_weights_note(model: ModelSpec, batch: int, notes: Notes) -> None:
    """Which parameters a decode step reads, said once."""
    from .weights import expert_fraction_touched
    if (routed := model.routed_experts) is not None:
        fraction = expert_fraction_touched(routed[0], routed[1], batch)
        notes.assume("decode_weights", "shared weights + routed experts", M.DECODE_READS_ROUTED(
            params=model.params, fraction=fraction, batch=batch, per_token=model.experts_per_token,
            experts=model.experts, active=model.params_per_token))
    elif model.is_moe:
        notes.assume("decode_weights", "min(batch x active, all)",
                     M.DECODE_READS_ACTIVE(params=model.params, active=model.params_per_token))
    elif model.decode_skipped_params:
        notes.assume("decode_weights", "all_but_input_embedding", M.DECODE_SKIPS_EMBEDDING())
