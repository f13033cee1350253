"""A default answer states each figure once: no field of the same name carries the same value in
two places of one answer (a copy), whatever the question."""

from collections import defaultdict

import pytest

from .support import post

# Keys whose meaning is their parent's: a range's low/typical/high, a message's parts, a card's id.
GENERIC = {"low", "typical", "high", "note", "code", "message", "params", "id", "name"}
# Lists are series (a curve, other jobs, each assumption or part): their items may repeat a figure
# of the answer's own, at another batch or in another format, by design.
SERIES = {"decode_curve", "alternatives", "assumptions", "warnings", "components", "curve", "options"}
# A message's params are the values its sentence was made from: they restate figures by design.
MADE_FROM = {"params"}
# Parts that say which quantity their fields are: the bound of the full-load step is not the bound
# of the asked batch's step, though both are called `bound` (`throughput.full_load.bound`).
CONTEXTS = {"full_load", "guide", "link"}

QUESTIONS = [
    {"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}},
    {"model": "deepseek-v3", "hardware": {"card": "h200-sxm"}},
    {"model": "qwen2.5-7b", "hardware": {"card": "l40s", "count": 3}, "workload": {"batch_size": 16}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "workload": {"mode": "lora", "train_tokens": 1e9}},
    {"model": "llama-2-7b", "hardware": {"card": "D-M", "count": 8},
     "workload": {"mode": "pretrain", "train_tokens": 1e11}},
]


def _leaves(value, path=(), meaning=None, context=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if key in CONTEXTS:
                yield from _leaves(item, (*path, key), key, f"{context}{key}.")
            elif key not in SERIES and key not in MADE_FROM:
                yield from _leaves(item, (*path, key), f"{meaning}.{key}" if key in GENERIC else context + key,
                                   context)
    elif not isinstance(value, list):
        yield meaning, ".".join(path), value


@pytest.mark.parametrize("body", QUESTIONS, ids=lambda b: f"{b['model']}-{b['hardware']['card']}")
def test_no_figure_appears_twice_in_a_default_estimate(client, body):
    seen = defaultdict(list)
    for meaning, where, value in _leaves(post(client, "/v1/estimate", body)):
        if value is not None and not isinstance(value, bool) or isinstance(value, bool):
            seen[(meaning, repr(value))].append(where)
    copies = {key: places for key, places in seen.items() if len(places) > 1}
    assert not copies, "\n".join(f"{meaning} = {value} at {', '.join(places)}"
                                 for (meaning, value), places in copies.items())
