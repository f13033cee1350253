"""Each route declares itself once, beside its view: what it takes (a body schema, query
parameters), what it answers (a schema, the media types), its summary, and whether assistants
get it as a tool; the view's docstring is its description. `make spec` writes openapi.yaml's
paths from these declarations and the app's routes (service/api/spec.py), so a path, its
parameters and its answer are declared once, in code.

This plays flask-smorest's part (`@blp.arguments` / `@blp.response`): a view parses its
request with `asked()` and dumps its answer with `answered()`, both reading the schemas its
declaration names, so that what the contract says a route takes and answers is what it parses
and dumps. /estimate dumps a sparse answer (`fields=`) with the declared schema's dumper of
those fields; a batch or sweep dumps each item with the estimate's and writes the list as it
goes (`json_items`). The answer is dumped by the compiled dumper (dump.py), which `make bench` measured
at a fraction of marshmallow's `Schema.dump` on a full answer (see the README's design notes).
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import current_app, request
from marshmallow import Schema, ValidationError

from . import problem_messages as P
from .dump import dumper, sparse_dumper
from .jsonio import json_body, query_args
from .load import loads_with


@dataclass(frozen=True)
class Operation:
    """One route's contract: see the module's docstring. `answer` is a schema (its component) or
    a plain media type's body (None: a string); `media` the answer's media types, JSON first;
    `parameters` query parameters written out (beside `query`'s fields), `path_parameters` the
    description of each of the path's variables."""

    operation_id: str
    summary: str
    answer_description: str
    answer: type[Schema] | None = None
    media: tuple[str, ...] = ("application/json",)
    body: type[Schema] | None = None
    example: Any = None
    query: type[Schema] | None = None
    parameters: tuple[dict, ...] = ()
    path_parameters: dict[str, str] = field(default_factory=dict)
    tool: bool = False
    tool_defaults: dict[str, Any] = field(default_factory=dict)  # query values a tool call gets unless it gives its own
    public: bool = False  # no API key needed even where keys are set (the docs page, the metrics)


def operation(**declared) -> Callable:
    """Declare the route of the view it decorates (the view itself is unchanged)."""
    said = Operation(**declared)
    if said.body is not None and said.query is not None:
        raise TypeError(f"{said.operation_id}: a route takes a body or query parameters, not both")
    if said.answer is not None:
        dumper(said.answer)  # compiled at import: the first request pays nothing for it

    def declare(view):
        view.operation = said
        return view

    return declare


def declared() -> Operation:
    """The declaration of the route the current request reached (a view that parses or dumps
    through it always has one)."""
    said = getattr(current_app.view_functions.get(request.endpoint or ""), "operation", None)
    if said is None:
        raise RuntimeError(f"{request.endpoint}: no @operation declares this route")
    return said


@functools.cache
def _parser(schema: type[Schema]) -> Schema:
    return schema()


_UNREAD = object()  # asked() without a body: read the request's (a body may be JSON null)


def asked(body: Any = _UNREAD) -> dict:
    """The request's arguments, parsed with the schema its route declares: the JSON body (or
    `body`, already read) when it declares one, else the query parameters less those it declares
    by hand in `parameters` (read by the view itself, as `fields=`)."""
    said = declared()
    if said.body is not None:
        data = json_body(request) if body is _UNREAD else body  # read first: it says the problem's language
        _no_unknown_query(said)
        return loads_with(said.body)(data)
    assert said.query is not None, f"{said.operation_id} declares neither a body nor query parameters"
    query = query_args(request)
    for parameter in said.parameters:
        query.pop(parameter["name"], None)
    return _parser(said.query).load(query)


def _no_unknown_query(said: Operation) -> None:
    """A body's route takes only the query parameters it declares (fields=): another is refused,
    as an unknown body field is, rather than ignored (a POST's language is its body's lang)."""
    unknown = sorted(set(request.args) - {parameter["name"] for parameter in said.parameters})
    if unknown:
        message = _parser(said.body).error_messages["unknown"]
        raise ValidationError({name: [message] for name in unknown})


def answered(result: Any) -> dict:
    """`result` as the answer its route declares (the schema's compiled dumper)."""
    answer = declared().answer
    assert answer is not None, "a route answering plain text has no schema to dump with"
    return dumper(answer)(result)


MAX_FIELDS = 64


def fields_asked(args, schema: type[Schema]) -> tuple[str, ...] | None:
    """`fields=summary,fit.fits,throughput.bound`: the answer's fields a caller reads (a sparse
    answer), checked against the shape of `schema`; None for the whole answer."""
    given = args.getlist("fields")
    if not given:
        return None
    paths = {p.strip() for text in given for p in text.split(",") if p.strip()}
    if not paths or len(paths) > MAX_FIELDS or any(len(p) > 200 for p in paths):
        raise ValidationError({"fields": [P.FIELDS_COUNT(limit=MAX_FIELDS)]})
    paths_sorted = tuple(sorted(paths))
    try:
        sparse_dumper(schema, paths_sorted)
    except ValueError as exc:
        raise ValidationError({"fields": [exc.args[0]]}) from None
    return paths_sorted


def _fields_parameter(description: str, tool_text: str) -> dict:
    """A route's `fields=` query parameter: the answer's fields a caller reads."""
    return {"name": "fields", "in": "query", "required": False, "schema": {"type": "string", "maxLength": 4000},
            "description": description, "x-tool": tool_text}


# `fields=` on the catalog's lists: the entries' fields a caller reads (compact rows).
LIST_FIELDS_PARAMETER = _fields_parameter(
    "Omitted: every field of every entry. Comma-separated fields, dotted for an entry's "
    "(count,total,cards.id,cards.memory_gib): rows of only those fields.",
    "Fields, comma-separated, dotted for an entry's.")

# `fields=` on /capacity, /compare (its JSON) and /rank: the answer's fields a caller reads.
ANSWER_FIELDS_PARAMETER = _fields_parameter(
    "Omitted: the whole answer. Comma-separated fields, dotted for nested ones "
    "(summary,best,options.cards): a sparse JSON answer of only those fields, in the answer's order "
    "(a CSV or HTML comparison stays whole).",
    "Answer fields, comma-separated, dotted for nested ones.")

# `fields=` on /estimate: the answer's fields a caller reads (a sparse answer).
FIELDS_PARAMETER = _fields_parameter(
    "Omitted: the whole estimate. Comma-separated estimate fields, dotted for nested ones "
    "(summary,fit.fits,fit.cards_needed,throughput.decode_tokens_per_s_expected): a sparse "
    "estimate (each item's in a batch or sweep, and only the CSV columns they cover), in the "
    "answer's order; alternatives are computed only when named.",
    "Answer fields, comma-separated, dotted for nested ones (memory, throughput, alternatives...).")
