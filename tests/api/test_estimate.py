"""The estimate's verdict, assumptions and warnings for the guide's situations."""

import pytest
from pytest import approx

from .support import post, texts


def estimate(client, **body):
    return post(client, "/v1/estimate", body)


def names(answer):
    return {a["name"]: a for a in answer["assumptions"]}


def test_every_default_applied_is_reported(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "D-M"})
    assumed = names(answer)
    for name in ("mode", "precision", "context_tokens", "batch_size", "decode_efficiency",
                 "memory_usable_fraction", "runtime_overhead_bytes_per_card", "price_per_kwh"):
        assert name in assumed and assumed[name]["note"], name


def test_given_values_are_not_reported_as_assumptions(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "D-M", "count": 1},
                      workload={"batch_size": 8, "context_tokens": 2048, "precision": "fp8"})
    assert not {"batch_size", "context_tokens", "precision"} & names(answer).keys()


def test_a_consumer_card_asked_to_run_around_the_clock_is_warned(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "C90"},
                      energy={"hours_per_day": 24})
    assert any("consumer card asked to run around the clock" in w for w in texts(answer["warnings"]))
    quiet = estimate(client, model={"params_billion": 7}, hardware={"card": "C90"},
                     energy={"hours_per_day": 4})
    assert not any("around the clock" in w for w in texts(quiet["warnings"]))


def test_a_large_consumer_training_run_collects_its_warnings(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "C90", "count": 64},
                      workload={"mode": "full_finetune", "train_tokens": 1e12})
    text = " ".join(texts(answer["warnings"]))
    assert "more than 32 cards" in text
    assert "without ECC" in text
    assert "around the clock" in text
    assert answer["training"]["run"]["time_s"] / 86400 > 30


def test_d_s_half_precision_is_derived_from_int8_and_said(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "D-S", "count": 1})
    derived = names(answer)["D-S.dense_tflops_half_precision"]
    assert derived["value"] == approx(400) and "INT8" in derived["note"]["message"]


def test_w_c_interconnect_falls_back_to_the_lines_pcie_figure_and_says_so(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "W-C", "count": 2},
                      workload={"mode": "full_finetune", "train_tokens": 1e9})
    assert names(answer)["interconnect_gb_per_s"]["value"] == 64
    assert answer["training"]["guide"]["gradient_sync_s"] == approx(28 / 64)


def test_d_s_training_sync_is_not_invented(client):
    answer = estimate(client, model={"params_billion": 1}, hardware={"card": "D-S", "count": 4},
                      workload={"mode": "full_finetune", "train_tokens": 1e9})
    assert answer["training"]["guide"]["gradient_sync_s"] is None
    assert any("no interconnect bandwidth" in w for w in texts(answer["warnings"]))


def test_kv_cache_left_out_when_the_architecture_is_unknown_is_warned(client):
    answer = estimate(client, model={"params_billion": 7}, hardware={"card": "D-M"})
    assert answer["memory"]["kv_cache_bytes"] is None
    assert any("KV cache not counted" in w for w in texts(answer["warnings"]))


def test_max_concurrent_sequences_fill_the_room_beside_the_weights(client):
    answer = estimate(client, model="llama-3.1-8b", hardware={"card": "D-M", "count": 1},
                      workload={"context_tokens": 8192})
    # Llama-3.1-8B: 8,030,261,248 parameters and 131,072 KV bytes a token in bf16 (refdata
    # models.csv); an "80 GB" card holds 80 GiB (SPEC), 90 % usable beside 1 GiB of runtime.
    room = int(0.9 * 80 * 2**30) - 2**30 - 2 * 8_030_261_248
    assert answer["fit"]["max_concurrent_sequences"] == room // (131_072 * 8192) == 56


@pytest.mark.parametrize(("lang", "phrase"), [("en", "fits on"), ("zh", "放得下")])
def test_summary_in_both_languages(client, lang, phrase):
    answer = estimate(client, model="llama-3.1-8b", hardware={"card": "W-A"}, lang=lang)
    assert phrase in answer["summary"] and answer["lang"] == lang


def test_moe_decode_reads_only_the_active_experts_at_batch_one(client):
    dense = estimate(client, model={"params_billion": 46.7}, hardware={"card": "D-L", "count": 1})
    moe = estimate(client, model="mixtral-8x7b", hardware={"card": "D-L", "count": 1})
    assert moe["throughput"]["decode_tokens_per_s_ceiling"] > 3 * dense["throughput"]["decode_tokens_per_s_ceiling"]


def test_throughput_refuses_training_modes(client):
    response = client.post("/v1/throughput", json={"model": {"params_billion": 7},
                                                "workload": {"mode": "lora"},
                                                "hardware": {"card": "D-M"}})
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == "workload.mode"


def test_catalog_endpoints(client):
    cards = client.get("/v1/cards").get_json()
    assert cards["count"] == len(cards["cards"]) >= 40
    d_s = client.get("/v1/cards/ds").get_json()
    assert d_s["id"] == "D-S" and d_s["figures"]["dense_tflops.bf16"]["status"] == "missing"
    models = client.get("/v1/models").get_json()
    assert models["count"] == len(models["models"]) >= 10
    assert client.get("/v1/models/Llama 3.1 70B Instruct").get_json()["id"] == "llama-3.1-70b"
    assert client.get("/v1/models/gpt-17").status_code == 404


@pytest.mark.parametrize("lang, one", [("en", "One rtx-4090 cannot hold it; it needs 8."),
                                       ("zh", "单张 rtx-4090 放不下，需要 8 张。")])
def test_a_question_without_a_count_hears_the_verdict_for_one_card_first(client, lang, one):
    """"一张4090能全参微调Qwen2.5-7B吗" reaches the service without a count: the summary says first
    that one card cannot hold it, then how many can."""
    answer = client.get("/v1/estimate", query_string={"model": "qwen2.5-7b", "card": "4090", "mode": "full_finetune",
                                                      "lang": lang}).get_json()
    assert one in answer["summary"]
    assert answer["summary"].index(one) < answer["summary"].index("8 x rtx-4090" if lang == "en" else "8 张 rtx-4090 放得下")
    given = client.get("/v1/estimate", query_string={"model": "qwen2.5-7b", "card": "4090", "count": 8,
                                                     "mode": "full_finetune", "lang": lang}).get_json()
    assert one not in given["summary"]  # a count asked is answered as asked


@pytest.mark.parametrize("lang, said", [("en", "In q4_k_m it fits on 2 x rtx-4090, at about"),
                                        ("zh", "改用 q4_k_m，2 张 rtx-4090 放得下")])
def test_cards_too_small_for_the_format_asked_hear_the_format_that_fits_on_them(client, lang, said):
    """"Can Llama 3.1 70B run on two RTX 4090s?": not only "8 are needed" in bf16, but the largest
    smaller format that fits on the two, and its speed there (the alternatives say the same)."""
    query = {"model": "llama-3.1-70b", "card": "rtx-4090", "count": 2, "lang": lang}
    answer = client.get("/v1/estimate", query_string=query).get_json()
    assert said in answer["summary"]
    q4 = next(a for a in answer["alternatives"] if a["option"]["params"]["precision"] == "q4_k_m")
    assert q4["cards_needed"] <= 2
    fitting = client.get("/v1/estimate", query_string={**query, "count": 8}).get_json()
    assert "q4_k_m" not in fitting["summary"]  # cards that hold the format asked hear nothing of others
