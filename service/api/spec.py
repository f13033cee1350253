"""`make spec`: openapi.yaml's paths and components written from the code.

The paths come from the app's routes and each view's declaration (`@operation`, operations.py:
its summary, body, query parameters, answer and media types, its docstring as the description),
their schemas and parameters from the marshmallow schemas by apispec; the deprecated unversioned
paths are copies of the /v1 ones. Everything under `components.schemas` is generated from
service/api/schemas.py (whose answer schemas are made from the domain's dataclasses). Only the
API's description, security and shared responses are written by hand. A test fails with the
diff when the committed file is stale.

    python -m service.api.spec          # rewrite openapi.yaml
    python -m service.api.spec --check  # exit 1 with the diff when it is stale

apispec is a development tool (installed with the test extras); the service never imports this.
"""

import argparse
import difflib
import inspect
import json
import re
import sys

import marshmallow
import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import validate

from ..app import API_PREFIX, UNVERSIONED, create_app
from . import schemas
from .operations import Operation
from .ops import SPEC_PATH
from .shapes import Grouped, Said

MARKER = "  schemas:\n"  # components.schemas: the last block of openapi.yaml, all generated
PATHS = "paths:\n"  # every path, generated; the block ends at the next top-level key


def component_name(schema) -> str:
    cls = schema if isinstance(schema, type) else type(schema)
    return cls.__name__.removesuffix("Schema")


def schema_classes() -> dict[str, type[marshmallow.Schema]]:
    """Every public schema in service.api.schemas, by component name, in declaration order, then
    the objects their answers group fields into (`guide`, `full_load`, ...)."""
    declared = {
        component_name(obj): obj
        for name, obj in vars(schemas).items()
        if inspect.isclass(obj) and issubclass(obj, marshmallow.Schema)
        and not obj.__module__.startswith("marshmallow") and not name.startswith("_")
    }
    grouped = {component_name(field.nested): field.nested for cls in declared.values()
               for field in cls._declared_fields.values() if isinstance(field, Grouped)}
    return {**declared, **grouped}


def _one_of(self, field, **kwargs) -> dict:
    """A catalog name or an object: oneOf [string, each object's component]."""
    if isinstance(field, schemas._OneOf):
        refs = [{"$ref": f"#/components/schemas/{component_name(schema)}"}
                for _, schema in field.object_schemas]
        return {"oneOf": [{"type": "string"}, *refs], "x-tool": field.tool_text}
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


def _apispec() -> tuple[APISpec, MarshmallowPlugin]:
    """apispec with its marshmallow plugin, taught the fields it does not know (ours)."""
    plugin = MarshmallowPlugin(schema_name_resolver=component_name)
    spec = APISpec("sizing", "0", "3.1.0", plugins=[plugin])  # also initialises the plugin's converter
    for function in (_one_of, _exclusive_bounds, _property_names):
        plugin.converter.add_attribute_function(function)
    return spec, plugin


def components() -> dict[str, dict]:
    """The components apispec derives from the schemas; a schema's own docstring describes it."""
    spec, _ = _apispec()
    classes = schema_classes()
    for name, cls in classes.items():
        if name not in spec.components.schemas:  # a nested schema is registered by its first user
            spec.components.schema(name, schema=cls)
    out = {}
    for name, body in spec.to_dict()["components"]["schemas"].items():
        _without_inclusive_twins(body)
        doc = classes[name].__dict__.get("__doc__") if name in classes else None
        out[name] = {"description": _prose(doc), **body} if doc else body
        tool_text = classes[name].__dict__.get("tool_text") if name in classes else None
        if tool_text:  # what the tools' compact schemas say of it (service/tools.py)
            out[name]["x-tool"] = tool_text
    for name in _sparse_parts(out):  # fields= leaves out what it does not name: nothing is required
        out[name].pop("required", None)
        out[name]["description"] = (out[name].get("description", "") + SPARSE_NOTE).strip()
    return out


# What fields= selects from: /estimate (and each item of a batch or sweep), the catalog's lists.
SPARSE_ROOTS = ("EstimateResponse", "CardList", "ModelList", "CapacityResponse", "CompareResponse", "RankResponse")
SPARSE_NOTE = ("\n\nA whole answer carries every field; one asked with `fields=` carries only the fields named "
               "(and their parts), so none is required.")


def _sparse_parts(components: dict[str, dict]) -> set[str]:
    """The components a sparse answer can cut: each root and every object reachable from it,
    except a coded message, which stands whole wherever it is."""
    seen, todo = set(), list(SPARSE_ROOTS)
    while todo:
        name = todo.pop()
        if name in seen or name == "Message":
            continue
        seen.add(name)
        text = json.dumps(components[name])
        todo += [part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]]
    return seen


def _ref(schema: type[marshmallow.Schema]) -> dict:
    return {"$ref": f"#/components/schemas/{component_name(schema)}"}


def _operation(declared: Operation, view, rule, plugin: MarshmallowPlugin) -> dict:
    """One operation of openapi.yaml, from the route's declaration and the view's docstring."""
    op: dict = {"operationId": declared.operation_id}
    if declared.tool:
        op["x-tool"] = True
        if declared.tool_defaults:
            op["x-tool-defaults"] = dict(declared.tool_defaults)
    op["summary"] = declared.summary
    op["description"] = _prose(view.__doc__ or "")
    parameters = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"},
                   **({"description": declared.path_parameters[name]} if name in declared.path_parameters else {})}
                  for name in rule.arguments]
    if declared.query is not None:
        parameters += plugin.converter.schema2parameters(declared.query, location="query")
    parameters += declared.parameters
    if parameters:
        op["parameters"] = parameters
    if declared.body is not None:
        body: dict = {"schema": _ref(declared.body)}
        if declared.example is not None:
            body["example"] = declared.example
        op["requestBody"] = {"required": True, "content": {"application/json": body}}
    content = {media: {"schema": _ref(declared.answer) if media == "application/json" and declared.answer
                       else {"type": "string"}} for media in declared.media}
    op["responses"] = {"200": {"description": declared.answer_description, "content": content},
                       "default": {"$ref": "#/components/responses/Problem"}}
    if declared.public:
        op["security"] = []
    return op


def paths() -> dict:
    """Every route the app serves with a declaration: the /v1 paths and the probes, docs and
    metrics, in the order the app registers them, then the deprecated unversioned copies."""
    app = create_app({"TESTING": True})
    _, plugin = _apispec()
    out: dict = {}
    for rule in app.url_map.iter_rules():
        view = app.view_functions[rule.endpoint]
        declared = getattr(view, "operation", None)
        if declared is None or rule.endpoint.split(".")[0].endswith(UNVERSIONED):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}, key=("POST", "GET").index):
            out.setdefault(path, {})[method.lower()] = _operation(declared, view, rule, plugin)
    versioned = {k: v for k, v in out.items() if k.startswith(API_PREFIX + "/")}
    return {**versioned, **{k: v for k, v in out.items() if k not in versioned}, **unversioned(versioned)}


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
                    "summary": f"{op['summary']} (deprecated: use {path})"}
            said.update({k: v for k, v in op.items() if k not in (*said, "x-tool", "description")})
            copied[method] = said
        out[path[len(API_PREFIX):]] = copied
    return out


class _Unaliased(yaml.SafeDumper):
    """YAML written out in full: a value used twice (a shared parameter) is written twice, not
    as an alias, so that the paths read as they stand and cannot reuse the components' anchors."""

    def ignore_aliases(self, data) -> bool:
        return True


def _indented(block: dict, spaces: int, compact: bool = False) -> str:
    """`block` as YAML indented by `spaces`. `compact` (the paths): written without aliases, with their
    innermost mappings and lists on one line each (a parameter's schema, a $ref); the components
    keep block style, and an alias for a list they repeat (the message codes)."""
    text = yaml.dump(block, Dumper=_Unaliased if compact else yaml.SafeDumper, sort_keys=False, allow_unicode=True,
                     width=100, default_flow_style=None if compact else False)
    return "".join(f"{' ' * spaces}{line}\n" if line else "\n" for line in text.splitlines())


def render(current: str) -> str:
    """openapi.yaml with its paths and its components.schemas block generated, the rest (the
    API's description, security, shared responses) as written."""
    head, marker, _ = current.partition(MARKER)
    if not marker:
        raise SystemExit(f"{SPEC_PATH}: no '{MARKER.strip()}' block under components")
    written, paths_marker, generated_and_rest = head.partition(PATHS)
    if not paths_marker:
        raise SystemExit(f"{SPEC_PATH}: no top-level '{PATHS.strip()}'")
    lines = generated_and_rest.splitlines(keepends=True)  # the paths written last time, then the rest
    rest = "".join(lines[next(i for i, line in enumerate(lines) if line[:1] not in (" ", "\n", "#")):])
    return written + PATHS + _indented(paths(), 2, compact=True) + rest + MARKER + _indented(components(), 4)


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
