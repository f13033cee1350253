"""`make spec`: openapi.yaml's components written from the marshmallow schemas by apispec.

The /v1 paths, examples, security and the API's description are written by hand in openapi.yaml;
everything under `components.schemas` is generated here from service/api/schemas.py (whose
answer schemas are made from the domain's dataclasses), so a field is declared once, and so are
the deprecated unversioned paths, each a copy of its /v1 path marked deprecated. A test fails
with the diff when the committed file is stale.

    python -m service.api.spec          # rewrite openapi.yaml
    python -m service.api.spec --check  # exit 1 with the diff when it is stale

apispec is a development tool (installed with the test extras); the service never imports this.
"""

import argparse
import difflib
import inspect
import sys
from pathlib import Path

import marshmallow
import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import validate

from . import schemas
from .shapes import Said

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
MARKER = "  schemas:\n"  # components.schemas: the last block of openapi.yaml, all generated
# The end of the hand-written paths: the deprecated unversioned copies are generated after it.
UNVERSIONED_MARKER = "  # The unversioned paths below are written by make spec from the /v1 paths above: deprecated.\n"
API_PREFIX = "/v1"


def component_name(schema) -> str:
    cls = schema if isinstance(schema, type) else type(schema)
    return cls.__name__.removesuffix("Schema")


def schema_classes() -> dict[str, type[marshmallow.Schema]]:
    """Every public schema in service.api.schemas, by component name, in declaration order."""
    return {
        component_name(obj): obj
        for name, obj in vars(schemas).items()
        if inspect.isclass(obj) and issubclass(obj, marshmallow.Schema)
        and not obj.__module__.startswith("marshmallow") and not name.startswith("_")
    }


def _one_of(self, field, **kwargs) -> dict:
    """A catalog name or an object: oneOf [string, each object's component]."""
    if isinstance(field, schemas._OneOf):
        refs = [{"$ref": f"#/components/schemas/{component_name(schema)}"}
                for _, schema in field.object_schemas]
        return {"oneOf": [{"type": "string"}, *refs]}
    if isinstance(field, Said):
        said = {"$ref": "#/components/schemas/Message"}
        return {"anyOf": [said, {"type": "null"}]} if field.allow_none else said
    if isinstance(field, schemas.CompareOptionsField):
        return {"oneOf": [
            {"type": "array", "minItems": 1, "maxItems": schemas.MAX_COMPARED,
             "items": {"$ref": "#/components/schemas/HardwareSpec"}},
            {"$ref": "#/components/schemas/SweepFilters"}]}
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


def _property_names(self, field, ret) -> dict:
    """A mapping whose keys are one of a fixed set names them."""
    if isinstance(field, marshmallow.fields.Dict) and field.key_field is not None:
        for v in field.key_field.validators:
            if isinstance(v, validate.OneOf):
                return {"propertyNames": {"enum": list(v.choices)}}
    return {}


def _without_inclusive_twins(schema: dict) -> None:
    for prop in schema.get("properties", {}).values():
        for bound in ("Minimum", "Maximum"):
            if f"exclusive{bound}" in prop and prop.get(bound.lower()) == prop[f"exclusive{bound}"]:
                del prop[bound.lower()]
        if isinstance(prop.get("items"), dict):
            _without_inclusive_twins({"properties": {"items": prop["items"]}})


def _prose(doc: str) -> str:
    """A docstring as a description: its wrapped lines joined, its paragraphs kept."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def components() -> dict[str, dict]:
    """The components apispec derives from the schemas; a schema's own docstring describes it."""
    plugin = MarshmallowPlugin(schema_name_resolver=component_name)
    spec = APISpec("sizing", "0", "3.1.0", plugins=[plugin])
    for function in (_one_of, _exclusive_bounds, _property_names):
        plugin.converter.add_attribute_function(function)
    classes = schema_classes()
    for name, cls in classes.items():
        if name not in spec.components.schemas:  # a nested schema is registered by its first user
            spec.components.schema(name, schema=cls)
    out = {}
    for name, body in spec.to_dict()["components"]["schemas"].items():
        _without_inclusive_twins(body)
        doc = classes[name].__dict__.get("__doc__") if name in classes else None
        out[name] = {"description": _prose(doc), **body} if doc else body
    return out


def unversioned(paths: dict) -> dict:
    """Each /v1 path again without its prefix, every operation marked deprecated and renamed
    (operationId + "Unversioned"), and not a tool: the 0.x paths, answered as /v1 answers."""
    out = {}
    for path, item in paths.items():
        if not path.startswith(API_PREFIX + "/"):
            continue
        copied = {}
        for method, op in item.items():
            said = {"operationId": op["operationId"] + "Unversioned", "deprecated": True,
                    "summary": f"{op['summary']} (deprecated: use {API_PREFIX}{path[len(API_PREFIX):]})"}
            said.update({k: v for k, v in op.items() if k not in (*said, "x-tool", "description")})
            copied[method] = said
        out[path[len(API_PREFIX):]] = copied
    return out


def _indented(block: dict, spaces: int) -> str:
    text = yaml.safe_dump(block, sort_keys=False, allow_unicode=True, width=100)
    return "".join(f"{' ' * spaces}{line}\n" if line else "\n" for line in text.splitlines())


def render(current: str) -> str:
    """openapi.yaml with its unversioned paths and its components.schemas block generated, the
    rest as written."""
    head, marker, _ = current.partition(MARKER)
    if not marker:
        raise SystemExit(f"{SPEC_PATH}: no '{MARKER.strip()}' block under components")
    written, paths_marker, generated_and_rest = head.partition(UNVERSIONED_MARKER)
    if not paths_marker:
        raise SystemExit(f"{SPEC_PATH}: no '{UNVERSIONED_MARKER.strip()}' line at the end of the paths")
    lines = generated_and_rest.splitlines(keepends=True)  # the copies written last time, then the rest
    rest = "".join(lines[next(i for i, line in enumerate(lines) if line[:1] not in (" ", "\n")):])
    paths = yaml.safe_load(written)["paths"]
    return (written + UNVERSIONED_MARKER + _indented(unversioned(paths), 2) + rest + MARKER
            + _indented(components(), 4))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether openapi.yaml is stale")
    args = parser.parse_args(argv)
    current = SPEC_PATH.read_text()
    wanted = render(current)
    if args.check:
        if wanted == current:
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(keepends=True),
                                                   wanted.splitlines(keepends=True),
                                                   "openapi.yaml", "make spec"))
        return 1
    SPEC_PATH.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
