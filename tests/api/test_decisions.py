"""Procurement decisions: the guide's scenarios, ranking, host sizing, ownership, normalising
marketing figures and the troubleshooting table."""

import pytest
from pytest import approx

from .support import post, texts


# Guide section 5 (SPEC.md "Scenarios the guide works through"): the service's answer, whether
# it agrees with the guide, and the count it finds.
@pytest.mark.parametrize(
    ("scenario", "line", "tier", "count"),
    [
        ("developer", "workstation", "W-A", 1),  # guide: C70 (tight) or W-A
        ("training_cluster", "datacenter", "D-M", 2),  # guide: 4 x 80 GB; 2 hold it
    ],
)
def test_the_guides_scenarios(client, scenario, line, tier, count):
    answer = post(client, "/v1/recommend", {"scenario": scenario})
    assert (answer["line"], answer["tier"]["id"], answer["count"]) == (line, tier, count)
    assert answer["scenario"]["agrees"] is True
    assert answer["reasons"] and answer["summary"] and answer["host"]


def test_team_inference_prefers_four_w_a_to_the_guides_two_w_b_and_says_why(client):
    """Guide: 2 x W-B as replicas. Priced on its links, 4 x W-A in tensor parallel reads 28 %
    more bandwidth at 32 streams; the comparison shows the guide's option and its figure."""
    answer = post(client, "/v1/recommend", {"scenario": "team_inference"})
    assert (answer["line"], answer["tier"]["id"], answer["count"]) == ("workstation", "W-A", 4)
    w_b = next(line for line in texts(answer["scenario"]["comparison"]) if line.startswith("W-B"))
    assert "fits on 2 card(s)" in w_b and "below W-A's" in w_b


def test_the_service_says_where_it_disagrees_with_the_guide(client):
    developer = post(client, "/v1/recommend", {"scenario": "developer"})
    c70 = next(line for line in texts(developer["scenario"]["comparison"]) if line.startswith("C70"))
    assert "disagrees" in c70 and "GB usable" in c70  # 16 GB does not hold a 16-bit 7B LoRA
    cluster = post(client, "/v1/recommend", {"scenario": "training_cluster"})
    assert "where the guide says 4" in cluster["scenario"]["comparison"][0]["message"]


def test_reasons_in_chinese(client):
    answer = post(client, "/v1/recommend", {"scenario": "training_cluster", "lang": "zh"})
    assert any("高速互联" in r for r in texts(answer["reasons"])) and "推荐" in answer["summary"]


@pytest.mark.parametrize(
    ("constraints", "line"),
    [
        ({"continuous_hours": 4}, "consumer"),
        ({"continuous_hours": 4, "ecc": True}, "workstation"),
        ({"continuous_hours": 4, "certified_drivers": True}, "workstation"),
        ({"continuous_hours": 24}, "workstation"),
    ],
)
def test_the_guides_questions_pick_the_line(client, constraints, line):
    answer = post(client, "/v1/recommend", {"model": "llama-3.1-8b", "workload": {"precision": "awq"},
                                         "constraints": constraints})
    assert answer["line"] == line


def test_prices_rank_per_unit_of_cost_and_budget_excludes(client):
    body = {"model": "llama-3.1-8b", "constraints": {"continuous_hours": 24},
            "prices": {"W-A": 20000, "W-B": 60000, "W-C": 200000}, "currency": "CNY"}
    answer = post(client, "/v1/recommend", body)
    assert answer["ranked_by"].endswith("per unit of cost") and answer["tier"]["id"] == "W-A"
    cheap = post(client, "/v1/recommend", {**body, "constraints": {"continuous_hours": 24, "budget": 30000},
                                        "prices": {"W-A": 20000, "W-B": 60000, "W-C": 200000}})
    over = {c["card"]["id"]: c for c in cheap["candidates"]}
    assert not over["W-C"]["fits"] and over["W-C"]["reason"]["code"] == "over_budget"
    assert over["W-C"]["reason"]["params"] == {"cards": 1, "total": 200000, "budget": 30000}


GUIDE_WEIGHTS = {  # SPEC.md "Ranking weights by product line" (guide section 1.2), percent
    "consumer": {"dense_compute": 25, "memory_capacity": 20, "memory_bandwidth": 30, "interconnect": 5,
                 "efficiency_stability": 20},
    "workstation": {"dense_compute": 25, "memory_capacity": 30, "memory_bandwidth": 25, "interconnect": 10,
                    "efficiency_stability": 10},
    "datacenter": {"dense_compute": 30, "memory_capacity": 30, "memory_bandwidth": 25, "interconnect": 15,
                   "efficiency_stability": 0},
}


@pytest.mark.parametrize("line", ["consumer", "workstation", "datacenter"])
def test_ranking_uses_the_guides_weights_for_each_line(client, line):
    answer = post(client, "/v1/rank", {"line": line})
    assert answer["weights"] == GUIDE_WEIGHTS[line]
    assert answer["ranking"]


def test_ranking_order_follows_from_the_scores_shown(client):
    answer = post(client, "/v1/rank", {"line": "datacenter"})
    totals = [r["total_score"] for r in answer["ranking"]]
    assert totals == sorted(totals, reverse=True)
    for row in answer["ranking"]:
        assert row["total_score"] == approx(sum(s["contribution"] for s in row["scores"]), abs=1e-6)
        for s in row["scores"]:
            assert s["contribution"] == approx(s["weight"] * s["score"] / 100, abs=1e-6)
    best_bandwidth = max(r["scores"][2]["value"] for r in answer["ranking"])
    for row in answer["ranking"]:
        bandwidth = row["scores"][2]
        assert bandwidth["dimension"] == "memory_bandwidth"
        assert bandwidth["score"] == approx(100 * bandwidth["value"] / best_bandwidth, abs=1e-6)


def test_memory_is_a_threshold_before_the_ranking(client):
    answer = post(client, "/v1/rank", {"line": "consumer", "model": "llama-3.1-8b", "count": 1})
    ranked = {r["card"]["id"] for r in answer["ranking"]}
    excluded = {e["card"]["id"] for e in answer["excluded"]}
    assert "rtx-4090" in ranked and "C70" in excluded and not ranked & excluded


def test_given_weights_are_used_and_cards_can_be_named(client):
    weights = {"dense_compute": 0, "memory_capacity": 100, "memory_bandwidth": 0, "interconnect": 0,
               "efficiency_stability": 0}
    answer = post(client, "/v1/rank", {"cards": ["rtx-4090", "rtx-5090", "rtx-3090"], "weights": weights})
    assert answer["ranking"][0]["card"]["id"] == "rtx-5090"  # 32 GB beats 24 GB
    assert answer["line"] == "consumer"


def test_a_sparse_int8_figure_of_800_is_200_dense_bf16(client):
    answer = post(client, "/v1/normalize", {"value": 800, "precision": "int8", "sparse": True})
    assert answer["dense_value"] == 400 and answer["dense_bf16"] == 200
    assert answer["dense"]["fp8"] == 400 and answer["dense"]["fp4"] == 800
    assert any(r.startswith("sparse") for r in texts(answer["rules"]))
    assert any(r.startswith("int8 to bf16") for r in texts(answer["rules"]))


def test_geforce_fp16_accumulate_figures_are_halved(client):
    answer = post(client, "/v1/normalize", {"value": 330.3, "precision": "fp16", "accumulate": "fp16"})
    assert answer["dense_bf16"] == approx(165.15)  # RTX 4090's FP32-accumulate rate


def test_eight_d_m_cards_for_three_years(client):
    answer = post(client, "/v1/cost", {"hardware": {"card": "D-M", "count": 8}, "card_price": 200_000,
                                    "energy": {"pue": 1.3, "price_per_kwh": 0.7, "years": 3}})
    # The guide's 8-card server draws 10-12 kW (section 4.3): 11 kW, not the cards' 5.6 kW.
    electricity = 11 * 24 * 365 * 1.3 * 0.7 * 3  # kW x h x PUE x price x years
    assert (answer["power_w"], answer["power_basis"]) == (approx(11_000), "machine")
    assert answer["electricity_cost_over_years"] == approx(electricity)  # 133,922.88
    owned = answer["ownership"]
    assert owned["electricity_over_years"] == approx(electricity)
    assert (owned["total_low"], owned["total_high"]) == approx((1_600_000 * 1.5 + electricity,
                                                                1_600_000 * 2.0 + electricity))


def test_estimate_carries_host_sizing_and_cost_per_million_tokens(client):
    answer = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"},
                                        "card_price": 15000, "energy": {"hours_per_day": 8}})
    host = answer["host"]
    assert host["psu_w"] >= 850 and host["host_ram_gb"] == 96 and host["cpu_cores"] >= 12
    assert answer["ownership"]["cost_per_million_tokens"] > 0


def test_data_centre_host_sizing(client):
    answer = post(client, "/v1/estimate", {"model": "llama-3.1-70b", "hardware": {"card": "D-M", "count": 8}})
    host = answer["host"]
    assert (host["server_power_w_low"], host["server_power_w_high"]) == approx((10_000, 12_000))
    assert host["ups_w"] == approx(1.5 * 12_000) and host["power_feeds"] == 2
    assert any("70 dB" in n for n in texts(host["notes"]))


@pytest.mark.parametrize(("card", "published_w"), [
    ("a100-80gb-sxm", 6_500),  # DGX A100 User Guide: 6.5 kW max (refdata multicard_public.csv D01)
    ("h100-sxm", 10_200),  # 40.8 kW per 4 DGX H100 (refdata multicard_public.csv D06)
])
def test_an_eight_card_server_draws_what_its_vendor_publishes(client, card, published_w):
    host = post(client, "/v1/estimate", {"model": "llama-3.1-70b", "hardware": {"card": card, "count": 8}})["host"]
    assert host["server_power_w_low"] <= published_w <= host["server_power_w_high"]


def test_electricity_of_llama_7b_pretraining(client):
    """LLaMA paper Table 15: 82,432 GPU-hours at 400 W and PUE 1.1 is 36 MWh."""
    answer = post(client, "/v1/cost", {"power_w": 400, "energy": {"pue": 1.1}})
    assert answer["energy_kwh_per_day"] * 82_432 / 24 == approx(36_000, rel=0.01)


@pytest.mark.parametrize(
    ("query", "row"),
    [
        ("报显存不足但还有余量", "fragmentation"),
        ("OOM although memory is free", "fragmentation"),
        ("机器随机重启", "psu"),
        ("multi-card training at half the single-card speed", "interconnect"),
        ("训练 loss 无故发散", "silent_errors"),
        ("a card is not detected", "firmware"),
    ],
)
def test_troubleshooting_finds_the_guides_row(client, query, row):
    response = client.get("/v1/troubleshoot", query_string={"q": query})
    assert response.status_code == 200
    body = response.get_json()
    assert body["matches"][0]["id"] == row
    assert len(body["diagnosis_order"]) == 5 and body["diagnosis_order"][0].startswith("temperature")


def test_troubleshooting_answers_in_chinese_and_gives_power_cap_advice(client):
    body = client.get("/v1/troubleshoot", query_string={"q": "跑几小时后变慢", "lang": "zh"}).get_json()
    assert body["matches"][0]["id"] == "throttling" and body["matches"][0]["fix"].startswith("拉低")
    assert body["advice"] and "80%" in body["advice"][0]
    consumer = client.get("/v1/troubleshoot", query_string={"q": "cuda out of memory", "line": "consumer"}).get_json()
    assert consumer["advice"]
    english = client.get("/v1/troubleshoot", query_string={"q": "slows down"},
                         headers={"Accept-Language": "zh-CN,zh;q=0.9"}).get_json()
    assert english["lang"] == "zh"


def test_troubleshooting_without_a_match_still_gives_the_order(client):
    body = client.get("/v1/troubleshoot", query_string={"q": "purple smoke"}).get_json()
    assert body["matches"] == [] and len(body["diagnosis_order"]) == 5


@pytest.mark.parametrize("lang, said", [
    ("en", "on one card, the count allowed without constraints.splittable; split over cards, 4 x W-B (workstation "
           "line) would."),
    ("zh", "若允许多卡拆分，工作站产品线的 W-B 4 张可以满足。")])
def test_a_recommendation_that_fails_on_one_card_says_so_and_offers_the_split(client, lang, said):
    """70B under 450 W a card: nothing holds it on one card (all a recommendation allows without
    splittable), and the summary says so and names the split that would meet the constraints."""
    body = {"model": "llama-3.1-70b", "constraints": {"power_w_per_card": 450}, "lang": lang}
    answer = client.post("/v1/recommend", json=body).get_json()
    assert said in answer["summary"] and answer["tier"] is None
    split = client.post("/v1/recommend", json={**body, "constraints": {**body["constraints"], "splittable": True}})
    assert split.get_json()["count"] == 4 and split.get_json()["tier"]["id"] == "W-B"
