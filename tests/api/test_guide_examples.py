"""The guide's own training examples next to the service's answers; where they differ, the
README's "The guide's examples" table says why. A change that moves an answer fails here."""

import pytest
from pytest import approx

from .support import post


@pytest.mark.parametrize(
    ("model", "guide_cards", "service_cards"),
    [
        # Guide 5.3: "7B needs 130 GB+: 4 x 80 GB (33 GB each)"; the service splits the state
        # evenly (ZeRO-3-like, as the guide's 33 GB each does) and 2 cards hold 75.6 GB each.
        ("llama-2-7b", 4, 2),
        # Guide: "13B: 8 cards"; 269 GB of state and buffers split over 4 is 74.2 GB a card.
        ("llama-2-13b", 8, 4),
    ],
)
def test_full_fine_tunes_on_80_gb_cards(client, model, guide_cards, service_cards):
    body = {"model": model, "hardware": {"card": "D-M"},
            "workload": {"mode": "full_finetune", "context_tokens": 4096, "batch_size": 1}}
    answer = post(client, "/v1/memory", body)
    assert answer["fit"]["cards_needed"] == service_cards < guide_cards


def test_7b_lora_at_2k_on_c70_is_tight_and_falls_just_short(client):
    """Guide: "C70 (tight: LoRA at batch 1, 2K sequence)". The bf16 frozen base alone is 13.5 GB;
    with activations and the runtime's 1 GiB it needs 16.3 GB of the 15.5 GB usable."""
    body = {"model": "llama-2-7b", "hardware": {"card": "C70", "count": 1},
            "workload": {"mode": "lora", "context_tokens": 2048, "batch_size": 1}}
    answer = post(client, "/v1/memory", body)
    assert not answer["fit"]["fits"] and answer["fit"]["need_bytes_per_card"] / 1e9 == approx(16.3, abs=0.1)
    qlora = post(client, "/v1/memory", {**body, "workload": {**body["workload"], "mode": "qlora"}})
    assert qlora["fit"]["fits"]


@pytest.mark.parametrize(("cards", "guide_days"), [(64, 60), (256, 15)])
def test_7b_on_a_trillion_tokens_at_80_percent_scaling(client, cards, guide_days):
    """Guide: 6 x 7e9 x 1e12 FLOPs at 400 TFLOP/s and 40 %: 64 cards about 60 days at 80 %
    scaling, 256 about 15. Given the guide's 80 %, the service agrees within 5 %; by its own
    step model and the guide's curve it answers differently (the README's table)."""
    body = {"model": {"params_billion": 7}, "hardware": {"card": "D-M", "count": cards},
            "workload": {"mode": "pretrain", "train_tokens": 1e12, "scaling_efficiency": 0.8}}
    assert post(client, "/v1/scaling", body)["run"]["time_s"] / 86400 == approx(guide_days, rel=0.06)
