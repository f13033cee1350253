"""Many cards at the edges a buyer reaches: batches no single copy holds, models only stages
hold, machines half full, targets smaller than a copy, counts that are not multiples."""

import pytest
from pytest import approx

from .support import post, texts

H100 = "h100-sxm"


def test_a_batch_no_copy_holds_is_served_by_copies(client):
    """100,000 sequences of 8B at 4K context need 54 TB of KV cache: no one copy holds them,
    copies do, and the least count is theirs."""
    body = post(client, "/v1/estimate", {
        "model": "llama-3.1-8b", "workload": {"engine": "vllm", "batch_size": 100_000},
        "hardware": {"card": H100}})
    assert body["fit"]["fits"] and body["fit"]["cards_needed"] is not None
    assert body["parallelism"]["replicas"] > 1 and body["parallelism"]["idle_cards"] == 0
    assert body["fit"]["cards_needed"] * 77.3e9 > 54e12  # no fewer cards than the cache itself takes


def test_copies_beat_one_larger_copy_when_they_take_fewer_cards(client):
    """A batch whose cache takes about 2.5 cards' memory: one copy must split over 4 (tensor
    degrees are powers of two), three copies of one card each hold a third."""
    one = post(client, "/v1/memory", {"model": "llama-3.1-8b", "workload": {"engine": "vllm", "batch_size": 1},
                                   "hardware": {"card": H100, "count": 1}})
    per_sequence = one["kv_cache_bytes_per_sequence"]
    free = one["fit"]["usable_bytes_per_card"] - one["fit"]["need_bytes_per_card"]
    batch = int(2.5 * free // per_sequence)
    body = post(client, "/v1/estimate", {"model": "llama-3.1-8b", "workload": {"engine": "vllm", "batch_size": batch},
                                      "hardware": {"card": H100}})
    assert body["fit"]["cards_needed"] == 3
    assert body["parallelism"]["description"]["message"] == "replicas 3"


def test_an_moe_model_only_pipeline_stages_hold_is_placed_on_them(client):
    """DeepSeek-V3 in bf16 on 8 GiB cards: its dense layers alone overflow a 4-card expert group,
    so no expert degree holds it, while 61 pipeline stages do."""
    body = post(client, "/v1/memory", {"model": "deepseek-v3", "workload": {"engine": "vllm", "precision": "bf16"},
                                    "hardware": {"card": "C30"}})
    assert body["fit"]["fits"] and body["fit"]["cards_needed"] == 244
    assert body["parallelism"]["pipeline"] == 61 and body["parallelism"]["idle_cards"] == 0


def test_a_job_that_fits_nowhere_is_priced_on_the_cards_of_its_largest_copy(client):
    """20T parameters in 8 layers: 4-way tensor x 8 stages still leave 1.25 TB a card."""
    body = post(client, "/v1/estimate", {"model": {"params_billion": 20_000, "layers": 8}, "workload": {"engine": "vllm"},
                                      "hardware": {"card": "rtx-4090"}})
    assert not body["fit"]["fits"] and body["fit"]["cards_needed"] is None
    plan = body["parallelism"]
    assert plan["idle_cards"] == 0 and plan["cards"] == body["fit"]["count"]


def test_a_half_full_machine_still_crosses_the_network(client):
    """15 H100s are two machines (8 + 7): their gradients cross the 12.5 GB/s network as 16's
    do, not for free."""
    def data_comm(count):
        return post(client, "/v1/scaling", {
            "model": "llama-3.1-8b", "workload": {"mode": "pretrain", "train_tokens": 1e12},
            "hardware": {"card": H100, "count": count, "network_gb_per_s": 12.5}})
    fifteen, sixteen, eight = data_comm(15), data_comm(16), data_comm(8)
    assert fifteen["parallelism"]["machines"] == 2
    assert fifteen["data_comm_s"] > 5 * eight["data_comm_s"]
    assert fifteen["data_comm_s"] == approx(sixteen["data_comm_s"], rel=0.25)


@pytest.mark.parametrize("users", [1, 10, 37])
def test_capacity_prices_users_at_the_batch_they_make(client, users):
    """A copy that could run 139 sequences within the target runs only the users there are, and
    they get that batch's speed, the speed /throughput gives for it."""
    body = post(client, "/v1/capacity", {"model": "llama-3.1-70b", "target": {"concurrent_users": users},
                                      "cards": [H100]})
    option = body["options"][0]
    assert option["sequences_per_copy"] * option["copies"] >= users
    assert option["sequences_per_copy"] == -(-users // option["copies"])
    speed = post(client, "/v1/throughput", {
        "model": "llama-3.1-70b",
        "workload": {"batch_size": option["sequences_per_copy"],
                     "parallelism": {k: option["parallelism"][k] for k in ("tensor", "pipeline", "expert")}},
        "hardware": {"card": H100}})
    assert option["tokens_per_s_per_user"] == approx(speed["decode_tokens_per_s_expected"], rel=0.05)


def test_capacity_names_each_cards_assumptions_once_per_card(client):
    body = post(client, "/v1/capacity", {"model": "llama-3.1-70b", "target": {"concurrent_users": 50},
                                      "cards": [H100, "H100 SXM", "a100-80gb-sxm", H100]})
    assert [o["card"]["id"] for o in body["options"]] == [H100, "a100-80gb-sxm"]
    for option in body["options"]:
        names = {a["name"] for a in option["assumptions"]}
        assert {"cards_per_machine", "decode_efficiency", "achievable_bandwidth_fraction"} <= names


def test_a_count_that_is_not_a_multiple_of_a_copy_trains_on_the_copies_it_holds(client):
    """70B LoRA takes a tensor-4 copy of H100s: five cards run it on four and say one idles."""
    def on(count):
        return post(client, "/v1/estimate", {"model": "llama-3.1-70b", "workload": {
            "mode": "lora", "batch_size": 8, "train_tokens": 1e10}, "hardware": {"card": H100, "count": count}})
    four, five = on(4), on(5)
    assert four["fit"]["fits"] and five["fit"]["fits"]
    assert five["parallelism"]["idle_cards"] == 1
    assert five["training"]["run"]["time_s"] == approx(four["training"]["run"]["time_s"])
    assert any("idle" in w for w in texts(five["warnings"]))


def test_a_run_shorter_than_one_step_says_so(client):
    body = post(client, "/v1/scaling", {"model": "llama-3.1-8b", "workload": {
        "mode": "pretrain", "train_tokens": 1e10, "global_batch_tokens": 1e12},
        "hardware": {"card": H100, "count": 8}})
    assert body["run"]["steps"] == 1 and body["run"]["time_s"] >= body["step_s"]  # a run takes whole steps
    assert any("less than one optimizer step" in w for w in texts(body["warnings"]))


def test_the_scaling_curve_says_which_counts_hold_the_job(client):
    body = post(client, "/v1/scaling", {"model": "llama-3.1-70b", "workload": {
        "mode": "pretrain", "train_tokens": 1e12}, "hardware": {"card": H100, "count": 64}})
    least = body["cards_needed_by_memory"]
    assert least > 1
    assert all(point["fits"] == (point["cards"] >= least) for point in body["curve"])


@pytest.mark.parametrize(("workload", "field"), [
    ({"output_tokens": 4096}, "workload.output_tokens"),
    ({"prompt_tokens": 4096}, "workload.prompt_tokens"),
    ({"prompt_tokens": 3000, "output_tokens": 2000, "context_tokens": 4096}, "workload.output_tokens"),
])
def test_a_request_that_leaves_no_room_in_the_context_is_refused(client, workload, field):
    response = client.post("/v1/throughput", json={"model": "llama-3.1-8b", "workload": workload,
                                                "hardware": {"card": H100}})
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == field
