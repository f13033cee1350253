"""Bytes of weights stored and read, by format: which parameters a format keeps in 16-bit,
which an MoE decode step touches, and which a decode step skips."""

from .model import ModelSpec
from .precision import Precision

SIXTEEN_BIT_BYTES = 2.0


def embedding_table_params(model: ModelSpec) -> int:
    """Parameters in the embedding table and, when known to be untied, the output head (0 if
    unknown)."""
    if not model.embedding_params:
        return 0
    return model.embedding_params * (2 if model.tied_embeddings is False else 1)


def params_bytes(params: int, table_params: int, precision: Precision) -> int:
    """Bytes of `params` parameters of which `table_params` are embedding or head tables.

    Formats that keep those tables in 16-bit store them at 2 B; the rest at the format's
    bits per weight, scales included.
    """
    table_bytes = precision.kept_bytes_per_value if precision.keeps_embeddings else precision.bytes_per_value
    return round((params - table_params) * precision.bytes_per_value + table_params * table_bytes)


def experts_only(model: ModelSpec, precision: Precision) -> bool:
    """Whether the format covers only the routed experts, every other tensor kept in 16-bit: a
    checkpoint in its released format that quantises the experts alone (gpt-oss's MXFP4)."""
    return (model.released_experts_only and precision.name == model.released_precision
            and model.routed_experts is not None)


def weights_bytes(model: ModelSpec, precision: Precision) -> int:
    """Every stored parameter (all experts) in the format, in bytes."""
    if experts_only(model, precision):
        return params_bytes(model.params, model.params - (model.expert_params or 0), precision)
    return params_bytes(model.params, embedding_table_params(model), precision)


def expert_fraction_touched(experts: int, per_token: int, batch_size: int) -> float:
    """Expected share of an MoE layer's experts that a batch routes to: 1 - (1 - k/E)^batch.

    Assumes uniform, independent routing; one sequence touches k of E.
    """
    return 1 - (1 - per_token / experts) ** batch_size


def expert_weights_bytes(model: ModelSpec, precision: Precision) -> int:
    """Bytes of the routed experts, all of them (0 for a dense model, or an MoE known only by its
    total and active counts)."""
    routed = model.routed_experts
    return 0 if routed is None else params_bytes(routed[2], 0, precision)


def decode_read_split(model: ModelSpec, precision: Precision, batch_size: int) -> tuple[int, int]:
    """(dense, routed-expert) weight bytes one decode step of `batch_size` sequences reads: the
    dense part is split over tensor-parallel cards, the experts over tensor x expert cards."""
    total = decode_read_bytes(model, precision, batch_size)
    every_expert = expert_weights_bytes(model, precision)
    routed = model.routed_experts
    if not every_expert or routed is None:
        return total, 0
    fraction = expert_fraction_touched(routed[0], routed[1], batch_size)
    experts = round(fraction * every_expert)
    return total - experts, experts


def decode_read_bytes(model: ModelSpec, precision: Precision, batch_size: int) -> int:
    """Weight bytes one decode step of `batch_size` sequences reads from memory.

    Dense: every weight but the input embedding table (one row per token). MoE: the shared
    weights and the experts the batch routes to. An MoE known only by its active parameter
    count reads at most batch x active, never more than all of it.
    """
    head = model.embedding_params or 0  # the output head, or the tied table, is read whole
    shared = model.params - model.decode_skipped_params
    if (routed := model.routed_experts) is not None:
        experts, per_token, expert_params = routed
        fraction = expert_fraction_touched(experts, per_token, batch_size)
        touched = shared - expert_params + round(fraction * expert_params)
        kept = shared - expert_params if experts_only(model, precision) else head
        return params_bytes(touched, kept, precision)
    if model.is_moe:
        active = params_bytes(model.params_per_token, 0, precision)
        return min(weights_bytes(model, precision), batch_size * active)
    return params_bytes(shared, head, precision)
