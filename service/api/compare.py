"""POST /compare: a purchase decision in one request, as JSON, a CSV table, or a printable page."""

from flask import Blueprint, Response, jsonify, request

from ..limits import PLOT_COST, charge, heavy, model_weight
from ..metrics import count_estimate
from ..sizing import HardwareInput, InvalidInputError, Offer, defaults
from ..sizing import compare as domain
from . import problem_messages as P
from . import schemas as s
from .cache import cached, counting_hits
from .catalog import matching
from .catalogs import caller_prices, current_catalogs
from .csvout import preferred, table_csv
from .dump import sparse_dumper
from .lang import asked_lang
from .operations import ANSWER_FIELDS_PARAMETER, answered, asked, fields_asked, operation
from .report import HTML_MIME, report_page

bp = Blueprint("compare", __name__)


# (column, path into an option); every number carries its unit or currency in the name.
COLUMNS = (
    ("rank", ("rank",)), ("option", ("label",)), ("card", ("card",)), ("card_name", ("card_name",)),
    ("line", ("line",)),
    ("meets_target", ("meets_target",)), ("pareto_optimal", ("pareto_optimal",)),
    ("cards", ("cards",)), ("cards_needed", ("cards_needed",)), ("cards_at_low_end", ("cards_at_low_end",)),
    ("machines", ("machines",)),
    ("plan", ("parallelism", "description")),
    ("tokens_per_s_per_user", ("serving", "tokens_per_s_per_user")),
    ("total_tokens_per_s", ("serving", "total_tokens_per_s")),
    ("time_to_first_token_s", ("serving", "time_to_first_token_s")), ("time_s", ("time_s",)),
    ("power_w", ("energy", "power_w")), ("power_w_per_machine", ("energy", "power_w_per_machine")),
    ("currency", ("currency",)),  # of every money column beside it (the answer's one currency)
    ("electricity_cost_per_year", ("energy", "electricity_cost_per_year")),
    ("card_price", ("purchase", "price", "amount")), ("cards_cost", ("purchase", "cards_cost")),
    ("capital_cost_low", ("purchase", "capital_cost", "low")),
    ("capital_cost", ("purchase", "capital_cost", "typical")),
    ("capital_cost_high", ("purchase", "capital_cost", "high")),
    ("cost_of_ownership_low", ("purchase", "cost_of_ownership", "low")),
    ("cost_of_ownership", ("purchase", "cost_of_ownership", "typical")),
    ("cost_of_ownership_high", ("purchase", "cost_of_ownership", "high")),
    ("cost_per_million_tokens", ("purchase", "cost_per_million_tokens")),
    ("cost_per_run", ("purchase", "cost_per_run")),
    ("rent_per_card_hour", ("rent", "price", "amount")), ("rent_cost", ("rent", "cost")),
    ("break_even_months", ("rent", "break_even_months")),
    ("rent_cheaper_below_utilization", ("rent", "cheaper_below_utilization")),
    ("reason", ("reason",)), ("warnings", ("warnings",)),
)


@bp.post("/compare")
@cached
@heavy("batch")
@operation(
    operation_id="compare",
    tool=True,
    summary="A purchase decision, hardware options side by side, bought or rented",
    body=s.CompareRequestSchema,
    example={
        "model": "qwen2.5-72b",
        "workload": {"engine": "vllm", "prompt_tokens": 1000, "output_tokens": 500},
        "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20},
        "options": [{"card": "h20", "count": 8}, {"card": "h100-sxm", "count": 4}, {"card": "l20", "count": 8}],
        "years": 3,
        "energy": {"price_per_kwh": 1.2},
        "prices": {"h20": 110000, "h100-sxm": 220000, "l20": 30000},
        "rent_per_card_hour": {"h100-sxm": 15}},
    answer=s.CompareResponseSchema,
    media=("application/json", "text/csv", "text/html"),
    answer_description="The options ranked, each priced, the best named.",
    parameters=(ANSWER_FIELDS_PARAMETER,),
    # an assistant reads the summary and each option's cards, speed, power and costs (a few KB, not
    # 8 KB for three options or 73 KB for a line); it names more in fields
    tool_defaults={"fields": "summary,best,currency,options.rank,options.label,options.meets_target,options.cards,"
                   "options.machines,options.serving,options.time_s,options.energy,options.purchase.cost_of_ownership,"
                   "options.rent.cost,warnings"})
def compare():
    """Use for "which of these options should we buy for this model and load over N years, or rent".
    Per option the cards, speed or training time, power, capital, operating and ownership cost,
    cost per token or run, rent and break-even. JSON, CSV (text/csv) or an HTML report
    (text/html)."""
    paths = fields_asked(request.args, s.CompareResponseSchema)
    args = asked()
    catalogs = current_catalogs()
    offers = _offers(args, catalogs)
    kind = preferred(("application/json", "text/csv", HTML_MIME))
    charts = 2 * PLOT_COST if kind == HTML_MIME else 0
    charge(2 * len(offers) * model_weight(args["model"]) + charts, P.COST_OF_COMPARISON(options=len(offers)))
    energy = args["energy"]
    result = domain.compare(args["model"], args["workload"], offers, energy, args.get("target"),
                            args.get("deadline_days"), args.get("years"), args.get("overhead_fraction"),
                            args.get("rank_by"), asked_lang(args.get("lang")))
    count_estimate("compare", "none")
    if kind == "text/csv":
        answer = answered(result)
        response = table_csv([{**option, "currency": answer["currency"]} for option in answer["options"]], COLUMNS)
    elif kind == HTML_MIME:
        response = Response(report_page(result, answered(result), domain.hours_per_day(energy)), mimetype=HTML_MIME)
    else:  # a sparse answer dumps only its fields
        response = jsonify(answered(result) if paths is None else sparse_dumper(s.CompareResponseSchema, paths)(result))
    return counting_hits(response, "compare")


def _offers(args: dict, catalogs) -> tuple[Offer, ...]:
    """The options asked (or every card the filters match), each with its price and rent: the
    request's, else the operator's catalog's, else none."""
    options = args["options"]
    if isinstance(options, dict):
        cards = matching(options)
        if not cards:
            raise InvalidInputError(P.NO_CARD_PASSES(), "options")
        if len(cards) > s.MAX_COMPARED:
            raise InvalidInputError(P.FILTERS_MATCH_TOO_MANY(cards=len(cards), limit=s.MAX_COMPARED), "options")
        options = [HardwareInput(card) for card in cards]
    currency = args.get("currency") or args["energy"].currency or defaults.CURRENCY.value
    prices = {**catalogs.prices, **caller_prices(args.get("prices"), currency, "prices")}
    rents = {**catalogs.rents, **caller_prices(args.get("rent_per_card_hour"), currency, "rent_per_card_hour")}
    return tuple(Offer(h, prices.get(h.card.id), rents.get(h.card.id)) for h in options)

