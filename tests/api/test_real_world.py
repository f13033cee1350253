"""Real cards and real models through the API: presets, config.json, formats, MoE, filters."""

import pytest
from pytest import approx

from ..sizing.test_hfconfig import LLAMA_31_8B, MIXTRAL_8X7B
from .support import ok

GB = 1e9


def test_llama_31_8b_on_an_rtx_4090(client):
    answer = ok(client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}))
    assert answer["fit"]["fits"] and answer["fit"]["cards_needed"] == 1
    assert answer["model"]["params"] == 8_030_261_248
    assert answer["memory"]["kv_cache_bytes_per_token"] == 131_072
    # 1008 GB/s over the 15.0 GB a step reads (16.06 GB less the input embedding), 4K context.
    assert answer["throughput"]["decode_tokens_per_s_ceiling"] == approx(1008e9 / (
        2 * (8_030_261_248 - 128256 * 4096) + 131_072 * 4096), rel=1e-6)


def test_the_same_with_an_uploaded_config_json(client):
    preset = ok(client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}))
    uploaded = ok(client.post("/v1/estimate", json={"model": {"hf_config": LLAMA_31_8B, "name": "mine"},
                                                 "hardware": {"card": "rtx-4090"}}))
    assert uploaded["memory"] == preset["memory"]
    assert uploaded["throughput"] == preset["throughput"]


def test_llama_31_70b_in_int4_on_two_rtx_4090(client):
    answer = ok(client.post("/v1/estimate", json={
        "model": "Llama 3.1 70B Instruct", "workload": {"precision": "int4", "context_tokens": 2048},
        "hardware": {"card": "4090", "count": 2}}))
    assert answer["memory"]["weights_bytes"] == approx(70_553_706_496 / 2, rel=1e-9)
    assert answer["fit"]["fits"] is True
    assert answer["parallelism"]["tensor"] == 2  # a serving engine's plan when none is named
    assert answer["throughput"]["link"]["name"] == "PCIe 4.0 x16"
    assert answer["throughput"]["decode_step"]["tensor_comm_s"] > 0  # priced on the link


def test_q4_k_m_of_70b_needs_more_than_two_4090s_at_long_context(client):
    answer = ok(client.post("/v1/estimate", json={
        "model": "llama-3.1-70b", "workload": {"precision": "Q4_K_M", "context_tokens": 32768},
        "hardware": {"card": "rtx-4090", "count": 2}}))
    # Tensor parallelism needs a degree that divides 64 heads and 8 KV heads: 4 cards; a layer
    # split holds it on 3, and the answer says so.
    assert answer["fit"]["fits"] is False and answer["fit"]["cards_needed"] == 4
    fewer = next(a for a in answer["alternatives"] if a["option"]["code"] == "alternative_plan")
    assert fewer["cards_needed"] == 3 and "pipeline 3" in fewer["option"]["message"]


def test_mixtral_holds_every_expert_but_decodes_the_active_ones(client):
    answer = ok(client.post("/v1/estimate", json={"model": "mixtral-8x7b", "hardware": {"card": "h100-sxm"}}))
    assert answer["memory"]["weights_bytes"] == approx(2 * 46.7e9, rel=1e-3)
    assert answer["throughput"]["weights_read_bytes_per_step"] == approx(2 * 12.9e9, rel=0.02)
    decode = next(a for a in answer["assumptions"] if a["name"] == "decode_weights")
    assert "46.7B" in decode["note"]["message"] and "12.9B active" in decode["note"]["message"]


def test_mixtral_config_upload_says_the_same(client):
    answer = ok(client.post("/v1/memory", json={"model": {"hf_config": MIXTRAL_8X7B}}))
    assert answer["model"]["params"] == 46_702_792_704
    assert answer["model"]["active_params"] == 12_879_925_248


def test_an_unreadable_config_is_a_422_naming_the_key(client):
    response = client.post("/v1/estimate", json={"model": {"hf_config": {**LLAMA_31_8B, "model_type": "rwkv"}},
                                              "hardware": {"card": "rtx-4090"}})
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == "model.hf_config.model_type"


def test_sliding_window_caps_mistral_kv_cache(client):
    def kv(context):
        return ok(client.post("/v1/memory", json={"model": "mistral-7b-v0.1",
                                               "workload": {"context_tokens": context}}))["kv_cache_bytes"]
    assert kv(32768) == kv(4096) == 32 * 2 * 8 * 128 * 2 * 4096


def test_gptq_answer_weighs_the_published_checkpoint(client):
    """hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4 (commit a4e6a739): shards of 4.97 GB and
    764 MB, its 16-bit embeddings and head included."""
    answer = ok(client.post("/v1/memory", json={"model": "llama-3.1-8b", "workload": {"precision": "gptq"}}))
    assert answer["weights_bytes"] / 1e9 == approx(4.97 + 0.764, rel=0.02)


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ("line=consumer", lambda cards: {c["line"] for c in cards} == {"consumer"}),
        ("vendor=amd", lambda cards: cards and {c["vendor"] for c in cards} == {"AMD"}),
        ("tier=D-L", lambda cards: cards and {c["tier"] for c in cards} == {"D-L"}),
        ("min_memory_gib=141", lambda cards: cards and min(c["memory_gib"] for c in cards) >= 141),
        ("kind=tier", lambda cards: len(cards) == 10),
        ("kind=card&line=workstation&min_memory_gib=48", lambda cards: cards and all(
            c["kind"] == "card" and c["memory_gib"] >= 48 for c in cards)),
    ],
)
def test_card_filters(client, query, check):
    body = ok(client.get(f"/v1/cards?{query}"))
    assert body["count"] == len(body["cards"])
    assert check(body["cards"])


@pytest.mark.parametrize("query", ["line=gaming", "min_memory_gib=lots", "min_memory_gib=nan", "colour=red"])
def test_bad_card_filters_are_422(client, query):
    assert client.get(f"/v1/cards?{query}").status_code == 422


@pytest.mark.parametrize(
    ("path", "suggestion"),
    [("/cards/rtx-4900", "rtx-4090"), ("/cards/h100-sxn", "h100-sxm"), ("/models/llama-3.1-7b", "llama-3.1-8b")],
)
def test_unknown_names_answer_404_with_the_closest_matches(client, path, suggestion):
    response = client.get(path)
    assert response.status_code == 404 and response.mimetype == "application/problem+json"
    assert suggestion in response.get_json()["detail"]


def test_unknown_card_in_an_estimate_suggests_too(client):
    response = client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "rtx 4900"}})
    assert response.status_code == 422 and "rtx-4090" in response.get_json()["errors"][0]["message"]


def test_model_presets_are_listed_with_their_architecture(client):
    body = ok(client.get("/v1/models"))
    assert body["count"] >= 25
    v3 = ok(client.get("/v1/models/deepseek-ai/DeepSeek-V3"))
    assert v3["attention"] == "mla" and v3["kv_cache_bytes_per_token_bf16"] == 61 * 576 * 2
    assert v3["experts"] == 256 and v3["experts_per_token"] == 8
