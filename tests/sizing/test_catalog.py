"""The tiers as catalog data: figures, ranges, missing figures and lookups."""

import pytest

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
