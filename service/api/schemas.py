"""Request and response schemas, each named after its component in openapi.yaml.

Requests are strict: unknown fields and wrong types (a number sent as "3.5", a bool as a
number) are rejected, and every number has a physical range. Responses dump the domain's
answers; floats are rounded to 12 significant digits so that 61320 does not read 61319.99999.
"""

import dataclasses
import functools
import math
from dataclasses import replace

from marshmallow import Schema, ValidationError, fields, missing, post_load, pre_dump, validate, validates_schema

from ..sizing import (
    ACCUMULATE,
    DIMENSIONS,
    ENGINE_NAMES,
    GB,
    GIB,
    GIVEN_BY_CALLER,
    INTERCONNECT_KINDS,
    LADDER,
    LINES,
    LIST_SEPARATOR,
    OPTIMIZERS,
    RANK_BY,
    RECIPES,
    RECOMPUTE_MODES,
    SCENARIOS,
    TEMPLATES,
    TERA,
    Alternative,
    Assumption,
    Candidate,
    CapacityAnswer,
    CapacityResult,
    Card,
    CompareOption,
    CompareResult,
    Component,
    Constraints,
    CostResult,
    DecodePoint,
    DimensionScore,
    EnergyAnswer,
    EnergyInput,
    Estimate,
    Excluded,
    FitAnswer,
    HardwareInput,
    HostSizing,
    MemoryBreakdown,
    MemoryResult,
    ModelSpec,
    OwnershipAnswer,
    Parallelism,
    PlanAnswer,
    Price,
    Range,
    RankedCard,
    RankResult,
    ScalingPoint,
    ScalingResult,
    SizingError,
    StepCost,
    Target,
    ThroughputAnswer,
    ThroughputResult,
    TrainingAnswer,
    WorkloadInput,
    billions_to_count,
    custom_card,
    defaults,
    model_from_hf_config,
)
from . import problem_messages as P
from .catalogs import current_catalogs
from .load import loads_with
from .shapes import Num, Said, Scaled, answer_schema, register

MAX_COMPARED = 64  # options in one comparison (a list, or the cards filters match)
COMPUTE_PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4")


class StrictFloat(fields.Float):
    """A JSON number (int or float), finite; never a string or a bool."""

    default_error_messages = {"invalid": "Not a valid number.", "special": "Not a finite number."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid")
        try:
            number = float(value)
        except OverflowError:
            raise self.make_error("special") from None
        if not math.isfinite(number):
            raise self.make_error("special")
        return number


class StrictInteger(fields.Integer):
    """A JSON integer; never a string, a bool or a float."""

    def __init__(self, **kwargs):
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBoolean(fields.Boolean):
    """A JSON true or false; never 0, 1 or "yes"."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


def doc(text: str, tool: str | bool | None = None) -> dict:
    """A field's metadata: its description in openapi.yaml, and `tool` where the field is one of
    the few an object shows in the tools' compact schemas (service/tools.py): the short text
    they show (True: none beyond the type)."""
    return {"description": text} | ({} if tool is None else {"x-tool": tool})


def _said_default(text: str, default: defaults.Default) -> dict:
    """A query parameter's metadata: its description, and the default the service applies when
    it is omitted (the domain's, so that the contract cannot say another)."""
    return {"description": text, "default": default.value}


TROUBLESHOOT_LIMIT = 3  # rows /troubleshoot returns when no limit is given


def _fail(message: str):
    raise ValidationError(message)


def _range(low=None, high=None, low_inclusive=True):
    return validate.Range(min=low, max=high, min_inclusive=low_inclusive)


def _lang(metadata: dict | None = None, **kwargs):
    """The answer's language: en or zh, which the tools' compact schemas say by the values alone."""
    return fields.String(validate=validate.OneOf(defaults.LANGS), metadata={**(metadata or {}), "x-tool": True},
                         **kwargs)


def _summary_lang():
    """A GET's `lang`: the language of its summary (Accept-Language when omitted)."""
    return _lang(metadata=doc("Omitted: from Accept-Language, else en. The summary's language, en or zh."))


def _currency(**kwargs):
    return fields.String(validate=validate.Length(min=1, max=10), **kwargs)


def _positive(high):
    return validate.Range(min=0, max=high, min_inclusive=False)


_NAME = validate.Length(min=1, max=200)


class _Strict(Schema):
    """A request's schema: unknown fields refused, and every message it can give coded (said in
    the caller's language, problem_messages.py)."""

    error_messages = P.schema_messages(Schema._default_error_messages)

    class Meta:
        unknown = "raise"

    def on_bind_field(self, field_name, field_obj):
        P.coded_field(field_obj)


class _Optional(_Strict):
    """A request part whose every field is optional, with no default (a field not given is None
    to the domain): a field absent is skipped rather than loaded as absent (marshmallow's partial
    load, which for such a part loads the same values; the workload's 22 fields cost an estimate
    about 40 us, most of its parse, when each absent one was loaded). Checked when made: no field
    of the part, nor of a part nested in it, is required or has a default."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("partial", True)
        super().__init__(*args, **kwargs)
        _all_optional(self)


def _all_optional(schema: Schema) -> None:
    for name, field_obj in schema.load_fields.items():
        assert not field_obj.required and field_obj.load_default is missing, \
            f"{type(schema).__name__}.{name} is required or has a default: a partial load would skip it"
        for inner in _parts_inside(field_obj):
            _all_optional(inner)


def _parts_inside(field_obj: fields.Field) -> list[Schema]:
    """The schemas a partial load reaches through a field: nested, in a list, as a dict's values."""
    if isinstance(field_obj, fields.Nested):
        return [field_obj.schema]
    if isinstance(field_obj, fields.List):
        return _parts_inside(field_obj.inner)
    if isinstance(field_obj, fields.Dict) and field_obj.value_field is not None:
        return _parts_inside(field_obj.value_field)
    return []


# --- requests -----------------------------------------------------------------------------


class ModelSpecSchema(_Strict):
    """A model given by its size and, optionally, its architecture (needed for the KV cache and
    activations)."""

    params_billion = StrictFloat(required=True, validate=_positive(1e5), metadata=doc(
        "Every stored parameter, in billions (all experts of an MoE)."))
    active_params_billion = StrictFloat(validate=_positive(1e5), metadata=doc(
        "Parameters one token passes through, in billions (MoE only).", tool="MoE only"))
    layers = StrictInteger(validate=_range(1, 10_000), metadata=doc(
        "Transformer layers."))
    hidden_size = StrictInteger(validate=_range(1, 1_000_000), metadata=doc(
        "Model width."))
    attention_heads = StrictInteger(validate=_range(1, 100_000), metadata=doc(
        "Query heads."))
    kv_heads = StrictInteger(validate=_range(1, 100_000), metadata=doc(
        "Key/value heads (grouped-query attention); defaults to attention_heads."))
    head_dim = StrictInteger(validate=_range(1, 100_000), metadata=doc(
        "Dimension of one head; defaults to hidden_size / attention_heads."))
    vocab_size = StrictInteger(validate=_range(1, 10_000_000))
    max_context_tokens = StrictInteger(validate=_range(1, 1_000_000_000), metadata=doc(
        "The most positions the model was trained for (its max_position_embeddings); a longer "
        "context is answered with a warning."))
    name = fields.String(validate=_NAME)

    @post_load
    def to_domain(self, data, **kwargs) -> ModelSpec:
        active = data.get("active_params_billion")
        return ModelSpec(
            params=billions_to_count(data["params_billion"]),
            active_params=None if active is None else billions_to_count(active),
            layers=data.get("layers"),
            hidden_size=data.get("hidden_size"),
            attention_heads=data.get("attention_heads"),
            kv_heads=data.get("kv_heads"),
            head_dim=data.get("head_dim"),
            vocab_size=data.get("vocab_size"),
            name=data.get("name", "custom model"),
            embedding_params=(data["vocab_size"] * data["hidden_size"]
                              if "vocab_size" in data and "hidden_size" in data else None),
            max_context_tokens=data.get("max_context_tokens"),
            context_source=GIVEN_BY_CALLER() if "max_context_tokens" in data else "",
        )


class CardSpecSchema(_Strict):
    """A card given by its figures instead of a catalog id. Dense figures only."""

    memory_gib = StrictFloat(required=True, validate=_positive(100_000), metadata=doc(
        "Card memory in GiB (an \"80 GB\" card holds 80 GiB)."))
    bandwidth_gb_per_s = StrictFloat(required=True, validate=_range(0.001, 1_000_000), metadata=doc(
        "Memory bandwidth in GB/s (1e9 bytes/s)."))
    dense_tflops = fields.Dict(
        keys=fields.String(validate=validate.OneOf(COMPUTE_PRECISIONS)),
        values=StrictFloat(validate=_range(0.001, 1_000_000)),
        required=True,
        validate=lambda rates: len(rates) >= 1 or _fail(P.DENSE_RATE_NEEDED()),
        metadata={**doc("Dense TFLOP/s (TOPS for integers) per precision; halve a figure quoted "
                        "with sparsity.", tool="dense TFLOP/s by format, e.g. {\"bf16\": 989}"),
                  "minProperties": 1})
    power_w = StrictFloat(required=True, validate=_positive(1_000_000), metadata=doc(
        "Rated board power in W."))
    interconnect_gb_per_s = StrictFloat(validate=_range(0.001, 1_000_000), metadata=doc(
        "Card-to-card bandwidth per card in GB/s."))
    interconnect = fields.String(validate=validate.OneOf(INTERCONNECT_KINDS), metadata=doc(
        "pcie or dedicated (NVLink-class); defaults by line."))
    line = fields.String(validate=validate.OneOf(LINES), metadata=doc(
        "Product line: consumer, workstation or datacenter; default: inferred from the figures "
        "(a dedicated link or over 96 GB: datacenter; ECC or over 32 GB: workstation; else "
        "consumer), said in assumptions."))
    ecc = StrictBoolean()
    name = fields.String(validate=_NAME)

    @post_load
    def to_domain(self, data, **kwargs) -> Card:
        return custom_card(**data)


class HfConfigModelSchema(_Strict):
    """A model given by its Hugging Face config.json; the parameter count is computed from it
    exactly."""

    hf_config = fields.Dict(keys=fields.String(), required=True, metadata=doc(
        "The config.json object (model_type llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3 "
        "(text), phi3, mixtral, qwen2_moe, qwen3_moe, deepseek_v3, gpt_oss)."))
    name = fields.String(validate=_NAME)

    @post_load
    def to_domain(self, data, **kwargs) -> ModelSpec:
        return model_from_hf_config(data["hf_config"], data.get("name", "model from config.json"))


@functools.cache
def _instance(schema: type[Schema]) -> Schema:
    """One instance per object schema, as fields.Nested keeps one: building a schema costs more
    than the load it does."""
    return schema()


class _OneOf(fields.Field):
    """A catalog name (string) or an object; `object_schemas` are tried by their marker key.

    In openapi.yaml: oneOf [string, $ref to each object's component].
    """

    object_schemas: tuple[tuple[str | None, type[Schema]], ...]
    tool_text: str  # what the tools' compact schemas say of it (service/tools.py)
    default_error_messages = {"invalid": P.Coded(P.NAME_OR_OBJECT)}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            if not 1 <= len(value) <= 200:
                raise ValidationError(P.NAME_LENGTH())
            return self.lookup(value)
        if isinstance(value, dict):
            for marker, schema in self.object_schemas:
                if marker is None or marker in value:
                    return loads_with(schema)(value)
        raise self.make_error("invalid")


class ModelField(_OneOf):
    tool_text = "A model id (listModels), or {params_billion, active_params_billion, ...}, or {hf_config: config.json}."
    object_schemas = (("hf_config", HfConfigModelSchema), (None, ModelSpecSchema))

    def lookup(self, name: str) -> ModelSpec:
        return current_catalogs().models.get(name, "model").spec


class CardField(_OneOf):
    tool_text = "A card id (listCards), or {memory_gib, bandwidth_gb_per_s, dense_tflops, power_w, ...}."
    object_schemas = ((None, CardSpecSchema),)

    def lookup(self, name: str) -> Card:
        return current_catalogs().cards.get(name, "hardware.card")


class ParallelismSpecSchema(_Optional):
    """How the work is split over the cards: tensor, pipeline, data and replicas multiply to the
    card count; expert spans the cards that hold the model."""

    tensor = StrictInteger(validate=_range(1, 1024), metadata=doc(
        "Cards each layer's matrices are split over (all-reduces every layer); a power of two "
        "dividing the heads for serving engines."))
    pipeline = StrictInteger(validate=_range(1, 10_000), metadata=doc(
        "Stages the layers are split into (a layer split visits them in turn)."))
    expert = StrictInteger(validate=_range(1, 100_000), metadata=doc(
        "MoE only: the cards the routed experts are spread over, as vLLM, SGLang and TensorRT-LLM "
        "count it: a multiple of tensor, the tensor groups beside each other keeping attention "
        "data-parallel (tensor 8 with expert 8 runs on 8 cards; tensor 2 with expert 8 on 8, as 4 "
        "attention groups)."))
    data = StrictInteger(validate=_range(1, defaults.MAX_CARDS), metadata=doc(
        "Training only: data-parallel copies."))
    replicas = StrictInteger(validate=_range(1, defaults.MAX_CARDS), metadata=doc(
        "Serving only: independent copies serving their own requests."))

    @validates_schema
    def not_too_many(self, data, **kwargs):
        cards = math.prod(data.values())
        if cards > defaults.MAX_CARDS:
            raise ValidationError(P.DEGREES_TOO_MANY(cards=cards, limit=defaults.MAX_CARDS), "tensor")

    @post_load
    def to_domain(self, data, **kwargs) -> Parallelism:
        return Parallelism(**data)


class TargetSpecSchema(_Strict):
    """What a serving deployment must sustain."""

    concurrent_users = StrictInteger(required=True, validate=_range(1, 10_000_000), metadata=doc(
        "Users (sequences) served at once."))
    tokens_per_s_per_user = StrictFloat(validate=_positive(100_000), metadata=doc(
        "Decode speed each user must get, in tokens/s; omitted: no limit."))
    ttft_s = StrictFloat(validate=_positive(86_400), metadata=doc(
        "Time to first token each user must get at that load, in s; omitted: no limit."))

    @post_load
    def to_domain(self, data, **kwargs) -> Target:
        return Target(**data)


class WorkloadSpecSchema(_Optional):
    """What the model is asked to do. Every field omitted is defaulted and reported in
    assumptions."""

    mode = fields.String(validate=validate.OneOf(defaults.MODES), metadata=doc(
        "inference (default), full_finetune, lora, qlora or pretrain.", tool=True))
    precision = fields.String(validate=validate.Length(min=1, max=40), metadata=doc(
        "Weight format: fp32, bf16, fp16, fp8, int8, int4; GGUF q8_0, q6_k, q5_k_m, q4_k_m, "
        "q4_0, q3_k_m, q2_k; gptq and awq (gptq-int4-g128); bnb-int8, nf4, nf4-dq (qlora "
        "default); mxfp4, nvfp4. Default for inference: the format the model ships in (gpt-oss "
        "mxfp4, DeepSeek-V3 fp8), else bf16.",
        tool="bf16, fp8, int4, q4_k_m, awq, nf4, mxfp4...; default: as released"))
    kv_precision = fields.String(validate=validate.Length(min=1, max=40), metadata=doc(
        "KV cache format (the same names, e.g. fp8, q8_0); defaults to bf16 (fp32 with fp32 "
        "weights)."))
    context_tokens = StrictInteger(validate=_range(1, 10_000_000), metadata=doc(
        "Tokens per sequence, prompt plus output (training: sequence length); default 4096.", tool=True))
    batch_size = StrictInteger(validate=_range(1, 1_000_000), metadata=doc(
        "Concurrent sequences (training: micro-batch per card); default 1.", tool=True))
    train_tokens = StrictFloat(validate=_range(1, 1e16), metadata=doc(
        "Tokens to train on, for training time."))
    mfu = StrictFloat(validate=_range(0.01, 1), metadata=doc(
        "Training utilisation of dense peak; default 0.4 (range 0.3-0.5 reported)."))
    decode_efficiency = StrictFloat(validate=_range(0.01, 1), metadata=doc(
        "Share of the decode ceiling reached, exactly (no fixed costs added); default from the "
        "engine, with the plan's links priced on top."))
    scaling_efficiency = StrictFloat(validate=_range(0.01, 1), metadata=doc(
        "Overrides the guide's scaling curve (85 % at 8 cards, 80 % at 16, 75 % at 32)."))
    optimizer = fields.String(validate=validate.OneOf(tuple(OPTIMIZERS)), metadata=doc(
        "adamw (default, 8 B/param of state), adam8bit (2 B) or sgd (momentum, 4 B)."))
    zero_stage = StrictInteger(validate=_range(0, 3), metadata=doc(
        "DeepSpeed ZeRO stage 0-3 (3 = FSDP full shard); omitted, model state splits evenly over "
        "the cards as the guide does."))
    tensor_parallel = StrictInteger(validate=_range(1, 1024), metadata=doc(
        "Training only: the tensor-parallel degree (the same as parallelism.tensor)."))
    pipeline_parallel = StrictInteger(validate=_range(1, 1024), metadata=doc(
        "Training only: the pipeline-parallel degree (the same as parallelism.pipeline)."))
    recompute = fields.String(validate=validate.OneOf(RECOMPUTE_MODES), metadata=doc(
        "Activation recomputation: none (eager attention stores scores), selective (default; "
        "FlashAttention) or full (gradient checkpointing; LoRA/QLoRA default)."))
    recipe = fields.String(validate=validate.OneOf(tuple(RECIPES)), metadata=doc(
        "Full fine-tunes and pre-training: where the training state lives. standard (mixed precision, "
        "fp32 master weights and optimizer states on the cards), low-memory (bf16 weights without fp32 "
        "masters, the optimizer step in the backward pass, paged 8-bit AdamW states in host memory, "
        "activation checkpointing: torchtune's single-card full fine-tune) or cpu-offload (fp32 masters and "
        "optimizer states in host memory, the step on the CPU: ZeRO-Offload). Omitted, a full fine-tune "
        "that does not fit the cards asked with the standard recipe takes the fastest of the others that "
        "fits (said in assumptions)."))
    lora_rank = StrictInteger(validate=_range(1, 4096), metadata=doc(
        "LoRA rank; default 16."))
    lora_targets = fields.String(validate=validate.OneOf(("attention", "all_linear")), metadata=doc(
        "attention (q, k, v, o) or all_linear (default)."))
    prompt_tokens = StrictInteger(validate=_range(1, 10_000_000), metadata=doc(
        "Prompt length for prefill, time to first token and capacity; default the context less "
        "the output tokens.", tool=True))
    engine = fields.String(validate=validate.OneOf(ENGINE_NAMES), metadata=doc(
        "Serving engine class, which sets the plan and the decode efficiency: llama.cpp (layer "
        "split), vllm, sglang, tensorrt-llm (tensor parallel), transformers, exllamav2, mlc-llm, "
        "gpt-fast (ollama = llama.cpp).", tool=(
            "vllm, sglang, tensorrt-llm, llama.cpp, transformers, exllamav2, mlc-llm, gpt-fast")))
    overlap = StrictFloat(validate=_range(0, 1), metadata=doc(
        "Share of the backward pass that gradient communication can hide behind; default 0.8."))
    parallelism = fields.Nested(ParallelismSpecSchema, metadata=doc(
        "How the work is split over the cards (tensor, pipeline, expert, data, replicas; the "
        "degrees multiply to the card count). Omitted: the engine's own plan, said in "
        "assumptions."))
    output_tokens = StrictInteger(validate=_range(1, 10_000_000), metadata=doc(
        "Tokens generated per request, for capacity at full load; default 1000 (at most half the "
        "context), or the rest of the context after prompt_tokens.", tool=True))
    global_batch_tokens = StrictFloat(validate=_range(1, 1e12), metadata=doc(
        "Tokens per optimizer step in training (gradient accumulation fills it); default the "
        "model's published batch, or 4M."))

    @post_load
    def to_domain(self, data, **kwargs) -> WorkloadInput:
        return WorkloadInput(**data)


class HardwareSpecSchema(_Strict):
    """Which card (a catalog id such as D-M or rtx-4090, or a CardSpec) and how many."""

    tool_text = "Which card and how many."

    card = CardField(required=True)
    count = StrictInteger(validate=_range(1, defaults.MAX_CARDS), metadata=doc(
        "Cards; omitted, the least count that fits.", tool="omitted: the least that fits"))
    cards_per_node = StrictInteger(data_key="cards_per_machine", validate=_range(1, 1024), metadata=doc(
        "Cards in one machine; default 8 (data centre), 4 (workstation and consumer), or the card's rack-scale "
        "domain (72 for GB200)."))
    network_gb_per_s = StrictFloat(validate=_range(0.001, 1_000_000), metadata=doc(
        "Network bandwidth per machine between machines, GB/s; default 400 (data centre), 25, 12.5."))

    @post_load
    def to_domain(self, data, **kwargs) -> HardwareInput:
        return HardwareInput(**data)


class EnergySpecSchema(_Strict):
    """Electricity price and how the installation runs."""

    power_w = StrictFloat(validate=_positive(1e9), metadata=doc(
        "The installation's draw in watts, used as given (power_basis given); default: the "
        "machines that carry the cards (power_basis machine)."))
    price_per_kwh = StrictFloat(validate=_range(0, 1_000_000), metadata=doc(
        "Price of one kWh; default 0.7.", tool="default 0.7"))
    currency = _currency(metadata=doc(
        "Echoed in the answer; default CNY.", tool="default CNY"))
    pue = StrictFloat(validate=_range(1, 5), metadata=doc(
        "Power usage effectiveness; default 1.0."))
    utilization = StrictFloat(validate=_range(0, 1), metadata=doc(
        "Share of rated power drawn while on; default 1.0."))
    hours_per_day = StrictFloat(validate=_range(0, 24), metadata=doc(
        "Hours on per day; default 24."))
    years = StrictFloat(validate=_range(0.01, 100), metadata=doc(
        "Horizon for the multi-year figures; default 3."))
    machines = StrictInteger(data_key="installations", validate=_range(1, 10_000_000), metadata=doc(
        "Identical installations in the fleet (each the machines that carry the cards); default 1."))

    @post_load
    def to_domain(self, data, **kwargs) -> EnergyInput:
        return EnergyInput(**data)


def _workload(**kwargs):
    return fields.Nested(WorkloadSpecSchema, load_default=lambda: WorkloadInput(), **kwargs)


def _energy(**kwargs):
    return fields.Nested(EnergySpecSchema, load_default=lambda: EnergyInput(), **kwargs)


def _price():
    return StrictFloat(validate=_range(0, 1e12))


def _overhead():
    return StrictFloat(validate=_range(0, 5))


class EstimateRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = _workload()
    hardware = fields.Nested(HardwareSpecSchema, required=True)
    energy = _energy()
    card_price = _price()
    overhead_fraction = _overhead()
    target = fields.Nested(TargetSpecSchema, metadata=doc(
        "A serving target: the answer adds the cards (and machines) of this card that meet it, "
        "under capacity.", tool="A serving target: the answer adds the cards that meet it."))
    lang = _lang()


class MemoryRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = _workload()
    hardware = fields.Nested(HardwareSpecSchema)
    lang = _lang(metadata=doc("Language of the warnings and assumption notes, en or zh; default from "
                              "Accept-Language, else en."))


class ThroughputRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = _workload()
    hardware = fields.Nested(HardwareSpecSchema, required=True)
    lang = _lang(metadata=doc("Language of the warnings and assumption notes, en or zh; default from "
                              "Accept-Language, else en."))


class ScalingRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = fields.Nested(WorkloadSpecSchema, required=True)
    hardware = fields.Nested(HardwareSpecSchema, required=True)
    deadline_days = StrictFloat(validate=_range(0.001, 100_000), metadata=doc(
        "Finish within this many days: the answer gives the least card count that does, by the "
        "default method (the communication model) and by the guide's curve.",
        tool="Finish within this many days: the least card count that does."))
    lang = _lang(metadata=doc("Language of the warnings and assumption notes, en or zh; default from "
                              "Accept-Language, else en."))


class CostRequestSchema(_Strict):
    hardware = fields.Nested(HardwareSpecSchema, metadata=doc(
        "The cards: electricity is priced at the draw of the machines that carry them."))
    power_w = StrictFloat(validate=_positive(1e9), metadata=doc(
        "A whole installation's draw in watts, in place of hardware (or beside it, to price "
        "the cards at a measured draw); the same as energy.power_w.",
        tool="An installation's draw in W, in place of hardware."))
    energy = _energy()
    card_price = _price()
    overhead_fraction = _overhead()
    lang = _lang(metadata=doc("Language of the warnings and assumption notes, en or zh; default from "
                              "Accept-Language, else en."))

    @validates_schema
    def one_source_of_power(self, data, **kwargs):
        given = data.get("energy")
        if "power_w" in data and given is not None and given.power_w is not None:
            raise ValidationError(P.POWER_TWICE(), "power_w")
        if "hardware" not in data and "power_w" not in data and (given is None or given.power_w is None):
            raise ValidationError(P.POWER_OR_HARDWARE(), "power_w")

    @post_load
    def power_in_energy(self, data, **kwargs):
        if "power_w" in data:
            data["energy"] = replace(data["energy"], power_w=data.pop("power_w"))
        return data


class _EstimateQuerySchema(_Strict):
    """GET /estimate: the flat parameters a chatbot sends (query strings: numbers as text)."""

    model = fields.String(required=True, validate=_NAME, metadata=doc(
        "A model preset or alias: llama-3.1-70b, Llama 3.1 70B Instruct, qwen2.5-7b."))
    card = fields.String(required=True, validate=_NAME, metadata=doc("A card or tier: rtx-4090, 4090, h100-sxm, D-M."))
    count = fields.Integer(validate=_range(1, defaults.MAX_CARDS), metadata=doc("Omitted: the least count that fits."))
    mode = fields.String(validate=validate.OneOf(defaults.MODES), metadata=_said_default(
        "What the model does.", defaults.MODE))
    precision = fields.String(validate=validate.Length(min=1, max=40), metadata=doc(
        "Omitted: for inference, the format the model is released in (its config's quantization or dtype; bf16 "
        "for most); for training, bf16. Weight format: bf16, fp8, int8, int4, q4_k_m, awq, nf4, ..."))
    kv_precision = fields.String(validate=validate.Length(min=1, max=40), metadata=doc(
        "Omitted: fp32 with fp32 weights; fp8 where the engine keeps its FP8 checkpoints' cache in FP8 on cards "
        "that compute FP8; else bf16. KV cache format."))
    context_tokens = fields.Integer(validate=_range(1, 10_000_000), metadata=_said_default(
        "Tokens per sequence.", defaults.CONTEXT_TOKENS))
    batch_size = fields.Integer(validate=_range(1, 1_000_000), metadata=_said_default(
        "Concurrent sequences.", defaults.BATCH_SIZE))
    train_tokens = fields.Float(validate=_range(1, 1e16), allow_nan=False, metadata=doc(
        "Omitted: no training time."))
    engine = fields.String(validate=validate.OneOf(ENGINE_NAMES), metadata=doc(
        "Omitted: the default engine (vLLM's fitted figures) on catalog cards, the guide's rule on the guide's "
        "tiers."))
    price_per_kwh = fields.Float(validate=_range(0, 1_000_000), allow_nan=False, metadata=_said_default(
        "Electricity price.", defaults.PRICE_PER_KWH))
    currency = _currency(metadata=_said_default("Echoed in the answer.", defaults.CURRENCY))
    lang = _lang(metadata=_said_default("Summary language; Accept-Language also works.", defaults.LANG))

    @post_load
    def to_domain(self, data, **kwargs) -> dict:
        catalogs = current_catalogs()
        workload = {k: data[k] for k in ("mode", "precision", "kv_precision", "context_tokens",
                                          "batch_size", "train_tokens", "engine") if k in data}
        energy = {k: data[k] for k in ("price_per_kwh", "currency") if k in data}
        return {
            "model": catalogs.models.get(data["model"], "model").spec,
            "workload": WorkloadInput(**workload),
            "hardware": HardwareInput(catalogs.cards.get(data["card"], "card"), data.get("count")),
            "energy": EnergyInput(**energy),
            "lang": data.get("lang"),
        }


class BatchRequestSchema(_Strict):
    """Up to 1000 EstimateRequest objects (413 above); each answers or fails on its own."""

    items = fields.List(fields.Raw(), required=True, validate=validate.Length(min=1))


class SweepFiltersSchema(_Strict):
    line = fields.String(validate=validate.OneOf(LINES))
    kind = fields.String(validate=validate.OneOf(("tier", "card")))
    vendor = fields.String(validate=validate.Length(min=1, max=40))
    tier = fields.String(validate=validate.Length(min=1, max=10))
    min_memory_gib = StrictFloat(validate=_range(0, 100_000))


class SweepRequestSchema(_Strict):
    """One workload estimated on every catalog card that passes the filters."""

    model = ModelField(required=True)
    workload = _workload()
    energy = _energy()
    filters = fields.Nested(SweepFiltersSchema)
    count = StrictInteger(validate=_range(1, defaults.MAX_CARDS))
    card_price = _price()
    overhead_fraction = _overhead()
    target = fields.Nested(TargetSpecSchema, metadata=doc(
        "A serving target: each card's answer adds the cards it needs to meet it."))
    lang = _lang()


class CapacityRequestSchema(_Strict):
    """A serving target on cards named or filtered from the catalog (every card when neither)."""

    model = ModelField(required=True, metadata=doc(
        "A preset name, a ModelSpec or an HfConfigModel."))
    workload = _workload(metadata=doc(
        "Precision, engine, prompt and output tokens of a request."))
    target = fields.Nested(TargetSpecSchema, required=True, metadata=doc(
        "What the cards must sustain."))
    cards = fields.List(fields.String(validate=_NAME), validate=validate.Length(min=1, max=200), metadata=doc(
        "Catalog names of the cards to size; omitted: every card that passes filters.",
        tool="Card ids; omitted: every card that passes filters."))
    filters = fields.Nested(SweepFiltersSchema, metadata=doc(
        "Catalog filters (line, kind, vendor, tier, min_memory_gib), as for the sweep.", tool="Catalog filters."))
    cards_per_node = StrictInteger(data_key="cards_per_machine", validate=_range(1, 1024), metadata=doc(
        "Cards per machine; default by line (8 data centre, 4 workstation and consumer).", tool="default by line"))
    network_gb_per_s = StrictFloat(validate=_range(0.001, 1_000_000), metadata=doc(
        "Network per machine between machines in GB/s; default by line.", tool="default by line"))
    lang = _lang(metadata=doc(
        "Summary language, en or zh; default from Accept-Language, else en."))

    @validates_schema
    def cards_or_filters(self, data, **kwargs):
        if "cards" in data and "filters" in data:
            raise ValidationError(P.CARDS_OR_FILTERS(), "filters")


class CompareOptionsField(fields.Field):
    """A list of hardware options (each a HardwareSpec), or catalog filters (a SweepFilters)
    whose every card is an option, sized to the least count that does the work.

    In openapi.yaml: oneOf [array of HardwareSpec, SweepFilters].
    """

    default_error_messages = {"invalid": P.Coded(P.OPTIONS_OR_FILTERS)}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, dict):
            return _instance(SweepFiltersSchema).load(value)
        if not isinstance(value, list):
            raise self.make_error("invalid")
        if not 1 <= len(value) <= MAX_COMPARED:
            raise ValidationError(P.OPTIONS_COUNT(limit=MAX_COMPARED, given=len(value)))
        out, errors = [], {}
        for i, item in enumerate(value):
            try:
                if not isinstance(item, dict):
                    raise ValidationError(P.OPTION_SHAPE())
                out.append(_instance(HardwareSpecSchema).load(item))
            except ValidationError as exc:
                errors[i] = exc.messages
            except SizingError as exc:  # a card name the catalog does not know
                errors[i] = {"card": [exc.message]}
        if errors:
            raise ValidationError(errors)
        return out


def _card_prices(what: str, tool: str):
    return fields.Dict(keys=fields.String(validate=_NAME), values=StrictFloat(validate=_positive(1e12)),
                       validate=validate.Length(max=MAX_COMPARED), metadata=doc(what, tool=tool))


class CompareRequestSchema(_Strict):
    """Hardware options side by side for one model and one load, over the years, bought or
    rented. Give a serving target, or a training job (a training mode with train_tokens, and
    deadline_days if the run must finish in time)."""

    model = ModelField(required=True, metadata=doc("A preset name, a ModelSpec or an HfConfigModel."))
    workload = _workload(metadata=doc(
        "Precision, engine and request shape for serving; mode, train_tokens and the rest for training."))
    target = fields.Nested(TargetSpecSchema, metadata=doc(
        "A serving target each option must meet (concurrent_users, tokens_per_s_per_user, ttft_s).",
        tool="A serving target each option must meet."))
    deadline_days = StrictFloat(validate=_range(0.001, 100_000), metadata=doc(
        "Training only: the run must finish within this many days; an option without a count is "
        "sized to the least count that does.", tool="Training only: finish within this many days."))
    options = CompareOptionsField(required=True, metadata=doc(
        "A list of hardware options ({card, count}; without count, the least count that does the "
        "work), or catalog filters (line, kind, vendor, tier, min_memory_gib) whose cards are compared.",
        tool="[{card, count}, ...] (no count: the least that does the work), or filters {line, kind, vendor, tier, "
             "min_memory_gib}."))
    years = StrictFloat(validate=_range(0.1, 30), metadata=doc(
        "The horizon of the cost of ownership and the rent, in years; default 3.", tool="default 3"))
    prices = _card_prices(
        "Card id -> purchase price of one card, in currency; overrides the operator's catalog price. "
        "An option without a price says no price.", "Card id -> price of one card.")
    rent_per_card_hour = _card_prices(
        "Card id -> rental price of one card for one hour, in currency; overrides the operator's "
        "catalog rent.", "Card id -> rent of one card per hour.")
    currency = _currency(metadata=doc(
        "The currency of prices and rent_per_card_hour; default energy.currency, else CNY.",
        tool="default energy.currency, else CNY"))
    energy = _energy(metadata=doc(
        "Electricity price, PUE, utilization and hours per day; power comes from each option's "
        "machines, the horizon from years.", tool="Electricity price and use."))
    overhead_fraction = StrictFloat(validate=_range(0, 5), metadata=doc(
        "Installation overhead as a fraction of the cards' price; default the guide's range 0.5-1.0.",
        tool="Share of the cards' price; default 0.5-1.0"))
    rank_by = fields.String(validate=validate.OneOf(RANK_BY), metadata=doc(
        "cost_of_ownership (default), cost_per_token (per million output tokens, or per run for "
        "training), power, or cards; options that meet the target always rank first.",
        tool="Default cost_of_ownership; options that meet the target rank first."))
    lang = _lang(metadata=doc("Summary and warnings language, en or zh; default from Accept-Language, else en."))

    @validates_schema
    def power_from_the_options(self, data, **kwargs):
        given = data.get("energy")
        for name, said in (("power_w", "power_w"), ("machines", "installations"), ("years", "years")):
            if given is not None and getattr(given, name) is not None:
                raise ValidationError(
                    P.YEARS_AT_TOP() if name == "years" else P.FROM_MACHINES(name=said), f"energy.{said}")


class RankRequestSchema(_Strict):
    line = fields.String(validate=validate.OneOf(LINES))
    cards = fields.List(fields.String(validate=_NAME), validate=validate.Length(min=1, max=200))
    weights = fields.Dict(keys=fields.String(validate=validate.OneOf(DIMENSIONS)),
                          values=StrictFloat(validate=_range(0, 1000)))
    model = ModelField()
    workload = _workload()
    count = StrictInteger(validate=_range(1, defaults.MAX_CARDS))
    lang = _lang(metadata=doc("Language of the explanations and notes: en (default) or zh; Accept-Language also "
                              "works."))


class ConstraintsSpecSchema(_Strict):
    """The guide's questions (power, continuous hours, splitting) and three more."""

    power_w = StrictFloat(validate=_positive(100_000), metadata=doc(
        "The most one card may draw, in watts (what the PSU, case and cooling take per card); the "
        "same as power_w_per_card."))
    power_w_per_card = StrictFloat(validate=_positive(100_000), metadata=doc(
        "The most one card may draw, in watts."))
    power_w_total = StrictFloat(validate=_positive(1e9), metadata=doc(
        "The most all the cards together may draw, in watts."))
    continuous_hours = StrictFloat(validate=_range(0, 1_000_000))
    splittable = StrictBoolean()
    budget = StrictFloat(validate=_range(0, 1e15), metadata=doc(
        "The most the cards may cost, in the prices' currency; without prices it cannot be "
        "checked, and the answer warns."))
    certified_drivers = StrictBoolean()
    ecc = StrictBoolean()

    @validates_schema
    def one_per_card_power(self, data, **kwargs):
        if "power_w" in data and "power_w_per_card" in data:
            raise ValidationError(P.POWER_PER_CARD_TWICE(), "power_w_per_card")

    @post_load
    def to_domain(self, data, **kwargs) -> Constraints:
        if "power_w_per_card" in data:
            data["power_w"] = data.pop("power_w_per_card")
        return Constraints(**data)


class RecommendRequestSchema(_Strict):
    scenario = fields.String(validate=validate.OneOf(tuple(SCENARIOS)))
    model = ModelField()
    workload = fields.Nested(WorkloadSpecSchema)
    constraints = fields.Nested(ConstraintsSpecSchema)
    prices = fields.Dict(keys=fields.String(validate=_NAME), values=StrictFloat(validate=_positive(1e12)))
    currency = _currency()
    target = fields.Nested(TargetSpecSchema, metadata=doc(
        "A serving target: candidates are sized to meet it and ranked by cards needed."))
    lang = _lang()

    @validates_schema
    def model_or_scenario(self, data, **kwargs):
        if "model" not in data and "scenario" not in data:
            raise ValidationError(P.MODEL_OR_SCENARIO(), "model")


class NormalizeRequestSchema(_Strict):
    value = StrictFloat(required=True, validate=_positive(1e9))
    precision = fields.String(required=True, validate=validate.OneOf(tuple(LADDER)))
    sparse = StrictBoolean(load_default=False)
    accumulate = fields.String(validate=validate.OneOf(ACCUMULATE))
    lang = _lang(metadata=doc("Language of the rules' text: en (default) or zh; Accept-Language also works."))


class _TroubleshootQuerySchema(_Strict):
    """GET /troubleshoot parameters."""

    q = fields.String(required=True, validate=validate.Length(min=1, max=500), metadata=doc(
        "The symptom, in Chinese or English."))
    lang = _lang(metadata=doc("Omitted: from Accept-Language, else en."))
    line = fields.String(validate=validate.OneOf(LINES), metadata=doc(
        "Omitted: no line-specific advice. The card's product line."))
    limit = fields.Integer(validate=_range(1, 8), load_default=TROUBLESHOOT_LIMIT, metadata=doc("Most rows to return."))


# --- responses ----------------------------------------------------------------------------
#
# Each answer is declared once, on its dataclass in service/sizing; `answer_schema` makes its
# schema (service/api/shapes.py). Written by hand here: the problem (built by the error
# handlers), the brief card and model an answer names (a projection, in display units), the
# catalog entries (display units), and the answers the views assemble per language.


def _attrs(obj) -> dict:
    """A frozen dataclass's fields as a shallow dict (not what it keeps beside them: a kept hash)."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


class ModelInfoSchema(Schema):
    name = fields.String(required=True, metadata=doc(
        "The model's name: the preset's, the caller's, or a default (custom model, model from config.json)."))
    params = fields.Integer(required=True, metadata=doc("Every stored parameter (all experts of an MoE), as a count."))
    active_params = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Parameters one token passes through (MoE); null for a dense model."))
    layers = fields.Integer(required=True, allow_none=True, metadata=doc("Transformer layers; null when not known."))
    kv_heads = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Key/value heads as given or read from the config; null when not given (a custom model then uses "
        "attention_heads)."))
    head_dim = fields.Integer(required=True, allow_none=True, attribute="resolved_head_dim", metadata=doc(
        "Dimension of one attention head: as given, else hidden_size / attention_heads; null when neither is "
        "known."))
    source = fields.String(required=True, metadata=doc(
        "Where the model's figures come from: the preset's config source, counted from the config.json given, or "
        "given by the caller."))


class CardInfoSchema(Schema):
    id = fields.String(required=True, metadata=doc(
        "Catalog id of the card or tier (h100-sxm, D-M); custom for a card given by its figures."))
    name = fields.String(required=True, metadata=doc(
        "Full name of the card or tier (NVIDIA H100 SXM5 80GB, W-A workstation card)."))
    kind = fields.String(required=True, metadata=doc(
        "tier for one of the guide's ten tiers (C30 to D-L), card for a real product, custom for a card given by "
        "its figures."))
    line = fields.String(required=True, metadata=doc("Product line: consumer, workstation or datacenter."))
    tier = fields.String(required=True, allow_none=True, metadata=doc(
        "The guide tier the card maps to (a tier's own code for a tier); null for a card given by its figures."))
    memory_gib = Scaled(GIB, required=True, attribute="memory_bytes", metadata=doc("Memory of one card in GiB."))
    bandwidth_gb_per_s = Scaled(GB, required=True, attribute="bandwidth_bytes_per_s", metadata=doc(
        "Datasheet memory bandwidth of one card in GB/s (1e9 bytes/s)."))
    power_w = Num(required=True, metadata=doc("Rated board power of one card in W (cards only, no host)."))


register(ModelSpec, ModelInfoSchema)
register(Card, CardInfoSchema)

_SAID = {code: t for code, t in TEMPLATES.items() if t is not LIST_SEPARATOR}  # the separator joins, never said


class MessageSchema(Schema):
    """A sentence the service says (a warning, an assumption's note, a reason, a description):
    its stable code, the text in the answer's language, and the values the text was made from.
    Match on `code` (it never changes once published, and its meaning is listed with the enum);
    show `message`."""

    code = fields.String(required=True, validate=validate.OneOf(tuple(_SAID)), metadata={
        **doc("What is said, as a stable code; the enum lists every code, x-enum-descriptions what "
              "each means."),
        "x-enum-descriptions": [t.meaning for t in _SAID.values()]})
    message = fields.String(required=True, metadata=doc(
        "The sentence in the answer's language (lang=en or zh)."))
    params = fields.Dict(keys=fields.String(), required=True, metadata=doc(
        "The values the sentence was made from, by name: numbers in SI units (W, s, bytes, "
        "tokens), ids and names as they stand, nested messages as Message objects, lists as "
        "arrays. The same in every language."))


class ProblemErrorSchema(MessageSchema):
    """One bad field: which, and what is wrong with it, as a coded message (its code, the text in
    the request's language, its values)."""

    field = fields.String(required=True, metadata=doc(
        "The bad field, dotted from the request body's root (workload.batch_size), or body for the body as a "
        "whole."))
    message = fields.String(required=True, metadata=doc(
        "What is wrong with that field, in the request's language (its lang, else Accept-Language); a last "
        "entry on body says how many more bad fields were not listed."))


class ProblemSchema(Schema):
    """RFC 9457 problem details."""

    type = fields.String(required=True, metadata=doc(
        "Always about:blank: the problem means what its HTTP status says, with detail and errors saying more."))
    title = fields.String(required=True, metadata=doc(
        "Short name of the HTTP status, e.g. Unprocessable Content or Not Found; the same for every problem with "
        "that status."))
    status = fields.Integer(required=True, metadata=doc(
        "HTTP status code (422 for invalid input); in a batch item, the item's own status while the batch answers "
        "200."))
    detail = fields.String(required=True, metadata=doc(
        "What went wrong, for a person: the bad fields named (\"Invalid input: workload.batch_size.\"; \"Invalid "
        "input.\" in a batch item), or why the input was refused."))
    instance = fields.String(required=True, metadata=doc(
        "Path of the request that failed, e.g. /estimate; in a batch item, the batch's path."))
    errors = fields.List(fields.Nested(ProblemErrorSchema), required=True, metadata=doc(
        "Each bad field, dotted (workload.batch_size), with what is wrong."))
    request_id = fields.String(required=True, metadata=doc(
        "The request's X-Request-ID, as in the response header and the logs."))



AssumptionSchema = answer_schema(
    Assumption,
    show="name value note")
MemoryComponentSchema = answer_schema(
    Component, "MemoryComponent",
    show="name bytes note")
RangeSchema = answer_schema(
    Range,
    show="low typical high note")
# An answer states each figure once: no unit twins (total_gib of total_bytes), no copies of a
# figure another part of the same answer owns (the plan owns cards and the batch's split, the fit
# whether it fits, the answer's card its id).
MemoryBreakdownSchema = answer_schema(
    MemoryBreakdown,
    show="weights_bytes expert_weights_bytes training_state_bytes model_state_bytes kv_cache_bytes "
         "kv_cache_bytes_per_token kv_cache_bytes_per_sequence activations_bytes runtime_overhead_bytes "
         "total_bytes bytes_per_param total_bytes_range components")
FitSchema = answer_schema(
    FitAnswer, "Fit",
    show="count count_given fits cards_needed card_memory_bytes usable_bytes_per_card need_bytes_per_card "
         "model_state_bytes_per_card free_bytes_per_card total_bytes_on_cards max_concurrent_sequences reason",
    rename={"total_bytes_on_cards": "total_bytes"})
ParallelismSchema = answer_schema(
    PlanAnswer, "Parallelism",
    show="tensor pipeline expert data replicas cards idle_cards machines cards_per_machine given description "
         "micro_batch gradient_accumulation global_batch_tokens",
    description="The plan an answer used: `cards` is pipeline x the wider of tensor and expert x data x "
                "replicas (expert spans tensor groups side by side: tensor 8 with expert 8 runs on 8 cards).")
DecodeStepSchema = answer_schema(
    StepCost, "DecodeStep",
    show="sequences memory_s compute_s roofline_s engine_s tensor_comm_s expert_comm_s pipeline_comm_s step_s",
    rename={"sequences": "batch"},
    description="One decode step of the asked batch on one copy, by part, in seconds: step_s = "
    "roofline_s + engine_s + tensor_comm_s + expert_comm_s + pipeline_comm_s. memory_s and "
    "compute_s are the roofline's two sides (each kernel takes the larger), so they overlap and "
    "do not add up to it.")
DecodePointSchema = answer_schema(
    DecodePoint, "DecodePoint",
    show="batch_size decode_tokens_per_s total_tokens_per_s total_tokens_per_s_ceiling bound fits")
# The guide's own figures stand in one `guide` object beside the service's model of the same thing.
# A part an answer may not have is one object, null where it is absent, not a run of null fields.
ThroughputSchema = answer_schema(
    ThroughputAnswer, "Throughput",
    show="batch_size engine compute_precision peak_flops_per_s bandwidth_bytes_per_s ridge_flops_per_byte "
         "arithmetic_intensity_flops_per_byte attainable_flops_per_s bound bytes_per_step "
         "weights_read_bytes_per_step flops_per_token decode_efficiency decode_efficiency_range "
         "achievable_bandwidth_fraction decode_tokens_per_s_ceiling decode_tokens_per_s_achievable "
         "decode_tokens_per_s_expected decode_tokens_per_s_range guide total_tokens_per_s_ceiling "
         "total_tokens_per_s total_tokens_per_s_range link decode_step prompt_tokens prefill_flops "
         "prefill_bound time_to_first_token_s time_to_first_token_s_range prefill_tokens_per_s output_tokens "
         "full_load decode_curve",
    group={"guide": ("The guide's rule of thumb for decode speed, beside the service's roofline: a share of the "
                     "summed bandwidth over the bytes a token reads.", "ThroughputGuide",
                     {"decode_tokens_per_s": "decode_tokens_per_s_guide",
                      "total_tokens_per_s": "total_tokens_per_s_guide"}),
           "link": ("The slowest link one copy's collectives cross; null when one copy is one card.", "LinkUse",
                    {"name": ("link", "The link's name (e.g. NVLink 4, PCIe, network (400 GB/s per machine)), "
                                      "in the answer's language where it is the service's own."),
                     "bytes_per_s": ("link_bytes_per_s", "Achievable bytes/s one way per card on the link: half "
                                     "the vendor's two-way figure at the collective efficiency, or the card's share "
                                     "of the network."),
                     "latency_s": ("link_latency_s", "Latency of one collective round over the link, in seconds.")},
                    "link"),
           "full_load": ("The cards at full load: the largest batch whose KV cache fits (the engine's cap applied), "
                         "with chunked prefill; null when no sequence fits or the KV cache's shape is unknown.",
                         "FullLoad",
                         {"total_tokens_per_s": ("max_total_tokens_per_s", "Output tokens/s all copies sustain at "
                                                 "full load."),
                          "total_tokens_per_s_range": ("max_total_tokens_per_s_range", "total_tokens_per_s as low, "
                                                       "typical and high, from the engine's efficiency and "
                                                       "fixed-cost ranges."),
                          "total_tokens_per_s_ceiling": ("max_total_tokens_per_s_ceiling", "Output tokens/s if "
                                                         "every card ran at dense peak on this work alone (decode, "
                                                         "attention and each token's share of prefill); no batch or "
                                                         "engine beats it."),
                          "batch_size": ("capacity_batch_size", "Sequences running at once over all copies, the "
                                         "batch total_tokens_per_s is for."),
                          "time_to_first_token_s": ("capacity_time_to_first_token_s", "Time to first token at full "
                                                    "load, in seconds: one prompt's prefill plus one full-load step "
                                                    "for each 8192-token chunk of it."),
                          "time_per_output_token_s": ("time_per_output_token_s", "Seconds between two output tokens "
                                                      "of one sequence at full load (the step at batch_size)."),
                          "bound": ("capacity_bound", "What limits the full-load step: memory or compute."),
                          "plan": ("capacity_parallelism", "The plan the full-load figures are priced on "
                                   "(described as parallelism.description); it can differ from the plan shown, "
                                   "which serves the asked batch fastest; null when they are the same.")},
                         "max_total_tokens_per_s")})
TrainingSchema = answer_schema(
    TrainingAnswer, "Training",
    show="run flops_per_param_token peak_flops_per_s mfu scaling_efficiency method guide "
         "network_bytes_per_s_per_machine link global_batch_tokens_asked tensor_comm_s expert_comm_s "
         "pipeline_bubble_s pipeline_comm_s data_comm_s data_comm_exposed_s overlap step_s step_efficiency "
         "effective_mfu virtual_stages",
    rename={"network_bytes_per_s_per_machine": "network_bytes_per_s_per_node"},
    group={"guide": ("The guide's first-order figures, beside the step model's: the run time by its scaling "
                     "curve, one micro-batch's compute at mfu, the gradients synchronised over the interconnect, and "
                     "the first-order step they add up to.", "TrainingGuide",
                     {"time_s": "time_s_guide_curve", "micro_batch_compute_s": "step_compute_s",
                      "gradient_bytes": "gradient_bytes", "interconnect_bytes_per_s": "interconnect_bytes_per_s",
                      "gradient_sync_s": "gradient_sync_s", "first_order_step_s": "step_time_s"}),
           "run": ("The run of workload.train_tokens: its FLOPs, its time and its optimizer steps; null when no "
                   "train_tokens was given.", "TrainingRun",
                   {"train_tokens": ("train_tokens", "Tokens to train on, as given in workload.train_tokens."),
                    "compute_flops": ("compute_flops", "Model FLOPs of the run: 6 (4 for LoRA/QLoRA) x parameters "
                                      "per token (active ones for MoE) x train_tokens."),
                    "hardware_flops": ("hardware_flops", "FLOPs the cards actually execute: compute_flops scaled by "
                                       "flops_per_param_token over the model's count (a third more with full "
                                       "recomputation)."),
                    "time_s_linear": ("time_s_linear", "Run time in s at perfect scaling: compute_flops / (cards x "
                                      "peak_flops_per_s x mfu), no communication."),
                    "time_s": ("time_s", "Wall time of the run in s by method: steps x step_s / 0.8 run goodput for "
                               "the step model, else the guide's formula; null when no count holds the job."),
                    "time_s_range": ("time_s_range", "time_s as low, typical and high; null with time_s."),
                    "steps": ("steps", "Optimizer steps in the run: train_tokens / global_batch_tokens, fractional, "
                              "at least 1; null when no count holds the job.")},
                   "train_tokens")})
EnergySchema = answer_schema(
    EnergyAnswer, "Energy",
    show="power_w power_basis hours_per_day utilization pue price_per_kwh currency installations years "
         "energy_kwh_per_day energy_kwh_per_year electricity_cost_per_day electricity_cost_per_year "
         "fleet_energy_kwh_per_year fleet_electricity_cost_per_year electricity_cost_over_years "
         "fleet_electricity_cost_over_years",
    rename={"installations": "machines"})
HostSchema = answer_schema(
    HostSizing, "Host",
    show="cards machines cards_per_machine machine_cards machine_cards_power_w machine_peak_w "
         "machine_transient_peak_w machine_typical_power_w psu_w psus host_ram_gb cpu_cores server_power_w_low "
         "server_power_w_high cards_power_w system_peak_w transient_peak_w rack_power_w ups_w power_feeds "
         "typical_power_w notes")
# Beside the plan (which owns cards, machines and cards per machine), the machines' sizing alone.
MachinesSchema = answer_schema(
    HostSizing, "Machines",
    show="machine_cards machine_cards_power_w machine_peak_w machine_transient_peak_w machine_typical_power_w "
         "psu_w psus host_ram_gb cpu_cores server_power_w_low server_power_w_high cards_power_w system_peak_w "
         "transient_peak_w rack_power_w ups_w power_feeds typical_power_w notes",
    description="The machines around the plan's cards (parallelism says how many): PSU, host RAM, CPU cores, "
                "power, UPS and feeds.")
OwnershipSchema = answer_schema(
    OwnershipAnswer, "Ownership",
    show="cards card_price price_source currency years cards_cost installation_overhead_low "
         "installation_overhead installation_overhead_high electricity_over_years total_low total total_high "
         "total_per_year total_per_day cost_per_million_tokens cost_per_run")
AlternativeSchema = answer_schema(
    Alternative,
    show="option cards_needed figure value note")
TargetSchema = answer_schema(
    Target,
    show="concurrent_users tokens_per_s_per_user ttft_s")
CapacityOptionSchema = answer_schema(
    CapacityAnswer, "CapacityOption",
    show="card meets_target cards machines parallelism copies sequences_per_copy tokens_per_s_per_user "
         "time_to_first_token_s time_per_output_token_s total_tokens_per_s power_w reason assumptions "
         "cards_at_low_end",
    description="The cards of one kind a serving target needs.")
ScalingPointSchema = answer_schema(
    ScalingPoint, "ScalingPoint",
    show="cards fits scaling_efficiency time_s time_s_guide_curve")
MemoryResponseSchema = answer_schema(
    MemoryResult, "MemoryResponse",
    show="summary breakdown model mode precision kv_precision fit card parallelism assumptions warnings",
    flatten=("breakdown",))
ThroughputResponseSchema = answer_schema(
    ThroughputResult, "ThroughputResponse",
    show="throughput model card precision fit parallelism assumptions warnings",
    flatten=("throughput",))
ScalingResponseSchema = answer_schema(
    ScalingResult, "ScalingResponse",
    show="training model card mode fit parallelism curve deadline_days cards_needed_by_memory "
         "cards_needed_for_deadline cards_needed_for_deadline_guide_curve assumptions warnings",
    flatten=("training",))
CostResponseSchema = answer_schema(
    CostResult, "CostResponse",
    show="summary energy ownership assumptions warnings",
    flatten=("energy",))
EstimateResponseSchema = answer_schema(
    Estimate, "EstimateResponse",
    show="model card mode precision alternatives memory fit parallelism throughput training energy host "
         "ownership capacity lang summary assumptions warnings",
    declare={"host": fields.Nested(MachinesSchema, required=True, metadata=doc(
        "The machines around the cards: PSU, host RAM, CPU cores, power, UPS and feeds (their count is "
        "parallelism.machines)."))})
CapacityResponseSchema = answer_schema(
    CapacityResult, "CapacityResponse",
    show="model target prompt_tokens output_tokens engine options best lang summary assumptions warnings")
DimensionScoreSchema = answer_schema(
    DimensionScore,
    show="dimension value unit score weight contribution")
RankedCardSchema = answer_schema(
    RankedCard,
    show="rank card total_score scores explanation")
ExcludedCardSchema = answer_schema(
    Excluded, "ExcludedCard",
    show="card cards_needed reason")
RankResponseSchema = answer_schema(
    RankResult, "RankResponse",
    show="summary line weights normalisation ranking excluded assumptions warnings")
CandidateSchema = answer_schema(
    Candidate,
    show="card count fits figure value price_total value_per_cost reason")
PriceSchema = answer_schema(
    Price,
    show="amount currency source date")
# What an option reaches and costs, in parts that are there or null as a whole: serving figures
# (null for training or a miss), its machines' energy (null when no count does the work), its
# purchase (null without a card price) and its rent (null without a rental price).
CompareOptionSchema = answer_schema(
    CompareOption,
    # not operating_cost_per_year: energy's electricity
    show="label card card_name line meets_target reason cards cards_needed cards_at_low_end machines parallelism "
         "serving time_s energy purchase rent pareto_optimal rank warnings",
    group={
        "serving": ("Serving: what each user and all of them get; null for training or when the option misses the "
                    "target.", "OptionServing",
                    {"tokens_per_s_per_user": ("tokens_per_s_per_user", "Decode speed each user gets, in tokens/s."),
                     "total_tokens_per_s": ("total_tokens_per_s", "Output tokens/s for all the target's users "
                                            "together (tokens_per_s_per_user x concurrent_users), not the cards' "
                                            "full capacity."),
                     "time_to_first_token_s": ("time_to_first_token_s", "Time to first token at the batch each copy "
                                               "runs, in s.")},
                    "tokens_per_s_per_user"),
        "energy": ("What the option's machines draw and their electricity; null when no count does the work.",
                   "OptionEnergy",
                   {"power_w": ("power_w", "Typical draw of all the option's machines together in W, the cards "
                                "with their hosts."),
                    "power_w_per_machine": ("power_w_per_machine", "Typical draw of the fullest machine in W; "
                                            "equals power_w on one machine."),
                    "power_basis": ("power_basis", "Where power_w comes from; always machine here (cards with the "
                                    "host they need)."),
                    "electricity_cost_per_year": ("electricity_cost_per_year", "Electricity for power_w over one "
                                                  "year (hours per day, utilization and PUE applied), in the "
                                                  "answer's currency: the option's whole operating cost (staff, "
                                                  "racks and cooling sit in the installation overhead).")},
                   "power_w"),
        "purchase": ("Buying the option's cards; null when no card price is known.", "OptionPurchase",
                     {"price": ("price", "Purchase price of one card (the request's, else the operator's "
                                "catalog)."),
                      "cards_cost": ("cards_cost", "cards x the card's price, before installation overhead; null "
                                     "when no count does the work."),
                      "capital_cost": ("capital_cost", "cards_cost plus the installation overhead (default "
                                       "50-100 %, typical 75 %) as low, typical and high; null with cards_cost."),
                      "cost_of_ownership": ("cost_of_ownership", "capital_cost plus years x "
                                            "energy.electricity_cost_per_year, as low, typical and high; null with "
                                            "cards_cost."),
                      "cost_per_million_tokens": ("cost_per_million_tokens", "Serving: typical yearly ownership "
                                                  "cost per million output tokens at serving.total_tokens_per_s, "
                                                  "hours per day and utilization; null for training or a miss."),
                      "cost_per_run": ("cost_per_run", "Training: the share of the typical yearly ownership cost "
                                       "that one run of time_s takes; null for serving or when time_s is null.")},
                     "price"),
        "rent": ("Renting the same cards instead; null when no rental price is known.", "OptionRent",
                 {"price": ("rent", "Rental price of one card for one hour (the request's, else the operator's "
                            "catalog)."),
                  "cost": ("rent_cost", "Renting the option's cards: for training, for the run's hours; for "
                           "serving, at the hours per day over the years; null when no count does the work."),
                  "break_even_months": ("break_even_months", "Months after which buying (capital, then "
                                        "electricity) costs less than renting the same cards; null without a "
                                        "purchase price, or when renting never costs more."),
                  "cheaper_below_utilization": ("rent_cheaper_below_utilization", "Share (0-1) of the hours below "
                                                "which renting only those hours costs less than owning over the "
                                                "years; 1 when renting is always cheaper. Null without a purchase "
                                                "price.")},
                 "rent")})
CompareResponseSchema = answer_schema(
    CompareResult, "CompareResponse",
    show="model mode precision target train_tokens deadline_days years currency rank_by options best lang "
         "summary assumptions warnings")


def _assumptions(**kwargs):
    return fields.List(fields.Nested(AssumptionSchema), required=True, **kwargs)


def _warnings(**kwargs):
    return fields.List(Said(), required=True, **kwargs)


class FigureSchema(Schema):
    typical = Num(required=True, allow_none=True, metadata=doc(
        "The figure's value the service uses, in the unit its key names (memory_gib, bandwidth_gb_per_s, power_w, "
        "dense_tflops.<precision>, ...); null when status is missing."))
    low = Num(required=True, allow_none=True, metadata=doc(
        "Low end of the range the guide gives; null unless status is range."))
    high = Num(required=True, allow_none=True, metadata=doc(
        "High end of the range the guide gives; null unless status is range."))
    status = fields.String(required=True, metadata=doc(
        "How the guide gives the figure: given (stated), approximate (\"about\"), range (low to high; typical is "
        "the service's pick), or missing (no figure; typical null)."))
    note = fields.String(required=True, metadata=doc(
        "Where the figure comes from: the guide's wording, why a typical value was picked from a range, or that "
        "the guide gives none; empty when there is nothing to add."))


class CardSchema(Schema):
    id = fields.String(required=True, metadata=doc(
        "Catalog id of the card or guide tier (h100-sxm, D-M); lookups also accept its aliases, "
        "case-insensitively."))
    name = fields.String(required=True, metadata=doc(
        "Full product name of a real card (NVIDIA H100 SXM5 80GB), or the tier's descriptive name (D-M "
        "data-centre balanced card)."))
    kind = fields.String(required=True, metadata=doc(
        "tier for one of the guide's ten tiers (C30 to D-L), card for a real product."))
    vendor = fields.String(required=True, allow_none=True, metadata=doc(
        "Maker of a real card (NVIDIA, AMD, Intel, Cambricon); null for the guide's tiers."))
    line = fields.String(required=True, metadata=doc("Product line: consumer, workstation or datacenter."))
    tier = fields.String(required=True, allow_none=True, metadata=doc(
        "The guide tier the card is mapped to (C90, W-B, D-M, ...); a tier carries its own code. Not null for "
        "catalog entries."))
    form_factor = fields.String(required=True, allow_none=True, metadata=doc(
        "Physical form as the vendor describes it (SXM5, OAM, PCIe dual-slot); null for the guide's tiers."))
    memory_gib = Num(required=True, metadata=doc("Memory of one card in GiB (a marketed \"80 GB\" card is 80 GiB)."))
    memory_type = fields.String(required=True, allow_none=True, metadata=doc(
        "Memory technology as the datasheet names it (HBM3, GDDR6X), or the guide's description for a tier; null "
        "when not recorded."))
    bandwidth_gb_per_s = Num(required=True, metadata=doc(
        "Datasheet memory bandwidth of one card in GB/s (1e9 bytes/s); a tier's typical figure."))
    dense_tflops = fields.Dict(keys=fields.String(), values=Num(), required=True, metadata=doc(
        "Dense peak rate per precision (fp32, tf32, bf16, fp16, fp8, int8, fp4) in TFLOP/s, TOPS for integers; "
        "sparse figures already halved. A precision without a confirmed figure is absent."))
    power_w = Num(required=True, metadata=doc(
        "Rated board power (TDP/TGP) of one card in W, the upper bound where configurable; a tier's typical "
        "figure."))
    interconnect = fields.String(required=True, metadata=doc(
        "Kind of card-to-card link: pcie (over the PCIe slot only) or dedicated (NVLink, Infinity Fabric, Xe Link "
        "and the like)."))
    interconnect_name = fields.String(required=True, allow_none=True, metadata=doc(
        "The link as the vendor names it (NVLink 4, PCIe 4.0 x16); null for the guide's tiers."))
    interconnect_gb_per_s = Num(required=True, allow_none=True, metadata=doc(
        "Card-to-card bandwidth per card in GB/s, both directions together as vendors quote it (PCIe Gen4 x16 = "
        "64); null where no figure is confirmed."))
    ecc = fields.Boolean(required=True, metadata=doc("Whether the card's memory has ECC."))
    price = fields.Nested(PriceSchema, required=True, allow_none=True, metadata=doc(
        "The purchase price of one card from the operator's catalog file; null when none is known."))
    rent_per_card_hour = fields.Nested(PriceSchema, required=True, allow_none=True, metadata=doc(
        "The rental price of one card for one hour from the operator's catalog file, with its date; "
        "null when none is known."))
    measured_bandwidth_gb_per_s = Num(required=True, allow_none=True, metadata=doc(
        "Memory bandwidth measured on a real card by the project, in GB/s; when present it replaces the default "
        "90 % achievable share in speed estimates. Null when not measured."))
    measured_dense_tflops = fields.Dict(keys=fields.String(), values=Num(), required=True, metadata=doc(
        "Dense rates measured on a real card, TFLOP/s per precision; they set the achievable compute share in "
        "estimates. Empty when not measured."))
    measured_source = fields.String(required=True, metadata=doc(
        "How and where the measured figures were taken; empty when the card has none."))
    source = fields.String(required=True, metadata=doc(
        "Where the card's figures come from: datasheet URLs and repository paths for a real card, the guide's "
        "section for a tier."))
    notes = fields.String(required=True, metadata=doc(
        "Remarks on the figures in English: sparsity halving, accumulate conventions, omitted precisions, why the "
        "card sits in its tier; empty when none."))
    aliases = fields.List(fields.String(), required=True, metadata=doc(
        "Other names that look the card up (RTX 4090, 4090); matched ignoring case, spaces, dashes and "
        "underscores."))
    figures = fields.Dict(keys=fields.String(), values=fields.Nested(FigureSchema), required=True, metadata=doc(
        "Tiers only: each guide figure by name (memory_gib, bandwidth_gb_per_s, power_w, dense_tflops.bf16, ...) "
        "with its range, status and note; empty for real cards."))

    @pre_dump
    def units(self, card_and_prices, **kwargs):
        card, price, rent = card_and_prices
        link = card.interconnect_bytes_per_s
        return {
            **_attrs(card),
            "memory_gib": card.memory_bytes / GIB,
            "bandwidth_gb_per_s": card.bandwidth_bytes_per_s / GB,
            "dense_tflops": {k: v / TERA for k, v in card.dense_flops.items()},
            "interconnect_gb_per_s": None if link is None else link / GB,
            "figures": dict(card.figures),
            "price": price,
            "rent_per_card_hour": rent,
            "measured_bandwidth_gb_per_s": None if card.measured_bandwidth_bytes_per_s is None
            else card.measured_bandwidth_bytes_per_s / GB,
            "measured_dense_tflops": {k: v / TERA for k, v in card.measured_dense_flops.items()},
        }


class _CardQuerySchema(_Strict):
    """GET /cards filters (query strings, so numbers arrive as text)."""

    line = fields.String(validate=validate.OneOf(LINES), metadata=doc(
        "Omitted: every line. Only this product line."))
    kind = fields.String(validate=validate.OneOf(("tier", "card")), metadata=doc(
        "Omitted: both. Only the guide's tiers, or only real cards."))
    vendor = fields.String(validate=validate.Length(min=1, max=40), metadata=doc(
        "Omitted: every vendor. Only this vendor (NVIDIA, AMD, Intel)."))
    tier = fields.String(validate=validate.Length(min=1, max=10), metadata=doc(
        "Omitted: every tier. Only cards of this guide tier (C90, D-M, ...)."))
    min_memory_gib = fields.Float(validate=_range(0, 100_000), allow_nan=False, metadata={
        **doc("Only cards with at least this much memory, in GiB."), "default": 0})
    limit = fields.Integer(validate=_range(1, 1000), metadata=doc(
        "Omitted: every card that passes. At most this many, from offset (a page)."))
    offset = fields.Integer(validate=_range(0, 100_000), load_default=0, metadata={
        **doc("The first card to answer, counted from 0 in catalog order (with limit: a page).", tool=True),
        "default": 0})
    lang = _summary_lang()


class _ModelQuerySchema(_Strict):
    """GET /models paging (query strings, so numbers arrive as text)."""

    limit = fields.Integer(validate=_range(1, 1000), metadata=doc(
        "Omitted: every preset. At most this many, from offset (a page)."))
    offset = fields.Integer(validate=_range(0, 100_000), load_default=0, metadata={
        **doc("The first preset to answer, counted from 0 in catalog order (with limit: a page).", tool=True),
        "default": 0})
    lang = _summary_lang()


class _EntryQuerySchema(_Strict):
    """GET /cards/{id} and /models/{id} parameters."""

    lang = _summary_lang()


class CardListSchema(Schema):
    summary = fields.String(required=True, metadata=doc(
        "The page in a sentence to quote, in the answer's language: how many of how many, and where the next page "
        "starts."))
    count = fields.Integer(required=True, metadata=doc("Number of entries in cards (this page)."))
    total = fields.Integer(required=True, metadata=doc("Number of cards that pass the filters, every page."))
    offset = fields.Integer(required=True, metadata=doc("Position of the first entry of cards among them, from 0."))
    cards = fields.List(fields.Nested(CardSchema), required=True, metadata=doc(
        "The guide's tiers and real cards that pass the filters, in catalog order (the page asked)."))


class CardAnswerSchema(CardSchema):
    """One card, as GET /cards/{id} answers it: the catalog entry and its summary."""

    summary = fields.String(required=True, metadata=doc(
        "The card in a sentence to quote, in the answer's language: memory, bandwidth, a dense rate and power."))

    @pre_dump
    def units(self, answer, **kwargs):
        *card_and_prices, summary = answer
        return {**CardSchema.units(self, tuple(card_and_prices)), "summary": summary}


class ModelPresetSchema(Schema):
    id = fields.String(required=True, metadata=doc(
        "Preset id to pass as model (llama-3.1-70b); lookups also accept name and aliases, case-insensitively."))
    name = fields.String(required=True, metadata=doc("The publisher's name for the model (Llama-3.1-70B)."))
    aliases = fields.List(fields.String(), required=True, metadata=doc(
        "Other names that look the preset up, including Hugging Face repo ids."))
    family = fields.String(required=True, allow_none=True, metadata=doc(
        "The config's model_type (llama, qwen2, deepseek_v3, ...); null for a preset given by figures rather than "
        "a config."))
    params = fields.Integer(required=True, metadata=doc(
        "Every stored parameter (all experts of an MoE), counted exactly from the config where there is one; the "
        "figure the service sizes with."))
    params_billion = Num(required=True, metadata=doc("params in billions: the same figure, params / 1e9."))
    active_params = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Parameters one token passes through (MoE); null for a dense model."))
    published_params = fields.Integer(required=True, allow_none=True, metadata=doc(
        "The total the publisher states (safetensors metadata, model card or paper), to check params against; "
        "null when none is recorded."))
    published_params_source = fields.String(required=True, metadata=doc(
        "Where published_params comes from; empty when none."))
    layers = fields.Integer(required=True, allow_none=True, metadata=doc("Transformer layers; null when not known."))
    hidden_size = fields.Integer(required=True, allow_none=True, metadata=doc("Model width; null when not known."))
    attention_heads = fields.Integer(required=True, allow_none=True, metadata=doc("Query heads; null when not known."))
    kv_heads = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Key/value heads, else attention_heads; null when neither is known."))
    head_dim = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Dimension of one attention head: as configured, else hidden_size / attention_heads; null when unknown."))
    vocab_size = fields.Integer(required=True, allow_none=True, metadata=doc("Vocabulary size; null when not known."))
    attention = fields.String(required=True, allow_none=True, metadata=doc(
        "Attention kind: mha, gqa, mqa or mla (multi-head latent); null for a preset not read from a config."))
    tied_embeddings = fields.Boolean(required=True, allow_none=True, metadata=doc(
        "Whether the output head shares the input embedding table; null when not known."))
    experts = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Routed experts per MoE layer; null for a dense model."))
    experts_per_token = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Routed experts each token uses; null for a dense model."))
    sliding_window = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Tokens of KV cache a sliding-window (or chunked) layer keeps; null when the model has none."))
    sliding_layers = fields.Integer(required=True, metadata=doc(
        "Number of layers that use the sliding window; 0 when none."))
    kv_cache_bytes_per_token_bf16 = fields.Integer(required=True, allow_none=True, metadata=doc(
        "KV cache bytes one token adds over all layers at 2 bytes per value (MLA: its latent), every layer "
        "counted in full; null when the shape is unknown."))
    max_context_tokens = fields.Integer(required=True, allow_none=True, metadata=doc(
        "The most positions the model was built for; a longer context is answered with a warning."))
    context_source = fields.String(required=True, metadata=doc(
        "Where max_context_tokens comes from (max_position_embeddings, rope scaling)."))
    released_precision = fields.String(required=True, allow_none=True, metadata=doc(
        "The format the published checkpoint ships in; inference defaults to it."))
    released_precision_source = fields.String(required=True, metadata=doc(
        "Where released_precision comes from; empty when none is recorded."))
    released_experts_only = fields.Boolean(required=True, metadata=doc(
        "The released format covers only the routed experts; every other tensor ships in 16-bit."))
    source = fields.String(required=True, metadata=doc(
        "Where the architecture figures come from: the config.json copied (repository, path, commit) or the "
        "entry's own source."))
    notes = fields.String(required=True, metadata=doc(
        "What the numbers do not show (config-class defaults, checkpoint buffers, multimodal parts); empty when "
        "none."))

    @pre_dump
    def flatten(self, preset, **kwargs):
        spec = preset.spec
        per_layer = spec.kv_values_per_token_per_layer
        return {**_attrs(spec), "id": preset.id, "aliases": preset.aliases,
                "params_billion": spec.params / 1e9, "notes": preset.notes,
                "head_dim": spec.resolved_head_dim, "kv_heads": spec.resolved_kv_heads,
                "published_params": preset.published_params,
                "published_params_source": preset.published_params_source,
                "kv_cache_bytes_per_token_bf16":
                    None if per_layer is None or spec.layers is None else per_layer * 2 * spec.layers}



class ModelAnswerSchema(ModelPresetSchema):
    """One model preset, as GET /models/{id} answers it: the preset and its summary."""

    summary = fields.String(required=True, metadata=doc(
        "The model in a sentence to quote, in the answer's language: parameters, layers, KV cache per token and "
        "the format it ships in."))

    @pre_dump
    def flatten(self, answer, **kwargs):
        preset, summary = answer
        return {**ModelPresetSchema.flatten(self, preset), "summary": summary}

class ModelListSchema(Schema):
    summary = fields.String(required=True, metadata=doc(
        "The page in a sentence to quote, in the answer's language: how many of how many, and where the next page "
        "starts."))
    count = fields.Integer(required=True, metadata=doc("Number of presets in models (this page)."))
    total = fields.Integer(required=True, metadata=doc("Number of presets, every page."))
    offset = fields.Integer(required=True, metadata=doc("Position of the first entry of models, from 0."))
    models = fields.List(fields.Nested(ModelPresetSchema), required=True, metadata=doc(
        "The model presets, in catalog order (the page asked)."))


class HealthSchema(Schema):
    status = fields.String(required=True, metadata=doc(
        "ok from /healthz while the process serves requests; ready from /readyz once the catalogs and the "
        "contract are loaded."))












class LineExclusionSchema(Schema):
    line = fields.String(required=True, metadata=doc(
        "The product line ruled out: consumer, workstation or datacenter."))
    reason = Said(required=True, metadata=doc(
        "Why the constraints rule it out: hours of continuous running, ECC required, or certified drivers "
        "required."))


class ScenarioCheckSchema(Schema):
    id = fields.String(required=True, metadata=doc(
        "The guide scenario: developer, team_inference or training_cluster."))
    title = Said(required=True, metadata=doc("The scenario as the guide states it."))
    guide_answer = Said(required=True, metadata=doc("The guide's own answer for the scenario."))
    agrees = fields.Boolean(required=True, metadata=doc(
        "Whether the service chose one of the tiers the guide names (the count may differ)."))
    comparison = fields.List(Said(), required=True, metadata=doc(
        "One sentence per tier the guide names: chosen too, not evaluated, fits with a lower figure, or why the "
        "service disagrees."))


class RecommendResponseSchema(Schema):
    line = fields.String(required=True, metadata=doc(
        "The product line recommended; when no tier qualifies, the highest line the constraints allow."))
    tier = fields.Nested(CardInfoSchema, required=True, allow_none=True, metadata=doc(
        "The guide tier chosen, as a brief card (not a tier code); null when no tier qualifies."))
    count = fields.Integer(required=True, allow_none=True, metadata=doc(
        "Cards of the chosen tier; null when no tier qualifies."))
    ranked_by = fields.String(required=True, metadata=doc(
        "How the choice was made: a figure name (total_tokens_per_s, ...), that figure \"per unit of cost\", fewest "
        "cards or cost for the target, or none when nothing qualifies."))
    value = Num(required=True, allow_none=True, metadata=doc(
        "The chosen tier's figure (tokens/s, or its card count with a target), as in candidates; null when no "
        "tier qualifies."))
    example_cards = fields.List(fields.Nested(CardInfoSchema), required=True, metadata=doc(
        "Real catalog cards of the chosen tier that hold the job on count cards; empty when none."))
    excluded_lines = fields.List(fields.Nested(LineExclusionSchema), required=True, metadata=doc(
        "Product lines the constraints rule out, each with why."))
    candidates = fields.List(fields.Nested(CandidateSchema), required=True, metadata=doc(
        "Every tier evaluated, line by line up to the one chosen."))
    host = fields.Nested(HostSchema, required=True, allow_none=True, metadata=doc(
        "The machine around count x the chosen tier: PSU, host RAM, CPU cores, power and rack needs; null when no "
        "tier qualifies."))
    reasons = fields.List(Said(), required=True, metadata=doc(
        "The decision step by step: the line as the lowest allowed, each line ruled out or passed over and why, "
        "then the tier, count and figure chosen."))
    lang = fields.String(required=True, metadata=doc("Language of summary, reasons and warnings: en or zh."))
    summary = fields.String(required=True, metadata=doc(
        "One sentence a chatbot can quote: the count, tier, line and the figure it wins by, or that nothing "
        "qualifies."))
    scenario = fields.Nested(ScenarioCheckSchema, required=True, allow_none=True, metadata=doc(
        "The recommendation checked against the guide's answer for the scenario asked; null when no scenario was "
        "given."))
    assumptions = _assumptions(metadata=doc(
        "Each default applied (the scenario's model, workload and constraints included), with its value and why."))
    warnings = _warnings(metadata=doc(
        "Cautions such as no tier meeting the constraints, a budget that cannot be checked without prices, or a "
        "long context."))


class NormalizeResponseSchema(Schema):
    summary = fields.String(required=True, metadata=doc(
        "The figure in a sentence to quote, in the answer's language: dense in its own precision and in BF16."))
    value = Num(required=True, metadata=doc("The marketing figure as given, in the caller's unit (TFLOP/s or TOPS)."))
    precision = fields.String(required=True, metadata=doc(
        "The precision of the figure, lower-cased: fp4, int4, fp8, int8, bf16, fp16 or tf32."))
    sparse = fields.Boolean(required=True, metadata=doc("Whether the figure was quoted with 2:4 sparsity, as given."))
    accumulate = fields.String(required=True, allow_none=True, metadata=doc(
        "Accumulate precision given (fp16 or fp32); null when none was given."))
    dense_value = Num(required=True, metadata=doc(
        "Dense figure in the given precision: halved for sparsity and for FP16 accumulate (fp16, bf16, fp8 only), "
        "in the caller's unit."))
    dense_bf16 = Num(required=True, metadata=doc(
        "dense_value converted to dense BF16 by the ladder (FP8/INT8 / 2, FP4/INT4 / 4, TF32 x 2)."))
    dense = fields.Dict(keys=fields.String(), values=Num(), required=True, metadata=doc(
        "Dense figure for each precision of the ladder (fp4, int4, fp8, int8, bf16, fp16, tf32), from dense_bf16; "
        "repeats dense_value and dense_bf16 at their keys."))
    rules = fields.List(Said(), required=True, metadata=doc(
        "Each conversion applied, in order, as an English sentence (sparsity, FP16 accumulate, precision to "
        "bf16); empty when none applied."))

    @pre_dump
    def flatten(self, result, **kwargs):
        return {**_attrs(result), "dense": dict(result.dense)}


class TroubleshootMatchSchema(Schema):
    id = fields.String(required=True, metadata=doc(
        "Row id of the guide's table: fragmentation, throttling, interconnect, psu, silent_errors, "
        "software_stack, network or firmware."))
    symptom = fields.String(required=True, metadata=doc("The table's symptom, in the answer's language."))
    cause = fields.String(required=True, metadata=doc("Most likely cause of the symptom."))
    check = fields.String(required=True, metadata=doc("Quick check that confirms the cause."))
    fix = fields.String(required=True, metadata=doc("What to do about it."))
    score = Num(required=True, metadata=doc(
        "BM25 relevance of the row to the query (at least 1); compare within one answer only."))
    matched = fields.List(fields.String(), required=True, metadata=doc("Phrases of the query found in the row."))
    source = fields.String(required=True, metadata=doc("The guide's sections the row draws on."))


class TroubleshootResponseSchema(Schema):
    summary = fields.String(required=True, metadata=doc(
        "The answer in a sentence to quote, in its language: the likeliest cause and its quick check, or that "
        "nothing matches."))
    query = fields.String(required=True, metadata=doc("The symptom text as sent."))
    lang = fields.String(required=True, metadata=doc("Language of the rows, steps, lessons and advice: en or zh."))
    matches = fields.List(fields.Nested(TroubleshootMatchSchema), required=True, metadata=doc(
        "Matching rows, best first, at most limit; rows below a quarter of the best score are left out. Empty "
        "when nothing matches."))
    diagnosis_order = fields.List(fields.String(), required=True, metadata=doc(
        "The guide's five steps for long-running faults, in order, each with what to look at and how to check it."))
    lessons = fields.List(fields.String(), required=True, metadata=doc(
        "The guide's lessons: identical machines, never skimp on the interconnect, benchmark on arrival."))
    advice = fields.List(fields.String(), required=True, metadata=doc(
        "Power-cap advice for consumer cards running for hours: given when line is consumer, the best row is "
        "throttling, or the query mentions long runs (not for datacenter); else empty."))
    source = fields.String(required=True, metadata=doc("The guide's section for the diagnosis order."))


class BatchItemSchema(Schema):
    index = fields.Integer(required=True, metadata=doc(
        "Position of the item, from 0: in the request's items for a batch, in catalog order of the cards for a "
        "sweep."))
    ok = fields.Boolean(required=True, metadata=doc(
        "Whether the item answered: true with estimate, false with problem."))
    estimate = fields.Nested(EstimateResponseSchema, metadata=doc(
        "The item's estimate, as POST /estimate answers it but with alternatives left empty; present only when ok "
        "is true."))
    problem = fields.Nested(ProblemSchema, metadata=doc(
        "Why the item failed (422 problem details); present only when ok is false. The batch itself still answers "
        "200."))


class BatchResponseSchema(Schema):
    count = fields.Integer(required=True, metadata=doc(
        "Number of items answered, one per request item (or per card for a sweep), failures included."))
    items = fields.List(fields.Nested(BatchItemSchema), required=True, metadata=doc(
        "One entry per request item, in order (a sweep: one per card that passes the filters, in catalog order)."))
