"""Chinese all the way: under lang=zh every sentence an answer says is Chinese, not only the
summary (its warnings, assumption notes, fit reason, capacity and recommendation reasons).

Names, numbers, units and cited sources stay as they are; what may not stay is an English
sentence: four English words in a row outside brackets and quotes."""

import itertools
import re

import pytest

from .support import post

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){3}\b")
QUOTED = re.compile(r"\([^()]*\)|（[^（）]*）|'[^']*'|\"[^\"]*\"|“[^”]*”")


def _english_left(text: str) -> str | None:
    bare = text
    for _ in range(3):  # brackets inside brackets
        bare = QUOTED.sub("", bare)
    if not CJK.search(text):
        return text
    run = ENGLISH_RUN.search(bare)
    return run.group(0) if run else None


def _sentences(answer: dict):
    """The text of every coded message in the answer's sentence fields."""
    for said in _said(answer):
        yield said["message"] if isinstance(said, dict) else said


def _said(answer: dict):
    yield from answer.get("warnings") or []
    yield from (a["note"] for a in answer.get("assumptions") or [])
    fit = answer.get("fit")
    if isinstance(fit, dict) and fit.get("reason"):
        yield fit["reason"]
    for option in answer.get("options") or []:
        yield option["reason"]
        yield from option.get("warnings") or []
        yield from (a["note"] for a in option.get("assumptions") or [])
    yield from (a["note"] for a in answer.get("alternatives") or [])
    scenario = answer.get("scenario") or {}
    yield from scenario.get("comparison") or []
    yield from filter(None, (scenario.get("title"), scenario.get("guide_answer")))
    yield from answer.get("reasons") or []
    yield from (c["reason"] for c in answer.get("candidates") or [])
    yield from (e["reason"] for e in answer.get("excluded_lines") or [])


MODELS = ("llama-2-7b", "llama-3.1-70b", "deepseek-v3", "gpt-oss-20b")
CARDS = ("rtx-4090", "h100-sxm", "A100", "D-S", "tesla-p40")
WORKLOADS = ({}, {"precision": "q4_k_m", "engine": "llama.cpp"}, {"batch_size": 32, "engine": "vllm"},
             {"mode": "lora", "train_tokens": 1e9}, {"mode": "full_finetune", "train_tokens": 1e10},
             {"context_tokens": 200_000})


def _answers(client):
    for model, card, workload in itertools.product(MODELS, CARDS, WORKLOADS):
        response = client.post("/v1/estimate", json={"model": model, "hardware": {"card": card},
                                                  "workload": workload, "lang": "zh"})
        if response.status_code == 200:
            yield f"estimate {model} {card} {workload}", response.get_json()
    for model in MODELS:
        yield f"capacity {model}", post(client, "/v1/capacity", {
            "model": model, "cards": ["rtx-4090", "h100-sxm", "l40s"], "lang": "zh",
            "target": {"concurrent_users": 20, "tokens_per_s_per_user": 15}})
    options = [{"card": "h20", "count": 8}, {"card": "rtx-4090-d", "count": 16}, {"card": "l20", "count": 2},
               {"card": "h100-sxm"}, {"card": "tesla-p40"}]
    yield "compare serving", post(client, "/v1/compare", {
        "model": "qwen2.5-72b", "options": options, "lang": "zh", "prices": {"h20": 110000, "l20": 30000}, "rent_per_card_hour": {"h20": 9, "l20": 3},
        "currency": "USD", "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20}})
    yield "compare training", post(client, "/v1/compare", {
        "model": "llama-3.1-8b", "options": options, "lang": "zh", "deadline_days": 30,
        "workload": {"mode": "pretrain", "train_tokens": 1e11}, "prices": {"rtx-4090-d": 14000}})
    for scenario in ("developer", "team_inference", "training_cluster"):
        yield f"recommend {scenario}", post(client, "/v1/recommend", {"scenario": scenario, "lang": "zh"})
    yield "recommend budget", post(client, "/v1/recommend", {"model": "llama-3.1-70b", "lang": "zh",
                                                          "constraints": {"budget": 1000, "ecc": True}})
    yield "recommend 24x7", post(client, "/v1/recommend", {"model": "llama-3.1-8b", "lang": "zh",
                                                        "constraints": {"continuous_hours": 8760}})
    # Every other endpoint that says something, asked in Chinese.
    yield "memory", post(client, "/v1/memory", {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090"},
                                                "workload": {"mode": "qlora"}, "lang": "zh"})
    yield "throughput", post(client, "/v1/throughput", {"model": "deepseek-v3", "hardware": {"card": "h200-sxm"},
                                                        "lang": "zh"})
    yield "scaling", post(client, "/v1/scaling", {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"},
                                                  "workload": {"mode": "pretrain", "train_tokens": 1e12},
                                                  "deadline_days": 20, "lang": "zh"})
    yield "cost", post(client, "/v1/cost", {"hardware": {"card": "b200", "count": 16}, "lang": "zh"})
    yield "rank", post(client, "/v1/rank", {"line": "datacenter", "model": "llama-3.1-70b", "lang": "zh"})
    yield "normalize", post(client, "/v1/normalize", {"value": 800, "precision": "int8", "sparse": True,
                                                      "lang": "zh"})


def test_every_sentence_of_a_chinese_answer_is_chinese(client):
    left = {}
    for where, answer in _answers(client):
        for sentence in _sentences(answer):
            english = _english_left(sentence)
            if english is not None:
                left.setdefault(sentence, where)
    assert not left, "\n".join(f"{where}: {s}" for s, where in list(left.items())[:20])


@pytest.mark.parametrize("lang", ["en", None])
def test_english_answers_stay_english(client, lang):
    body = {"model": "llama-2-7b", "hardware": {"card": "A100"}}
    answer = post(client, "/v1/estimate", body if lang is None else {**body, "lang": lang})
    assert not any(CJK.search(w["message"]) for w in answer["warnings"])


# The questions that had no language: each takes lang (or Accept-Language) like /estimate.
OTHER_QUESTIONS = [
    ("/memory", {"model": "llama-3.1-405b", "hardware": {"card": "rtx-4090", "count": 2}}),
    ("/throughput", {"model": "deepseek-v3", "hardware": {"card": "tesla-p40", "count": 4}}),
    ("/scaling", {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "deadline_days": 1,
                  "workload": {"mode": "pretrain", "train_tokens": 1e10}}),
    ("/cost", {"hardware": {"card": "b200", "count": 16}}),
]


@pytest.mark.parametrize(("path", "body"), OTHER_QUESTIONS, ids=[p for p, _ in OTHER_QUESTIONS])
@pytest.mark.parametrize("how", ["body", "header"])
def test_every_question_answers_in_chinese(client, path, body, how):
    if how == "body":
        answer = post(client, path, {**body, "lang": "zh"})
    else:
        response = client.post(path, json=body, headers={"Accept-Language": "zh-CN,zh;q=0.9"})
        assert response.status_code == 200, response.get_json()
        answer = response.get_json()
    sentences = list(_sentences(answer))
    assert sentences and all(CJK.search(s) for s in sentences)
    assert not [s for s in sentences if _english_left(s) is not None]
    english = post(client, path, body)
    assert not any(CJK.search(s) for s in _sentences(english))


# Every string of a Chinese answer, not a list of fields: what may stay English are cited sources,
# ids, a message's code and params (values for programs), and assumptions' values (data: ids,
# numbers, key=value lists).
NOT_SAID = ("assumptions.value",)


def _english_run(text: str) -> str | None:
    """Four English words in a row outside brackets and quotes, in any text."""
    bare = text
    for _ in range(3):
        bare = QUOTED.sub("", bare)
    run = ENGLISH_RUN.search(bare)
    return run.group(0) if run else None


def _strings(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            # A message's code is an id and its params are values for programs (ids, numbers, the
            # data it was made from): the text for readers is its `message`.
            if "source" not in key and key not in ("request_id", "id", "name", "type", "instance", "code", "params"):
                yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, path)
    elif isinstance(value, str):
        yield ".".join(path), value


# Error answers asked in Chinese, each way a request can go wrong: marshmallow's own messages
# (missing, unknown, wrong type, out of range, not one of, too long), the schemas' and the domain's
# refusals, the JSON itself, the routes, the limits. The language comes from the body's lang even
# when the body is refused, else from the query, else from Accept-Language.
ERRORS = [
    ("post", "/v1/estimate", {"lang": "zh", "hardware": {"card": "h100-sxm"}}),  # model missing
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": "h100-sxm"}, "colour": 1}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b",
                              "hardware": {"card": "h100-sxm", "count": 0}, "workload": {"batch_size": "x"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": "h100-sxm"},
                              "workload": {"mode": "swimming", "context_tokens": 10**12}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": "no-such-card"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "no-such-model", "hardware": {"card": "h100-sxm"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "Ascend 910B", "hardware": {"card": "Ascend 910B"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": "h100-sxm"},
                              "workload": {"engine": "no-such-engine"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": "h100-sxm"},
                              "workload": {"prompt_tokens": 3000, "output_tokens": 3000, "context_tokens": 4096}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": "a100-80gb-sxm"},
                              "workload": {"mode": "pretrain", "precision": "fp8", "train_tokens": 1e9}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": {"hf_config": {"model_type": "no-such-type"}},
                              "hardware": {"card": "h100-sxm"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "x" * 300, "hardware": {"card": "h100-sxm"}}),
    ("post", "/v1/estimate", {"lang": "zh", "model": "llama-2-7b", "hardware": {"card": {"memory_gib": "many"}}}),
    ("post", "/v1/compare", {"lang": "zh", "model": "llama-2-7b", "options": [], "target": {"concurrent_users": 1}}),
    ("post", "/v1/compare", {"lang": "zh", "model": "llama-2-7b", "options": [{"card": "h20"}]}),
    ("post", "/v1/cost", {"lang": "zh"}),
    ("post", "/v1/recommend", {"lang": "zh"}),
    ("post", "/v1/rank", {"lang": "zh", "cards": ["h20"], "filters": {"line": "datacenter"}}),
    ("post", "/v1/estimate/batch", {"lang": "zh", "items": [{"model": "llama-2-7b"}]}),  # lang is the items'
    ("post", "/v1/estimate/batch", {"items": [{"lang": "zh", "model": "llama-2-7b"},
                                              {"lang": "zh", "model": "nope", "hardware": {"card": "h20"}}]}),
    ("get", "/v1/estimate?lang=zh&model=llama-2-7b&card=h100-sxm&fields=nothing.here", None),
    ("get", "/v1/estimate?lang=zh&model=llama-2-7b&card=h100-sxm&card=h20", None),
    ("get", "/v1/cards/no-such-card?lang=zh", None),
    ("get", "/v1/models/no-such-model?lang=zh", None),
    ("get", "/v1/no-such-path?lang=zh", None),
    ("delete", "/v1/estimate?lang=zh", None),
]


def _error_answers(client):
    for method, path, body in ERRORS:
        if method == "post":
            response = client.post(path, json=body, headers={"Accept-Language": "en"})  # the body's lang wins
        else:
            response = getattr(client, method)(path)
        assert response.status_code >= 400 or path.endswith("/batch"), (path, body, response.get_json())
        yield f"{method} {path} {body}", response.get_json()
    for raw in (b"{", b'{"lang": "zh", "model": NaN}', b"[" * 100_000, b"[1, 2]"):
        response = client.post("/v1/estimate", data=raw, content_type="application/json",
                               headers={"Accept-Language": "zh-CN"})
        yield f"body {raw[:20]!r}", response.get_json()
    response = client.post("/v1/estimate", data="model=x", content_type="text/plain", headers={"Accept-Language": "zh"})
    yield "not json", response.get_json()


def test_every_string_of_a_chinese_error_is_chinese(client):
    left, seen = {}, 0
    for where, answer in _error_answers(client):
        problems = [item["problem"] for item in answer.get("items", []) if not item["ok"]] or [answer]
        for problem in problems:
            assert CJK.search(problem["title"]) and CJK.search(problem["detail"]), (where, problem)
            for error in problem["errors"]:
                assert set(error) == {"field", "code", "message", "params"}, (where, error)
                assert CJK.search(error["message"]), (where, error)
                seen += 1
            for field, text in _strings(problem):
                if _english_run(text) is not None:
                    left.setdefault(field, (where, text))
    assert seen > 20
    assert not left, "\n".join(f"{field} ({where}): {text}" for field, (where, text) in list(left.items())[:20])


def test_an_error_in_english_keeps_its_words_and_gains_its_code(client):
    response = client.post("/v1/estimate", json={"model": "llama-2-7b", "hardware": {"card": "h100-sxm", "count": 0}})
    problem = response.get_json()
    assert problem["title"] == "Unprocessable Content"
    assert problem["detail"] == "Invalid input: hardware.count."
    assert problem["errors"] == [{"field": "hardware.count", "code": "input_between",
                                  "message": "Must be greater than or equal to 1 and less than or equal to 100000.",
                                  "params": {"min": 1, "max": 100000}}]
    zh = client.post("/v1/estimate", json={"model": "llama-2-7b", "hardware": {"card": "h100-sxm", "count": 0}},
                     headers={"Accept-Language": "zh-CN,zh;q=0.9"}).get_json()
    assert zh["title"] == "无法处理的内容" and zh["detail"] == "输入无效：hardware.count。"
    assert zh["errors"][0]["message"] == "必须大于或等于 1 且小于或等于 100000。"
    assert zh["errors"][0]["code"] == "input_between" and zh["errors"][0]["params"] == {"min": 1, "max": 100000}


def test_a_post_says_its_answer_and_its_errors_in_the_same_language():
    """A POST's lang is in its body (the contract declares it there): a ?lang= beside it is a
    query parameter the route does not take, refused as an unknown body field is (in the body's
    language), so an answer and its errors never disagree."""
    from service.app import create_app
    client = create_app({"TESTING": True, "CACHE_SIZE": 0}).test_client()
    good = {"model": "llama-2-7b", "hardware": {"card": "h100-sxm"}}
    refused = client.post("/v1/estimate?lang=zh", json=good)
    assert refused.status_code == 422 and refused.get_json()["errors"][0]["field"] == "lang"
    assert not CJK.search(refused.get_json()["detail"])
    zh = {**good, "lang": "zh"}
    answer = client.post("/v1/estimate", json=zh).get_json()
    error = client.post("/v1/estimate", json={**zh, "hardware": {"card": "h100-sxm", "count": 0}}).get_json()
    assert CJK.search(answer["summary"]) and CJK.search(error["detail"])


def test_every_string_of_a_chinese_answer_is_chinese(client):
    left = {}
    for where, answer in _answers(client):
        for field, text in _strings(answer):
            if field not in NOT_SAID and _english_run(text) is not None:
                left.setdefault(field, (where, text))
    assert not left, "\n".join(f"{field} ({where}): {text}" for field, (where, text) in list(left.items())[:20])


def test_a_chinese_summary_says_its_plan_in_chinese_too(client):
    """A plan inside brackets escapes the English-run check above: the summary is made of coded
    messages, its plan one of them, so the plan is said in Chinese as well."""
    capacity = post(client, "/v1/capacity", {"model": "deepseek-v3", "cards": ["h100-sxm"], "lang": "zh",
                                            "target": {"concurrent_users": 20, "tokens_per_s_per_user": 15}})
    estimate = post(client, "/v1/estimate", {"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm", "count": 4},
                                            "lang": "zh"})
    for summary in (capacity["summary"], estimate["summary"]):
        assert "张量并行" in summary and not re.search(r"tensor \d|one card|experts spread", summary), summary
