"""Training recipes: with only model, card, count and tokens the service chooses what a Megatron
or FSDP user would (the fastest recipe that fits) and says which; what the caller gives is kept;
fp8 pretraining is answered."""

import pytest

from tests.api.support import post


def _estimate(client, model, card, count, **workload):
    return post(client, "/v1/estimate", {"model": model, "hardware": {"card": card, "count": count},
                                      "workload": {"mode": "pretrain", "context_tokens": 8192, **workload}})


def _recipe(body):
    return next(a for a in body["assumptions"] if a["name"] == "training_recipe")["value"]


def test_llama_3_405b_on_16k_h100s_fits_near_its_published_mfu(client):
    """Llama 3 paper (arXiv 2407.21783) Table 4: 38-43 % MFU on 16,384 H100s at 8K (TP8 PP16)."""
    body = _estimate(client, "llama-3.1-405b", "h100-sxm", 16384, train_tokens=15.6e12)
    assert body["fit"]["fits"]
    assert body["parallelism"]["tensor"] == 8 and body["parallelism"]["pipeline"] > 1
    assert 0.8 * 0.38 <= body["training"]["effective_mfu"] <= 1.25 * 0.41
    assert "recomputation" in _recipe(body)


@pytest.mark.parametrize(("model", "card", "count", "low", "high"), [
    ("llama-3.1-70b", "h100-sxm", 1024, 0.33, 0.5),
    ("llama-3.1-8b", "h100-sxm", 8, 0.33, 0.5),
])
def test_buyer_runs_land_in_the_published_band(client, model, card, count, low, high):
    body = _estimate(client, model, card, count, train_tokens=1e12)
    assert body["fit"]["fits"] and low <= body["training"]["effective_mfu"] <= high


def test_given_settings_are_kept(client):
    body = _estimate(client, "llama-3.1-70b", "h100-sxm", 64, train_tokens=1e12, batch_size=1,
                     recompute="full", zero_stage=3, parallelism={"data": 64})
    assert body["parallelism"]["data"] == 64 and body["parallelism"]["tensor"] == 1
    assert body["parallelism"]["micro_batch"] == 1


@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_bf16_and_fp8_pretraining_are_answered(client, precision):
    body = _estimate(client, "llama-3.1-70b", "h100-sxm", 1024, train_tokens=1e12, precision=precision)
    assert body["fit"]["fits"] and body["training"]["run"]["time_s"] > 0


def test_fp8_runs_faster_than_bf16_but_not_twice(client):
    bf16, fp8 = (_estimate(client, "llama-3.1-70b", "h100-sxm", 1024, train_tokens=1e12, precision=p)
                 for p in ("bf16", "fp8"))
    assert 1.1 < bf16["training"]["run"]["time_s"] / fp8["training"]["run"]["time_s"] < 2


def test_fp8_on_a_card_without_fp8_is_refused(client):
    response = client.post("/v1/estimate", json={
        "model": "llama-3.1-8b", "hardware": {"card": "a100-80gb-sxm", "count": 8},
        "workload": {"mode": "pretrain", "precision": "fp8", "train_tokens": 1e11}})
    assert response.status_code == 422


def test_more_cards_never_slower(client):
    times = [_estimate(client, "llama-3.1-8b", "h100-sxm", n, train_tokens=1e12)["training"]["run"]["time_s"]
             for n in (8, 16, 32, 64)]
    assert times == sorted(times, reverse=True)
