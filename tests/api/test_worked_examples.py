"""Every worked example of SPEC.md, through the HTTP API, with the value the guide gives."""

import pytest
from pytest import approx

from .support import post, texts

GB = 1e9
SEVEN_B = {"params_billion": 7}
SEVENTY_B = {"params_billion": 70}
# SPEC.md, the KV-cache example: 60 layers, 8 KV heads, head dim 128.
THIRTY_B = {"params_billion": 30, "layers": 60, "kv_heads": 8, "head_dim": 128}


@pytest.mark.parametrize(
    ("workload", "field", "expected"),
    [
        ({"precision": "bf16"}, "weights_bytes", 14_000_000_000),  # 7B x 2 B
        ({"precision": "fp16"}, "weights_bytes", 14_000_000_000),
        ({"mode": "full_finetune"}, "model_state_bytes", 112_000_000_000),  # 7B x 16 B
        ({"mode": "lora"}, "model_state_bytes", 21_000_000_000),  # 7B x 3 B
    ],
)
def test_memory_of_7b(client, workload, field, expected):
    body = post(client, "/v1/memory", {"model": SEVEN_B, "workload": workload})
    assert body[field] == expected


def test_full_finetune_breakdown_is_14_14_28_28_28_gb(client):
    body = post(client, "/v1/memory", {"model": SEVEN_B, "workload": {"mode": "full_finetune"}})
    state = [c["bytes"] for c in body["components"] if c["name"]["code"] != "part_runtime_overhead"]
    assert state == [14 * GB, 14 * GB, 28 * GB, 28 * GB, 28 * GB]
    assert body["bytes_per_param"] == 16 and body["total_bytes_range"]["note"]["params"]["high_per_param"] == 20
    assert body["total_bytes_range"]["high"] - body["total_bytes"] == 4 * 7 * GB  # the guide's 16-20 B/param


def test_lora_range_is_2_5_to_3_bytes_per_param(client):
    body = post(client, "/v1/memory", {"model": SEVEN_B, "workload": {"mode": "lora"}})
    said = body["total_bytes_range"]["note"]["params"]
    assert (said["low_per_param"], body["bytes_per_param"]) == (2.5, 3.0)


def test_kv_cache_of_the_guide(client):
    workload = {"context_tokens": 8192, "batch_size": 16, "kv_precision": "bf16"}
    body = post(client, "/v1/memory", {"model": THIRTY_B, "workload": workload})
    assert body["kv_cache_bytes"] == 32_212_254_720  # 30 GiB
    assert body["kv_cache_bytes_per_token"] == 245_760  # 240 KiB
    assert body["kv_cache_bytes_per_sequence"] == approx(1.875 * 2**30)


def test_training_compute_and_time_on_64_cards(client):
    body = post(client, "/v1/scaling", {
        "model": SEVEN_B,
        "workload": {"mode": "pretrain", "train_tokens": 1e12, "mfu": 0.4},
        "hardware": {"card": "D-M", "count": 64},  # 400 TFLOP/s dense
    })
    assert body["run"]["compute_flops"] == approx(4.2e22)
    assert body["run"]["time_s_linear"] == approx(4.1e6, rel=0.01)
    one_card = next(p for p in body["curve"] if p["cards"] == 1)
    assert one_card["time_s"] == approx(2.6e8, rel=0.01)  # 8.3 years


# The guide's 7B on 1T tokens at 80 % scaling: about 60 days on 64 cards, about 15 on 256.
@pytest.mark.parametrize(("count", "days", "tolerance"), [(64, 59.3, 0.1), (256, 15, 0.5)],
                         ids=["64-cards-about-60-days", "256-cards-about-15-days"])
def test_guide_time_at_80_percent_scaling(client, count, days, tolerance):
    body = post(client, "/v1/scaling", {
        "model": SEVEN_B,
        "workload": {"mode": "pretrain", "train_tokens": 1e12, "scaling_efficiency": 0.8},
        "hardware": {"card": "D-M", "count": count},
    })
    assert body["run"]["time_s"] / 86400 == approx(days, abs=tolerance)


@pytest.mark.parametrize(
    ("card", "count", "model", "ceiling", "expected"),
    [
        ({"memory_gib": 32, "bandwidth_gb_per_s": 1500, "dense_tflops": {"bf16": 180},
          "power_w": 575, "line": "consumer"}, 1, SEVEN_B, 107.1, 64.3),
        ("C90", 1, SEVEN_B, 107.1, 64.3),  # C90's typical bandwidth is the guide's 1.5 TB/s
        ({"memory_gib": 16, "bandwidth_gb_per_s": 600, "dense_tflops": {"bf16": 60},
          "power_w": 250, "line": "consumer"}, 1, {"params_billion": 7, "name": "7B"}, 42.9, 25.7),
    ],
)
def test_decode_ceiling_and_expected(client, card, count, model, ceiling, expected):
    body = post(client, "/v1/throughput", {"model": model, "hardware": {"card": card, "count": count}})
    assert body["decode_tokens_per_s_ceiling"] == approx(ceiling, abs=0.05)
    assert body["decode_tokens_per_s_expected"] == approx(expected, abs=0.05)
    assert body["guide"]["decode_tokens_per_s"] == approx(expected, abs=0.05)  # one card: the same rule
    assert body["bound"] == "memory"


def test_multi_card_decode_of_the_guide_is_the_expected_figure(client):
    """140 GB on 2 x D-M: the guide sums the bandwidths, 28.6 tokens/s, about 20 at 70 % over a
    dedicated link; on the guide's own tier with no engine named, that is the answer."""
    body = post(client, "/v1/throughput", {"model": SEVENTY_B, "hardware": {"card": "D-M", "count": 2}})
    assert body["decode_tokens_per_s_ceiling"] == approx(28.6, abs=0.05)
    assert body["guide"]["decode_tokens_per_s"] == approx(20.0, abs=0.05)
    assert body["decode_tokens_per_s_expected"] == approx(20.0, abs=0.05)
    assert body["parallelism"]["tensor"] == 2


def test_a_named_engine_on_the_guides_tier_prices_its_own_costs(client):
    """With an engine named, the plan is priced on its link with the engine's fixed costs: below
    the ceiling, and no longer the guide's flat 70 %."""
    body = post(client, "/v1/throughput", {"model": "llama-2-70b", "hardware": {"card": "D-M", "count": 2},
                                        "workload": {"engine": "vllm", "precision": "fp16"}})
    assert body["decode_tokens_per_s_expected"] < body["decode_tokens_per_s_ceiling"]
    assert body["decode_tokens_per_s_expected"] != approx(body["guide"]["decode_tokens_per_s"], abs=0.05)


def test_single_stream_decode_intensity_is_about_one_flop_per_byte(client):
    body = post(client, "/v1/throughput", {"model": SEVEN_B, "hardware": {"card": "D-M", "count": 1}})
    assert body["arithmetic_intensity_flops_per_byte"] == approx(1.0)
    assert body["ridge_flops_per_byte"] == approx(200.0)  # 400 TFLOP/s at 2 TB/s


def test_batched_decode_of_70b_on_two_d_m_exceeds_300_tokens_per_s(client):
    body = post(client, "/v1/throughput", {
        "model": SEVENTY_B, "workload": {"batch_size": 16}, "hardware": {"card": "D-M", "count": 2},
    })
    assert body["guide"]["total_tokens_per_s"] == approx(320)  # 16 x 28.6 x 70 %
    assert body["total_tokens_per_s"] > 10 * body["decode_tokens_per_s_expected"]


def test_batched_decode_slows_each_stream_once_kv_is_read(client):
    model = {"params_billion": 70, "layers": 80, "kv_heads": 8, "head_dim": 128}
    one, sixteen = (
        post(client, "/v1/throughput", {"model": model, "workload": {"batch_size": b, "context_tokens": 1024},
                                     "hardware": {"card": "D-M", "count": 2}})
        for b in (1, 16)
    )
    assert sixteen["decode_tokens_per_s_expected"] < one["decode_tokens_per_s_expected"]
    assert sixteen["total_tokens_per_s"] > 10 * one["total_tokens_per_s"]


# A 500 ms compute step at 400 TFLOP/s: 6 x 7e9 x 2048 tokens / (400e12 x mfu) = 0.5 s.
MFU_FOR_A_500_MS_STEP = 6 * 7e9 * 2048 / (400e12 * 0.5)


@pytest.mark.parametrize(
    ("card", "sync_ms", "step_ms"),
    [
        ({"memory_gib": 80, "bandwidth_gb_per_s": 2000, "dense_tflops": {"bf16": 400},
          "power_w": 700, "line": "datacenter", "interconnect_gb_per_s": 900}, 31.1, 531.1),
        ({"memory_gib": 80, "bandwidth_gb_per_s": 2000, "dense_tflops": {"bf16": 400},
          "power_w": 700, "line": "workstation", "interconnect_gb_per_s": 64}, 437.5, 937.5),
    ],
    ids=["900-gb-per-s", "pcie-64-gb-per-s"],
)
def test_gradient_sync_of_28_gb_and_the_step_time(client, card, sync_ms, step_ms):
    # SPEC.md: 7B fp32 gradients are 28 GB; with a 500 ms compute step, 531 vs 937 ms.
    body = post(client, "/v1/scaling", {
        "model": SEVEN_B,
        "workload": {"mode": "full_finetune", "train_tokens": 1e9, "context_tokens": 2048,
                     "batch_size": 1, "mfu": MFU_FOR_A_500_MS_STEP},
        "hardware": {"card": card, "count": 4},
    })
    assert body["guide"]["gradient_bytes"] == 28_000_000_000
    assert body["guide"]["micro_batch_compute_s"] == approx(0.5)
    assert body["guide"]["gradient_sync_s"] * 1e3 == approx(sync_ms, abs=0.05)
    assert body["guide"]["first_order_step_s"] * 1e3 == approx(step_ms, abs=0.05)


@pytest.mark.parametrize(("tier", "sync_ms"), [("D-M", 31.1), ("D-L", 31.1), ("W-B", 437.5)])
def test_gradient_sync_on_the_tiers_links(client, tier, sync_ms):
    body = post(client, "/v1/scaling", {
        "model": SEVEN_B, "workload": {"mode": "full_finetune", "train_tokens": 1e9},
        "hardware": {"card": tier, "count": 4},
    })
    assert body["guide"]["gradient_sync_s"] * 1e3 == approx(sync_ms, abs=0.05)


def test_electricity_of_a_10_kw_machine(client):
    body = post(client, "/v1/cost", {"power_w": 10_000, "energy": {"price_per_kwh": 0.7, "installations": 100}})
    assert body["electricity_cost_per_year"] == approx(61_320)
    assert body["electricity_cost_per_day"] == approx(168)
    assert body["energy_kwh_per_year"] == approx(87_600)
    assert body["fleet_electricity_cost_per_year"] == approx(6.132e6)  # 100 installations
    assert body["installations"] == 100


@pytest.mark.parametrize(
    ("tier", "tflops_per_w"),
    [("D-M", 0.57), ("D-L", 0.99)],
)
def test_energy_efficiency_of_data_centre_tiers(client, tier, tflops_per_w):
    ranking = client.post("/v1/rank", json={"line": "datacenter", "cards": [tier]}).get_json()["ranking"]
    efficiency = next(s for s in ranking[0]["scores"] if s["dimension"] == "efficiency_stability")
    assert efficiency["value"] == approx(tflops_per_w, abs=0.005)


def test_d_s_does_two_int8_tops_per_watt(client):
    card = client.get("/v1/cards/D-S").get_json()
    assert card["dense_tflops"]["int8"] / card["power_w"] == approx(2.0)


def test_ridge_point_of_400_tflops_at_2_tb_per_s(client):
    body = post(client, "/v1/throughput", {"model": SEVEN_B, "hardware": {"card": {
        "memory_gib": 80, "bandwidth_gb_per_s": 2000, "dense_tflops": {"bf16": 400},
        "power_w": 700, "line": "datacenter"}, "count": 1}})
    assert body["ridge_flops_per_byte"] == approx(200)


def test_70b_on_w_b_is_not_three_cards(client):
    """3 x 48 GiB leaves too little beside 140 GB of weights; the answer says why."""
    body = post(client, "/v1/estimate", {
        "model": {"params_billion": 70, "layers": 80, "kv_heads": 8, "head_dim": 128},
        "hardware": {"card": "W-B", "count": 3},
    })
    assert body["fit"]["fits"] is False
    assert body["fit"]["cards_needed"] == 4
    assert "short" in body["fit"]["reason"]["message"] and "4 cards are needed" in body["fit"]["reason"]["message"]
    assert any("does not fit" in w for w in texts(body["warnings"]))


def test_70b_on_w_b_without_count_gets_four(client):
    body = post(client, "/v1/estimate", {"model": SEVENTY_B, "hardware": {"card": "W-B"}})
    assert body["fit"]["cards_needed"] == 4 and body["fit"]["count"] == 4 and body["fit"]["fits"] is True


def test_70b_in_half_precision_fits_two_d_m(client):
    body = post(client, "/v1/estimate", {"model": "llama-3.1-70b", "hardware": {"card": "D-M"}})
    assert body["fit"]["cards_needed"] == 2


def test_7b_full_finetune_with_activations_is_about_130_gb(client):
    """Guide: 112 GB of model state, 130 GB+ with activations and buffers."""
    body = post(client, "/v1/memory", {
        "model": {"params_billion": 7, "layers": 32, "hidden_size": 4096},
        "workload": {"mode": "full_finetune", "context_tokens": 4096, "batch_size": 1},
    })
    assert body["total_bytes"] / GB == approx(130, abs=3)
