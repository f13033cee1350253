"""The computing endpoints: parse with a schema, call the domain, dump with a schema."""

import functools
from collections.abc import Iterator
from dataclasses import replace

from flask import Blueprint, jsonify, request
from marshmallow import ValidationError
from werkzeug.exceptions import RequestEntityTooLarge

from ..limits import charge, heavy, model_weight, raw_model_weight
from ..metrics import count_estimate
from ..sizing import GIVEN_BY_CALLER, HardwareInput, Price, SizingError, defaults, said_in
from ..sizing import questions as domain
from . import problem_messages as P
from . import schemas as s
from .cache import cached, counting_hits
from .catalog import matching
from .catalogs import current_catalogs
from .csvout import rows_csv, wants_csv
from .dump import dumper, sparse_dumper
from .errors import sizing_problem, validation_problem
from .jsonio import json_body, json_items
from .lang import answer_lang, asked_lang
from .load import loads_with
from .operations import ANSWER_FIELDS_PARAMETER, FIELDS_PARAMETER, answered, asked, fields_asked, operation
from .write import json_answer

bp = Blueprint("sizing", __name__)

_estimate_out = dumper(s.EstimateResponseSchema)  # also a batch's items
MAX_BATCH_ITEMS = 1000


def _price(args: dict, hardware) -> Price | None:
    """The card price: given in the request, else the operator's catalog price for the card."""
    currency = args["energy"].currency or defaults.CURRENCY.value
    if "card_price" in args:
        return Price(args["card_price"], currency, GIVEN_BY_CALLER())
    if hardware is None:
        return None
    return current_catalogs().prices.get(hardware.card.id)


def _estimate(args: dict, paths: tuple[str, ...] | None = None) -> domain.Estimate:
    """The answer that shows the fields in `paths` (every field when none are given): the costly
    parts are computed only when it shows them."""
    parts = estimate_parts(paths, args.get("alternatives", True))
    result = domain.estimate(args["model"], args["workload"], args["hardware"], args["energy"],
                             asked_lang(args.get("lang")), _price(args, args["hardware"]),
                             args.get("overhead_fraction"), parts, args.get("target"))
    count_estimate("estimate", result.card.line)
    return result


@functools.lru_cache(maxsize=256)  # once a request, not once an item of a batch
def estimate_parts(paths: tuple[str, ...] | None, alternatives: bool = True) -> domain.Parts:
    """The costly parts an estimate's fields need (every part for the whole answer): the
    alternatives; the summary; the full-load figures (throughput.full_load, and the summary,
    which quotes them) and their range; the decode curve; the machines' costs (host, energy,
    ownership, and the summary's draw); the notes only assumptions and warnings show; the ends of
    the speed's ranges and its roofline ceiling; the range of time to first token; the reasons
    (the memory's parts and its range's note, the fit's reason). The full-load
    figures and the costs add to assumptions and warnings, so an answer that shows those computes
    them too (the other parts' notes are their own or none)."""
    if not alternatives:  # the request says no alternatives, whatever its fields
        return replace(estimate_parts(paths), alternatives=False)
    if paths is None:
        return domain.EVERY_PART

    def reads(field: str) -> bool:  # a path asked is the field, or a part of it or a group holding it
        return any(field == path or field.startswith(path + ".") or path.startswith(field + ".") for path in paths)

    tops = {path.partition(".")[0] for path in paths}
    return domain.Parts(alternatives="alternatives" in tops, summary="summary" in tops,
                        full_load=reads("throughput.full_load"),  # and what Parts derives
                        curve=reads("throughput.decode_curve"),
                        costs=bool(tops & {"energy", "host", "ownership"}),
                        notes=bool(tops & {"assumptions", "warnings"}),
                        ends=any(reads(f"throughput.{name}") for name in domain.ENDS_FIELDS),
                        prefill_range=reads("throughput.time_to_first_token_s_range"),
                        full_load_range=reads("throughput.full_load.total_tokens_per_s_range"),
                        reasons=any(reads(f) for f in ("memory.components", "memory.total_bytes_range", "fit.reason")))


def _fields(args) -> tuple[str, ...] | None:
    """`fields=summary,fit.fits,throughput.bound` on an estimate (see fields_asked)."""
    return fields_asked(args, s.EstimateResponseSchema)


def _answer(args: dict, paths: tuple[str, ...] | None):
    """The estimate's answer, whose cache hits still count as estimates of the card's line."""
    result = _estimate(args, paths)
    return counting_hits(json_answer(result, s.EstimateResponseSchema, paths), "estimate", result.card.line)


@bp.post("/estimate")
@cached
@operation(
    operation_id="estimate",
    tool=True,
    summary="The whole picture for one model, workload and card choice",
    body=s.EstimateRequestSchema,
    example={
        "model": "llama-3.1-70b",
        "workload": {"mode": "inference", "precision": "bf16", "context_tokens": 8192, "batch_size": 4},
        "hardware": {"card": "D-M", "count": 2},
        "energy": {"price_per_kwh": 0.7, "currency": "CNY"}},
    answer=s.EstimateResponseSchema,
    answer_description="The estimate.",
    parameters=(FIELDS_PARAMETER,),
    # an assistant reads the summary and the headline figures (about 4 KB, not 20-28 KB); it names
    # more in fields, or the whole answer's parts (memory, throughput, training, alternatives, ...)
    tool_defaults={"fields": "card.id,precision,summary,fit.fits,fit.cards_needed,fit.count,memory.total_bytes,"
                   "parallelism.description,throughput.decode_tokens_per_s_expected,throughput.full_load,"
                   "training.run,energy.power_w,energy.electricity_cost_per_year,energy.currency,warnings"})
def estimate():
    """Use for "does model X fit on card Y, how many, how fast, how long to train, what does it cost". Answers memory in
    bytes, fit, card count and plan, tokens/s per stream and at full load or training time in s,
    power, electricity per year, a quotable summary."""
    paths = _fields(request.args)
    args = asked()
    charge(model_weight(args["model"]), P.COST_OF_ESTIMATE())
    return _answer(args, paths)


@bp.get("/estimate")
@cached
@operation(
    operation_id="estimateGet",
    summary="The whole picture from flat query parameters",
    answer=s.EstimateResponseSchema,
    answer_description="The estimate.",
    query=s._EstimateQuerySchema,
    parameters=(FIELDS_PARAMETER,))
def estimate_get():
    """Use from a chatbot for "can model X run on card Y". Same answer as POST /estimate from flat
    parameters; memory in bytes, speed in tokens/s, cost per year, and a summary in en or zh."""
    paths = _fields(request.args)
    args = asked()
    charge(model_weight(args["model"]), P.COST_OF_ESTIMATE())
    return _answer(args, paths)


@bp.post("/estimate/batch")
@heavy("batch")
@operation(
    operation_id="estimateBatch",
    summary="Many estimates in one call, in order",
    body=s.BatchRequestSchema,
    example={
        "items": [
            {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}},
            {"model": "llama-3.1-70b", "hardware": {"card": "h100-sxm"}}]},
    answer=s.BatchResponseSchema,
    media=("application/json", "text/csv"),
    answer_description="One answer per item, in order.",
    parameters=(FIELDS_PARAMETER,))
def estimate_batch():
    """Use from a dashboard for up to 1000 estimates (413 above). Each item answers or fails on its
    own. JSON, or CSV with Accept text/csv (one row per item, unit-suffixed columns in bytes,
    tokens/s, s, W, kWh). `fields=` makes each item's estimate sparse (and CSV its columns)."""
    paths = _fields(request.args)
    body = json_body(request)
    items = body.get("items") if isinstance(body, dict) else None
    if isinstance(items, list) and len(items) > MAX_BATCH_ITEMS:
        raise RequestEntityTooLarge(P.BATCH_TOO_LARGE(limit=MAX_BATCH_ITEMS, items=len(items)))
    if isinstance(items, list):  # each item weighed by its model's layers, before any is computed
        charge(sum(raw_model_weight(i.get("model")) if isinstance(i, dict) else 1.0 for i in items),
               P.COST_OF_BATCH(items=len(items)))
    args = asked(body)
    load = loads_with(s.EstimateRequestSchema)
    return _items((_item(i, lambda raw=raw: load(raw), raw.get("lang") if isinstance(raw, dict) else None,
                         paths) for i, raw in enumerate(args["items"])), paths)


@bp.post("/estimate/sweep")
@heavy("batch")
@operation(
    operation_id="estimateSweep",
    summary="One workload on every catalog card that passes the filters",
    body=s.SweepRequestSchema,
    example={"model": "llama-3.1-8b", "filters": {"line": "consumer", "kind": "card"}},
    answer=s.BatchResponseSchema,
    media=("application/json", "text/csv"),
    answer_description="One answer per card, in catalog order.",
    parameters=(FIELDS_PARAMETER,))
def estimate_sweep():
    """Use from a dashboard to compare cards for one workload. One estimate per card (filters line,
    kind, vendor, tier, min_memory_gib). JSON, or CSV with Accept text/csv in bytes, tokens/s,
    s, W, kWh. `fields=` makes each card's estimate sparse (and CSV its columns)."""
    paths = _fields(request.args)
    args = asked()
    cards = matching(args.get("filters"))
    charge(len(cards) * model_weight(args["model"]), P.COST_OF_SWEEP(cards=len(cards)))
    base = {k: v for k, v in args.items() if k not in ("filters", "count")}
    count = args.get("count")
    return _items((_item(i, lambda card=card: {**base, "hardware": HardwareInput(card, count)}, args.get("lang"),
                         paths) for i, card in enumerate(cards)), paths)


def _items(answers: Iterator[dict], paths: tuple[str, ...] | None):
    """The answers of a batch or sweep, in order: CSV rows when asked, else `{count, items}` with
    each item written as JSON as soon as it is made. Only its text is kept, not its tree of dicts
    and messages: a thousand such trees kept to the end made the collector walk them again and
    again (0.57 of a 1.7 ms item, against 0.1 ms with the text kept; tests/bench)."""
    if wants_csv():
        return rows_csv(list(answers), paths)
    return json_items(answers)


def _item(index: int, load, lang: str | None, paths: tuple[str, ...] | None) -> dict:
    """One estimate of a batch or sweep, from `load()`'s arguments; its own error is its own
    problem, not the batch's. A light request beside a batch gets the interpreter within the
    worker's switch interval (0.5 ms, deploy/gunicorn.conf.py), so an item does not yield: the
    sleep each item took before cost 17-24 us of it and kept a calm client's p99 no lower."""
    try:
        args = load()
        args["alternatives"] = False
        dump = _estimate_out if paths is None else sparse_dumper(s.EstimateResponseSchema, paths)
        return {"index": index, "ok": True, "estimate": dump(_estimate(args, paths))}
    except ValidationError as exc:
        return {"index": index, "ok": False, "problem": validation_problem(exc, P.INVALID_INPUT(), lang)}
    except SizingError as exc:
        return {"index": index, "ok": False, "problem": sizing_problem(exc, lang)}


@bp.post("/memory")
@operation(
    operation_id="memory",
    tool=True,
    summary="Memory breakdown, and its fit when a card is given",
    body=s.MemoryRequestSchema,
    example={"model": {"params_billion": 7}, "workload": {"mode": "full_finetune"}},
    answer=s.MemoryResponseSchema,
    answer_description="The memory breakdown.")
def memory():
    """Use for "how much memory does model X need for inference or training". Answers bytes by
    component (weights, gradients, optimizer, KV cache, activations, runtime) and, with
    hardware, the fit and least card count."""
    args = asked()
    charge(model_weight(args["model"]), P.COST_OF_MEMORY())
    hardware = args.get("hardware")
    lang = answer_lang(args)
    result = said_in(lang, domain.memory(args["model"], args["workload"], hardware, lang))
    count_estimate("memory", hardware.card.line if hardware else "none")
    return answered(result)


@bp.post("/throughput")
@operation(
    operation_id="throughput",
    # not a tool: the estimate tool answers it (fields=throughput), and every tool an assistant
    # holds costs its schema in every conversation
    summary="Roofline position and decode tokens/s",
    body=s.ThroughputRequestSchema,
    example={"model": {"params_billion": 7}, "hardware": {"card": "C90", "count": 1}},
    answer=s.ThroughputResponseSchema,
    answer_description="The roofline and tokens/s.")
def throughput():
    """Use for "how fast will model X generate on cards Y". Answers the plan, the roofline in
    FLOP/byte, decode tokens/s per stream and in total priced on the plan's links, and output
    tokens/s at full load."""
    args = asked()
    charge(model_weight(args["model"]), P.COST_OF_THROUGHPUT())
    result = said_in(answer_lang(args), domain.throughput(args["model"], args["workload"], args["hardware"]))
    count_estimate("throughput", result.card.line)
    return answered(result)


@bp.post("/scaling")
@operation(
    operation_id="scaling",
    # not a tool: estimate answers training time (training.run) and compare the cards a deadline
    # needs; every tool an assistant holds costs its schema in every conversation
    summary="Training compute, time against card count, gradient sync",
    body=s.ScalingRequestSchema,
    example={
        "model": {"params_billion": 7},
        "workload": {"mode": "pretrain", "train_tokens": 1000000000000.0},
        "hardware": {"card": "D-M", "count": 64}},
    answer=s.ScalingResponseSchema,
    answer_description="The training time.")
def scaling():
    """Use for "how long does training on N cards take". Answers 6ND compute in FLOPs, the plan, time
    in s from the plan's step (the guide's curve beside it), a curve over card counts, and cards
    for a deadline."""
    args = asked()
    charge(model_weight(args["model"]), P.COST_OF_SCALING())
    result = said_in(answer_lang(args), domain.scaling(args["model"], args["workload"], args["hardware"],
                                                 args.get("deadline_days")))
    count_estimate("scaling", result.card.line)
    return answered(result)


@bp.post("/capacity")
@cached
@heavy("batch")
@operation(
    operation_id="capacity",
    tool=True,
    summary="Cards and machines each card type needs to serve a target",
    body=s.CapacityRequestSchema,
    example={
        "model": "llama-3.1-70b",
        "workload": {"precision": "fp8", "engine": "vllm", "prompt_tokens": 1000, "output_tokens": 500},
        "target": {"concurrent_users": 100, "tokens_per_s_per_user": 20, "ttft_s": 2},
        "cards": ["h100-sxm", "l40s", "rtx-4090"]},
    answer=s.CapacityResponseSchema,
    answer_description="One option per card, the best named.",
    parameters=(ANSWER_FIELDS_PARAMETER,),
    # an assistant reads the summary and each card's count, speed and power (a few KB, not 16 KB for
    # four cards or 370 KB for the whole catalog); it names more in fields
    tool_defaults={"fields": "summary,best,options.card.id,options.meets_target,options.cards,options.machines,"
                   "options.parallelism.description,options.tokens_per_s_per_user,options.time_to_first_token_s,"
                   "options.power_w,warnings"})
def capacity():
    """Use for "how many cards of each kind serve N users at S tokens/s each". Answers per card the
    cards, machines and plan, tokens/s per user, time to first token in s, and power in W."""
    paths = fields_asked(request.args, s.CapacityResponseSchema)
    args = asked()
    catalogs = current_catalogs()
    if "cards" in args:
        named = (catalogs.cards.get(name, "cards") for name in args["cards"])
        cards = tuple({card.id: card for card in named}.values())  # one answer per card, in order
    else:
        cards = tuple(matching(args.get("filters")))
    charge(2 * len(cards) * model_weight(args["model"]), P.COST_OF_CAPACITY(cards=len(cards)))
    result = domain.capacity(args["model"], args["workload"], cards, args["target"],
                             args.get("cards_per_node"), args.get("network_gb_per_s"),
                             asked_lang(args.get("lang")))
    count_estimate("capacity", "none")
    body = answered(result) if paths is None else sparse_dumper(s.CapacityResponseSchema, paths)(result)
    return counting_hits(jsonify(body), "capacity")


@bp.post("/cost")
@operation(
    operation_id="cost",
    tool=True,
    summary="Electricity per day and year, fleet totals",
    body=s.CostRequestSchema,
    example={"power_w": 10000, "energy": {"price_per_kwh": 0.7, "currency": "CNY", "installations": 100}},
    answer=s.CostResponseSchema,
    answer_description="The electricity cost.")
def cost():
    """Use for "what does the electricity cost". Give cards (hardware, priced at the draw of the
    machines that carry them) or an installation's draw (power_w, used as given). Answers kWh
    and cost per day, per year, over the years and for the fleet."""
    args = asked()
    hardware = args.get("hardware")
    lang = answer_lang(args)
    result = said_in(lang, domain.cost(args["energy"], hardware, _price(args, hardware), args.get("overhead_fraction"),
                                       lang))
    count_estimate("cost", hardware.card.line if hardware else "none")
    return answered(result)
