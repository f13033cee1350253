"""The writers write the text the provider encodes the dumper's dict as, number by number and
message by message; the answers they write are checked whole in test_dump.py."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from marshmallow import Schema, fields

from service.api.dump import dumper
from service.api.shapes import Num, Said, Scaled
from service.api.write import writer
from service.app import create_app
from service.sizing import messages as M


def _encoded(value) -> str:
    """What the provider writes, in the compact layout every deployment uses."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


NUMBERS = Schema.from_dict({"x": Num(allow_none=True), "gib": Scaled(2**30, allow_none=True)}, name="WriteNumbers")


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (700, "700.0"),  # an int given for a float: written as the float it is dumped as
    (True, "1.0"),
    (1 / 3, "0.333333333333"),
    (0.1 + 0.2, "0.3"),
    (61319.999999999996, "61320.0"),
    (165_200_000_000_000.0, "165200000000000.0"),  # "%.12g" writes 1.652e+14, repr writes it out
    (123_456_789_012_345.0, "123456789012000.0"),
    (1e16, "1e+16"),
    (1.4e-05, "1.4e-05"),
    (0.0001, "0.0001"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.79769313486e+308"),
    (None, "null"),
])
def test_a_number_is_written_as_its_rounded_float_is_encoded(value, text):
    assert writer(NUMBERS)({"x": value}) == f'{{"x":{text}}}' == _encoded(dumper(NUMBERS)({"x": value}))


@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(10**20), 10**20)))
def test_any_finite_number_is_written_as_the_provider_encodes_its_dump(value):
    answer = {"x": value, "gib": value}
    assert writer(NUMBERS)(answer) == _encoded(dumper(NUMBERS)(answer))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_number_that_is_not_finite_is_refused_as_the_provider_refuses_it(value):
    with pytest.raises(ValueError, match="not JSON compliant"):
        _encoded(dumper(NUMBERS)({"x": value}))
    with pytest.raises(ValueError, match="not JSON compliant"):
        writer(NUMBERS)({"x": value})


NOTED = Schema.from_dict({"note": Said(allow_none=True), "notes": fields.List(Said()), "name": fields.String(),
                          "value": fields.Raw(), "flag": fields.Boolean()}, name="WriteNoted")


def test_a_message_is_written_as_its_json_once_and_kept():
    note = M.SUMMARY_NEVER(card="rtx-4090")
    answer = {"note": note, "notes": [note, M.SUMMARY_SINGLE()], "name": "x\u00e9\"\n", "value": [1, 2.5, "z"],
              "flag": True}
    text = writer(NOTED)(answer)
    assert text == _encoded(dumper(NOTED)(answer))
    kept = note.__dict__["_json_text"]
    assert json.loads(kept) == {"code": "summary_never", "message": str(note), "params": {"card": "rtx-4090"}}
    writer(NOTED)(answer)
    assert note.__dict__["_json_text"] is kept  # the same text, not written again


def test_text_that_is_not_a_coded_message_is_refused_as_the_dump_refuses_it():
    for write in (dumper(NOTED), writer(NOTED)):
        with pytest.raises(TypeError, match="not coded"):
            write({"note": "bare text"})


BODY = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}, "lang": "zh"}


def test_with_other_json_settings_the_answer_is_dumped_and_jsonified():
    """Written text is the provider's compact text only; indented (debug) or sorted answers are
    the dumper's dict as jsonify writes it."""
    compact = create_app({"TESTING": True, "CACHE_SIZE": 0})
    indented = create_app({"TESTING": True, "CACHE_SIZE": 0, "DEBUG": True})
    ordered = create_app({"TESTING": True, "CACHE_SIZE": 0})
    ordered.json.sort_keys = True
    answers = {name: app.test_client().post("/v1/estimate?fields=summary,fit,model.name", json=BODY)
               for name, app in (("compact", compact), ("indented", indented), ("ordered", ordered))}
    texts = {name: response.get_data(as_text=True) for name, response in answers.items()}
    assert all(response.status_code == 200 for response in answers.values())
    assert all(response.mimetype == "application/json" for response in answers.values())
    assert texts["compact"].startswith('{"model":{"name":"Llama-3.1-8B"},"fit":{') and texts["compact"].endswith("}\n")
    assert texts["indented"].startswith('{\n  "model": {\n    "name": "Llama-3.1-8B"')
    assert texts["ordered"].startswith('{"fit":{"card_memory_bytes":')
    assert json.loads(texts["compact"]) == json.loads(texts["indented"]) == json.loads(texts["ordered"])


@pytest.mark.parametrize("value", [True, False, None, 3, -0.0, 2.5, 1e16, "z\u00e9", [1, "a"], {"k": 1.5}],
                         ids=repr)
def test_a_value_of_any_json_type_is_written_as_the_provider_encodes_it(value):
    answer = {"value": value}
    assert writer(NOTED)(answer) == _encoded(dumper(NOTED)(answer))


@pytest.mark.parametrize("value", [math.nan, math.inf, [math.inf]], ids=repr)
def test_a_value_that_is_not_finite_is_refused_as_the_provider_refuses_it(value):
    with pytest.raises(ValueError, match="not JSON compliant"):
        writer(NOTED)({"value": value})
