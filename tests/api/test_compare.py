"""POST /compare: options side by side, bought or rented, as JSON, CSV and a printable page."""

import csv
import io
from pathlib import Path

import pytest

from service.sizing.units import DAYS_PER_YEAR

from .support import post, texts

SERVING = {
    "model": "qwen2.5-72b",
    "workload": {"engine": "vllm", "prompt_tokens": 1000, "output_tokens": 500},
    "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20},
    "options": [{"card": "h20", "count": 8}, {"card": "h100-sxm", "count": 4}, {"card": "l20", "count": 8},
                {"card": "rtx-4090-d", "count": 16}, {"card": "h100-sxm"}],
    "years": 3, "energy": {"price_per_kwh": 1.2},
    "prices": {"h20": 110_000, "h100-sxm": 220_000, "l20": 30_000, "rtx-4090-d": 14_000},
    "rent_per_card_hour": {"h100-sxm": 15, "h20": 9},
}
TRAINING = {
    "model": "llama-3.1-8b", "workload": {"mode": "pretrain", "train_tokens": 1e11}, "deadline_days": 30,
    "options": [{"card": "h100-sxm"}, {"card": "a100-80gb-sxm", "count": 16}, {"card": "rtx-4090", "count": 8}],
    "prices": {"h100-sxm": 220_000, "a100-80gb-sxm": 100_000, "rtx-4090": 14_000},
    "rent_per_card_hour": {"h100-sxm": 15, "a100-80gb-sxm": 8, "rtx-4090": 2},
}
REQUESTS = {
    "serving": SERVING,
    "serving-overhead-given": {**SERVING, "overhead_fraction": 0.3, "years": 5},
    "serving-8h-a-day": {**SERVING, "energy": {"price_per_kwh": 0.7, "hours_per_day": 8, "utilization": 0.6}},
    "training": TRAINING,
    "training-no-deadline": {k: v for k, v in TRAINING.items() if k != "deadline_days"},
}


def at(option: dict, *path: str):
    """A figure of an option, None where a part it stands in is absent (no purchase price, no rent,
    a training job's serving figures)."""
    for key in path:
        option = None if option is None else option[key]
    return option


@pytest.fixture(params=sorted(REQUESTS))
def answer(request, client):
    return post(client, "/v1/compare", REQUESTS[request.param])


def test_cost_of_ownership_is_capital_plus_years_of_operating(answer):
    priced = [o for o in answer["options"] if at(o, "purchase", "capital_cost") is not None]
    assert priced
    for o in priced:
        for end in ("low", "typical", "high"):
            expected = at(o, "purchase", "capital_cost")[end] + answer["years"] * at(o, "energy", "electricity_cost_per_year")
            assert at(o, "purchase", "cost_of_ownership")[end] == pytest.approx(expected, rel=1e-9), o["label"]
        assert at(o, "purchase", "capital_cost")["low"] <= at(o, "purchase", "capital_cost")["typical"] <= at(o, "purchase", "capital_cost")["high"]
        assert at(o, "purchase", "cards_cost") == pytest.approx(o["cards"] * at(o, "purchase", "price")["amount"])


def _hours(answer) -> float:
    return next(a["value"] for a in answer["assumptions"] if a["name"] == "hours_per_day") \
        if any(a["name"] == "hours_per_day" for a in answer["assumptions"]) else 8


def test_the_break_even_month_is_where_cumulative_rent_crosses_ownership(answer):
    rented = [o for o in answer["options"] if at(o, "rent", "break_even_months") is not None]
    assert rented
    hours = _hours(answer)
    for o in rented:
        rent_a_month = o["cards"] * at(o, "rent", "price", "amount") * hours * DAYS_PER_YEAR / 12
        def own(month, o=o):
            return at(o, "purchase", "capital_cost")["typical"] + at(o, "energy", "electricity_cost_per_year") * month / 12
        m = at(o, "rent", "break_even_months")
        assert own(m) == pytest.approx(rent_a_month * m, rel=1e-9)
        assert rent_a_month * (m * 0.9) < own(m * 0.9) and rent_a_month * (m * 1.1) > own(m * 1.1)
        share = at(o, "rent", "cheaper_below_utilization")
        assert 0 < share <= 1
        if share < 1:  # renting that share of the hours costs the same as owning over the years
            years = answer["years"]
            assert rent_a_month * 12 * years * share == pytest.approx(
                at(o, "purchase", "capital_cost")["typical"] + at(o, "energy", "electricity_cost_per_year") * years * share, rel=1e-9)


@pytest.mark.parametrize("rank_by", ["cost_of_ownership", "cost_per_token", "power", "cards"])
@pytest.mark.parametrize("job", ["serving", "training"])
def test_an_option_that_misses_the_target_never_ranks_above_one_that_meets_it(client, rank_by, job):
    answer = post(client, "/v1/compare", {**REQUESTS[job], "rank_by": rank_by})
    met = [o["meets_target"] for o in answer["options"]]
    assert any(met) and not all(met), "the request should hold both kinds"
    assert met == sorted(met, reverse=True)
    assert [o["rank"] for o in answer["options"]] == list(range(1, len(met) + 1))
    assert answer["best"] == answer["options"][0]["label"]


def test_the_ranking_follows_the_callers_choice(client):
    for rank_by, key in (("power", lambda o: at(o, "energy", "power_w")), ("cards", lambda o: o["cards"]),
                         ("cost_of_ownership", lambda o: at(o, "purchase", "cost_of_ownership")["typical"])):
        answer = post(client, "/v1/compare", {**SERVING, "rank_by": rank_by})
        met = [key(o) for o in answer["options"] if o["meets_target"]]
        assert met == sorted(met), rank_by


def test_options_marked_unbeaten_are_beaten_by_none_on_cost_and_speed(answer):
    training = answer["target"] is None
    def cost(o):
        return at(o, "purchase", "cost_per_run") if training else at(o, "purchase", "cost_of_ownership")["typical"]
    def speed(o):
        return -o["time_s"] if training else at(o, "serving", "tokens_per_s_per_user")
    met = [o for o in answer["options"] if o["meets_target"] and at(o, "purchase", "cost_of_ownership") is not None]
    for o in met:
        beaten = any(cost(x) <= cost(o) and speed(x) >= speed(o) and (cost(x) < cost(o) or speed(x) > speed(o))
                     for x in met if x is not o)
        assert o["pareto_optimal"] is (not beaten), o["label"]
    assert all(o["pareto_optimal"] is False for o in answer["options"] if not o["meets_target"])


def test_the_readme_example_answers_each_option(client):
    answer = post(client, "/v1/compare", SERVING)
    by = {o["label"]: o for o in answer["options"]}
    h100, h20, l20, d = by["4 x h100-sxm"], by["8 x h20"], by["8 x l20"], by["16 x rtx-4090-d"]
    assert h100["meets_target"] and h20["meets_target"]
    assert at(h100, "serving", "tokens_per_s_per_user") >= 20 and at(h20, "serving", "tokens_per_s_per_user") >= 20
    assert not l20["meets_target"] and l20["cards_needed"] > 8 and "8 given" in l20["reason"]["message"]
    assert not d["meets_target"] and "20 tokens/s per user asked" in d["reason"]["message"]
    assert at(h100, "rent", "cost") == pytest.approx(4 * 15 * 24 * DAYS_PER_YEAR * 3)
    assert at(h100, "energy", "power_basis") == "machine" and h100["machines"] == 1
    assert any("consumer card" in w for w in texts(d["warnings"])) and any("no ECC" in w for w in texts(d["warnings"]))
    assert any("rack power" in w for w in texts(h20["warnings"]))
    assert "options meeting it: 3 of 5" in answer["summary"] and answer["best"] in answer["summary"]


def test_the_readme_shows_the_worked_example_as_the_service_answers_it(client):
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    body = {**SERVING, "options": SERVING["options"][:4], "rent_per_card_hour": {"h100-sxm": 15}}
    answer = post(client, "/v1/compare", body)
    assert f'Summary: "{answer["summary"]}"' in readme
    for o in answer["options"]:
        if at(o, "purchase", "cost_of_ownership") is not None:
            assert f"| {o['purchase']['cost_of_ownership']['typical']:,.0f} |" in readme, o["label"]


def test_a_count_that_meets_the_target_is_used_whole_and_serves_faster(client):
    least = post(client, "/v1/compare", {**SERVING, "options": [{"card": "h20"}]})["options"][0]
    more = post(client, "/v1/compare", {**SERVING, "options": [{"card": "h20", "count": least["cards"] * 2}]})
    more = more["options"][0]
    assert more["meets_target"] and more["cards"] == least["cards"] * 2
    assert at(more, "serving", "tokens_per_s_per_user") >= at(least, "serving", "tokens_per_s_per_user")
    assert at(more, "purchase", "cost_of_ownership")["typical"] > at(least, "purchase", "cost_of_ownership")["typical"]


def test_without_a_price_the_answer_says_no_price_and_never_guesses(client):
    answer = post(client, "/v1/compare", {**SERVING, "prices": {}, "rent_per_card_hour": {}})
    for o in answer["options"]:
        assert o["purchase"] is None and o["rent"] is None  # absent parts are null whole, not runs of nulls
        if o["cards"] is not None:
            assert any(w.startswith(f"no price for {o['card']}") for w in texts(o["warnings"]))
            assert at(o, "energy", "electricity_cost_per_year") > 0  # electricity needs no card price
    assert "(no price)" in answer["summary"]


def test_a_card_with_only_a_rent_is_priced_to_rent(client):
    answer = post(client, "/v1/compare", {**SERVING, "options": [{"card": "h100-sxm"}], "prices": {}})
    option = answer["options"][0]
    assert at(option, "purchase", "cost_of_ownership") is None and at(option, "rent", "break_even_months") is None
    assert at(option, "rent", "cost") == pytest.approx(option["cards"] * 15 * 24 * DAYS_PER_YEAR * 3)


def test_prices_scale_capital_linearly(client):
    one = post(client, "/v1/compare", SERVING)["options"]
    doubled = post(client, "/v1/compare", {**SERVING, "prices": {k: 2 * v for k, v in SERVING["prices"].items()}})
    for a, b in zip(one, doubled["options"]):
        assert at(b, "purchase", "capital_cost")["typical"] == pytest.approx(2 * at(a, "purchase", "capital_cost")["typical"])


def test_filters_compare_every_card_they_match(client):
    answer = post(client, "/v1/compare", {**SERVING, "options": {"line": "datacenter", "kind": "card",
                                                                  "min_memory_gib": 90}})
    cards = {o["card"] for o in answer["options"]}
    assert {"h20", "h200-sxm"} <= cards and "h100-sxm" not in cards


def test_a_training_option_without_a_count_meets_the_deadline_with_the_least_cards(client):
    answer = post(client, "/v1/compare", TRAINING)
    h100 = next(o for o in answer["options"] if o["card"] == "h100-sxm")
    assert h100["meets_target"] and h100["time_s"] <= 30 * 86_400
    assert at(h100, "purchase", "cost_per_run") > 0 and at(h100, "rent", "cost") == pytest.approx(
        h100["cards"] * 15 * h100["time_s"] / 3600)
    slow = next(o for o in answer["options"] if o["card"] == "rtx-4090")
    assert not slow["meets_target"] and "30-day deadline" in slow["reason"]["message"]
    assert any("PCIe" in w for w in texts(slow["warnings"]))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"target": None}, "target"),
        ({"workload": {"mode": "lora", "train_tokens": 1e9}}, "target"),
        ({"deadline_days": 3}, "deadline_days"),
        ({"energy": {"power_w": 5000}}, "energy.power_w"),
        ({"energy": {"years": 5}}, "energy.years"),
        ({"options": []}, "options"),
        ({"options": [{"card": "h100-sxm"}] * 65}, "options"),
        ({"options": [{"card": "h100-sxm"}, {"card": "no-such-card"}]}, "options.1.card"),
        ({"options": "h100"}, "options"),
        ({"options": {"line": "datacenter", "min_memory_gib": 10_000}}, "options"),
        ({"rank_by": "speed"}, "rank_by"),
        ({"prices": {"no-such-card": 1}}, "prices"),
        ({"rent_per_card_hour": {"h20": -1}}, "rent_per_card_hour"),
        ({"years": 0}, "years"),
    ],
)
def test_bad_requests_are_problems_naming_the_field(client, change, field):
    body = {k: v for k, v in {**SERVING, **change}.items() if v is not None}
    response = client.post("/v1/compare", json=body)
    assert response.status_code == 422, response.get_json()
    assert response.mimetype == "application/problem+json"
    assert any(e["field"].startswith(field) for e in response.get_json()["errors"]), response.get_json()


def test_csv_is_the_options_table(client):
    response = client.post("/v1/compare", json=SERVING, headers={"Accept": "text/csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["option"] for r in rows] == [o["label"] for o in post(client, "/v1/compare", SERVING)["options"]]
    assert {"cost_of_ownership", "capital_cost_low", "break_even_months", "power_w"} <= set(rows[0])
    assert rows[0]["rank"] == "1"
    currency = post(client, "/v1/compare", SERVING)["currency"]
    assert {r["currency"] for r in rows} == {currency}  # every money column's currency, on every row
    # Sentences are their text, as a reader of the sheet wants them; never a JSON object's repr.
    options = post(client, "/v1/compare", SERVING)["options"]
    for row, option in zip(rows, options, strict=True):
        assert row["reason"] == option["reason"]["message"]
        assert row["warnings"] == " | ".join(w["message"] for w in option["warnings"])
        assert row["plan"] == (option["parallelism"]["description"]["message"] if option["parallelism"] else "")
        assert "{" not in row["reason"] + row["warnings"] + row["plan"]


def test_a_csv_cell_from_caller_text_never_begins_with_a_formula(client):
    card = {"name": "=HYPERLINK(\"http://x\")", "memory_gib": 80, "bandwidth_gb_per_s": 3350,
            "dense_tflops": {"bf16": 989}, "power_w": 700, "line": "datacenter"}
    body = {**SERVING, "options": [{"card": card, "count": 8}], "prices": {}, "rent_per_card_hour": {}}
    response = client.post("/v1/compare", json=body, headers={"Accept": "text/csv"})
    assert response.status_code == 200, response.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0]["card_name"] == "'=HYPERLINK(\"http://x\")"  # shown as text, never evaluated
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "@", "\t", "\r", "-")), cell


def test_the_html_report_escapes_every_caller_string(client):
    model = {"name": "<script>alert('x')</script>", "params_billion": 8, "layers": 32, "hidden_size": 4096,
             "attention_heads": 32, "kv_heads": 8}
    response = client.post("/v1/compare", json={**SERVING, "model": model}, headers={"Accept": "text/html"})
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "<script" not in page and "&lt;script&gt;" in page
    assert 'id="options"' in page and page.count('class="chart"') == 2
    assert "http://" not in page and "https://" not in page  # nothing to fetch: the page works offline


def test_the_reports_rent_line_is_paid_for_the_hours_given(client, monkeypatch):
    from service.sizing import compare as domain

    hours = []
    original = domain.cumulative_cost
    monkeypatch.setattr(domain, "cumulative_cost",
                        lambda option, years, h, month: hours.append(h) or original(option, years, h, month))
    body = {**SERVING, "energy": {"price_per_kwh": 1.2, "hours_per_day": 8}}
    assert client.post("/v1/compare", json=body, headers={"Accept": "text/html"}).status_code == 200
    assert hours and set(hours) == {8}


def test_the_html_report_speaks_chinese(client):
    page = client.post("/v1/compare", json={**SERVING, "lang": "zh"},
                       headers={"Accept": "text/html"}).get_data(as_text=True)
    assert '<html lang="zh">' in page and "采购方案比较" in page and "拥有成本" in page


def test_json_stays_the_default_for_a_client_that_accepts_anything(client):
    response = client.post("/v1/compare", json=SERVING, headers={"Accept": "*/*"})
    assert response.mimetype == "application/json"


@pytest.mark.parametrize("lang, said", [("en", "prompt is 2,000 tokens and each answer 300 tokens"),
                                        ("zh", "输入为 2,000 token，每个回答 300 token")])
def test_capacity_and_compare_summaries_say_the_prompt_and_answer_lengths_they_assumed(client, lang, said):
    """The lengths move the answer (H20 for 50 users: 10 cards at the defaults, more at longer
    prompts), so a quoted summary carries them."""
    target = {"concurrent_users": 50, "tokens_per_s_per_user": 20}
    workload = {"prompt_tokens": 2000, "output_tokens": 300}
    capacity = post(client, "/v1/capacity", {"model": "qwen2.5-72b", "cards": ["h20"], "target": target,
                                            "workload": workload, "lang": lang})
    compare = post(client, "/v1/compare", {"model": "qwen2.5-72b", "options": [{"card": "h20", "count": 8}],
                                          "target": target, "workload": workload, "lang": lang})
    assert said in capacity["summary"] and said in compare["summary"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_prices_a_comparison_ranks_by_what_it_can_compute_and_says_it(client, lang):
    """'H20 or L20 for 50 users?' with no prices: not ranked by a cost it cannot compute."""
    body = {"model": "qwen2.5-72b", "options": [{"card": "l20"}, {"card": "h20"}], "lang": lang,
            "target": {"concurrent_users": 50}}
    answer = post(client, "/v1/compare", body)
    first, second = answer["options"][:2]
    assert answer["rank_by"] == "cards" and first["cards"] <= second["cards"]
    assert any(a["name"] == "rank_by" and a["note"]["code"] == "fewest_cards_first" for a in answer["assumptions"])
    said = f"{first['cards']} cards" if lang == "en" else f"{first['cards']} 张卡"
    assert said in answer["summary"] and f"{second['energy']['electricity_cost_per_year']:,.0f}" in answer["summary"]
    priced = post(client, "/v1/compare", {**body, "prices": {"h20": 110000, "l20": 30000}})
    assert priced["rank_by"] == "cost_of_ownership"  # with prices, the cheapest to own first


def test_a_sparse_comparison_dumps_only_its_fields(client, monkeypatch):
    """fields= on /compare answers the whole answer's fields, and only they are dumped: the whole
    answer is not dumped first and then cut down."""
    from service.api import compare as compare_view

    whole = post(client, "/v1/compare", SERVING)
    monkeypatch.setattr(compare_view, "answered", lambda result: pytest.fail("the whole answer was dumped"))
    sparse = post(client, "/v1/compare?fields=summary,best,options.label,options.cards", SERVING)
    assert sparse == {"summary": whole["summary"], "best": whole["best"],
                      "options": [{"label": o["label"], "cards": o["cards"]} for o in whole["options"]]}
