"""Sparse answers: `fields=` answers only what a caller reads, equal to the whole answer's parts."""

import csv
import dataclasses
import io

import pytest

from service.api.resources import estimate_parts

from .support import ok

QUESTIONS = [
    {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090"}},
    {"model": "deepseek-v3", "hardware": {"card": "h200-sxm", "count": 16}, "target": {"concurrent_users": 32}},
    {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm", "count": 8},
     "workload": {"mode": "full_finetune", "train_tokens": 1e9}, "lang": "zh"},
]


def _project(answer: dict, paths: list[str]) -> dict:
    """The parts of `answer` that `paths` name (dotted, at any depth), in the answer's order."""
    kept: dict = {}
    below: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        if rest:
            below.setdefault(head, []).append(rest)
        else:
            kept[head] = answer[head]
    for head, rests in below.items():
        value = answer[head]
        if isinstance(value, list):
            kept[head] = [_project(item, rests) for item in value]
        else:
            kept[head] = None if value is None else _project(value, rests)
    return {key: kept[key] for key in answer if key in kept}


@pytest.mark.parametrize("body", QUESTIONS)
@pytest.mark.parametrize("paths", [
    ["summary", "fit.fits", "fit.cards_needed"],
    ["throughput.decode_tokens_per_s_expected", "training.run.time_s", "parallelism.tensor", "lang"],
    ["alternatives.option", "alternatives.cards_needed", "warnings"],
])
def test_a_sparse_answer_is_the_whole_answers_parts(client, body, paths):
    whole = ok(client.post("/v1/estimate", json=body))
    sparse = ok(client.post("/v1/estimate?fields=" + ",".join(paths), json=body))
    assert sparse == _project(whole, paths)
    assert list(sparse) == [k for k in whole if k in sparse]  # in the answer's order


@pytest.mark.parametrize("body", QUESTIONS)
def test_leaving_out_the_alternatives_changes_nothing_else(client, body):
    whole = ok(client.post("/v1/estimate", json=body))
    rest = [k for k in whole if k != "alternatives"]
    sparse = ok(client.post("/v1/estimate?fields=" + ",".join(rest), json=body))
    assert sparse == {k: whole[k] for k in rest}


def test_get_takes_fields_too(client):
    answer = ok(client.get("/v1/estimate?model=llama-3.1-8b&card=4090&fields=summary,fit.fits"))
    assert set(answer) == {"summary", "fit"} and answer["fit"] == {"fits": True}


@pytest.mark.parametrize(("fields", "message"), [
    ("nope", "has no field 'nope'; it has: model, card"),
    ("summary.words", "summary is a plain value"),
    ("throughput.nope", "Throughput has no field 'nope'"),
    (",,", "comma-separated"),
    (",".join(f"f{i}" for i in range(65)), "comma-separated"),
])
def test_an_unknown_field_is_a_422_naming_the_ones_there_are(client, fields, message):
    response = client.post(f"/v1/estimate?fields={fields}", json=QUESTIONS[0])
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["errors"][0]["field"] == "fields" and message in problem["errors"][0]["message"]


@pytest.mark.parametrize("path, body", [
    ("/v1/estimate/batch", {"items": [QUESTIONS[0], QUESTIONS[2], {"model": "nope", "hardware": {"card": "l4"}}]}),
    ("/v1/estimate/sweep", {"model": "llama-3.1-8b", "filters": {"line": "consumer", "kind": "card"}}),
])
def test_fields_make_each_item_of_a_batch_or_sweep_sparse_in_json_and_csv(client, path, body):
    paths = ["summary", "fit.fits", "throughput.decode_tokens_per_s_expected"]
    whole = client.post(path, json=body).get_json()["items"]
    sparse = client.post(path + "?fields=" + ",".join(paths), json=body).get_json()["items"]
    assert len(sparse) == len(whole) > 1
    for full, item in zip(whole, sparse):
        if full["ok"]:
            assert item["estimate"] == _project(full["estimate"], paths)
        else:
            assert {**item["problem"], "request_id": ""} == {**full["problem"], "request_id": ""}  # whole
    rows = client.post(path + "?fields=fit.fits,throughput", json=body, headers={"Accept": "text/csv"})
    header = next(csv.reader(io.StringIO(rows.get_data(as_text=True))))
    assert header[:4] == ["index", "ok", "error_status", "error_detail"] and "fits" in header
    assert "decode_tokens_per_s_expected" in header and "cards_needed" not in header and "power_w" not in header


def test_a_batchs_unknown_field_is_refused_before_any_item_is_computed(client):
    response = client.post("/v1/estimate/batch?fields=fit.nope", json={"items": [QUESTIONS[0]]})
    assert response.status_code == 422 and response.get_json()["errors"][0]["field"] == "fields"


def _contract_validator(component: str):
    import jsonschema
    import yaml

    from service.api.spec import SPEC_PATH

    spec = yaml.safe_load(SPEC_PATH.read_text())
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{component}",
                                            "components": spec["components"]})


@pytest.mark.parametrize("fields", ["summary,fit.fits,fit.cards_needed", "model.name,throughput.full_load.bound",
                                    "memory.total_bytes_range.low,training.run,alternatives", None])
def test_a_sparse_answer_is_valid_against_the_contract_a_client_is_generated_from(client, fields):
    """A client generated from openapi.yaml parses what fields= answers (it failed with KeyError
    'model' when every field was required): sparse answers, single and in a batch, validate."""
    query = f"?fields={fields}" if fields else ""
    estimate = _contract_validator("EstimateResponse")
    for body in QUESTIONS:
        estimate.validate(ok(client.post("/v1/estimate" + query, json=body)))
    batch = client.post("/v1/estimate/batch" + query, json={"items": QUESTIONS}).get_json()
    _contract_validator("BatchResponse").validate(batch)


@pytest.mark.parametrize(("path", "entries"), [("/v1/cards", "cards"), ("/v1/models", "models")])
def test_the_catalogs_lists_page_and_answer_compact_rows(client, path, entries):
    whole = ok(client.get(path))
    assert whole["count"] == whole["total"] == len(whole[entries]) and whole["offset"] == 0
    page = ok(client.get(path, query_string={"limit": 5, "offset": 3, "fields": f"total,{entries}.id"}))
    assert page == {"total": whole["total"], entries: [{"id": e["id"]} for e in whole[entries][3:8]]}
    _contract_validator("CardList" if entries == "cards" else "ModelList").validate(page)
    for bad in ({"limit": 0}, {"offset": -1}, {"fields": f"{entries}.nope"}):
        response = client.get(path, query_string=bad)
        assert response.status_code == 422 and response.get_json()["errors"][0]["field"] in bad


DECISIONS = [
    ("/v1/capacity", "CapacityResponse",
     {"model": "qwen2.5-72b", "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20},
      "cards": ["h20", "l20", "h100-sxm"]},
     ["summary", "best", "options.card.id", "options.cards", "options.parallelism.description"]),
    ("/v1/compare", "CompareResponse",
     {"model": "qwen2.5-72b", "target": {"concurrent_users": 50}, "options": [{"card": "h20"}, {"card": "l20"}],
      "prices": {"h20": 110_000}},
     ["summary", "options.label", "options.serving", "options.purchase.cost_of_ownership", "options.rent"]),
    ("/v1/rank", "RankResponse", {"line": "consumer", "model": "llama-3.1-70b", "count": 2},
     ["summary", "ranking.rank", "ranking.card.id", "ranking.total_score", "excluded.card.id"]),
]


@pytest.mark.parametrize(("path", "component", "body", "paths"), DECISIONS, ids=[d[0] for d in DECISIONS])
def test_capacity_compare_and_rank_answer_the_fields_asked(client, path, component, body, paths):
    """What the tools answer by default (the summary and each option's headline figures) is the
    whole answer's parts, and valid against the contract."""
    whole = ok(client.post(path, json=body))
    sparse = ok(client.post(path + "?fields=" + ",".join(paths), json=body))
    assert sparse == _project(whole, paths)
    _contract_validator(component).validate(sparse)
    _contract_validator(component).validate(whole)
    response = client.post(path + "?fields=options.nope,ranking.nope", json=body)
    assert response.status_code == 422 and response.get_json()["errors"][0]["field"] == "fields"


LAZY_QUESTIONS = [
    *QUESTIONS,
    {"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm", "count": 8}, "workload": {"engine": "vllm"}},
    {"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090", "count": 2}},
    {"model": "mixtral-8x7b", "hardware": {"card": "l40s", "count": 4}, "workload": {"batch_size": 32}},
]


def _every_path(answer: dict) -> list[str]:
    """Each top-level field, and each field one level below it."""
    paths = []
    for key, value in answer.items():
        paths.append(key)
        if isinstance(value, dict):
            paths += [f"{key}.{sub}" for sub in value]
    return paths


@pytest.mark.parametrize("body", LAZY_QUESTIONS)
def test_a_part_computed_alone_is_the_whole_answers_part(client, body):
    """A sparse answer computes only the costly parts its fields need (the summary, full load, the
    decode curve, the alternatives): each field asked alone, and with summary or warnings beside
    it, equals that field of the whole answer."""
    whole = ok(client.post("/v1/estimate", json=body))
    for path in _every_path(whole):
        for paths in ([path], [path, "summary"], [path, "warnings", "assumptions"]):
            fields = ",".join(dict.fromkeys(paths))
            sparse = ok(client.post("/v1/estimate?fields=" + fields, json=body))
            assert sparse == _project(whole, list(dict.fromkeys(paths))), fields


@pytest.mark.parametrize(("fields", "computed"), [
    ("fit.fits,fit.cards_needed,memory.total_bytes", set()),
    # what llm-analysis answers: the typical speed and time to first token, without their ranges
    ("throughput.decode_tokens_per_s_expected,throughput.time_to_first_token_s", set()),
    ("throughput.time_to_first_token_s_range.high", {"prefill_range"}),
    ("throughput.decode_tokens_per_s_ceiling", {"ends"}),
    ("throughput.total_tokens_per_s_range", {"ends"}),
    ("throughput.full_load", {"full_load", "full_load_range"}),
    # the full-load output alone: one step at full load, not three
    ("throughput.full_load.total_tokens_per_s,throughput.full_load.batch_size", {"full_load"}),
    ("throughput.full_load.total_tokens_per_s_range.low", {"full_load", "full_load_range"}),
    ("throughput.decode_curve.fits", {"curve"}),
    ("throughput", {"ends", "curve", "full_load", "full_load_range", "prefill_range"}),
    # the summary quotes the speed's range and ceiling and the full-load output, not their ranges
    ("summary", {"summary", "full_load", "costs", "ends"}),
    # the warnings quote the fit's reason
    ("warnings", {"notes", "full_load", "costs", "reasons"}),
    ("fit.reason", {"reasons"}),
    ("memory.components.note", {"reasons"}),
    ("memory.total_bytes_range", {"reasons"}),
    ("memory", {"reasons"}),
    ("alternatives.option", {"alternatives"}),
    ("energy.power_w", {"costs"}),
])
def test_a_sparse_answer_computes_only_the_parts_its_fields_need(fields, computed):
    parts = estimate_parts(tuple(fields.split(",")))
    assert {name for name, on in dataclasses.asdict(parts).items() if on} == computed
