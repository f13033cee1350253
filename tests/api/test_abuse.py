"""Holding up under abuse (OWASP API Security Top 10, 2023): costly requests, greedy clients,
metrics a stranger could blow up, settings that fail open, outputs turned against their reader,
an operator's catalog file that could break serving, and who asked."""

import csv
import io
import json
import logging
import random
import string

import pytest
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.limits import _KEY as LIMITS
from service.overlay import CatalogFileError
from service.security import key_id, valid_request_id

LAYERED = {"hf_config": {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
                         "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 1000,
                         "vocab_size": 32000, "max_position_embeddings": 4096}}


def app_with(**config):
    return create_app({"CACHE_SIZE": 0, **config})


# --- 1. unrestricted resource consumption -----------------------------------------------------

def test_a_costly_batch_is_refused_naming_the_limit(client):
    items = [{"model": LAYERED, "hardware": {"card": "h100-sxm"}}] * 200  # 200 x 1000 layers
    response = client.post("/v1/estimate/batch", json={"items": items})
    assert response.status_code == 413 and response.mimetype == "application/problem+json"
    detail = response.get_json()["detail"]
    assert "3,125 units" in detail and "limit of 2,000" in detail and "SIZING_MAX_REQUEST_COST" in detail


def test_the_same_batch_of_plain_models_is_served(client):
    items = [{"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"}}] * 1000
    assert client.post("/v1/estimate/batch", json={"items": items}).status_code == 200


@pytest.mark.parametrize(("path", "body"), [
    ("/estimate/sweep", {"filters": {"line": "datacenter"}}),
    ("/capacity", {"target": {"concurrent_users": 5}, "filters": {"line": "datacenter"}}),
    ("/compare", {"target": {"concurrent_users": 5}, "options": {"line": "datacenter"}}),
])
def test_sweeps_capacity_and_comparisons_cost_per_card_and_layers(path, body):
    client = app_with(MAX_REQUEST_COST=200).test_client()
    assert client.post(path, json={**body, "model": "llama-3.1-8b"}).status_code == 200  # 34 cards
    response = client.post(path, json={**body, "model": LAYERED})  # 34 cards x 1000 layers
    assert response.status_code == 413, response.get_json()
    assert "limit of 200 per request" in response.get_json()["detail"]


def test_the_request_limit_is_configurable():
    client = app_with(MAX_REQUEST_COST=10).test_client()
    items = [{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}}] * 11
    assert client.post("/v1/estimate/batch", json={"items": items}).status_code == 413
    assert client.post("/v1/estimate/batch", json={"items": items[:10]}).status_code == 200


def test_a_client_that_spends_its_units_waits_and_others_do_not():
    # CPU metering off the scale (a unit is a second), so the debt is the units asked, on any machine
    app = app_with(API_KEYS=("greedy-test-key-000000000000000000", "calm-test-key-00000000000000000000"), RATE_LIMIT=1.0, RATE_BURST=20.0, UNIT_CPU_MS=1000.0)
    client = app.test_client()
    greedy, calm = {"X-API-Key": "greedy-test-key-000000000000000000"}, {"X-API-Key": "calm-test-key-00000000000000000000"}
    items = [{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}}] * 25  # 5 units in debt
    assert client.post("/v1/estimate/batch", json={"items": items}, headers=greedy).status_code == 200
    refused = client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "D-M"}}, headers=greedy)
    assert refused.status_code == 429 and refused.mimetype == "application/problem+json"
    assert 5 <= int(refused.headers["Retry-After"]) <= 6
    assert client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "D-M"}},
                       headers=calm).status_code == 200
    assert client.get("/healthz").status_code == 200  # probes are never limited


def test_the_bucket_is_off_by_default():
    client = app_with().test_client()
    assert all(client.post("/v1/memory", json={"model": "llama-3.1-8b"}).status_code == 200 for _ in range(50))


def test_a_worker_runs_one_heavy_request_at_a_time_and_the_next_waits_a_moment_then_gets_a_503():
    app = app_with(HEAVY_WAIT_S=0.2)
    slots = app.extensions[LIMITS].slots["batch"]
    assert slots.acquire("another client")  # another thread holds the worker's batch slot
    try:
        response = app.test_client().post("/estimate/batch", json={"items": [{"model": "llama-3.1-8b",
                                                                            "hardware": {"card": "D-M"}}]})
        assert response.status_code == 503 and response.headers["Retry-After"] == "1"
        assert "within 0.2 s" in response.get_json()["detail"]
        light = app.test_client().post("/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "D-M"}})
        assert light.status_code == 200
    finally:
        slots.release()


def test_plots_are_cached_like_answers(monkeypatch):
    from service.api import plots

    app = create_app()
    drawn = []
    original = plots.svg_bytes
    monkeypatch.setattr(plots, "svg_bytes", lambda fig: drawn.append(1) or original(fig))
    client = app.test_client()
    query = {"model": "llama-3.1-8b", "card": "D-M", "batch_size": 3}
    first = client.get("/v1/plots/roofline.svg", query_string=query)
    second = client.get("/v1/plots/roofline.svg", query_string=query)
    assert first.status_code == second.status_code == 200 and first.data == second.data
    assert len(drawn) == 1


def test_a_plot_cannot_be_broken_by_a_name():
    client = create_app().test_client()
    model = {"name": "$\\frac{", "params_billion": 8, "layers": 32, "hidden_size": 4096, "attention_heads": 32}
    body = {"model": model, "options": [{"card": "D-M"}], "target": {"concurrent_users": 4},
            "prices": {"D-M": 1000}}
    assert client.post("/v1/compare", json=body, headers={"Accept": "text/html"}).status_code == 200


# --- 2. metrics a stranger can blow up -----------------------------------------------------

def _series(client) -> set[tuple]:
    text = client.get("/metrics").get_data(as_text=True)
    return {tuple(sorted(s.labels.items())) for family in text_string_to_metric_families(text)
            if family.name == "sizing_http_requests" for s in family.samples}


def test_random_methods_add_no_series():
    client = create_app().test_client()
    client.open("/v1/estimate", method="BREW")  # the one series unknown methods share
    before = _series(client)
    rng = random.Random(7)
    for _ in range(200):
        method = "".join(rng.choices(string.ascii_uppercase, k=8))
        client.open(f"/{rng.random()}", method=method)
        client.open("/v1/estimate", method=method)
    added = _series(client) - before
    assert all(dict(labels)["method"] in {"GET", "other"} for labels in added), added
    assert len(added) <= 2  # the scrape's own GET /metrics 200, once


# --- 3. closed by default where it is deployed ----------------------------------------------

@pytest.mark.parametrize("value", ["", " , ", ",,", "   "])
def test_a_key_setting_without_a_key_stops_the_start(monkeypatch, value):
    monkeypatch.setenv("SIZING_API_KEYS", value)
    with pytest.raises(ValueError, match="holds no key"):
        create_app()


@pytest.mark.parametrize(("name", "value"), [
    ("API_KEYS", "k1"), ("API_KEYS", ("k1", "")), ("API_KEYS", [1]), ("CORS_ORIGINS", "https://a.example"),
    ("AUTH_METRICS", "false"), ("AUTH_PROBES", 1),
    ("RATE_LIMIT", "100"), ("MAX_REQUEST_COST", float("nan")), ("HEAVY_CONCURRENCY", -1),
    ("HEAVY_WAIT_S", "2"), ("HEAVY_QUEUE", -1), ("UNIT_CPU_MS", 0), ("UNIT_CPU_MS", True),
])
def test_settings_only_in_their_documented_types(name, value):
    with pytest.raises(TypeError, match=name):
        create_app({name: value})


def test_a_limit_setting_that_is_not_a_number_stops_the_start(monkeypatch):
    monkeypatch.setenv("SIZING_RATE_LIMIT", "lots")
    with pytest.raises(ValueError, match="SIZING_RATE_LIMIT"):
        create_app()


# --- 4. outputs that cannot be turned against their reader ----------------------------------

CSV_NAMES = {  # a caller's text as a model name -> the cell a spreadsheet reads
    "=1+2": "'=1+2", "+SUM(A1)": "'+SUM(A1)", "-2+3": "'-2+3", "@cmd": "'@cmd", "\tx": "'\tx", "\rx": "'\rx",
    " =1+2": "' =1+2", "\u200b=1+2": "'\u200b=1+2", "\ufeff@cmd": "'\ufeff@cmd", "\u200e \u2060+1": "'\u200e \u2060+1",
    "a;=1+1": "a;=1+1", "plain": "plain", "x=1": "x=1",
}


def test_a_batch_csv_cell_from_caller_text_never_begins_with_a_formula(client):
    """Formula characters after leading spaces and invisible format characters too; a `;` stays
    inside its quoted cell."""
    items = [{"model": {"name": name, "params_billion": 7}, "hardware": {"card": "D-M"}} for name in CSV_NAMES]
    response = client.post("/v1/estimate/batch", json={"items": items}, headers={"Accept": "text/csv"})
    text = response.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["model"] for r in rows] == list(CSV_NAMES.values())
    # every cell quoted: a spreadsheet splitting on `;` keeps "a;=1+1" one cell, not a formula after it
    for line in text.split("\r\n")[:-1]:
        assert line.startswith('"') and line.endswith('"') and '","' in line, line
    assert ',"a;=1+1",' in text


@pytest.mark.parametrize("model_type", [["llama"], {"llama": 1}, 5, None, 2.5, True])
def test_a_config_model_type_that_is_not_text_is_a_422_not_a_500(client, model_type):
    response = client.post("/v1/estimate", json={"model": {"hf_config": {"model_type": model_type, "hidden_size": 64}},
                                                 "hardware": {"card": "D-M"}})
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    assert response.get_json()["errors"][0]["field"] == "model.hf_config.model_type"


@pytest.mark.parametrize("body", [
    {"model": {"hf_config": {"model_type": "x" * 500_000}}, "hardware": {"card": "D-M"}},
    {"model": {"hf_config": {"model_type": [["y" * 2_000] * 20] * 20}}, "hardware": {"card": "D-M"}},
    {"model": "llama-3.1-8b", "hardware": {"card": "D-M"}, "z" * 500_000: 1},
])
def test_a_problem_quotes_at_most_200_characters_of_what_it_was_sent(client, body):
    """A 1 MB value came back three times (detail, message, params) in 0.4.4: each quote is cut."""
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 422
    assert len(response.get_data()) < 8_000
    problem = response.get_json()
    for text in (problem["detail"], *(e["message"] for e in problem["errors"]), *(e["field"] for e in problem["errors"])):
        assert "x" * 201 not in text and "y" * 201 not in text and "z" * 201 not in text


@pytest.mark.parametrize(("given", "kept"), [
    ("abc-123", True), ("a" * 128, True), ("abc\n", False), ("abc\r\nX-Evil: 1", False), ("a" * 129, False),
    ("", False), ("a b", False),
])
def test_a_request_id_is_kept_only_when_it_is_whole_a_token(given, kept):
    assert valid_request_id(given) is kept


# --- 5. an operator's catalog file that cannot break serving ---------------------------------

CARD = """cards:
  - id: lab-card
    name: Lab card
    vendor: NVIDIA
    line: datacenter
    tier: D-M
    memory_gib: 96
    bandwidth_gb_per_s: {bandwidth}
    power_w: 600
    interconnect: dedicated
    interconnect_gb_per_s: 900
    ecc: true
    source: acceptance test
    dense_tflops: {{bf16: 800}}
"""
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n"


@pytest.mark.parametrize(("text", "line", "words"), [
    (CARD.format(bandwidth=".inf"), 8, "not a finite number"),
    (CARD.format(bandwidth=".nan"), 8, "not a finite number"),
    (BOMB, 1, "anchors and aliases"),
    ("prices:\n  D-M: &p {amount: 1, currency: USD, source: x}\n  D-L: *p\n", 2, "anchors and aliases"),
    (CARD.format(bandwidth=4000).replace("    power_w: 600\n", "    power_w: 600\n    power_w: 60\n"), 10,
     "duplicate key 'power_w'"),
    ("prices:\n  D-M: {amount: 1, currency: USD, source: x}\n  D-M: {amount: 2, currency: USD, source: y}\n", 3,
     "duplicate key 'D-M'"),
    (CARD.format(bandwidth=4000).replace("name: Lab card", "name: Lab $\\\\frac{ card"), 2, "'$'"),
    (CARD.format(bandwidth=4000).replace("name: Lab card", 'name: "Lab\\u0007card"'), 2, "control characters"),
])
def test_a_catalog_file_that_could_break_serving_stops_the_start(tmp_path, text, line, words):
    path = tmp_path / "catalog.yaml"
    path.write_text(text)
    with pytest.raises(CatalogFileError) as info:
        create_app({"CATALOG_FILE": str(path)})
    assert f"catalog.yaml:{line}:" in str(info.value) and words in str(info.value), str(info.value)


def test_a_good_card_still_loads(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text(CARD.format(bandwidth=4000))
    assert create_app({"CATALOG_FILE": str(path)}).test_client().get("/cards/lab-card").status_code == 200


# --- 6. who asked ------------------------------------------------------------------------------

def test_the_access_log_names_the_key_by_its_id_never_the_key(caplog):
    client = app_with(API_KEYS=("s3cret-key-one-00000000000000000000", "other-test-key-0000000000000000000")).test_client()
    with caplog.at_level(logging.INFO, logger="sizing.access"):
        client.post("/v1/memory", json={"model": "llama-3.1-8b"}, headers={"Authorization": "Bearer s3cret-key-one-00000000000000000000"})
        client.post("/v1/memory", json={"model": "llama-3.1-8b"}, headers={"Authorization": "Bearer wrong"})
    ok, refused = [r for r in caplog.records if r.name == "sizing.access"][-2:]
    assert ok.key_id == key_id("s3cret-key-one-00000000000000000000") and ok.key_id.startswith("key-") and len(ok.key_id) == 12
    assert refused.status == 401 and refused.key_id is None
    assert all("s3cret" not in str(vars(r)) for r in caplog.records)


# --- 7. numbers JSON cannot carry ----------------------------------------------------------------

TINY = (5e-324, 1e-310, 1e-300)


@pytest.mark.parametrize("energy", [{"hours_per_day": t} for t in TINY] + [{"utilization": t} for t in TINY])
@pytest.mark.parametrize(("path", "body"), [
    ("/estimate", {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"}, "card_price": 1e12}),
    ("/estimate", {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm", "count": 8}, "card_price": 1e12,
                   "workload": {"mode": "pretrain", "train_tokens": 1e9}}),
    ("/cost", {"hardware": {"card": "h100-sxm", "count": 8}, "card_price": 1e12}),
    ("/compare", {"model": "llama-3.1-8b", "target": {"concurrent_users": 5}, "options": [{"card": "h100-sxm"}],
                  "prices": {"h100-sxm": 1e12}, "rent_per_card_hour": {"h100-sxm": 1e-300}}),
])
def test_a_machine_on_for_no_time_at_all_is_answered_with_finite_numbers(client, path, body, energy):
    """hours_per_day 1e-310 made a cost per million tokens of infinity, which JSON cannot carry:
    a 500 (a fuzzer found it). Less than one token a year has no price per token."""
    response = client.post(path, json={**body, "energy": energy})
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    json.loads(response.get_data(as_text=True), parse_constant=lambda c: pytest.fail(f"{c} in the answer"))
