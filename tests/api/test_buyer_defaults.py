"""What a buyer gets for the question a buyer sends (issue "Right out of sample"): the plan the
engine would run for that question, expert parallelism as engines run it, and the stated
default engine when none is named."""

import pytest
from pytest import approx

from service.sizing.engines import DEFAULT_ENGINE, ENGINES

from .support import post

A100_8 = {"card": "a100-80gb-sxm", "count": 8}


def estimate(client, model, hardware, **workload):
    return post(client, "/v1/estimate", {"model": model, "hardware": hardware, "workload": workload})


@pytest.mark.parametrize("engine", [None, "vllm", "tensorrt-llm"])
def test_one_stream_on_eight_cards_runs_tensor_8(client, engine):
    """Llama 2 70B at batch 1 on 8 x A100: every card reads its share of the weights for the one
    stream (about 62 tokens/s are published at tensor 8); four copies of tensor 2 would leave it
    at a quarter of the bandwidth."""
    body = estimate(client, "llama-2-70b", A100_8, precision="bf16", batch_size=1,
                    **({"engine": engine} if engine else {}))
    assert body["parallelism"]["tensor"] == 8 and body["parallelism"]["replicas"] == 1
    assert 40 <= body["throughput"]["decode_tokens_per_s_expected"] <= 80


def test_the_full_load_figures_come_from_the_plan_that_serves_most(client):
    """Beside the one-stream plan, the same cards at full load: more copies of a smaller split
    serve more, and the answer says which plan its full-load figures are for."""
    body = estimate(client, "llama-3.1-8b", A100_8, engine="vllm", batch_size=1)
    speed = body["throughput"]
    assert body["parallelism"]["description"]["message"] == "tensor 8"
    assert speed["full_load"]["plan"]["message"] != "tensor 8"
    alone = estimate(client, "llama-3.1-8b", {"card": "a100-80gb-sxm", "count": 1}, engine="vllm")
    assert speed["full_load"]["total_tokens_per_s"] > 7 * alone["throughput"]["full_load"]["total_tokens_per_s"]


def test_a_large_batch_gets_copies_that_share_it(client):
    body = estimate(client, "llama-3.1-8b", A100_8, engine="vllm", batch_size=512)
    assert body["parallelism"]["replicas"] > 1


@pytest.mark.parametrize(("plan", "cards", "attention_groups"), [
    ({"tensor": 8, "expert": 8}, 8, 1),
    ({"tensor": 1, "expert": 8}, 8, 8),
    ({"tensor": 2, "expert": 8}, 8, 4),
    ({"tensor": 8, "expert": 16}, 16, 2),
])
def test_expert_parallelism_spans_the_cards_that_hold_the_model(client, plan, cards, attention_groups):
    """vLLM, SGLang and TensorRT-LLM spread the experts over the tensor x attention data-parallel
    ranks: tensor 8 with expert 8 runs on 8 cards, not 64."""
    body = estimate(client, "deepseek-r1", {"card": "h200-sxm", "count": cards}, engine="sglang",
                    parallelism=plan)
    par = body["parallelism"]
    assert par["cards"] == cards and par["expert"] == plan["expert"] and par["tensor"] == plan["tensor"]
    assert f"experts spread over {plan['expert']} cards" in par["description"]["message"]
    assert (f"attention data-parallel {attention_groups}" in par["description"]["message"]) == (attention_groups > 1)


def test_an_expert_degree_that_is_no_multiple_of_tensor_is_refused(client):
    response = client.post("/v1/estimate", json={"model": "deepseek-r1", "hardware": {"card": "h200-sxm", "count": 8},
                                              "workload": {"parallelism": {"tensor": 8, "expert": 4}}})
    assert response.status_code == 422
    assert "multiple of tensor 8" in response.get_json()["detail"]


def test_no_engine_named_is_the_stated_default_engine_with_its_costs(client):
    body = estimate(client, "deepseek-r1", {"card": "h200-sxm", "count": 8})
    named = estimate(client, "deepseek-r1", {"card": "h200-sxm", "count": 8}, engine=DEFAULT_ENGINE)
    assert body["throughput"]["decode_tokens_per_s_expected"] == approx(
        named["throughput"]["decode_tokens_per_s_expected"])
    note = next(a["note"]["message"] for a in body["assumptions"] if a["name"] == "decode_efficiency")
    assert note.startswith("no engine named") and ENGINES[None].moe_layer_overhead_s > 0


def test_tensorrt_llm_keeps_an_fp8_kv_cache_with_fp8_weights(client):
    body = estimate(client, "llama-3.1-70b", {"card": "h200-sxm", "count": 8}, engine="tensorrt-llm",
                    precision="fp8")
    def kv(answer):
        return next(a["value"] for a in answer["assumptions"] if a["name"] == "kv_precision")

    assert kv(body) == "fp8"
    other = estimate(client, "llama-3.1-70b", {"card": "h200-sxm", "count": 8}, engine="vllm", precision="fp8")
    assert kv(other) == "bf16"
    ampere = estimate(client, "llama-3.1-8b", {"card": "a100-80gb-sxm"}, engine="tensorrt-llm", precision="fp8")
    assert kv(ampere) == "bf16"  # A100 computes no FP8: the cache stays 16-bit
