"""The caller's inputs, as given (None: not given), and their resolution against defaults."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import defaults as d
from . import messages as M
from .cards import PCIE_LINE_GB_PER_S, Card, half_precision_rate
from .engines import engine_name
from .errors import InvalidInputError
from .frozen import evolve, stores_fields
from .model import ModelSpec
from .plan import Parallelism, spanned
from .precision import HALF, Precision, as_loaded_by, get_precision
from .training import OPTIMIZERS, RECIPES, MemoryRecipe, Optimizer
from .units import GB, TERA


@stores_fields
@dataclass(frozen=True)
class Assumption:
    """A default or derived value the answer relies on, and why."""

    name: str
    """The setting or derived quantity assumed: a request field (precision, kv_precision, mode, ...) or a quantity the
    sizing rests on (decode_efficiency, link, parallelism, ...)."""
    value: float | int | str | bool
    """The value the answer used, a number, string or boolean, in the unit the name implies."""
    note: M.Message
    """Why that value: the default's source, how it was derived or measured, or that the caller gave it."""


# A note, or what makes it: a caller whose note costs a message to make (2-6 us) hands over the
# making, and a quiet Notes never calls it.
Said = M.Message | Callable[[], M.Message]


@dataclass
class Notes:
    """What one answer assumed and what it warns about, collected while it is computed; `quiet`,
    for an answer that shows neither, keeps nothing and makes no note handed over to be made."""

    assumptions: list[Assumption] = field(default_factory=list)
    warnings: list[M.Message] = field(default_factory=list)
    _named: set[str] = field(default_factory=set, repr=False)
    quiet: bool = False

    @classmethod
    def unread(cls) -> "Notes":
        """Notes no answer shows (a search's trial plans, an alternative's, a figure worked out
        again for another context): quiet, and one for all of them, since a quiet Notes keeps
        nothing (assume, warn and replay return at once)."""
        return _UNREAD

    def use(self, name: str, given, default: d.Default):
        """The given value, or the default (recorded as an assumption)."""
        if given is not None:
            return given
        assert isinstance(default.note, M.Message), default.note  # every Default is coded (defaults._coded)
        self.assume(name, default.value, default.note)
        return default.value

    def assume(self, name: str, value, note: Said) -> None:
        if not self.quiet and name not in self._named:
            self._named.add(name)
            self.assumptions.append(Assumption(name, value, note if isinstance(note, M.Message) else note()))

    def warn(self, text: Said) -> None:
        if self.quiet:
            return
        said = text if isinstance(text, M.Message) else text()
        if said not in self.warnings:
            self.warnings.append(said)

    def assume_all(self, assumptions: Iterable[Assumption]) -> None:
        """Assumptions said elsewhere, said again in order (each name once, as `assume`): the
        same objects, frozen, shared with the notes they were said in."""
        if self.quiet:
            return
        for said in assumptions:
            if said.name not in self._named:
                self._named.add(said.name)
                self.assumptions.append(said)

    def replay(self, other: "Notes") -> None:
        """Say again, in order, what `other` said (the notes kept with a result worked out once)."""
        self.assume_all(other.assumptions)
        for text in other.warnings:
            self.warn(text)

    def said(self) -> dict:
        """The answer's assumptions and warnings, as the keyword arguments of its result."""
        return {"assumptions": tuple(self.assumptions), "warnings": tuple(self.warnings)}


_UNREAD = Notes(quiet=True)


@stores_fields
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
    parallelism: Parallelism | None = None
    output_tokens: int | None = None
    global_batch_tokens: float | None = None
    virtual_stages: int | None = None
    recipe: str | None = None


@stores_fields
@dataclass(frozen=True)
class HardwareInput:
    card: Card
    count: int | None = None
    cards_per_node: int | None = None
    network_gb_per_s: float | None = None


@stores_fields
@dataclass(frozen=True)
class EnergyInput:
    power_w: float | None = None
    price_per_kwh: float | None = None
    currency: str | None = None
    pue: float | None = None
    utilization: float | None = None
    hours_per_day: float | None = None
    years: float | None = None
    machines: int | None = None


@stores_fields
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
    parallelism: Parallelism | None
    recompute: str
    lora_rank: int
    lora_targets: str
    prompt_tokens: int
    engine: str | None
    overlap: float
    output_tokens: int | None = None
    global_batch_tokens: float | None = None
    virtual_stages: int | None = None  # interleaved pipeline stages per card; None: chosen
    mfu_given: bool = False
    open_settings: frozenset[str] = frozenset()  # training settings the caller left to the search
    recipe: MemoryRecipe = RECIPES["standard"]  # where a full fine-tune keeps its state (training.py)

    @property
    def training(self) -> bool:
        return self.mode in d.TRAINING_MODES

    @property
    def adapters(self) -> bool:
        return self.mode in ("lora", "qlora")


_TRAINING_PRECISIONS = ("fp32", "bf16", "fp16", "fp8")  # fp8: Transformer Engine's recipe
# Training settings a recipe search may choose when the caller leaves them out.
SEARCHED_SETTINGS = ("batch_size", "recompute", "zero_stage", "virtual_stages", "recipe", "optimizer")


def resolve_workload(given: WorkloadInput, notes: Notes, model: ModelSpec | None = None,
                     cards: tuple[Card, ...] = ()) -> Workload:
    """Apply the defaults to a workload and check the combination makes sense. Inference on a
    model whose checkpoint ships in a known format defaults to that format."""
    mode = notes.use("mode", given.mode, d.MODE)
    if mode not in d.MODES:
        raise InvalidInputError(M.ERROR_UNKNOWN_MODE(modes=d.MODES), "workload.mode")
    default_precision = d.QLORA_PRECISION if mode == "qlora" else d.PRECISION
    if mode == "inference" and model is not None and model.released_precision is not None:
        default_precision = d.Default(model.released_precision, released_note(model))
    precision = _weights_format(notes.use("precision", given.precision, default_precision), given.engine)
    engine = engine_name(given.engine)
    if mode in ("full_finetune", "pretrain") and precision.name not in _TRAINING_PRECISIONS:
        raise InvalidInputError(M.ERROR_MODE_PRECISION(mode=mode, precision=precision.name), "workload.precision")
    kv_precision = _kv_format(given.kv_precision, precision, engine, notes,
                              all("fp8" in card.dense_flops for card in cards))
    context = notes.use("context_tokens", given.context_tokens, _context_default(given))
    training = mode in d.TRAINING_MODES
    prompt, output = _request_shape(given, context, training, notes)
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
        parallelism=_parallelism(given, training),
        prompt_tokens=prompt,
        output_tokens=output,
        engine=engine,
        global_batch_tokens=given.global_batch_tokens,
        virtual_stages=given.virtual_stages if training else None,
        mfu_given=given.mfu is not None,
        open_settings=frozenset(n for n in SEARCHED_SETTINGS if getattr(given, n) is None)
        if training else frozenset(),
    )


def in_format(given: WorkloadInput, resolved: Workload, name: str) -> Workload:
    """An inference workload resolved from `given`, in the format `name` with the engine's plan
    left to choose: what resolve_workload makes of `given` with that precision and no
    parallelism (and no cards), without resolving the rest again. Only the format and the KV
    cache's default follow from the precision in inference; everything else is the same."""
    assert not resolved.training, "in_format is for inference"
    precision = _weights_format(name, resolved.engine)
    kv = _kv_format(given.kv_precision, precision, resolved.engine, Notes.unread())
    return evolve(resolved, precision=precision, kv_precision=kv, parallelism=None)


def _weights_format(name: str, engine: str | None) -> Precision:
    """The weights' format called `name`, as the engine called `engine` loads it (an unknown
    format is said before an unknown engine)."""
    return as_loaded_by(get_precision(name, "workload.precision"), engine_name(engine))


def _kv_format(given: str | None, precision: Precision, engine: str | None, notes: Notes,
               cards_compute_fp8: bool = True) -> Precision:
    """The KV cache's format: given, or the default for the weights' format and the engine."""
    default = _kv_default(precision.name, engine, cards_compute_fp8)
    return get_precision(notes.use("kv_precision", given, default), "workload.kv_precision")


# Engines whose quantised float checkpoints carry an FP8 KV cache by default: TensorRT-LLM's
# ModelOpt FP8 and NVFP4 checkpoints quantise the KV cache to FP8 (kv_cache_quant_algo), as its
# perf-overview runs and MLPerf submissions do; vLLM and SGLang keep the model's dtype ("auto").
FP8_KV_ENGINES = ("tensorrt-llm",)
FP8_KV_WEIGHTS = ("fp8", "nvfp4", "mxfp4")


def _kv_default(precision: str, engine: str | None, cards_compute_fp8: bool = True) -> d.Default:
    """The KV cache's format when none is given: the weights' for fp32, FP8 where the engine
    quantises it with its quantised checkpoints and the cards asked compute FP8, else 16-bit."""
    if precision == "fp32":
        return d.Default("fp32", M.kept(M.KV_FP32))
    if engine in FP8_KV_ENGINES and precision in FP8_KV_WEIGHTS and cards_compute_fp8:
        return d.Default("fp8", M.kept(M.KV_FP8_ENGINE, engine=engine, precision=precision))
    return d.Default("bf16", M.KV_HALF())


_TRAINING_OFF = {
    "recipe": RECIPES["standard"], "optimizer": OPTIMIZERS["adamw"], "zero_stage": None,
    "recompute": "selective", "lora_rank": 0, "lora_targets": "all_linear", "overlap": 0.0,
}


def _training_fields(mode: str, given: WorkloadInput, notes: Notes) -> dict:
    """Optimizer, sharding, parallelism, recomputation, LoRA shape and overlap for training."""
    adapters = mode in ("lora", "qlora")
    if given.optimizer is not None and given.optimizer not in OPTIMIZERS:
        raise InvalidInputError(M.ERROR_UNKNOWN_OPTIMIZER(optimizers=tuple(OPTIMIZERS)), "workload.optimizer")
    if given.recipe is not None and given.recipe not in RECIPES:
        raise InvalidInputError(M.ERROR_UNKNOWN_RECIPE(recipes=tuple(RECIPES)), "workload.recipe")
    if adapters and given.recipe not in (None, "standard"):
        raise InvalidInputError(M.ERROR_RECIPE_ADAPTERS(recipe=given.recipe), "workload.recipe")
    if given.recipe not in (None, "standard") and given.zero_stage is not None:
        raise InvalidInputError(M.ERROR_RECIPE_ZERO(recipe=given.recipe), "workload.recipe")
    recipe = RECIPES[given.recipe or "standard"]
    recompute_default = d.RECOMPUTE_ADAPTERS if adapters else d.RECOMPUTE
    if recipe.recompute is not None:
        recompute_default = d.Default(recipe.recompute, M.kept(M.RECIPE_LOW_MEMORY))
    optimizer_default = d.Default("adam8bit", M.kept(M.RECIPE_LOW_MEMORY)) if recipe.name == "low-memory" \
        else d.OPTIMIZER
    return {
        "recipe": recipe,
        "optimizer": OPTIMIZERS[notes.use("optimizer", given.optimizer, optimizer_default)],
        "zero_stage": given.zero_stage,
        "recompute": notes.use("recompute", given.recompute, recompute_default),
        "lora_rank": notes.use("lora_rank", given.lora_rank, d.LORA_RANK) if adapters else 0,
        "lora_targets": notes.use("lora_targets", given.lora_targets, d.LORA_TARGETS)
        if adapters else "all_linear",
        "overlap": notes.use("overlap", given.overlap, d.OVERLAP),
    }


def _context_default(given: WorkloadInput) -> d.Default:
    if given.prompt_tokens is not None and given.output_tokens is not None:
        return d.Default(given.prompt_tokens + given.output_tokens, M.CONTEXT_PROMPT_PLUS_OUTPUT())
    return d.CONTEXT_TOKENS


def _request_shape(given: WorkloadInput, context: int, training: bool, notes: Notes) -> tuple[int, int | None]:
    """Prompt and output tokens of one request; together they fill the context."""
    prompt, output = given.prompt_tokens, given.output_tokens
    if training:
        if output is not None:
            raise InvalidInputError(M.ERROR_OUTPUT_TOKENS_TRAINING(), "workload.output_tokens")
        if prompt is not None and prompt > context:
            raise InvalidInputError(M.ERROR_PROMPT_EXCEEDS_CONTEXT(), "workload.prompt_tokens")
        return prompt if prompt is not None else context, None
    if (prompt or 0) + (output or 0) > context:
        field = "workload.output_tokens" if output is not None else "workload.prompt_tokens"
        raise InvalidInputError(M.ERROR_REQUEST_EXCEEDS_CONTEXT(tokens=(prompt or 0) + (output or 0), context=context),
                                field)
    only = prompt or output  # the one of the two given, when only one is
    if (prompt is None) != (output is None) and only is not None and only >= context > 1:
        field, said = (("workload.output_tokens", M.ERROR_OUTPUT_FILLS_CONTEXT) if output is not None
                       else ("workload.prompt_tokens", M.ERROR_PROMPT_FILLS_CONTEXT))
        raise InvalidInputError(said(tokens=only, context=context), field)
    if output is None:
        rest = context - (prompt or 0)
        default = d.Default(max(1, rest), M.OUTPUT_IS_REST()) if prompt is not None else \
            d.Default(max(1, min(d.OUTPUT_TOKENS, context // 2)), d.OUTPUT_TOKENS_NOTE)
        output = notes.use("output_tokens", None, default)
    if prompt is None:
        prompt = notes.use("prompt_tokens", None, d.Default(max(1, context - output), M.PROMPT_IS_REST()))
    return prompt, output


def _parallelism(given: WorkloadInput, training: bool) -> Parallelism | None:
    """The plan the caller set, from `parallelism` or the older tensor_parallel and
    pipeline_parallel (training only); None lets the engine choose."""
    legacy = given.tensor_parallel is not None or given.pipeline_parallel is not None
    if legacy and not training:
        field = "workload.tensor_parallel" if given.tensor_parallel is not None else "workload.pipeline_parallel"
        raise InvalidInputError(M.ERROR_SERVING_PLAN_FIELD(), field)
    if given.parallelism is None:
        if not legacy:
            return None
        return Parallelism(tensor=given.tensor_parallel or 1, pipeline=given.pipeline_parallel or 1)
    if legacy and (given.tensor_parallel not in (None, given.parallelism.tensor)
                   or given.pipeline_parallel not in (None, given.parallelism.pipeline)):
        raise InvalidInputError(M.ERROR_PLAN_FIELDS_DISAGREE(), "workload.parallelism")
    return spanned(given.parallelism)  # the expert degree as engines count it, in internal degrees


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
        raise InvalidInputError(M.ERROR_NO_DENSE_COMPUTE(card=card.id), "hardware.card.dense_tflops")
    key, value = rate
    if key in HALF:
        said = M.RATE_MISSING_OVERSTATES if keys[0] == "fp32" else M.RATE_MISSING
        notes.assume(f"{field}.precision", key, said(card=card.id, wanted=keys[0], key=key))
    elif key == "fp32":
        notes.assume(f"{field}.precision", "fp32", M.RATE_FP32_FLOOR(card=card.id, wanted=keys[0]))
    else:
        say_derived_half_precision(card, notes)
    return value


def say_derived_half_precision(card: Card, notes: Notes) -> None:
    """Flag a half-precision rate the card's source does not give (the guide's D-S lists only
    INT8) where it was derived, in the same words in every answer that uses it."""
    rate = half_precision_rate(card)
    if rate is None or rate[0] in HALF or rate[0] == "fp32":
        return
    key, value = rate
    notes.assume(f"{card.id}.dense_tflops_half_precision", value / TERA, M.HALF_DERIVED(card=card.id, key=key.upper()))


def interconnect_bytes_per_s(card: Card, notes: Notes) -> float | None:
    """The card's link bandwidth; for a PCIe line card with no figure, the guide's 64 GB/s."""
    if card.interconnect_bytes_per_s is not None:
        return card.interconnect_bytes_per_s
    if card.interconnect == "pcie":
        notes.assume("interconnect_gb_per_s", PCIE_LINE_GB_PER_S, M.INTERCONNECT_LINE(card=card.id))
        return PCIE_LINE_GB_PER_S * GB
    return None


def released_note(model: ModelSpec) -> M.Message:
    """The assumption's words for a model's shipped format."""
    said = M.RELEASED_EXPERTS_IN if model.released_experts_only else M.RELEASED_IN
    return M.kept(said, model=model.name, precision=model.released_precision,
                  source=M.Verbatim(model.released_precision_source))


def card_warnings(cards: tuple[Card, ...], notes: Notes) -> None:
    """Say which variant a family name ("A100") was taken as, once per card, and the line a
    custom card was taken to be."""
    for warning in dict.fromkeys(c.lookup_warning for c in cards):
        if warning is not None:
            notes.warn(warning)
    for card in cards:
        if card.line_assumed:
            notes.assume("hardware.card.line", card.line, card.line_assumed)
