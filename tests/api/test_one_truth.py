"""One truth per question: every endpoint gives the same figure for the same thing."""

import pytest
from pytest import approx

from .support import post

MODEL = "llama-3.1-8b"


def _estimate_power(client, hardware, energy=None):
    body = {"model": MODEL, "hardware": hardware, "energy": energy or {}}
    answer = post(client, "/estimate", body)
    return answer["energy"]["power_w"], answer["energy"]["power_basis"]


def _cost_power(client, hardware, energy=None):
    answer = post(client, "/cost", {"hardware": hardware, "energy": energy or {}})
    return answer["power_w"], answer["power_basis"]


@pytest.mark.parametrize(
    ("hardware", "power_w"),
    [
        ({"card": "D-M", "count": 8}, 11_000),  # guide 4.3: 10-12 kW per 8 x 700 W server
        ({"card": "h100-sxm", "count": 16}, 22_000),  # two servers, each counted once
        ({"card": "rtx-4090", "count": 2}, 2 * 450 + 250),  # one desktop: cards + its platform
        ({"card": "rtx-4090", "count": 8}, 2 * (4 * 450 + 250)),  # two builds of four
        ({"card": "rtx-4090", "count": 8, "cards_per_node": 8}, 8 * 450 + 250),
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
    plain = post(client, "/cost", {"power_w": 9_500})
    assert (plain["power_w"], plain["power_basis"]) == (9_500, "given")
    batch = post(client, "/estimate/batch", {"items": [{"model": MODEL, "hardware": hardware,
                                                         "energy": given}]})
    assert batch["items"][0]["estimate"]["energy"]["power_basis"] == "given"
