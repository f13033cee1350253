"""The guide's formulas, one table each, with the values SPEC.md gives."""

import pytest
from pytest import approx

from service.sizing import HardwareInput, cost, custom_card, memory, questions, throughput, training_time
from service.sizing.catalog import get_card, get_model, packaged_catalogs
from service.sizing.decode import expert_width, expert_width_share
from service.sizing.engines import ENGINES
from service.sizing.inputs import EnergyInput, Notes, WorkloadInput, resolve_workload
from service.sizing.model import ModelSpec
from service.sizing.placement import cards_needed
from service.sizing.units import GB, GIB, KIB, TB


@pytest.mark.parametrize(
    ("params", "bytes_per_param", "expected"),
    [(7e9, 2, 14 * GB), (7e9, 4, 28 * GB), (70e9, 2, 140 * GB), (7e9, 0.5, 3.5 * GB), (7e9, 16, 112 * GB)],
)
def test_weights_bytes(params, bytes_per_param, expected):
    assert memory.weights_bytes(int(params), bytes_per_param) == expected


@pytest.mark.parametrize(("precision", "published_bytes", "rel"), [
    ("fp16", 12.55 * GIB, 0.005),  # llama.cpp PR #4766: a 7B model in F16 is 12.55 GiB
    ("q4_0", 3.82e9, 0.02),  # llama.cpp discussion #4167: 3.82 GB in Q4_0
])
def test_weights_of_llama_2_7b_as_llama_cpp_loads_them(precision, published_bytes, rel):
    answer = questions.memory(get_model("llama-2-7b").spec, WorkloadInput(precision=precision), None)
    assert answer.breakdown.weights_bytes == approx(published_bytes, rel=rel)


def _estimate(model: str, card: str, count: int, **workload):
    return questions.estimate(get_model(model).spec, WorkloadInput(**workload), HardwareInput(get_card(card), count),
                              EnergyInput())


def test_kv_cache_of_the_guide():
    """60 layers x 8 KV heads x 128 dims x K and V in bf16: 240 KiB a token, 1.875 GiB a
    sequence of 8192, 16 sequences 32,212,254,720 bytes."""
    values_per_layer = 2 * 8 * 128
    assert memory.kv_cache_bytes_per_sequence(values_per_layer, 2, 60, 1) == 240 * KIB
    per_sequence = memory.kv_cache_bytes_per_sequence(values_per_layer, 2, 60, 8192)
    assert per_sequence == 1.875 * GIB
    assert 16 * per_sequence == 32_212_254_720


# Mistral-7B-v0.1: 32 layers x 8 KV heads x 128 dims x K and V, 4096-token window; 20,000 tokens
# in 16-bit. TensorRT-LLM attends over (and caches) the whole context unless told otherwise.
@pytest.mark.parametrize(("engine", "cached_tokens"), [
    ("vllm", 4096), (None, 4096), ("llama.cpp", 4096), ("tensorrt-llm", 20_000)])
def test_sliding_window_kv_cache_by_engine(engine, cached_tokens):
    workload = WorkloadInput(context_tokens=20_000, precision="bf16", engine=engine)
    answer = questions.memory(get_model("mistral-7b-v0.1").spec, workload, None)
    assert answer.breakdown.kv_cache_bytes_per_sequence == 2 * 32 * 8 * 128 * 2 * cached_tokens


# trtllm-bench caps the running batch at 4,096: a 3B-active MoE in FP4 with short requests on
# one GB200 would hold about 17,000 sequences.
def test_tensorrt_llm_runs_at_most_4096_sequences():
    answer = _estimate("qwen3-30b-a3b", "gb200", 1, engine="tensorrt-llm", precision="nvfp4", prompt_tokens=128,
                       output_tokens=128)
    assert answer.throughput.capacity_batch_size == 4096


# vLLM's default max_num_seqs: 1,024 on cards of at least 70 GiB other than A100s, else 256.
@pytest.mark.parametrize(("card", "cap"), [("h100-sxm", 1024), ("mi300x", 1024), ("a100-80gb-sxm", 256),
                                           ("l40s", 256)])
def test_vllm_runs_as_many_sequences_as_its_default_for_the_card(card, cap):
    answer = _estimate("llama-3.1-8b", card, 1, engine="vllm", precision="bf16", prompt_tokens=128, output_tokens=128)
    assert answer.throughput.capacity_batch_size == cap


# TensorRT-LLM's matmuls reach 55 % of peak under load, and 0.7 of that through the FP4 rate
# (fitted on its perf-overview tables and MLPerf v5.1's NVFP4 runs); other engines keep theirs
# (vLLM 55 %).
@pytest.mark.parametrize(("engine", "precision", "share"), [
    ("tensorrt-llm", "fp8", 0.55), ("tensorrt-llm", "nvfp4", 0.385), ("vllm", "nvfp4", 0.55)])
def test_matmul_share_through_the_fp4_rate(engine, precision, share):
    answer = _estimate("llama-3.1-70b", "b200", 8, engine=engine, precision=precision, prompt_tokens=1000,
                       output_tokens=1000)
    said = {a.name: a.value for a in answer.assumptions}
    assert said["prefill_efficiency"] == approx(share)


@pytest.mark.parametrize(
    ("params", "card", "expected"),
    [
        (70e9, "W-B", 4),  # 140 GB of bf16 weights on 48 GiB cards, 90 % usable, 1 GiB each: not 3
        (70e9, "D-M", 2),  # on 80 GiB cards
        (7e9, "rtx-4060-ti-16gb", 1),  # 14 GB on a 16 GiB card
        (7e9, "C30", 4),  # on 8 GiB cards: 7.2 GB usable each
    ],
)
def test_least_cards_of_the_guide(params, card, expected):
    """The least count the service answers (the engine's plan on the catalog's card)."""
    workload = resolve_workload(WorkloadInput(), Notes())
    needed, _ = cards_needed(ModelSpec(params=int(params), name="m"), workload, packaged_catalogs().cards.get(card))
    assert needed == expected


def test_usable_bytes_is_the_floor_of_the_fraction():
    assert memory.usable_bytes(48 * GIB, 0.9) == 46_385_646_796


def test_ridge_point_of_the_guide():
    """SPEC: 400 TFLOP/s at 2 TB/s is 200 FLOP/byte."""
    assert throughput.ridge_flops_per_byte(400e12, 2 * TB) == approx(200)


def test_ridge_point_of_the_d_l_tier_in_an_answer():
    """The D-L tier (SPEC: 990 TFLOP/s dense bf16, 4.8 TB/s) in the service's own answer."""
    answer = questions.throughput(get_model("llama-3.1-8b").spec, WorkloadInput(), HardwareInput(get_card("D-L")))
    assert answer.throughput.ridge_flops_per_byte == approx(206.25)


def _ceilings(bandwidth_gb_per_s, dense_tflops, params, batch):
    """The service's decode ceilings for a model known by its size on one card of these figures."""
    card = custom_card(memory_gib=10_000, bandwidth_gb_per_s=bandwidth_gb_per_s,
                       dense_tflops={"bf16": dense_tflops}, power_w=700, line="datacenter")
    answer = questions.throughput(ModelSpec(params=int(params), name="m"), WorkloadInput(batch_size=batch),
                                  HardwareInput(card, 1)).throughput
    return answer.decode_tokens_per_s_ceiling, answer.total_tokens_per_s_ceiling, answer.bound


@pytest.mark.parametrize(
    ("bandwidth_gb_per_s", "params", "batch", "ceiling"),
    [(1500, 7e9, 1, 107.14), (600, 7e9, 1, 42.86), (4000, 70e9, 1, 28.57), (4000, 70e9, 16, 457.14)],
)
def test_decode_ceiling(bandwidth_gb_per_s, params, batch, ceiling):
    _, total, bound = _ceilings(bandwidth_gb_per_s, 800, params, batch)
    assert total == approx(ceiling, abs=0.01)
    assert bound == "memory"


def test_huge_batches_become_compute_bound():
    _, total, bound = _ceilings(2000, 400, 7e9, 4096)
    assert bound == "compute"
    assert total == approx(400e12 / 14e9)


def test_training_compute_and_time():
    flops = training_time.training_compute_flops(7_000_000_000, 1e12)
    assert flops == approx(4.2e22)
    assert training_time.training_time_s(flops, 1, 400e12, 0.4) == approx(2.625e8)
    assert training_time.training_time_s(flops, 64, 400e12, 0.4) == approx(4.1e6, rel=0.01)
    assert training_time.training_time_s(flops, 64, 400e12, 0.4, 0.8) / 86400 == approx(59.3, abs=0.1)


# SPEC.md, "the guide's rules of thumb": "scaling efficiency: 4 to 8 cards 85 %, 8 to 16 80 %,
# 16 to 32 75 %; each doubling loses 5-15 %". The points it names are checked as it names them;
# every other count only against its rule, not against the curve's own constants.
@pytest.mark.parametrize(("cards", "efficiency"), [(1, 1.0), (8, 0.85), (16, 0.80), (32, 0.75)])
def test_scaling_curve_of_the_guide(cards, efficiency):
    assert training_time.scaling_efficiency(cards) == approx(efficiency)


@pytest.mark.parametrize("cards", [2 ** k for k in range(12)])
def test_each_doubling_loses_5_to_15_percent(cards):
    kept = training_time.scaling_efficiency(2 * cards) / training_time.scaling_efficiency(cards)
    assert 0.85 <= kept <= 0.95


def test_scaling_curve_never_rises():
    values = [training_time.scaling_efficiency(n) for n in range(1, 4097)]
    assert all(b <= a for a, b in zip(values, values[1:]))


@pytest.mark.parametrize(("link", "expected_ms"), [(900 * GB, 31.11), (64 * GB, 437.5)])
def test_gradient_sync(link, expected_ms):
    assert training_time.gradient_sync_s(28 * GB, link) * 1e3 == approx(expected_ms, abs=0.01)


def test_electricity_of_the_guide():
    day = cost.energy_kwh_per_day(10_000, 24, 1.0, 1.0)
    assert cost.electricity_cost(day, 0.7) == approx(168)
    assert cost.electricity_cost(cost.per_year(day), 0.7) == approx(61_320)


@pytest.mark.parametrize(
    ("capital", "rent_yearly", "operating_yearly", "months"),
    [
        (1_200_000, 525_600, 45_600, 30.0),  # 1.2M up front, saving 40k a month
        (100, 1_212, 12, 1.0),
        (100, 12, 12, None),  # renting costs what running one's own does: never pays back
        (100, 10, 12, None),
    ],
)
def test_break_even_month(capital, rent_yearly, operating_yearly, months):
    got = cost.break_even_months(capital, rent_yearly, operating_yearly)
    assert got == (None if months is None else approx(months))


@pytest.mark.parametrize(
    ("capital", "rent_yearly", "operating_yearly", "years", "share"),
    [
        (1_200_000, 525_600, 45_600, 5, 0.5),  # half the hours: 1.2M of rent saved equals the capital
        (1_200_000, 525_600, 45_600, 1, 1.0),  # one year of renting never costs the capital
        (100, 10, 12, 3, 1.0),                  # renting cheaper than the electricity alone
    ],
)
def test_utilisation_below_which_renting_is_cheaper(capital, rent_yearly, operating_yearly, years, share):
    assert cost.rent_cheaper_below(capital, rent_yearly, operating_yearly, years) == approx(share)


def test_rent_per_year_and_cost_per_run():
    assert cost.rent_per_year(8, 2.5, 24) == approx(8 * 2.5 * 8760)
    assert cost.cost_per_run(365_000, 86_400) == approx(1_000)  # a day's share of a year


# A routed expert's width from its parameters (gate, up and down: 3 x hidden x width a layer),
# and what its matmuls keep of the expert rate: width / (width + 4,000).
@pytest.mark.parametrize(("model", "width", "share"), [
    ("mixtral-8x7b", 14336, 14336 / 18336), ("qwen3-235b-a22b", 1536, 1536 / 5536),
    ("qwen3-30b-a3b", 768, 768 / 4768), ("llama-3.1-70b", None, 1.0)])
def test_narrow_experts_keep_less_of_the_expert_rate(model, width, share):
    spec = get_model(model).spec
    assert expert_width(spec) == (approx(width) if width else None)
    assert expert_width_share(spec, ENGINES["tensorrt-llm"]) == approx(share)
