"""The guide's formulas, one table each, with the values SPEC.md gives."""

import pytest
from pytest import approx

from service.sizing import cost, memory, scaling, throughput
from service.sizing.units import GB, GIB, KIB, TB


@pytest.mark.parametrize(
    ("params", "bytes_per_param", "expected"),
    [(7e9, 2, 14 * GB), (7e9, 4, 28 * GB), (70e9, 2, 140 * GB), (7e9, 0.5, 3.5 * GB), (7e9, 16, 112 * GB)],
)
def test_weights_bytes(params, bytes_per_param, expected):
    assert memory.weights_bytes(int(params), bytes_per_param) == expected


def test_kv_cache_of_the_guide():
    per_token = memory.kv_cache_bytes_per_token(60, 8, 128, 2)
    assert per_token == 240 * KIB
    assert memory.kv_cache_bytes(per_token, 8192, 1) == 1.875 * GIB
    assert memory.kv_cache_bytes(per_token, 8192, 16) == 32_212_254_720


def test_full_finetune_state_is_16_bytes_per_param():
    assert [b for _, b in memory.FULL_FINETUNE_STATE] == [2, 2, 4, 4, 4]
    assert memory.FULL_FINETUNE_BYTES_PER_PARAM == 16


@pytest.mark.parametrize(
    ("shardable", "overhead", "card", "fraction", "expected"),
    [
        (140 * GB, GIB, 48 * GIB, 0.9, 4),  # 70B on W-B: not 3
        (140 * GB, GIB, 80 * GIB, 0.9, 2),  # 70B on D-M
        (14 * GB, GIB, 16 * GIB, 0.9, 1),
        (1, GIB, GIB, 0.9, None),  # the overhead alone fills the card
    ],
)
def test_least_cards(shardable, overhead, card, fraction, expected):
    assert memory.least_cards(shardable, overhead, card, fraction) == expected


def test_fit_on_cards_agrees_with_least_cards():
    need = memory.least_cards(140 * GB, GIB, 48 * GIB, 0.9)
    assert memory.fit_on_cards(140 * GB, GIB, 48 * GIB, 0.9, need).fits
    assert not memory.fit_on_cards(140 * GB, GIB, 48 * GIB, 0.9, need - 1).fits


@pytest.mark.parametrize(
    ("peak", "bandwidth", "ridge"),
    [(400e12, 2 * TB, 200), (990e12, 4.8 * TB, 206.25), (80e12, 768 * GB, 104.1667)],
)
def test_ridge_point(peak, bandwidth, ridge):
    assert throughput.ridge_flops_per_byte(peak, bandwidth) == approx(ridge, rel=1e-5)


@pytest.mark.parametrize(
    ("bandwidth", "weights", "batch", "ceiling"),
    [(1500 * GB, 14 * GB, 1, 107.14), (600 * GB, 14 * GB, 1, 42.86), (4 * TB, 140 * GB, 1, 28.57),
     (4 * TB, 140 * GB, 16, 457.14)],
)
def test_decode_ceiling(bandwidth, weights, batch, ceiling):
    roof = throughput.decode_roofline(
        bandwidth_bytes_per_s=bandwidth, peak_flops=800e12, weights_read_bytes=weights,
        kv_bytes_per_sequence=0, batch_size=batch, flops_per_token=2 * int(weights / 2))
    assert roof.total_tokens_per_s_ceiling == approx(ceiling, abs=0.01)
    assert roof.bound == "memory"


def test_huge_batches_become_compute_bound():
    roof = throughput.decode_roofline(
        bandwidth_bytes_per_s=2 * TB, peak_flops=400e12, weights_read_bytes=14 * GB,
        kv_bytes_per_sequence=0, batch_size=4096, flops_per_token=14_000_000_000)
    assert roof.bound == "compute"
    assert roof.total_tokens_per_s_ceiling == approx(400e12 / 14e9)


def test_training_compute_and_time():
    flops = scaling.training_compute_flops(7_000_000_000, 1e12)
    assert flops == approx(4.2e22)
    assert scaling.training_time_s(flops, 1, 400e12, 0.4) == approx(2.625e8)
    assert scaling.training_time_s(flops, 64, 400e12, 0.4) == approx(4.1e6, rel=0.01)
    assert scaling.training_time_s(flops, 64, 400e12, 0.4, 0.8) / 86400 == approx(59.3, abs=0.1)


@pytest.mark.parametrize(
    ("cards", "efficiency"),
    [(1, 1.0), (2, 0.95), (4, 0.90), (8, 0.85), (16, 0.80), (32, 0.75), (64, 0.675), (128, 0.6075)],
)
def test_scaling_curve_of_the_guide(cards, efficiency):
    assert scaling.scaling_efficiency(cards) == approx(efficiency)


def test_scaling_curve_never_rises():
    values = [scaling.scaling_efficiency(n) for n in range(1, 4097)]
    assert all(b <= a for a, b in zip(values, values[1:]))


@pytest.mark.parametrize(("link", "expected_ms"), [(900 * GB, 31.11), (64 * GB, 437.5)])
def test_gradient_sync(link, expected_ms):
    assert scaling.gradient_sync_s(28 * GB, link) * 1e3 == approx(expected_ms, abs=0.01)


def test_electricity_of_the_guide():
    day = cost.energy_kwh_per_day(10_000, 24, 1.0, 1.0)
    assert cost.electricity_cost(day, 0.7) == approx(168)
    assert cost.electricity_cost(cost.per_year(day), 0.7) == approx(61_320)
