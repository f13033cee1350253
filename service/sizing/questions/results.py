"""What the questions answer: one result type per question, and the parts they share."""

from dataclasses import dataclass

from ..capacity import CapacityAnswer, Target
from ..cards import Card
from ..cost import EnergyAnswer, OwnershipAnswer
from ..frozen import stores_fields
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
    """The model sized, briefly: name, parameter counts and the shape the answer used."""
    mode: str
    """Workload mode as resolved: inference (default), full_finetune, lora, qlora or pretrain."""
    precision: str
    """Weight format used: given, else the format the model ships in, else bf16 (nf4-dq for qlora)."""
    kv_precision: str
    """KV cache format used: given, else bf16 (fp32 with fp32 weights)."""
    fit: FitAnswer | None
    """Whether the job fits the cards asked under the engine's plan, and the least count that does; null when no
    hardware was given."""
    card: Card | None
    """The card asked about, briefly; null when no hardware was given."""
    summary: str = ""
    """The answer in a sentence or two to quote, in the answer's language: the memory the job needs and, with a
    card, whether the cards asked hold it."""
    parallelism: PlanAnswer | None
    """The plan on the cards asked, even where they fall short; null when no hardware was given."""
    assumptions: tuple[Assumption, ...]
    """Every default or derived value the answer relies on, with its value and the reason for it."""
    warnings: tuple[Message, ...]
    """Caveats on the answer: parts not counted (KV cache or activations without the model's shape), the job not
    fitting the cards asked, a context beyond the model's."""
    workload: Workload


@dataclass(frozen=True, kw_only=True)
class ThroughputResult:
    """The throughput's fields stand at the top of the answer, then what it was asked about."""

    throughput: ThroughputAnswer
    model: ModelSpec
    """The model the answer is for: name, parameter counts, layers, KV heads, head dimension, and where they come
    from."""
    card: Card
    """The card the answer is for, in brief: id, name, line, tier, memory in GiB, bandwidth in GB/s, power in W."""
    precision: str
    """Weight format the answer used: as given, else the format the model ships in (e.g. fp8 for DeepSeek-V3), else
    bf16."""
    fit: FitAnswer
    """Whether the job fits the cards asked (or, without a count, the least count), and the least count that does; the
    speed figures move to that count when the asked cards fall short."""
    parallelism: PlanAnswer
    """The plan the speed figures are for: the cards asked when they hold the job, else the least count that does."""
    assumptions: tuple[Assumption, ...]
    """Every default or derived value the answer relies on (engine, efficiencies, links, plan, request shape, ...),
    each with its value and why."""
    warnings: tuple[Message, ...]
    """What the caller should know: the cards asked do not hold the job (figures shown on the count needed), idle
    cards, a plan spanning machines, a context beyond the model's positions."""
    workload: Workload


@dataclass(frozen=True)
class ScalingPoint:
    """The training time on `cards` cards (compute and communication, whether or not the job
    fits them: `fits` says so)."""

    cards: int
    """Card count of this point: data-parallel copies of the plan's model-parallel group (tensor x pipeline x
    expert)."""
    fits: bool
    """Whether this count is at least the least count that holds the job in memory; the time is given either way."""
    scaling_efficiency: float
    """Scaling efficiency time_s is priced at: the given workload.scaling_efficiency, else 1.0. Not the guide's curve
    (time_s_linear / guide.time_s)."""
    time_s: float | None
    """Training time in s on this count by the answer's method (the plan's group copied, not each count's own
    recipe)."""
    time_s_guide_curve: float | None
    """Training time in s on this count by the guide's curve: linear time at mfu divided by the guide's scaling
    efficiency for the count (or the given one)."""


@dataclass(frozen=True, kw_only=True)
class ScalingResult:
    """The training answer's fields stand at the top of the answer, then the curve and counts."""

    training: TrainingAnswer
    model: ModelSpec
    """The model trained, briefly: name, parameter counts and the shape the answer used."""
    card: Card
    """The card the training is sized on, briefly: id, name, line, memory, bandwidth and power."""
    mode: str
    """Training mode as resolved: full_finetune, lora, qlora or pretrain (the default for /scaling)."""
    fit: FitAnswer
    """Memory fit on the cards asked (the least count when none was given); with a deadline and no count it stays on
    that count, not on cards."""
    parallelism: PlanAnswer
    """The plan the training figures are priced on, with its machines and how the global batch is filled."""
    curve: tuple[ScalingPoint, ...]
    """Training time against card count (1, 2, 4 ... 1024, the answer's and the least count), each as data-parallel
    copies of the plan's model-parallel group."""
    deadline_days: float | None
    """The deadline asked, in days; null when none was given."""
    cards_needed_by_memory: int | None
    """Least card count that holds the job in memory; the same as fit.cards_needed. Null when no count does."""
    cards_needed_for_deadline: int | None
    """Least count (whole machines beyond one) whose own plan finishes within deadline_days by the answer's method;
    null without a deadline, or when no count holds the job or meets it."""
    cards_needed_for_deadline_guide_curve: int | None
    """Least count whose time by the guide's curve meets deadline_days, adding copies of the plan's group, never below
    memory's need; null without a deadline or when none does."""
    assumptions: tuple[Assumption, ...]
    """Every default or derived value the answer relies on, with its value and the reason for it."""
    warnings: tuple[Message, ...]
    """Caveats on the answer: the job not fitting the cards asked, a deadline missed or unreachable, pipeline bubbles
    or communication dominating the step, long runs without ECC."""
    workload: Workload


@stores_fields
@dataclass(frozen=True)
class Alternative:
    """Another way to run the same job that the service compared: what changes, the cards it
    needs, and its headline figure."""

    option: Message
    """What changes: "precision <format>", "plan <description>" (a layer split on fewer cards), or a training recipe
    ("ZeRO-<n>" or "guide even split", with a recompute mode)."""
    cards_needed: int | None
    """Least count of this card the alternative runs on; null when no count holds it or the alternative is not
    valid."""
    figure: str
    """Name of the figure value carries: decode_tokens_per_s_expected (tokens/s per stream) for inference,
    need_bytes_per_card (bytes) for training."""
    value: float | None
    """The alternative's figure named by figure, on cards_needed cards: tokens/s per stream or bytes per card; null
    when cards_needed is null."""
    note: Message
    """What the alternative rests on: its weight bytes and plan, its FLOPs per parameter and plan, why a layer split
    needs fewer cards, or why it does not fit."""


@dataclass(frozen=True, kw_only=True)
class CostResult:
    """The electricity's fields stand at the top of the answer, then the cost of ownership."""

    energy: EnergyAnswer
    ownership: OwnershipAnswer | None
    """Cards, installation and electricity over the years as a cost range; null without hardware or without a card
    price (given or in the operator's catalog)."""
    assumptions: tuple[Assumption, ...]
    """Every default or derived value the answer relies on (price, PUE, hours, the power drawn), with its value and
    the reason for it."""
    warnings: tuple[Message, ...]
    """Caveats on the answer: no card price known, card price and electricity in different currencies, a card name
    taken as one variant."""
    summary: str = ""
    """The answer in a sentence or two to quote, in the answer's language: the draw and a year's electricity, the
    fleet's, and the cost of ownership when a card price is known."""


@stores_fields
@dataclass(frozen=True, kw_only=True)
class Estimate:
    model: ModelSpec
    """The model sized, briefly: name, parameter counts and the shape the answer used."""
    card: Card
    """The card the estimate is for, briefly: id, name, line, memory, bandwidth and power."""
    mode: str
    """Workload mode as resolved: inference (default), full_finetune, lora, qlora or pretrain."""
    precision: str
    """Weight format used: given, else the format the model ships in, else bf16 (nf4-dq for qlora)."""
    fits: bool
    """The same as fit.fits: whether the job fits the cards asked (the least count when none was given)."""
    cards_needed: int | None
    """The same as fit.cards_needed: least card count that holds the job; null when no count does."""
    bound: str
    """What limits the work by the roofline: memory (bandwidth) or compute, for a decode step at the asked batch;
    always compute for training."""
    """Headline figures as low, typical and high: total_bytes always; decode speed, total tokens/s, time to first
    token and capacity (inference) or time_s (training)."""
    alternatives: tuple[Alternative, ...]
    """The same job done another way: other weight formats and a fewer-card plan (inference), or other ZeRO stages and
    recomputation (training), with cards needed."""
    memory: MemoryBreakdown
    """Memory by component for the whole job as one copy, before it is split over cards."""
    fit: FitAnswer
    """Whether the job fits the cards asked under the engine's plan, the least count that does, and each card's
    need."""
    parallelism: PlanAnswer
    """The plan the figures are priced on: the cards asked when they hold the job, else the least count that does."""
    throughput: ThroughputAnswer | None
    """Decode roofline, tokens/s and full-load capacity on the plan; null for training modes."""
    training: TrainingAnswer | None
    """Training compute and time on the plan; null for inference."""
    energy: EnergyAnswer
    """Electricity for the machines that carry the plan's cards (or the power_w given), per day, year and over the
    years."""
    host: HostSizing
    """The machines around the cards: count, PSU, host RAM, CPU cores, power, UPS and feeds."""
    ownership: OwnershipAnswer | None
    """Cards, installation and electricity over the years as a cost range; null when no card price is given or in the
    operator's catalog."""
    capacity: CapacityAnswer | None
    """The cards and machines of this card that meet the serving target; null when no target was given."""
    lang: str
    """Language of summary, warnings and assumption notes: en or zh (from lang, else Accept-Language, else en)."""
    summary: str
    """One quotable paragraph in lang: fit and cards, speed or training time, power and machines."""
    assumptions: tuple[Assumption, ...]
    """Every default or derived value the answer relies on, with its value and the reason for it."""
    warnings: tuple[Message, ...]
    """Caveats on the answer: the job not fitting the cards asked, a cluster over 32 cards, a slow step or pipeline
    bubble, a context beyond the model's, mixed currencies, consumer cards on long duty."""
    workload: Workload


@dataclass(frozen=True, kw_only=True)
class CapacityResult:
    model: ModelSpec
    """The model sized, in brief."""
    target: Target
    """The serving target as asked."""
    prompt_tokens: int
    """Prompt tokens per request used for prefill and time to first token (default: the context less
    output_tokens)."""
    output_tokens: int
    """Tokens generated per request (default 1000, at most half the context, or the rest of it after
    prompt_tokens)."""
    engine: str
    """Serving engine class sized for; "vllm (default)" when none was given."""
    options: tuple[CapacityAnswer, ...]
    """One answer per card: those named, in order and without repeats, else every catalog card passing the filters."""
    best: str | None
    """Card id of the option that meets the target with the fewest cards, then least power; null when none meets
    it."""
    lang: str
    """Language of summary, reasons and warnings: en or zh."""
    summary: str
    """One sentence a chatbot can quote: the target and the least cards, plan, machines and tokens/s per user of the
    best card."""
    assumptions: tuple[Assumption, ...]
    """Defaults shared by every option (mode, precision, context, prompt and output tokens, ...), with values and
    why."""
    warnings: tuple[Message, ...]
    """Cautions for the whole answer, such as no card meeting the target or a context longer than the model's
    positions."""
    workload: Workload
