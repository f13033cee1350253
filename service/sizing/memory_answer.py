"""The memory answer: a breakdown by component, and its fit on a card."""

from dataclasses import dataclass

from . import defaults as d
from . import memory as m
from . import weights
from .catalog import Card
from .inputs import Notes, Workload
from .model import ModelSpec
from .units import GB, GIB


@dataclass(frozen=True)
class Component:
    name: str
    bytes: int
    note: str


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes by component; everything but the per-card runtime overhead splits over cards."""

    weights_bytes: int
    training_state_bytes: int
    model_state_bytes: int
    kv_cache_bytes: int | None
    kv_cache_bytes_per_token: int | None
    kv_cache_bytes_per_sequence: int | None
    activations_bytes: int | None
    runtime_overhead_bytes: int
    total_bytes: int
    bytes_per_param: float
    bytes_per_param_low: float
    bytes_per_param_high: float
    components: tuple[Component, ...]

    @property
    def shardable_bytes(self) -> int:
        return self.total_bytes - self.runtime_overhead_bytes


@dataclass(frozen=True)
class FitAnswer:
    """Whether the need fits `count` cards, and the least count that does."""

    card_id: str
    count: int
    count_given: bool
    fits: bool
    cards_needed: int | None
    card_memory_bytes: int
    usable_bytes_per_card: int
    need_bytes_per_card: int
    free_bytes_per_card: int
    total_bytes: int
    max_concurrent_sequences: int | None
    reason: str


def _training_components(model: ModelSpec, workload: Workload) -> tuple[list[Component], float, float]:
    """Weights and training state by component, and the low and high bytes per parameter."""
    params = model.params
    if workload.mode in ("full_finetune", "pretrain"):
        if workload.precision.name == "fp32":
            items = (("weights (fp32)", 4.0), ("gradients (fp32)", 4.0),
                     ("Adam m (fp32)", 4.0), ("Adam v (fp32)", 4.0))
            low = high = 16.0
        else:
            items = m.FULL_FINETUNE_STATE
            low, high = m.FULL_FINETUNE_BYTES_PER_PARAM, m.FULL_FINETUNE_BYTES_PER_PARAM_HIGH
        return [Component(name, m.weights_bytes(params, b), f"{b:g} B/param") for name, b in items], low, high
    # LoRA and QLoRA: the frozen base in its format, plus the guide's 0.5-1 B/param for the
    # adapters, their gradients and optimizer state, and buffers (2.5-3 B/param over bf16).
    base = weights.weights_bytes(model, workload.precision)
    extra_low, extra = m.LORA_BYTES_PER_PARAM_LOW - 2.0, m.LORA_BYTES_PER_PARAM - 2.0
    components = [
        Component(f"frozen base ({workload.precision.name})", base, workload.precision.note),
        Component("adapters, their gradients and optimizer state, buffers",
                  m.weights_bytes(params, extra), f"{extra:g} B/param (guide: LoRA 2.5-3 B/param)"),
    ]
    return components, base / params + extra_low, base / params + extra


def memory_breakdown(model: ModelSpec, workload: Workload, notes: Notes) -> MemoryBreakdown:
    """Weights, training state, KV cache, activations and runtime overhead, in bytes."""
    if workload.training:
        components, low, high = _training_components(model, workload)
    else:
        stored = weights.weights_bytes(model, workload.precision)
        components = [Component(f"weights ({workload.precision.name})", stored, workload.precision.note)]
        low = high = stored / model.params
        _format_notes(model, workload, notes)
    weights_total = components[0].bytes
    state = sum(c.bytes for c in components[1:])
    kv_token = kv_seq = kv = None
    activations: int | None = 0
    if not workload.training:
        kv_token, kv_seq, kv = _kv(model, workload, notes)
        if kv is not None:
            components.append(Component("KV cache", kv, f"{workload.batch_size} x "
                                        f"{workload.context_tokens} tokens, {workload.kv_precision.name}"))
    else:
        activations = _training_activations(model, workload, notes)
        if activations is not None:
            components.append(Component("activations", activations,
                                        "Korthikanti et al. 2022 eq. 2, no recomputation, "
                                        "FlashAttention (34 x s x b x h per layer)"))
    overhead = notes.use("runtime_overhead_bytes_per_card", None, d.RUNTIME_OVERHEAD_BYTES_PER_CARD)
    components.append(Component("runtime overhead", overhead, "per card"))
    return MemoryBreakdown(
        weights_bytes=weights_total,
        training_state_bytes=state,
        model_state_bytes=weights_total + state,
        kv_cache_bytes=kv,
        kv_cache_bytes_per_token=kv_token,
        kv_cache_bytes_per_sequence=kv_seq,
        activations_bytes=activations,
        runtime_overhead_bytes=overhead,
        total_bytes=sum(c.bytes for c in components),
        bytes_per_param=(weights_total + state) / model.params,
        bytes_per_param_low=low,
        bytes_per_param_high=high,
        components=tuple(components),
    )


def _format_notes(model: ModelSpec, workload: Workload, notes: Notes) -> None:
    if workload.precision.keeps_embeddings and not model.embedding_params:
        notes.assume("embedding_tables", "not known",
                     f"{workload.precision.name} keeps embeddings and the output head in 16-bit; "
                     "the model gives no vocab_size and hidden_size, so every weight is counted "
                     "at the format's bits")


def _kv(model: ModelSpec, workload: Workload, notes: Notes):
    if not model.has_kv_shape:
        notes.warn("KV cache not counted: the model gives no layers, kv_heads and head_dim "
                   "(or hidden_size and attention_heads); the fit and speed ignore it")
        return None, None, None
    per_layer = model.kv_values_per_token_per_layer
    bytes_per_value = workload.kv_precision.bytes_per_value
    per_token = m.kv_cache_bytes_per_sequence(per_layer, bytes_per_value, model.layers, 1)
    per_sequence = m.kv_cache_bytes_per_sequence(
        per_layer, bytes_per_value, model.layers, workload.context_tokens,
        model.sliding_layers, model.sliding_window)
    if model.sliding_layers and workload.context_tokens > (model.sliding_window or 0):
        notes.assume("sliding_window", model.sliding_window,
                     f"{model.sliding_layers} of {model.layers} layers keep at most "
                     f"{model.sliding_window} tokens of KV cache")
    if model.attention == "mla":
        notes.assume("kv_cache_layout", "mla latent",
                     f"multi-head latent attention caches {per_layer} values per token and layer")
    return per_token, per_sequence, per_sequence * workload.batch_size


def _training_activations(model: ModelSpec, workload: Workload, notes: Notes) -> int | None:
    if not (model.layers and model.hidden_size):
        notes.warn("activations not counted: the model gives no layers and hidden_size; the guide"
                   " adds about 15 % on top of model state (7B: 112 GB -> 130 GB+)")
        return None
    return m.training_activations_bytes(
        model.layers, model.hidden_size, workload.context_tokens, workload.batch_size)


def fit_answer(
    breakdown: MemoryBreakdown, workload: Workload, card: Card, count: int | None, notes: Notes
) -> FitAnswer:
    """Fit on the given count, or on the least count that fits when none is given."""
    fraction = notes.use("memory_usable_fraction", None, d.MEMORY_USABLE_FRACTION)
    shardable, overhead = breakdown.shardable_bytes, breakdown.runtime_overhead_bytes
    needed = m.least_cards(shardable, overhead, card.memory_bytes, fraction)
    if needed is not None and needed > d.MAX_CARDS:
        needed = None
    used = count if count is not None else (needed or 1)
    fit = m.fit_on_cards(shardable, overhead, card.memory_bytes, fraction, used)
    return FitAnswer(
        card_id=card.id,
        count=used,
        count_given=count is not None,
        fits=fit.fits,
        cards_needed=needed,
        card_memory_bytes=card.memory_bytes,
        usable_bytes_per_card=fit.usable_bytes_per_card,
        need_bytes_per_card=fit.need_bytes_per_card,
        free_bytes_per_card=fit.free_bytes_per_card,
        total_bytes=shardable + used * overhead,
        max_concurrent_sequences=_concurrency(breakdown, fit, workload),
        reason=_fit_reason(breakdown, card, fit, needed),
    )


def _concurrency(breakdown: MemoryBreakdown, fit: m.Fit, workload: Workload) -> int | None:
    if workload.training or breakdown.kv_cache_bytes_per_sequence is None:
        return None
    room = (fit.count * (fit.usable_bytes_per_card - breakdown.runtime_overhead_bytes)
            - breakdown.model_state_bytes - (breakdown.activations_bytes or 0))
    return m.max_concurrent_sequences(room, breakdown.kv_cache_bytes_per_sequence)


def _fit_reason(breakdown: MemoryBreakdown, card: Card, fit: m.Fit, needed: int | None) -> str:
    per_card_state = breakdown.model_state_bytes / fit.count / GB
    rest = fit.need_bytes_per_card / GB - per_card_state
    head = (f"{fit.count} x {card.id}: each card holds {per_card_state:.1f} GB of model state "
            f"and {rest:.1f} GB of KV cache, activations and runtime ({fit.need_bytes_per_card / GB:.1f} GB)"
            f"; {fit.usable_bytes_per_card / GB:.1f} GB of its {card.memory_bytes / GIB:g} GiB "
            f"({card.memory_bytes / GB:.1f} GB) is usable")
    if needed is None:
        return head + "; no number of these cards holds it"
    if fit.fits:
        return head + f", {fit.free_bytes_per_card / GB:.1f} GB to spare"
    return head + f", {-fit.free_bytes_per_card / GB:.1f} GB short; {needed} cards are needed"
