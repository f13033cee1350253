"""The computing endpoints: parse with a schema, call the domain, dump with a schema."""

import time

from flask import Blueprint, jsonify, request
from marshmallow import ValidationError
from werkzeug.exceptions import RequestEntityTooLarge

from ..limits import charge, heavy, model_weight, raw_model_weight
from ..metrics import count_estimate
from ..sizing import HardwareInput, Price, SizingError, defaults, said_in
from ..sizing import questions as domain
from . import problem_messages as P
from . import schemas as s
from .cache import cached
from .catalog import matching
from .catalogs import current_catalogs
from .csvout import rows_csv, wants_csv
from .dump import dumper, sparse_dumper
from .errors import sizing_problem, validation_problem
from .jsonio import json_body, query_args
from .lang import preferred_lang

bp = Blueprint("sizing", __name__)

_estimate_in, _estimate_out = s.EstimateRequestSchema(), dumper(s.EstimateResponseSchema)
_estimate_query = s._EstimateQuerySchema()
_batch_in, _sweep_in = s.BatchRequestSchema(), s.SweepRequestSchema()
MAX_BATCH_ITEMS = 1000
_memory_in, _memory_out = s.MemoryRequestSchema(), dumper(s.MemoryResponseSchema)
_throughput_in, _throughput_out = s.ThroughputRequestSchema(), dumper(s.ThroughputResponseSchema)
_scaling_in, _scaling_out = s.ScalingRequestSchema(), dumper(s.ScalingResponseSchema)
_cost_in, _cost_out = s.CostRequestSchema(), dumper(s.CostResponseSchema)
_capacity_in, _capacity_out = s.CapacityRequestSchema(), dumper(s.CapacityResponseSchema)


def _price(args: dict, hardware) -> Price | None:
    """The card price: given in the request, else the operator's catalog price for the card."""
    currency = args["energy"].currency or defaults.CURRENCY.value
    if "card_price" in args:
        return Price(args["card_price"], currency, "given by the caller")
    if hardware is None:
        return None
    return current_catalogs().prices.get(hardware.card.id)


def _estimate(args: dict, paths: tuple[str, ...] | None = None) -> tuple[str, dict]:
    """The answer (only the fields in `paths` when given) and the card's product line. The
    alternatives are computed only when the answer shows them."""
    alternatives = args.get("alternatives", True) and (paths is None or "alternatives" in {
        p.partition(".")[0] for p in paths})
    result = domain.estimate(args["model"], args["workload"], args["hardware"], args["energy"],
                             args.get("lang") or preferred_lang(), _price(args, args["hardware"]),
                             args.get("overhead_fraction"), alternatives, args.get("target"))
    count_estimate("estimate", result.card.line)
    dump = _estimate_out if paths is None else sparse_dumper(s.EstimateResponseSchema, paths)
    return result.card.line, dump(result)


MAX_FIELDS = 64


def _fields(args) -> tuple[str, ...] | None:
    """`fields=summary,fit.fits,throughput.bound`: the answer's fields a caller reads (a sparse
    answer), checked against the answer's shape; None for the whole answer."""
    given = args.getlist("fields")
    if not given:
        return None
    paths = {p.strip() for text in given for p in text.split(",") if p.strip()}
    if not paths or len(paths) > MAX_FIELDS or any(len(p) > 200 for p in paths):
        raise ValidationError({"fields": [P.FIELDS_COUNT(limit=MAX_FIELDS)]})
    paths_sorted = tuple(sorted(paths))
    try:
        sparse_dumper(s.EstimateResponseSchema, paths_sorted)
    except ValueError as exc:
        raise ValidationError({"fields": [exc.args[0]]}) from None
    return paths_sorted


def _counted(line: str, body: dict):
    """A response whose cache hits still count as estimates of the card's line."""
    response = jsonify(body)
    response.on_hit = lambda: count_estimate("estimate", line)
    return response


@bp.post("/estimate")
@cached
def estimate():
    paths = _fields(request.args)
    args = _estimate_in.load(json_body(request))
    charge(model_weight(args["model"]), P.COST_OF_ESTIMATE())
    return _counted(*_estimate(args, paths))


@bp.get("/estimate")
@cached
def estimate_get():
    paths = _fields(request.args)
    query = query_args(request)
    query.pop("fields", None)
    args = _estimate_query.load(query)
    charge(model_weight(args["model"]), P.COST_OF_ESTIMATE())
    return _counted(*_estimate(args, paths))


@bp.post("/estimate/batch")
@heavy("batch")
def estimate_batch():
    body = json_body(request)
    items = body.get("items") if isinstance(body, dict) else None
    if isinstance(items, list) and len(items) > MAX_BATCH_ITEMS:
        raise RequestEntityTooLarge(P.BATCH_TOO_LARGE(limit=MAX_BATCH_ITEMS, items=len(items)))
    if isinstance(items, list):  # each item weighed by its model's layers, before any is computed
        charge(sum(raw_model_weight(i.get("model")) if isinstance(i, dict) else 1.0 for i in items),
               P.COST_OF_BATCH(items=len(items)))
    args = _batch_in.load(body)
    answers = [_item(i, lambda raw=raw: _estimate_in.load(raw)) for i, raw in enumerate(args["items"])]
    return rows_csv(answers) if wants_csv() else {"count": len(answers), "items": answers}


@bp.post("/estimate/sweep")
@heavy("batch")
def estimate_sweep():
    args = _sweep_in.load(json_body(request))
    cards = matching(args.get("filters"))
    charge(len(cards) * model_weight(args["model"]), P.COST_OF_SWEEP(cards=len(cards)))
    base = {k: v for k, v in args.items() if k not in ("filters", "count")}
    count = args.get("count")
    answers = [_item(i, lambda card=card: {**base, "hardware": HardwareInput(card, count)})
               for i, card in enumerate(cards)]
    return rows_csv(answers) if wants_csv() else {"count": len(answers), "items": answers}


def _item(index: int, load) -> dict:
    """One estimate of a batch or sweep, from `load()`'s arguments; its own error is its own
    problem, not the batch's. Each item first lets the worker's other threads run: a light
    request then waits for at most one item (about 1 ms), not for the interpreter's 5 ms
    switch interval each time it needs the GIL beside a running batch. The yield costs about
    70 us, a tenth of an item (the kernel's timer slack); yielding only once a millisecond had
    passed saved 8 % of a batch's time but raised a calm client's p99 in tests/deploy/
    test_flood.py from 14-24 ms to 32-36 ms, so every item yields."""
    time.sleep(0)  # releases the GIL
    try:
        args = load()
        args["alternatives"] = False
        return {"index": index, "ok": True, "estimate": _estimate(args)[1]}
    except ValidationError as exc:
        return {"index": index, "ok": False, "problem": validation_problem(exc, P.INVALID_INPUT())}
    except SizingError as exc:
        return {"index": index, "ok": False, "problem": sizing_problem(exc)}


def _lang(args: dict) -> str:
    """The language asked: the request's lang, else Accept-Language, else English."""
    return args.get("lang") or preferred_lang() or "en"


@bp.post("/memory")
def memory():
    args = _memory_in.load(json_body(request))
    charge(model_weight(args["model"]), P.COST_OF_MEMORY())
    hardware = args.get("hardware")
    result = said_in(_lang(args), domain.memory(args["model"], args["workload"], hardware))
    count_estimate("memory", hardware.card.line if hardware else "none")
    return _memory_out(result)


@bp.post("/throughput")
def throughput():
    args = _throughput_in.load(json_body(request))
    charge(model_weight(args["model"]), P.COST_OF_THROUGHPUT())
    result = said_in(_lang(args), domain.throughput(args["model"], args["workload"], args["hardware"]))
    count_estimate("throughput", result.card.line)
    return _throughput_out(result)


@bp.post("/scaling")
def scaling():
    args = _scaling_in.load(json_body(request))
    charge(model_weight(args["model"]), P.COST_OF_SCALING())
    result = said_in(_lang(args), domain.scaling(args["model"], args["workload"], args["hardware"],
                                                 args.get("deadline_days")))
    count_estimate("scaling", result.card.line)
    return _scaling_out(result)


@bp.post("/capacity")
@heavy("batch")
def capacity():
    args = _capacity_in.load(json_body(request))
    catalogs = current_catalogs()
    if "cards" in args:
        named = (catalogs.cards.get(name, "cards") for name in args["cards"])
        cards = tuple({card.id: card for card in named}.values())  # one answer per card, in order
    else:
        cards = tuple(matching(args.get("filters")))
    charge(2 * len(cards) * model_weight(args["model"]), P.COST_OF_CAPACITY(cards=len(cards)))
    result = domain.capacity(args["model"], args["workload"], cards, args["target"],
                             args.get("cards_per_node"), args.get("network_gb_per_s"),
                             args.get("lang") or preferred_lang())
    count_estimate("capacity", "none")
    return _capacity_out(result)


@bp.post("/cost")
def cost():
    args = _cost_in.load(json_body(request))
    hardware = args.get("hardware")
    result = said_in(_lang(args), domain.cost(args["energy"], hardware, _price(args, hardware),
                                              args.get("overhead_fraction")))
    count_estimate("cost", hardware.card.line if hardware else "none")
    return _cost_out(result)
