"""Every error is problem+json with an `errors` member; bad input is never a 500."""

import pytest
from marshmallow import fields

from service.api import schemas
from service.app import create_app

PROBLEM = "application/problem+json"
GOOD = {"model": {"params_billion": 7}, "hardware": {"card": "D-M"}}


def raw(client, body: bytes | str, content_type="application/json", path="/estimate"):
    return client.post(path, data=body, content_type=content_type)


def assert_problem(response, status):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    body = response.get_json()
    assert body["status"] == status
    assert {"type", "title", "detail", "instance", "errors"} <= body.keys()
    return body


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b'{"model": NaN}',
        b'{"model": {"params_billion": NaN}, "hardware": {"card": "D-M"}}',
        b'{"model": {"params_billion": Infinity}, "hardware": {"card": "D-M"}}',
        b'{"model": {"params_billion": -Infinity}, "hardware": {"card": "D-M"}}',
        b'{"model": {"params_billion": 1e400}, "hardware": {"card": "D-M"}}',
        b'{"model": {"params_billion": ' + b"9" * 5000 + b'}, "hardware": {"card": "D-M"}}',
        b"[" * 1000 + b"]" * 1000,
        b'{"a": ' * 1000 + b"1" + b"}" * 1000,
        b"\xff\xfe",
        b"",
        b'{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}, "energy": {"currency": "\\ud83d"}}',
        b'{"model": "\\udfff", "hardware": {"card": "D-M"}}',
        b'{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}, "energy": {"currency": "x\\uDBFFy"}}',
        # a lone surrogate without an ASCII escape: UTF-8-encoded (json.loads passes it), or a
        # body in UTF-16 or UTF-32 (json.loads detects them), escaped or raw
        b'{"model": "\xed\xa0\x80", "hardware": {"card": "D-M"}}',
        '{"model": "\\ud800", "hardware": {"card": "D-M"}}'.encode("utf-16-le"),
        '{"model": "\\ud800", "hardware": {"card": "D-M"}}'.encode("utf-16"),
        '{"model": "\\udfff", "hardware": {"card": "D-M"}}'.encode("utf-32-le"),
        '{"model": "\ud800", "hardware": {"card": "D-M"}}'.encode("utf-16-le", "surrogatepass"),
    ],
    ids=["truncated", "nan-top", "nan", "infinity", "minus-infinity", "1e400", "5000-digits",
         "deep-array", "deep-object", "not-utf8", "empty", "lone-high-surrogate", "lone-low-surrogate",
         "lone-surrogate-upper-case-escape", "surrogate-in-utf-8", "escaped-in-utf-16-le", "escaped-in-utf-16-bom",
         "escaped-in-utf-32", "raw-in-utf-16"],
)
def test_malformed_json_is_400(client, body):
    assert_problem(raw(client, body), 400)


def test_wrong_content_type_is_415(client):
    assert_problem(raw(client, "model=7", "application/x-www-form-urlencoded"), 415)
    assert_problem(raw(client, '{"model": "x"}', "text/plain"), 415)


def test_body_over_the_limit_is_413(client):
    big = b'{"model": "' + b"x" * (2 << 20) + b'"}'
    assert_problem(raw(client, big), 413)


def test_a_paired_surrogate_is_fine(client):
    body = b'{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}, "energy": {"currency": "\\ud83d\\ude00"}}'
    response = raw(client, body)
    assert response.status_code == 200 and response.get_json()["energy"]["currency"] == "\U0001F600"


def test_unknown_path_is_404_and_wrong_method_405(client):
    assert_problem(client.get("/nowhere"), 404)
    response = client.put("/v1/estimate", json={})
    body = assert_problem(response, 405)
    assert "POST" in response.headers["Allow"] and body["errors"] == []


def test_unknown_card_in_path_is_404(client):
    body = assert_problem(client.get("/v1/cards/gtx-9999"), 404)
    assert "gtx-9999" in body["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"hardware": {"card": "D-M"}}, "model"),
        ({"model": {"params_billion": "3.5"}, "hardware": {"card": "D-M"}}, "model.params_billion"),
        ({"model": {"params_billion": True}, "hardware": {"card": "D-M"}}, "model.params_billion"),
        ({"model": {"params_billion": 0}, "hardware": {"card": "D-M"}}, "model.params_billion"),
        ({"model": {"params_billion": -7}, "hardware": {"card": "D-M"}}, "model.params_billion"),
        ({"model": {"params_billion": 7, "layers": 3.5}, "hardware": {"card": "D-M"}}, "model.layers"),
        ({"model": {"params_billion": 7, "colour": "red"}, "hardware": {"card": "D-M"}}, "model.colour"),
        ({**GOOD, "extra": 1}, "extra"),
        ({**GOOD, "workload": {"batch_size": "16"}}, "workload.batch_size"),
        ({**GOOD, "workload": {"batch_size": 0}}, "workload.batch_size"),
        ({**GOOD, "workload": {"context_tokens": 10**9}}, "workload.context_tokens"),
        ({**GOOD, "workload": {"mode": "dreaming"}}, "workload.mode"),
        ({**GOOD, "workload": {"precision": "fp5"}}, "workload.precision"),
        ({**GOOD, "workload": {"mode": "full_finetune", "precision": "int4"}}, "workload.precision"),
        ({**GOOD, "workload": {"mfu": 1.5}}, "workload.mfu"),
        ({"model": {"params_billion": 7}, "hardware": {"card": "gtx-9999"}}, "hardware.card"),
        ({"model": "no-such-model", "hardware": {"card": "D-M"}}, "model"),
        ({"model": 7, "hardware": {"card": "D-M"}}, "model"),
        ({"model": {"params_billion": 7}, "hardware": {"card": "D-M", "count": 0}}, "hardware.count"),
        ({"model": {"params_billion": 7}, "hardware": {"card": {"memory_gib": 24}}},
         "hardware.card.bandwidth_gb_per_s"),
        ({"model": {"params_billion": 7, "active_params_billion": 9}, "hardware": {"card": "D-M"}},
         "model.active_params_billion"),
        ({**GOOD, "energy": {"pue": 0.5}}, "energy.pue"),
        ({**GOOD, "lang": "fr"}, "lang"),
        ([], "body"),
    ],
)
def test_invalid_input_is_422_naming_the_field(client, body, field):
    problem = assert_problem(client.post("/v1/estimate", json=body), 422)
    assert field in {e["field"] for e in problem["errors"]}, problem["errors"]


def test_cost_needs_a_source_of_power_and_takes_power_w_once(client):
    assert_problem(client.post("/v1/cost", json={}), 422)
    twice = {"power_w": 100, "energy": {"power_w": 200}}
    assert "power_w" in {e["field"] for e in assert_problem(client.post("/v1/cost", json=twice), 422)["errors"]}


def test_scaling_needs_train_tokens(client):
    body = {"model": {"params_billion": 7}, "workload": {"mode": "pretrain"},
            "hardware": {"card": "D-M"}}
    problem = assert_problem(client.post("/v1/scaling", json=body), 422)
    assert problem["errors"][0]["field"] == "workload.train_tokens"


def test_an_unexpected_failure_is_a_500_without_traceback():
    app = create_app({"TESTING": False, "PROPAGATE_EXCEPTIONS": False})

    @app.get("/boom")
    def boom():
        raise RuntimeError("secret internals")

    response = app.test_client().get("/boom")
    body = assert_problem(response, 500)
    assert "secret" not in response.get_data(as_text=True)
    assert "Traceback" not in body["detail"]
    assert body["detail"] == "The server failed to answer; it has been logged."  # our handler, not a fallback


def test_a_non_finite_answer_would_be_a_500_not_invalid_json():
    app = create_app({"TESTING": False, "PROPAGATE_EXCEPTIONS": False})

    @app.get("/nan")
    def nan():
        return {"x": float("nan")}

    assert_problem(app.test_client().get("/nan"), 500)


# --- the bad-input suite, on every computing endpoint ----------------------------------------

POST_ENDPOINTS = ("/estimate", "/estimate/batch", "/estimate/sweep", "/memory", "/throughput",
                  "/scaling", "/cost", "/rank", "/recommend", "/normalize")
BAD_BODIES = {
    "malformed": (b'{"model": ', 400),
    "nan": (b'{"value": NaN}', 400),
    "infinity": (b'{"value": Infinity}', 400),
    "1e400": (b'{"value": 1e400}', 400),
    "5000-digits": (b'{"value": ' + b"7" * 5000 + b"}", 400),
    "deep": (b"[" * 1000 + b"]" * 1000, 400),
    "ten-megabytes": (b'{"pad": "' + b"x" * (10 << 20) + b'"}', 413),
    "array": (b"[]", 422),
    "unknown-field": (b'{"colour": "red"}', 422),
    "string-for-number": (b'{"value": "800", "precision": "int8"}', 422),
}


@pytest.mark.parametrize("path", POST_ENDPOINTS)
@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_every_endpoint_refuses_bad_input_with_a_4xx_problem(client, path, case):
    body, status = BAD_BODIES[case]
    if path == "/estimate/batch" and case in ("unknown-field", "string-for-number"):
        status = 422  # the batch's own envelope is what is checked
    assert_problem(raw(client, body, path=path), status)


@pytest.mark.parametrize("path", POST_ENDPOINTS)
def test_every_endpoint_refuses_the_wrong_content_type(client, path):
    assert_problem(raw(client, "a=1", "application/x-www-form-urlencoded", path=path), 415)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "llama-3.1-8b", "hardware": {"card": "D-M"}, "workload": {"context_tokens": 10**8}},
         "workload.context_tokens"),
        ({"model": "llama-3.1-8b", "hardware": {"card": "D-M"}, "workload": {"batch_size": -1}},
         "workload.batch_size"),
        ({"model": {"params_billion": 1e6}, "hardware": {"card": "D-M"}}, "model.params_billion"),
        ({"model": "llama-3.1-8b", "hardware": {"card": "D-M", "count": 10**6}}, "hardware.count"),
    ],
)
def test_huge_and_negative_values_are_422(client, body, field):
    problem = assert_problem(client.post("/v1/estimate", json=body), 422)
    assert field in {e["field"] for e in problem["errors"]}


def test_the_largest_context_allowed_answers_without_error(client):
    response = client.post("/v1/estimate", json={"model": "llama-3.1-8b", "hardware": {"card": "D-M"},
                                              "workload": {"context_tokens": 10_000_000}})
    assert response.status_code == 200
    assert response.get_json()["fit"]["cards_needed"] is None or response.get_json()["fit"]["cards_needed"] > 1


def test_repeated_query_parameters_are_422(client):
    response = client.get("/v1/troubleshoot?q=oom&limit=1&limit=2")
    problem = assert_problem(response, 422)
    assert problem["errors"][0]["field"] == "limit"


def _request_schemas():
    from service.api import schemas

    seen, todo = [], list(schemas._Strict.__subclasses__())
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


def _fields_of(field):
    yield field
    for inner in (getattr(field, "inner", None), getattr(field, "key_field", None), getattr(field, "value_field", None)):
        if inner is not None:
            yield from _fields_of(inner)


def test_every_message_a_request_schema_can_give_is_coded():
    """Each field of each request schema (and its validators, and the schema itself) says its
    errors as coded messages, so that a problem is said in the caller's language: a marshmallow
    message no template knows would stay English."""
    from marshmallow import validate

    from service.sizing import Message

    bare = []
    for cls in _request_schemas():
        schema = cls()
        bare += [f"{cls.__name__}: {key}" for key, text in schema.error_messages.items()
                 if not isinstance(text, Message)]
        for name, top in schema.fields.items():
            for field in _fields_of(top):
                bare += [f"{cls.__name__}.{name}: {key} {text!r}" for key, text in field.error_messages.items()
                         if not isinstance(text, Message)]
                for validator in field.validators:
                    names = {validate.Range: ("message_min", "message_max", "message_all"),
                             validate.Length: ("message_min", "message_max", "message_all", "message_equal"),
                             validate.OneOf: ("error",)}.get(type(validator), ())
                    bare += [f"{cls.__name__}.{name}: {type(validator).__name__}.{attr}" for attr in names
                             if not isinstance(getattr(validator, attr), Message)]
    assert len(_request_schemas()) > 20
    assert not bare, bare[:20]


@pytest.mark.parametrize("field_obj", [fields.Integer(required=True), fields.Integer(load_default=3),
                                       fields.Nested(schemas.CardSpecSchema),
                                       fields.List(fields.Nested(schemas.CardSpecSchema)),
                                       fields.Dict(keys=fields.String(), values=fields.Nested(schemas.CardSpecSchema))])
def test_a_request_part_loaded_partially_has_no_required_field_nor_default(field_obj):
    """A partial load skips an absent field: a required one would go unrefused, a default unset."""
    bad = type("Bad", (schemas._Optional,), {"x": field_obj})
    with pytest.raises(AssertionError, match="required or has a default"):
        bad()


def test_a_workload_loads_only_what_was_given(monkeypatch):
    """Its 22 fields were each loaded, given or not: most of an estimate's parse."""
    loaded_fields = []
    original = fields.Field.deserialize

    def deserialize(self, value, attr=None, data=None, **kwargs):
        loaded_fields.append(attr)
        return original(self, value, attr, data, **kwargs)

    monkeypatch.setattr(fields.Field, "deserialize", deserialize)
    loaded = schemas.WorkloadSpecSchema().load({"prompt_tokens": 1000, "parallelism": {"tensor": 2}})
    assert (loaded.prompt_tokens, loaded.parallelism.tensor, loaded.context_tokens, loaded.mode) == (1000, 2, None, None)
    assert sorted(loaded_fields) == ["parallelism", "prompt_tokens", "tensor"]


def test_a_problems_parameters_come_in_the_templates_order_in_every_process():
    """A refused range names min, then max, whatever the process's hash seed (a frozenset of
    names gave them in the order its hashes fell, which differs from one worker to the next)."""
    import json
    import os
    import subprocess
    import sys

    code = ("from service.app import create_app; import json; "
            "r = create_app({'TESTING': True}).test_client().post('/v1/estimate', json={'model': "
            "{'params_billion': -1}, 'hardware': {'card': 'rtx-4090'}}); "
            "print(json.dumps([list(e['params']) for e in r.get_json()['errors']]))")
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        seen.add(out.strip())
    assert len(seen) == 1 and ["min", "max"] in json.loads(seen.pop())
