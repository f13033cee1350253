"""config.json to architecture: exact parameter counts, KV shapes, and refusals that name the key."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest import approx

from service.sizing.errors import InvalidInputError
from service.sizing.hfconfig import model_from_hf_config
from service.sizing.memory import kv_cache_bytes_per_sequence

LLAMA_31_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "vocab_size": 128256, "tie_word_embeddings": False}
LLAMA_31_70B = {**LLAMA_31_8B, "hidden_size": 8192, "intermediate_size": 28672,
                "num_hidden_layers": 80, "num_attention_heads": 64}
LLAMA_2_7B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
              "vocab_size": 32000}
MIXTRAL_8X7B = {**LLAMA_31_8B, "model_type": "mixtral", "vocab_size": 32000,
                "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": None}
QWEN25_7B = {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
             "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
             "vocab_size": 152064, "tie_word_embeddings": False, "use_sliding_window": False,
             "sliding_window": 131072}
GEMMA2_9B = {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336,
             "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
             "head_dim": 256, "vocab_size": 256000, "sliding_window": 4096}
MISTRAL_7B = {**LLAMA_31_8B, "model_type": "mistral", "vocab_size": 32000, "sliding_window": 4096}
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
               "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
               "num_key_value_heads": 128, "vocab_size": 129280, "q_lora_rank": 1536,
               "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
               "v_head_dim": 128, "n_routed_experts": 256, "n_shared_experts": 1,
               "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1}
GPT_OSS_120B = {"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
                "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8,
                "head_dim": 64, "vocab_size": 201088, "num_local_experts": 128,
                "num_experts_per_tok": 4, "attention_bias": True, "sliding_window": 128,
                "layer_types": ["sliding_attention", "full_attention"] * 18}


@pytest.mark.parametrize(
    ("config", "params", "tolerance"),
    [
        (LLAMA_31_8B, 8_030_261_248, 0),  # HF safetensors total
        (LLAMA_31_70B, 70_553_706_496, 0),
        (LLAMA_2_7B, 6_738_415_616, 0),  # config-derived (safetensors 6,738,417,664)
        (MIXTRAL_8X7B, 46_702_792_704, 0),
        (QWEN25_7B, 7_615_616_512, 0),
        (GEMMA2_9B, 9_241_705_984, 0),
        (DEEPSEEK_V3, 671e9, 1e-3),  # DeepSeek-V3 report: 671B without the MTP module
        (GPT_OSS_120B, 116.83e9, 1e-3),  # OpenAI gpt-oss model card: 116.83B
    ],
    ids=["llama-3.1-8b", "llama-3.1-70b", "llama-2-7b", "mixtral-8x7b", "qwen2.5-7b",
         "gemma-2-9b", "deepseek-v3", "gpt-oss-120b"],
)
def test_parameter_count_from_config(config, params, tolerance):
    assert model_from_hf_config(config).params == approx(params, rel=tolerance)


@pytest.mark.parametrize(
    ("config", "active", "tolerance"),
    [(MIXTRAL_8X7B, 12_879_925_248, 0), (DEEPSEEK_V3, 37e9, 0.02)],
    ids=["mixtral-8x7b", "deepseek-v3"],
)
def test_active_parameters_of_moe(config, active, tolerance):
    assert model_from_hf_config(config).active_params == approx(active, rel=tolerance)


@pytest.mark.parametrize(
    ("config", "bytes_per_token"),
    [(LLAMA_31_8B, 131_072), (LLAMA_2_7B, 524_288), (LLAMA_31_70B, 327_680),
     (DEEPSEEK_V3, 61 * (512 + 64) * 2)],  # MLA caches the 512 latent + 64 RoPE key
    ids=["llama-3.1-8b", "llama-2-7b", "llama-3.1-70b", "deepseek-v3-mla"],
)
def test_kv_bytes_per_token_in_bf16(config, bytes_per_token):
    spec = model_from_hf_config(config)
    assert kv_cache_bytes_per_sequence(spec.kv_values_per_token_per_layer, 2, spec.layers, 1) == bytes_per_token


@pytest.mark.parametrize(
    ("config", "sliding_layers", "window"),
    [(MISTRAL_7B, 32, 4096), (GEMMA2_9B, 21, 4096), (GPT_OSS_120B, 18, 128), (QWEN25_7B, 0, None),
     (LLAMA_31_8B, 0, None)],
    ids=["mistral", "gemma2", "gpt-oss", "qwen2-disabled", "llama"],
)
def test_sliding_window_layers(config, sliding_layers, window):
    spec = model_from_hf_config(config)
    assert (spec.sliding_layers, spec.sliding_window) == (sliding_layers, window)


def test_sliding_window_caps_the_kv_cache():
    spec = model_from_hf_config(MISTRAL_7B)
    at_4k = kv_cache_bytes_per_sequence(spec.kv_values_per_token_per_layer, 2, spec.layers, 4096,
                                        spec.sliding_layers, spec.sliding_window)
    at_32k = kv_cache_bytes_per_sequence(spec.kv_values_per_token_per_layer, 2, spec.layers, 32768,
                                         spec.sliding_layers, spec.sliding_window)
    assert at_32k == at_4k


def test_multimodal_config_counts_its_text_model_and_says_so():
    spec = model_from_hf_config({"model_type": "gemma3", "text_config": {
        **GEMMA2_9B, "model_type": "gemma3_text", "sliding_window": 1024}})
    assert "vision encoder is not counted" in spec.notes
    assert spec.sliding_layers == 35  # five local layers to one global


def test_tied_embeddings_default_follows_the_family():
    assert model_from_hf_config(GEMMA2_9B).tied_embeddings is True
    untied = {k: v for k, v in LLAMA_31_8B.items() if k != "tie_word_embeddings"}
    assert model_from_hf_config(untied).tied_embeddings is False


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({**LLAMA_31_8B, "model_type": "mamba"}, "model.hf_config.model_type"),
        ({k: v for k, v in LLAMA_31_8B.items() if k != "hidden_size"}, "model.hf_config.hidden_size"),
        ({**LLAMA_31_8B, "num_hidden_layers": "32"}, "model.hf_config.num_hidden_layers"),
        ({**LLAMA_31_8B, "num_hidden_layers": True}, "model.hf_config.num_hidden_layers"),
        ({**LLAMA_31_8B, "num_key_value_heads": 5}, "model.hf_config.num_key_value_heads"),
        ({**LLAMA_31_8B, "tie_word_embeddings": "no"}, "model.hf_config.tie_word_embeddings"),
        ({**GPT_OSS_120B, "layer_types": ["full_attention"]}, "model.hf_config.layer_types"),
        ({**MIXTRAL_8X7B, "num_experts_per_tok": 9}, "model.hf_config.num_experts_per_tok"),
        ({**DEEPSEEK_V3, "kv_lora_rank": None}, "model.hf_config.kv_lora_rank"),
        ({}, "model.hf_config.model_type"),
        ({**LLAMA_31_8B, "num_hidden_layers": 10**9}, "model.hf_config.num_hidden_layers"),
        ({**MIXTRAL_8X7B, "num_local_experts": 10**8}, "model.hf_config.num_experts"),
        ({**LLAMA_31_8B, "model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2,
          "moe_intermediate_size": 768, "mlp_only_layers": 5}, "model.hf_config.mlp_only_layers"),
    ],
)
def test_configs_it_cannot_understand_are_refused_naming_the_key(config, field):
    with pytest.raises(InvalidInputError) as info:
        model_from_hf_config(config)
    assert info.value.field == field


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(st.fixed_dictionaries(
    {"model_type": st.sampled_from(["llama", "qwen3_moe", "deepseek_v3", "gpt_oss", "gemma3_text", "x",
                                    "kimi_k2", "deepseek_v32", "glm4_moe", "llama4_text", "nemotron"])},
    optional={key: json_values | st.integers(0, 4096) for key in (
        "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "vocab_size", "intermediate_size", "head_dim", "num_experts", "num_experts_per_tok",
        "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
        "v_head_dim", "n_routed_experts", "num_local_experts", "layer_types", "sliding_window",
        "tie_word_embeddings", "decoder_sparse_step", "mlp_only_layers", "index_n_heads",
        "index_head_dim", "q_lora_rank", "interleave_moe_layer_step", "moe_layers", "no_rope_layers",
        "attention_chunk_size", "intermediate_size_mlp", "num_nextn_predict_layers",
        "first_k_dense_replace")},
))
def test_any_config_is_understood_or_refused_never_crashes(config):
    try:
        spec = model_from_hf_config(config)
    except InvalidInputError:
        return
    assert spec.params > 0


# --- families added with Kimi K2, GLM-4.5, DeepSeek-V3.2, Llama 4 and Nemotron-4 ----------------

KIMI_K2 = {**DEEPSEEK_V3, "model_type": "kimi_k2", "num_attention_heads": 64, "num_key_value_heads": 64,
           "n_routed_experts": 384, "first_k_dense_replace": 1, "vocab_size": 163840}
DEEPSEEK_V32 = {**DEEPSEEK_V3, "model_type": "deepseek_v32", "index_n_heads": 64, "index_head_dim": 128,
                "index_topk": 2048}
GLM_45 = {"model_type": "glm4_moe", "attention_bias": True, "head_dim": 128, "hidden_size": 5120,
          "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_attention_heads": 96,
          "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8,
          "first_k_dense_replace": 3, "num_hidden_layers": 92, "num_key_value_heads": 8,
          "tie_word_embeddings": False, "vocab_size": 151552, "use_qk_norm": True}
GLM_45_AIR = {**GLM_45, "hidden_size": 4096, "intermediate_size": 10944, "moe_intermediate_size": 1408,
              "n_routed_experts": 128, "first_k_dense_replace": 1, "num_hidden_layers": 46,
              "use_qk_norm": False}
LLAMA4_SCOUT_TEXT = {"model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128,
                     "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
                     "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
                     "num_key_value_heads": 8, "num_local_experts": 16, "vocab_size": 202048,
                     "tie_word_embeddings": False, "interleave_moe_layer_step": 1,
                     "no_rope_layers": [1, 1, 1, 0] * 12}
LLAMA4_MAVERICK_TEXT = {**LLAMA4_SCOUT_TEXT, "num_local_experts": 128, "interleave_moe_layer_step": 2}
LLAMA4_VISION = {"model_type": "llama4_vision_model", "hidden_size": 1408, "image_size": 336,
                 "intermediate_size": 5632, "num_attention_heads": 16, "num_channels": 3,
                 "num_hidden_layers": 34, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
                 "projector_input_dim": 4096, "projector_output_dim": 4096, "vision_output_dim": 4096}
NEMOTRON4_340B = {"model_type": "nemotron", "hidden_size": 18432, "intermediate_size": 73728,
                  "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 192,
                  "num_hidden_layers": 96, "vocab_size": 256000, "tie_word_embeddings": False,
                  "hidden_act": "relu2"}


def _llama4(text):
    return {"model_type": "llama4", "text_config": text, "vision_config": LLAMA4_VISION}


@pytest.mark.parametrize(
    ("config", "params", "tolerance"),
    [
        (KIMI_K2, 1_026_408_235_864, 1e-6),  # HF safetensors total of Kimi-K2-Instruct
        ({**GLM_45, "num_nextn_predict_layers": 1}, 358_337_791_296, 0),  # HF total, MTP layer included
        ({**GLM_45_AIR, "num_nextn_predict_layers": 1}, 110_468_824_832, 0),
        (GLM_45, 355e9, 7e-3),  # main model alone against the card's rounded 355B
        (DEEPSEEK_V32, 671e9 + 851_524_864, 1e-3),  # V3's 671B plus 61 lightning indexers
        (_llama4(LLAMA4_SCOUT_TEXT), 108_641_793_536, 0),  # HF total, vision tower included
        (LLAMA4_SCOUT_TEXT, 108_641_793_536 - 871_932_416, 0),  # text model alone
        (_llama4(LLAMA4_MAVERICK_TEXT), 400e9, 5e-3),  # Meta: 400B total (rounded)
        (NEMOTRON4_340B, 341e9, 1e-3),  # report: 9.4B embedding + 331.6B non-embedding
    ],
    ids=["kimi-k2", "glm-4.5", "glm-4.5-air", "glm-4.5-main", "deepseek-v3.2", "llama-4-scout",
         "llama-4-scout-text", "llama-4-maverick", "nemotron-4-340b"],
)
def test_parameter_count_of_the_newer_families(config, params, tolerance):
    assert model_from_hf_config(config).params == approx(params, rel=tolerance)


@pytest.mark.parametrize(
    ("config", "active", "tolerance"),
    [
        (KIMI_K2, 32e9, 0.03),  # Moonshot: 32B activated
        (GLM_45, 32e9 + 2 * 151552 * 5120, 0.01),  # Z.ai's 32B leaves the embeddings out
        (GLM_45_AIR, 12e9 + 2 * 151552 * 4096, 0.02),
        (DEEPSEEK_V32, 37e9, 0.04),  # V3's 37B; the indexer adds 0.85B on every token
        (_llama4(LLAMA4_SCOUT_TEXT), 17e9, 0.02),  # Meta: 17B active, text path only
        (_llama4(LLAMA4_MAVERICK_TEXT), 17e9, 0.02),
    ],
    ids=["kimi-k2", "glm-4.5", "glm-4.5-air", "deepseek-v3.2", "llama-4-scout", "llama-4-maverick"],
)
def test_active_parameters_of_the_newer_moes(config, active, tolerance):
    assert model_from_hf_config(config).active_params == approx(active, rel=tolerance)


def test_nemotron_mlp_has_two_matrices_and_biased_layernorms():
    spec = model_from_hf_config(NEMOTRON4_340B)
    per_layer = (18432 * 18432 * 2 + 2 * 18432 * 1536) + 2 * 18432 * 73728 + 4 * 18432
    assert spec.params == 96 * per_layer + 2 * 256000 * 18432 + 2 * 18432
    assert spec.active_params is None and spec.kv_values_per_token_per_layer == 2 * 8 * 192


def test_llama4_interleaves_moe_and_dense_layers_and_chunks_rope_layers():
    maverick = model_from_hf_config(_llama4(LLAMA4_MAVERICK_TEXT))
    assert maverick.moe_layers == 24 and maverick.experts == 128
    assert (maverick.sliding_layers, maverick.sliding_window) == (36, 8192)
    assert model_from_hf_config(LLAMA4_SCOUT_TEXT).moe_layers == 48
    assert "vision encoder and projector (0.87B) are counted" in maverick.notes


def test_dsa_indexer_key_is_cached_with_the_mla_latent():
    spec = model_from_hf_config(DEEPSEEK_V32)
    assert kv_cache_bytes_per_sequence(spec.kv_values_per_token_per_layer, 2, spec.layers, 1) == \
        61 * (512 + 64 + 128) * 2
    assert spec.attention == "mla" and spec.family == "deepseek_v32"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({**DEEPSEEK_V32, "index_head_dim": None}, "model.hf_config.index_head_dim"),
        ({**LLAMA4_SCOUT_TEXT, "no_rope_layers": [1, 0]}, "model.hf_config.no_rope_layers"),
        ({**LLAMA4_SCOUT_TEXT, "moe_layers": "odd"}, "model.hf_config.moe_layers"),
        ({**GLM_45, "use_qk_norm": "yes"}, "model.hf_config.use_qk_norm"),
    ],
)
def test_newer_family_keys_it_cannot_read_are_refused(config, field):
    with pytest.raises(InvalidInputError) as info:
        model_from_hf_config(config)
    assert info.value.field == field
