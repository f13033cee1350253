"""One truth per question: every endpoint gives the same figure for the same thing."""

import pytest
from pytest import approx

from .support import post

MODEL = "llama-3.1-8b"


def _estimate_power(client, hardware, energy=None):
    body = {"model": MODEL, "hardware": hardware, "energy": energy or {}}
    answer = post(client, "/estimate", body)
    return answer["energy"]["power_w"], answer["energy"]["power_basis"]


def _cost_power(client, hardware, energy=None):
    answer = post(client, "/cost", {"hardware": hardware, "energy": energy or {}})
    return answer["power_w"], answer["power_basis"]


@pytest.mark.parametrize(
    ("hardware", "power_w"),
    [
        ({"card": "D-M", "count": 8}, 11_000),  # guide 4.3: 10-12 kW per 8 x 700 W server
        ({"card": "h100-sxm", "count": 16}, 22_000),  # two servers, each counted once
        ({"card": "rtx-4090", "count": 2}, 2 * 450 + 250),  # one desktop: cards + its platform
        ({"card": "rtx-4090", "count": 8}, 2 * (4 * 450 + 250)),  # two builds of four
        ({"card": "rtx-4090", "count": 8, "cards_per_node": 8}, 8 * 450 + 250),
    ],
)
def test_cost_and_estimate_price_the_same_machines(client, hardware, power_w):
    assert _cost_power(client, hardware) == (approx(power_w), "machine")
    assert _estimate_power(client, hardware) == (approx(power_w), "machine")


def test_a_given_draw_is_used_as_given_everywhere(client):
    hardware = {"card": "D-M", "count": 8}
    given = {"power_w": 9_500}
    assert _cost_power(client, hardware, given) == (9_500, "given")
    assert _estimate_power(client, hardware, given) == (9_500, "given")
    plain = post(client, "/cost", {"power_w": 9_500})
    assert (plain["power_w"], plain["power_basis"]) == (9_500, "given")
    batch = post(client, "/estimate/batch", {"items": [{"model": MODEL, "hardware": hardware,
                                                         "energy": given}]})
    assert batch["items"][0]["estimate"]["energy"]["power_basis"] == "given"


@pytest.mark.parametrize(
    ("model", "context_tokens", "positions"),
    [
        ("llama-2-7b", 32_768, 4_096),
        ("llama-3.1-8b", 1_000_000, 131_072),
        ({"params_billion": 7, "layers": 32, "hidden_size": 4096, "attention_heads": 32,
          "max_context_tokens": 2048}, 4_096, 2_048),
    ],
)
def test_a_context_beyond_the_models_positions_is_said(client, model, context_tokens, positions):
    body = {"model": model, "hardware": {"card": "h100-sxm"},
            "workload": {"context_tokens": context_tokens}}
    answer = post(client, "/estimate", body)
    assert any(f"{positions:,} positions" in w for w in answer["warnings"]), answer["warnings"]
    assert f"{positions:,} positions" in answer["summary"]
    memory = post(client, "/memory", {"model": model, "workload": {"context_tokens": context_tokens}})
    assert any("beyond" in w for w in memory["warnings"])


def test_a_context_within_the_models_positions_is_quiet(client):
    body = {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"},
            "workload": {"context_tokens": 131_072}}
    assert not any("beyond" in w for w in post(client, "/estimate", body)["warnings"])


def test_rope_scaling_extends_a_configs_positions():
    from service.sizing import model_from_hf_config
    config = {"model_type": "qwen2", "hidden_size": 1024, "num_hidden_layers": 2,
              "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
              "intermediate_size": 2048, "max_position_embeddings": 32_768,
              "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32_768}}
    spec = model_from_hf_config(config)
    assert spec.max_context_tokens == 131_072
    assert "yarn x4 from 32,768" in spec.context_source
    llama = {**config, "max_position_embeddings": 131_072,
             "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192}}
    assert model_from_hf_config(llama).max_context_tokens == 131_072  # already counted in the config
    assert model_from_hf_config({**config, "rope_scaling": None}).max_context_tokens == 32_768
