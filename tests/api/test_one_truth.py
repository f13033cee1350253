"""One truth per question: every endpoint gives the same figure for the same thing."""

import pytest
from pytest import approx

from .support import post, texts

MODEL = "llama-3.1-8b"


def _estimate_power(client, hardware, energy=None):
    body = {"model": MODEL, "hardware": hardware, "energy": energy or {}}
    answer = post(client, "/v1/estimate", body)
    return answer["energy"]["power_w"], answer["energy"]["power_basis"]


def _cost_power(client, hardware, energy=None):
    answer = post(client, "/v1/cost", {"hardware": hardware, "energy": energy or {}})
    return answer["power_w"], answer["power_basis"]


@pytest.mark.parametrize(
    ("hardware", "power_w"),
    [
        ({"card": "D-M", "count": 8}, 11_000),  # guide 4.3: 10-12 kW per 8 x 700 W server
        ({"card": "h100-sxm", "count": 16}, 20_400),  # two DGX H100 at 10.2 kW (platforms.toml), each counted once
        ({"card": "rtx-4090", "count": 2}, 2 * 450 + 250),  # one desktop: cards + its platform
        ({"card": "rtx-4090", "count": 8}, 2 * (4 * 450 + 250)),  # two builds of four
        ({"card": "rtx-4090", "count": 8, "cards_per_machine": 8}, 8 * 450 + 250),
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
    plain = post(client, "/v1/cost", {"power_w": 9_500})
    assert (plain["power_w"], plain["power_basis"]) == (9_500, "given")
    batch = post(client, "/v1/estimate/batch", {"items": [{"model": MODEL, "hardware": hardware,
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
    answer = post(client, "/v1/estimate", body)
    assert any(f"{positions:,} positions" in w for w in texts(answer["warnings"])), answer["warnings"]
    assert f"{positions:,} positions" in answer["summary"]
    memory = post(client, "/v1/memory", {"model": model, "workload": {"context_tokens": context_tokens}})
    assert any("beyond" in w for w in texts(memory["warnings"]))


def test_a_context_within_the_models_positions_is_quiet(client):
    body = {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"},
            "workload": {"context_tokens": 131_072}}
    assert not any("beyond" in w for w in post(client, "/v1/estimate", body)["warnings"])


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


def _weights_gb(answer):
    return answer["memory"]["weights_bytes"] / 1e9


@pytest.mark.parametrize(
    ("model", "card", "precision", "published_gb"),
    [
        # OpenAI model card arXiv 2508.10925 Table 1: checkpoints of 12.8 and 60.8 GiB; "within
        # 16GB of memory" and "a single 80GB GPU".
        ("gpt-oss-20b", "rtx-4080-super", "mxfp4", 12.8 * 2**30 / 1e9),
        ("gpt-oss-120b", "h100-sxm", "mxfp4", 60.8 * 2**30 / 1e9),
        # DeepSeek-V3 ships FP8 (128x128 block scales): 671B parameters at one byte, about 673 GB
        # without the multi-token-prediction module; eight H200s hold it.
        ("deepseek-v3", "h200-sxm", "fp8", 673.2),
    ],
)
def test_models_default_to_the_format_they_ship_in(client, model, card, precision, published_gb):
    answer = post(client, "/v1/estimate", {"model": model, "hardware": {"card": card}})
    assert answer["precision"] == precision
    assert _weights_gb(answer) == approx(published_gb, rel=0.02)
    assert answer["fit"]["fits"] and answer["fit"]["cards_needed"] == (8 if model == "deepseek-v3" else 1)
    said = next(a for a in answer["assumptions"] if a["name"] == "precision")
    assert said["value"] == precision and "ships" in said["note"]["message"]
    assert "precision bf16" in {alt["option"]["message"] for alt in answer["alternatives"]}


def test_a_gguf_engine_keeps_the_tensors_outside_the_experts_at_q8_0(client):
    """gpt-oss-20b-MXFP4.gguf is 12,109,565,632 bytes: attention and tables at Q8_0, not BF16."""
    body = {"model": "gpt-oss-20b", "hardware": {"card": "rtx-4090"}, "workload": {"engine": "llama.cpp"}}
    assert _weights_gb(post(client, "/v1/estimate", body)) == approx(12.11, rel=0.03)


def test_a_format_asked_for_and_training_keep_their_precision(client):
    asked = post(client, "/v1/estimate", {"model": "gpt-oss-20b", "hardware": {"card": "h100-sxm"},
                                       "workload": {"precision": "bf16"}})
    assert asked["precision"] == "bf16" and _weights_gb(asked) == approx(41.8, rel=0.01)
    tuned = post(client, "/v1/memory", {"model": "deepseek-v3", "workload": {"mode": "lora"}})
    assert tuned["precision"] == "bf16"


def test_an_hf_config_says_its_format():
    from service.sizing import model_from_hf_config
    config = {"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 2,
              "num_attention_heads": 8, "vocab_size": 1000, "intermediate_size": 2048}
    assert model_from_hf_config({**config, "torch_dtype": "float16"}).released_precision == "fp16"
    awq = {**config, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}
    assert model_from_hf_config(awq).released_precision == "awq-int4-g128"
    odd = {**config, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": -1}}
    assert model_from_hf_config(odd).released_precision is None


@pytest.mark.parametrize(
    ("typed", "card", "others"),
    [
        ("A100", "a100-80gb-sxm", ("a100-80gb-pcie", "a100-40gb-sxm")),
        ("A100 80GB", "a100-80gb-sxm", ("a100-80gb-pcie",)),
        ("H100", "h100-sxm", ("h100-pcie", "h100-nvl")),
        ("A800", "a800-80gb-sxm", ("a800-80gb-pcie",)),
        ("H800", "h800-sxm", ("h800-pcie",)),
    ],
)
def test_a_family_name_resolves_to_its_common_variant_and_names_the_others(client, typed, card, others):
    answer = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "hardware": {"card": typed}})
    assert answer["card"]["id"] == card
    said = [w for w in texts(answer["warnings"]) if "taken as" in w]
    assert said and all(o in said[0] for o in others)
    cost = post(client, "/v1/cost", {"hardware": {"card": typed}})
    assert any("taken as" in w for w in texts(cost["warnings"]))


def test_an_exact_card_name_says_nothing_about_families(client):
    answer = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "hardware": {"card": "a100-80gb-pcie"}})
    assert not any("taken as" in w for w in texts(answer["warnings"]))


@pytest.mark.parametrize(
    ("typed", "model"),
    [("Llama-3-8B", "llama-3-8b"), ("Llama 3 70B", "llama-3-70b"), ("Qwen3-32B", "qwen3-32b"),
     ("Mistral Large", "mistral-large-2407"), ("llama3.1:8b", "llama-3.1-8b"),
     ("Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"), ("Qwen2.5 72B Instruct", "qwen2.5-72b"),
     ("DeepSeek V3", "deepseek-v3"), ("Mixtral 8x7B", "mixtral-8x7b"), ("phi4", "phi-4")],
)
def test_model_names_resolve_as_a_buyer_types_them(client, typed, model):
    assert post(client, "/v1/memory", {"model": typed})["model"]["name"] == \
        client.get(f"/v1/models/{model}").get_json()["name"]


@pytest.mark.parametrize(("typed", "first"), [("A100 90GB", "a100-"), ("RTX 4090 DD", "rtx-4090"),
                                              ("H21", "h20"), ("MI301X", "mi300x")])
def test_a_near_miss_suggests_its_own_family_first(client, typed, first):
    response = client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": typed}})
    assert response.status_code in (404, 422)
    closest = response.get_json()["detail"].split("closest: ")[1]
    assert closest.startswith(first), closest


@pytest.mark.parametrize("card", ["h20", "l20", "a800-80gb-sxm", "a800-80gb-pcie", "h800-sxm",
                                  "rtx-4090-d", "mlu370-x8", "tesla-p40"])
def test_the_cards_chinese_buyers_choose_between_are_in_the_catalog_with_sources(client, card):
    body = client.get(f"/v1/cards/{card}").get_json()
    assert body["id"] == card and body["source"] and body["memory_gib"] > 0


@pytest.mark.parametrize(
    ("precision", "path"),
    [("q4_0", "int8"),  # llama.cpp multiplies GGUF weights through INT8 dot products (DP4A)
     ("fp16", "fp32")],  # Pascal runs FP16 at 1/64 rate: the engine computes in FP32
)
def test_the_roofline_takes_the_compute_path_the_engine_takes(client, precision, path):
    body = {"model": "llama-2-7b", "hardware": {"card": "tesla-p40"},
            "workload": {"precision": precision, "engine": "llama.cpp", "context_tokens": 128}}
    answer = post(client, "/v1/throughput", body)
    assert answer["compute_precision"] == path
    if precision == "q4_0":
        # llama.cpp PR #4766: llama 7B Q4_0 tg128 on a P40 at 56.79 tokens/s.
        assert answer["decode_tokens_per_s_ceiling"] >= 56.79
        assert answer["bound"] == "memory"
    said = {a["name"]: a for a in answer["assumptions"]}
    assert said["compute_path"]["value"] == path


def test_a_custom_card_without_a_line_gets_one_and_says_so(client):
    card = {"memory_gib": 24, "bandwidth_gb_per_s": 1000, "dense_tflops": {"bf16": 160}, "power_w": 450}
    answer = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "hardware": {"card": card}})
    said = {a["name"]: a for a in answer["assumptions"]}
    assert said["hardware.card.line"]["value"] == "consumer"
    big = {**card, "memory_gib": 141, "interconnect_gb_per_s": 900}
    answer = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "hardware": {"card": big}})
    assert {a["name"]: a for a in answer["assumptions"]}["hardware.card.line"]["value"] == "datacenter"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "body",
    [{"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"}},
     {"model": "llama-2-7b", "hardware": {"card": "h100-sxm", "count": 4},
      "workload": {"mode": "full_finetune", "train_tokens": 1e9}},
     {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"}}],
)
def test_the_summary_says_which_figures_are_per_card_and_which_in_all(client, body, lang):
    answer = post(client, "/v1/estimate", {**body, "lang": lang})
    fit, summary = answer["fit"], answer["summary"]
    cards = fit["total_bytes_on_cards"] // fit["need_bytes_per_card"]
    assert f"{fit['need_bytes_per_card'] / 1e9:.1f} GB" in summary
    if cards > 1:
        assert f"{fit['total_bytes_on_cards'] / 1e9:.1f} GB" in summary
        assert ("per card" in summary and "in all" in summary) if lang == "en" else \
            ("每卡" in summary and "合计" in summary)
    else:
        assert answer["memory"]["total_bytes"] == fit["total_bytes_on_cards"]


def test_lora_computes_less_than_a_full_fine_tune_and_syncs_only_adapters(client):
    def scaled(mode, recompute="none"):
        return post(client, "/v1/scaling", {"model": "llama-2-7b", "hardware": {"card": "h100-sxm", "count": 8},
                                         "workload": {"mode": mode, "train_tokens": 1e9, "recompute": recompute}})
    full, lora, lora_full = scaled("full_finetune"), scaled("lora"), scaled("lora", "full")
    assert lora["flops_per_param_token"] == 4 and lora_full["flops_per_param_token"] == 6
    assert lora["run"]["compute_flops"] == approx(full["run"]["compute_flops"] * 4 / 6)
    assert lora["run"]["time_s"] < full["run"]["time_s"] and lora_full["run"]["hardware_flops"] <= full["run"]["hardware_flops"]
    def synced(mode):  # replicated state (ZeRO-0): the data-parallel traffic is the gradients alone
        return post(client, "/v1/scaling", {"model": "llama-2-7b", "hardware": {"card": "h100-sxm", "count": 8},
                                         "workload": {"mode": mode, "train_tokens": 1e9, "zero_stage": 0}})
    assert synced("lora")["data_comm_s"] < synced("full_finetune")["data_comm_s"] / 10


def test_a_run_shorter_than_one_step_takes_one_step(client):
    answer = post(client, "/v1/scaling", {"model": "llama-2-7b", "hardware": {"card": "h100-sxm"},
                                       "workload": {"mode": "full_finetune", "train_tokens": 1e5}})
    assert answer["run"]["steps"] == 1 and answer["run"]["time_s"] >= answer["step_s"]
    assert answer["run"]["time_s_range"]["low"] >= answer["step_s"]


def test_a_deadline_answer_shows_the_deadlines_cards_and_time(client):
    answer = post(client, "/v1/scaling", {"model": "llama-2-7b", "hardware": {"card": "h100-sxm"},
                                       "workload": {"mode": "pretrain", "train_tokens": 1e12},
                                       "deadline_days": 30})
    assert answer["parallelism"]["cards"] == answer["cards_needed_for_deadline"] > answer["cards_needed_by_memory"]
    assert answer["run"]["time_s"] <= 30 * 86400


def test_a_batch_that_fits_no_count_quotes_no_time_and_says_what_fixes_it(client):
    body = {"model": "llama-2-7b", "hardware": {"card": "h100-sxm"},
            "workload": {"mode": "full_finetune", "train_tokens": 1e9, "batch_size": 64,
                         "context_tokens": 4096, "recompute": "selective"}}
    # Both settings given: no recipe may change them (left open, full recomputation fits on 4)
    answer = post(client, "/v1/estimate", body)
    assert answer["fit"]["cards_needed"] is None and answer["training"]["run"]["time_s"] is None
    fix = next(w for w in texts(answer["warnings"]) if "no time is quoted" in w)
    assert "micro-batch" in fix and "recomputation" in fix and "tensor parallelism" in fix
    assert "days" not in answer["summary"]


def test_a_recommend_scenario_says_the_model_and_workload_it_assumed(client):
    answer = post(client, "/v1/recommend", {"scenario": "training_cluster"})
    said = {a["name"]: a["value"] for a in answer["assumptions"]}
    assert said["model"] == "llama-2-7b" and "full_finetune" in said["workload"]
    given = post(client, "/v1/recommend", {"scenario": "training_cluster", "model": "llama-2-13b"})
    assert "model" not in {a["name"] for a in given["assumptions"]}


def test_recommend_takes_power_per_card_or_in_all(client):
    body = {"model": "llama-3.1-8b", "workload": {"precision": "q4_k_m"}}
    per_card = post(client, "/v1/recommend", {**body, "constraints": {"power_w_per_card": 200}})
    assert per_card["tier"]["power_w"] <= 200
    total = post(client, "/v1/recommend", {**body, "constraints": {"power_w_total": 600, "splittable": True}})
    assert total["host"]["typical_power_w"] <= 600  # the machine's draw, as /cost prices it
    both = client.post("/v1/recommend", json={**body, "constraints": {"power_w": 200, "power_w_per_card": 200}})
    assert both.status_code == 422


def test_a_budget_without_prices_is_a_warning(client):
    answer = post(client, "/v1/recommend", {"model": "llama-3.1-8b", "constraints": {"budget": 5000}})
    assert any("cannot be checked" in w for w in texts(answer["warnings"]))


@pytest.mark.parametrize("scenario", ["developer", "team_inference", "training_cluster"])
def test_example_cards_hold_the_job_on_the_recommended_count(client, scenario):
    answer = post(client, "/v1/recommend", {"scenario": scenario})
    said = {a["name"]: a["value"] for a in answer["assumptions"]}
    workload = dict(pair.split("=") for pair in said["workload"].split(", "))
    workload = {k: int(v) if v.isdigit() else v for k, v in workload.items()}
    assert answer["example_cards"]
    for card in answer["example_cards"]:
        held = post(client, "/v1/memory", {"model": said["model"], "workload": workload,
                                        "hardware": {"card": card["id"], "count": answer["count"]}})
        assert held["fit"]["fits"], card["id"]


def test_rank_with_a_model_allows_the_cards_it_needs_up_to_a_machine(client):
    answer = post(client, "/v1/rank", {"line": "datacenter", "model": "llama-3.1-70b"})
    ranked = {r["card"]["id"] for r in answer["ranking"]}
    assert "h100-sxm" in ranked  # two of them hold 70B in bf16
    assert {a["name"]: a["value"] for a in answer["assumptions"]}["count"] == 8


def test_a_derived_figure_is_flagged_the_same_way_everywhere(client):
    note = "D-S: no half-precision figure is given; derived as dense INT8 / 2"
    estimate = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "hardware": {"card": "D-S"}})
    rank = post(client, "/v1/rank", {"line": "datacenter", "cards": ["D-S", "D-M"]})
    for answer in (estimate, rank):
        said = {a["name"]: a["note"]["message"] for a in answer["assumptions"]}
        assert said["D-S.dense_tflops_half_precision"] == note


def test_every_tier_has_two_real_cards(client):
    tiers = client.get("/v1/cards?kind=tier").get_json()["cards"]
    for tier in tiers:
        cards = client.get(f"/v1/cards?tier={tier['id']}&kind=card").get_json()["cards"]
        assert len(cards) >= 2, tier["id"]


def test_llama_3_keeps_its_own_8k_context(client):
    assert client.get("/v1/models/llama-3-8b").get_json()["max_context_tokens"] == 8192
    answer = post(client, "/v1/estimate", {"model": "llama-3-8b", "hardware": {"card": "h100-sxm"},
                                        "workload": {"context_tokens": 16_384}})
    assert any("8,192 positions" in w for w in texts(answer["warnings"]))


@pytest.mark.parametrize("path", ["/rank", "/recommend"])
def test_rank_and_recommend_say_a_context_beyond_the_model(client, path):
    body = {"model": "llama-2-7b", "workload": {"context_tokens": 32_768}}
    answer = post(client, path, {**body, "line": "datacenter"} if path == "/rank" else body)
    assert any("4,096 positions" in w for w in texts(answer["warnings"]))


def test_lora_syncs_the_adapters_gradients_not_the_models(client):
    body = {"model": "llama-2-7b", "hardware": {"card": "h100-sxm", "count": 8}}
    lora = post(client, "/v1/scaling", {**body, "workload": {"mode": "lora", "train_tokens": 1e9}})
    full = post(client, "/v1/scaling", {**body, "workload": {"mode": "full_finetune", "train_tokens": 1e9}})
    assert lora["guide"]["gradient_bytes"] < full["guide"]["gradient_bytes"] / 50


def test_rank_says_family_names_and_ranks_a_card_once(client):
    answer = post(client, "/v1/rank", {"cards": ["A100", "A100 80GB", "H100"]})
    assert [r["card"]["id"] for r in answer["ranking"]].count("a100-80gb-sxm") == 1
    assert sum("taken as" in w for w in texts(answer["warnings"])) == 3


def test_a_memory_size_is_no_model_number_in_a_near_miss(client):
    response = client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "A800 40GB"}})
    assert response.get_json()["detail"].split("closest: ")[1].startswith("a800-")


def test_a_card_whose_figures_conflict_is_named_not_invented(client):
    response = client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "昇腾910B"}})
    assert response.status_code == 422 and "disagree" in response.get_json()["detail"]


def test_training_that_fits_nowhere_warns_of_nothing_but_the_fix(client):
    body = {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090", "count": 8},
            "workload": {"mode": "full_finetune", "train_tokens": 1e9, "context_tokens": 131_072}}
    answer = post(client, "/v1/scaling", {**body, "deadline_days": 10})
    assert answer["run"]["time_s"] is None and not any("ECC" in w for w in texts(answer["warnings"]))
    assert any("none meets the 10-day deadline" in w for w in texts(answer["warnings"]))


def test_an_fp32_checkpoint_is_served_in_16_bit():
    from service.sizing import model_from_hf_config
    config = {"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 2,
              "num_attention_heads": 8, "vocab_size": 1000, "intermediate_size": 2048,
              "torch_dtype": "float32"}
    assert model_from_hf_config(config).released_precision is None
