"""Model architectures: what the formulas need to know about a model."""

from dataclasses import dataclass

from . import messages as M
from .errors import InvalidInputError
from .frozen import keeps_hash


@keeps_hash
@dataclass(frozen=True)
class ModelSpec:
    """A transformer's size and, where known, the shape its KV cache and activations follow.

    `params` counts every stored parameter (all experts of an MoE); `active_params` the
    parameters one token passes through (None: dense, all of them). `embedding_params` is the
    input embedding table; with untied embeddings the output head is a second table of the
    same size. `kv_values_per_layer` overrides 2 x kv_heads x head_dim per token and layer
    (multi-head latent attention caches one compressed vector). `sliding_layers` of the
    `layers` keep at most `sliding_window` tokens of KV cache. `linear_shapes` lists the
    transformer blocks' linear layers as (attention | mlp | expert, fan_in, fan_out, count),
    where known (from a config.json), for LoRA adapters; `intermediate_size` is the gated
    MLP's width (an MoE expert's), for activations. `max_context_tokens` is the most positions
    the model was built for (its config's max_position_embeddings, or what its rope scaling
    extends to), and `context_source` says where that figure comes from. `released_precision`
    is the format the published checkpoint ships in (the default for inference), with its
    source; `released_experts_only` says that format covers only the routed experts' weights
    and every other tensor ships in 16-bit (gpt-oss's MXFP4).
    """

    params: int
    active_params: int | None = None
    layers: int | None = None
    hidden_size: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    vocab_size: int | None = None
    name: str = "custom model"
    source: str = M.GIVEN_BY_CALLER()
    embedding_params: int | None = None
    tied_embeddings: bool | None = None
    kv_values_per_layer: int | None = None
    sliding_window: int | None = None
    sliding_layers: int = 0
    experts: int | None = None
    experts_per_token: int | None = None
    expert_params: int | None = None
    attention: str | None = None
    family: str | None = None
    notes: str = ""
    linear_shapes: tuple[tuple[str, int, int, int], ...] = ()
    intermediate_size: int | None = None
    moe_layers: int | None = None
    training_batch_tokens: int | None = None
    training_batch_source: str = ""
    max_context_tokens: int | None = None
    context_source: str = ""
    released_precision: str | None = None
    released_precision_source: str = ""
    released_experts_only: bool = False

    def __post_init__(self) -> None:
        if self.params <= 0:
            raise InvalidInputError(M.ERROR_PARAMS_NOT_POSITIVE(), "model.params_billion")
        if self.active_params is not None and not 0 < self.active_params <= self.params:
            raise InvalidInputError(M.ERROR_ACTIVE_PARAMS(), "model.active_params_billion")
        if (
            self.kv_heads is not None
            and self.attention_heads is not None
            and self.kv_heads > self.attention_heads
        ):
            raise InvalidInputError(M.ERROR_KV_HEADS_EXCEED_HEADS(), "model.kv_heads")
        if self.layers is not None and self.sliding_layers > self.layers:
            raise InvalidInputError(M.ERROR_SLIDING_LAYERS_EXCEED_LAYERS(), "model.layers")
        if self.max_context_tokens is not None and self.max_context_tokens < 1:
            raise InvalidInputError(M.ERROR_MAX_CONTEXT_NOT_POSITIVE(), "model.max_context_tokens")

    @property
    def params_per_token(self) -> int:
        """Parameters each token is multiplied through (the active ones for an MoE)."""
        return self.active_params or self.params

    @property
    def is_moe(self) -> bool:
        return self.active_params is not None and self.active_params < self.params

    @property
    def routed_experts(self) -> tuple[int, int, int] | None:
        """(experts, experts per token, their parameters) when the routed experts are known, not
        only the total and active counts; else None."""
        if self.expert_params and self.experts and self.experts_per_token:
            return self.experts, self.experts_per_token, self.expert_params
        return None

    @property
    def has_routed_experts(self) -> bool:
        return self.routed_experts is not None

    @property
    def resolved_head_dim(self) -> int | None:
        """head_dim as given, else hidden_size / attention_heads."""
        if self.head_dim is not None:
            return self.head_dim
        if self.hidden_size and self.attention_heads:
            return self.hidden_size // self.attention_heads
        return None

    @property
    def resolved_kv_heads(self) -> int | None:
        """kv_heads as given, else attention_heads (multi-head attention)."""
        return self.kv_heads if self.kv_heads is not None else self.attention_heads

    @property
    def kv_values_per_token_per_layer(self) -> int | None:
        """Values cached per token and layer: 2 x kv_heads x head_dim, or the MLA latent."""
        if self.kv_values_per_layer is not None:
            return self.kv_values_per_layer
        if self.resolved_kv_heads and self.resolved_head_dim:
            return 2 * self.resolved_kv_heads * self.resolved_head_dim
        return None

    @property
    def kv_shape(self) -> tuple[int, int] | None:
        """(layers, values cached per token and layer) when both are known; else None."""
        per_layer = self.kv_values_per_token_per_layer
        if self.layers and per_layer:
            return self.layers, per_layer
        return None

    @property
    def has_kv_shape(self) -> bool:
        """Whether layers and the per-layer KV shape are known."""
        return self.kv_shape is not None

    @property
    def largest_layer_params(self) -> int:
        """The largest single parameter tensor, as DeepSpeed's ZeRO-3 estimator counts it: the
        embedding table or the largest linear layer (else one block's worth); 0 if unknown."""
        if self.linear_shapes:
            largest_linear = max(fan_in * fan_out for _, fan_in, fan_out, _ in self.linear_shapes)
            return max(self.embedding_params or 0, largest_linear)
        tables = (self.embedding_params or 0) * (2 if self.tied_embeddings is False else 1)
        block = (self.params - tables) // self.layers if self.layers else 0
        return max(self.embedding_params or 0, block)

    @property
    def resolved_moe_layers(self) -> int:
        """Layers that route tokens to experts: as counted from a config, else every layer of an
        MoE (0 for a dense model or unknown layers)."""
        if self.moe_layers is not None:
            return self.moe_layers
        return (self.layers or 0) if self.is_moe else 0

    @property
    def decode_skipped_params(self) -> int:
        """Parameters a decode step does not read: the input embedding table, when untied.

        Each token looks up one row of it; the output head (a separate table) is read whole.
        """
        if self.embedding_params and self.tied_embeddings is False:
            return self.embedding_params
        return 0


def beyond_context(model: ModelSpec, context_tokens: int) -> bool:
    """Whether `context_tokens` exceed the positions the model was built for (when known)."""
    return model.max_context_tokens is not None and context_tokens > model.max_context_tokens


def context_warning(model: ModelSpec, context_tokens: int, notes) -> None:
    """Warn when the context is longer than the model's positions: the memory and speed still
    follow the formulas, but the model was not trained for it and its answers degrade."""
    if beyond_context(model, context_tokens):
        notes.warn(lambda: M.CONTEXT_BEYOND_POSITIONS(context_tokens=context_tokens, model=model.name,
                                                      positions=model.max_context_tokens,
                                                      source=model.context_source))
