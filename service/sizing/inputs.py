"""The caller's inputs, as given (None: not given), and their resolution against defaults."""

from dataclasses import dataclass, field

from . import defaults as d
from .catalog import PCIE_LINE_GB_PER_S, Card, half_precision_rate
from .engines import engine_name
from .errors import InvalidInputError
from .precision import HALF, Precision, get_precision
from .training import OPTIMIZERS, Optimizer, Parallelism
from .units import GB, TERA


@dataclass(frozen=True)
class Assumption:
    """A default or derived value the answer relies on, and why."""

    name: str
    value: float | int | str | bool
    note: str


@dataclass
class Notes:
    """What one answer assumed and what it warns about, collected while it is computed."""

    assumptions: list[Assumption] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _named: set[str] = field(default_factory=set, repr=False)

    def use(self, name: str, given, default: d.Default):
        """The given value, or the default (recorded as an assumption)."""
        if given is not None:
            return given
        self.assume(name, default.value, default.note)
        return default.value

    def assume(self, name: str, value, note: str) -> None:
        if name not in self._named:
            self._named.add(name)
            self.assumptions.append(Assumption(name, value, note))

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


@dataclass(frozen=True)
class WorkloadInput:
    mode: str | None = None
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    batch_size: int | None = None
    train_tokens: float | None = None
    mfu: float | None = None
    decode_efficiency: float | None = None
    scaling_efficiency: float | None = None
    optimizer: str | None = None
    zero_stage: int | None = None
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    recompute: str | None = None
    lora_rank: int | None = None
    lora_targets: str | None = None
    prompt_tokens: int | None = None
    engine: str | None = None
    overlap: float | None = None


@dataclass(frozen=True)
class HardwareInput:
    card: Card
    count: int | None = None
    cards_per_node: int | None = None
    network_gb_per_s: float | None = None


@dataclass(frozen=True)
class EnergyInput:
    price_per_kwh: float | None = None
    currency: str | None = None
    pue: float | None = None
    utilization: float | None = None
    hours_per_day: float | None = None
    years: float | None = None
    machines: int | None = None


@dataclass(frozen=True)
class Workload:
    """A workload with every default applied."""

    mode: str
    precision: Precision
    kv_precision: Precision
    context_tokens: int
    batch_size: int
    train_tokens: float | None
    mfu: float
    decode_efficiency: float | None
    scaling_efficiency: float | None
    optimizer: Optimizer
    zero_stage: int | None
    parallel: Parallelism
    recompute: str
    lora_rank: int
    lora_targets: str
    prompt_tokens: int
    engine: str | None
    overlap: float

    @property
    def training(self) -> bool:
        return self.mode in d.TRAINING_MODES

    @property
    def adapters(self) -> bool:
        return self.mode in ("lora", "qlora")


_TRAINING_PRECISIONS = ("fp32", "bf16", "fp16")


def resolve_workload(given: WorkloadInput, notes: Notes) -> Workload:
    """Apply the defaults to a workload and check the combination makes sense."""
    mode = notes.use("mode", given.mode, d.MODE)
    if mode not in d.MODES:
        raise InvalidInputError(f"mode must be one of {', '.join(d.MODES)}", "workload.mode")
    default_precision = d.QLORA_PRECISION if mode == "qlora" else d.PRECISION
    precision = get_precision(notes.use("precision", given.precision, default_precision),
                              "workload.precision")
    if mode in ("full_finetune", "pretrain") and precision.name not in _TRAINING_PRECISIONS:
        raise InvalidInputError(
            f"{mode} trains in fp32, bf16 or fp16; {precision.name} weights are for inference,"
            " LoRA or QLoRA",
            "workload.precision",
        )
    kv_default = d.Default(
        "fp32" if precision.name == "fp32" else "bf16",
        "KV cache in half precision" if precision.name != "fp32" else "KV cache in fp32 like the weights",
    )
    kv_precision = get_precision(
        notes.use("kv_precision", given.kv_precision, kv_default), "workload.kv_precision"
    )
    context = notes.use("context_tokens", given.context_tokens, d.CONTEXT_TOKENS)
    training = mode in d.TRAINING_MODES
    return Workload(
        mode=mode,
        precision=precision,
        kv_precision=kv_precision,
        context_tokens=context,
        batch_size=notes.use("batch_size", given.batch_size, d.BATCH_SIZE),
        train_tokens=given.train_tokens,
        mfu=notes.use("mfu", given.mfu, d.MFU) if training else d.MFU.value,
        decode_efficiency=given.decode_efficiency,
        scaling_efficiency=given.scaling_efficiency,
        **(_training_fields(mode, given, notes) if training else _TRAINING_OFF),
        prompt_tokens=_prompt_tokens(given, context, training, notes),
        engine=engine_name(given.engine),
    )


_TRAINING_OFF = {
    "optimizer": OPTIMIZERS["adamw"], "zero_stage": None, "parallel": Parallelism(),
    "recompute": "selective", "lora_rank": 0, "lora_targets": "all_linear", "overlap": 0.0,
}


def _training_fields(mode: str, given: WorkloadInput, notes: Notes) -> dict:
    """Optimizer, sharding, parallelism, recomputation, LoRA shape and overlap for training."""
    adapters = mode in ("lora", "qlora")
    if given.optimizer is not None and given.optimizer not in OPTIMIZERS:
        raise InvalidInputError(f"optimizer must be one of {', '.join(OPTIMIZERS)}", "workload.optimizer")
    recompute_default = d.RECOMPUTE_ADAPTERS if adapters else d.RECOMPUTE
    return {
        "optimizer": OPTIMIZERS[notes.use("optimizer", given.optimizer, d.OPTIMIZER)],
        "zero_stage": given.zero_stage,
        "parallel": Parallelism(given.tensor_parallel or 1, given.pipeline_parallel or 1),
        "recompute": notes.use("recompute", given.recompute, recompute_default),
        "lora_rank": notes.use("lora_rank", given.lora_rank, d.LORA_RANK) if adapters else 0,
        "lora_targets": notes.use("lora_targets", given.lora_targets, d.LORA_TARGETS)
        if adapters else "all_linear",
        "overlap": notes.use("overlap", given.overlap, d.OVERLAP),
    }


def _prompt_tokens(given: WorkloadInput, context: int, training: bool, notes: Notes) -> int:
    if given.prompt_tokens is not None:
        if given.prompt_tokens > context:
            raise InvalidInputError("prompt_tokens cannot exceed context_tokens", "workload.prompt_tokens")
        return given.prompt_tokens
    if training:
        return context
    return notes.use("prompt_tokens", None, d.Default(
        context, "the whole context is prompt: time to first token at its worst"))


def compute_flops(card: Card, keys: tuple[str, ...], notes: Notes, field: str) -> float:
    """The card's dense FLOP/s for the first of `keys` it lists, else a stated derivation.

    Half precision missing but INT8 (or FP8) given: dense INT8/FP8 runs at twice dense half
    precision on current tensor units, so half of it is used, and said.
    """
    for key in keys:
        if key in card.dense_flops:
            return card.dense_flops[key]
    rate = half_precision_rate(card)
    if rate is None:
        raise InvalidInputError(f"{card.id} lists no dense compute figure", "hardware.card.dense_tflops")
    key, value = rate
    if key in HALF:
        caveat = ", which overstates fp32 compute" if keys[0] == "fp32" else ""
        notes.assume(f"{field}.precision", key,
                     f"{card.id} lists no {keys[0]} rate; its {key} rate is used{caveat}")
    elif key == "fp32":
        notes.assume(f"{field}.precision", "fp32",
                     f"{card.id} lists no {keys[0]} or half-precision rate; its FP32 rate is used "
                     "as a floor")
    else:
        notes.assume(f"{field}.dense_tflops_half_precision", value / TERA,
                     f"{card.id}: no half-precision figure is given; derived as dense "
                     f"{key.upper()} / 2")
    return value


def interconnect_bytes_per_s(card: Card, notes: Notes) -> float | None:
    """The card's link bandwidth; for a PCIe line card with no figure, the guide's 64 GB/s."""
    if card.interconnect_bytes_per_s is not None:
        return card.interconnect_bytes_per_s
    if card.interconnect == "pcie":
        notes.assume("interconnect_gb_per_s", PCIE_LINE_GB_PER_S,
                     f"{card.id} gives no interconnect figure; the guide's PCIe figure for its"
                     " line is used")
        return PCIE_LINE_GB_PER_S * GB
    return None
