"""One call per question: memory, throughput, scaling, cost, and the whole estimate."""

import copy
import functools
import math
from dataclasses import dataclass, replace

from . import defaults as d
from .capacity import CapacityAnswer, Target, capacity_for, met_plan
from .cards import Card
from .catalog import Price
from .cost import EnergyAnswer, OwnershipAnswer, energy_answer, ownership_answer
from .engines import DEFAULT_ENGINE, ENGINES
from .errors import InvalidInputError
from .host import HostSizing, host_sizing, power_basis
from .inputs import (
    Assumption,
    EnergyInput,
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
    card_warnings,
    resolve_workload,
)
from .links import Fabric, fabric_for
from .memory import FitAnswer, MemoryBreakdown, memory_breakdown
from .model import ModelSpec, context_warning
from .placement import (
    Placement,
    ServingPlacements,
    TrainingPlacements,
    fit_answer,
    serving_placements,
    training_placements,
)
from .plan import Parallelism, PlanAnswer, cards_per_machine, machine_slots, plan_answer
from .summary import summarise
from .throughput import (
    Setup,
    ThroughputAnswer,
    decode_weights_note,
    range_note,
    serving_capacity,
    setup,
    stream_speed,
    throughput_answer,
)
from .training import compute_multiplier
from .training_time import Cluster, TrainingAnswer, cluster_for, guide_curve_cards, least_cards_for, training_answer
from .units import GB, SECONDS_PER_DAY
from .zh import said_in


@dataclass(frozen=True, kw_only=True)
class MemoryResult:
    """The breakdown's fields stand at the top of the answer, then what it was asked about."""

    breakdown: MemoryBreakdown
    model: ModelSpec
    mode: str
    precision: str
    kv_precision: str
    fit: FitAnswer | None
    fits: bool | None
    cards_needed: int | None
    parallelism: PlanAnswer | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]
    workload: Workload


@dataclass(frozen=True, kw_only=True)
class ThroughputResult:
    """The throughput's fields stand at the top of the answer, then what it was asked about."""

    throughput: ThroughputAnswer
    model: ModelSpec
    card: Card
    precision: str
    fit: FitAnswer
    parallelism: PlanAnswer
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]
    workload: Workload


@dataclass(frozen=True)
class ScalingPoint:
    """The training time on `cards` cards (compute and communication, whether or not the job
    fits them: `fits` says so)."""

    cards: int
    fits: bool
    scaling_efficiency: float
    time_s: float | None
    time_s_guide_curve: float | None


@dataclass(frozen=True, kw_only=True)
class ScalingResult:
    """The training answer's fields stand at the top of the answer, then the curve and counts."""

    training: TrainingAnswer
    model: ModelSpec
    card: Card
    mode: str
    fit: FitAnswer
    parallelism: PlanAnswer
    curve: tuple[ScalingPoint, ...]
    deadline_days: float | None
    cards_needed_by_memory: int | None
    cards_needed_for_deadline: int | None
    cards_needed_for_deadline_guide_curve: int | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]
    workload: Workload


@dataclass(frozen=True)
class Alternative:
    """Another way to run the same job that the service compared: what changes, the cards it
    needs, and its headline figure."""

    option: str
    cards_needed: int | None
    figure: str
    value: float | None
    note: str


@dataclass(frozen=True)
class FigureRange:
    """A headline figure as low / typical / high, and the factor ranges behind it."""

    name: str
    low: float
    typical: float
    high: float
    note: str


@dataclass(frozen=True, kw_only=True)
class CostResult:
    """The electricity's fields stand at the top of the answer, then the cost of ownership."""

    energy: EnergyAnswer
    ownership: OwnershipAnswer | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Estimate:
    model: ModelSpec
    card: Card
    mode: str
    precision: str
    fits: bool
    cards_needed: int | None
    bound: str
    ranges: tuple[FigureRange, ...]
    alternatives: tuple[Alternative, ...]
    memory: MemoryBreakdown
    fit: FitAnswer
    parallelism: PlanAnswer
    throughput: ThroughputAnswer | None
    training: TrainingAnswer | None
    energy: EnergyAnswer
    host: HostSizing
    ownership: OwnershipAnswer | None
    capacity: CapacityAnswer | None
    lang: str
    summary: str
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]
    workload: Workload


# --- the two openings every answer shares -------------------------------------------------


@dataclass(frozen=True)
class Serving:
    """An inference job placed on cards: the plan it runs, the fit, and its speed's setup."""

    workload: Workload
    breakdown: MemoryBreakdown
    placements: ServingPlacements
    fit: FitAnswer
    placement: Placement  # the plan speed is shown for: the cards asked, or those needed
    per_machine: int
    fabric: Fabric
    setup: Setup
    # The plan that serves most at full load on the same cards, where it is not the one shown
    # (which serves the batch asked fastest), with its setup: full-load figures are priced on it.
    full_load: "tuple[Placement, Setup] | None" = None


@dataclass(frozen=True)
class Training:
    """A training job placed on cards: the plan, the fit, the cluster and its time."""

    workload: Workload
    breakdown: MemoryBreakdown
    placements: TrainingPlacements
    fit: FitAnswer
    placement: Placement
    cluster: Cluster
    answer: TrainingAnswer


def place_serving(model: ModelSpec, resolved: Workload, hardware: HardwareInput, notes: Notes,
                  breakdown: MemoryBreakdown | None = None, as_asked: bool = False) -> Serving:
    """The job on the cards asked (or the least count); speed is set up on the plan shown: the
    cards asked when they hold it (or always, `as_asked`, to price a plan that runs elsewhere with
    less memory reserved, as the accuracy suite does), else the least count's."""
    card = hardware.card
    breakdown = breakdown or memory_breakdown(model, resolved, notes)
    plan = _serving_plan(model, resolved, breakdown, hardware, notes)
    placements = plan.placements
    shown = placements.asked if as_asked else _shown(placements.asked, placements.least)
    _serving_plan_notes(model, resolved, placements, shown, notes)
    decode_weights_note(model, resolved.batch_size, notes)
    s = setup(model, resolved, breakdown, card, shown.parallelism, plan.fabric, notes)
    full_load = None
    if plan.full_load is not None and shown is placements.asked and plan.full_load[0] is not shown:
        full_load = plan.full_load
        described = full_load[0].parallelism.describe()
        notes.assume("full_load_parallelism", described,
                     f"at full load the same cards serve most as {described}: "
                     "the full-load figures (max_total_tokens_per_s and its kin) are for that plan")
    return Serving(resolved, breakdown, placements, plan.fit, shown, plan.per_machine, plan.fabric, s,
                   full_load)


@dataclass(frozen=True)
class _ServingPlan:
    placements: ServingPlacements
    fit: FitAnswer
    per_machine: int
    fabric: Fabric
    full_load: tuple[Placement, Setup] | None = None  # the copy size that serves most at full load


def _serving_plan(model: ModelSpec, resolved: Workload, breakdown: MemoryBreakdown,
                  hardware: HardwareInput, notes: Notes) -> _ServingPlan:
    """The engine's plan on the cards for the question asked: among the copy sizes that hold the
    batch, the one that serves the batch asked fastest (one stream gets every card of one copy
    that helps it; a large batch, copies that share it), and beside it the one that serves the
    most at full load, for the full-load figures. Each copy size is set up once for both."""
    card = hardware.card
    per_machine = cards_per_machine(card, hardware.cards_per_node, notes)
    placements = serving_placements(model, resolved, breakdown, card, hardware.count, per_machine, notes)
    fabric = fabric_for(card, per_machine, hardware.network_gb_per_s, notes)
    full_load = None
    if len(placements.options) > 1:
        options = [(placed, setup(model, resolved, breakdown, card, placed.parallelism, fabric, Notes()))
                   for placed in placements.options]
        placements = replace(placements, asked=_fastest(resolved, options)[0])
        full_load = _most_served(model, resolved, options)
    fit = fit_answer(placements.asked, placements.least, card, hardware.count is not None)
    _fit_warnings(fit, card, notes)
    return _ServingPlan(placements, fit, per_machine, fabric, full_load)


def _fastest(workload: Workload, options: list[tuple[Placement, Setup]]) -> tuple[Placement, Setup]:
    """Of the copy sizes that hold the batch on the cards, the one that decodes the batch asked
    fastest: the most tokens/s in total for that batch (for one stream, per stream), the
    smallest copy on a tie."""
    return max(options, key=lambda option: stream_speed(workload, option[1]) * workload.batch_size)


def _most_served(model: ModelSpec, workload: Workload,
                 options: list[tuple[Placement, Setup]]) -> tuple[Placement, Setup]:
    """Of the copy sizes that hold the batch on the cards, the one whose copies serve the most
    output at full load (the smallest on a tie): more copies of a small split, or fewer of a
    larger one with room for longer batches."""
    def served(option: tuple[Placement, Setup]) -> float:
        placed, s = option
        return serving_capacity(model, workload, s, placed, Notes())["max_total_tokens_per_s"] or 0.0

    return max(options, key=served)  # max keeps the first of equals: the smallest copy


def place_training(model: ModelSpec, resolved: Workload, hardware: HardwareInput, notes: Notes) -> Training:
    card = hardware.card
    per_machine = cards_per_machine(card, hardware.cards_per_node, notes)
    placements = training_placements(model, resolved, card, hardware.count, per_machine, notes)
    fit = fit_answer(placements.asked, placements.least, card, hardware.count is not None)
    _fit_warnings(fit, card, notes)
    shown = _shown(placements.asked, placements.least)
    place = cluster_for(card, hardware, notes)
    if shown.fits:
        answer = training_answer(model, placements.workload, card, shown.parallelism, place, notes)
        _training_warnings(answer, card, shown.parallelism, notes)
    else:  # no count holds it: no time, and no warning about a run that cannot start
        scratch = Notes()
        answer = training_answer(model, placements.workload, card, shown.parallelism, place, scratch)
        for said in scratch.assumptions:
            notes.assume(said.name, said.value, said.note)
        notes.warn(_training_fixes(model, placements.workload, card, per_machine))
        answer = replace(answer, time_s=None, time_days=None, time_s_range=None,
                         time_s_guide_curve=None, step_time_s=None, steps=None)
    return Training(placements.workload, placements.breakdown, placements, fit, shown, place, answer)


def _training_fixes(model: ModelSpec, workload: Workload, card: Card, per_machine: int) -> str:
    """What makes a training batch fit when no count of `card` holds it: the largest micro-batch
    that does, full recomputation, or both; tensor parallelism is what remains."""
    def least(variant: Workload) -> int | None:
        try:
            held = training_placements(model, variant, card, None, per_machine, Notes()).least
        except InvalidInputError:
            return None
        return None if held is None else held.cards

    fixes = []
    for recompute in dict.fromkeys((workload.recompute, "full")):
        micro = workload.batch_size
        while micro >= 1:
            cards = least(replace(workload, batch_size=micro, recompute=recompute))
            if cards is not None:
                change = [f"micro-batch {micro}" if micro != workload.batch_size else "",
                          "full recomputation" if recompute != workload.recompute else ""]
                fixes.append(f"{' with '.join(filter(None, change))} fits on {cards} x {card.id}")
                break
            micro //= 2
    tail = ("; else tensor parallelism over more cards, a shorter context or a card with more "
            "memory")
    found = "; ".join(fixes) if fixes else "no micro-batch fits, even with full recomputation"
    return (f"the training batch (micro-batch {workload.batch_size} of {workload.context_tokens:,} "
            f"tokens) does not fit on any number of {card.id}, so no time is quoted: {found}{tail}")


def _shown(asked: Placement, least: Placement | None) -> Placement:
    """Speed is shown on the cards asked for when they hold the job, else on those needed."""
    if asked.fits or least is None:
        return asked
    return least


def _plan(shown: Placement, training: TrainingAnswer | None = None) -> PlanAnswer:
    return plan_answer(shown.parallelism, shown.cards, shown.machines, shown.cards_per_machine,
                       shown.given, training)


# --- the questions ------------------------------------------------------------------------


def memory(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput | None) -> MemoryResult:
    """The memory breakdown, and its fit (under the engine's plan) when a card is given."""
    notes, resolved = opening(model, workload, cards=(hardware.card,) if hardware else ())
    if hardware is None:
        breakdown = memory_breakdown(model, resolved, notes)
        return _memory_result(model, resolved, breakdown, None, None, notes)
    # Memory answers the cards asked: the fit and the plan are for them, even where they fall short.
    if resolved.training:
        job = place_training(model, resolved, hardware, notes)
        return _memory_result(model, job.workload, job.breakdown, job.fit, _plan(job.placements.asked),
                              notes)
    breakdown = memory_breakdown(model, resolved, notes)
    plan = _serving_plan(model, resolved, breakdown, hardware, notes)
    _serving_plan_notes(model, resolved, plan.placements, plan.placements.asked, notes)
    return _memory_result(model, resolved, breakdown, plan.fit, _plan(plan.placements.asked), notes)


def _memory_result(model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown,
                   fit: FitAnswer | None, plan: PlanAnswer | None, notes: Notes) -> MemoryResult:
    return MemoryResult(
        breakdown=breakdown, model=model, mode=workload.mode, precision=workload.precision.name,
        kv_precision=workload.kv_precision.name, fit=fit, fits=None if fit is None else fit.fits,
        cards_needed=None if fit is None else fit.cards_needed, parallelism=plan, workload=workload,
        **notes.said())


def throughput(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput) -> ThroughputResult:
    """Decode roofline, tokens/s and full-load capacity on the given cards (or the least count
    that holds the job), under the engine's plan."""
    notes, resolved = opening(model, workload, cards=(hardware.card,),
                               inference_only="throughput answers decode speed for inference; "
                               "/scaling answers training time")
    job = place_serving(model, resolved, hardware, notes)
    answer = throughput_answer(model, resolved, job.breakdown, job.placement, job.setup, notes,
                               full_load=job.full_load)
    return ThroughputResult(throughput=answer, model=model, card=hardware.card,
                            precision=resolved.precision.name, fit=job.fit,
                            parallelism=_plan(job.placement), workload=resolved, **notes.said())


CURVE_CARDS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def scaling(
    model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput,
    deadline_days: float | None = None,
) -> ScalingResult:
    """Training compute and time on the cards by the plan's step and the guide's curve, the curve
    over card counts (copies of the plan's model-parallel group), and the least counts that meet
    a deadline."""
    notes, resolved = opening(model, workload, cards=(hardware.card,), training_only="scaling is for training modes",
                               default_mode="pretrain")
    if resolved.train_tokens is None:
        raise InvalidInputError("train_tokens is required for scaling", "workload.train_tokens")
    opened = copy.deepcopy(notes)
    job = place_training(model, resolved, hardware, notes)
    group = replace(job.placement.parallelism, data=1, replicas=1)
    answer = job.answer
    least = job.fit.cards_needed
    counts = {n for n in (*CURVE_CARDS, answer.cards, least or 1) if n % group.group == 0}
    curve = tuple(_curve_point(model, job.workload, hardware.card, group, n, job.cluster,
                               least is not None and n >= least)
                  for n in sorted(counts))
    by_deadline: tuple[int | None, int | None] = (None, None)
    if deadline_days is not None and job.fit.cards_needed is None:
        notes.warn(f"no number of {hardware.card.id} cards holds the job, so none meets the "
                   f"{deadline_days:g}-day deadline")
    if deadline_days is not None and job.fit.cards_needed is not None:
        deadline_s = deadline_days * SECONDS_PER_DAY
        guide_curve = guide_curve_cards(model, job.workload, hardware.card, group, job.cluster,
                                        job.fit.cards_needed, deadline_s)
        by_deadline = (_least_count_by(model, resolved, hardware, job.fit.cards_needed,
                                       job.placement.cards_per_machine, deadline_s), guide_curve)
        if by_deadline[0] is None:
            notes.warn(f"no number of {hardware.card.id} cards up to {d.MAX_CARDS} finishes in "
                       f"{deadline_days:g} days")
    plan = _plan(job.placement, answer)
    if by_deadline[0] is not None and deadline_days is not None:
        if hardware.count is None:  # the answer is the deadline's count, said as asking with it says it
            notes = opened
            notes.assume("cards", by_deadline[0], f"the least count that finishes within {deadline_days:g} "
                         f"days (memory alone needs {job.fit.cards_needed})")
            at = place_training(model, resolved, replace(hardware, count=by_deadline[0]), notes)
            answer, plan = at.answer, _plan(at.placement, at.answer)
        else:
            _missed_deadline(answer, by_deadline[0], deadline_days, notes)
    return ScalingResult(
        training=answer, model=model, card=hardware.card, mode=job.workload.mode, fit=job.fit,
        parallelism=plan, curve=curve, deadline_days=deadline_days,
        cards_needed_by_memory=job.fit.cards_needed, cards_needed_for_deadline=by_deadline[0],
        cards_needed_for_deadline_guide_curve=by_deadline[1], workload=job.workload, **notes.said())


def _missed_deadline(shown: TrainingAnswer, cards: int, deadline_days: float, notes: Notes) -> None:
    """A count the caller gave stays, with a warning when it misses the deadline."""
    if shown.time_s is not None and shown.time_s > deadline_days * SECONDS_PER_DAY:
        notes.warn(f"{shown.cards} cards take {shown.time_s / SECONDS_PER_DAY:.1f} days: "
                   f"{cards} meet the {deadline_days:g}-day deadline")


# The recipe a count gets is searched per count, so time is not monotone in the count: below
# the count the search finds, this many whole machines fewer are tried as well.
DEADLINE_LOOKBACK_MACHINES = 32


def _least_count_by(model: ModelSpec, resolved: Workload, hardware: HardwareInput, memory_cards: int,
                    per_machine: int, deadline_s: float) -> int | None:
    """The least count, in whole machines beyond one, whose own recipe (the one /scaling
    chooses on that count) finishes by the deadline: the answer a caller gets asking with that
    count. The count is galloped and bisected, then the machines below it are tried as well, as
    a count's recipe can make a smaller count faster."""
    @functools.cache
    def time_s(cards: int) -> float:
        try:
            time = place_training(model, resolved, replace(hardware, count=cards), Notes()).answer.time_s
        except InvalidInputError:
            return math.inf
        return math.inf if time is None else time

    for cards in range(memory_cards, min(per_machine, d.MAX_CARDS) + 1):  # inside one machine
        if time_s(cards) <= deadline_s:
            return cards
    start = math.ceil(max(memory_cards, per_machine) / per_machine) * per_machine
    found = least_cards_for(time_s, deadline_s, start, per_machine, d.MAX_CARDS)
    if found is None:
        return None
    lower = max(start, found - DEADLINE_LOOKBACK_MACHINES * per_machine)
    return min((n for n in range(lower, found, per_machine) if time_s(n) <= deadline_s), default=found)


def _curve_point(model, workload, card, group: Parallelism, cards: int, place, fits: bool) -> ScalingPoint:
    par = replace(group, data=cards // group.group)
    answer = training_answer(model, workload, card, par, place, Notes())
    return ScalingPoint(cards, fits, answer.scaling_efficiency, answer.time_s, answer.time_s_guide_curve)


def cost(energy: EnergyInput, hardware: HardwareInput | None = None, price: Price | None = None,
         overhead: float | None = None) -> CostResult:
    """Electricity for the machines that carry `hardware` (or the draw given in `energy`); with
    cards and a price, the cost of owning them."""
    notes = Notes()
    host = None
    card_warnings((hardware.card,) if hardware else (), notes)
    if hardware is not None and energy.power_w is None:
        count = hardware.count or 1
        host = host_sizing(hardware.card, count, cards_per_machine(hardware.card, hardware.cards_per_node, notes))
    answer = electricity(host, hardware.card if hardware else None, energy, notes)
    owned = None
    if hardware is not None and price is not None:
        owned = ownership_answer(hardware.count or 1, price.amount, price.source, answer, overhead, notes)
        _currency_check(price, answer, notes)
    elif hardware is not None:
        notes.warn("no card price given or known: cost of ownership not computed (give card_price)")
    return CostResult(energy=answer, ownership=owned, **notes.said())


def electricity(host: HostSizing | None, card: Card | None, energy: EnergyInput, notes: Notes) -> EnergyAnswer:
    """Electricity at the caller's `power_w` where given, else at the draw of the machines that
    carry the cards: one rule for every answer that prices power."""
    if energy.power_w is not None:
        return energy_answer(energy.power_w, "given", energy, notes)
    if host is None or card is None:
        raise InvalidInputError("give hardware or power_w", "power_w")
    notes.assume("power_w", host.typical_power_w, power_basis(card))
    return energy_answer(host.typical_power_w, "machine", energy, notes)


def _currency_check(price: Price, energy: EnergyAnswer, notes: Notes) -> None:
    if price.currency != energy.currency:
        notes.warn(f"the card price is in {price.currency} and electricity in {energy.currency}: "
                   "the totals add them as given; convert one first")


def estimate(
    model: ModelSpec,
    workload: WorkloadInput,
    hardware: HardwareInput,
    energy: EnergyInput,
    lang: str | None = None,
    price: Price | None = None,
    overhead: float | None = None,
    alternatives: bool = True,
    target: Target | None = None,
) -> Estimate:
    """Memory, fit and card count under the engine's plan, speed or training time, electricity,
    warnings, summary."""
    notes, resolved = opening(model, workload, cards=(hardware.card,))
    card = hardware.card
    speed = train = None
    if resolved.training:
        job = place_training(model, resolved, hardware, notes)
        train, resolved, breakdown, fit, shown = job.answer, job.workload, job.breakdown, job.fit, job.placement
        plan = _plan(shown, train)
    else:
        serve = place_serving(model, resolved, hardware, notes)
        breakdown, fit, shown = serve.breakdown, serve.fit, serve.placement
        speed = throughput_answer(model, resolved, breakdown, shown, serve.setup, notes,
                                  full_load=serve.full_load)
        plan = _plan(shown)
    host = host_sizing(card, shown.cards, machine_slots(shown.parallelism, shown.cards_per_machine))
    power = electricity(host, card, energy, notes)
    owned = _ownership(shown.cards, price, power, overhead, speed, train, notes)
    _duty_warnings(card, energy, train, notes)
    language = notes.use("lang", lang, d.LANG)
    bound = speed.bound if speed is not None else "compute"
    text = summarise(language, model, resolved, card, breakdown, fit, plan, speed, train, power,
                     host.machines)
    ranges = _ranges(model, breakdown, speed, train)
    compared = _alternatives(model, workload, resolved, hardware, serve if speed is not None else None) \
        if alternatives else ()
    capacity = None
    if target is not None:
        if resolved.training:
            raise InvalidInputError("a serving target needs an inference workload", "target")
        capacity = capacity_for(model, resolved, hardware, target, notes)
    return said_in(language, Estimate(
        model=model, card=card, mode=resolved.mode, precision=resolved.precision.name, fits=fit.fits,
        cards_needed=fit.cards_needed, bound=bound, ranges=ranges, alternatives=compared,
        memory=breakdown, fit=fit, parallelism=plan, throughput=speed, training=train,
        energy=power, host=host, ownership=owned, capacity=capacity, lang=language,
        summary=text, workload=resolved, **notes.said()))


@dataclass(frozen=True, kw_only=True)
class CapacityResult:
    model: ModelSpec
    target: Target
    prompt_tokens: int
    output_tokens: int
    engine: str
    options: tuple[CapacityAnswer, ...]
    best: str | None
    lang: str
    summary: str
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]
    workload: Workload


def capacity(model: ModelSpec, workload: WorkloadInput, cards: tuple[Card, ...], target: Target,
             cards_per_node: int | None = None, network_gb_per_s: float | None = None,
             lang: str | None = None) -> CapacityResult:
    """The cards (and machines) of each kind that serve the target, each on the engine's best
    plan; the option with the fewest cards (then the least power) is best."""
    notes, resolved = opening(model, workload, cards=cards,
                               inference_only="a serving target needs an inference workload")
    options = tuple(capacity_for(model, resolved, HardwareInput(card, None, cards_per_node, network_gb_per_s),
                                 target, notes) for card in cards)
    meeting = [o for o in options if o.meets_target]
    best = min(meeting, key=lambda o: (o.cards, o.power_w or 0.0)) if meeting else None
    if best is None:
        notes.warn("no card compared meets the target on any plan tried")
    language = notes.use("lang", lang, d.LANG)
    return said_in(language, CapacityResult(
        model=model, target=target, prompt_tokens=resolved.prompt_tokens,
        output_tokens=resolved.output_tokens or 1, engine=resolved.engine or f"{DEFAULT_ENGINE} (default)",
        options=options,
        best=None if best is None else best.card.id, lang=language,
        summary=capacity_summary(language, model, resolved, target, best), workload=resolved,
        **notes.said()))


def capacity_summary(lang: str, model: ModelSpec, workload: Workload, target: Target,
                     best: CapacityAnswer | None) -> str:
    """The capacity answer in a sentence a chatbot can quote."""
    speed = "" if target.tokens_per_s_per_user is None else target.tokens_per_s_per_user
    if lang == "zh":
        head = (f"{model.name}（{workload.precision.name}）同时服务 {target.concurrent_users} 位用户"
                + (f"、每人 {speed:g} token/s" if speed != "" else "")
                + (f"、首 token {target.ttft_s:g} 秒内" if target.ttft_s is not None else ""))
        if best is None:
            return head + "：所比较的卡都达不到。"
        plan, cards, machines = met_plan(best)
        return (head + f"：最少需要 {cards} 张 {best.card.id}（{plan.description}，"
                f"{machines} 台机器），每人约 {best.tokens_per_s_per_user:.1f} token/s。")
    head = (f"Serving {model.name} ({workload.precision.name}) to {target.concurrent_users} users at once"
            + (f" at {speed:g} tokens/s each" if speed != "" else "")
            + (f" with the first token within {target.ttft_s:g} s" if target.ttft_s is not None else ""))
    if best is None:
        return head + ": no card compared meets it."
    plan, cards, machines = met_plan(best)
    return (head + f" takes at least {cards} x {best.card.id} ({plan.description}, "
            f"{machines} machine{'s' if machines > 1 else ''}), about "
            f"{best.tokens_per_s_per_user:.1f} tokens/s per user.")


def _ownership(cards, price, electricity, overhead, speed, train, notes) -> OwnershipAnswer | None:
    if price is None:
        return None
    _currency_check(price, electricity, notes)
    return ownership_answer(cards, price.amount, price.source, electricity, overhead, notes,
                            tokens_per_s=None if speed is None else speed.total_tokens_per_s,
                            run_s=None if train is None else train.time_s)


INFERENCE_ALTERNATIVES = ("bf16", "fp8", "awq", "q4_k_m")
TRAINING_ALTERNATIVES = ((None, "selective"), (1, "selective"), (2, "selective"), (3, "selective"),
                         (None, "full"))


def _alternatives(model: ModelSpec, given: WorkloadInput, workload: Workload,
                  hardware: HardwareInput, serve: Serving | None) -> tuple[Alternative, ...]:
    """The same job in other formats (inference) or other sharding and recomputation
    (training): cards needed on this card, and decode speed or per-card model state; for
    inference also the plan that needs fewer cards, when there is one."""
    out = []
    if not workload.training:
        released = (model.released_precision,) if model.released_precision else ()
        for name in dict.fromkeys((*released, *INFERENCE_ALTERNATIVES)):
            variant = replace(given, precision=name, parallelism=None)
            out.append(_inference_alternative(model, variant, hardware, f"precision {name}"))
        if serve is not None and serve.placements.fewer is not None:
            out.append(_fewer_cards(model, workload, hardware, serve))
        return tuple(out)
    for stage, recompute in TRAINING_ALTERNATIVES:
        variant = replace(given, zero_stage=stage, recompute=recompute)
        label = (f"{'guide even split' if stage is None else f'ZeRO-{stage}'}, recompute {recompute}")
        out.append(_training_alternative(model, variant, hardware, label))
    return tuple(out)


def _inference_alternative(model, variant, hardware, label) -> Alternative:
    notes = Notes()
    try:
        resolved = resolve_workload(variant, notes, model)
        job = place_serving(model, resolved, replace(hardware, count=None), notes)
    except InvalidInputError as exc:
        return Alternative(label, None, "decode_tokens_per_s_expected", None, exc.message)
    if job.fit.cards_needed is None:
        return Alternative(label, None, "decode_tokens_per_s_expected", None, "does not fit")
    return Alternative(label, job.fit.cards_needed, "decode_tokens_per_s_expected",
                       stream_speed(resolved, job.setup),
                       f"{job.breakdown.weights_bytes / GB:.1f} GB of weights; {job.placement.parallelism.describe()}")


def _fewer_cards(model, workload: Workload, hardware: HardwareInput, serve: Serving) -> Alternative:
    """The layer split that holds the job on fewer cards than the engine's tensor plan."""
    fewer, least = serve.placements.fewer, serve.placements.least
    # _alternatives asks only when `fewer` is set, and serving_placements sets it only beside a `least`
    assert fewer is not None and least is not None
    planned = replace(workload, parallelism=fewer.parallelism)
    s = setup(model, planned, serve.breakdown, hardware.card, fewer.parallelism, serve.fabric, Notes())
    return Alternative(f"plan {fewer.parallelism.describe()}", fewer.cards, "decode_tokens_per_s_expected",
                       stream_speed(planned, s),
                       f"pipeline parallelism holds it on {fewer.cards} cards, where the engine's "
                       f"tensor parallelism needs {least.cards}; one stream gains no "
                       "bandwidth from the extra stages")


def _training_alternative(model, variant, hardware, label) -> Alternative:
    notes = Notes()
    try:
        resolved = resolve_workload(variant, notes, model)
        job = place_training(model, resolved, replace(hardware, count=None), notes)
    except InvalidInputError as exc:
        return Alternative(label, None, "need_bytes_per_card", None, exc.message)
    if job.fit.cards_needed is None:
        return Alternative(label, None, "need_bytes_per_card", None, "does not fit on any count")
    return Alternative(label, job.fit.cards_needed, "need_bytes_per_card", job.fit.need_bytes_per_card,
                       f"{compute_multiplier(resolved.recompute, resolved.adapters):g} FLOPs per parameter and token; "
                       f"{job.placement.parallelism.describe()}")


def _ranges(model: ModelSpec, breakdown: MemoryBreakdown, speed: ThroughputAnswer | None,
            train: TrainingAnswer | None) -> tuple[FigureRange, ...]:
    """The headline figures as ranges: memory from bytes per parameter, speed from the engine's
    efficiency and the fixed costs, time from MFU and scaling."""
    state = breakdown.model_state_bytes
    low = breakdown.total_bytes - state + breakdown.bytes_per_param_low * model.params
    high = breakdown.total_bytes - state + breakdown.bytes_per_param_high * model.params
    out = [FigureRange("total_bytes", low, breakdown.total_bytes, high,
                       f"{breakdown.bytes_per_param_low:g}-{breakdown.bytes_per_param_high:g} B/param "
                       f"of model state ({low / GB:.1f}-{high / GB:.1f} GB)")]
    if speed is not None:
        for name, r in (("decode_tokens_per_s_expected", speed.decode_tokens_per_s_range),
                        ("total_tokens_per_s", speed.total_tokens_per_s_range),
                        ("time_to_first_token_s", speed.time_to_first_token_s_range),
                        ("max_total_tokens_per_s", speed.max_total_tokens_per_s_range)):
            if r is not None:
                out.append(FigureRange(name, r.low, r.typical, r.high, range_note(name, speed)))
    if train is not None and train.time_s_range is not None:
        r = train.time_s_range
        out.append(FigureRange("time_s", r.low, r.typical, r.high,
                               "MFU 30-50 % and the step model against the guide's curve"))
    return tuple(out)


def opening(model: ModelSpec, workload: WorkloadInput, *, cards: tuple[Card, ...] = (),
             inference_only: str | None = None, training_only: str | None = None,
             default_mode: str | None = None) -> tuple[Notes, Workload]:
    """How every answer opens: the notes it collects and its workload resolved. An answer only
    for one kind of work refuses the other with its reason; `default_mode` stands in for a mode
    not given (said in the assumptions)."""
    notes = Notes()
    card_warnings(cards, notes)
    if default_mode is not None and workload.mode is None:
        notes.assume("mode", default_mode, "scaling answers are for training; no mode given")
        workload = replace(workload, mode=default_mode)
    resolved = resolve_workload(workload, notes, model, cards)
    if inference_only is not None and resolved.training:
        raise InvalidInputError(inference_only, "workload.mode")
    if training_only is not None and not resolved.training:
        raise InvalidInputError(training_only, "workload.mode")
    context_warning(model, resolved.context_tokens, notes)
    return notes, resolved


def _fit_warnings(fit: FitAnswer, card: Card, notes: Notes) -> None:
    if fit.cards_needed is None:
        notes.warn(f"does not fit on any number of {card.id}: {fit.reason}")
    elif not fit.fits:
        notes.warn(f"does not fit: {fit.reason}; speed and time are shown for "
                   f"{fit.cards_needed} cards")
    if fit.count > d.CLUSTER_COMPLEXITY_CARDS or (fit.cards_needed or 0) > d.CLUSTER_COMPLEXITY_CARDS:
        notes.warn("more than 32 cards: network topology and scheduling complexity rise steeply "
                   "(guide section 5.3); plan the interconnect before the cards")


def _serving_plan_notes(model: ModelSpec, workload: Workload, placements: ServingPlacements,
                        shown: Placement, notes: Notes) -> None:
    """Say which plan the engine runs and why, and what it leaves on the table."""
    engine = ENGINES[workload.engine]
    par = shown.parallelism
    name = workload.engine or "a serving engine (no engine named)"
    if shown.given:
        why = "the plan given"
    elif engine.split == "layer":
        why = (f"{name} splits the layers over every card: a token visits the cards in turn, so "
               "one stream reads no faster than on one card")
    else:
        heads = f"{model.attention_heads} heads and {model.resolved_kv_heads} KV heads" \
            if model.attention_heads else "the heads"
        why = (f"{name}: tensor parallelism inside a machine at a power-of-two degree that "
               f"divides {heads}, " + ("expert parallelism" if par.expert > 1 else "pipeline stages")
               + " across machines, copies (replicas) on the cards left over")
    notes.assume("parallelism", par.describe(), why)
    if shown.idle_cards:
        notes.warn(f"the plan ({par.describe()}) leaves {shown.idle_cards} of {shown.cards} cards "
                   "idle: give workload.parallelism to use them another way")
    if engine.split == "layer" and par.pipeline > shown.cards_per_machine:
        notes.warn(f"a layer split over {par.pipeline} cards spans {shown.machines} machines: "
                   "llama.cpp needs its RPC backend, and every hop between machines crosses the network")
    if par.tensor > shown.cards_per_machine:
        notes.warn(f"tensor parallelism over {par.tensor} cards spans machines: every layer's "
                   "all-reduces cross the network")
    fewer, least = placements.fewer, placements.least
    if fewer is not None and least is not None:
        notes.assume("cards_needed", least.cards,
                     f"the engine's tensor degree must divide the heads: {least.cards} cards; "
                     f"{fewer.cards} would hold it with pipeline parallelism "
                     f"({fewer.parallelism.describe()}), at one card's bandwidth per stream "
                     "(see alternatives)")


BUBBLE_WARNING_SHARE = 0.2  # of a step; beyond it the plan wastes a fifth of its cards' time
BATCH_GROWTH_WARNING = 1.25  # a global batch a quarter above the one asked changes the training


def _training_warnings(train: TrainingAnswer, card: Card, par: Parallelism, notes: Notes) -> None:
    if train.global_batch_tokens > BATCH_GROWTH_WARNING * train.global_batch_tokens_asked:
        notes.warn(f"the global batch grows to {train.global_batch_tokens:,} tokens, over the "
                   f"{train.global_batch_tokens_asked:,.0f} asked: {par.data * par.expert} data-parallel "
                   f"copies of a {train.micro_batch}-sequence micro-batch already take more; fewer "
                   "copies (more tensor or pipeline parallelism) or a larger batch fit it")
    if train.step_s and train.pipeline_bubble_s and train.pipeline_bubble_s > BUBBLE_WARNING_SHARE * train.step_s:
        notes.warn(f"the pipeline bubble idles the stages {train.pipeline_bubble_s / train.step_s:.0%} of "
                   f"each step ({par.pipeline} stages, {train.gradient_accumulation} micro-batches): a "
                   f"larger global batch, fewer stages, or more interleaved stages (virtual_stages, now "
                   f"{train.virtual_stages}) shrink it")
    if train.step_efficiency is not None and train.step_efficiency < 0.8 and train.cards > 1:
        parts = {"tensor-parallel all-reduces": train.tensor_comm_s or 0.0,
                 "expert all-to-alls": train.expert_comm_s or 0.0,
                 "the pipeline bubble": train.pipeline_bubble_s or 0.0,
                 "exposed data-parallel traffic": train.data_comm_exposed_s or 0.0}
        worst = max(parts, key=parts.__getitem__)
        notes.warn(f"only {train.step_efficiency:.0%} of each {train.step_s:.2f} s step is compute on "
                   f"this plan ({par.describe()}); {worst} cost the most "
                   f"({parts[worst]:.2f} s a step): a faster link, a larger global batch or "
                   "another plan")
    if train.gradient_sync_s and train.gradient_sync_s > train.step_compute_s:
        notes.warn(f"gradient sync ({train.gradient_sync_s * 1e3:.0f} ms) takes longer than a "
                   f"step's compute ({train.step_compute_s * 1e3:.0f} ms): the interconnect "
                   "binds; a faster link or fewer, larger cards")
    if not card.ecc and train.time_s is not None and train.time_s > d.LONG_RUN_S_WITHOUT_ECC:
        notes.warn("a multi-day run without ECC memory: a silent memory error can make the loss "
                   "diverge days in (guide section 3.1); checksum or use ECC cards")


CONSUMER_DUTY_WARNING = (
    "a consumer card asked to run around the clock: it is built for a few hours a day; cap power at "
    "80 % or it throttles silently by about 15 %, and expect clocks to wander 5-10 % over 72 hours "
    "(guide sections 2.3, 3.1)")


def _duty_warnings(card: Card, energy: EnergyInput, train: TrainingAnswer | None, notes: Notes) -> None:
    if card.line != "consumer":
        return
    long_run = train is not None and train.time_s is not None and train.time_s > SECONDS_PER_DAY
    asked_hours = energy.hours_per_day is not None and energy.hours_per_day > d.CONSUMER_MAX_HOURS_PER_DAY
    if long_run or asked_hours:
        notes.warn(CONSUMER_DUTY_WARNING)


