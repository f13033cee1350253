"""Memory: the formulas (weights, KV cache, training state, what a card can allocate) and the
memory answer they make (a breakdown by component, and its fit on a card)."""

import math
from dataclasses import dataclass, field

from . import defaults as d
from . import messages as M
from . import training as tr
from . import weights
from .engines import ENGINES
from .frozen import stores_fields
from .inputs import Notes, Workload
from .model import ModelSpec
from .plan import Parallelism
from .ranges import Range

# Guide section 4.1: activations add about 15 % on top of model state (7B: 112 GB -> 130 GB+),
# said where the model's shape is too little to count them.
GUIDE_ACTIVATION_SHARE = 0.15

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


@stores_fields
@dataclass(frozen=True)
class Component:
    name: M.Message
    """The part's name, e.g. "weights (bf16)", "Adam m (fp32)", "KV cache", "activations (per card)", "runtime
    overhead"."""
    bytes: int
    """The part's size in bytes."""
    note: M.Message
    """How the part was counted: bytes per parameter, the weight format, batch x context and KV format, the activation
    method, or per card."""


@stores_fields
@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes by component, for the whole job; `per_card` says how a plan splits them.

    `activations_bytes` is one card's stored activations at the tensor degree the breakdown was
    made for (`tensor`); tensor parallelism with sequence parallelism divides them further.
    """

    weights_bytes: int
    """Stored weights of every parameter (all experts) in bytes: in the weight format for inference and LoRA/QLoRA's
    frozen base; 16-bit (fp32 with fp32) for full training."""
    expert_weights_bytes: int
    """Part of weights_bytes held by the routed experts, in bytes; 0 for dense models, MoE models known only by total
    and active counts, and training modes."""
    training_state_bytes: int
    """Training state beyond the weights in bytes: gradients, fp32 master weights and optimizer state, or LoRA
    adapters with theirs; 0 for inference."""
    model_state_bytes: int
    """weights_bytes + training_state_bytes: the model state of one copy, before it is split over cards."""
    kv_cache_bytes: int | None
    """KV cache for the whole batch in bytes: kv_cache_bytes_per_sequence x batch_size. Null in training modes or when
    the model's layers or KV heads are unknown."""
    kv_cache_bytes_per_token: int | None
    """KV cache of one token over all layers in the KV format, in bytes (sliding windows not applied). Null in
    training modes or without the model's KV shape."""
    kv_cache_bytes_per_sequence: int | None
    """KV cache of one sequence of context_tokens in bytes, sliding-window layers capped at their window where the
    engine does so. Null as kv_cache_bytes."""
    activations_bytes: int | None
    """Training: one card's stored activations in bytes for a micro-batch (Korthikanti et al. 2022, by recompute
    mode). 0 for inference; null when layers or hidden size are unknown."""
    runtime_overhead_bytes: int
    """Memory each card loses to driver context, kernels and framework workspace, in bytes (default 1 GiB); counted
    once in total_bytes."""
    total_bytes: int = field(metadata={"description": (
        "The job's need as one copy, before it is split over cards (one runtime); fit.total_bytes "
        "is the same need summed over the cards the plan uses.")})
    bytes_per_param: float
    """Model state per parameter in bytes: model_state_bytes / parameters (16 for bf16 AdamW training, about 2 for
    bf16 inference)."""
    bytes_per_param_low: float
    """Low end of bytes_per_param: the same value except LoRA/QLoRA by the guide's rule (unknown layer shapes), base +
    0.5 B."""
    bytes_per_param_high: float
    """High end of bytes_per_param: +4 B (the guide's 20 B) for mixed-precision full training without a ZeRO stage;
    otherwise the same value."""
    total_bytes_range: Range
    """Low, typical and high total_bytes: model state at the low and high bytes per parameter (the guide's 16-20 B
    for mixed-precision full training without ZeRO; LoRA by the guide's rule), the rest as counted."""
    # empty in a breakdown made for its figures alone (memory_breakdown without said), which no answer shows
    components: tuple[Component, ...]
    """The memory parts one by one (weights, gradients, optimizer state, KV cache or activations, runtime overhead);
    their bytes sum to total_bytes."""
    plan: "TrainingPlan | None" = None
    tensor: int = 1
    layers: int | None = None
    kv_heads: int | None = None  # the KV heads a sequence's cache splits by; 0: kept whole (MLA)

    def stage_share(self, pipeline: int) -> float:
        """The share of the layers the busiest of `pipeline` stages holds: ceil(L/p)/L."""
        if pipeline <= 1:
            return 1.0
        if not self.layers:
            return 1 / pipeline
        return math.ceil(self.layers / pipeline) / self.layers

    def kv_tensor_share(self, tensor: int) -> float:
        """The share of one sequence's KV cache each of `tensor` cards keeps: KV heads divide
        over the cards until there are fewer heads than cards, then each card keeps one
        (engines replicate them); a latent cache (MLA) is kept whole on every card."""
        if tensor <= 1:
            return 1.0
        heads = self.kv_heads
        if heads is None:
            return 1 / tensor
        if heads == 0:
            return 1.0
        return math.ceil(heads / tensor) / heads

    def weights_bytes_per_card(self, par: Parallelism) -> int:
        """Stored weights on the busiest card: dense weights over tensor x pipeline, experts over
        tensor x expert x pipeline."""
        share = self.stage_share(par.pipeline)
        dense = self.weights_bytes - self.expert_weights_bytes
        return (math.ceil(dense * share / par.tensor)
                + math.ceil(self.expert_weights_bytes * share / (par.tensor * par.expert)))

    def kv_bytes_per_card(self, par: Parallelism, sequences: int, share: float | None = None) -> int:
        """KV cache on the busiest card when one copy of the model serves `sequences`: each of
        the `expert` attention groups keeps its share of the sequences, each card of a group its
        share of the heads, for `share` of the layers (default: the busiest stage's)."""
        if not self.kv_cache_bytes_per_sequence:
            return 0
        per_group = math.ceil(sequences / par.expert)
        layers = self.stage_share(par.pipeline) if share is None else share
        return math.ceil(per_group * self.kv_cache_bytes_per_sequence * layers
                         * self.kv_tensor_share(par.tensor))

    def serving_need_bytes_per_card(self, par: Parallelism, sequences: int, weights: int | None = None) -> int:
        """Weights, KV cache for `sequences` per copy, and the runtime, on the busiest card
        (`weights`: weights_bytes_per_card(par), when the caller has it)."""
        return ((self.weights_bytes_per_card(par) if weights is None else weights)
                + self.kv_bytes_per_card(par, sequences) + self.runtime_overhead_bytes)

    def max_sequences(self, par: Parallelism, usable: int, weights: int | None = None) -> int | None:
        """The most sequences of this context one copy holds (None without a KV shape): one more
        would not fit on its busiest card (`weights` as serving_need_bytes_per_card's)."""
        if not self.kv_cache_bytes_per_sequence:
            return None
        room = usable - (self.weights_bytes_per_card(par) if weights is None else weights) \
            - self.runtime_overhead_bytes
        if room < 0:
            return 0
        per_card = (self.kv_cache_bytes_per_sequence * self.stage_share(par.pipeline)
                    * self.kv_tensor_share(par.tensor))
        guess = int(room // per_card) * par.expert if per_card else 0
        while guess > 0 and self.kv_bytes_per_card(par, guess) > room:
            guess -= 1
        while self.kv_bytes_per_card(par, guess + 1) <= room:
            guess += 1
        return guess

    def activations_per_card(self, tensor: int) -> int:
        """Stored activations on one card at tensor degree `tensor` (sequence parallel)."""
        if not self.activations_bytes:
            return 0
        return math.ceil(self.activations_bytes * self.tensor / tensor)

    def model_state_bytes_per_card(self, par: Parallelism) -> int:
        """Weights (and training state) one card holds under the plan, in bytes."""
        if self.plan is None:
            return self.weights_bytes_per_card(par)
        return self.plan.states_per_card(par)

    def training_need_bytes_per_card(self, par: Parallelism) -> int:
        """The plan's model states, this card's activations, and the runtime."""
        return (self.model_state_bytes_per_card(par) + self.activations_per_card(par.tensor)
                + self.runtime_overhead_bytes)


@stores_fields
@dataclass(frozen=True)
class FitAnswer:
    """Whether the need fits `count` cards, and the least count that does."""

    card_id: str
    """Id of the card judged (custom for a card given by its figures)."""
    count: int
    """Cards the fit is judged on: hardware.count as given, else the least count that holds the job (one copy's cards
    when no count does). The speed figures may use another count: see parallelism."""
    count_given: bool
    """Whether the caller gave hardware.count; false when count is the least count the service found."""
    fits: bool
    """Whether the busiest card's need fits its usable memory on count cards under the plan (need_bytes_per_card <=
    usable_bytes_per_card)."""
    cards_needed: int | None
    """Least count of this card the engine's plan holds the job on; null when no count does."""
    card_memory_bytes: int
    """Physical memory of one card in bytes (an "80 GB" card holds 80 GiB)."""
    usable_bytes_per_card: int
    """Bytes of one card an engine can allocate: card_memory_bytes x the usable fraction (default 0.9, said in
    assumptions)."""
    need_bytes_per_card: int
    """Bytes the busiest card must hold under the plan: model state, plus KV cache for its share of sequences
    (serving) or activations (training), plus the runtime."""
    model_state_bytes_per_card: int
    """The model-state part of need_bytes_per_card: the weights on the busiest card (serving), or weights, gradients
    and optimizer state (training)."""
    free_bytes_per_card: int
    """usable_bytes_per_card minus need_bytes_per_card: memory to spare on the busiest card; negative when it falls
    short by that much."""
    total_bytes: int = field(metadata={"description": (
        "need_bytes_per_card x the cards the plan uses: every card's runtime and any state kept "
        "on each card counted on each; the summary's 'in all'.")})
    max_concurrent_sequences: int | None
    """Most sequences of context_tokens the plan's copies hold at once beside the weights and runtime; null for
    training or when the model's KV cache shape is unknown."""
    reason: M.Message
    """Why the job fits or not: what each card holds (model state and the rest), what it can use, idle cards, the
    bytes to spare or short, and the cards needed."""


@dataclass(frozen=True)
class TrainingPlan:
    """How training state lands on each card, by the method named."""

    method: str
    params: int
    largest_layer_params: int
    stage: int | None
    optimizer: tr.Optimizer
    mixed_precision: bool
    frozen_bytes: int  # LoRA: the frozen base; else 0
    adapter_bytes: int  # LoRA: adapters with their gradients and optimizer state
    guide_bytes_per_param: float
    expert_params: int = 0  # routed-expert parameters, which expert parallelism divides

    def states_per_card(self, par: Parallelism) -> int:
        """Model state bytes one card holds under the plan `par`."""
        if self.frozen_bytes or self.adapter_bytes:
            if self.stage is None or self.stage == 3:
                return math.ceil(self.frozen_bytes / par.cards) + self.adapter_bytes
            held, _, _ = tr.shard_params(self.params, self.expert_params, par)
            return math.ceil(self.frozen_bytes * held / self.params) + self.adapter_bytes
        if self.stage is None:
            return tr.guide_states_per_card(self.params, self.guide_bytes_per_param, par.cards)
        return tr.deepspeed_states_per_card(self.params, self.largest_layer_params, self.stage, par,
                                            self.optimizer, self.mixed_precision, self.expert_params)


def _format_note(workload: Workload) -> M.Message:
    """The weight format's note: every format's is a coded message (precision.py)."""
    note = workload.precision.note
    assert isinstance(note, M.Message), note
    return note


def _full_components(model: ModelSpec, workload: Workload, notes: Notes):
    """Full fine-tune and pre-training: weights, gradients, master, optimizer (and DeepSpeed's
    fp32 gradient partition), one copy each; the plan that shards them."""
    fp32 = workload.precision.name == "fp32"
    half = 4.0 if fp32 else 2.0
    stored = "fp32" if fp32 else "bf16"
    recipe = workload.recipe
    # said about 80 times an estimate by the recipe search, with the same few values: kept
    items = [(M.kept(M.PART_WEIGHTS, precision=stored), half)]
    if recipe.gradients_whole:
        items.append((M.kept(M.PART_GRADIENTS, precision=stored), half))
    else:  # each gradient freed as its parameter steps: the largest layer's at a time
        items.append((M.kept(M.PART_LAYER_GRADIENTS), half * model.largest_layer_params / model.params))
    if not fp32 and recipe.master_on_card:
        items.append((M.PART_MASTER(), 4.0))
    if recipe.states_on_card:
        items.extend((M.kept(state), b) for state, b in workload.optimizer.states)
    else:
        items.append((M.kept(M.PART_HOST_STATES), 0.0))
    if workload.zero_stage is not None and not fp32 and recipe.name == "standard":
        items.append((M.PART_GRADIENT_PARTITION(), 4.0))
    typical = sum(b for _, b in items)
    components = [Component(name, weights_bytes(model.params, b), M.kept(M.BYTES_PER_PARAM, bytes_per_param=b))
                  for name, b in items]
    high = typical + (0 if fp32 or workload.zero_stage is not None or recipe.name != "standard" else 4.0)
    if recipe.name != "standard":  # the recipe's own accounting: the states it keeps, split evenly
        method = f"recipe-{recipe.name}"
        notes.assume("memory_method", method, M.kept(
            M.RECIPE_LOW_MEMORY if recipe.name == "low-memory" else M.RECIPE_CPU_OFFLOAD))
        plan = TrainingPlan(method, model.params, model.largest_layer_params, None, workload.optimizer, not fp32, 0,
                            0, typical, model.expert_params or 0)
        return components, typical, high, plan
    method = "guide" if workload.zero_stage is None else f"deepspeed-zero{workload.zero_stage}"
    notes.assume("memory_method", method, M.MEMORY_EVEN_SPLIT() if workload.zero_stage is None else
                 M.kept(M.MEMORY_DEEPSPEED, stage=workload.zero_stage))
    plan = TrainingPlan(method, model.params, model.largest_layer_params, workload.zero_stage,
                        workload.optimizer, not fp32, 0, 0, typical, model.expert_params or 0)
    return components, typical, high, plan


def _adapter_components(model: ModelSpec, workload: Workload, notes: Notes):
    """LoRA and QLoRA: the frozen base in its format, and the adapters with their gradients and
    optimizer state (fp32), counted from the architecture; the guide's rule when it is unknown."""
    base = weights.weights_bytes(model, workload.precision)
    adapters = tr.lora_adapter_params(model.linear_shapes, workload.lora_rank, workload.lora_targets)
    if adapters:
        adapter_bytes = round(adapters * tr.lora_bytes_per_adapter_param(workload.optimizer))
        note = M.ADAPTERS_COUNTED(adapters=adapters, rank=workload.lora_rank, targets=workload.lora_targets,
                                  bytes_per_param=tr.lora_bytes_per_adapter_param(workload.optimizer))
        method, low_extra, high_extra = workload.mode, None, None
    else:
        extra = LORA_BYTES_PER_PARAM - 2.0
        adapter_bytes = weights_bytes(model.params, extra)
        note = M.ADAPTERS_GUIDE(bytes_per_param=extra)
        method, low_extra, high_extra = f"{workload.mode}-guide-rule", LORA_BYTES_PER_PARAM_LOW - 2.0, extra
        notes.assume("lora_adapters", "guide rule", M.LORA_GUIDE_RULE())
    components = [Component(M.PART_FROZEN_BASE(precision=workload.precision.name), base, _format_note(workload)),
                  Component(M.PART_ADAPTERS(), adapter_bytes, note)]
    typical = (base + adapter_bytes) / model.params
    low = typical if low_extra is None else base / model.params + low_extra
    high = typical if high_extra is None else base / model.params + high_extra
    plan = TrainingPlan(method, model.params, model.largest_layer_params, workload.zero_stage,
                        workload.optimizer, True, base, adapter_bytes, typical, model.expert_params or 0)
    return components, low, high, plan


def memory_breakdown(model: ModelSpec, workload: Workload, notes: Notes, tensor: int = 1,
                     said: bool = True) -> MemoryBreakdown:
    """Weights, training state, KV cache, activations (per card at tensor degree `tensor`) and
    runtime overhead, in bytes. Without `said`, the figures alone, for a search or another
    answer's part that reads only them (an alternative's format, full load at another context,
    the training recipe search): the parts are not listed (`components` empty) and the range
    says nothing of its ends (its note null), which no answer shows."""
    plan = None
    if workload.training:
        build = _adapter_components if workload.adapters else _full_components
        components, low, high, plan = build(model, workload, notes)
    else:
        stored = weights.weights_bytes(model, workload.precision)
        components = [Component(M.kept(M.PART_WEIGHTS, precision=workload.precision.name), stored,
                                _format_note(workload))] if said else []
        low = high = stored / model.params
        _format_notes(model, workload, notes)
    weights_total = components[0].bytes if components else stored
    state = sum(c.bytes for c in components[1:])
    kv_token = kv_seq = kv = None
    activations: int | None = 0
    if not workload.training:
        kv_token, kv_seq, kv = _kv(model, workload, notes)
        if kv is not None and said:
            components.append(Component(M.PART_KV_CACHE(), kv, M.KV_COUNTED(
                batch=workload.batch_size, tokens=workload.context_tokens, kv_precision=workload.kv_precision.name)))
    else:
        activations = _training_activations(model, workload, tensor, notes)
        if activations is not None and said:
            components.append(Component(M.PART_ACTIVATIONS(), activations, M.ACTIVATIONS_COUNTED(
                recompute=workload.recompute, batch=workload.batch_size, tokens=workload.context_tokens,
                tensor=tensor)))
    overhead = notes.use("runtime_overhead_bytes_per_card", None, d.RUNTIME_OVERHEAD_BYTES_PER_CARD)
    if said:
        components.append(Component(M.PART_RUNTIME(), overhead, M.PER_CARD()))
    total = weights_total + state + (kv or 0) + (activations or 0) + overhead  # the parts' bytes, listed or not
    return MemoryBreakdown(
        weights_bytes=weights_total,
        expert_weights_bytes=weights.expert_weights_bytes(model, workload.precision)
        if not workload.training else 0,
        training_state_bytes=state,
        model_state_bytes=weights_total + state,
        kv_cache_bytes=kv,
        kv_cache_bytes_per_token=kv_token,
        kv_cache_bytes_per_sequence=kv_seq,
        activations_bytes=activations,
        runtime_overhead_bytes=overhead,
        total_bytes=total,
        bytes_per_param=(weights_total + state) / model.params,
        bytes_per_param_low=low,
        bytes_per_param_high=high,
        total_bytes_range=_total_range(total, weights_total + state, low, high, model.params, said),
        components=tuple(components) if said else (),
        plan=plan,
        tensor=tensor,
        layers=model.layers,
        kv_heads=_kv_heads(model),
    )


def _total_range(total: int, state: int, low_per_param: float, high_per_param: float, params: int,
                 said: bool) -> Range:
    """The total with model state at the low and high bytes per parameter (and, `said`, what
    its ends rest on)."""
    low, high = total - state + low_per_param * params, total - state + high_per_param * params
    return Range(low, total, high, note=M.RANGE_STATE(low_per_param=low_per_param, high_per_param=high_per_param,
                                                  low_bytes=low, high_bytes=high) if said else None)


def _kv_heads(model: ModelSpec) -> int | None:
    """What splits a sequence's KV cache over tensor-parallel cards: its KV heads; 0 for a latent
    cache (MLA), which every card keeps whole; None when the heads are unknown (an even split)."""
    if model.attention == "mla":
        return 0
    return model.resolved_kv_heads or None


def _format_notes(model: ModelSpec, workload: Workload, notes: Notes) -> None:
    if workload.precision.keeps_embeddings and not model.embedding_params:
        notes.assume("embedding_tables", "not known", M.EMBEDDINGS_UNKNOWN(precision=workload.precision.name))


def _kv(model: ModelSpec, workload: Workload, notes: Notes):
    shape = model.kv_shape
    if shape is None:
        notes.warn(M.KV_NOT_COUNTED())
        return None, None, None
    layers, per_layer = shape
    bytes_per_value = workload.kv_precision.bytes_per_value
    per_token = kv_cache_bytes_per_sequence(per_layer, bytes_per_value, layers, 1)
    windowed = ENGINES[workload.engine].windowed_kv
    sliding = model.sliding_layers if windowed else 0
    per_sequence = kv_cache_bytes_per_sequence(
        per_layer, bytes_per_value, layers, workload.context_tokens, sliding, model.sliding_window)
    if model.sliding_layers and workload.context_tokens > (model.sliding_window or 0):
        if windowed:
            notes.assume("sliding_window", model.sliding_window, M.SLIDING_WINDOW(
                sliding=model.sliding_layers, layers=model.layers, window=model.sliding_window))
        else:
            notes.assume("sliding_window", "not applied",
                         M.SLIDING_NOT_APPLIED(why=M.TRTLLM_WINDOW(), window=model.sliding_window))
    if model.attention == "mla":
        notes.assume("kv_cache_layout", "mla latent", M.MLA_LATENT(values=per_layer))
    return per_token, per_sequence, per_sequence * workload.batch_size


def _training_activations(model: ModelSpec, workload: Workload, tensor: int, notes: Notes) -> int | None:
    if not (model.layers and model.hidden_size):
        notes.warn(M.ACTIVATIONS_NOT_COUNTED(share=GUIDE_ACTIVATION_SHARE))
        return None
    if workload.recompute == "none" and not model.attention_heads:
        notes.warn(M.SCORES_NOT_COUNTED())
    kv_dim = (model.resolved_kv_heads or 0) * (model.resolved_head_dim or 0) or None
    shape = tr.BlockShape(model.hidden_size, model.attention_heads, kv_dim,
                          model.intermediate_size, model.experts_per_token or 1)
    activations = tr.activation_bytes(shape, model.layers, workload.context_tokens,
                                      workload.batch_size, model.vocab_size, tensor,
                                      workload.recompute)
    return activations * (2 if workload.precision.name == "fp32" else 1)
