"""The procurement endpoints: rank, recommend, normalise a marketing figure, troubleshoot."""


from dataclasses import replace

from flask import Blueprint, request

from ..limits import charge, model_weight
from ..metrics import count_estimate
from ..sizing import (
    InvalidInputError,
    Notes,
    WorkloadInput,
    cards_per_machine,
    diagnose,
    host_sizing,
    normalise_figure,
    normalize_summary,
    rank_cards,
    said_in,
    trouble_summary,
)
from ..sizing import recommend as rec
from . import problem_messages as P
from . import schemas as s
from .catalogs import caller_prices, current_catalogs
from .dump import sparse_dumper
from .lang import answer_lang
from .operations import ANSWER_FIELDS_PARAMETER, answered, asked, fields_asked, operation

bp = Blueprint("decisions", __name__)
RANK_COST = 3  # a ranking or recommendation sizes every card of a line: about three estimates



@bp.post("/rank")
@operation(
    operation_id="rankCards",
    tool=True,
    summary="Cards ranked the guide's way for a product line",
    body=s.RankRequestSchema,
    example={"line": "consumer", "model": "llama-3.1-8b"},
    answer=s.RankResponseSchema,
    answer_description="The ranking, each score explained.",
    parameters=(ANSWER_FIELDS_PARAMETER,),
    # an assistant reads the summary and each card's rank and score (a few KB, not 53 KB with every
    # score explained); it names more in fields
    tool_defaults={"fields": "summary,line,ranking.rank,ranking.card.id,ranking.total_score,excluded.card.id,"
                   "excluded.cards_needed,warnings"})
def rank():
    """Use for "which card is best for my line". Scores dense compute, memory, bandwidth, interconnect
    and efficiency/stability 0-100 against the best compared card, weighted by the guide (or
    given weights); memory first as a threshold when a model is given."""
    paths = fields_asked(request.args, s.RankResponseSchema)
    args = asked()
    charge(RANK_COST * model_weight(args.get("model")), P.COST_OF_RANKING())
    catalogs = current_catalogs()
    names = args.get("cards")
    cards = tuple(catalogs.cards.get(n, "cards") for n in names) if names else None
    line = args.get("line") or _single_line(cards)
    if cards is None:
        cards = tuple(c for c in catalogs.cards.cards if c.line == line)
    lang = answer_lang(args)
    result = rank_cards(cards, line, args.get("weights"), args.get("model"), args["workload"],
                        args.get("count"), lang)
    count_estimate("rank", line)
    said = said_in(lang, result)
    return answered(said) if paths is None else sparse_dumper(s.RankResponseSchema, paths)(said)


def _single_line(cards) -> str:
    lines = {c.line for c in cards or ()}
    if len(lines) != 1:
        raise InvalidInputError(P.ONE_LINE(), "line")
    return lines.pop()


@bp.post("/recommend")
@operation(
    operation_id="recommend",
    tool=True,
    summary="Product line, tier and card count for a set of constraints",
    body=s.RecommendRequestSchema,
    example={
        "model": "llama-3.1-70b",
        "workload": {"precision": "awq", "batch_size": 16},
        "constraints": {"power_w": 350, "continuous_hours": 24, "splittable": True}},
    answer=s.RecommendResponseSchema,
    answer_description="The recommendation.")
def recommend():
    """Use for "what should I buy". The guide's questions (power per card, continuous hours,
    splittable) pick the line; memory picks candidates; the fastest (or best per cost with
    prices) wins. Answers tier, count, tokens/s or training tokens/s, host sizing (W, GB) and
    reasons in en or zh."""
    args = asked()
    charge(RANK_COST * model_weight(args.get("model")), P.COST_OF_RECOMMENDATION())
    catalogs = current_catalogs()
    scenario = rec.SCENARIOS.get(args.get("scenario"))
    model = args.get("model") or catalogs.models.get(scenario.model).spec
    workload = args.get("workload") or (WorkloadInput(**scenario.workload) if scenario else WorkloadInput())
    constraints = args.get("constraints") or (scenario.constraints if scenario else rec.Constraints())
    prices = {**catalogs.prices,
              **caller_prices(args.get("prices"), args.get("currency", "the caller's currency"), "prices")}
    assumed = rec.scenario_assumptions(scenario, given=set(args)) if scenario else ()
    result = rec.recommend(model, workload, constraints, catalogs.cards, prices, args.get("target"),
                           assumed)
    count_estimate("recommend", result.line)
    return answered(_answer(result, scenario, answer_lang(args)))


def _answer(result: rec.Recommendation, scenario, lang: str) -> dict:
    result = said_in(lang, result)  # the candidates' reasons too
    choice = result.choice
    check = None
    if scenario is not None:
        agrees, lines = rec.compare_with_guide(scenario, result)
        scenario = said_in(lang, scenario)
        check = {"id": scenario.id, "title": scenario.title, "guide_answer": scenario.guide_answer,
                 "agrees": agrees, "comparison": said_in(lang, lines)}
    return {
        "line": result.line,
        "tier": choice.card if choice else None,
        "count": choice.count if choice else None,
        "ranked_by": result.ranked_by,
        "value": choice.value if choice else None,
        "example_cards": result.examples,
        "excluded_lines": [{"line": line, "reason": why} for line, why in result.excluded_lines],
        "candidates": result.candidates,
        "host": said_in(lang, host_sizing(choice.card, choice.count,
                                          cards_per_machine(choice.card, None, Notes.unread())))
        if choice else None,
        "reasons": list(result.reasons),
        "lang": lang,
        "summary": str(said_in(lang, rec.summary(result))),
        "scenario": check,
        "assumptions": list(result.assumptions),
        "warnings": list(result.warnings),
    }


@bp.post("/normalize")
@operation(
    operation_id="normalizeFigure",
    tool=True,
    summary="A marketing figure as dense figures per precision",
    body=s.NormalizeRequestSchema,
    example={"value": 800, "precision": "int8", "sparse": True},
    answer=s.NormalizeResponseSchema,
    answer_description="The dense figures.")
def normalize():
    """Use to compare a vendor's TFLOPS or TOPS. Halves sparse figures, converts FP16-accumulate rates,
    and gives the dense figure for each precision (FP8/INT8 = 2x BF16, FP4 = 4x, TF32 = 0.5x),
    naming each rule applied."""
    args = asked()
    lang = answer_lang(args)
    figure = normalise_figure(args["value"], args["precision"], args["sparse"], args.get("accumulate"))
    return answered(said_in(lang, replace(figure, summary=normalize_summary(lang, figure))))


@bp.get("/troubleshoot")
@operation(
    operation_id="troubleshoot",
    tool=True,
    summary="Symptom text in, the guide's likely causes out",
    answer=s.TroubleshootResponseSchema,
    answer_description="The matching rows and the diagnosis order.",
    query=s._TroubleshootQuerySchema)
def troubleshoot():
    """Use when a card misbehaves. Matches free text in Chinese or English against the guide's table
    (cause, quick check, fix), ranked, with the five-step diagnosis order and power-cap advice
    for long-running consumer cards."""
    args = asked()
    lang = answer_lang(args)
    result = diagnose(args["q"], lang, args.get("line"), args["limit"])
    matches = [{**_row(m.row, lang), "score": m.score, "matched": list(m.matched)} for m in result.matches]
    best = matches[0] if matches else {}
    return answered({
        "summary": trouble_summary(lang, best.get("cause"), best.get("check")),
        "query": result.query, "lang": lang,
        "matches": matches,
        "diagnosis_order": list(result.steps), "lessons": list(result.lessons),
        "advice": list(result.advice), "source": result.source,
    })


def _row(row, lang: str) -> dict:
    zh = lang == "zh"
    return {"id": row.id, "source": row.source,
            "symptom": row.symptom_zh if zh else row.symptom, "cause": row.cause_zh if zh else row.cause,
            "check": row.check_zh if zh else row.check, "fix": row.fix_zh if zh else row.fix}
