"""Callers' experience: GET /estimate with flat parameters, batches and sweeps as JSON and CSV,
and the plots."""

import csv
import io
import xml.etree.ElementTree as ET

import pytest

ITEM = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}


def test_get_estimate_with_flat_parameters_answers_like_post(client):
    got = client.get("/v1/estimate", query_string={"model": "llama-3.1-70b", "card": "rtx-4090", "count": 2,
                                                "precision": "int4", "context_tokens": 2048})
    assert got.status_code == 200
    posted = client.post("/v1/estimate", json={"model": "llama-3.1-70b", "hardware": {"card": "rtx-4090", "count": 2},
                                            "workload": {"precision": "int4", "context_tokens": 2048}})
    assert got.get_json()["memory"] == posted.get_json()["memory"]
    assert got.get_json()["summary"] == posted.get_json()["summary"]


@pytest.mark.parametrize(("headers", "params", "phrase"), [
    ({"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}, {}, "显存"),
    ({}, {"lang": "zh"}, "显存"),
    ({"Accept-Language": "en-GB"}, {}, "needs"),
    ({"Accept-Language": "zh"}, {"lang": "en"}, "needs"),  # lang wins over the header
])
def test_summary_language_from_lang_or_accept_language(client, headers, params, phrase):
    answer = client.get("/v1/estimate", query_string={"model": "qwen2.5-7b", "card": "C90", **params},
                        headers=headers).get_json()
    assert phrase in answer["summary"]


def test_get_estimate_errors_name_the_parameter(client):
    response = client.get("/v1/estimate", query_string={"model": "llama-3.1-8b", "card": "gtx-1"})
    assert response.status_code == 422 and response.get_json()["errors"][0]["field"] == "card"
    missing = client.get("/v1/estimate", query_string={"card": "rtx-4090"})
    assert missing.status_code == 422 and missing.get_json()["errors"][0]["field"] == "model"


def batch(client, items, accept="application/json"):
    response = client.post("/v1/estimate/batch", json={"items": items}, headers={"Accept": accept})
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response


def _items(n):
    cards = ["rtx-4090", "h100-sxm", "C70", "W-B", "mi300x"]
    models = ["llama-3.1-8b", "qwen2.5-7b", "mistral-7b-v0.1", {"params_billion": 3}]
    return [{"model": models[i % len(models)], "hardware": {"card": cards[i % len(cards)]},
             "workload": {"batch_size": 1 + i % 7}} for i in range(n)]


def test_a_500_item_batch_answers_in_order_as_json_and_csv_with_the_same_numbers(client):
    items = _items(500)
    items[17] = {"model": "no-such-model", "hardware": {"card": "rtx-4090"}}
    items[42] = "not an object"
    answers = batch(client, items).get_json()["items"]
    assert [a["index"] for a in answers] == list(range(500))
    assert not answers[17]["ok"] and answers[17]["problem"]["status"] == 422
    assert not answers[42]["ok"] and answers[43]["ok"]
    assert sum(a["ok"] for a in answers) == 498
    rows = list(csv.DictReader(io.StringIO(batch(client, items, "text/csv").get_data(as_text=True))))
    assert len(rows) == 500 and [int(r["index"]) for r in rows] == list(range(500))
    for answer, row in zip(answers, rows):
        assert row["ok"] == ("true" if answer["ok"] else "false")
        if answer["ok"]:
            estimate = answer["estimate"]
            assert int(row["weights_bytes"]) == estimate["memory"]["weights_bytes"]
            assert float(row["decode_tokens_per_s_expected"]) == estimate["throughput"]["decode_tokens_per_s_expected"]
            assert float(row["electricity_cost_per_year"]) == estimate["energy"]["electricity_cost_per_year"]
            assert row["card"] == estimate["card"]["id"] and row["fits"] in ("true", "false")


@pytest.mark.parametrize("path, body", [
    ("/v1/estimate/batch", {"items": [ITEM, {"model": "no-such-model", "hardware": {"card": "rtx-4090"}, "lang": "zh"},
                                      {**ITEM, "lang": "zh"}]}),
    ("/v1/estimate/sweep", {"model": "llama-3.1-8b", "filters": {"line": "consumer", "kind": "card"}})])
def test_a_batch_is_written_as_every_answer_is(client, path, body):
    """Items are encoded one by one as they are made: the document is the one jsonify writes of
    the same content, byte for byte (Chinese as it stands, the same separators, one newline)."""
    from flask import current_app
    response = client.post(path, json=body)
    assert response.status_code == 200 and response.mimetype == "application/json"
    with client.application.app_context():
        expected = current_app.json.response(response.get_json()).get_data()
    assert response.get_data() == expected and response.get_json()["count"] == len(response.get_json()["items"])


@pytest.mark.parametrize("path", ["/v1/estimate/batch", "/v1/estimate/sweep", "/v1/memory"])
def test_a_json_null_body_is_an_invalid_input_not_unreadable_json(client, path):
    response = client.post(path, data="null", content_type="application/json")
    assert response.status_code == 422, response.get_json()


def test_a_batch_over_the_limit_is_413(client):
    response = client.post("/v1/estimate/batch", json={"items": [ITEM] * 1001})
    assert response.status_code == 413 and response.mimetype == "application/problem+json"


def test_a_sweep_over_catalog_cards(client):
    body = {"model": "llama-3.1-8b", "filters": {"line": "consumer", "kind": "card"}}
    answer = client.post("/v1/estimate/sweep", json=body).get_json()
    ids = [a["estimate"]["card"]["id"] for a in answer["items"] if a["ok"]]
    assert "rtx-4090" in ids and all(not i.startswith("C") or "-" in i for i in ids)
    table = client.post("/v1/estimate/sweep", json=body, headers={"Accept": "text/csv"})
    assert table.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(table.get_data(as_text=True))))
    assert [r["card"] for r in rows] == ids


def test_a_sweeps_rows_say_which_are_the_guides_tiers_and_which_are_cards(client):
    body = {"model": "llama-3.1-8b", "filters": {"line": "consumer"}}
    answer = client.post("/v1/estimate/sweep", json=body).get_json()["items"]
    rows = list(csv.DictReader(io.StringIO(
        client.post("/v1/estimate/sweep", json=body, headers={"Accept": "text/csv"}).get_data(as_text=True))))
    kinds = {r["card"]: r["kind"] for r in rows}
    assert kinds["C90"] == "tier" and kinds["rtx-4090"] == "card"
    assert [a["estimate"]["card"]["kind"] for a in answer] == [r["kind"] for r in rows]


@pytest.mark.parametrize(("accept", "mimetype"), [
    ("text/csv", "text/csv"),
    ("text/csv; charset=utf-8", "text/csv"),
    ("text/csv;charset=utf-8", "text/csv"),
    ("application/json;q=0.5, text/csv", "text/csv"),
    ("text/*", "text/csv"),
    ("text/csv;q=0.5, application/json", "application/json"),
    ("*/*", "application/json"),
    ("application/json", "application/json"),
])
def test_the_accept_header_chooses_csv_or_json(client, accept, mimetype):
    response = client.post("/v1/estimate/batch", json={"items": [ITEM]}, headers={"Accept": accept})
    assert response.status_code == 200 and response.mimetype == mimetype


@pytest.mark.parametrize("plot", ["roofline", "throughput"])
@pytest.mark.parametrize("card", ["D-M", "rtx-4090"])
def test_plots_render_as_valid_svg(client, plot, card):
    response = client.get(f"/v1/plots/{plot}.svg", query_string={"model": "llama-3.1-8b", "card": card,
                                                               "batch_size": 4})
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    root = ET.fromstring(response.data)
    assert root.tag.endswith("svg")
    text = response.get_data(as_text=True)
    assert card in text and ("FLOP/byte" in text if plot == "roofline" else "tokens/s" in text)


def test_plot_of_a_training_mode_is_a_problem(client):
    response = client.get("/v1/plots/throughput.svg", query_string={"model": "llama-3.1-8b", "card": "D-M",
                                                                  "mode": "lora"})
    assert response.status_code == 422 and response.mimetype == "application/problem+json"


def test_matplotlib_is_imported_only_when_a_plot_is_asked_for():
    import subprocess
    import sys
    code = ("import sys; from service.app import create_app; c = create_app().test_client(); "
            "c.post('/v1/estimate', json={'model': 'llama-3.1-8b', 'hardware': {'card': 'D-M'}}); "
            "assert 'matplotlib' not in sys.modules; "
            "c.get('/v1/plots/roofline.svg?model=llama-3.1-8b&card=D-M'); assert 'matplotlib' in sys.modules")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_docs_page_is_served_from_bundled_assets(client):
    page = client.get("/docs")
    assert page.status_code == 200 and b"swagger-ui" in page.data and b"/openapi.yaml" in page.data
    assert b"https://" not in page.data  # no asset from the internet
    asset = client.get("/docs/swagger-ui-bundle.js")
    asset.close()  # a file streamed from the package's dist folder
    assert asset.status_code == 200
    assert b'"validatorUrl": null' in page.data
