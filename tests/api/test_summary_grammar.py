"""The summaries an assistant quotes, read as prose in both languages: a walk over the questions
buyers ask (estimates across models, cards, counts and modes; capacity, compare, recommend; the
other tools' answers) and the rules each sentence keeps. A template that loses a word, pluralises
one card, leaves a placeholder or drops English into Chinese fails here with the sentence."""

import re

import pytest

from tests.api.support import ok

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "deepseek-r1", "gpt-oss-20b")
CARDS = ("rtx-4090", "h100-sxm", "D-M", "l20")
ESTIMATES = [
    {"model": model, "hardware": {"card": card, **({"count": count} if count else {})}, "workload": workload}
    for model in MODELS for card in CARDS for count in (None, 1, 2, 8)
    for workload in ({}, {"mode": "lora"}, {"mode": "full_finetune", "train_tokens": 1e9}, {"batch_size": 16})
    if not (model == "deepseek-r1" and workload.get("mode") == "full_finetune")
]
SERVING = {"model": "qwen2.5-72b", "workload": {"engine": "vllm", "prompt_tokens": 1000, "output_tokens": 500},
           "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20}}
POSTS = [
    *(("/v1/estimate", body) for body in ESTIMATES),
    ("/v1/capacity", {**SERVING, "cards": ["h20", "l20", "h100-sxm", "rtx-4090"]}),
    ("/v1/capacity", {"model": "llama-3.1-8b", "target": {"concurrent_users": 1}, "cards": ["rtx-4090"]}),
    ("/v1/compare", {**SERVING, "options": [{"card": "h20", "count": 8}, {"card": "l20"}]}),
    ("/v1/compare", {**SERVING, "options": [{"card": "h20", "count": 8}, {"card": "l20"}],
                     "prices": {"h20": 110_000, "l20": 30_000}, "rent_per_card_hour": {"h20": 9}}),
    ("/v1/compare", {"model": "llama-3.1-8b", "workload": {"mode": "full_finetune", "train_tokens": 1e10},
                     "deadline_days": 7, "options": [{"card": "h100-sxm"}, {"card": "rtx-4090"}]}),
    ("/v1/recommend", {"model": "llama-3.1-70b", "constraints": {"power_w_per_card": 450}}),
    ("/v1/recommend", {"model": "llama-3.1-8b", "scenario": "developer"}),
    ("/v1/recommend", {"model": "llama-3.1-70b", "target": {"concurrent_users": 20}}),
    ("/v1/memory", {"model": "llama-3.1-70b"}),
    ("/v1/memory", {"model": "qwen2.5-7b", "workload": {"mode": "full_finetune"}, "hardware": {"card": "rtx-4090"}}),
    ("/v1/memory", {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm", "count": 1}}),
    ("/v1/cost", {"power_w": 1000}),
    ("/v1/cost", {"hardware": {"card": "h100-sxm", "count": 8}, "card_price": 200_000,
                  "energy": {"installations": 3}}),
    ("/v1/rank", {"line": "consumer", "model": "llama-3.1-8b"}),
    ("/v1/rank", {"line": "consumer", "model": "llama-3.1-405b", "count": 1}),
    ("/v1/rank", {"line": "datacenter"}),
    ("/v1/normalize", {"value": 1979, "precision": "fp8", "sparse": True}),
    ("/v1/normalize", {"value": 165, "precision": "fp16", "accumulate": "fp16"}),
]
TROUBLE = ["CUDA out of memory", "banana", "GPU temperature throttling clocks drop", "machine reboots under load",
           "NCCL timeout between nodes", "wrong results silently ECC", "driver version mismatch",
           "slow network between machines", "firmware different versions", "显存够用但跑不起来"]
GETS = [*(f"/v1/troubleshoot?q={q}" for q in TROUBLE), "/v1/cards?limit=5", "/v1/cards?offset=5&limit=5",
        "/v1/cards?limit=1&line=datacenter&vendor=AMD", "/v1/cards/h100-sxm", "/v1/cards/C30", "/v1/models?limit=10",
        "/v1/models/deepseek-r1", "/v1/models/llama-3.1-8b",
        "/v1/estimate?model=llama-3.1-70b&card=rtx-4090&count=1"]


def summaries(client, lang):
    said = []
    for path, body in POSTS:
        said.append((path, ok(client.post(path, json={**body, "lang": lang}))["summary"]))
    for path in GETS:
        said.append((path, ok(client.get(path + ("&" if "?" in path else "?") + f"lang={lang}"))["summary"]))
    return said


@pytest.fixture(scope="module")
def english(app):
    return summaries(app.test_client(), "en")


@pytest.fixture(scope="module")
def chinese(app):
    return summaries(app.test_client(), "zh")


CJK = "\u4e00-\u9fff"
EVERY_LANGUAGE = [
    (r"[{}]", "a placeholder left unfilled"),
    (r"\s{2,}", "two spaces"),
    (r"\(\s|\s\)", "a space inside parentheses"),
    (r"\.\.(?!\.)|,\.|;\.|\.,", "doubled punctuation"),
    (r"\bNone\b|\bnan\b|\binf\b", "a Python value"),
]
ENGLISH = [
    (r"\s[.,;:)]", "a space before punctuation"),
    (r"(?<![\d.,])\b1 (?:cards|sequences|users|machines|copies|years|installations|layers|days|GPUs)\b",
     "one of something in the plural"),
    (r"\b[Aa] (?:8|11|18|80)\d*(?:\.\d+)?\b", "'a' before a number said with a vowel"),
    (r"[" + CJK + "，。：；（）]", "Chinese in English"),
    (r"\b(\w+) \1\b", "a word twice"),
]
# Latin words a Chinese sentence keeps: the unit "token", and names of fields and parameters.
KEPT_IN_CHINESE = {"token", "batch", "offset", "excluded"}
CHINESE = [
    (r"(?<![\w.\-/])(?!(?:" + "|".join(KEPT_IN_CHINESE) + r")\b)[A-Za-z][a-z]{2,}(?![\w\-./])",
     "an English word in Chinese"),
    (r"[" + CJK + r"][,;:().!?]|[,;:()!?]\s?[" + CJK + "]", "ASCII punctuation beside Chinese"),
    (r"[" + CJK + r"] [" + CJK + "]", "a space between Chinese characters"),
    (r"[" + CJK + r"](?:\d|[A-Za-z])|(?:\d|[A-Za-z])[" + CJK + "]", "Latin or digits against Chinese with no space"),
]


def broken(text: str, rules) -> list[str]:
    return [why for pattern, why in (*EVERY_LANGUAGE, *rules) if re.search(pattern, text)]


def test_the_walk_covers_every_kind_of_answer(english):
    assert len(english) >= 390 and len({path.split("?")[0] for path, _ in english}) >= 11


def test_every_english_summary_reads_as_english(english):
    found = [(path, broken(text, ENGLISH), text) for path, text in english if broken(text, ENGLISH)]
    assert not found, found[:5]
    assert all(text.endswith(".") and (text[0].isupper() or text[0].isdigit()) for _, text in english)


def test_every_chinese_summary_reads_as_chinese(chinese):
    found = [(path, broken(text, CHINESE), text) for path, text in chinese if broken(text, CHINESE)]
    assert not found, found[:5]
    assert all(text.endswith("。") for _, text in chinese)
