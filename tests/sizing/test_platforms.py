"""Machines as vendors sell them (data/platforms.toml): a server's or rack's published draw, a
partly filled machine's share of it, the share model fitted on them for other cards, and a
rack-scale NVLink domain as one machine."""

import pytest
from pytest import approx

from service.sizing import HardwareInput, questions
from service.sizing.catalog import catalog, get_card, get_model
from service.sizing.host import (
    Platform,
    fit_rows,
    fit_share_model,
    host_sizing,
    leave_one_out_errors,
    packaged_power_table,
    platform,
    power_table,
)
from service.sizing.inputs import EnergyInput, Notes, WorkloadInput
from service.sizing.links import fabric_for
from service.sizing.plan import cards_per_machine
from service.sizing.units import GB

TABLE = packaged_power_table()
CARD_POWER_W = {c.id: c.power_w for c in catalog().cards if c.kind == "card"}


@pytest.mark.parametrize(("card", "count", "published_w"), [
    ("a100-80gb-sxm", 8, 6_500),  # DGX A100 User Guide 1.1.3 Power Specifications: 6.5 kW max
    ("a100-40gb-sxm", 8, 6_500),  # the same DGX A100 chassis
    ("h100-sxm", 8, 10_200),  # DGX H100/H200 User Guide, Power Specifications: 10.2 kW max
    ("h200-sxm", 8, 10_200),  # the same guide and chassis
    ("b200", 8, 14_300),  # DGX B200 User Guide, Power Specifications: 14.3 kW max
    ("b300", 8, 14_000),  # DGX SuperPOD RA (DGX B300, XDR): ~56 kW a rack of four
    ("gb200", 72, 120_000),  # DGX GB200 NVL72 at GTC 2024: 120 kW a rack
    ("gb300", 72, 136_000),  # Supermicro GB300 NVL72: 132-140 kW a rack, midpoint
])
def test_a_full_machine_draws_what_its_vendor_publishes(card, count, published_w):
    host = host_sizing(get_card(card), count, count)
    assert host.machines == 1
    assert host.typical_power_w == approx(published_w)
    assert host.server_power_w_low == host.server_power_w_high == approx(published_w)


@pytest.mark.parametrize(("hardware", "published_w"), [
    ({"card": "b200", "count": 8}, 14_300),  # DGX B200 User Guide: 14.3 kW max
    ({"card": "gb200", "count": 72}, 120_000),  # one GB200 NVL72 rack: 120 kW (GTC 2024)
    ({"card": "gb200", "count": 144}, 240_000),  # two racks, each counted once
    ({"card": "h100-sxm", "count": 16}, 20_400),  # two DGX H100 at 10.2 kW
])
def test_cost_prices_the_published_machines(hardware, published_w):
    answer = questions.cost(EnergyInput(), HardwareInput(get_card(hardware["card"]), hardware["count"]))
    assert (answer.energy.power_w, answer.energy.power_basis) == (approx(published_w, rel=0.10), "machine")


@pytest.mark.parametrize(("card", "count", "of"), [("b200", 4, 8), ("b200", 1, 8), ("gb200", 8, 72),
                                                     ("gb200", 36, 72)])
def test_a_partly_filled_machine_draws_its_base_and_its_cards_share_of_the_rest(card, count, of):
    """base (the share model's per-machine part: CPUs, memory, drives, idle fans) + count / of of
    the published draw above it."""
    found = TABLE.platform_for(card)
    base = TABLE.share.base_w
    expected = base + count / of * (found.max_power_w - base)
    assert host_sizing(get_card(card), count, of).typical_power_w == approx(expected)
    assert base < expected < found.max_power_w


def test_a_card_without_a_platform_draws_the_fitted_share_model():
    card = get_card("mi300x")  # no published 8 x MI300X system figure in platforms.toml
    assert TABLE.platform_for(card.id) is None
    host = host_sizing(card, 8, 8)
    expected = TABLE.share.card_factor * 8 * card.power_w + TABLE.share.base_w
    assert host.typical_power_w == approx(expected)
    assert host.server_power_w_low < expected < host.server_power_w_high


def test_the_guides_tiers_keep_the_guides_10_to_12_kw():
    host = host_sizing(get_card("D-M"), 8, 8)  # guide 4.3: 10-12 kW per 8 x 700 W server
    assert (host.server_power_w_low, host.server_power_w_high) == approx((10_000, 12_000))


@pytest.mark.parametrize("entry", TABLE.platforms, ids=lambda p: p.id)
def test_leaving_a_platform_out_the_share_model_predicts_it_within_10_percent(entry):
    """How the project scores a fitted constant: each row predicted by the model fitted on the
    others (power.csv repeats this through the service, as `make validate` reports it)."""
    others = power_table([p for p in TABLE.platforms if p is not entry], CARD_POWER_W).share
    predicted = others.power_w(entry.cards_per_machine * CARD_POWER_W[entry.cards[0]])
    assert predicted == approx(entry.max_power_w, rel=0.10)


def test_the_fit_recovers_a_known_line_and_its_leave_one_out_is_exact_on_it():
    rows = [(w, 1.5 * w + 2_000) for w in (3_000, 6_000, 9_000, 80_000)]
    model = fit_share_model(rows)
    assert (model.card_factor, model.base_w) == approx((1.5, 2_000))
    assert leave_one_out_errors(rows) == approx((0, 0, 0, 0), abs=1e-9)


def test_every_platform_names_catalog_data_centre_cards_once_and_a_source():
    held = [card for p in TABLE.platforms for card in p.cards]
    assert len(held) == len(set(held))
    for entry in TABLE.platforms:
        assert entry.source.strip() and entry.max_power_w > 0
        for card in entry.cards:
            assert get_card(card).line == "datacenter", (entry.id, card)
    assert len(fit_rows(TABLE.platforms, CARD_POWER_W)) == len(TABLE.platforms)


@pytest.mark.parametrize(("raw", "message"), [
    ({"id": "x", "cards": [], "cards_per_machine": 8, "max_power_w": 1, "rack_scale": False, "source": "s"},
     "cards must list"),
    ({"id": "x", "cards": ["b200"], "cards_per_machine": 0, "max_power_w": 1, "rack_scale": False,
      "source": "s"}, "cards_per_machine"),
    ({"id": "x", "cards": ["b200"], "cards_per_machine": 8, "max_power_w": -5, "rack_scale": False,
      "source": "s"}, "max_power_w"),
    ({"id": "x", "cards": ["b200"], "cards_per_machine": 8, "max_power_w": 1, "rack_scale": False},
     "source"),
    ({"id": "x", "cards": ["b200"], "cards_per_machine": 8, "max_power_w": 1, "rack_scale": False,
      "source": "s", "watts": 3}, "unknown keys"),
])
def test_a_bad_platform_entry_is_named_by_file_and_entry(raw, message):
    with pytest.raises(ValueError, match=message) as error:
        platform(raw, "platforms.toml platform 7 (x)")
    assert "platforms.toml platform 7" in str(error.value)


@pytest.mark.parametrize(("card", "given", "expected"), [
    ("gb200", None, 72),  # GB200 NVL72: one NVLink domain of 72 GPUs in one rack
    ("gb300", None, 72),  # GB300 NVL72: the same rack with Blackwell Ultra
    ("b200", None, 8),  # a DGX/HGX B200 baseboard of 8
    ("gb200", 4, 4),  # a caller's machine size is kept
])
def test_a_rack_scale_nvlink_domain_is_one_machine(card, given, expected):
    notes = Notes()
    assert cards_per_machine(get_card(card), given, notes) == expected
    if given is None and expected == 72:
        assert any("one NVLink domain of 72 cards" in a.note for a in notes.assumptions)


def test_a_tensor_by_expert_group_inside_an_nvl72_rack_talks_over_nvlink():
    card = get_card("gb200")
    fabric = fabric_for(card, cards_per_machine(card, None, Notes()), None, Notes())
    for members in (16, 32, 64, 72):  # tensor x expert groups that fit the rack
        assert fabric.link(members) is fabric.inside and "NVLink" in fabric.inside.name
    assert fabric.link(73) is fabric.between
    # One 400 Gb/s port per GPU (DGX GB200 User Guide: 4 x ConnectX-7 400G per 4-GPU tray):
    # each card's share of the rack's network is that of an 8-card server's (8 x 400 Gb/s).
    assert fabric.between.quoted_bytes_per_s == approx(3_600 * GB)
    server = fabric_for(get_card("b200"), 8, None, Notes()).between
    assert fabric.between.bytes_per_s == approx(server.bytes_per_s)


def test_an_estimate_on_gb200_prices_one_rack_as_one_machine():
    answer = questions.estimate(get_model("deepseek-v3").spec, WorkloadInput(), HardwareInput(get_card("gb200"), 72),
                                EnergyInput())
    assert answer.parallelism.cards_per_machine == 72 and answer.parallelism.machines == 1
    assert answer.energy.power_w == approx(120_000, rel=0.10)  # GTC 2024: 120 kW a rack


def test_platform_is_a_frozen_record():
    entry = TABLE.platforms[0]
    assert isinstance(entry, Platform)
    with pytest.raises(AttributeError):
        entry.max_power_w = 1  # type: ignore[misc]
