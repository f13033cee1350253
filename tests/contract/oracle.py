"""apispec's converter as the oracle: what openapi.yaml's components must say of each schema."""

import inspect

import marshmallow
from marshmallow import validate
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from service.api import schemas


def component_name(schema) -> str:
    cls = schema if isinstance(schema, type) else type(schema)
    return cls.__name__.removesuffix("Schema")


def _one_of(self, field, **kwargs) -> dict:
    if isinstance(field, schemas._OneOf):
        refs = [{"$ref": f"#/components/schemas/{component_name(schema)}"}
                for _, schema in field.object_schemas]
        return {"oneOf": [{"type": "string"}, *refs]}
    return {}


def _exclusive_bounds(self, field, ret) -> dict:
    """apispec writes an exclusive Range bound as an inclusive one; OpenAPI 3.1 has its own key."""
    out = {}
    for v in field.validators:
        if isinstance(v, validate.Range):
            if v.min is not None and not v.min_inclusive:
                out["exclusiveMinimum"] = v.min
            if v.max is not None and not v.max_inclusive:
                out["exclusiveMaximum"] = v.max
    return out


def _without_inclusive_twins(schema: dict) -> None:
    for prop in schema.get("properties", {}).values():
        for bound in ("Minimum", "Maximum"):
            if f"exclusive{bound}" in prop and prop.get(bound.lower()) == prop[f"exclusive{bound}"]:
                del prop[bound.lower()]
        if isinstance(prop.get("items"), dict):
            _without_inclusive_twins({"properties": {"items": prop["items"]}})


def schema_classes() -> dict[str, type[marshmallow.Schema]]:
    """Every public schema in service.api.schemas, by component name."""
    return {
        component_name(obj): obj
        for name, obj in vars(schemas).items()
        if inspect.isclass(obj)
        and issubclass(obj, marshmallow.Schema)
        and obj.__module__ == schemas.__name__
        and not name.startswith("_")
    }


def generated_components() -> dict[str, dict]:
    """The components apispec derives from the marshmallow schemas."""
    plugin = MarshmallowPlugin(schema_name_resolver=component_name)
    spec = APISpec("oracle", "0", "3.1.0", plugins=[plugin])
    plugin.converter.add_attribute_function(_one_of)
    plugin.converter.add_attribute_function(_exclusive_bounds)
    for name, cls in schema_classes().items():
        spec.components.schema(name, schema=cls)
    components = spec.to_dict()["components"]["schemas"]
    for schema in components.values():
        _without_inclusive_twins(schema)
    return components
