"""Answer schemas that mirror a domain dataclass name every one of its fields, in its order:
a field added to the answer and forgotten in the schema would otherwise vanish from the JSON
without a word (dump ignores attributes it does not declare)."""

import dataclasses

import pytest

from service.api import schemas
from service.sizing import answers, host, serving, training_time

MIRRORS = [
    (schemas.ThroughputSchema, serving.ThroughputAnswer),
    (schemas.DecodePointSchema, serving.CurvePoint),
    (schemas.TrainingSchema, training_time.TrainingAnswer),
    (schemas.EnergySchema, answers.EnergyAnswer),
    (schemas.OwnershipSchema, answers.OwnershipAnswer),
    (schemas.HostSchema, host.HostSizing),
]


@pytest.mark.parametrize(("schema", "answer"), MIRRORS, ids=[s.__name__ for s, _ in MIRRORS])
def test_the_schema_names_every_field_of_the_answer(schema, answer):
    assert list(schema._declared_fields) == [f.name for f in dataclasses.fields(answer)]
