"""An operator's catalog file extends cards, models and prices at start, or stops the service."""

import textwrap

import pytest

from service.app import create_app
from service.overlay import CatalogFileError

CARD = """
  - id: lab-card-96
    name: Lab accelerator 96 GB
    vendor: NVIDIA
    line: datacenter
    tier: D-M
    memory_gib: 96
    memory_type: HBM3
    bandwidth_gb_per_s: 4000
    power_w: 600
    interconnect: dedicated
    interconnect_gb_per_s: 900
    ecc: true
    aliases: [lab card]
    source: our acceptance test, 2026-11
    dense_tflops: {bf16: 800, fp8: 1600}
"""
MODEL = """
  - id: our-model-8b
    name: Our Model 8B
    config_source: internal registry, rev 3
    config: {model_type: llama, hidden_size: 4096, intermediate_size: 14336,
             num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 8,
             vocab_size: 128256, tie_word_embeddings: false}
"""

# A model given by its figures rather than a config.json.
BY_FIGURES = """models:
  - id: our-model-by-figures
    name: Our Model by figures
    source: internal registry, rev 3
    params: 8000000000
    layers: 32
    attention_heads: 32
    kv_heads: 8
"""


def app_with(tmp_path, text: str):
    path = tmp_path / "catalog.yaml"
    path.write_text(textwrap.dedent(text))
    return create_app({"TESTING": True, "CATALOG_FILE": str(path)})


def test_a_good_file_adds_cards_models_and_prices(tmp_path):
    app = app_with(tmp_path, f"cards:{CARD}models:{MODEL}prices:\n  D-M: {{amount: 20000, currency: USD, source: framework contract}}\n")
    client = app.test_client()
    card = client.get("/v1/cards/lab card").get_json()
    assert card["id"] == "lab-card-96" and card["dense_tflops"]["fp8"] == 1600
    assert client.get("/v1/cards/D-M").get_json()["price"] == {
        "amount": 20000, "currency": "USD", "source": "framework contract", "date": None}
    answer = client.post("/v1/estimate", json={"model": "Our Model 8B", "hardware": {"card": "lab-card-96"}})
    assert answer.status_code == 200
    assert answer.get_json()["model"]["params"] == 8_030_261_248


def test_an_entry_with_an_existing_id_replaces_it(tmp_path):
    app = app_with(tmp_path, "cards:" + CARD.replace("lab-card-96", "D-M").replace("tier: D-M", "tier: D-L").replace("aliases: [lab card]", "aliases: []"))
    assert app.test_client().get("/cards/D-M").get_json()["memory_gib"] == 96


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("cards:" + CARD.replace("memory_gib: 96", "memory_gib: -96"), 2, "memory_gib"),
        ("cards:" + CARD + CARD.replace("lab-card-96", "lab-card-2").replace("ecc: true", "ecc: true\n    warp_drive: 9"), 18, "unknown keys"),
        ("models:" + MODEL.replace("model_type: llama", "model_type: rwkv"), 2, "rwkv"),
        ("cards:" + CARD.replace("tier: D-M", "tier: Z-9"), 2, "tier"),
        (BY_FIGURES.replace("kv_heads: 8", "kv_heads: 64"), 2, "models[0]: kv_heads cannot exceed"),
        ("prices:\n  no-such-card: {amount: 1, currency: USD, source: x}\n", None, "no-such-card"),
        ("prices:\n  D-M: {amount: 0, currency: USD, source: x}\n", 2, "amount"),
        ("cards: [\n", 2, "not valid YAML"),
        ("rents:\n  D-M: {amount: 2.5, currency: USD, source: quote}\n", 2, "needs the date"),
        ("rents:\n  D-M: {amount: 2.5, currency: USD, source: quote, date: last week}\n", 2, "ISO date"),
        ("rents:\n  D-M: {amount: .inf, currency: USD, source: quote, date: 2026-11-02}\n", 2, "not a finite number"),
        ("rents:\n  no-such-card: {amount: 2.5, currency: USD, source: q, date: 2026-11-02}\n", None, "rents"),
        ("colours: [red]\n", 1, "mapping of"),
    ],
    ids=["negative-memory", "unknown-key", "unknown-model-type", "unknown-tier", "inconsistent-model-figures", "price-for-unknown-card",
         "zero-price", "broken-yaml", "rent-without-date", "rent-bad-date", "rent-infinite",
         "rent-for-unknown-card", "unknown-section"],
)
def test_a_bad_file_stops_the_service_naming_the_line(tmp_path, text, line, words):
    with pytest.raises(CatalogFileError) as info:
        app_with(tmp_path, text)
    message = str(info.value)
    assert "catalog.yaml" in message and words in message
    if line is not None:
        assert f"catalog.yaml:{line}:" in message


def test_an_operators_rent_reaches_the_card_and_the_comparison_with_its_date(tmp_path):
    app = app_with(tmp_path, "prices:\n  h100-sxm: {amount: 25000, currency: USD, source: contract}\n"
                             "rents:\n  H100 SXM: {amount: 2.1, currency: USD, source: provider quote Q-1142, "
                             "date: 2026-11-02}\n")
    client = app.test_client()
    rent = {"amount": 2.1, "currency": "USD", "source": "provider quote Q-1142", "date": "2026-11-02"}
    assert client.get("/v1/cards/h100-sxm").get_json()["rent_per_card_hour"] == rent
    # A full 8-card server: one card alone in it draws the server's base power (platforms.toml).
    answer = client.post("/v1/compare", json={"model": "llama-3.1-8b", "options": [{"card": "h100-sxm", "count": 8}],
                                           "target": {"concurrent_users": 10}, "energy": {"currency": "USD"}})
    option = answer.get_json()["options"][0]
    assert option["rent"]["price"] == rent and option["purchase"]["price"]["source"] == "contract"
    assert option["rent"]["cost"] == pytest.approx(8 * 2.1 * 24 * 365 * 3) and option["rent"]["break_even_months"] > 0


def test_a_missing_file_stops_the_service(tmp_path):
    with pytest.raises(CatalogFileError, match="cannot read"):
        create_app({"CATALOG_FILE": str(tmp_path / "absent.yaml")})


def test_duplicate_aliases_across_entries_are_refused(tmp_path):
    with pytest.raises(CatalogFileError, match="claimed twice"):
        app_with(tmp_path, "cards:" + CARD + CARD.replace("lab-card-96", "lab-card-97"))
