"""Ranking cards the guide's way: five dimensions, weighted by product line, each scored
0-100 against the best card in the compared set; memory first as a threshold."""

from collections.abc import Mapping
from dataclasses import dataclass, replace

from . import defaults as d
from . import messages as M
from .cards import Card, half_precision_rate
from .errors import InvalidInputError
from .inputs import (
    Assumption,
    Notes,
    WorkloadInput,
    card_warnings,
    resolve_workload,
    say_derived_half_precision,
)
from .memory import memory_breakdown
from .model import ModelSpec, context_warning
from .placement import cards_needed
from .plan import CARDS_PER_MACHINE, CARDS_PER_MACHINE_NOTE
from .units import GB, GIB, TERA
from .zh import sentences

DIMENSIONS = ("dense_compute", "memory_capacity", "memory_bandwidth", "interconnect",
              "efficiency_stability")
# Guide section 1.2 (SPEC.md "Ranking weights by product line"), percent.
WEIGHTS = {
    "consumer": {"dense_compute": 25, "memory_capacity": 20, "memory_bandwidth": 30,
                 "interconnect": 5, "efficiency_stability": 20},
    "workstation": {"dense_compute": 25, "memory_capacity": 30, "memory_bandwidth": 25,
                    "interconnect": 10, "efficiency_stability": 10},
    "datacenter": {"dense_compute": 30, "memory_capacity": 30, "memory_bandwidth": 25,
                   "interconnect": 15, "efficiency_stability": 0},
}
UNITS = {"dense_compute": "TFLOP/s", "memory_capacity": "GiB", "memory_bandwidth": "GB/s",
         "interconnect": "GB/s", "efficiency_stability": "points"}
NORMALISATION = M.RANK_NORMALISATION()
# Efficiency and stability: half dense TFLOP/s per watt (scored against the best), half
# stability, which the guide ties to ECC and to the line's duty (workstation and data-centre
# cards hold a flat line for days; consumer clocks wander 5-10 % over 72 hours).
STABILITY_POINTS = {"consumer": 0.0, "workstation": 100.0, "datacenter": 100.0}


@dataclass(frozen=True)
class DimensionScore:
    dimension: str
    """Dimension scored: dense_compute, memory_capacity, memory_bandwidth, interconnect or efficiency_stability."""
    value: float | None
    """The card's figure in unit: half-precision dense TFLOP/s, memory GiB, bandwidth GB/s, link GB/s, or TFLOP/s per
    W for efficiency_stability; null when the card has no figure."""
    unit: str
    """Unit of value: TFLOP/s, GiB, GB/s, or points for efficiency_stability (whose value is in fact TFLOP/s per
    W)."""
    score: float
    """Score 0-100: 100 x value / the best value among the compared cards; efficiency_stability averages that with
    stability points (line and ECC)."""
    weight: float
    """Weight of the dimension in percent, the weights scaled to add up to 100."""
    contribution: float
    """weight x score / 100: the points this dimension adds to total_score."""


@dataclass(frozen=True)
class RankedCard:
    rank: int
    """Position from 1, by total_score; ties keep catalog order."""
    card: Card
    """The card ranked, in brief."""
    total_score: float
    """Weighted total 0-100: the sum of the scores' contributions."""
    scores: tuple[DimensionScore, ...]
    """One score per dimension, in the order dense_compute, memory_capacity, memory_bandwidth, interconnect,
    efficiency_stability."""
    explanation: M.Message
    """One line: each weighted dimension's score x weight = contribution, and the strongest dimension."""


def dense_tflops(card: Card) -> float | None:
    """Half-precision dense TFLOP/s; INT8/FP8 halved where no half-precision figure exists."""
    rate = half_precision_rate(card)
    return None if rate is None else rate[1] / TERA or None


def raw_values(card: Card) -> dict[str, float | None]:
    """The figure each dimension is scored on."""
    compute = dense_tflops(card)
    link = card.interconnect_bytes_per_s
    return {
        "dense_compute": compute,
        "memory_capacity": card.memory_bytes / GIB,
        "memory_bandwidth": card.bandwidth_bytes_per_s / GB,
        "interconnect": None if link is None else link / GB,
        "efficiency_stability": None if compute is None else compute / card.power_w,
    }


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    if set(weights) != set(DIMENSIONS):
        raise InvalidInputError(M.ERROR_WEIGHTS_DIMENSIONS(dimensions=DIMENSIONS), "weights")
    total = sum(weights.values())
    if total <= 0:
        raise InvalidInputError(M.ERROR_WEIGHTS_ZERO(), "weights")
    return {k: 100 * v / total for k, v in weights.items()}


def rank(cards: tuple[Card, ...], weights: Mapping[str, float]) -> tuple[RankedCard, ...]:
    """Score each dimension against the best card in the set and rank by the weighted total.

    Ties keep catalog order, so the ranking is deterministic.
    """
    values = {card.id: raw_values(card) for card in cards}
    best = {dim: max((v[dim] or 0 for v in values.values()), default=0) for dim in DIMENSIONS}
    scored = []
    for order, card in enumerate(cards):
        scores = tuple(_score(card, dim, values[card.id][dim], best[dim], weights[dim]) for dim in DIMENSIONS)
        total = sum(s.contribution for s in scores)
        scored.append((-round(total, 9), order, card, total, scores))
    scored.sort(key=lambda row: (row[0], row[1]))
    return tuple(RankedCard(i + 1, card, total, scores, _explain(card, scores))
                 for i, (_, _, card, total, scores) in enumerate(scored))


def _score(card: Card, dim: str, value: float | None, best: float, weight: float) -> DimensionScore:
    if dim == "efficiency_stability":
        efficiency = 0.0 if not value or not best else 100 * value / best
        score = (efficiency + STABILITY_POINTS[card.line] * (1 if card.ecc else 0.5)) / 2
    else:
        score = 0.0 if not value or not best else 100 * value / best
    return DimensionScore(dim, value, UNITS[dim], score, weight, weight * score / 100)


def _explain(card: Card, scores: tuple[DimensionScore, ...]) -> M.Message:
    parts = [M.RANK_PART(dimension=s.dimension, score=s.score, weight=s.weight, contribution=s.contribution)
             for s in scores if s.weight]
    said = parts[-1] if parts else M.RANK_NO_WEIGHT()
    for part in reversed(parts[:-1]):
        said = M.RANK_PARTS(first=part, rest=said)
    strongest = max(scores, key=lambda s: s.contribution)
    return M.RANK_EXPLANATION(card=card.id, parts=said, dimension=strongest.dimension)


@dataclass(frozen=True)
class Excluded:
    card: Card
    """The card left out of the ranking, in brief."""
    cards_needed: int | None
    """Cards of this kind that would hold the model; null when no count does."""
    reason: M.Message
    """Why it was left out: needs more cards than allowed, or holds the model on no number of
    cards."""


@dataclass(frozen=True, kw_only=True)
class RankResult:
    line: str
    """Product line whose guide weights apply: the one asked, else the line of the cards named."""
    weights: dict[str, float]
    """Weight per dimension in percent, scaled to add up to 100 (the line's guide weights unless given)."""
    normalisation: M.Message
    """Sentence stating how scores are computed: 100 x value / best among the compared cards, total the weighted sum /
    100."""
    ranking: tuple[RankedCard, ...]
    """Cards that pass the memory threshold, best first."""
    excluded: tuple[Excluded, ...]
    """Cards dropped by the memory threshold when a model is given (needing more cards than allowed); empty without a
    model."""
    summary: str = ""
    """The ranking in a sentence or two to quote, in the answer's language: the first card and its score, the
    second, and how many cards memory left out."""
    assumptions: tuple[Assumption, ...]
    """Each default applied (weights, card count allowed, workload), with its value and why."""
    warnings: tuple[M.Message, ...]
    """Cautions such as no card passing the memory threshold, a family name (A100) taken as one variant, or a context
    longer than the model's positions."""


def rank_cards(
    cards: tuple[Card, ...], line: str, weights: dict | None, model: ModelSpec | None,
    workload: WorkloadInput, count: int | None, lang: str = "en",
) -> RankResult:
    """The guide's ranking: memory first as a threshold (when a model is given), then the
    weighted, normalised dimensions; the summary said in `lang`."""
    notes = Notes()
    card_warnings(cards, notes)
    cards = tuple({card.id: card for card in cards}.values())  # one row per card, in order
    if weights is None:
        weights = WEIGHTS[line]
        notes.assume("weights", line, M.GUIDE_WEIGHTS(line=M.LINE_WORDS[line]()))
    weights = check_weights(weights)
    kept, excluded = list(cards), []
    if model is not None:
        limit = notes.use("count", count, d.Default(CARDS_PER_MACHINE[line], M.RANK_COUNT(
            line=M.LINE_WORDS[line](), cards=CARDS_PER_MACHINE[line], why=CARDS_PER_MACHINE_NOTE[line])))
        resolved = resolve_workload(workload, notes, model)
        context_warning(model, resolved.context_tokens, notes)
        kept = []
        breakdown = None if resolved.training else memory_breakdown(model, resolved, Notes.unread(), said=False)
        for card in cards:
            needed, _ = cards_needed(model, resolved, card, breakdown)
            if needed is not None and needed <= limit:
                kept.append(card)
            else:
                excluded.append(Excluded(card, needed, M.RANK_NEEDS_MORE(cards=needed, allowed=limit)
                                         if needed else M.RANK_HOLDS_NOTHING()))
    if not kept:
        notes.warn(M.NO_CARD_PASSES_MEMORY())
    for card in kept:
        say_derived_half_precision(card, notes)
    result = RankResult(line=line, weights=weights, normalisation=NORMALISATION,
                        ranking=rank(tuple(kept), weights), excluded=tuple(excluded), **notes.said())
    return replace(result, summary=rank_summary(lang, result))


def rank_summary(lang: str, result: RankResult) -> str:
    """The first card and its score, the second, and the cards memory left out."""
    said: list[M.Message] = []
    if result.ranking:
        first = result.ranking[0]
        said.append(M.SUMMARY_RANK(line=M.LINE_WORDS[result.line](), first=first.card.id, score=first.total_score))
        if len(result.ranking) > 1:
            said.append(M.SUMMARY_RANK_NEXT(second=result.ranking[1].card.id, score=result.ranking[1].total_score))
    elif result.excluded:
        said.append(M.SUMMARY_RANK_NONE())
    if result.excluded and result.ranking:
        said.append(M.SUMMARY_RANK_EXCLUDED(excluded=len(result.excluded)))
    return sentences(lang, said)

