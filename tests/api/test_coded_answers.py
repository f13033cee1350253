"""Every sentence an answer says is a coded message: {code, message, params}, the code one of the
contract's enum, the params the same in every language (only `message` is said in the caller's)."""

import re
from pathlib import Path

import pytest
import yaml

from service.api.shapes import said
from service.sizing import messages as M

from .support import post

SPEC = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text())
CODES = set(SPEC["components"]["schemas"]["Message"]["properties"]["code"]["enum"])

QUESTIONS = [
    ("/estimate", {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090", "count": 3},
                   "workload": {"mode": "lora", "train_tokens": 1e9}}),
    ("/estimate", {"model": "qwen2.5-72b", "hardware": {"card": "A100"}, "workload": {"batch_size": 16}}),
    ("/compare", {"model": "qwen2.5-72b", "options": [{"card": "h20", "count": 8}, {"card": "l20", "count": 2}],
                  "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20}}),
    ("/recommend", {"scenario": "team_inference"}),
    ("/normalize", {"value": 800, "precision": "int8", "sparse": True}),
]


def _messages(value, path=""):
    """Every object of the answer shaped like a message, with where it stands."""
    if isinstance(value, dict):
        if set(value) == {"code", "message", "params"}:
            yield path, value
            return
        for key, item in value.items():
            yield from _messages(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _messages(item, path)


@pytest.mark.parametrize(("path", "body"), QUESTIONS)
def test_messages_carry_a_known_code_and_the_same_params_in_every_language(client, path, body):
    english = list(_messages(post(client, path, {**body, "lang": "en"})))
    chinese = list(_messages(post(client, path, {**body, "lang": "zh"})))
    assert english, "the question says nothing coded"
    assert {m["code"] for _, m in english} <= CODES
    assert [(where, m["code"]) for where, m in english] == [(where, m["code"]) for where, m in chinese]
    for (_, en), (_, zh) in zip(english, chinese, strict=True):
        if re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", en["message"]):  # words, not a lone name (bfloat16)
            assert en["message"] != zh["message"], en
        assert _without_text(en["params"]) == _without_text(zh["params"])


def _without_text(params):
    """Params with nested messages' text left out (said in each language), the rest as is."""
    if isinstance(params, dict):
        return {k: _without_text(v) for k, v in params.items() if k != "message"}
    if isinstance(params, list):
        return [_without_text(v) for v in params]
    return params


def test_params_are_numbers_in_si_and_ids():
    message = M.RACK_POWER_ONE(machine_w=3300.0, ups_w=4950.0)
    assert said(message) == {"code": "rack_power_one_server", "message": str(message),
                             "params": {"machine_w": 3300.0, "ups_w": 4950.0}}
    assert "3.3 kW" in str(message)  # the text converts for the reader; the params stay in W


def test_text_that_is_not_coded_is_refused_not_dumped():
    with pytest.raises(TypeError, match="not coded"):
        said("a sentence someone forgot to code")
