"""What the questions answer: one result type per question, and the parts they share."""

from dataclasses import dataclass

from ..capacity import CapacityAnswer, Target
from ..cards import Card
from ..cost import EnergyAnswer, OwnershipAnswer
from ..host import HostSizing
from ..inputs import (
    Assumption,
    Workload,
)
from ..memory import FitAnswer, MemoryBreakdown
from ..messages import Message
from ..model import ModelSpec
from ..plan import PlanAnswer
from ..throughput import (
    ThroughputAnswer,
)
from ..training_time import TrainingAnswer


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
    warnings: tuple[Message, ...]
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
    warnings: tuple[Message, ...]
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
    warnings: tuple[Message, ...]
    workload: Workload


@dataclass(frozen=True)
class Alternative:
    """Another way to run the same job that the service compared: what changes, the cards it
    needs, and its headline figure."""

    option: str
    cards_needed: int | None
    figure: str
    value: float | None
    note: Message


@dataclass(frozen=True)
class FigureRange:
    """A headline figure as low / typical / high, and the factor ranges behind it."""

    name: str
    low: float
    typical: float
    high: float
    note: Message


@dataclass(frozen=True, kw_only=True)
class CostResult:
    """The electricity's fields stand at the top of the answer, then the cost of ownership."""

    energy: EnergyAnswer
    ownership: OwnershipAnswer | None
    assumptions: tuple[Assumption, ...]
    warnings: tuple[Message, ...]


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
    warnings: tuple[Message, ...]
    workload: Workload


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
    warnings: tuple[Message, ...]
    workload: Workload
