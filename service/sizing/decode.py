"""One decode step of one copy of a model, priced on its plan: the bytes each card reads, the
FLOPs it does, the engine's fixed cost per layer, and the collectives and hops the plan needs.

A copy is `tensor` x `pipeline` x `expert` cards. A token visits the pipeline stages in turn;
inside a stage the `tensor` cards read their shares of the weights at the same time, then
combine partial results (twice a layer for a Megatron-style split), and MoE layers exchange
tokens between the `expert` groups (all-to-all, out and back). A layer split gives one stream
no more bandwidth than one card: each stage reads its layers while the others wait.
"""

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

from . import links as ln
from . import weights
from .cards import Card
from .engines import Engine
from .frozen import cached, evolve, stores_fields
from .links import ACTIVATION_BYTES, Fabric
from .memory import MemoryBreakdown
from .model import ModelSpec
from .plan import Parallelism
from .precision import Precision


@stores_fields
@dataclass(frozen=True)
class Deployment:
    """One copy of a model on its cards, and what prices its steps.

    `breakdown` fixes the KV cache each sequence reads (at the context it was made for).
    `bandwidth_efficiency` is the share of the memory bandwidth the engine streams at;
    `overhead_scale` multiplies the engine's fixed costs, for the ranges (the `fabric` comes with
    its links' costs scaled alike; throughput.setup does both); constants that rest on thin data
    (the MoE per-layer cost) take it squared-and-a-bit, 0.5-2x for 0.67-1.5x.
    """

    model: ModelSpec
    precision: Precision
    breakdown: MemoryBreakdown
    card: Card
    engine: Engine
    group: Parallelism
    fabric: Fabric
    peak_flops: float
    compute_fraction: float
    bandwidth_efficiency: float
    overhead_scale: float = 1.0
    ideal: bool = False  # the roofline ceiling: no fixed costs, full bandwidth and peak
    priced: bool = True  # False: a given efficiency stands for everything, no fixed costs added

    @cached
    def rates(self) -> "_Rates":
        """What every step of this deployment shares, worked out on its first step (what the
        model, its format and its stages set, once for every deployment of them)."""
        return _Rates(**self._costs(), **self._kv(self.breakdown),
                      **_model_rates(self.model, self.precision, self.engine.pipelined and self.group.pipeline > 1,
                                     self.group.pipeline),
                      reads={})

    def _costs(self) -> dict:
        """The rates the engine's shares and fixed costs set (what the ends of a range change)."""
        engine = self.engine
        bandwidth = self.card.bandwidth_bytes_per_s * (1.0 if self.ideal else self.bandwidth_efficiency)
        rate = self.peak_flops * (1.0 if self.ideal else self.compute_fraction)
        fixed = not self.ideal and self.priced
        scale = self.overhead_scale
        return {
            "bandwidth": bandwidth, "rate": rate,
            "expert_rate": rate * (1.0 if self.ideal else
                                   engine.moe_compute_share * expert_width_share(self.model, engine)),
            "fixed_costs": fixed,
            "layer_s": scale * engine.layer_overhead_s if fixed else 0.0,
            "moe_layer_s": _wider(scale) * engine.moe_layer_overhead_s if fixed else 0.0,
            "sequence_s": scale * engine.sequence_overhead_s if fixed else 0.0,
        }

    def _kv(self, breakdown: MemoryBreakdown) -> dict:
        """The rates a breakdown sets: each sequence's KV cache and the shares of it and of the
        layers a card of the plan holds."""
        return {"kv_bytes_per_sequence": breakdown.kv_cache_bytes_per_sequence or 0,
                "kv_tensor_share": breakdown.kv_tensor_share(self.group.tensor),
                "stage_share": breakdown.stage_share(self.group.pipeline)}

    def varied(self, **changes) -> "Deployment":
        """The deployment with `changes` to its engine's shares and costs (the ends of a range,
        the ideal roofline) or to its breakdown (another context), with its rates: this one's,
        but for the part the changes set, worked out again (every deployment prices a step)."""
        if not changes.keys() <= _VARIED:  # what else a deployment is (model, plan, engine) sets every rate
            raise TypeError(f"varied changes {sorted(_VARIED)}, not {sorted(changes.keys() - _VARIED)}")
        made = evolve(self, **changes)
        kept = made._costs() if changes.keys() - {"breakdown"} else {}
        if "breakdown" in changes:
            kept.update(made._kv(changes["breakdown"]))
        made.__dict__["rates"] = evolve(self.rates, **kept)  # as frozen.cached keeps it
        return made

    def read_split(self, tokens: int) -> tuple[int, int]:
        """weights.decode_read_split for a step of `tokens`, kept per deployment (once for a
        dense model, which reads the same weights at any batch)."""
        r = self.rates
        if r.fixed_reads is not None:
            return r.fixed_reads
        if tokens not in r.reads:
            r.reads[tokens] = weights.decode_read_split(self.model, self.precision, tokens)
        return r.reads[tokens]


@functools.lru_cache(maxsize=1024)
def _model_rates(model: ModelSpec, precision: Precision, pipelined: bool, stages: int) -> dict:
    """The rates a model in a format on `stages` pipeline stages sets, whatever the card, engine
    share or memory: the FLOPs of a token, the layers a stage holds, the weights a dense model
    reads at any batch. Kept: the same for every answer on that model (a read-only dict)."""
    active_experts = _active_expert_params(model)
    dense = model.routed_experts is None and not model.is_moe  # reads the same at any batch
    return {
        "dense_flops_per_token": 2.0 * (model.params_per_token - active_experts),
        "expert_flops_per_token": 2.0 * active_experts,
        "attention_flops_per_context": attention_flops_per_token(model, 1.0),
        "moe_layer_share": model.resolved_moe_layers / model.layers if model.layers else 0.0,
        "pipelined": pipelined,
        "stage_layers": stage_layers(model, stages),
        "layers": float(model.layers or 0),
        "fixed_reads": weights.decode_read_split(model, precision, 1) if dense else None,
    }


# What Deployment.varied may change: the engine's shares and fixed costs (_costs), the breakdown (_kv).
_VARIED = frozenset({"ideal", "bandwidth_efficiency", "compute_fraction", "overhead_scale", "fabric", "priced",
                     "breakdown"})


@stores_fields
@dataclass(frozen=True, kw_only=True)
class _Rates:
    """A deployment's rates and fixed costs per step part (what _stage does not recompute)."""

    bandwidth: float
    rate: float
    expert_rate: float
    dense_flops_per_token: float
    expert_flops_per_token: float
    attention_flops_per_context: float
    fixed_costs: bool
    layer_s: float
    moe_layer_s: float
    moe_layer_share: float
    sequence_s: float  # host work per running sequence and step
    kv_bytes_per_sequence: int
    kv_tensor_share: float
    pipelined: bool
    stage_share: float  # of the layers on the busiest pipeline stage
    stage_layers: float  # layers on the busiest pipeline stage
    layers: float
    fixed_reads: tuple[int, int] | None
    reads: dict[int, tuple[int, int]]


@stores_fields
@dataclass(frozen=True)
class StepCost:
    """One decode step of `batch` sequences on one copy, in seconds, by part.

    The parts are summed over the stages a token visits; step_s, the time between two tokens
    of one sequence, is roofline_s (each kernel at the larger of its memory and compute time)
    plus the fixed costs and the communication. memory_s and compute_s are the two sides of the
    roofline, for the reader: they overlap, so they do not add up to it.
    """

    batch: int
    """Sequences one copy runs in the step: the asked batch divided over the copies, rounded up."""
    prefill_tokens: float
    weights_read_bytes_per_card: int
    kv_read_bytes_per_card: int
    flops_per_card: float
    memory_s: float
    """Time to read the step's weights and KV cache at the engine's share of bandwidth, summed over the stages a token
    visits; one side of the roofline."""
    compute_s: float
    """Time for the step's FLOPs (matmuls and attention) at the engine's share of peak, summed over the stages a token
    visits; the other side of the roofline."""
    roofline_s: float
    """The step's roofline time: the matmuls, then attention, each at the larger of its memory and compute time,
    summed over the stages a token visits."""
    engine_s: float
    """The engine's fixed costs in the step: its per-layer (and per-MoE-layer) overhead and the host's work per
    running sequence; 0 under the guide's rule or a given decode_efficiency."""
    tensor_comm_s: float
    """Tensor-parallel all-reduces of the step (the engine's syncs per layer, over the plan's link, with its
    collective cost); 0 without tensor parallelism."""
    expert_comm_s: float
    """MoE all-to-all exchanges of the step, out to the experts' cards and back in each MoE layer; 0 for a dense model
    or experts not spread over cards."""
    pipeline_comm_s: float
    """Hidden states sent between pipeline stages in the step, over the machine's link or the network, with the
    engine's per-hop cost; 0 without pipeline stages."""
    step_s: float
    """The whole step: roofline_s plus the fixed costs and communication; the time between two tokens of one sequence
    (1 / decode_tokens_per_s_expected)."""
    bound: str

    @property
    def comm_s(self) -> float:
        return self.tensor_comm_s + self.expert_comm_s + self.pipeline_comm_s


def stage_layers(model: ModelSpec, pipeline: int) -> float:
    """Layers on the busiest stage (0 when the layers are unknown)."""
    if not model.layers:
        return 0.0
    return float(math.ceil(model.layers / pipeline))


def attention_flops_per_token(model: ModelSpec, context: float) -> float:
    """Scores and weighted values against `context` cached tokens: 4 x layers x context x
    query heads x head dim (0 when the shape is unknown)."""
    if not (model.layers and model.attention_heads and model.resolved_head_dim):
        return 0.0
    return 4.0 * model.layers * context * model.attention_heads * model.resolved_head_dim


class StepTime(NamedTuple):
    """What most readers of a step read of it (StepCost's figures of the same name): its time, its
    bound, and its fixed costs and communication (comm_s as StepCost.comm_s)."""

    step_s: float
    bound: str
    engine_s: float
    comm_s: float


def decode_step(dep: Deployment, batch: int, context: float, prefill_tokens: float = 0.0,
                prefill_context: float = 0.0) -> StepCost:
    """The step of one copy serving `batch` sequences, plus `prefill_tokens` of prompts mixed in
    (chunked prefill), on its plan, by part. Pipelined engines keep every stage busy with a share
    of the sequences; a layer split runs the whole batch through the stages in turn."""
    stage, rounds, pipeline_s, host_s = _priced(dep, batch, context, prefill_tokens, prefill_context)
    weights_card, kv_card, flops_card, memory_s, compute_s, roofline_s, engine_s, tensor_s, expert_s, \
        step_s, bound = stage
    return StepCost(
        batch=batch, prefill_tokens=prefill_tokens, weights_read_bytes_per_card=weights_card,
        kv_read_bytes_per_card=kv_card, flops_per_card=flops_card,
        memory_s=rounds * memory_s, compute_s=rounds * compute_s,
        roofline_s=rounds * roofline_s, engine_s=rounds * engine_s + host_s, tensor_comm_s=rounds * tensor_s,
        expert_comm_s=rounds * expert_s, pipeline_comm_s=pipeline_s,
        step_s=rounds * step_s + pipeline_s + host_s, bound=bound,
    )


def step_time(dep: Deployment, batch: int, context: float, prefill_tokens: float = 0.0,
              prefill_context: float = 0.0) -> StepTime:
    """decode_step's time, bound, fixed costs and communication alone, the same numbers, for a
    step no answer shows by part (the ends of a range, the ceiling, full load, prefill, the curve,
    an alternative's speed)."""
    stage, rounds, pipeline_s, host_s = _priced(dep, batch, context, prefill_tokens, prefill_context)
    return StepTime(rounds * stage[9] + pipeline_s + host_s, stage[10], rounds * stage[6] + host_s,
                    rounds * stage[7] + rounds * stage[8] + pipeline_s)


def _priced(dep: Deployment, batch: int, context: float, prefill_tokens: float,
            prefill_context: float) -> tuple[tuple, int, float, float]:
    """A step's busiest stage (_stage's parts), the rounds of it a token waits for, the
    pipeline's hops and the host's work."""
    r = dep.rates
    stages = dep.group.pipeline
    if r.pipelined:
        # Every stage is busy with its own share of the sequences: the busiest sets the pace.
        micro, micro_prefill = math.ceil(batch / stages), prefill_tokens / stages
        stage = _stage(dep, micro, context, micro_prefill, prefill_context, r.stage_share, r.stage_layers)
        rounds, hops = stages, stages  # a pipelined step returns to the first stage
    else:
        # The stages run one after another: together they do the whole model's work once.
        micro, micro_prefill = batch, prefill_tokens
        stage = _stage(dep, batch, context, prefill_tokens, prefill_context, 1.0, r.layers)
        rounds, hops = 1, stages - 1
    pipeline_s = _hops_s(dep, micro + micro_prefill, hops)
    # once a step, for every sequence running; attention groups each schedule their own share
    host_s = math.ceil(batch / dep.group.expert) * r.sequence_s
    return stage, rounds, pipeline_s, host_s


def _stage(dep: Deployment, batch: int, context: float, prefill_tokens: float,
           prefill_context: float, share: float, layers: float) -> tuple:
    """A step's work on `share` of the layers (`layers` of them) for `batch` sequences: the
    busiest stage of a pipeline, or every stage of a layer split in turn (share 1). Weights and
    KV cache are read by each stage's cards, and in a layer split only one stage's cards work at
    a time, so the bytes read are per card of one stage, summed. The parts, in StepCost's order
    (from weights_read_bytes_per_card to step_s, then the bound), for one stage."""
    par, r = dep.group, dep.rates
    dense, experts = dep.read_split(batch + math.ceil(prefill_tokens))
    dense_card = math.ceil(dense * share / par.tensor)
    expert_card = math.ceil(experts * share / (par.tensor * par.expert))
    weights_card = dense_card + expert_card
    # MemoryBreakdown.kv_bytes_per_card, with the deployment's shares worked out once
    kv_card = math.ceil(math.ceil(batch / par.expert) * r.kv_bytes_per_sequence * share * r.kv_tensor_share) \
        if r.kv_bytes_per_sequence else 0
    tokens = batch + prefill_tokens
    split = share / (par.tensor * par.expert)
    dense_flops = r.dense_flops_per_token * tokens * split
    expert_flops = r.expert_flops_per_token * tokens * split
    attention_flops = r.attention_flops_per_context * (context * batch + prefill_context * prefill_tokens) * split
    bandwidth, rate, expert_rate = r.bandwidth, r.rate, r.expert_rate
    # The matmuls stream the weights while they compute; attention reads the KV cache in kernels
    # of its own, after them: each is a roofline in turn, not one overlapped roofline.
    linear_s = max(dense_card / bandwidth, dense_flops / rate) + max(expert_card / bandwidth,
                                                                     expert_flops / expert_rate)
    attention_s = max(kv_card / bandwidth, attention_flops / rate)
    flops_card = dense_flops + expert_flops + attention_flops
    memory_s = (weights_card + kv_card) / bandwidth
    compute_s = flops_card / rate
    bound = "compute" if (dense_flops + expert_flops) / rate > weights_card / bandwidth else "memory"
    engine_s = tensor_s = expert_s = 0.0
    if r.fixed_costs:
        moe_layers = layers * r.moe_layer_share
        engine_s = layers * r.layer_s + moe_layers * r.moe_layer_s
        tensor_s = layers * dep.engine.syncs_per_layer * _tensor_collective_s(dep, tokens / par.expert)
        expert_s = moe_layers * 2 * _expert_collective_s(dep, tokens)
    step = linear_s + attention_s + engine_s + tensor_s + expert_s
    return (weights_card, kv_card, flops_card, memory_s, compute_s, linear_s + attention_s, engine_s,
            tensor_s, expert_s, step, bound)


def _active_expert_params(model: ModelSpec) -> int:
    """Routed-expert parameters one token passes through (0 for a dense model)."""
    routed = model.routed_experts
    if routed is None:
        return 0
    experts, per_token, params = routed
    return params * per_token // experts


def expert_width(model: ModelSpec) -> float | None:
    """The intermediate size of one routed expert (its gate, up and down matrices are each
    hidden x width), from the experts' parameters; None when the shape is not known."""
    routed, layers = model.routed_experts, model.resolved_moe_layers
    if routed is None or not layers or not model.hidden_size:
        return None
    experts, _, params = routed
    return params / (experts * layers * 3 * model.hidden_size)


def expert_width_share(model: ModelSpec, engine: Engine) -> float:
    """What an expert's matmuls keep of the engine's expert rate: width / (width + the engine's
    half width). Many narrow experts (Qwen3's 768-1,536) make short, uneven grouped GEMMs that
    fill the card less than Mixtral's 14,336-wide ones."""
    width = expert_width(model)
    if width is None or not engine.expert_half_width:
        return 1.0
    return width / (width + engine.expert_half_width)


def _wider(scale: float) -> float:
    """The range of a thinly calibrated cost: 0.67-1.5x becomes 0.5-2x."""
    return scale ** (math.log(2) / math.log(1.5))


def _tensor_collective_s(dep: Deployment, tokens: float) -> float:
    """One tensor-parallel all-reduce of the hidden states of `tokens` tokens."""
    t = dep.group.tensor
    if t <= 1:
        return 0.0
    message = tokens * (dep.model.hidden_size or 0) * ACTIVATION_BYTES
    fabric, scale = dep.fabric, dep.overhead_scale
    if t <= fabric.per_machine:
        seconds = ln.allreduce_s(message, t, fabric.link(t))
    else:  # across machines: inside each machine first, then between them
        seconds = ln.hierarchical_allreduce_s(message, t, fabric.per_machine,
                                              fabric.link(fabric.per_machine), fabric.between)
    return seconds + scale * dep.engine.collective_s


def _expert_collective_s(dep: Deployment, tokens: float) -> float:
    """One all-to-all that sends each token's hidden state to the cards of its experts."""
    par = dep.group
    members = par.tensor * par.expert
    if par.expert_width <= 1:
        return 0.0
    per_card = tokens * (dep.model.experts_per_token or 1) * (dep.model.hidden_size or 0) \
        * ACTIVATION_BYTES / members
    link = dep.fabric.link(members)
    return ln.all_to_all_s(per_card, members, link) + dep.overhead_scale * dep.engine.collective_s


def _hops_s(dep: Deployment, tokens: float, hops: int) -> float:
    """`hops` pipeline hops, each sending the hidden states of `tokens` tokens to the next stage:
    over the network where the next stage sits in another machine, else over the machine's link.
    A layer split crosses each machine boundary once; a pipelined step also returns to the start."""
    par = dep.group
    if par.pipeline <= 1 or hops <= 0 or dep.ideal or not dep.priced:
        return 0.0
    fabric, scale = dep.fabric, dep.overhead_scale
    stage_cards = par.tensor * par.expert
    stages_per_machine = max(1, fabric.per_machine // stage_cards)
    machines = math.ceil(par.pipeline / stages_per_machine)
    crossing = 0 if machines <= 1 else min(hops, machines if hops >= par.pipeline else machines - 1)
    message = tokens * (dep.model.hidden_size or 0) * ACTIVATION_BYTES
    inside = fabric.link(min(fabric.per_machine, 2 * stage_cards))
    between = fabric.between
    return (crossing * ln.send_s(message, between) + (hops - crossing) * ln.send_s(message, inside)
            + hops * scale * dep.engine.hop_s)
