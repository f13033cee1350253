"""Training time: the formulas (compute, the guide's scaling curve, gradient sync, the least
count a deadline needs) and the answer, the time on N cards priced per optimizer step on the
plan, beside the guide's curve.

A step fills the global batch: each data-parallel copy runs micro-batches one after another
(gradient accumulation). A micro-batch costs its compute at the MFU plus the tensor-parallel
all-reduces of every layer (on the machine's link) and, for MoE with expert parallelism, the
all-to-alls; pipeline stages add their bubble, (p-1) micro-batches of idle stages per step;
data parallelism reduces (and, when states are sharded, gathers) the gradients and weights over
the network, hidden behind the backward pass as far as the engine overlaps them.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from . import calibration
from . import defaults as d
from . import links as ln
from . import messages as M
from . import training as tr
from .cards import Card
from .errors import InvalidInputError
from .inputs import HardwareInput, Notes, Workload, compute_flops, interconnect_bytes_per_s
from .links import ACTIVATION_BYTES, Fabric, Link
from .model import ModelSpec
from .plan import Parallelism, cards_per_machine, machines_for
from .precision import HALF
from .throughput import Range
from .training import MODEL_FLOPS_PER_PARAM_TOKEN
from .units import SECONDS_PER_DAY
from .weights import SIXTEEN_BIT_BYTES

MFU_RANGE = (0.3, 0.5)  # public whole-run MFU is mostly 25-48 %; the guide uses 40 %
LORA_ADAPTER_SHARE = 0.005  # adapters' share of the parameters when the layer shapes are unknown


# --- the guide's formulas ------------------------------------------------------------------

# Guide section 5.3: 4 to 8 cards 85 %, 8 to 16 80 %, 16 to 32 75 %; each doubling loses
# 5-15 %. Read as the efficiency at 8, 16 and 32 cards, five points lost per doubling from one
# card, interpolated in log2(cards).
SCALING_ANCHORS = ((1, 1.00), (2, 0.95), (4, 0.90), (8, 0.85), (16, 0.80), (32, 0.75))
# Beyond 32 cards "network and scheduling complexity rise steeply": each further doubling
# keeps 90 % (the midpoint of the guide's 5-15 % loss).
SCALING_PER_DOUBLING_BEYOND_32 = 0.90



def training_compute_flops(params_per_token: int, tokens: float,
                           per_token: float = MODEL_FLOPS_PER_PARAM_TOKEN) -> float:
    """6 x parameters x tokens (forward 2, backward 4; 4 for LoRA's frozen base), in FLOPs."""
    return per_token * params_per_token * tokens


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


# --- the time on the plan ------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    """Where the cards sit: machines of `cards_per_node` cards, the links inside a machine and
    each card's share of the network between machines."""

    fabric: Fabric
    guide_link_bytes_per_s: float | None

    @property
    def cards_per_node(self) -> int:
        return self.fabric.per_machine

    def link(self, members: int) -> Link:
        return self.fabric.link(members)

    def nodes(self, par: Parallelism) -> int:
        return machines_for(par, self.cards_per_node)


@dataclass(frozen=True)
class TrainingAnswer:
    """Training compute and time on `cards` cards by the plan's step and by the guide's curve."""

    cards: int
    """Cards the training is priced on: the plan's card count (the count asked when it holds the job, else the least
    count that does)."""
    nodes: int
    """Machines the plan's cards occupy, each holding at most cards_per_node cards in whole tensor-parallel groups."""
    cards_per_node: int
    """Cards one machine holds: given (hardware.cards_per_machine), the card's rack-scale NVLink domain, or the product
    line's typical machine."""
    train_tokens: float | None
    """Tokens to train on, as given in workload.train_tokens; null when none was given (compute_flops and the times
    are then null too)."""
    flops_per_param_token: float
    """FLOPs the cards execute per parameter and token: 6 (forward 2, backward 4), 4 for LoRA/QLoRA, plus 2 with full
    recomputation. compute_flops uses the count without recomputation."""
    compute_flops: float | None
    """Model FLOPs of the run: 6 (4 for LoRA/QLoRA) x parameters per token (active ones for MoE) x train_tokens. Null
    without train_tokens."""
    hardware_flops: float | None
    """FLOPs the cards actually execute: compute_flops scaled by flops_per_param_token over the model's count (a third
    more with full recomputation). Null without train_tokens."""
    peak_flops_per_s: float
    """One card's dense peak in FLOP/s at the training precision: fp8 for fp8 training, fp32 for fp32, else half
    precision (bf16/fp16)."""
    mfu: float
    """Model FLOPs utilisation asked, or the guide's default 0.4 (0-1). Prices time_s_linear, guide.time_s and
    guide.micro_batch_compute_s; time_s only when an MFU or scaling efficiency is given."""
    scaling_efficiency: float
    """Scaling efficiency time_s is priced at (0-1): the given workload.scaling_efficiency, else 1.0 (the step model
    counts communication itself). Not the guide's curve."""
    method: str
    """How time_s is priced: "step model" (default, the plan's optimizer step), "given MFU" or "given scaling
    efficiency" (the guide's formula with the caller's figure)."""
    time_s_linear: float | None
    """Run time in s at perfect scaling: compute_flops / (cards x peak_flops_per_s x mfu), no communication. Null
    without train_tokens."""
    time_s: float | None
    """Wall time of the run in s by method: steps x step_s / 0.8 run goodput for the step model, else the guide's
    formula. Null without train_tokens or when no count holds the job."""
    time_days: float | None
    """The same as time_s, in days (86,400 s); null when time_s is null."""
    time_s_range: Range | None
    """Low, typical and high time_s in s. By the step model: the 10th and 90th percentile of published runs of this
    kind (pre-training steps and whole runs, or fine-tunes) against the service's estimates out of sample. With a
    given MFU: the MFU's spread widened to guide.time_s; all equal with a given scaling efficiency. Null when time_s
    is null."""
    time_s_guide_curve: float | None
    """Run time in s by the guide's curve: time_s_linear / its scaling efficiency for this count (85 % at 8, 80 % at
    16, 75 % at 32) or the given one. Null when time_s is null."""
    gradient_bytes: int
    """Gradient bytes synchronised per step by the guide's first-order rule: trained parameters (all, or the LoRA
    adapters) x 4 B (fp32)."""
    interconnect_bytes_per_s: float | None
    """The card's card-to-card link bandwidth in bytes/s as quoted (both directions), or the guide's 64 GB/s for a
    PCIe card; null when a dedicated link has no figure."""
    network_bytes_per_s_per_node: float
    """One machine's network to the others in bytes/s as quoted, shared by its cards: given, the rack-scale machine's
    own, or the line's default (400, 25 or 12.5 GB/s)."""
    link: str | None  # the slowest link the plan's collectives cross
    """Name of the slowest link a collective over all the plan's cards crosses (e.g. "NVLink 4", "PCIe", "network (400
    GB/s per machine)"); null on one card."""
    gradient_sync_s: float | None
    """The guide's first-order gradient sync per step in s: gradient_bytes / interconnect_bytes_per_s; 0 on one card,
    null when the card's link has no figure."""
    step_compute_s: float
    """The guide's compute time of one micro-batch in s: its model FLOPs over (tensor x pipeline cards x
    peak_flops_per_s x mfu). Compared with gradient_sync_s."""
    step_time_s: float | None
    """The guide's first-order step in s: micro_batch_compute_s + gradient_sync_s. Null when gradient_sync_s is null
    or no count holds the job. Not the step model's step_s."""
    global_batch_tokens: int
    """Tokens one optimizer step processes: gradient_accumulation x micro_batch x copies (data x expert) x context
    tokens, at least global_batch_tokens_asked. Also in parallelism."""
    global_batch_tokens_asked: float
    """Tokens per optimizer step asked: workload.global_batch_tokens, else the model's published batch, else 4M
    (4,000,000)."""
    micro_batch: int
    """Sequences each data-parallel copy runs per micro-batch (workload.batch_size). The same as
    parallelism.micro_batch."""
    gradient_accumulation: int
    """Micro-batches each data-parallel copy runs per optimizer step to fill the global batch. The same as
    parallelism.gradient_accumulation."""
    steps: float | None
    """Optimizer steps in the run: train_tokens / global_batch_tokens, fractional, at least 1. Null without
    train_tokens or when no count holds the job."""
    tensor_comm_s: float | None
    """Exposed tensor-parallel all-reduce time per optimizer step in s (the engine leaves 60 % of it on the critical
    path), over all micro-batches; 0 without tensor parallelism."""
    expert_comm_s: float | None
    """Exposed expert-parallel all-to-all time per optimizer step in s, over all micro-batches of the MoE layers; 0
    without expert parallelism."""
    pipeline_bubble_s: float | None
    """Idle time per optimizer step in s while the pipeline fills and drains: (pipeline - 1) / virtual_stages
    micro-batch times; 0 without pipelining."""
    pipeline_comm_s: float | None
    """Time per optimizer step in s of stage-to-stage activation sends and their gradients back, over all
    micro-batches; 0 without pipelining."""
    data_comm_s: float | None
    """Data-parallel traffic per optimizer step in s (gradient reduces and, with sharded states, weight gathers),
    hidden or not; 0 with one copy."""
    data_comm_exposed_s: float | None
    """The part of data_comm_s in s that compute does not hide (the first gather, the last bucket and whatever overlap
    cannot cover); it adds to step_s."""
    overlap: float
    """Share (0-1) of each compute window (the backward pass, or the whole micro-batch with sharded states) that
    data-parallel traffic can hide behind: given or the default 0.8."""
    step_s: float | None
    """One optimizer step in s by the step model: micro-batches (compute plus exposed tensor, expert and pipeline
    traffic) + pipeline bubble + exposed data-parallel traffic."""
    step_efficiency: float | None
    """Share (0-1) of step_s spent computing: gradient_accumulation x one micro-batch's compute / step_s."""
    effective_mfu: float | None
    """Steady-state MFU (0-1): a step's model FLOPs / (cards x peak x step_s) for the step model, before the 0.8 run
    goodput; mfu x scaling_efficiency for the other methods."""
    virtual_stages: int = 1
    """Interleaved pipeline stages per card: given, else one layer per virtual stage (layers / pipeline) with
    pipelining; 1 without pipelining."""


def cluster_for(card: Card, hardware: HardwareInput, notes: Notes) -> Cluster:
    """Machine size, the machine's link and the network: given, or the defaults for the line."""
    per_machine = cards_per_machine(card, hardware.cards_per_node, notes)
    fabric = ln.fabric_for(card, per_machine, hardware.network_gb_per_s, notes, floor=False)
    if fabric is None:  # no figure for the card's own link: its cards talk over the network
        between = ln.network_link(card, per_machine, hardware.network_gb_per_s, notes)
        fabric = Fabric(between, None, None, between, per_machine)
    return Cluster(fabric, interconnect_bytes_per_s(card, notes))


FP8_RECIPE_NOTE = M.FP8_RECIPE()


def peak_for_training(card: Card, workload: Workload, notes: Notes) -> float:
    """The dense rate the step's matmuls run at: fp8 for fp8 training (the card must list it),
    fp32 for fp32, else half precision."""
    if workload.precision.name == "fp8":
        if "fp8" not in card.dense_flops:
            raise InvalidInputError(M.ERROR_NO_FP8_RATE(card=card.id), "workload.precision")
        notes.assume("training_precision_recipe", "fp8 (Transformer Engine)", FP8_RECIPE_NOTE)
        return card.dense_flops["fp8"]
    keys = ("fp32",) if workload.precision.name == "fp32" else HALF
    return compute_flops(card, keys, notes, "compute")


def global_batch(model: ModelSpec, workload: Workload, notes: Notes) -> float:
    """Tokens per optimizer step: given, the model's published batch, or 4M."""
    if workload.global_batch_tokens is not None:
        return workload.global_batch_tokens
    if model.training_batch_tokens:
        return notes.use("global_batch_tokens", None, d.Default(
            model.training_batch_tokens, M.PUBLISHED_BATCH(source=M.Verbatim(model.training_batch_source))))
    return notes.use("global_batch_tokens", None, d.GLOBAL_BATCH_TOKENS)


@dataclass(frozen=True)
class Step:
    """One optimizer step on the plan, in seconds, by part."""

    global_batch_tokens: int
    micro_batch: int
    accumulation: int
    micro_compute_s: float
    tensor_comm_s: float
    expert_comm_s: float
    bubble_s: float
    pipeline_comm_s: float
    data_comm_s: float
    data_exposed_s: float
    step_s: float
    virtual_stages: int = 1
    host_s: float = 0.0  # the recipe's traffic with host memory and its optimizer step on the CPU

    @property
    def efficiency(self) -> float:
        return self.accumulation * self.micro_compute_s / self.step_s


def training_answer(
    model: ModelSpec, workload: Workload, card: Card, par: Parallelism, place: Cluster, notes: Notes
) -> TrainingAnswer:
    """Compute (6ND model FLOPs; 8ND in hardware with full recomputation), time by the plan's
    step with its range, and by the guide's curve; the guide's first-order gradient sync beside.

    The step prices compute at the layers' efficiency (STEP_CONSTANTS) and adds only what the
    engine leaves exposed; the guide's 40 % MFU is an all-in figure, so it prices the guide's
    curve beside the answer and is never applied on top of the step. A given MFU (or scaling
    efficiency) replaces the step: time = 6ND / (cards x peak x MFU [x efficiency])."""
    cards = par.cards
    peak = peak_for_training(card, workload, notes)
    model_per_token = tr.model_flops_per_param_token(workload.adapters)
    per_token = tr.compute_multiplier(workload.recompute, workload.adapters)
    flops = None if workload.train_tokens is None else training_compute_flops(
        model.params_per_token, workload.train_tokens, model_per_token)
    _flops_notes(workload, model_per_token, per_token, notes)
    guide = _guide_efficiency(cards, workload.scaling_efficiency)
    linear = None if flops is None else training_time_s(flops, cards, peak, workload.mfu)
    synced = _adapter_params(model, workload) if workload.adapters else model.params
    gradient_bytes = synced * notes.use("gradient_bytes_per_param", None, d.GRADIENT_BYTES_PER_PARAM)
    sync = _guide_sync(card, cards, gradient_bytes, place, notes)
    asked = global_batch(model, workload, notes)
    step = plan_step(model, workload, par, peak, place, asked)
    step_mfu = (model_per_token * model.params_per_token * step.global_batch_tokens
                / (cards * peak * step.step_s))
    method, time_mfu, used = _method(workload, step, step_mfu, notes)
    time = None if flops is None else training_time_s(flops, cards, peak, time_mfu, used)
    # the step model's time at the typical of published runs of its kind, with their range
    band = _calibrated(model, workload, card) if method == "step model" else None
    raw = time
    time = time if band is None or time is None else band.value(time)
    steps = None if workload.train_tokens is None else workload.train_tokens / step.global_batch_tokens
    if steps is not None and steps < 1:
        notes.warn(M.RUN_BELOW_ONE_STEP(tokens=workload.train_tokens, step_tokens=step.global_batch_tokens))
        steps = 1.0
        time = None if time is None else max(time, step.step_s)
    network_bytes_per_s = place.fabric.between.quoted_bytes_per_s
    assert network_bytes_per_s is not None  # the network link (links.network_link) always quotes its figure
    # The guide's step: one micro-batch's model FLOPs at the guide's (or the given) MFU.
    guide_step = (model_per_token * model.params_per_token * step.micro_batch * workload.context_tokens
                  / (par.model_parallel * peak * workload.mfu))
    clipped = steps == 1.0 and workload.train_tokens is not None and workload.train_tokens < step.global_batch_tokens
    return TrainingAnswer(
        cards=cards, nodes=place.nodes(par), cards_per_node=place.cards_per_node,
        train_tokens=workload.train_tokens, flops_per_param_token=per_token, compute_flops=flops,
        hardware_flops=None if flops is None else flops * per_token / model_per_token,
        peak_flops_per_s=peak, mfu=workload.mfu, scaling_efficiency=used, method=method,
        time_s_linear=linear, time_s=time,
        time_days=None if time is None else time / SECONDS_PER_DAY,
        time_s_range=None if linear is None or time is None else _at_least(
            band.range(raw) if band is not None and raw is not None else
            replace(_time_range(time, linear / guide, workload), note=M.RANGE_TRAINING()),
            time, step.step_s if clipped else 0.0),
        time_s_guide_curve=None if linear is None else linear / guide,
        gradient_bytes=gradient_bytes, interconnect_bytes_per_s=place.guide_link_bytes_per_s,
        network_bytes_per_s_per_node=network_bytes_per_s,
        link=place.link(cards).name if cards > 1 else None,
        gradient_sync_s=sync, step_compute_s=guide_step,
        step_time_s=None if sync is None else guide_step + sync,
        global_batch_tokens=step.global_batch_tokens, global_batch_tokens_asked=asked,
        micro_batch=step.micro_batch,
        gradient_accumulation=step.accumulation, steps=steps,
        tensor_comm_s=step.tensor_comm_s, expert_comm_s=step.expert_comm_s,
        pipeline_bubble_s=step.bubble_s, pipeline_comm_s=step.pipeline_comm_s,
        data_comm_s=step.data_comm_s, data_comm_exposed_s=step.data_exposed_s,
        overlap=workload.overlap, step_s=step.step_s, step_efficiency=step.efficiency,
        effective_mfu=step_mfu if method == "step model" else time_mfu * used,  # steady state
        virtual_stages=step.virtual_stages,
    )


def _flops_notes(workload: Workload, model_per_token: int, per_token: float, notes: Notes) -> None:
    if workload.adapters:
        notes.assume("flops_per_param_token", model_per_token, M.LORA_FLOPS())
    if per_token != model_per_token:
        notes.assume("hardware_flops_per_param_token", per_token,
                     M.RECOMPUTE_FLOPS(hardware=per_token, model=model_per_token))


@dataclass(frozen=True)
class StepConstants:
    """The step model's fitted constants, in one place so that a refit (service/accuracy/fit.py)
    can replace them with dataclasses.replace. Each is fitted on the whole training_scale table,
    never on one case; the grids the data pin them to are in the module's tests."""

    # Share of dense peak a transformer layer's work (GEMMs with their element-wise neighbours,
    # FlashAttention) reaches on a large hidden size, at bf16 and at fp8 (fp8 matmuls with the
    # casts, amax and the bf16 ops around them: 1.3-1.5x bf16's speed, not 2x).
    bf16_efficiency: float = 0.60
    fp8_efficiency: float = 0.45
    # Smaller layers reach less of peak: efficiency x h / (h + hidden_half).
    hidden_half: float = 600.0
    # Share of tensor-parallel collectives the engine leaves on the critical path (current
    # Megatron-Core and NeMo recipes overlap them with the GEMMs: 0.3 on their published runs).
    tensor_exposed: float = 0.3
    # Share of data-parallel traffic exposed even when compute could hide it all (the first
    # gather and the last bucket's reduce before the optimizer step).
    data_tail: float = 0.3
    # Attention's score and value matmuls, 12 x layers x hidden x sequence FLOPs a token forward
    # and backward (the non-causal count), times this: causal FlashAttention does half of them
    # at about half the GEMMs' efficiency.
    attention_factor: float = 1.0
    # A whole run's share of its wall time spent in steady steps: the rest goes to restarts after
    # failures, checkpoints, evaluation and ramp-up. Fitted on published whole runs' GPU-hours
    # (service/accuracy/data/training.csv) against the steady-state step; steady-state MFUs are
    # read from effective_mfu, before it.
    run_goodput: float = 0.8


STEP_CONSTANTS = StepConstants()


def layer_efficiency(model: ModelSpec, precision: str, constants: StepConstants | None = None) -> float:
    """The share of dense peak the step's compute runs at: bf16 (or fp8) efficiency x h / (h +
    hidden_half). Without a hidden size, h ~ (12 N / 128 ... ) from N ~ 12 h^2 x h/128 layers."""
    c = constants or STEP_CONSTANTS
    hidden = _hidden(model)
    base = c.fp8_efficiency if precision == "fp8" else c.bf16_efficiency
    return base * hidden / (hidden + c.hidden_half)


def _hidden(model: ModelSpec) -> float:
    """The hidden size, or for a bare parameter count the usual shape's: N ~ 12 h^2 x h / 128."""
    return model.hidden_size or (model.params_per_token * 128 / 12) ** (1 / 3)


def attention_flops_per_token(model: ModelSpec, workload: Workload, c: StepConstants) -> float:
    """Attention's scores and values, 12 x layers x hidden x sequence per token (x 4/3 with full
    recomputation), times the attention factor, in FLOPs."""
    hidden = _hidden(model)
    layers = model.layers or hidden / 128
    again = 4 / 3 if workload.recompute == "full" else 1.0
    return c.attention_factor * 12 * layers * hidden * workload.context_tokens * again


def resolved_stage(workload: Workload, par: Parallelism) -> int:
    """The ZeRO stage the step runs: given; else the guide's even split of the states over every
    card, which memory sizes, and which syncs as FSDP does (3). (The recipe search sets stage 1,
    a distributed optimizer, beside tensor or pipeline parallelism where its memory fits.)"""
    if workload.zero_stage is not None:
        return workload.zero_stage
    return 3


def default_virtual_stages(model: ModelSpec, pipeline: int) -> int:
    """Interleaved stages a Megatron user sets when none are given: as many as leave each
    virtual stage a layer (layers // pipeline), 1 without pipelining."""
    if pipeline <= 1 or not model.layers:
        return 1
    return max(1, model.layers // pipeline)


def plan_step(model: ModelSpec, workload: Workload, par: Parallelism, peak: float, place: Cluster,
              batch_tokens: float, constants: StepConstants | None = None) -> Step:
    """One optimizer step of the plan: accumulated micro-batches at the layers' efficiency, the
    exposed share of tensor-parallel collectives, the pipeline's bubble (p-1)/(m v) and the
    data-parallel traffic the backward pass does not hide."""
    c = constants or STEP_CONSTANTS
    sequence = workload.context_tokens
    micro = workload.batch_size
    ranks = par.data * par.expert  # copies of the dense layers, each with its own micro-batches
    sequences = max(1, math.ceil(batch_tokens / sequence))
    accumulation = max(1, math.ceil(sequences / (micro * ranks)))
    tokens = accumulation * micro * ranks * sequence
    flops = micro * sequence * (tr.compute_multiplier(workload.recompute, workload.adapters)
                                * model.params_per_token + attention_flops_per_token(model, workload, c))
    compute = flops / (par.model_parallel * peak * layer_efficiency(model, workload.precision.name, c))
    virtual = workload.virtual_stages or default_virtual_stages(model, par.pipeline)
    tensor = c.tensor_exposed * _tensor_comm_s(model, workload, par, micro * sequence, place)
    expert = c.tensor_exposed * _expert_comm_s(model, workload, par, micro * sequence, place)
    hop = virtual * _hop_s(model, par, micro * sequence, place)
    micro_s = compute + tensor + expert + hop
    bubble = (par.pipeline - 1) / virtual * micro_s
    data, exposed = _data_comm_s(model, workload, par, accumulation, compute, place, c.data_tail)
    host = host_s(model, workload, par)
    step = accumulation * micro_s + bubble + exposed + host
    return Step(tokens, micro, accumulation, compute, accumulation * tensor, accumulation * expert,
                bubble, accumulation * hop, data, exposed, step, virtual, host)


# Each card's link to host memory, one way: PCIe 4.0 x16 as a copy engine reaches it (an
# assumption for the recipes that page or offload optimizer state; `make validate`'s fine-tuning
# regime carries its error).
HOST_LINK_BYTES_PER_S = 25e9


def host_s(model: ModelSpec, workload: Workload, par: Parallelism) -> float:
    """Once a step, what a recipe that keeps optimizer state in host memory adds (the card's even
    share of the parameters): paged states come in and go out (low-memory); offloaded ones get the
    bf16 gradients and send back the bf16 weights, and the CPU runs the optimizer step (cpu-offload)."""
    recipe = workload.recipe
    if recipe.states_on_card:
        return 0.0
    params = model.params / par.cards
    if recipe.host_step:
        return params * 2 * tr.HALF_BYTES / HOST_LINK_BYTES_PER_S + params * tr.HOST_ADAM_S_PER_PARAM
    return params * 2 * workload.optimizer.state_bytes_per_param / HOST_LINK_BYTES_PER_S


def _tensor_comm_s(model, workload, par, tokens, place: Cluster) -> float:
    """Per micro-batch: 4 all-reduces of the hidden states a layer (2 forward, 2 backward), 6
    with full recomputation, over the stage's layers."""
    if par.tensor <= 1:
        return 0.0
    layers = math.ceil((model.layers or 0) / par.pipeline)
    count = 6 if workload.recompute == "full" else 4
    message = tokens * (model.hidden_size or 0) * ACTIVATION_BYTES
    return layers * count * ln.allreduce_s(message, par.tensor, place.link(par.tensor))


def _expert_comm_s(model, workload, par, tokens, place: Cluster) -> float:
    """Per micro-batch: an all-to-all out and back per MoE layer, forward and backward."""
    if par.expert <= 1:
        return 0.0
    members = par.tensor * par.expert
    layers = model.resolved_moe_layers / par.pipeline
    per_card = tokens * (model.experts_per_token or 1) * (model.hidden_size or 0) * ACTIVATION_BYTES / par.tensor
    return layers * 4 * ln.all_to_all_s(per_card, members, place.link(members))


def _hop_s(model, par, tokens, place: Cluster) -> float:
    """Per micro-batch: each stage sends its activations forward and their gradients back (the
    busiest stage's hops cross machines once the pipeline spans them)."""
    if par.pipeline <= 1:
        return 0.0
    link = place.link(par.tensor * par.expert * par.pipeline)
    return 2 * ln.send_s(tokens * (model.hidden_size or 0) * ACTIVATION_BYTES / par.tensor, link)


@dataclass(frozen=True)
class _Shards:
    """Parameters one card holds that the same copies reduce together: the dense ones over data x
    expert copies, the routed experts over data copies only; and how many of those copies share
    a machine (the rest sit one a machine)."""

    params: float
    members: int
    in_machine: int


def _shards(model: ModelSpec, par: Parallelism, place: Cluster) -> tuple[_Shards, ...]:
    held, experts, _ = tr.shard_params(model.params, model.expert_params or 0, par)
    per_node = place.cards_per_node
    split = par.tensor * par.pipeline
    out = (_Shards(held - experts, par.data * par.expert, max(1, per_node // min(per_node, split))),
           _Shards(experts, par.data, max(1, per_node // min(per_node, split * par.expert))))
    return tuple(shards for shards in out if shards.members > 1 and shards.params > 0)


def _data_comm_s(model, workload, par, accumulation, compute, place: Cluster,
                 tail: float = 0.0) -> tuple[float, float]:
    """The data-parallel traffic of one step and the part of it left exposed, over every group of
    copies that reduce the same shard (hierarchically: inside each machine, then between them).

    Sharded states (the guide's even split, ZeRO-3) gather the weights for each micro-batch's
    forward and backward and reduce-scatter its gradients, overlapped with that micro-batch;
    ZeRO-2 reduce-scatters each micro-batch's gradients during its backward and gathers the
    updated weights once a step; ZeRO-1 reduce-scatters once a step, during the last backward;
    ZeRO-0 all-reduces then. LoRA reduces only the adapters' gradients.
    """
    total = exposed = 0.0
    for shards in _shards(model, par, place):
        timing = _Timing(shards, place.link(shards.in_machine), place.fabric.between, accumulation, compute,
                         workload.overlap, tail)
        moved, left = (_adapter_traffic(model, workload, shards, timing) if workload.adapters
                       else _state_traffic(resolved_stage(workload, par), shards, timing))
        total, exposed = total + moved, exposed + left
    return total, exposed


@dataclass(frozen=True)
class _Timing:
    shards: _Shards
    inside: Link
    between: Link
    accumulation: int
    compute_s: float
    overlap: float
    tail: float = 0.0

    def gather(self, nbytes: float) -> float:
        return ln.hierarchical_gather_s(nbytes, self.shards.members, self.shards.in_machine,
                                        self.inside, self.between)

    def allreduce(self, nbytes: float) -> float:
        return ln.hierarchical_allreduce_s(nbytes, self.shards.members, self.shards.in_machine,
                                           self.inside, self.between)

    def hidden(self, seconds: float, share: float) -> float:
        """What a transfer of `seconds` leaves exposed behind `share` of a micro-batch's compute:
        its tail (the first gather, the last bucket) and whatever the window cannot cover."""
        return self.tail * seconds + max(0.0, (1 - self.tail) * seconds - self.overlap * share * self.compute_s)


def _state_traffic(stage: int | None, shards: _Shards, t: _Timing) -> tuple[float, float]:
    gradient = d.GRADIENT_BYTES_PER_PARAM.value
    # The weights are gathered in 16-bit; the gradients reduced at the guide's bytes per parameter.
    weights, gradients = shards.params * SIXTEEN_BIT_BYTES, shards.params * gradient
    if stage in (None, 3):
        per_micro = 2 * t.gather(weights) + t.gather(gradients)
        return t.accumulation * per_micro, t.accumulation * t.hidden(per_micro, 1.0)
    if stage == 2:
        reduce, gather = t.gather(gradients), t.gather(weights)
        return (t.accumulation * reduce + gather,
                t.accumulation * t.hidden(reduce, BACKWARD_SHARE) + t.hidden(gather, 1 - BACKWARD_SHARE))
    if stage == 1:
        reduce, gather = t.gather(gradients), t.gather(weights)
        return reduce + gather, t.hidden(reduce, BACKWARD_SHARE) + t.hidden(gather, 1 - BACKWARD_SHARE)
    reduce = t.allreduce(gradients)
    return reduce, t.hidden(reduce, BACKWARD_SHARE)


def _adapter_params(model: ModelSpec, workload: Workload) -> int:
    """LoRA's trainable parameters: counted from the layer shapes, else a share of the model."""
    return tr.lora_adapter_params(model.linear_shapes, workload.lora_rank, workload.lora_targets) \
        or round(LORA_ADAPTER_SHARE * model.params)


def _adapter_traffic(model, workload, shards: _Shards, t: _Timing) -> tuple[float, float]:
    """LoRA: the adapters' gradients once a step, and a sharded frozen base gathered for every
    micro-batch's forward and backward."""
    adapters = _adapter_params(model, workload)
    # This card's adapters in the group: the same share of them as of the parameters.
    reduce = t.allreduce(adapters * shards.params / model.params * d.GRADIENT_BYTES_PER_PARAM.value)
    gathers = 0.0
    if workload.zero_stage in (None, 3):
        gathers = 2 * t.gather(shards.params * workload.precision.bytes_per_value)
    return (t.accumulation * gathers + reduce,
            t.accumulation * t.hidden(gathers, 1.0) + t.hidden(reduce, BACKWARD_SHARE))


def _guide_sync(card: Card, cards: int, gradient_bytes: int, place: Cluster, notes: Notes) -> float | None:
    """The guide's first-order sync: gradient bytes over the card's link (0 on one card)."""
    if cards == 1:
        return 0.0
    if place.guide_link_bytes_per_s is None:
        notes.warn(M.NO_INTERCONNECT_BANDWIDTH(card=card.id))
        return None
    return gradient_sync_s(gradient_bytes, place.guide_link_bytes_per_s)


def _guide_efficiency(cards: int, given: float | None) -> float:
    """The guide's curve (or the given efficiency), reported beside the default method."""
    return given if given is not None else scaling_efficiency(cards)



def _method(workload: Workload, step: Step, step_mfu: float, notes: Notes) -> tuple[str, float, float]:
    """(method, MFU, scaling efficiency) the time is priced at: the step model's own all-in MFU,
    or the MFU and scaling efficiency given (the guide's formula)."""
    if workload.scaling_efficiency is not None:
        return "given scaling efficiency", workload.mfu, workload.scaling_efficiency
    if workload.mfu_given:
        return "given MFU", workload.mfu, 1.0
    notes.assume("training_time_method", "step model", M.STEP_MODEL(
        efficiency=step_mfu / step.efficiency, mfu=step_mfu, guide=d.MFU.value))
    goodput = STEP_CONSTANTS.run_goodput
    notes.assume("run_goodput", goodput, M.RUN_GOODPUT(goodput=goodput))
    return "step model", step_mfu * goodput, 1.0


FINE_TUNES = ("lora", "qlora", "full_finetune")


def _calibrated(model: ModelSpec, workload: Workload, card: Card) -> calibration.Calibrated:
    """The factors of a training time from published runs of its kind: fine-tunes' speeds for a
    fine-tune, pre-training runs' steps and GPU-hours otherwise."""
    figure = calibration.FINETUNE_SPEED if workload.mode in FINE_TUNES else calibration.TRAINING
    return calibration.for_question(figure, card.vendor, workload.precision.bits_per_value, model.is_moe, None)


def _at_least(span: Range, time: float, floor: float = 0.0) -> Range:
    """A time range that holds the time shown and no less than `floor` (one step, when the run
    is shorter)."""
    if time > span.typical:
        span = Range(time, time, max(span.high, time), note=span.note)
    return Range(max(span.low, floor), span.typical, max(span.high, floor), note=span.note)


STEP_SPREAD = 1.25  # the step model's spread either way: published steady-state MFUs of one plan


def _time_range(time: float, guide_curve: float | None, workload: Workload) -> Range:
    """The step model's time within its spread (x1/1.25 to x1.25), widened to the guide's curve;
    a given scaling efficiency or MFU is taken as exact."""
    if workload.scaling_efficiency is not None:
        return Range(time, time, time)
    high = max(time * STEP_SPREAD, guide_curve or 0.0)
    low = min(time / STEP_SPREAD, guide_curve or math.inf)
    return Range(low, time, high)


def guide_curve_cards(
    model: ModelSpec, workload: Workload, card: Card, group: Parallelism, place: Cluster,
    memory_cards: int, deadline_s: float,
) -> int | None:
    """The least card count whose time by the guide's curve meets the deadline, never fewer than
    memory needs: the plan's copy stays the same, copies are added. (The step model's count, each
    count on its own recipe, is questions/scaling.py _least_count_by's.)"""
    size = group.group
    start = max(math.ceil(memory_cards / size) * size, size)

    def guide(cards: int) -> float:
        par = Parallelism(group.tensor, group.pipeline, group.expert, data=cards // size)
        time = training_answer(model, workload, card, par, place, Notes.unread()).time_s_guide_curve
        return math.inf if time is None else time

    return _least(guide, deadline_s, start, size)


def _least(time_s, deadline_s: float, start: int, step: int) -> int | None:
    found = least_cards_for(time_s, deadline_s, start, step, d.MAX_CARDS)
    while found is not None and found - step >= start and time_s(found - step) <= deadline_s:
        found -= step  # a dip at a machine boundary: the smaller count also makes it
    return found
