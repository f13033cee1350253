"""Recommending a product line, a tier and a count: the guide's three questions pick the line,
the memory need picks the candidates, and the fastest (or the best per unit of cost) wins."""

from dataclasses import dataclass, replace

from . import defaults as d
from . import messages as M
from .capacity import Target, capacity_for, met_plan
from .cards import LINES, Card, Catalog
from .catalog import Price
from .errors import InvalidInputError
from .host import host_sizing
from .inputs import (
    Assumption,
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
    resolve_workload,
    say_derived_half_precision,
)
from .memory import MemoryBreakdown, memory_breakdown
from .model import ModelSpec, context_warning
from .placement import cards_needed
from .plan import cards_per_machine
from .questions import place_serving, place_training
from .throughput import typical_speed

# Cards one machine holds when the model may be split; a training cluster may grow to
# d.CLUSTER_COMPLEXITY_CARDS (guide 5.3: beyond 32 cards complexity rises steeply).
LINE_MAX_CARDS = {"consumer": 2, "workstation": 4, "datacenter": 8}
INFERENCE_ONLY_TIERS = ("D-S",)


@dataclass(frozen=True)
class Constraints:
    """The guide's questions. `power_w` is the most one card may draw (the request's
    power_w_per_card; power_w_total bounds the whole installation instead): what the PSU, case
    and cooling can take; `continuous_hours` how long it must run without a break."""

    power_w: float | None = None
    power_w_total: float | None = None
    continuous_hours: float | None = None
    splittable: bool | None = None
    budget: float | None = None
    certified_drivers: bool = False
    ecc: bool = False


@dataclass(frozen=True)
class Candidate:
    card: Card
    """The guide tier evaluated, in brief."""
    count: int | None
    """Cards of this tier the job needs (with a target, the cards that meet it), even beyond the line's limit; null
    when no count holds it, the target is missed or the tier is ruled out first."""
    fits: bool
    """Whether the tier qualifies: holds the job within the line's card limit, per-card and total power, budget, and
    (with a target) meets it."""
    figure: str
    """Name of the figure in value: decode_tokens_per_s_expected, total_tokens_per_s (batch above 1),
    training_tokens_per_s, or cards_for_target."""
    value: float | None
    """The figure named by figure: tokens/s, or a card count for cards_for_target; null when the tier does not qualify
    (over budget keeps it)."""
    price_total: float | None
    """count x the card's price, in the prices' currency; null without a price or when the tier fails before
    pricing."""
    value_per_cost: float | None
    """value / price_total; for cards_for_target 1 / price_total. Null without a price or when the tier does not
    qualify."""
    reason: M.Message
    """Sentence on why the tier qualifies (memory per card, the figure) or not (memory short, power, budget,
    inference-only tier, target missed)."""


@dataclass(frozen=True)
class Recommendation:
    line: str
    excluded_lines: tuple[tuple[str, M.Message], ...]  # (line, why)
    choice: Candidate | None
    candidates: tuple[Candidate, ...]
    examples: tuple[Card, ...]
    ranked_by: str
    reasons: tuple[M.Message, ...]
    assumptions: tuple[Assumption, ...] = ()
    warnings: tuple[M.Message, ...] = ()
    ranked_by_said: M.Message | None = None  # ranked_by as a message; None without a choice
    split: "Recommendation | None" = None  # no choice on one card: what a split over cards would choose


def line_exclusions(c: Constraints) -> dict[str, M.Message]:
    """Why each line is ruled out by the constraints (absent: allowed)."""
    out = {}
    hours = c.continuous_hours
    if hours is not None and hours > d.CONSUMER_MAX_HOURS_PER_DAY:
        out["consumer"] = M.CONSUMER_HOURS(hours_per_day=hours)
    elif c.ecc:
        out["consumer"] = M.CONSUMER_NO_ECC()
    elif c.certified_drivers:
        out["consumer"] = M.CONSUMER_NOT_CERTIFIED()
    if c.certified_drivers:
        out["datacenter"] = M.DATACENTER_NOT_CERTIFIED()
    return out


def recommend(
    model: ModelSpec, workload: WorkloadInput, constraints: Constraints, catalog: Catalog,
    prices: dict[str, Price], target: Target | None = None, assumed: tuple[Assumption, ...] = (),
) -> Recommendation:
    """Line by constraints (escalating when no tier of it holds the model), then the fastest
    tier that fits within the power and budget, or the best per unit of cost with prices. With
    a serving target, each tier is sized to meet it and the fewest cards (or the least cost)
    win. `assumed` are what the caller did not give (a scenario's model and workload), said
    first."""
    notes = Notes()
    notes.assume_all(assumed)
    resolved = resolve_workload(workload, notes, model)
    context_warning(model, resolved.context_tokens, notes)
    if target is not None and resolved.training:
        raise InvalidInputError(M.ERROR_TARGET_NEEDS_INFERENCE(), "target")
    if constraints.budget is not None and not prices:
        notes.warn(M.BUDGET_UNCHECKED(budget=constraints.budget))
    result = _recommend(model, resolved, constraints, catalog, prices, target)
    if result.choice is not None:
        say_derived_half_precision(result.choice.card, notes)
    else:
        notes.warn(M.NO_TIER_MEETS())
        if not constraints.splittable:  # one card was all it allowed: say what a split would choose
            split = _recommend(model, resolved, replace(constraints, splittable=True), catalog, prices, target)
            result = replace(result, split=split if split.choice is not None else None)
    return replace(result, assumptions=tuple(notes.assumptions), warnings=tuple(notes.warnings))


def _recommend(model: ModelSpec, resolved: Workload, constraints: Constraints, catalog: Catalog,
               prices: dict[str, Price], target: Target | None) -> Recommendation:
    tiers = [c for c in catalog.cards if c.kind == "tier"]
    excluded = line_exclusions(constraints)
    allowed = [line for line in LINES if line not in excluded]
    if not allowed:
        raise InvalidInputError(M.ERROR_CONSTRAINTS_RULE_OUT_EVERY_LINE(), "constraints")
    reasons = [M.LINE_RULED_OUT(line=M.LINE_WORDS[line](), why=why) for line, why in excluded.items()]
    candidates: tuple[Candidate, ...] = ()
    evaluated: list[Candidate] = []
    # A serving job's memory is the same on every card: made once for the candidates.
    breakdown = None if resolved.training or target is not None else memory_breakdown(model, resolved, Notes.unread())
    for line in allowed:
        line_tiers = [card for card in tiers if card.line == line]
        if _pcie_cluster(model, resolved, line_tiers, constraints):
            reasons.append(M.LINE_PCIE_CLUSTER(line=M.LINE_WORDS[line]()))
            continue
        candidates = tuple(_candidate(model, resolved, card, constraints, prices, breakdown) if target is None
                           else _for_target(model, resolved, card, constraints, prices, target)
                           for card in line_tiers)
        evaluated.extend(candidates)
        fitting = [c for c in candidates if c.fits]
        if fitting:
            choice, ranked_by, ranked_by_said = _best(fitting)
            examples = _examples(model, resolved, catalog, choice, breakdown)
            return Recommendation(line, tuple(excluded.items()), choice, tuple(evaluated), examples,
                                  ranked_by, _reasons(line, reasons, choice, ranked_by_said),
                                  ranked_by_said=ranked_by_said)
        if target is not None:
            reasons.append(M.LINE_MISSES_TARGET(line=M.LINE_WORDS[line]()))
            continue
        limit = _max_cards(line, constraints, resolved)
        reasons.append(M.LINE_HOLDS_NOTHING(line=M.LINE_WORDS[line](), cards=limit))
    return Recommendation(allowed[-1], tuple(excluded.items()), None, tuple(evaluated), (),
                          "none", tuple(reasons))


def _examples(model: ModelSpec, workload: Workload, catalog: Catalog, choice: Candidate,
              breakdown: MemoryBreakdown | None) -> tuple[Card, ...]:
    """Real cards of the chosen tier that hold the job on the count recommended."""
    count = choice.count or 1

    def holds(card: Card) -> bool:
        needed, _ = cards_needed(model, workload, card, breakdown)
        return needed is not None and needed <= count

    return tuple(card for card in catalog.cards
                 if card.kind == "card" and card.tier == choice.card.id and holds(card))


def _pcie_cluster(model: ModelSpec, workload: Workload, line_tiers: list[Card], c: Constraints) -> bool:
    """A splittable training job that needs more than one of the line's largest PCIe card."""
    largest = max(line_tiers, key=lambda card: card.memory_bytes)
    if not (workload.training and c.splittable and largest.interconnect == "pcie"):
        return False
    needed, _ = cards_needed(model, workload, largest)
    return needed is None or needed > 1


def _max_cards(line: str, c: Constraints, workload: Workload) -> int:
    if not c.splittable:
        return 1
    if workload.training and line == "datacenter":
        return d.CLUSTER_COMPLEXITY_CARDS
    return LINE_MAX_CARDS[line]


def _candidate(model: ModelSpec, workload: Workload, card: Card, c: Constraints,
               prices: dict[str, Price], breakdown: MemoryBreakdown | None) -> Candidate:
    notes = Notes()
    figure = "training_tokens_per_s" if workload.training else (
        "total_tokens_per_s" if workload.batch_size > 1 else "decode_tokens_per_s_expected")
    if workload.training and card.tier in INFERENCE_ONLY_TIERS:
        return Candidate(card, None, False, figure, None, None, None,
                         M.INFERENCE_CARD(card=card.id))
    limit = _max_cards(card.line, c, workload)
    count, usable = cards_needed(model, workload, card, breakdown)
    if count is None or count > limit:
        need = _job(model, workload, card, limit, notes, breakdown).fit.need_bytes_per_card
        said = M.NEEDS_MORE_CARDS(limit=limit, need_bytes=need, usable_bytes=usable, cards=count) if count else \
            M.NEEDS_ANY_CARDS(limit=limit, need_bytes=need, usable_bytes=usable)
        return Candidate(card, count, False, figure, None, None, None, said)
    if c.power_w is not None and card.power_w > c.power_w:
        return Candidate(card, count, False, figure, None, None, None,
                         M.CARD_POWER_OVER(power_w=card.power_w, allowed_w=c.power_w))
    over = _over_total_power(c, card, count)
    if over:
        return Candidate(card, count, False, figure, None, None, None, over)
    job = _job(model, workload, card, count, notes, breakdown)
    value = _figure(model, workload, job, figure)
    price = prices.get(card.id)
    total = None if price is None else price.amount * count
    if c.budget is not None and total is not None and total > c.budget:
        return Candidate(card, count, False, figure, value, total, None,
                         M.OVER_BUDGET(cards=count, total=total, budget=c.budget))
    return Candidate(card, count, True, figure, value, total,
                     None if total is None else value / total,
                     M.CARDS_HOLD_IT(cards=count, card=card.id, need_bytes=job.fit.need_bytes_per_card,
                                     usable_bytes=usable, figure=figure, value=value))


def _for_target(model: ModelSpec, workload: Workload, card: Card, c: Constraints,
                prices: dict[str, Price], target: Target) -> Candidate:
    """The tier sized for a serving target: the cards (over as many machines as it takes) on
    the engine's best plan; a model that must not be split may only be copied, one card each."""
    figure = "cards_for_target"
    if c.power_w is not None and card.power_w > c.power_w:
        return Candidate(card, None, False, figure, None, None, None,
                         M.CARD_POWER_OVER(power_w=card.power_w, allowed_w=c.power_w))
    answer = capacity_for(model, workload, HardwareInput(card), target, Notes.unread())
    if not answer.meets_target:
        return Candidate(card, None, False, figure, None, None, None, answer.reason)
    plan, cards, _ = met_plan(answer)
    over = _over_total_power(c, card, cards, answer.power_w)
    if over:
        return Candidate(card, cards, False, figure, None, None, None, over)
    group = plan.group
    if c.splittable is False and group > 1:
        return Candidate(card, cards, False, figure, None, None, None, M.MUST_NOT_SPLIT(cards=group))
    price = prices.get(card.id)
    total = None if price is None else price.amount * cards
    if c.budget is not None and total is not None and total > c.budget:
        return Candidate(card, cards, False, figure, cards, total, None,
                         M.OVER_BUDGET(cards=cards, total=total, budget=c.budget))
    return Candidate(card, cards, True, figure, cards, total,
                     None if total is None else 1 / total,
                     M.TARGET_MET_ON_MACHINES(reason=answer.reason, machines=answer.machines, power_w=answer.power_w))


def machine_power_w(card: Card, count: int) -> float:
    """What the machines carrying `count` cards draw: the figure /cost and /estimate price."""
    return host_sizing(card, count, cards_per_machine(card, None, Notes.unread())).typical_power_w


def _over_total_power(c: Constraints, card: Card, cards: int, power_w: float | None = None) -> M.Message | None:
    """Why the machines break power_w_total (their draw, host included: `power_w` where the
    answer has it, else sized here), or None; nothing is sized without a total to check."""
    if c.power_w_total is None:
        return None
    power_w = power_w or machine_power_w(card, cards)
    if power_w <= c.power_w_total:
        return None
    return M.MACHINES_POWER_OVER(cards=cards, power_w=power_w, allowed_w=c.power_w_total)


def _job(model, workload: Workload, card: Card, count: int, notes: Notes,
         breakdown: MemoryBreakdown | None):
    hardware = HardwareInput(card, count)
    if workload.training:
        return place_training(model, workload, hardware, notes)
    return place_serving(model, workload, hardware, notes, breakdown)


def _figure(model, workload, job, figure) -> float:
    if workload.training:
        answer = job.answer
        return (answer.cards * answer.peak_flops_per_s * workload.mfu * answer.scaling_efficiency
                / (answer.flops_per_param_token * model.params_per_token))
    _, _, per_stream, total = typical_speed(workload, job.setup)
    return total if figure == "total_tokens_per_s" else per_stream


def _best(fitting: list[Candidate]) -> tuple[Candidate, str, M.Message]:
    """The best candidate, and what it was ranked by (as the answer names it, and said)."""
    if fitting[0].figure == "cards_for_target":
        costs = [(c, c.price_total) for c in fitting if c.price_total is not None]
        if costs and len(costs) == len(fitting):
            return (min(costs, key=lambda pair: pair[1])[0], *_ranked_by("cost for the target"))
        return (min(fitting, key=lambda c: (c.value, c.card.power_w)), *_ranked_by("fewest cards for the target"))
    per_cost = [(c, c.value_per_cost) for c in fitting if c.value_per_cost is not None]
    if per_cost and len(per_cost) == len(fitting):
        return (max(per_cost, key=lambda pair: pair[1])[0], *_ranked_by(fitting[0].figure, per_cost=True))
    return (max(fitting, key=_fitting_value), *_ranked_by(fitting[0].figure))


def _ranked_by(figure: str, per_cost: bool = False) -> tuple[str, M.Message]:
    """A ranking's name in the answer (the figure, per unit of cost or not) and its message."""
    said = M.RANKED_BY[figure]()
    return (f"{figure}{M.PER_COST_SUFFIX}", M.RANKED_PER_COST(figure=said)) if per_cost else (figure, said)


def _fitting_value(candidate: Candidate) -> float:
    """The figure of a candidate that fits: _candidate and _for_target give one to every such."""
    assert candidate.value is not None, f"{candidate.card.id} fits without a {candidate.figure}"
    return candidate.value


def _reasons(line: str, reasons: list[M.Message], choice: Candidate, ranked_by: M.Message) -> tuple[M.Message, ...]:
    met = M.MEETS_TARGET() if choice.figure == "cards_for_target" else M.MEMORY_FITS()
    return (M.LINE_LOWEST_ALLOWED(line=M.LINE_WORDS[line]()), *reasons,
            M.CHOICE_BEST(cards=choice.count, card=choice.card.id, met=met, ranked_by=ranked_by,
                          value=choice.value))


@dataclass(frozen=True)
class Scenario:
    """One of the guide's worked scenarios (section 5) and the guide's answer to it (both coded
    messages, so that they are said in the caller's language)."""

    id: str
    title: M.Message
    model: str
    workload: dict
    constraints: Constraints
    guide_counts: dict
    guide_answer: M.Message

    @property
    def guide_tiers(self) -> tuple[str, ...]:
        return tuple(self.guide_counts)


SCENARIOS = {
    s.id: s
    for s in (
        Scenario("developer", M.SCENARIO_DEVELOPER(), "llama-2-7b",
                 {"mode": "lora", "context_tokens": 4096},
                 Constraints(power_w=250, continuous_hours=4, splittable=False),
                 {"C70": 1, "W-A": 1}, M.SCENARIO_DEVELOPER_GUIDE()),
        Scenario("team_inference", M.SCENARIO_TEAM_INFERENCE(),
                 "qwen2.5-32b", {"precision": "awq", "context_tokens": 4096, "batch_size": 32},
                 Constraints(power_w=300, continuous_hours=24 * 365, splittable=True),
                 {"W-B": 2, "D-S": 2}, M.SCENARIO_TEAM_INFERENCE_GUIDE()),
        Scenario("training_cluster", M.SCENARIO_TRAINING_CLUSTER(), "llama-2-7b",
                 {"mode": "full_finetune", "context_tokens": 4096, "batch_size": 1},
                 Constraints(power_w=700, continuous_hours=24 * 30, splittable=True, ecc=True),
                 {"D-M": 4}, M.SCENARIO_TRAINING_CLUSTER_GUIDE()),
    )
}


def scenario_assumptions(scenario: Scenario, given: set[str]) -> tuple[Assumption, ...]:
    """What a scenario supplies that the caller did not give: its model, workload and
    constraints, each with where it comes from."""
    why = M.SCENARIO_SUPPLIES(scenario=scenario.id, title=scenario.title)
    c = scenario.constraints
    supplied = {  # values as data: key=value, the way a caller writes them
        "model": scenario.model,
        "workload": ", ".join(f"{k}={v}" for k, v in scenario.workload.items()),
        "constraints": ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={str(v).lower()}"
                                 if isinstance(v, bool) else f"{k}={v}"
                                 for k, v in vars(c).items() if v not in (None, False)),
    }
    return tuple(Assumption(name, value, why) for name, value in supplied.items() if name not in given)


def compare_with_guide(scenario: Scenario, result: Recommendation) -> tuple[bool, tuple[M.Message, ...]]:
    """Whether the service lands on one of the guide's tiers, and each guide tier's figures."""
    choice = result.choice
    chosen = choice.card.id if choice else None
    by_tier = {c.card.id: c for c in result.candidates}
    lines = []
    for tier in scenario.guide_tiers:
        candidate = by_tier.get(tier)
        if tier == chosen:
            assert candidate is not None  # the choice is one of the candidates
            guide_count = scenario.guide_counts[tier]
            lines.append(M.GUIDE_SAME_CHOICE(tier=tier, cards=candidate.count) if candidate.count == guide_count
                         else M.GUIDE_SAME_TIER_OTHER_COUNT(tier=tier, cards=candidate.count, guide_cards=guide_count,
                                                            reason=candidate.reason))
        elif candidate is None:
            lines.append(M.GUIDE_TIER_NOT_EVALUATED(tier=tier, line=M.LINE_WORDS[result.line]()))
        elif not candidate.fits:
            lines.append(M.GUIDE_TIER_REFUSED(tier=tier, reason=candidate.reason))
        else:
            assert choice is not None  # recommend chooses whenever a candidate fits
            lines.append(M.GUIDE_TIER_BELOW(tier=tier, cards=candidate.count, figure=candidate.figure,
                                            value=candidate.value, chosen=chosen, chosen_value=choice.value))
    return chosen in scenario.guide_tiers, tuple(lines)


def summary(result: Recommendation) -> M.Message:
    """The recommendation in a sentence or two."""
    choice, ranked_by = result.choice, result.ranked_by_said
    split = result.split
    if (choice is None or ranked_by is None) and split is not None and split.choice is not None:
        return M.RECOMMEND_SPLIT(cards=split.choice.count, card=split.choice.card.id, line=M.LINE_WORDS[split.line]())
    if choice is None or ranked_by is None:
        return M.RECOMMEND_NONE()
    return M.RECOMMENDED(cards=choice.count, card=choice.card.id, line=M.LINE_WORDS[result.line](),
                         ranked_by=ranked_by, value=choice.value)
