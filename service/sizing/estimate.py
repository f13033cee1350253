"""One call per question: memory, throughput, scaling, cost, and the whole estimate."""

from dataclasses import dataclass, replace

from . import defaults as d
from .answers import EnergyAnswer, OwnershipAnswer, energy_answer, ownership_answer
from .catalog import Card, Price
from . import ranking
from .host import HostSizing, host_sizing, power_basis
from .errors import InvalidInputError
from .inputs import (
    Assumption,
    EnergyInput,
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
    resolve_workload,
)
from .memory_answer import FitAnswer, MemoryBreakdown, fit_answer, memory_breakdown
from .model import ModelSpec
from .serving import ThroughputAnswer, throughput_answer
from .summary import summarise
from .training_time import TrainingAnswer, cluster_for, deadline_cards, training_answer
from .training import compute_multiplier
from .units import GB, SECONDS_PER_DAY


@dataclass(frozen=True)
class MemoryResult:
    model: ModelSpec
    workload: Workload
    breakdown: MemoryBreakdown
    fit: FitAnswer | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class ThroughputResult:
    model: ModelSpec
    workload: Workload
    card: Card
    fit: FitAnswer
    throughput: ThroughputAnswer
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class CurvePoint:
    cards: int
    scaling_efficiency: float
    time_s: float | None
    time_s_guide_curve: float | None


@dataclass(frozen=True)
class ScalingResult:
    model: ModelSpec
    workload: Workload
    card: Card
    fit: FitAnswer
    training: TrainingAnswer
    curve: tuple[CurvePoint, ...]
    deadline_days: float | None
    cards_needed_by_memory: int | None
    cards_needed_for_deadline: int | None
    cards_needed_for_deadline_guide_curve: int | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


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


@dataclass(frozen=True)
class CostResult:
    energy: EnergyAnswer
    ownership: OwnershipAnswer | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Estimate:
    model: ModelSpec
    workload: Workload
    card: Card
    memory: MemoryBreakdown
    fit: FitAnswer
    throughput: ThroughputAnswer | None
    training: TrainingAnswer | None
    energy: EnergyAnswer | None
    host: HostSizing
    ownership: OwnershipAnswer | None
    fits: bool
    cards_needed: int | None
    bound: str
    ranges: tuple[FigureRange, ...]
    alternatives: tuple[Alternative, ...]
    lang: str
    summary: str
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


def memory(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput | None) -> MemoryResult:
    """The memory breakdown, and its fit when a card is given."""
    notes = Notes()
    resolved = resolve_workload(workload, notes)
    breakdown = memory_breakdown(model, resolved, notes)
    fit = None
    if hardware is not None:
        fit = fit_answer(breakdown, resolved, hardware.card, hardware.count, notes)
        _fit_warnings(fit, hardware.card, notes)
    return MemoryResult(model, resolved, breakdown, fit, *_frozen(notes))


def throughput(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput) -> ThroughputResult:
    """Decode roofline and tokens/s on the given cards (or the least count that fits)."""
    notes = Notes()
    resolved = resolve_workload(workload, notes)
    if resolved.training:
        raise InvalidInputError("throughput answers decode speed for inference; /scaling answers "
                                "training time", "workload.mode")
    breakdown = memory_breakdown(model, resolved, notes)
    fit = fit_answer(breakdown, resolved, hardware.card, hardware.count, notes)
    _fit_warnings(fit, hardware.card, notes)
    answer = throughput_answer(model, resolved, breakdown, hardware.card, fit, _speed_cards(fit), notes)
    return ThroughputResult(model, resolved, hardware.card, fit, answer, *_frozen(notes))


CURVE_CARDS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def scaling(
    model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput,
    deadline_days: float | None = None,
) -> ScalingResult:
    """Training compute and time on the cards by two methods, the curve over card counts, and
    the least counts that meet a deadline."""
    notes = Notes()
    if workload.mode is None:
        workload = _with_mode(workload, "pretrain", notes)
    resolved = resolve_workload(workload, notes)
    if not resolved.training:
        raise InvalidInputError("scaling is for training modes", "workload.mode")
    if resolved.train_tokens is None:
        raise InvalidInputError("train_tokens is required for scaling", "workload.train_tokens")
    breakdown = memory_breakdown(model, resolved, notes)
    fit = fit_answer(breakdown, resolved, hardware.card, hardware.count, notes)
    _fit_warnings(fit, hardware.card, notes)
    place = cluster_for(hardware.card, hardware, notes)
    answer = training_answer(model, resolved, hardware.card, _speed_cards(fit), place, notes)
    curve = tuple(_curve_point(model, resolved, hardware.card, n, place)
                  for n in sorted({*CURVE_CARDS, answer.cards})
                  if n % resolved.parallel.model_parallel == 0)
    by_deadline = (None, None)
    if deadline_days is not None and fit.cards_needed is not None:
        by_deadline = deadline_cards(model, resolved, hardware.card, place, fit.cards_needed,
                                     deadline_days * SECONDS_PER_DAY)
        if by_deadline[0] is None:
            notes.warn(f"no number of {hardware.card.id} cards up to {d.MAX_CARDS} finishes in "
                       f"{deadline_days:g} days")
    _training_warnings(answer, hardware.card, notes)
    return ScalingResult(model, resolved, hardware.card, fit, answer, curve, deadline_days,
                         fit.cards_needed, *by_deadline, *_frozen(notes))


def _curve_point(model, workload, card, cards, place) -> CurvePoint:
    answer = training_answer(model, workload, card, cards, place, Notes())
    return CurvePoint(cards, answer.scaling_efficiency, answer.time_s, answer.time_s_guide_curve)


def cost(power_w: float, energy: EnergyInput, cards: int | None = None,
         price: Price | None = None, overhead: float | None = None) -> CostResult:
    """Electricity for a draw of `power_w` watts; with cards and a price, the cost of owning them."""
    notes = Notes()
    answer = energy_answer(power_w, energy, notes)
    owned = None
    if cards is not None and price is not None:
        owned = ownership_answer(cards, price.amount, price.source, answer, overhead, notes)
        _currency_check(price, answer, notes)
    elif cards is not None:
        notes.warn("no card price given or known: cost of ownership not computed (give card_price)")
    return CostResult(answer, owned, *_frozen(notes))


def _currency_check(price: Price, energy: EnergyAnswer, notes: Notes) -> None:
    if price.currency != energy.currency:
        notes.warn(f"the card price is in {price.currency} and electricity in {energy.currency}: "
                   "the totals add them as given; convert one first")


def hardware_power_w(hardware: HardwareInput) -> float:
    """Rated card power x count (cards only; the host is not counted)."""
    return hardware.card.power_w * (hardware.count or 1)


def estimate(
    model: ModelSpec,
    workload: WorkloadInput,
    hardware: HardwareInput,
    energy: EnergyInput,
    lang: str | None = None,
    price: Price | None = None,
    overhead: float | None = None,
    alternatives: bool = True,
) -> Estimate:
    """Memory, fit and card count, speed or training time, electricity, warnings, summary."""
    notes = Notes()
    resolved = resolve_workload(workload, notes)
    breakdown = memory_breakdown(model, resolved, notes)
    card = hardware.card
    fit = fit_answer(breakdown, resolved, card, hardware.count, notes)
    _fit_warnings(fit, card, notes)
    cards = _speed_cards(fit)
    speed = None if resolved.training else throughput_answer(model, resolved, breakdown, card, fit, cards, notes)
    train = (training_answer(model, resolved, card, cards, cluster_for(card, hardware, notes), notes)
             if resolved.training else None)
    if train is not None:
        _training_warnings(train, card, notes)
    host = host_sizing(card, cards)
    notes.assume("power_w", host.typical_power_w, power_basis(card))
    electricity = energy_answer(host.typical_power_w, energy, notes)
    owned = _ownership(cards, price, electricity, overhead, speed, train, notes)
    _duty_warnings(card, energy, train, notes)
    language = notes.use("lang", lang, d.LANG)
    bound = speed.bound if speed is not None else "compute"
    text = summarise(language, model, resolved, card, breakdown, fit, speed, train, electricity)
    ranges = _ranges(model, breakdown, fit, speed, train)
    compared = _alternatives(model, workload, resolved, hardware) if alternatives else ()
    return Estimate(model, resolved, card, breakdown, fit, speed, train, electricity, host, owned,
                    fit.fits, fit.cards_needed, bound, ranges, compared, language, text,
                    *_frozen(notes))


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
                  hardware: HardwareInput) -> tuple[Alternative, ...]:
    """The same job in other formats (inference) or other sharding and recomputation
    (training): cards needed on this card, and decode speed or per-card model state."""
    out = []
    if not workload.training:
        for name in INFERENCE_ALTERNATIVES:
            variant = replace(given, precision=name)
            out.append(_inference_alternative(model, variant, hardware, f"precision {name}"))
        return tuple(out)
    for stage, recompute in TRAINING_ALTERNATIVES:
        variant = replace(given, zero_stage=stage, recompute=recompute)
        label = (f"{'guide even split' if stage is None else f'ZeRO-{stage}'}, recompute {recompute}")
        out.append(_training_alternative(model, variant, hardware, label))
    return tuple(out)


def _inference_alternative(model, variant, hardware, label) -> Alternative:
    notes = Notes()
    resolved = resolve_workload(variant, notes)
    breakdown = memory_breakdown(model, resolved, notes)
    fit = fit_answer(breakdown, resolved, hardware.card, None, notes)
    if fit.cards_needed is None:
        return Alternative(label, None, "decode_tokens_per_s_expected", None, "does not fit")
    speed = throughput_answer(model, resolved, breakdown, hardware.card, fit, fit.cards_needed, notes,
                              curve=False)
    return Alternative(label, fit.cards_needed, "decode_tokens_per_s_expected",
                       speed.decode_tokens_per_s_expected,
                       f"{breakdown.weights_bytes / GB:.1f} GB of weights")


def _training_alternative(model, variant, hardware, label) -> Alternative:
    notes = Notes()
    resolved = resolve_workload(variant, notes)
    breakdown = memory_breakdown(model, resolved, notes)
    fit = fit_answer(breakdown, resolved, hardware.card, None, notes)
    if fit.cards_needed is None:
        return Alternative(label, None, "need_bytes_per_card", None, "does not fit on any count")
    return Alternative(label, fit.cards_needed, "need_bytes_per_card", fit.need_bytes_per_card,
                       f"{compute_multiplier(resolved.recompute):g} FLOPs per parameter and token")


def _ranges(model: ModelSpec, breakdown: MemoryBreakdown, fit: FitAnswer,
            speed: ThroughputAnswer | None, train: TrainingAnswer | None) -> tuple[FigureRange, ...]:
    """The headline figures as ranges: memory from bytes per parameter, speed from the engine's
    efficiency, time from MFU and scaling."""
    state = breakdown.model_state_bytes
    low = breakdown.total_bytes - state + breakdown.bytes_per_param_low * model.params
    high = breakdown.total_bytes - state + breakdown.bytes_per_param_high * model.params
    out = [FigureRange("total_bytes", low, breakdown.total_bytes, high,
                       f"{breakdown.bytes_per_param_low:g}-{breakdown.bytes_per_param_high:g} B/param "
                       f"of model state ({low / GB:.1f}-{high / GB:.1f} GB)")]
    if speed is not None:
        for name, r in (("decode_tokens_per_s_expected", speed.decode_tokens_per_s_range),
                        ("total_tokens_per_s", speed.total_tokens_per_s_range),
                        ("time_to_first_token_s", speed.time_to_first_token_s_range)):
            out.append(FigureRange(name, r.low, r.typical, r.high, _range_note(name, speed)))
    if train is not None and train.time_s_range is not None:
        r = train.time_s_range
        out.append(FigureRange("time_s", r.low, r.typical, r.high,
                               "MFU 30-50 % and the guide's 5-15 % loss per doubling of cards"))
    return tuple(out)


def _range_note(name: str, speed: ThroughputAnswer) -> str:
    if name == "time_to_first_token_s":
        return "prefill at 60-70 % of peak (guide: large matmuls)"
    return (f"decode at {speed.decode_tokens_per_s_range.low / speed.decode_tokens_per_s_ceiling:.0%}-"
            f"{speed.decode_tokens_per_s_range.high / speed.decode_tokens_per_s_ceiling:.0%} of the "
            f"ceiling ({speed.engine})")


def _with_mode(workload: WorkloadInput, mode: str, notes: Notes) -> WorkloadInput:
    notes.assume("mode", mode, "scaling answers are for training; no mode given")
    return replace(workload, mode=mode)


def _speed_cards(fit: FitAnswer) -> int:
    """Speed is shown on the cards asked for when they hold the model, else on those needed."""
    if fit.fits or fit.cards_needed is None:
        return fit.count
    return fit.cards_needed


def _fit_warnings(fit: FitAnswer, card: Card, notes: Notes) -> None:
    if fit.cards_needed is None:
        notes.warn(f"does not fit on any number of {card.id}: {fit.reason}")
    elif not fit.fits:
        notes.warn(f"does not fit: {fit.reason}; speed and time are shown for "
                   f"{fit.cards_needed} cards")
    if fit.count > d.CLUSTER_COMPLEXITY_CARDS or (fit.cards_needed or 0) > d.CLUSTER_COMPLEXITY_CARDS:
        notes.warn("more than 32 cards: network topology and scheduling complexity rise steeply "
                   "(guide section 5.3); plan the interconnect before the cards")


def _training_warnings(train: TrainingAnswer, card: Card, notes: Notes) -> None:
    if train.exposed_comm_s and train.comm_model_efficiency is not None and \
            train.comm_model_efficiency < 0.8:
        notes.warn(f"gradient all-reduce is not hidden by compute on these links: "
                   f"{train.exposed_comm_s * 1e3:.0f} ms of each {train.step_time_s_comm_model * 1e3:.0f} ms "
                   "step is communication; a faster interconnect or network")
    if train.gradient_sync_s and train.gradient_sync_s > train.step_compute_s:
        notes.warn(f"gradient sync ({train.gradient_sync_s * 1e3:.0f} ms) takes longer than a "
                   f"step's compute ({train.step_compute_s * 1e3:.0f} ms): the interconnect "
                   "binds; a faster link or fewer, larger cards")
    if not card.ecc and train.time_s is not None and train.time_s > d.LONG_RUN_S_WITHOUT_ECC:
        notes.warn("a multi-day run without ECC memory: a silent memory error can make the loss "
                   "diverge days in (guide section 3.1); checksum or use ECC cards")


def _duty_warnings(card: Card, energy: EnergyInput, train: TrainingAnswer | None, notes: Notes) -> None:
    if card.line != "consumer":
        return
    long_run = train is not None and train.time_s is not None and train.time_s > SECONDS_PER_DAY
    asked_hours = energy.hours_per_day is not None and energy.hours_per_day > d.CONSUMER_MAX_HOURS_PER_DAY
    if long_run or asked_hours:
        notes.warn("a consumer card asked to run around the clock: it is built for a few hours a "
                   "day; cap power at 80 % or it throttles silently by about 15 %, and expect "
                   "clocks to wander 5-10 % over 72 hours (guide sections 2.3, 3.1)")


def _frozen(notes: Notes) -> tuple[tuple[Assumption, ...], tuple[str, ...]]:
    return tuple(notes.assumptions), tuple(notes.warnings)


@dataclass(frozen=True)
class Excluded:
    card: Card
    cards_needed: int | None
    reason: str


@dataclass(frozen=True)
class RankResult:
    line: str
    weights: dict
    normalisation: str
    ranking: tuple
    excluded: tuple[Excluded, ...]
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


def rank_cards(
    cards: tuple[Card, ...], line: str, weights: dict | None, model: ModelSpec | None,
    workload: WorkloadInput, count: int | None,
) -> RankResult:
    """The guide's ranking: memory first as a threshold (when a model is given), then the
    weighted, normalised dimensions."""
    notes = Notes()
    if weights is None:
        weights = ranking.WEIGHTS[line]
        notes.assume("weights", line, f"the guide's weights for the {line} line")
    weights = ranking.check_weights(weights)
    kept, excluded = list(cards), []
    if model is not None:
        limit = notes.use("count", count, d.Default(1, "memory threshold on one card"))
        resolved = resolve_workload(workload, notes)
        breakdown = memory_breakdown(model, resolved, notes)
        kept = []
        for card in cards:
            fit = fit_answer(breakdown, resolved, card, None, Notes())
            if fit.cards_needed is not None and fit.cards_needed <= limit:
                kept.append(card)
            else:
                excluded.append(Excluded(card, fit.cards_needed, (
                    f"needs {fit.cards_needed} cards, {limit} allowed" if fit.cards_needed else
                    "holds it on no number of cards")))
    if not kept:
        notes.warn("no compared card passes the memory threshold")
    return RankResult(line, weights, ranking.NORMALISATION, ranking.rank(tuple(kept), weights),
                      tuple(excluded), *_frozen(notes))
