"""The compiled loaders (service/api/load.py) load exactly what marshmallow's own load of the same
schema loads, and refuse exactly what it refuses, with the same errors.

Each request schema is loaded both ways: the bodies of test_dump's questions (every route that
takes a body), bodies that reach every kind of field (nested parts, a model or card given by its
figures, a plan, a target, defaults), bodies refused at every depth, and bodies hypothesis makes
from the estimate's fields with right and wrong values.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields, pre_load

from service.api import operations, schemas
from service.api.load import loader
from service.app import create_app

from .test_dump import QUESTIONS

ESTIMATE = schemas.EstimateRequestSchema()

BODIES = [
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090", "count": 2, "cards_per_machine": 4,
                                           "network_gb_per_s": 25},
     "workload": {"mode": "inference", "precision": "fp8", "kv_precision": "fp8", "context_tokens": 8192,
                  "batch_size": 4, "prompt_tokens": 1000, "output_tokens": 200, "engine": "vllm",
                  "parallelism": {"tensor": 2}},
     "energy": {"price_per_kwh": 1.1, "currency": "USD", "pue": 1.3, "utilization": 0.5, "hours_per_day": 8},
     "card_price": 1800, "overhead_fraction": 0.2, "lang": "zh",
     "target": {"concurrent_users": 10, "tokens_per_s_per_user": 20}},
    {"model": {"params_billion": 7, "layers": 32, "hidden_size": 4096}, "hardware": {"card": {
        "memory_gib": 24, "bandwidth_gb_per_s": 1000, "dense_tflops": {"bf16": 165}, "power_w": 450}}},
    {"model": {"hf_config": {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
                             "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 8192,
                             "vocab_size": 32000}}, "hardware": {"card": "l4"}},
    {"model": "qwen2.5-7b", "hardware": {"card": "a100-80gb-sxm"},
     "workload": {"mode": "lora", "lora_rank": 16, "train_tokens": 1e8}},
    {"model": "llama-3.1-8b", "hardware": {"card": "h100-sxm"}, "workload": {}, "energy": {}},
]

REFUSED = [
    None, [], "llama", 3,
    {},
    {"hardware": {"card": "rtx-4090"}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "nope": 1},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090", "nope": 1}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "workload": {"context_tokens": "8k"}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "workload": {"context_tokens": True}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "workload": {"parallelism": {"tensor": 0}}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "workload": {"parallelism": {"nope": 2}}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "workload": None},
    {"model": "llama-3.1-8b", "hardware": None},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "energy": {"power_w": -1}},
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "card_price": -5, "lang": "fr"},
    {"model": "", "hardware": {"card": "rtx-4090"}},
    {"model": {"params_billion": -1}, "hardware": {"card": "rtx-4090"}},
    {"model": "llama-3.1-8b", "hardware": {"card": {"memory_gib": 24}}},
    {"model": "llama-3.1-8b", "hardware": [{"card": "rtx-4090"}]},
    # a schema's own validator: the plan's degrees multiply to too many cards
    {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"},
     "workload": {"parallelism": {"tensor": 1000, "pipeline": 1000}}},
]

# Other routes' schemas, each refusing a body by one of its own validators (marshmallow's
# validates_schema), beside one it loads.
OTHERS = [
    (schemas.CostRequestSchema, {"power_w": 100, "energy": {"power_w": 200}}, False),
    (schemas.CostRequestSchema, {"energy": {"price_per_kwh": 1}}, False),
    (schemas.CostRequestSchema, {"power_w": 100, "energy": {"price_per_kwh": 1}}, True),
    (schemas.RecommendRequestSchema, {"lang": "en"}, False),
    (schemas.RecommendRequestSchema, {"scenario": "team_inference"}, True),
    (schemas.CapacityRequestSchema, {"model": "llama-3.1-8b", "cards": ["l4"], "filters": {"line": "consumer"},
                                     "target": {"concurrent_users": 2}}, False),
    (schemas.CapacityRequestSchema, {"model": "llama-3.1-8b", "cards": ["l4"], "target": {"concurrent_users": 2}},
     True),
]


def _outcome(load, body):
    """What a load makes of `body`: its value, or the error it raises (type and messages)."""
    try:
        return "loaded", load(body)
    except ValidationError as refused:
        return "refused", refused.messages
    except Exception as other:  # noqa: BLE001  # a lookup's own error (an unknown model): the same both ways
        return type(other).__name__, str(other)


def both_ways(schema: Schema, body) -> tuple:
    expected, got = _outcome(schema.load, body), _outcome(loader(schema), body)
    assert got == expected
    return got


@pytest.fixture(scope="module")
def app():
    return create_app({"TESTING": True})


@pytest.mark.parametrize("body", BODIES)
def test_a_body_loads_as_marshmallow_loads_it(app, body):
    with app.test_request_context():
        assert both_ways(ESTIMATE, body)[0] == "loaded"


@pytest.mark.parametrize("body", REFUSED)
def test_a_refused_body_is_refused_with_marshmallows_errors(app, body):
    with app.test_request_context():
        assert both_ways(ESTIMATE, body)[0] != "loaded"


@pytest.mark.parametrize(("method", "path", "body"), [q for q in QUESTIONS if q[2] is not None],
                         ids=[q[1] for q in QUESTIONS if q[2] is not None])
def test_every_routes_body_loads_as_marshmallow_loads_it(app, method, path, body):
    endpoint, _ = app.url_map.bind("localhost").match("/v1" + path.partition("?")[0], method=method)
    said = app.view_functions[endpoint].operation
    with app.test_request_context():
        assert both_ways(operations._parser(said.body), body)[0] == "loaded"


@pytest.mark.parametrize(("schema", "body", "loads"), OTHERS, ids=[f"{s.__name__}-{n}" for n, (s, _, _) in
                                                                   enumerate(OTHERS)])
def test_other_schemas_load_and_refuse_as_marshmallow_does(app, schema, body, loads):
    with app.test_request_context():
        assert (both_ways(schema(), body)[0] == "loaded") is loads


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 100_000), st.floats(-1.0, 1e6, allow_nan=False),
                   st.sampled_from(["bf16", "fp8", "q4_k_m", "inference", "lora", "vllm", "", "zh", "x" * 300]),
                   st.just({}), st.just([]))


@settings(max_examples=300, deadline=None)
@given(workload=st.dictionaries(st.sampled_from(
    ["mode", "precision", "kv_precision", "context_tokens", "batch_size", "prompt_tokens", "output_tokens", "engine",
     "decode_efficiency", "train_tokens", "nope"]), VALUES, max_size=4),
       hardware=st.dictionaries(st.sampled_from(["card", "count", "cards_per_machine", "nope"]),
                                st.one_of(VALUES, st.sampled_from(["rtx-4090", "h100-sxm"])), max_size=3),
       top=st.dictionaries(st.sampled_from(["card_price", "overhead_fraction", "lang", "energy"]), VALUES, max_size=2))
def test_any_estimate_body_loads_or_is_refused_as_marshmallow_does(app, workload, hardware, top):
    with app.test_request_context():
        both_ways(ESTIMATE, {"model": "llama-3.1-8b", "hardware": hardware, "workload": workload, **top})


def test_a_plain_body_is_loaded_without_marshmallows_load_and_a_refused_one_through_it(app, monkeypatch):
    """The compiled load is what runs for a body as it comes; marshmallow's load for the rest."""
    with app.test_request_context():
        expected = ESTIMATE.load(BODIES[1])
        monkeypatch.setattr(Schema, "_do_load", lambda *a, **k: pytest.fail("marshmallow loaded it"))
        assert loader(ESTIMATE)(BODIES[1]) == expected
        with pytest.raises(pytest.fail.Exception, match="marshmallow loaded it"):
            loader(ESTIMATE)(REFUSED[6])


def test_a_schema_the_loader_cannot_load_alike_is_loaded_by_marshmallow():
    class Stripped(Schema):
        name = fields.String()

        @pre_load
        def strip(self, data, **kwargs):
            return {k: v.strip() for k, v in data.items()}

    schema = Stripped()
    assert loader(schema) == schema.load
    assert loader(schema)({"name": " a "}) == {"name": "a"}
