"""One call per question: memory, throughput, scaling, cost, and the whole estimate."""

from dataclasses import dataclass

from . import defaults as d
from .answers import (
    EnergyAnswer,
    ThroughputAnswer,
    TrainingAnswer,
    energy_answer,
    throughput_answer,
    training_answer,
)
from .catalog import Card
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
from .scaling import scaling_efficiency, training_time_s
from .summary import summarise
from .units import SECONDS_PER_DAY


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


@dataclass(frozen=True)
class ScalingResult:
    model: ModelSpec
    workload: Workload
    card: Card
    training: TrainingAnswer
    curve: tuple[CurvePoint, ...]
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class CostResult:
    energy: EnergyAnswer
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
    fits: bool
    cards_needed: int | None
    bound: str
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
    answer = throughput_answer(model, resolved, breakdown, hardware.card, _speed_cards(fit), notes)
    return ThroughputResult(model, resolved, hardware.card, fit, answer, *_frozen(notes))


CURVE_CARDS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def scaling(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput) -> ScalingResult:
    """Training compute and time on the cards, the curve over card counts, and step sync."""
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
    answer = training_answer(model, resolved, hardware.card, _speed_cards(fit), notes)
    curve = tuple(
        CurvePoint(n, scaling_efficiency(n),
                   None if answer.compute_flops is None else
                   training_time_s(answer.compute_flops, n, answer.peak_flops_per_s, resolved.mfu,
                                   scaling_efficiency(n)))
        for n in sorted({*CURVE_CARDS, answer.cards})
    )
    _training_warnings(answer, hardware.card, notes)
    return ScalingResult(model, resolved, hardware.card, answer, curve, *_frozen(notes))


def cost(power_w: float, energy: EnergyInput) -> CostResult:
    """Electricity for a draw of `power_w` watts."""
    notes = Notes()
    answer = energy_answer(power_w, energy, notes)
    return CostResult(answer, *_frozen(notes))


def hardware_power_w(hardware: HardwareInput) -> float:
    """Rated card power x count (cards only; the host is not counted)."""
    return hardware.card.power_w * (hardware.count or 1)


def estimate(
    model: ModelSpec,
    workload: WorkloadInput,
    hardware: HardwareInput,
    energy: EnergyInput,
    lang: str | None = None,
) -> Estimate:
    """Memory, fit and card count, speed or training time, electricity, warnings, summary."""
    notes = Notes()
    resolved = resolve_workload(workload, notes)
    breakdown = memory_breakdown(model, resolved, notes)
    card = hardware.card
    fit = fit_answer(breakdown, resolved, card, hardware.count, notes)
    _fit_warnings(fit, card, notes)
    cards = _speed_cards(fit)
    speed = None if resolved.training else throughput_answer(model, resolved, breakdown, card, cards, notes)
    train = training_answer(model, resolved, card, cards, notes) if resolved.training else None
    if train is not None:
        _training_warnings(train, card, notes)
    power = card.power_w * cards
    notes.assume("power_w", power, "rated card power x cards; the host is not counted")
    electricity = energy_answer(power, energy, notes)
    _duty_warnings(card, energy, train, notes)
    language = notes.use("lang", lang, d.LANG)
    bound = speed.bound if speed is not None else "compute"
    text = summarise(language, model, resolved, card, breakdown, fit, speed, train, electricity)
    return Estimate(model, resolved, card, breakdown, fit, speed, train, electricity, fit.fits,
                    fit.cards_needed, bound, language, text, *_frozen(notes))


def _with_mode(workload: WorkloadInput, mode: str, notes: Notes) -> WorkloadInput:
    notes.assume("mode", mode, "scaling answers are for training; no mode given")
    return WorkloadInput(**{**workload.__dict__, "mode": mode})


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
