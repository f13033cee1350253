"""Model architectures: what the formulas need to know about a model."""

from dataclasses import dataclass

from .errors import InvalidInputError


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's size and, where known, the shape its KV cache and activations follow.

    `params` counts every stored parameter (all experts of an MoE); `active_params` the
    parameters one token passes through (None: dense, all of them).
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
    source: str = "given by the caller"

    def __post_init__(self) -> None:
        if self.params <= 0:
            raise InvalidInputError("params must be positive", "model.params_billion")
        if self.active_params is not None and self.active_params > self.params:
            raise InvalidInputError(
                "active parameters cannot exceed total parameters", "model.active_params_billion"
            )
        if (
            self.kv_heads is not None
            and self.attention_heads is not None
            and self.kv_heads > self.attention_heads
        ):
            raise InvalidInputError("kv_heads cannot exceed attention_heads", "model.kv_heads")

    @property
    def params_per_token(self) -> int:
        """Parameters each token is multiplied through (the active ones for an MoE)."""
        return self.active_params or self.params

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
    def has_kv_shape(self) -> bool:
        """Whether layers, KV heads and head dimension are all known."""
        return bool(self.layers and self.resolved_kv_heads and self.resolved_head_dim)
