"""A purchase decision in one question: hardware options side by side for one model and one load
(a serving target, or a training job), over the years, bought or rented.

For each option: the cards and machines that do the work and the plan, the speed or training
time reached, the machines' power and electricity, the capital cost (the cards, plus the guide's
50-100 % installation overhead, section 5.3), the operating cost (electricity: staff, racks and
cooling sit in the overhead), the cost of ownership over the years (capital + years x operating),
the cost per million output tokens or per run; with a rental price per card-hour, the rent for
the same work, the month buying breaks even, and the share of the hours below which renting is
cheaper. Options that meet the target rank above those that miss it; the options no other
option beats on both cost and speed are marked.
"""

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

from . import defaults as d
from . import messages as M
from .capacity import Target, capacity_for
from .cards import Card
from .catalog import Price
from .cost import (
    INSTALLATION_OVERHEAD,
    MONTHS_PER_YEAR,
    EnergyAnswer,
    break_even_months,
    cost_per_million_tokens,
    cost_per_run,
    energy_answer,
    rent_cheaper_below,
    rent_per_year,
)
from .errors import InvalidInputError, SizingError
from .host import PSU_UNIT_W, HostSizing, host_sizing
from .inputs import Assumption, EnergyInput, HardwareInput, Notes, Workload, WorkloadInput
from .model import ModelSpec
from .plan import Parallelism, PlanAnswer, cards_per_machine, machine_slots, spanned
from .questions import CONSUMER_DUTY_WARNING, opening, scaling
from .throughput import Range
from .units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from .zh import said_in, sentences

RANK_BY = ("cost_of_ownership", "cost_per_token", "power", "cards")
MAX_OPTIONS = 64

# Guide section 5.3: training across cards joined only by PCIe loses 30 %+ of its efficiency.
PCIE_TRAINING_LOSS = 0.3



@dataclass(frozen=True)
class Offer:
    """One hardware option as asked, with what its card costs to buy and to rent per card-hour
    (None: no price known)."""

    hardware: HardwareInput
    price: Price | None = None
    rent: Price | None = None


@dataclass(frozen=True)
class CompareOption:
    """One option: the cards that do the work, what they reach, and what they cost."""

    label: str
    """The option's name: "N x card" with its card count (4 x h100-sxm), or the card id alone when no count was
    sized."""
    card: str
    """Catalog id of the option's card (custom for a card given by its figures)."""
    card_name: str
    """Full name of the option's card."""
    line: str
    """Product line of the option's card: consumer, workstation or datacenter."""
    meets_target: bool
    """Whether the option meets the serving target, or, for training, finishes the run (within deadline_days when
    given)."""
    reason: M.Message
    """Sentence on how the option meets the target (copies, plan, sequences, tokens/s per user) or run time, or why it
    falls short and how many cards would do."""
    cards: int | None
    """Cards the option is sized and priced on: the count given (even when it falls short), else the least count that
    does the work; null when none does."""
    cards_needed: int | None
    """Least cards that meet the target (serving) or the deadline, else hold the job (training); null when no count
    does."""
    machines: int | None
    """Machines that carry the cards; null when cards is null."""
    parallelism: PlanAnswer | None
    """The plan the cards run; null when a serving option misses the target or a training job cannot run."""
    tokens_per_s_per_user: float | None
    """Serving: decode speed each user gets, in tokens/s; null for training or when the option misses the target."""
    total_tokens_per_s: float | None
    """Serving: output tokens/s for all the target's users together (tokens_per_s_per_user x concurrent_users), not
    the cards' full capacity; null for training or a miss."""
    time_to_first_token_s: float | None
    """Serving: time to first token at the batch each copy runs, in s; null for training or when the target is
    missed."""
    time_s: float | None
    """Training: the run's wall-clock time on cards, in s; null for serving or when the job does not fit."""
    power_w: float | None
    """Typical draw of all the option's machines together in W, the cards with their hosts; null when cards is
    null."""
    power_w_per_machine: float | None
    """Typical draw of the fullest machine in W; equals power_w on one machine. Null when cards is null."""
    power_basis: str | None
    """Where power_w comes from; always machine here (cards with the host they need). Null when cards is null."""
    electricity_cost_per_year: float | None
    """Electricity for power_w over one year (hours per day, utilization and PUE applied), in the answer's currency;
    null when cards is null."""
    price: Price | None
    """Purchase price of one card used (the request's, else the operator's catalog); null when none is known."""
    cards_cost: float | None
    """cards x the card's purchase price, before installation overhead; null without a price."""
    capital_cost: Range | None
    """cards_cost plus the installation overhead (default 50-100 %, typical 75 %) as low, typical and high; null
    without a price."""
    operating_cost_per_year: float | None
    """Operating cost per year: electricity only (staff, racks and cooling sit in the overhead), so the same figure as
    electricity_cost_per_year; null when cards is null."""
    cost_of_ownership: Range | None
    """capital_cost plus years x operating_cost_per_year, as low, typical and high; null without a price."""
    cost_per_million_tokens: float | None
    """Serving: typical yearly ownership cost per million output tokens at total_tokens_per_s, hours per day and
    utilization; null for training, without a price, or on a miss."""
    cost_per_run: float | None
    """Training: the share of the typical yearly ownership cost that one run of time_s takes; null for serving,
    without a price, or when time_s is null."""
    rent: Price | None
    """Rental price of one card for one hour (the request's, else the operator's catalog); null when none is known."""
    rent_cost: float | None
    """Renting the same cards: for training, for the run's hours; for serving, at the hours per day over the years;
    null without a rental price."""
    break_even_months: float | None
    """Months after which buying (capital, then electricity) costs less than renting the same cards; null without both
    prices, or when renting never costs more."""
    rent_cheaper_below_utilization: float | None
    """Share (0-1) of the hours below which renting only those hours costs less than owning over the years; 1 when
    renting is always cheaper. Null without both prices."""
    pareto_optimal: bool | None
    """True when no other option meeting the target costs no more and is no slower (better in one); false when one
    does or the option misses; null when its cost or speed is unknown."""
    rank: int
    """Position in the comparison from 1: options that meet the target first, then by rank_by, then cost of ownership,
    power and label."""
    warnings: tuple[M.Message, ...]
    """The option's own cautions: rack or PSU power, no price, price currency differing from electricity's, consumer
    card run around the clock, no ECC, PCIe training, plan bottlenecks."""
    cards_at_low_end: int | None = None
    """Serving: least cards that meet the target if speed and first token come out at the slow ends of their ranges
    (published runs of this kind); null for training, when no count does, or when the target is missed."""


@dataclass(frozen=True, kw_only=True)
class CompareResult:
    model: ModelSpec
    """The model compared, in brief."""
    mode: str
    """The workload's mode as resolved: inference, full_finetune, lora, qlora or pretrain."""
    precision: str
    """Weight format the options were sized with, as given or defaulted (inference: the model's released format, else
    bf16)."""
    target: Target | None
    """The serving target every option is sized for, as asked; null for a training comparison."""
    train_tokens: float | None
    """Training: tokens the run trains on; null for a serving comparison."""
    deadline_days: float | None
    """Training: the days the run must finish within, as asked; null when none was given."""
    years: float
    """Horizon of the cost of ownership and serving rent, in years (default 3)."""
    currency: str
    """Currency of electricity and every cost in the answer (energy.currency, default CNY); prices in another are
    added as given, with a warning."""
    rank_by: str
    """What options are ranked by after meeting the target: cost_of_ownership (default), cost_per_token, power or
    cards."""
    options: tuple[CompareOption, ...]
    """Every option, best first (see rank)."""
    best: str | None
    """label of the first-ranked option that meets the target (4 x h100-sxm), not a card id; null when none meets
    it."""
    lang: str
    """Language of summary, reasons and warnings: en or zh."""
    summary: str
    """Two or three sentences a chatbot can quote: the question, how many options meet it, the best with its cost of
    ownership, and renting against buying."""
    assumptions: tuple[Assumption, ...]
    """Each default the comparison applied, with its value and why."""
    warnings: tuple[M.Message, ...]
    """Cautions for the whole comparison, such as no option meeting the target or a context longer than the model's
    positions."""
    workload: Workload


@dataclass(frozen=True)
class _Reached:
    """What an option's cards do: how many, on which plan, how fast, or why not."""

    meets: bool
    reason: M.Message
    cards: int | None
    cards_needed: int | None
    plan: PlanAnswer | None
    per_user: float | None = None
    total: float | None = None
    ttft: float | None = None
    time_s: float | None = None
    warnings: tuple[M.Message, ...] = ()
    low_end: int | None = None  # serving: the cards the slow ends of the ranges would need


def compare(model: ModelSpec, workload: WorkloadInput, offers: tuple[Offer, ...], energy: EnergyInput,
            target: Target | None = None, deadline_days: float | None = None, years: float | None = None,
            overhead: float | None = None, rank_by: str | None = None, lang: str | None = None) -> CompareResult:
    """Each offer sized for the target (serving) or the training job, priced over `years`, and
    ranked: those that meet the target first, then by `rank_by`."""
    cards = tuple({o.hardware.card.id: o.hardware.card for o in offers}.values())
    notes, resolved = opening(model, workload, cards=cards)
    _the_job(resolved, target, deadline_days)
    horizon = notes.use("years", years, d.YEARS)
    overheads = _overheads(overhead, notes)
    energy = replace(energy, years=horizon, machines=1)
    raw = [_option(model, workload, resolved, offer, target, deadline_days, energy, overheads, notes)
           for offer in offers]
    priced = any(o.cost_of_ownership is not None for o in raw if o.meets_target)
    order = notes.use("rank_by", rank_by, d.Default("cost_of_ownership", M.CHEAPEST_FIRST()) if priced
                      else d.Default("cards", M.FEWEST_CARDS_FIRST()))
    currency = energy.currency or d.CURRENCY.value
    ranked = _ranked(raw, order, resolved.training)
    if not any(o.meets_target for o in ranked):
        notes.warn(M.NO_OPTION_MEETS_TARGET())
    language = notes.use("lang", lang, d.LANG)
    best = next((o for o in ranked if o.meets_target), None)
    result = CompareResult(
        model=model, mode=resolved.mode, precision=resolved.precision.name, target=target,
        train_tokens=resolved.train_tokens, deadline_days=deadline_days, years=horizon,
        currency=currency, rank_by=order, options=tuple(ranked), best=None if best is None else best.label,
        lang=language, summary=compare_summary(language, model, resolved, target, deadline_days, horizon,
                                               order, ranked, currency),
        workload=resolved, **notes.said())
    return said_in(language, result)


def _the_job(workload: Workload, target: Target | None, deadline_days: float | None) -> None:
    if workload.training:
        if target is not None:
            raise InvalidInputError(M.ERROR_TARGET_NEEDS_INFERENCE(), "target")
        if workload.train_tokens is None:
            raise InvalidInputError(M.ERROR_COMPARISON_NEEDS_TRAIN_TOKENS(), "workload.train_tokens")
    else:
        if target is None:
            raise InvalidInputError(M.ERROR_COMPARISON_NEEDS_JOB(), "target")
        if deadline_days is not None:
            raise InvalidInputError(M.ERROR_DEADLINE_NEEDS_TRAINING(), "deadline_days")


def _overheads(given: float | None, notes: Notes) -> tuple[float, float, float]:
    if given is not None:
        return (given, given, given)
    notes.assume("installation_overhead", INSTALLATION_OVERHEAD[1], M.INSTALLATION_OVERHEAD())
    return INSTALLATION_OVERHEAD


def _option(model: ModelSpec, given: WorkloadInput, workload: Workload, offer: Offer, target: Target | None,
            deadline_days: float | None, energy: EnergyInput, overheads, notes: Notes) -> CompareOption:
    hardware = offer.hardware
    card = hardware.card
    try:
        if target is not None:
            reached = _serving(model, workload, hardware, target, notes)
        else:
            reached = _training(model, given, hardware, deadline_days, notes)
    except SizingError as exc:
        reached = _Reached(False, M.NOT_ANSWERED(detail=exc.message), hardware.count, None, None)
    own = Notes()
    for text in (*reached.warnings, *_duty(card, energy, workload, reached)):
        own.warn(text)
    host = power = None
    if reached.cards is not None:
        per_machine = cards_per_machine(card, hardware.cards_per_node, Notes.unread())
        slots = machine_slots(_parallelism(reached.plan), per_machine) if reached.plan else per_machine
        host = host_sizing(card, reached.cards, slots)
        power = energy_answer(host.typical_power_w, "machine", energy, notes)
        _rack(card, host, own)
    label = f"{reached.cards} x {card.id}" if reached.cards is not None else card.id
    money = _money(reached, offer, power, energy, overheads, own)
    return CompareOption(
        label=label, card=card.id, card_name=card.name, line=card.line, meets_target=reached.meets,
        reason=reached.reason, cards=reached.cards, cards_needed=reached.cards_needed,
        machines=None if host is None else host.machines, parallelism=reached.plan,
        tokens_per_s_per_user=reached.per_user, total_tokens_per_s=reached.total,
        time_to_first_token_s=reached.ttft, time_s=reached.time_s,
        power_w=None if host is None else host.typical_power_w,
        power_w_per_machine=None if host is None else host.machine_typical_power_w,
        power_basis=None if power is None else power.power_basis,
        electricity_cost_per_year=None if power is None else power.electricity_cost_per_year,
        pareto_optimal=None, rank=0, warnings=tuple(own.warnings), cards_at_low_end=reached.low_end, **money)


def _parallelism(plan: PlanAnswer) -> Parallelism:
    """The plan answered, in internal degrees (its expert degree counts the cards it spans)."""
    return spanned(Parallelism(plan.tensor, plan.pipeline, plan.expert, plan.data, plan.replicas))


def _serving(model: ModelSpec, workload: Workload, hardware: HardwareInput, target: Target,
             notes: Notes) -> _Reached:
    """The least cards that meet the target; with a count given, whether that many do and how
    fast they serve each user."""
    needed = capacity_for(model, workload, replace(hardware, count=None), target, notes)
    count = hardware.count
    if not needed.meets_target:
        return _Reached(False, needed.reason, count, None, None)
    if count is not None and count < (needed.cards or 0):
        return _Reached(False, M.TARGET_NEEDS_MORE(cards=needed.cards, card=hardware.card.id, reason=needed.reason,
                                                   given=count), count, needed.cards, None)
    at = needed if count is None else capacity_for(model, workload, hardware, target, notes, count)
    return _Reached(True, at.reason, at.cards, needed.cards, at.parallelism, at.tokens_per_s_per_user,
                    at.total_tokens_per_s, at.time_to_first_token_s, low_end=needed.cards_at_low_end)


def _training(model: ModelSpec, given: WorkloadInput, hardware: HardwareInput, deadline_days: float | None,
              notes: Notes) -> _Reached:
    """The run on the count given, or on the least count that meets the deadline (else the least
    that holds the job)."""
    answer = scaling(model, given, hardware, deadline_days)
    train = answer.training
    shared = set(notes.warnings)
    own = tuple(w for w in answer.warnings if w not in shared)
    needed = answer.cards_needed_for_deadline or answer.cards_needed_by_memory
    if train.time_s is None:
        return _Reached(False, answer.fit.reason, hardware.count, needed, None, warnings=own)
    days = train.time_s / SECONDS_PER_DAY
    meets = deadline_days is None or days <= deadline_days
    if meets:
        reason = M.RUN_FINISHES(cards=train.cards, time_s=train.time_s)
    elif answer.cards_needed_for_deadline is not None:
        reason = M.RUN_MISSES_DEADLINE(cards=train.cards, time_s=train.time_s,
                                       needed=answer.cards_needed_for_deadline, deadline_days=deadline_days)
    else:
        reason = M.DEADLINE_UNREACHABLE(card=hardware.card.id, max_cards=d.MAX_CARDS, deadline_days=deadline_days)
    return _Reached(meets, reason, train.cards, needed, answer.parallelism, time_s=train.time_s, warnings=own)


def hours_per_day(energy: EnergyInput) -> float:
    """The hours a day the machines run: given, or the default."""
    return energy.hours_per_day if energy.hours_per_day is not None else d.HOURS_PER_DAY.value


def _duty(card: Card, energy: EnergyInput, workload: Workload, reached: _Reached) -> tuple[M.Message, ...]:
    """The guide's warnings about the card's duty: consumer cards around the clock, no ECC on a
    long job, PCIe between cards for training."""
    out = []
    hours = hours_per_day(energy)
    long_run = reached.time_s is not None and reached.time_s > SECONDS_PER_DAY
    if card.line == "consumer" and (hours > d.CONSUMER_MAX_HOURS_PER_DAY or long_run):
        out.append(CONSUMER_DUTY_WARNING)
    if not card.ecc and not workload.training:  # scaling warns of a multi-day run without ECC
        out.append(M.NO_ECC_SERVING())
    if workload.training and card.interconnect == "pcie" and (reached.cards or 1) > 1:
        out.append(M.PCIE_TRAINING(loss=PCIE_TRAINING_LOSS))
    return tuple(out)


def _rack(card: Card, host: HostSizing, notes: Notes) -> None:
    """The power the racks (or the wall) must supply."""
    if host.power_feeds is not None and host.machines == 1:
        notes.warn(M.RACK_POWER_ONE(machine_w=host.machine_peak_w, ups_w=host.ups_w or 0))
    elif host.power_feeds is not None:
        notes.warn(M.RACK_POWER_MANY(machines=host.machines, machine_w=host.machine_peak_w, rack_w=host.rack_power_w,
                                     ups_w=host.ups_w or 0))
    elif host.psu_w is not None and host.psu_w > PSU_UNIT_W:
        notes.warn(M.PSU_OVER_ONE_UNIT(psu_w=host.psu_w, unit_w=PSU_UNIT_W))


def _money(reached: _Reached, offer: Offer, power: EnergyAnswer | None, energy: EnergyInput, overheads,
           notes: Notes) -> dict:
    """Capital, operating, ownership and per-unit costs where the card has a price; the rent for
    the same work where it has a rent, and the break-even where it has both."""
    out = dict.fromkeys(("cards_cost", "capital_cost", "operating_cost_per_year", "cost_of_ownership",
                         "cost_per_million_tokens", "cost_per_run", "rent_cost", "break_even_months",
                         "rent_cheaper_below_utilization"))
    out.update(price=offer.price, rent=offer.rent)
    card = offer.hardware.card
    if power is None or reached.cards is None:
        return out
    currency = power.currency
    years = power.years
    operating = power.electricity_cost_per_year
    out["operating_cost_per_year"] = operating
    for price, said in ((offer.price, M.PURCHASE_PRICE_CURRENCY), (offer.rent, M.RENTAL_PRICE_CURRENCY)):
        if price is not None and price.currency != currency:
            notes.warn(said(card=card.id, price_currency=price.currency, currency=currency))
    if offer.rent is not None:
        rent_yearly = rent_per_year(reached.cards, offer.rent.amount, power.hours_per_day)
        out["rent_cost"] = (reached.cards * offer.rent.amount * reached.time_s / SECONDS_PER_HOUR
                            if reached.time_s is not None else rent_yearly * years)
    if offer.price is None:
        notes.warn(M.NO_PRICE_FOR_CARD(card=card.id))
        return out
    cards_cost = reached.cards * offer.price.amount
    capital = Range(*(cards_cost * (1 + f) for f in overheads))
    owned = Range(*(c + years * operating for c in (capital.low, capital.typical, capital.high)))
    yearly = owned.typical / years
    out.update(cards_cost=cards_cost, capital_cost=capital, cost_of_ownership=owned)
    if reached.total is not None:
        out["cost_per_million_tokens"] = cost_per_million_tokens(yearly, reached.total, power.hours_per_day,
                                                                 power.utilization)
    if reached.time_s is not None:
        out["cost_per_run"] = cost_per_run(yearly, reached.time_s)
    if offer.rent is not None:
        out["break_even_months"] = break_even_months(capital.typical, rent_yearly, operating)
        out["rent_cheaper_below_utilization"] = rent_cheaper_below(capital.typical, rent_yearly, operating, years)
    return out


def cumulative_cost(option: CompareOption, years: float, hours_per_day: float,
                    month: float) -> tuple[float | None, float | None]:
    """Owning and renting the option's cards, summed to `month`: capital on day one plus
    operating cost each month, against rent each month (None where unpriced)."""
    own = rent = None
    if option.capital_cost is not None and option.operating_cost_per_year is not None:
        own = option.capital_cost.typical + option.operating_cost_per_year * month / MONTHS_PER_YEAR
    if option.rent is not None and option.cards is not None:
        rent = rent_per_year(option.cards, option.rent.amount, hours_per_day) * month / MONTHS_PER_YEAR
    return own, rent


def judged_cost(option: CompareOption, training: bool) -> float | None:
    """The cost an option is judged by against its speed: to own it (serving the same users), or
    one run (training)."""
    if training:
        return option.cost_per_run
    return None if option.cost_of_ownership is None else option.cost_of_ownership.typical


def _speed(option: CompareOption) -> float | None:
    if option.time_s is not None:
        return 1 / option.time_s
    return option.tokens_per_s_per_user


def _metric(option: CompareOption, rank_by: str, training: bool) -> float | None:
    if rank_by == "cost_of_ownership":
        return None if option.cost_of_ownership is None else option.cost_of_ownership.typical
    if rank_by == "cost_per_token":
        return option.cost_per_run if training else option.cost_per_million_tokens
    if rank_by == "power":
        return option.power_w
    return None if option.cards is None else float(option.cards)


def _ranked(options: list[CompareOption], rank_by: str, training: bool) -> list[CompareOption]:
    """Meeting the target first, then by `rank_by` (an unknown figure last), then the cost to own,
    power and name; each marked whether another option beats it on both cost and speed."""
    def key(o: CompareOption):
        value = _metric(o, rank_by, training)
        own = _metric(o, "cost_of_ownership", training)
        return (not o.meets_target, value is None, value or 0.0, own is None, own or 0.0,
                o.power_w or math.inf, o.label)

    ordered = sorted(options, key=key)
    return [replace(o, rank=i + 1, pareto_optimal=_unbeaten(o, ordered, training))
            for i, o in enumerate(ordered)]


def _unbeaten(option: CompareOption, options: list[CompareOption], training: bool) -> bool | None:
    """No other option that meets the target costs no more and is no slower, and better in one;
    None when the option's cost or speed is unknown."""
    if not option.meets_target:
        return False
    cost, speed = judged_cost(option, training), _speed(option)
    if cost is None or speed is None:
        return None
    for other in options:
        c, s = judged_cost(other, training), _speed(other)
        if other is option or not other.meets_target or c is None or s is None:
            continue
        if c <= cost and s >= speed and (c < cost or s > speed):
            return False
    return True


def compare_summary(lang: str, model: ModelSpec, workload: Workload, target: Target | None,
                    deadline_days: float | None, years: float, rank_by: str,
                    options: list[CompareOption], currency: str) -> str:
    """The decision in two or three sentences a chatbot can quote (coded messages said in `lang`)."""
    return sentences(lang, tuple(_summary(model, workload, target, deadline_days, years, rank_by, options,
                                          currency)))


def _summary(model, workload, target, deadline_days, years, rank_by, options, currency) -> Iterator[M.Message]:
    meeting = [o for o in options if o.meets_target]
    asked = _asked(model, workload, target, deadline_days, years)
    lengths = (M.SERVING_LENGTHS(prompt=workload.prompt_tokens, output=workload.output_tokens or 1)
               if target is not None else None)
    if not meeting:
        yield M.COMPARE_NONE(asked=asked)
        if lengths is not None:
            yield lengths
        return
    best = meeting[0]
    said = dict(asked=asked, meeting=len(meeting), options=len(options), by=M.RANK_BY_WORDS[rank_by](),
                best=best.label)
    own = best.cost_of_ownership
    yield (M.COMPARE_BEST_OWNED(**said, own=own.typical, own_low=own.low, own_high=own.high, currency=currency,
                                years=years) if own else M.COMPARE_BEST_NO_PRICE(**said))
    following = [o for o in meeting[1:] if o.cards is not None and o.electricity_cost_per_year is not None]
    if not own and following and best.cards is not None and best.electricity_cost_per_year is not None:
        other = following[0]  # what can be said without prices: the cards and the electricity
        yield M.COMPARE_AGAINST(best=best.label, cards=best.cards, electricity=best.electricity_cost_per_year,
                                currency=currency, other=other.label, other_cards=other.cards,
                                other_electricity=other.electricity_cost_per_year)
    if lengths is not None:
        yield lengths
    if best.rent_cost is not None:
        months = best.break_even_months
        yield (M.RENT_BREAKS_EVEN(rent=best.rent_cost, currency=currency, months=months) if months is not None
               else M.RENT_STAYS_CHEAPER(rent=best.rent_cost, currency=currency))


def _asked(model: ModelSpec, workload: Workload, target: Target | None, deadline_days: float | None,
           years: float) -> M.Message:
    if target is not None:
        said = dict(model=model.name, precision=workload.precision.name, users=target.concurrent_users, years=years)
        speed = target.tokens_per_s_per_user
        return M.COMPARE_SERVING(**said) if speed is None else M.COMPARE_SERVING_SPEED(**said, speed=speed)
    said = dict(model=model.name, mode=workload.mode, tokens=workload.train_tokens or 0)
    return (M.COMPARE_TRAINING(**said) if deadline_days is None
            else M.COMPARE_TRAINING_DEADLINE(**said, deadline_days=deadline_days))
