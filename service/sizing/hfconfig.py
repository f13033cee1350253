"""A Hugging Face config.json as an architecture, with an exact parameter count.

Supported families and what they add to the Llama pattern (embedding, per layer attention +
gated MLP + norms, final norm, output head unless tied):
  llama, mistral, qwen2 (q/k/v bias), qwen3 (q/k norms), gemma, gemma2 and gemma3_text
  (four norms a layer, tied), phi3, mixtral (MoE), qwen2_moe (MoE + shared expert), qwen3_moe,
  deepseek_v3 and kimi_k2 (multi-head latent attention + MoE with shared experts), deepseek_v32
  (the same plus the DSA lightning indexer), glm4_moe (DeepSeek-style MoE with GQA, q/k/v bias),
  llama4_text (MoE with a shared expert, interleaved with dense layers), nemotron (squared-ReLU MLP
  without a gate, LayerNorm with bias), gpt_oss (MoE with biases, attention sinks). Anything else
  is refused with the list, never guessed.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

from . import messages as M
from .errors import InvalidInputError, SizingError
from .model import ModelSpec
from .precision import get_precision

FIELD = "model.hf_config"
# Bounds far above any published model, so that a hostile config cannot make a worker count
# parameters for minutes: the counter walks the layers one by one.
MAX_LAYERS = 1_000
MAX_EXPERTS = 100_000

# Each family's transformers config class default for tie_word_embeddings.
_TIED_DEFAULT = {
    "llama": False, "mistral": False, "qwen2": False, "qwen3": False, "gemma": True,
    "gemma2": True, "gemma3_text": True, "phi3": False, "mixtral": False, "qwen2_moe": False,
    "qwen3_moe": False, "deepseek_v3": False, "gpt_oss": False, "kimi_k2": False,
    "deepseek_v32": False, "glm4_moe": False, "llama4_text": False, "nemotron": False,
}
SUPPORTED = tuple(_TIED_DEFAULT)
_NORMS_PER_LAYER = {"gemma2": 4, "gemma3_text": 4}
_QK_NORM = ("qwen3", "qwen3_moe", "gemma3_text")
_QKV_BIAS = ("qwen2", "qwen2_moe")
# Multi-head latent attention (DeepSeek-V3's shapes; kimi_k2 is that architecture renamed).
_MLA = ("deepseek_v3", "deepseek_v32", "kimi_k2")
# Families whose MoE block is DeepSeek's: routed + shared experts, a router with a per-expert
# score-correction bias, the first first_k_dense_replace layers dense.
_DEEPSEEK_MOE = _MLA + ("glm4_moe",)


@dataclass(frozen=True)
class _Counted:
    total: int
    active: int
    expert: int
    shapes: tuple[tuple[str, int, int, int], ...] = ()  # (tag, fan_in, fan_out, count)
    moe_layers: int = 0


class _Config:
    """Typed reads of a config, each error naming the key."""

    def __init__(self, raw: Mapping, prefix: str) -> None:
        self.raw, self.prefix = raw, prefix
        self._memo: dict = {}

    def once(self, key: str, parse):
        """`parse()` the first time a derived value is asked for, the same value after."""
        if key not in self._memo:
            self._memo[key] = parse()
        return self._memo[key]

    def _fail(self, key: str, said: M.Template) -> NoReturn:
        raise InvalidInputError(said(key=key), f"{self.prefix}.{key}")

    def integer(self, key: str, default: int | None = None) -> int:
        """A required integer (or `default` when the config leaves it out)."""
        value = self.optional_integer(key, default)
        if value is None:
            self._fail(key, M.ERROR_CONFIG_KEY_REQUIRED)
        return value

    def optional_integer(self, key: str, default: int | None = None) -> int | None:
        value = self.raw.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self._fail(key, M.ERROR_CONFIG_KEY_NOT_COUNT)
        if value > 10**9:
            self._fail(key, M.ERROR_CONFIG_KEY_OUT_OF_RANGE)
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            self._fail(key, M.ERROR_CONFIG_KEY_NOT_BOOL)
        return value


def model_from_hf_config(raw: Mapping, name: str = "model from config.json") -> ModelSpec:
    """The architecture a config.json describes; InvalidInputError for what it cannot read."""
    notes = []
    prefix = FIELD
    vision = 0
    if isinstance(raw.get("text_config"), Mapping):
        text = raw["text_config"]
        vision = _gemma3_vision(raw, text) or _llama4_vision(raw, text)
        notes.append(f"multimodal config: the {_VISION_NAME.get(str(raw.get('model_type')), 'vision')} "
                     f"encoder and projector ({vision / 1e9:.2f}B) are counted" if vision else
                     "text model of a multimodal config; the vision encoder is not counted")
        raw, prefix = text, f"{FIELD}.text_config"
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or model_type not in _TIED_DEFAULT:
        raise InvalidInputError(M.ERROR_CONFIG_MODEL_TYPE(model_type=model_type, supported=SUPPORTED),
                                f"{prefix}.model_type")
    c = _Config(raw, prefix)
    hidden, layers = c.integer("hidden_size"), c.integer("num_hidden_layers")
    if layers > MAX_LAYERS:
        raise InvalidInputError(M.ERROR_CONFIG_TOO_MANY_LAYERS(most=MAX_LAYERS), f"{prefix}.num_hidden_layers")
    heads, vocab = c.integer("num_attention_heads"), c.integer("vocab_size")
    kv_heads = c.integer("num_key_value_heads", heads)
    if min(hidden, layers, heads, vocab, kv_heads) < 1 or heads % kv_heads:
        raise InvalidInputError(M.ERROR_CONFIG_SIZES(), f"{prefix}.num_key_value_heads")
    head_dim = c.integer("head_dim", hidden // heads)
    tied = c.bool("tie_word_embeddings", _TIED_DEFAULT[model_type])
    counted = _count(model_type, c, hidden, layers, heads, kv_heads, head_dim)
    embedding = vocab * hidden
    mtp = _glm_mtp(model_type, c, hidden, layers, heads, kv_heads, head_dim, vocab)
    if mtp:
        notes.append(f"the checkpoint's multi-token-prediction layer ({mtp / 1e9:.2f}B, with its own "
                     "embedding and head copies) is counted in the total, not in the active")
    total = counted.total + embedding * (1 if tied else 2) + vision + mtp
    active = counted.active + embedding * (1 if tied else 2)
    window, sliding = _sliding(model_type, c, layers)
    context, context_source = _context(c)
    released, released_source = _released(raw)
    moe = counted.expert > 0
    return ModelSpec(
        params=total,
        active_params=active if moe else None,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=vocab,
        name=name,
        source="counted from the config.json given",
        embedding_params=embedding,
        tied_embeddings=tied,
        kv_values_per_layer=_mla_latent(model_type, c) if model_type in _MLA else None,
        sliding_window=window,
        sliding_layers=sliding,
        experts=_experts(model_type, c) if moe else None,
        experts_per_token=_experts_per_token(c) if moe else None,
        expert_params=counted.expert if moe else None,
        moe_layers=counted.moe_layers,
        attention=_attention_kind(model_type, heads, kv_heads),
        family=model_type,
        linear_shapes=counted.shapes,
        intermediate_size=_activation_width(model_type, c),
        max_context_tokens=context,
        context_source=context_source,
        released_precision=released,
        released_precision_source=released_source,
        released_experts_only=released == "mxfp4" and model_type == "gpt_oss" and moe,
        notes="; ".join(notes),
    )


# An fp32 checkpoint is served in 16-bit (vLLM's dtype "auto" casts it): it sets no default.
_DTYPES = {"bfloat16": "bf16", "float16": "fp16"}


def _released(raw: Mapping) -> tuple[str | None, str]:
    """The format the checkpoint ships in, from quantization_config (mxfp4, fp8, GPTQ, AWQ,
    bitsandbytes) or torch_dtype; (None, "") when the config says neither."""
    quant = raw.get("quantization_config")
    if isinstance(quant, Mapping):
        method = str(quant.get("quant_method", "")).lower()
        bits, group = quant.get("bits", 4), quant.get("group_size", 128)
        grouped = f"{method}-int{bits}-g{group}" if method in ("gptq", "awq") else None
        four_bit = "nf4" if quant.get("load_in_4bit") else "bnb-int8"
        name = {"mxfp4": "mxfp4", "fp8": "fp8", "bitsandbytes": four_bit}.get(method, grouped)
        try:  # a layout the service does not model (GPTQ per column, say) sets no default
            known = None if name is None else get_precision(name).name
        except SizingError:
            known = None
        if known is not None:
            return known, f"config quantization_config quant_method {method}"
    dtype = raw.get("torch_dtype") or raw.get("dtype")
    if isinstance(dtype, str) and dtype in _DTYPES:
        return _DTYPES[dtype], f"config torch_dtype {dtype}"
    return None, ""


def _context(c: _Config) -> tuple[int | None, str]:
    """The positions the config allows: max_position_embeddings, unless its rope_scaling
    stretches the original positions further (factor x original_max_position_embeddings, as
    Qwen's YaRN recipe adds to a 32K config). A config whose max_position_embeddings is already
    above the original (Llama 3.1, DeepSeek-V3) has counted its scaling in it."""
    positions = c.optional_integer("max_position_embeddings") or None
    said: str = "" if positions is None else M.CONFIG_POSITIONS(positions=positions)
    rope = c.raw.get("rope_scaling")
    if not isinstance(rope, Mapping):
        return positions, said
    kind = rope.get("rope_type") or rope.get("type") or "rope"
    factor, original = rope.get("factor"), rope.get("original_max_position_embeddings") or positions
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 1 <= factor <= 1_000 \
            or isinstance(original, bool) or not isinstance(original, int) or not 0 < original <= 10**9:
        return positions, said
    if positions is not None and positions > original:
        return positions, M.CONFIG_POSITIONS_SCALED(positions=positions, kind=str(kind), factor=factor,
                                                    original=original)
    scaled = int(original * factor)
    return scaled, M.ROPE_SCALED_POSITIONS(kind=str(kind), factor=factor, original=original, positions=scaled)


_VISION_NAME = {"gemma3": "SigLIP vision", "llama4": "Llama 4 vision"}


def _vision_config(raw: Mapping, model_type: str, vision_type: str) -> "_Config | None":
    """The config's vision tower of `vision_type` under a `model_type` config; None without."""
    vision = raw.get("vision_config")
    if raw.get("model_type") != model_type or not isinstance(vision, Mapping):
        return None
    if vision.get("model_type") != vision_type:
        return None
    return _Config(vision, f"{FIELD}.vision_config")


def _vit_params(v: "_Config", channels: int, class_token: int) -> tuple[int, int, int]:
    """A ViT tower's layers (biased attention, a biased two-matrix MLP, two LayerNorms each) and
    its patch, class and position embeddings, and its hidden size."""
    hidden, inter, layers = v.integer("hidden_size"), v.integer("intermediate_size"), v.integer("num_hidden_layers")
    patch, image = v.integer("patch_size"), v.integer("image_size")
    if not patch:
        raise InvalidInputError(M.ERROR_CONFIG_PATCH_SIZE(), f"{v.prefix}.patch_size")
    per_layer = 4 * (hidden * hidden + hidden) + 2 * hidden * inter + inter + hidden + 4 * hidden
    embeddings = channels * patch * patch * hidden + hidden + ((image // patch) ** 2 + class_token) * hidden
    return layers * per_layer + embeddings, hidden, inter


def _gemma3_vision(raw: Mapping, text: Mapping) -> int:
    """Gemma 3's SigLIP vision tower and projector; 0 when the config has no such tower."""
    v = _vision_config(raw, "gemma3", "siglip_vision_model")
    if v is None:
        return 0
    tower, hidden, _ = _vit_params(v, 3, 0)
    text_hidden = _Config(text, f"{FIELD}.text_config").integer("hidden_size")
    projector = hidden * text_hidden + hidden  # mm_input_projection and mm_soft_emb_norm
    return tower + 2 * hidden + projector


def _llama4_vision(raw: Mapping, text: Mapping) -> int:
    """Llama 4's vision tower (patch unfold, class and position embeddings, pre/post LayerNorm,
    ViT layers with biased attention and GELU MLP), its pixel-shuffle adapter MLP and the
    projector into the text model; 0 when the config has no such tower."""
    v = _vision_config(raw, "llama4", "llama4_vision_model")
    if v is None:
        return 0
    tower, hidden, inter = _vit_params(v, v.integer("num_channels", 3), 1)
    adapter = inter * v.integer("projector_input_dim") + v.integer("projector_output_dim") ** 2
    text_hidden = _Config(text, f"{FIELD}.text_config").integer("hidden_size")
    projector = v.integer("vision_output_dim") * text_hidden  # multi_modal_projector, no bias
    return tower + 4 * hidden + adapter + projector


def _activation_width(model_type, c: _Config) -> int | None:
    """The MLP width a token's activations pass through (one expert's for an MoE)."""
    key = "moe_intermediate_size" if model_type in ("qwen2_moe", "qwen3_moe") + _DEEPSEEK_MOE \
        else "intermediate_size"
    return c.optional_integer(key)


def _attention_kind(model_type: str, heads: int, kv_heads: int) -> str:
    if model_type in _MLA:
        return "mla"
    return "mha" if kv_heads == heads else ("mqa" if kv_heads == 1 else "gqa")


def _count(model_type, c: _Config, hidden, layers, heads, kv_heads, head_dim) -> _Counted:
    """Parameters of the layers and the final norm (embeddings are added by the caller)."""
    if model_type in _MLA:
        attention, attention_shapes = _mla_params(c, hidden, heads)
        if model_type == "deepseek_v32":
            indexer, indexer_shapes = _dsa_indexer_params(c, hidden)
            attention, attention_shapes = attention + indexer, attention_shapes + indexer_shapes
    else:
        attention = _attention_params(model_type, c, hidden, heads, kv_heads, head_dim)
        q, kv = heads * head_dim, kv_heads * head_dim
        attention_shapes = (("attention", hidden, q, 1), ("attention", hidden, kv, 2),
                            ("attention", q, hidden, 1))
    norm = _norm_params(model_type, hidden)
    norms = _NORMS_PER_LAYER.get(model_type, 2) * norm
    total = active = expert = moe_layers = 0
    shapes: dict[tuple[str, int, int], int] = {}
    for index in range(layers):
        mlp = _mlp(model_type, c, hidden, index)
        total += attention + norms + mlp.total
        active += attention + norms + mlp.active
        expert += mlp.expert
        moe_layers += mlp.expert > 0
        for tag, fan_in, fan_out, count in attention_shapes + mlp.shapes:
            shapes[(tag, fan_in, fan_out)] = shapes.get((tag, fan_in, fan_out), 0) + count
    return _Counted(total + norm, active + norm, expert,
                    tuple((tag, i, o, n) for (tag, i, o), n in shapes.items()), moe_layers)


def _attention_params(model_type, c: _Config, hidden, heads, kv_heads, head_dim) -> int:
    q, kv = heads * head_dim, kv_heads * head_dim
    params = hidden * q + 2 * hidden * kv + q * hidden
    if model_type in _QKV_BIAS or (model_type == "glm4_moe" and c.bool("attention_bias", False)):
        params += q + 2 * kv  # q/k/v biases, none on o_proj
    elif c.bool("attention_bias", False):
        params += q + 2 * kv + hidden
    if model_type in _QK_NORM or (model_type == "glm4_moe" and c.bool("use_qk_norm", False)):
        params += 2 * head_dim
    if model_type == "gpt_oss":
        params += heads  # one attention-sink logit per head
    return params


def _mla_params(c: _Config, hidden, heads) -> tuple[int, tuple]:
    """DeepSeek multi-head latent attention: low-rank q and a compressed, shared KV latent."""
    q_rank = c.optional_integer("q_lora_rank")
    kv_rank = c.integer("kv_lora_rank")
    nope, rope, v_dim = c.integer("qk_nope_head_dim"), c.integer("qk_rope_head_dim"), c.integer("v_head_dim")
    q_out = heads * (nope + rope)
    q = hidden * q_out if q_rank is None else hidden * q_rank + q_rank + q_rank * q_out
    kv = hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v_dim)
    q_shapes = ((("attention", hidden, q_out, 1),) if q_rank is None else
                (("attention", hidden, q_rank, 1), ("attention", q_rank, q_out, 1)))
    shapes = q_shapes + (("attention", hidden, kv_rank + rope, 1),
                         ("attention", kv_rank, heads * (nope + v_dim), 1),
                         ("attention", heads * v_dim, hidden, 1))
    return q + kv + heads * v_dim * hidden, shapes


def _mla_latent(model_type, c: _Config) -> int:
    """MLA caches the compressed KV latent plus the shared RoPE key per token and layer; DSA's
    lightning indexer adds its own key (index_head_dim values) per token and layer."""
    latent = c.integer("kv_lora_rank") + c.integer("qk_rope_head_dim")
    return latent + (c.integer("index_head_dim") if model_type == "deepseek_v32" else 0)


def _dsa_indexer_params(c: _Config, hidden) -> tuple[int, tuple]:
    """DeepSeek-V3.2's lightning indexer, one per layer (DeepSeek-V3.2-Exp inference/model.py
    Indexer): wq_b from the q latent to index_n_heads x index_head_dim, wk from the hidden state
    to one index_head_dim key, k_norm a LayerNorm with bias, weights_proj to one weight per head.
    No biases on the projections."""
    q_rank = c.integer("q_lora_rank")
    heads, head_dim = c.integer("index_n_heads"), c.integer("index_head_dim")
    params = q_rank * heads * head_dim + hidden * head_dim + 2 * head_dim + hidden * heads
    return params, (("attention", q_rank, heads * head_dim, 1), ("attention", hidden, head_dim, 1),
                    ("attention", hidden, heads, 1))


def _norm_params(model_type, hidden: int) -> int:
    """One norm's parameters: RMSNorm has a weight; nemotron's LayerNorm1P a weight and a bias."""
    return 2 * hidden if model_type == "nemotron" else hidden


def _gated(hidden: int, intermediate: int) -> int:
    return 3 * hidden * intermediate


def _gated_shapes(tag: str, hidden: int, intermediate: int, count: int = 1) -> tuple:
    """gate and up (hidden -> intermediate), down (intermediate -> hidden)."""
    return ((tag, hidden, intermediate, 2 * count), (tag, intermediate, hidden, count))


def _dense(hidden: int, intermediate: int, bias: int = 0) -> _Counted:
    params = _gated(hidden, intermediate) + bias
    return _Counted(params, params, 0, _gated_shapes("mlp", hidden, intermediate))


def _mlp(model_type, c: _Config, hidden, index) -> _Counted:
    if model_type == "mixtral":
        inter, experts = c.integer("intermediate_size"), c.integer("num_local_experts")
        return _moe(experts, c.integer("num_experts_per_tok"), _gated(hidden, inter), hidden, 0,
                    shapes=_gated_shapes("expert", hidden, inter, experts))
    if model_type in ("qwen2_moe", "qwen3_moe"):
        return _qwen_moe(model_type, c, hidden, index)
    if model_type in _DEEPSEEK_MOE:
        return _deepseek_moe(c, hidden, index)
    if model_type == "llama4_text":
        return _llama4_mlp(c, hidden, index)
    if model_type == "nemotron":
        return _ungated(hidden, c.integer("intermediate_size"), c.bool("mlp_bias", False))
    if model_type == "gpt_oss":
        inter, experts = c.integer("intermediate_size"), c.integer("num_local_experts")
        expert = 2 * hidden * inter + 2 * inter + inter * hidden + hidden  # fused gate_up, biases
        per_token = c.integer("num_experts_per_tok", c.raw.get("experts_per_token"))
        return _moe(experts, per_token, expert, hidden, experts,
                    shapes=(("expert", hidden, 2 * inter, experts), ("expert", inter, hidden, experts)))
    inter = c.integer("intermediate_size")
    return _dense(hidden, inter, 2 * inter + hidden if c.bool("mlp_bias", False) else 0)


def _moe(experts: int, per_token: int, expert: int, hidden: int, router_bias: int,
         shared: int = 0, shapes: tuple = ()) -> _Counted:
    if experts > MAX_EXPERTS:
        raise InvalidInputError(M.ERROR_CONFIG_TOO_MANY_EXPERTS(most=MAX_EXPERTS), f"{FIELD}.num_experts")
    if not 1 <= per_token <= experts:
        raise InvalidInputError(M.ERROR_CONFIG_EXPERTS_PER_TOKEN(), f"{FIELD}.num_experts_per_tok")
    router = hidden * experts + router_bias
    return _Counted(router + experts * expert + shared, router + per_token * expert + shared,
                    experts * expert, shapes)


def _qwen_moe(model_type, c: _Config, hidden, index) -> _Counted:
    step = c.integer("decoder_sparse_step", 1) or 1
    dense_layers = c.once("mlp_only_layers", lambda: _layer_indices(c, "mlp_only_layers"))
    if index in dense_layers or (index + 1) % step:
        return _dense(hidden, c.integer("intermediate_size"))
    shared, shapes = 0, ()
    if model_type == "qwen2_moe":
        shared_inter = c.integer("shared_expert_intermediate_size")
        shared = _gated(hidden, shared_inter) + hidden  # + the shared expert's gate
        shapes = _gated_shapes("mlp", hidden, shared_inter)
    inter, experts = c.integer("moe_intermediate_size"), c.integer("num_experts")
    return _moe(experts, c.integer("num_experts_per_tok"), _gated(hidden, inter), hidden, 0, shared,
                shapes + _gated_shapes("expert", hidden, inter, experts))


def _layer_indices(c: _Config, key: str) -> frozenset[int]:
    indices = c.raw.get(key) or []
    if not isinstance(indices, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in indices):
        raise InvalidInputError(M.ERROR_CONFIG_LAYER_INDICES(key=key), f"{c.prefix}.{key}")
    return frozenset(indices)


def _deepseek_moe(c: _Config, hidden, index) -> _Counted:
    first_dense, freq = c.integer("first_k_dense_replace", 0), c.integer("moe_layer_freq", 1) or 1
    if index < first_dense or index % freq:
        return _dense(hidden, c.integer("intermediate_size"))
    inter = c.integer("moe_intermediate_size")
    expert = _gated(hidden, inter)
    n_shared = c.integer("n_shared_experts", 0)
    experts = c.integer("n_routed_experts")
    # The router has a score-correction bias per expert (e_score_correction_bias).
    return _moe(experts, c.integer("num_experts_per_tok"), expert, hidden, experts, n_shared * expert,
                _gated_shapes("mlp", hidden, inter, n_shared) + _gated_shapes("expert", hidden, inter, experts))


def _glm_mtp(model_type, c: _Config, hidden, layers, heads, kv_heads, head_dim, vocab) -> int:
    """GLM-4.5's checkpoint ships num_nextn_predict_layers MTP layers (model.layers.N onward),
    each a full MoE decoder layer plus enorm, hnorm, eh_proj (2 x hidden -> hidden), a
    shared_head norm, and its own embed_tokens and shared_head.head copies; 0 for other families
    (DeepSeek's published totals leave their MTP module out)."""
    n = c.integer("num_nextn_predict_layers", 0) if model_type == "glm4_moe" else 0
    if not n:
        return 0
    layer = (_attention_params(model_type, c, hidden, heads, kv_heads, head_dim) + 2 * hidden
             + _mlp(model_type, c, hidden, layers).total)
    return n * (layer + 2 * hidden * hidden + 3 * hidden + 2 * vocab * hidden)


def _ungated(hidden: int, intermediate: int, bias: bool) -> _Counted:
    """An MLP without a gate (nemotron's squared ReLU): up and down, two matrices not three."""
    params = 2 * hidden * intermediate + (intermediate + hidden if bias else 0)
    return _Counted(params, params, 0, (("mlp", hidden, intermediate, 1), ("mlp", intermediate, hidden, 1)))


def _llama4_mlp(c: _Config, hidden, index) -> _Counted:
    """Llama 4: MoE layers every interleave_moe_layer_step layers (or those moe_layers lists),
    each num_local_experts routed experts of intermediate_size (fused gate_up and down, no bias),
    a router without bias and one always-on shared expert of the same width; the other layers
    a dense gated MLP of intermediate_size_mlp."""
    step = c.integer("interleave_moe_layer_step", 1) or 1
    layers = c.integer("num_hidden_layers")
    moe_layers = c.once("moe_layers", lambda: _layer_indices(c, "moe_layers")
                        if c.raw.get("moe_layers") is not None
                        else frozenset(range(step - 1, layers, step)))
    if index not in moe_layers:
        return _dense(hidden, c.integer("intermediate_size_mlp", c.raw.get("intermediate_size")))
    inter, experts = c.integer("intermediate_size"), c.integer("num_local_experts")
    return _moe(experts, c.integer("num_experts_per_tok"), _gated(hidden, inter), hidden, 0,
                _gated(hidden, inter),
                _gated_shapes("mlp", hidden, inter) + _gated_shapes("expert", hidden, inter, experts))


def _experts(model_type, c: _Config) -> int:
    key = {"mixtral": "num_local_experts", "gpt_oss": "num_local_experts",
           "llama4_text": "num_local_experts"}.get(
        model_type, "n_routed_experts" if model_type in _DEEPSEEK_MOE else "num_experts")
    return c.integer(key)


def _experts_per_token(c: _Config) -> int:
    return c.integer("num_experts_per_tok", c.raw.get("experts_per_token"))


def _sliding(model_type, c: _Config, layers: int) -> tuple[int | None, int]:
    """The sliding window and how many layers use it."""
    layer_types = c.raw.get("layer_types")
    window = c.optional_integer("sliding_window")
    if isinstance(layer_types, list) and layer_types:
        if len(layer_types) != layers or not all(isinstance(t, str) for t in layer_types):
            raise InvalidInputError(M.ERROR_CONFIG_LAYER_TYPES(), f"{c.prefix}.layer_types")
        sliding = sum(t == "sliding_attention" for t in layer_types)
    elif model_type == "gemma2":
        sliding = (layers + 1) // 2  # even layers slide
    elif model_type == "gemma3_text":
        pattern = c.integer("sliding_window_pattern", 6) or 6
        sliding = sum(1 for i in range(layers) if (i + 1) % pattern)
    elif model_type in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe"):
        if not c.bool("use_sliding_window", False):
            return None, 0
        sliding = max(0, layers - c.integer("max_window_layers", layers))
    elif model_type in ("mistral", "mixtral", "phi3"):
        sliding = layers if window else 0
    elif model_type == "llama4_text":
        return _llama4_chunked(c, layers)
    else:
        return None, 0
    if sliding and not window:
        raise InvalidInputError(M.ERROR_CONFIG_NO_SLIDING_WINDOW(), f"{c.prefix}.sliding_window")
    return (window, sliding) if sliding else (None, 0)


def _llama4_chunked(c: _Config, layers: int) -> tuple[int | None, int]:
    """Llama 4's RoPE layers attend within chunks of attention_chunk_size tokens (its NoPE layers,
    0 in no_rope_layers, attend to everything), so they cache at most one chunk: counted as a
    sliding window of that size, an upper bound on what a chunk needs."""
    chunk = c.optional_integer("attention_chunk_size")
    flags = c.raw.get("no_rope_layers")
    if not chunk:
        return None, 0
    if flags is None or flags == []:  # transformers' default: every no_rope_layer_interval-th is NoPE
        interval = c.integer("no_rope_layer_interval", 4) or 4
        flags = [int((i + 1) % interval != 0) for i in range(layers)]
    if not isinstance(flags, list) or len(flags) != layers or not all(
            f in (0, 1) and not isinstance(f, float) for f in flags):
        raise InvalidInputError(M.ERROR_CONFIG_NO_ROPE_LAYERS(), f"{c.prefix}.no_rope_layers")
    sliding = sum(1 for f in flags if f)
    return (chunk, sliding) if sliding else (None, 0)
