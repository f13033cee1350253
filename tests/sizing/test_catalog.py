"""The tiers as catalog data: figures, ranges, missing figures and lookups."""

import pytest
from pytest import approx

from service.sizing.cards import normalise_name
from service.sizing.catalog import catalog, get_card, get_model, model_catalog
from service.sizing.errors import SizingError, UnknownCardError, UnknownModelError
from service.sizing.units import GB, GIB

TIERS = ("C30", "C60", "C70", "C90", "W-A", "W-B", "W-C", "D-S", "D-M", "D-L")


def test_the_ten_tiers_in_the_guides_order():
    assert tuple(c.id for c in catalog().cards if c.kind == "tier") == TIERS


@pytest.mark.parametrize(
    ("tier", "memory_gib", "bandwidth_gb_per_s", "power_w", "line", "ecc"),
    [
        ("C30", 8, 250, 115, "consumer", False),
        ("C60", 12, 360, 150, "consumer", False),
        ("C70", 16, 600, 250, "consumer", False),
        ("C90", 32, 1500, 575, "consumer", False),
        ("W-A", 24, 768, 250, "workstation", True),
        ("W-B", 48, 1200, 300, "workstation", True),
        ("W-C", 96, 2400, 600, "workstation", True),
        ("D-S", 32, 1500, 400, "datacenter", True),
        ("D-M", 80, 2000, 700, "datacenter", True),
        ("D-L", 141, 4800, 1000, "datacenter", True),
    ],
)
def test_tier_figures(tier, memory_gib, bandwidth_gb_per_s, power_w, line, ecc):
    card = get_card(tier)
    assert card.memory_bytes == memory_gib * GIB
    assert card.bandwidth_bytes_per_s == bandwidth_gb_per_s * GB
    assert (card.power_w, card.line, card.ecc) == (power_w, line, ecc)
    assert card.source.startswith("guide section")


def test_ranges_are_kept_with_the_typical_value_used():
    c90 = get_card("C90").figures
    assert (c90["memory_gib"].low, c90["memory_gib"].high, c90["memory_gib"].typical) == (24, 32, 32)
    bandwidth = c90["bandwidth_gb_per_s"]
    assert (bandwidth.low, bandwidth.high, bandwidth.typical, bandwidth.status) == (1000, 1800, 1500, "range")


@pytest.mark.parametrize(("tier", "figure"), [("D-S", "dense_tflops.bf16"), ("W-C", "interconnect_gb_per_s")])
def test_figures_the_guide_omits_are_marked_missing(tier, figure):
    fig = get_card(tier).figures[figure]
    assert fig.status == "missing" and fig.typical is None and fig.note


def test_missing_figures_are_not_invented():
    assert "bf16" not in get_card("D-S").dense_flops
    assert get_card("W-C").interconnect_bytes_per_s is None


@pytest.mark.parametrize("name", ["D-M", "d-m", "dm", "D_M", " d m ", "D-M balanced"])
def test_card_lookup_ignores_case_and_separators(name):
    assert get_card(name).id == "D-M"


def test_unknown_card_is_a_lookup_error_naming_the_field():
    with pytest.raises(UnknownCardError) as info:
        get_card("gtx-9999", "hardware.card")
    assert isinstance(info.value, LookupError) and isinstance(info.value, SizingError)
    assert info.value.field == "hardware.card"


@pytest.mark.parametrize(
    ("name", "model_id", "params"),
    [
        ("llama-3.1-70b", "llama-3.1-70b", 70_553_706_496),
        ("Llama 3.1 70B Instruct", "llama-3.1-70b", 70_553_706_496),
        ("LLAMA_2_7B", "llama-2-7b", 6_738_415_616),
        ("Qwen2.5-72B", "qwen2.5-72b", 72_706_203_648),
    ],
)
def test_model_presets_resolve_guessable_names(name, model_id, params):
    preset = get_model(name)
    assert (preset.id, preset.spec.params) == (model_id, params)


def test_every_preset_has_a_source_and_a_kv_shape():
    for preset in model_catalog().models:
        assert preset.spec.source and preset.spec.has_kv_shape, preset.id


def test_unknown_model_is_a_lookup_error():
    with pytest.raises(UnknownModelError):
        get_model("gpt-17")


# --- real cards and model presets -------------------------------------------------------------

REAL = [c for c in catalog().cards if c.kind == "card"]


def test_at_least_thirty_real_cards_from_three_vendors():
    assert len(REAL) >= 30
    assert {"NVIDIA", "AMD", "Intel", "Cambricon"} <= {c.vendor for c in REAL}
    assert {c.line for c in REAL} == {"consumer", "workstation", "datacenter"}


@pytest.mark.parametrize("card", catalog().cards, ids=lambda c: c.id)
def test_every_catalog_entry_has_a_source_and_positive_figures(card):
    assert card.source.strip()
    assert card.memory_bytes > 0 and card.bandwidth_bytes_per_s > 0 and card.power_w > 0
    assert card.dense_flops and all(v > 0 for v in card.dense_flops.values())
    assert card.interconnect_bytes_per_s is None or card.interconnect_bytes_per_s > 0
    assert card.tier in TIERS


@pytest.mark.parametrize("card", REAL, ids=lambda c: c.id)
def test_real_card_ids_are_lowercase_with_dashes(card):
    assert card.id == normalise_name(card.id)


# Datasheet figures (dense; NVIDIA's "with sparsity" tensor figures halved), each pinned here.
@pytest.mark.parametrize(
    ("name", "memory_gib", "bandwidth_gb_per_s", "bf16_tflops", "power_w"),
    [
        ("RTX 4090", 24, 1008, 165.2, 450),  # GeForce: FP32-accumulate tensor rate
        ("RTX 3090", 24, 936.2, 71.2, 350),
        ("RTX 5090", 32, 1792, 209.5, 575),
        ("RTX 6000 Ada Generation", 48, 960, 364, 300),
        ("L4", 24, 300, 121, 72),
        ("L40S", 48, 864, 362.05, 350),
        ("A100 SXM4 80GB", 80, 2039, 312, 400),
        ("H100 PCIe 80GB", 80, 2000, 756.5, 350),
        ("H100 SXM5 80GB", 80, 3350, 989.5, 700),  # datasheet 1979 with sparsity
        ("H200", 141, 4800, 989.5, 700),
        ("B200", 180, 7700, 2250, 1000),
        ("MI300X", 192, 5300, 1307.4, 750),  # AMD: 5.3 TB/s, not the aggregators' 10.3
        ("Gaudi 3", 128, 3670, 1835, 900),
        ("HGX B300", 288, 7700, 2250, 1100),  # Blackwell brief v2.1 Table 3: 4.5 PF sparse
        ("GB300 NVL72", 288, 8000, 2500, 1400),  # rack 180 PF dense / 72
        ("MI355X", 288, 8000, 2500, 1400),  # AMD dense; 5 PF is with sparsity
        ("MI350X", 288, 8000, 2300, 1000),
        ("H100 SXM5 96GB", 96, 3360, 989.5, 700),
    ],
)
def test_cards_pinned_to_their_datasheets(name, memory_gib, bandwidth_gb_per_s, bf16_tflops, power_w):
    card = get_card(name)
    assert card.memory_bytes == memory_gib * GIB
    assert card.bandwidth_bytes_per_s == approx(bandwidth_gb_per_s * GB)
    assert card.dense_flops["bf16"] == approx(bf16_tflops * 1e12)
    assert card.power_w == power_w


@pytest.mark.parametrize(("name", "card_id"), [
    ("4090", "rtx-4090"), ("RTX 4090", "rtx-4090"), ("GeForce RTX 4090", "rtx-4090"),
    ("H100 SXM5 80GB", "h100-sxm"), ("h100_sxm", "h100-sxm"), ("mi300x", "mi300x"),
    ("Gaudi3", "gaudi-3"), ("RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell-ws"),
    ("B300", "b300"), ("GB300", "gb300"), ("mi355x", "mi355x"), ("MI350X", "mi350x"),
    ("RTX PRO 6000 Server Edition", "rtx-pro-6000-blackwell-server"), ("V100 SXM3", "v100-sxm3-32gb"),
    ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"), ("V100", "v100-sxm2-32gb"),
])
def test_card_aliases_people_type(name, card_id):
    assert get_card(name).id == card_id


@pytest.mark.parametrize(("card_id", "fp16_tflops", "fp32_tflops"), [
    ("v100-sxm2-16gb", 125, 15.7), ("v100-sxm2-32gb", 125, 15.7), ("v100-sxm3-32gb", 125, 15.7),
])
def test_volta_has_fp16_tensor_cores_and_no_bf16(card_id, fp16_tflops, fp32_tflops):
    card = get_card(card_id)  # V100 datasheet: 125 TFLOPS tensor, 15.7 FP32; no BF16 path
    assert card.dense_flops["fp16"] == approx(fp16_tflops * 1e12)
    assert card.dense_flops["fp32"] == approx(fp32_tflops * 1e12)
    assert "bf16" not in card.dense_flops


def test_blackwell_ultra_int8_is_cut_and_fp4_dense_is_as_printed():
    b300 = get_card("b300")  # brief v2.1 Table 3: INT8 0.15 / 0.30 POPS, FP4 14 / 18 PF
    assert b300.dense_flops["int8"] == approx(150e12) and b300.dense_flops["fp4"] == approx(14000e12)


@pytest.mark.parametrize("precision", ["bf16", "fp8", "fp4"])
def test_the_server_editions_tensor_rates_are_the_workstations_at_its_fp32_clock(precision):
    """Same GB202 chip; the datasheets give FP32 120 and 125 TFLOPS, so the tensor rates scale alike."""
    server, workstation = get_card("rtx-pro-6000-blackwell-server"), get_card("rtx-pro-6000-blackwell-ws")
    assert server.dense_flops[precision] == approx(workstation.dense_flops[precision] * 120 / 125, rel=1e-3)


def test_sparse_figures_are_halved_and_said():
    assert "sparsity" in get_card("h100-sxm").notes


def test_at_least_25_model_presets_across_families():
    models = model_catalog().models
    assert len(models) >= 25
    assert {m.spec.family for m in models} >= {
        "llama", "qwen2", "qwen3", "qwen3_moe", "mistral", "mixtral", "gemma2", "gemma3_text",
        "deepseek_v3", "phi3", "gpt_oss"}


def _tolerance(published: int) -> float:
    # Rounded marketing figures (671B, 141B) are only as exact as their rounding.
    return 5e-3 if published % 10**8 == 0 else 1e-3


@pytest.mark.parametrize("preset", model_catalog().models, ids=lambda m: m.id)
def test_preset_parameter_count_reproduces_the_published_total(preset):
    assert preset.spec.source and preset.published_params_source
    assert preset.spec.params == approx(preset.published_params, rel=_tolerance(preset.published_params))


@pytest.mark.parametrize(("model_id", "kv_bytes_per_token"), [
    ("llama-3.1-8b", 131_072), ("llama-2-7b", 524_288), ("llama-3.1-70b", 327_680),
    ("deepseek-v3", 61 * 576 * 2), ("qwen2.5-72b", 327_680),
])
def test_preset_kv_cache_per_token_in_bf16(model_id, kv_bytes_per_token):
    spec = get_model(model_id).spec
    assert spec.kv_values_per_token_per_layer * 2 * spec.layers == kv_bytes_per_token
