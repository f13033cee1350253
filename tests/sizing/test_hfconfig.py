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
    {"model_type": st.sampled_from(["llama", "qwen3_moe", "deepseek_v3", "gpt_oss", "gemma3_text", "x"])},
    optional={key: json_values | st.integers(0, 4096) for key in (
        "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "vocab_size", "intermediate_size", "head_dim", "num_experts", "num_experts_per_tok",
        "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
        "v_head_dim", "n_routed_experts", "num_local_experts", "layer_types", "sliding_window",
        "tie_word_embeddings", "decoder_sparse_step", "mlp_only_layers")},
))
def test_any_config_is_understood_or_refused_never_crashes(config):
    try:
        spec = model_from_hf_config(config)
    except InvalidInputError:
        return
    assert spec.params > 0
