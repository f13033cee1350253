"""Request and response schemas, each named after its component in openapi.yaml.

Requests are strict: unknown fields and wrong types (a number sent as "3.5", a bool as a
number) are rejected, and every number has a physical range. Responses dump the domain's
answers; floats are rounded to 12 significant digits so that 61320 does not read 61319.99999.
"""

import functools
import math
from dataclasses import fields as dc_fields

from marshmallow import Schema, ValidationError, fields, post_load, pre_dump, validate, validates_schema

from ..sizing import defaults
from ..sizing.catalog import INTERCONNECT_KINDS, LINES, Card, custom_card
from ..sizing.normalize import ACCUMULATE, LADDER
from ..sizing.ranking import DIMENSIONS
from ..sizing.recommend import SCENARIOS, Constraints
from ..sizing.hfconfig import model_from_hf_config
from ..sizing.capacity import Target
from ..sizing.inputs import EnergyInput, HardwareInput, WorkloadInput
from ..sizing.model import ModelSpec
from ..sizing.plan import Parallelism
from ..sizing.precision import PRECISION_NAMES
from ..sizing.engines import ENGINE_NAMES
from ..sizing.training import OPTIMIZERS, RECOMPUTE_MODES
from ..sizing.units import GB, GIB, TERA, billions_to_count
from .catalogs import current_catalogs

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


class Num(fields.Float):
    """A float in an answer, rounded to 12 significant digits."""

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        return float(f"{value:.12g}")


def _fail(message: str):
    raise ValidationError(message)


def _range(low=None, high=None, low_inclusive=True):
    return validate.Range(min=low, max=high, min_inclusive=low_inclusive)


def _lang():
    return fields.String(validate=validate.OneOf(defaults.LANGS))


def _currency():
    return fields.String(validate=validate.Length(min=1, max=10))


def _positive(high):
    return validate.Range(min=0, max=high, min_inclusive=False)


_NAME = validate.Length(min=1, max=200)


class _Strict(Schema):
    class Meta:
        unknown = "raise"


# --- requests -----------------------------------------------------------------------------


class ModelSpecSchema(_Strict):
    """A model given by its size and, optionally, its architecture."""

    params_billion = StrictFloat(required=True, validate=_positive(1e5))
    active_params_billion = StrictFloat(validate=_positive(1e5))
    layers = StrictInteger(validate=_range(1, 10_000))
    hidden_size = StrictInteger(validate=_range(1, 1_000_000))
    attention_heads = StrictInteger(validate=_range(1, 100_000))
    kv_heads = StrictInteger(validate=_range(1, 100_000))
    head_dim = StrictInteger(validate=_range(1, 100_000))
    vocab_size = StrictInteger(validate=_range(1, 10_000_000))
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
        )


class CardSpecSchema(_Strict):
    """A card given by its figures instead of a catalog id."""

    memory_gib = StrictFloat(required=True, validate=_positive(100_000))
    bandwidth_gb_per_s = StrictFloat(required=True, validate=_range(0.001, 1_000_000))
    dense_tflops = fields.Dict(
        keys=fields.String(validate=validate.OneOf(COMPUTE_PRECISIONS)),
        values=StrictFloat(validate=_range(0.001, 1_000_000)),
        required=True,
        validate=lambda rates: len(rates) >= 1 or _fail("Give at least one dense rate."),
    )
    power_w = StrictFloat(required=True, validate=_positive(1_000_000))
    interconnect_gb_per_s = StrictFloat(validate=_range(0.001, 1_000_000))
    interconnect = fields.String(validate=validate.OneOf(INTERCONNECT_KINDS))
    line = fields.String(required=True, validate=validate.OneOf(LINES))
    ecc = StrictBoolean()
    name = fields.String(validate=_NAME)

    @post_load
    def to_domain(self, data, **kwargs) -> Card:
        return custom_card(**data)


class HfConfigModelSchema(_Strict):
    """A model given by its Hugging Face config.json."""

    hf_config = fields.Dict(keys=fields.String(), required=True)
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
    default_error_messages = {"invalid": "Give a catalog name (string) or an object."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            if not 1 <= len(value) <= 200:
                raise ValidationError("A name is 1 to 200 characters.")
            return self.lookup(value)
        if isinstance(value, dict):
            for marker, schema in self.object_schemas:
                if marker is None or marker in value:
                    return _instance(schema).load(value)
        raise self.make_error("invalid")


class ModelField(_OneOf):
    object_schemas = (("hf_config", HfConfigModelSchema), (None, ModelSpecSchema))

    def lookup(self, name: str) -> ModelSpec:
        return current_catalogs().models.get(name, "model").spec


class CardField(_OneOf):
    object_schemas = ((None, CardSpecSchema),)

    def lookup(self, name: str) -> Card:
        return current_catalogs().cards.get(name, "hardware.card")


class ParallelismSpecSchema(_Strict):
    """How the work is split over the cards; the degrees multiply to the card count."""

    tensor = StrictInteger(validate=_range(1, 1024))
    pipeline = StrictInteger(validate=_range(1, 10_000))
    expert = StrictInteger(validate=_range(1, 100_000))
    data = StrictInteger(validate=_range(1, defaults.MAX_CARDS))
    replicas = StrictInteger(validate=_range(1, defaults.MAX_CARDS))

    @validates_schema
    def not_too_many(self, data, **kwargs):
        cards = math.prod(data.values())
        if cards > defaults.MAX_CARDS:
            raise ValidationError(f"The degrees multiply to {cards} cards; at most "
                                  f"{defaults.MAX_CARDS} are sized.", "tensor")

    @post_load
    def to_domain(self, data, **kwargs) -> Parallelism:
        return Parallelism(**data)


class TargetSpecSchema(_Strict):
    """What a serving deployment must sustain."""

    concurrent_users = StrictInteger(required=True, validate=_range(1, 10_000_000))
    tokens_per_s_per_user = StrictFloat(validate=_positive(100_000))
    ttft_s = StrictFloat(validate=_positive(86_400))

    @post_load
    def to_domain(self, data, **kwargs) -> Target:
        return Target(**data)


class WorkloadSpecSchema(_Strict):
    """What the model is asked to do."""

    mode = fields.String(validate=validate.OneOf(defaults.MODES))
    precision = fields.String(validate=validate.Length(min=1, max=40))
    kv_precision = fields.String(validate=validate.Length(min=1, max=40))
    context_tokens = StrictInteger(validate=_range(1, 10_000_000))
    batch_size = StrictInteger(validate=_range(1, 1_000_000))
    train_tokens = StrictFloat(validate=_range(1, 1e16))
    mfu = StrictFloat(validate=_range(0.01, 1))
    decode_efficiency = StrictFloat(validate=_range(0.01, 1))
    scaling_efficiency = StrictFloat(validate=_range(0.01, 1))
    optimizer = fields.String(validate=validate.OneOf(tuple(OPTIMIZERS)))
    zero_stage = StrictInteger(validate=_range(0, 3))
    tensor_parallel = StrictInteger(validate=_range(1, 1024))
    pipeline_parallel = StrictInteger(validate=_range(1, 1024))
    recompute = fields.String(validate=validate.OneOf(RECOMPUTE_MODES))
    lora_rank = StrictInteger(validate=_range(1, 4096))
    lora_targets = fields.String(validate=validate.OneOf(("attention", "all_linear")))
    prompt_tokens = StrictInteger(validate=_range(1, 10_000_000))
    engine = fields.String(validate=validate.OneOf(ENGINE_NAMES))
    overlap = StrictFloat(validate=_range(0, 1))
    parallelism = fields.Nested(ParallelismSpecSchema)
    output_tokens = StrictInteger(validate=_range(1, 10_000_000))
    global_batch_tokens = StrictFloat(validate=_range(1, 1e12))

    @post_load
    def to_domain(self, data, **kwargs) -> WorkloadInput:
        return WorkloadInput(**data)


class HardwareSpecSchema(_Strict):
    """Which card, and how many (omitted: the least count that fits)."""

    card = CardField(required=True)
    count = StrictInteger(validate=_range(1, defaults.MAX_CARDS))
    cards_per_node = StrictInteger(validate=_range(1, 1024))
    network_gb_per_s = StrictFloat(validate=_range(0.001, 1_000_000))

    @post_load
    def to_domain(self, data, **kwargs) -> HardwareInput:
        return HardwareInput(**data)


class EnergySpecSchema(_Strict):
    """Electricity price and how the installation runs."""

    price_per_kwh = StrictFloat(validate=_range(0, 1_000_000))
    currency = _currency()
    pue = StrictFloat(validate=_range(1, 5))
    utilization = StrictFloat(validate=_range(0, 1))
    hours_per_day = StrictFloat(validate=_range(0, 24))
    years = StrictFloat(validate=_range(0.01, 100))
    machines = StrictInteger(validate=_range(1, 10_000_000))

    @post_load
    def to_domain(self, data, **kwargs) -> EnergyInput:
        return EnergyInput(**data)


def _workload():
    return fields.Nested(WorkloadSpecSchema, load_default=lambda: WorkloadInput())


def _energy():
    return fields.Nested(EnergySpecSchema, load_default=lambda: EnergyInput())


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
    target = fields.Nested(TargetSpecSchema)
    lang = _lang()


class MemoryRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = _workload()
    hardware = fields.Nested(HardwareSpecSchema)


class ThroughputRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = _workload()
    hardware = fields.Nested(HardwareSpecSchema, required=True)


class ScalingRequestSchema(_Strict):
    model = ModelField(required=True)
    workload = fields.Nested(WorkloadSpecSchema, required=True)
    hardware = fields.Nested(HardwareSpecSchema, required=True)
    deadline_days = StrictFloat(validate=_range(0.001, 100_000))


class CostRequestSchema(_Strict):
    hardware = fields.Nested(HardwareSpecSchema)
    power_w = StrictFloat(validate=_positive(1e9))
    energy = _energy()
    card_price = _price()
    overhead_fraction = _overhead()

    @validates_schema
    def one_source_of_power(self, data, **kwargs):
        if ("hardware" in data) == ("power_w" in data):
            raise ValidationError("Give exactly one of hardware and power_w.", "power_w")


class _EstimateQuerySchema(_Strict):
    """GET /estimate: the flat parameters a chatbot sends (query strings: numbers as text)."""

    model = fields.String(required=True, validate=_NAME)
    card = fields.String(required=True, validate=_NAME)
    count = fields.Integer(validate=_range(1, defaults.MAX_CARDS))
    mode = fields.String(validate=validate.OneOf(defaults.MODES))
    precision = fields.String(validate=validate.Length(min=1, max=40))
    kv_precision = fields.String(validate=validate.Length(min=1, max=40))
    context_tokens = fields.Integer(validate=_range(1, 10_000_000))
    batch_size = fields.Integer(validate=_range(1, 1_000_000))
    train_tokens = fields.Float(validate=_range(1, 1e16), allow_nan=False)
    engine = fields.String(validate=validate.OneOf(ENGINE_NAMES))
    price_per_kwh = fields.Float(validate=_range(0, 1_000_000), allow_nan=False)
    currency = _currency()
    lang = _lang()

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
    """Many estimates in one call; each item is an EstimateRequest, checked on its own (an item
    that is not one is that item's problem). More than 1000 items is a 413."""

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
    target = fields.Nested(TargetSpecSchema)
    lang = _lang()


class CapacityRequestSchema(_Strict):
    """A serving target on cards named or filtered from the catalog (every card when neither)."""

    model = ModelField(required=True)
    workload = _workload()
    target = fields.Nested(TargetSpecSchema, required=True)
    cards = fields.List(fields.String(validate=_NAME), validate=validate.Length(min=1, max=200))
    filters = fields.Nested(SweepFiltersSchema)
    cards_per_node = StrictInteger(validate=_range(1, 1024))
    network_gb_per_s = StrictFloat(validate=_range(0.001, 1_000_000))
    lang = _lang()

    @validates_schema
    def cards_or_filters(self, data, **kwargs):
        if "cards" in data and "filters" in data:
            raise ValidationError("Give cards or filters, not both.", "filters")


class RankRequestSchema(_Strict):
    line = fields.String(validate=validate.OneOf(LINES))
    cards = fields.List(fields.String(validate=_NAME), validate=validate.Length(min=1, max=200))
    weights = fields.Dict(keys=fields.String(validate=validate.OneOf(DIMENSIONS)),
                          values=StrictFloat(validate=_range(0, 1000)))
    model = ModelField()
    workload = _workload()
    count = StrictInteger(validate=_range(1, defaults.MAX_CARDS))


class ConstraintsSpecSchema(_Strict):
    """The guide's questions (power per card, continuous hours, splitting) and two more."""

    power_w = StrictFloat(validate=_positive(100_000))
    continuous_hours = StrictFloat(validate=_range(0, 1_000_000))
    splittable = StrictBoolean()
    budget = StrictFloat(validate=_range(0, 1e15))
    certified_drivers = StrictBoolean()
    ecc = StrictBoolean()

    @post_load
    def to_domain(self, data, **kwargs) -> Constraints:
        return Constraints(**data)


class RecommendRequestSchema(_Strict):
    scenario = fields.String(validate=validate.OneOf(tuple(SCENARIOS)))
    model = ModelField()
    workload = fields.Nested(WorkloadSpecSchema)
    constraints = fields.Nested(ConstraintsSpecSchema)
    prices = fields.Dict(keys=fields.String(validate=_NAME), values=StrictFloat(validate=_positive(1e12)))
    currency = _currency()
    target = fields.Nested(TargetSpecSchema)
    lang = _lang()

    @validates_schema
    def model_or_scenario(self, data, **kwargs):
        if "model" not in data and "scenario" not in data:
            raise ValidationError("Give a model, or one of the guide's scenarios.", "model")


class NormalizeRequestSchema(_Strict):
    value = StrictFloat(required=True, validate=_positive(1e9))
    precision = fields.String(required=True, validate=validate.OneOf(tuple(LADDER)))
    sparse = StrictBoolean(load_default=False)
    accumulate = fields.String(validate=validate.OneOf(ACCUMULATE))


class _TroubleshootQuerySchema(_Strict):
    """GET /troubleshoot parameters."""

    q = fields.String(required=True, validate=validate.Length(min=1, max=500))
    lang = _lang()
    line = fields.String(validate=validate.OneOf(LINES))
    limit = fields.Integer(validate=_range(1, 8))


# --- responses ----------------------------------------------------------------------------


def _attrs(obj) -> dict:
    """A frozen dataclass's fields as a shallow dict."""
    return {f.name: getattr(obj, f.name) for f in dc_fields(obj)}


class ProblemErrorSchema(Schema):
    field = fields.String(required=True)
    message = fields.String(required=True)


class ProblemSchema(Schema):
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    instance = fields.String(required=True)
    errors = fields.List(fields.Nested(ProblemErrorSchema), required=True)
    request_id = fields.String(required=True)


class AssumptionSchema(Schema):
    name = fields.String(required=True)
    value = fields.Raw(required=True)
    note = fields.String(required=True)


class ModelInfoSchema(Schema):
    name = fields.String(required=True)
    params = fields.Integer(required=True)
    active_params = fields.Integer(required=True, allow_none=True)
    layers = fields.Integer(required=True, allow_none=True)
    kv_heads = fields.Integer(required=True, allow_none=True)
    head_dim = fields.Integer(required=True, allow_none=True, attribute="resolved_head_dim")
    source = fields.String(required=True)


class CardInfoSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    line = fields.String(required=True)
    tier = fields.String(required=True, allow_none=True)
    memory_gib = Num(required=True)
    bandwidth_gb_per_s = Num(required=True)
    power_w = Num(required=True)

    @pre_dump
    def units(self, card: Card, **kwargs):
        return {**_attrs(card), "memory_gib": card.memory_bytes / GIB,
                "bandwidth_gb_per_s": card.bandwidth_bytes_per_s / GB}


class MemoryComponentSchema(Schema):
    name = fields.String(required=True)
    bytes = fields.Integer(required=True)
    note = fields.String(required=True)


class MemoryBreakdownSchema(Schema):
    weights_bytes = fields.Integer(required=True)
    expert_weights_bytes = fields.Integer(required=True)
    training_state_bytes = fields.Integer(required=True)
    model_state_bytes = fields.Integer(required=True)
    kv_cache_bytes = fields.Integer(required=True, allow_none=True)
    kv_cache_bytes_per_token = fields.Integer(required=True, allow_none=True)
    kv_cache_bytes_per_sequence = fields.Integer(required=True, allow_none=True)
    activations_bytes = fields.Integer(required=True, allow_none=True)
    runtime_overhead_bytes = fields.Integer(required=True)
    total_bytes = fields.Integer(required=True)
    total_gib = Num(required=True)
    bytes_per_param = Num(required=True)
    bytes_per_param_low = Num(required=True)
    bytes_per_param_high = Num(required=True)
    components = fields.List(fields.Nested(MemoryComponentSchema), required=True)

    @pre_dump
    def units(self, breakdown, **kwargs):
        if isinstance(breakdown, dict):
            return breakdown
        return {**_attrs(breakdown), "total_gib": breakdown.total_bytes / GIB}


class FitSchema(Schema):
    card = fields.String(required=True, attribute="card_id")
    count = fields.Integer(required=True)
    count_given = fields.Boolean(required=True)
    fits = fields.Boolean(required=True)
    cards_needed = fields.Integer(required=True, allow_none=True)
    card_memory_bytes = fields.Integer(required=True)
    usable_bytes_per_card = fields.Integer(required=True)
    need_bytes_per_card = fields.Integer(required=True)
    model_state_bytes_per_card = fields.Integer(required=True)
    free_bytes_per_card = fields.Integer(required=True)
    total_bytes = fields.Integer(required=True)
    max_concurrent_sequences = fields.Integer(required=True, allow_none=True)
    reason = fields.String(required=True)


class ParallelismSchema(Schema):
    """The plan an answer used (its degrees multiply to `cards`)."""

    tensor = fields.Integer(required=True)
    pipeline = fields.Integer(required=True)
    expert = fields.Integer(required=True)
    data = fields.Integer(required=True)
    replicas = fields.Integer(required=True)
    cards = fields.Integer(required=True)
    idle_cards = fields.Integer(required=True)
    machines = fields.Integer(required=True)
    cards_per_machine = fields.Integer(required=True)
    given = fields.Boolean(required=True)
    description = fields.String(required=True)
    micro_batch = fields.Integer(required=True, allow_none=True)
    gradient_accumulation = fields.Integer(required=True, allow_none=True)
    global_batch_tokens = fields.Integer(required=True, allow_none=True)


class DecodeStepSchema(Schema):
    """A decode.StepCost: the batch it ran is `sequences`."""

    sequences = fields.Integer(required=True, attribute="batch")
    memory_s = Num(required=True)
    compute_s = Num(required=True)
    roofline_s = Num(required=True)
    engine_s = Num(required=True)
    tensor_comm_s = Num(required=True)
    expert_comm_s = Num(required=True)
    pipeline_comm_s = Num(required=True)
    step_s = Num(required=True)


class RangeSchema(Schema):
    low = Num(required=True)
    typical = Num(required=True)
    high = Num(required=True)


class DecodePointSchema(Schema):
    batch_size = fields.Integer(required=True)
    decode_tokens_per_s = Num(required=True)
    total_tokens_per_s = Num(required=True)
    total_tokens_per_s_ceiling = Num(required=True)
    bound = fields.String(required=True)
    fits = fields.Boolean(required=True)


class ThroughputSchema(Schema):
    cards = fields.Integer(required=True)
    batch_size = fields.Integer(required=True)
    engine = fields.String(required=True)
    compute_precision = fields.String(required=True)
    peak_flops_per_s = Num(required=True)
    bandwidth_bytes_per_s = Num(required=True)
    ridge_flops_per_byte = Num(required=True)
    arithmetic_intensity_flops_per_byte = Num(required=True)
    attainable_flops_per_s = Num(required=True)
    bound = fields.String(required=True)
    bytes_per_step = fields.Integer(required=True)
    weights_read_bytes_per_step = fields.Integer(required=True)
    flops_per_token = fields.Integer(required=True)
    decode_efficiency = Num(required=True)
    decode_efficiency_range = fields.Nested(RangeSchema, required=True)
    achievable_bandwidth_fraction = Num(required=True)
    decode_tokens_per_s_ceiling = Num(required=True)
    decode_tokens_per_s_achievable = Num(required=True)
    decode_tokens_per_s_expected = Num(required=True)
    decode_tokens_per_s_range = fields.Nested(RangeSchema, required=True)
    decode_tokens_per_s_guide = Num(required=True)
    total_tokens_per_s_guide = Num(required=True)
    total_tokens_per_s_ceiling = Num(required=True)
    total_tokens_per_s = Num(required=True)
    total_tokens_per_s_range = fields.Nested(RangeSchema, required=True)
    max_concurrent_sequences = fields.Integer(required=True, allow_none=True)
    link = fields.String(required=True, allow_none=True)
    link_bytes_per_s = Num(required=True, allow_none=True)
    link_latency_s = Num(required=True, allow_none=True)
    decode_step = fields.Nested(DecodeStepSchema, required=True)
    prompt_tokens = fields.Integer(required=True)
    prefill_flops = Num(required=True)
    prefill_bound = fields.String(required=True)
    time_to_first_token_s = Num(required=True)
    time_to_first_token_s_range = fields.Nested(RangeSchema, required=True)
    prefill_tokens_per_s = Num(required=True)
    output_tokens = fields.Integer(required=True)
    max_total_tokens_per_s = Num(required=True, allow_none=True)
    max_total_tokens_per_s_range = fields.Nested(RangeSchema, required=True, allow_none=True)
    max_total_tokens_per_s_ceiling = Num(required=True, allow_none=True)
    capacity_batch_size = fields.Integer(required=True, allow_none=True)
    capacity_time_to_first_token_s = Num(required=True, allow_none=True)
    time_per_output_token_s = Num(required=True, allow_none=True)
    capacity_bound = fields.String(required=True, allow_none=True)
    decode_curve = fields.List(fields.Nested(DecodePointSchema), required=True)


class TrainingSchema(Schema):
    cards = fields.Integer(required=True)
    nodes = fields.Integer(required=True)
    cards_per_node = fields.Integer(required=True)
    train_tokens = Num(required=True, allow_none=True)
    flops_per_param_token = Num(required=True)
    compute_flops = Num(required=True, allow_none=True)
    hardware_flops = Num(required=True, allow_none=True)
    peak_flops_per_s = Num(required=True)
    mfu = Num(required=True)
    scaling_efficiency = Num(required=True)
    method = fields.String(required=True)
    time_s_linear = Num(required=True, allow_none=True)
    time_s = Num(required=True, allow_none=True)
    time_days = Num(required=True, allow_none=True)
    time_s_range = fields.Nested(RangeSchema, required=True, allow_none=True)
    time_s_guide_curve = Num(required=True, allow_none=True)
    gradient_bytes = fields.Integer(required=True)
    interconnect_bytes_per_s = Num(required=True, allow_none=True)
    network_bytes_per_s_per_node = Num(required=True)
    link = fields.String(required=True, allow_none=True)
    gradient_sync_s = Num(required=True, allow_none=True)
    step_compute_s = Num(required=True)
    step_time_s = Num(required=True, allow_none=True)
    global_batch_tokens = fields.Integer(required=True)
    global_batch_tokens_asked = Num(required=True)
    micro_batch = fields.Integer(required=True)
    gradient_accumulation = fields.Integer(required=True)
    steps = Num(required=True, allow_none=True)
    tensor_comm_s = Num(required=True, allow_none=True)
    expert_comm_s = Num(required=True, allow_none=True)
    pipeline_bubble_s = Num(required=True, allow_none=True)
    pipeline_comm_s = Num(required=True, allow_none=True)
    data_comm_s = Num(required=True, allow_none=True)
    data_comm_exposed_s = Num(required=True, allow_none=True)
    overlap = Num(required=True)
    step_s = Num(required=True, allow_none=True)
    step_efficiency = Num(required=True, allow_none=True)
    effective_mfu = Num(required=True, allow_none=True)


class EnergySchema(Schema):
    power_w = Num(required=True)
    hours_per_day = Num(required=True)
    utilization = Num(required=True)
    pue = Num(required=True)
    price_per_kwh = Num(required=True)
    currency = fields.String(required=True)
    machines = fields.Integer(required=True)
    years = Num(required=True)
    energy_kwh_per_day = Num(required=True)
    energy_kwh_per_year = Num(required=True)
    electricity_cost_per_day = Num(required=True)
    electricity_cost_per_year = Num(required=True)
    fleet_energy_kwh_per_year = Num(required=True)
    fleet_electricity_cost_per_year = Num(required=True)
    electricity_cost_over_years = Num(required=True)
    fleet_electricity_cost_over_years = Num(required=True)


def _assumptions():
    return fields.List(fields.Nested(AssumptionSchema), required=True)


def _warnings():
    return fields.List(fields.String(), required=True)


class MemoryResponseSchema(MemoryBreakdownSchema):
    model = fields.Nested(ModelInfoSchema, required=True)
    mode = fields.String(required=True)
    precision = fields.String(required=True)
    kv_precision = fields.String(required=True)
    fit = fields.Nested(FitSchema, required=True, allow_none=True)
    fits = fields.Boolean(required=True, allow_none=True)
    cards_needed = fields.Integer(required=True, allow_none=True)
    parallelism = fields.Nested(ParallelismSchema, required=True, allow_none=True)

    assumptions = _assumptions()
    warnings = _warnings()

    @pre_dump
    def units(self, result, **kwargs):
        breakdown = result.breakdown
        return {
            **_attrs(breakdown),
            "total_gib": breakdown.total_bytes / GIB,
            "model": result.model,
            "mode": result.workload.mode,
            "precision": result.workload.precision.name,
            "kv_precision": result.workload.kv_precision.name,
            "fit": result.fit,
            "fits": None if result.fit is None else result.fit.fits,
            "cards_needed": None if result.fit is None else result.fit.cards_needed,
            "parallelism": result.parallelism,
            "assumptions": result.assumptions,
            "warnings": result.warnings,
        }


class ThroughputResponseSchema(ThroughputSchema):
    model = fields.Nested(ModelInfoSchema, required=True)
    card = fields.Nested(CardInfoSchema, required=True)
    precision = fields.String(required=True)
    fit = fields.Nested(FitSchema, required=True)
    parallelism = fields.Nested(ParallelismSchema, required=True)

    assumptions = _assumptions()
    warnings = _warnings()

    @pre_dump
    def flatten(self, result, **kwargs):
        return {**_attrs(result.throughput), "model": result.model, "card": result.card,
                "precision": result.workload.precision.name, "fit": result.fit,
                "parallelism": result.parallelism,
                "assumptions": result.assumptions, "warnings": result.warnings}


class ScalingPointSchema(Schema):
    cards = fields.Integer(required=True)
    fits = fields.Boolean(required=True)
    scaling_efficiency = Num(required=True)
    time_s = Num(required=True, allow_none=True)
    time_s_guide_curve = Num(required=True, allow_none=True)


class ScalingResponseSchema(TrainingSchema):
    model = fields.Nested(ModelInfoSchema, required=True)
    card = fields.Nested(CardInfoSchema, required=True)
    mode = fields.String(required=True)
    fit = fields.Nested(FitSchema, required=True)
    parallelism = fields.Nested(ParallelismSchema, required=True)
    curve = fields.List(fields.Nested(ScalingPointSchema), required=True)
    deadline_days = Num(required=True, allow_none=True)
    cards_needed_by_memory = fields.Integer(required=True, allow_none=True)
    cards_needed_for_deadline = fields.Integer(required=True, allow_none=True)
    cards_needed_for_deadline_guide_curve = fields.Integer(required=True, allow_none=True)

    assumptions = _assumptions()
    warnings = _warnings()

    @pre_dump
    def flatten(self, result, **kwargs):
        return {**_attrs(result), **_attrs(result.training), "mode": result.workload.mode}


class HostSchema(Schema):
    cards = fields.Integer(required=True)
    machines = fields.Integer(required=True)
    cards_per_machine = fields.Integer(required=True)
    machine_cards = fields.Integer(required=True)
    machine_cards_power_w = Num(required=True)
    machine_peak_w = Num(required=True)
    machine_transient_peak_w = Num(required=True)
    machine_typical_power_w = Num(required=True)
    psu_w = fields.Integer(required=True, allow_none=True)
    psus = fields.Integer(required=True, allow_none=True)
    host_ram_gb = fields.Integer(required=True)
    cpu_cores = fields.Integer(required=True)
    server_power_w_low = Num(required=True, allow_none=True)
    server_power_w_high = Num(required=True, allow_none=True)
    cards_power_w = Num(required=True)
    system_peak_w = Num(required=True)
    transient_peak_w = Num(required=True)
    rack_power_w = Num(required=True)
    ups_w = Num(required=True, allow_none=True)
    power_feeds = fields.Integer(required=True, allow_none=True)
    typical_power_w = Num(required=True)
    notes = fields.List(fields.String(), required=True)


class OwnershipSchema(Schema):
    cards = fields.Integer(required=True)
    card_price = Num(required=True)
    price_source = fields.String(required=True)
    currency = fields.String(required=True)
    years = Num(required=True)
    cards_cost = Num(required=True)
    installation_overhead_low = Num(required=True)
    installation_overhead = Num(required=True)
    installation_overhead_high = Num(required=True)
    electricity_over_years = Num(required=True)
    total_low = Num(required=True)
    total = Num(required=True)
    total_high = Num(required=True)
    total_per_year = Num(required=True)
    total_per_day = Num(required=True)
    cost_per_million_tokens = Num(required=True, allow_none=True)
    cost_per_run = Num(required=True, allow_none=True)


class CostResponseSchema(EnergySchema):
    ownership = fields.Nested(OwnershipSchema, required=True, allow_none=True)
    assumptions = _assumptions()
    warnings = _warnings()

    @pre_dump
    def flatten(self, result, **kwargs):
        return {**_attrs(result.energy), "ownership": result.ownership,
                "assumptions": result.assumptions, "warnings": result.warnings}


class FigureRangeSchema(Schema):
    name = fields.String(required=True)
    low = Num(required=True)
    typical = Num(required=True)
    high = Num(required=True)
    note = fields.String(required=True)


class AlternativeSchema(Schema):
    option = fields.String(required=True)
    cards_needed = fields.Integer(required=True, allow_none=True)
    figure = fields.String(required=True)
    value = Num(required=True, allow_none=True)
    note = fields.String(required=True)


class TargetSchema(Schema):
    concurrent_users = fields.Integer(required=True)
    tokens_per_s_per_user = Num(required=True, allow_none=True)
    ttft_s = Num(required=True, allow_none=True)


class CapacityOptionSchema(Schema):
    """The cards of one kind a serving target needs."""

    card = fields.Nested(CardInfoSchema, required=True)
    meets_target = fields.Boolean(required=True)
    cards = fields.Integer(required=True, allow_none=True)
    machines = fields.Integer(required=True, allow_none=True)
    parallelism = fields.Nested(ParallelismSchema, required=True, allow_none=True)
    copies = fields.Integer(required=True, allow_none=True)
    sequences_per_copy = fields.Integer(required=True, allow_none=True)
    tokens_per_s_per_user = Num(required=True, allow_none=True)
    time_to_first_token_s = Num(required=True, allow_none=True)
    time_per_output_token_s = Num(required=True, allow_none=True)
    total_tokens_per_s = Num(required=True, allow_none=True)
    power_w = Num(required=True, allow_none=True)
    reason = fields.String(required=True)
    assumptions = _assumptions()


class EstimateResponseSchema(Schema):
    model = fields.Nested(ModelInfoSchema, required=True)
    card = fields.Nested(CardInfoSchema, required=True)
    mode = fields.String(required=True)
    precision = fields.String(required=True)
    fits = fields.Boolean(required=True)
    cards_needed = fields.Integer(required=True, allow_none=True)
    bound = fields.String(required=True)
    ranges = fields.List(fields.Nested(FigureRangeSchema), required=True)
    alternatives = fields.List(fields.Nested(AlternativeSchema), required=True)
    memory = fields.Nested(MemoryBreakdownSchema, required=True)
    fit = fields.Nested(FitSchema, required=True)
    parallelism = fields.Nested(ParallelismSchema, required=True)
    throughput = fields.Nested(ThroughputSchema, required=True, allow_none=True)
    training = fields.Nested(TrainingSchema, required=True, allow_none=True)
    energy = fields.Nested(EnergySchema, required=True)
    host = fields.Nested(HostSchema, required=True)
    ownership = fields.Nested(OwnershipSchema, required=True, allow_none=True)
    capacity = fields.Nested(CapacityOptionSchema, required=True, allow_none=True)
    lang = fields.String(required=True)
    summary = fields.String(required=True)

    assumptions = _assumptions()
    warnings = _warnings()

    @pre_dump
    def flatten(self, result, **kwargs):
        return {**_attrs(result), "mode": result.workload.mode,
                "precision": result.workload.precision.name}


class CapacityResponseSchema(Schema):
    model = fields.Nested(ModelInfoSchema, required=True)
    target = fields.Nested(TargetSchema, required=True)
    prompt_tokens = fields.Integer(required=True)
    output_tokens = fields.Integer(required=True)
    engine = fields.String(required=True)
    options = fields.List(fields.Nested(CapacityOptionSchema), required=True)
    best = fields.String(required=True, allow_none=True)
    lang = fields.String(required=True)
    summary = fields.String(required=True)
    assumptions = _assumptions()
    warnings = _warnings()


class FigureSchema(Schema):
    typical = Num(required=True, allow_none=True)
    low = Num(required=True, allow_none=True)
    high = Num(required=True, allow_none=True)
    status = fields.String(required=True)
    note = fields.String(required=True)


class PriceSchema(Schema):
    amount = Num(required=True)
    currency = fields.String(required=True)
    source = fields.String(required=True)


class CardSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    vendor = fields.String(required=True, allow_none=True)
    line = fields.String(required=True)
    tier = fields.String(required=True, allow_none=True)
    form_factor = fields.String(required=True, allow_none=True)
    memory_gib = Num(required=True)
    memory_type = fields.String(required=True, allow_none=True)
    bandwidth_gb_per_s = Num(required=True)
    dense_tflops = fields.Dict(keys=fields.String(), values=Num(), required=True)
    power_w = Num(required=True)
    interconnect = fields.String(required=True)
    interconnect_name = fields.String(required=True, allow_none=True)
    interconnect_gb_per_s = Num(required=True, allow_none=True)
    ecc = fields.Boolean(required=True)
    price = fields.Nested(PriceSchema, required=True, allow_none=True)
    measured_bandwidth_gb_per_s = Num(required=True, allow_none=True)
    measured_dense_tflops = fields.Dict(keys=fields.String(), values=Num(), required=True)
    measured_source = fields.String(required=True)
    source = fields.String(required=True)
    notes = fields.String(required=True)
    aliases = fields.List(fields.String(), required=True)
    figures = fields.Dict(keys=fields.String(), values=fields.Nested(FigureSchema), required=True)

    @pre_dump
    def units(self, card_and_price, **kwargs):
        card, price = card_and_price
        link = card.interconnect_bytes_per_s
        return {
            **_attrs(card),
            "memory_gib": card.memory_bytes / GIB,
            "bandwidth_gb_per_s": card.bandwidth_bytes_per_s / GB,
            "dense_tflops": {k: v / TERA for k, v in card.dense_flops.items()},
            "interconnect_gb_per_s": None if link is None else link / GB,
            "figures": dict(card.figures),
            "price": price,
            "measured_bandwidth_gb_per_s": None if card.measured_bandwidth_bytes_per_s is None
            else card.measured_bandwidth_bytes_per_s / GB,
            "measured_dense_tflops": {k: v / TERA for k, v in card.measured_dense_flops.items()},
        }


class _CardQuerySchema(_Strict):
    """GET /cards filters (query strings, so numbers arrive as text)."""

    line = fields.String(validate=validate.OneOf(LINES))
    kind = fields.String(validate=validate.OneOf(("tier", "card")))
    vendor = fields.String(validate=validate.Length(min=1, max=40))
    tier = fields.String(validate=validate.Length(min=1, max=10))
    min_memory_gib = fields.Float(validate=_range(0, 100_000), allow_nan=False)


class CardListSchema(Schema):
    count = fields.Integer(required=True)
    cards = fields.List(fields.Nested(CardSchema), required=True)


class ModelPresetSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    aliases = fields.List(fields.String(), required=True)
    family = fields.String(required=True, allow_none=True)
    params = fields.Integer(required=True)
    params_billion = Num(required=True)
    active_params = fields.Integer(required=True, allow_none=True)
    published_params = fields.Integer(required=True, allow_none=True)
    published_params_source = fields.String(required=True)
    layers = fields.Integer(required=True, allow_none=True)
    hidden_size = fields.Integer(required=True, allow_none=True)
    attention_heads = fields.Integer(required=True, allow_none=True)
    kv_heads = fields.Integer(required=True, allow_none=True)
    head_dim = fields.Integer(required=True, allow_none=True)
    vocab_size = fields.Integer(required=True, allow_none=True)
    attention = fields.String(required=True, allow_none=True)
    tied_embeddings = fields.Boolean(required=True, allow_none=True)
    experts = fields.Integer(required=True, allow_none=True)
    experts_per_token = fields.Integer(required=True, allow_none=True)
    sliding_window = fields.Integer(required=True, allow_none=True)
    sliding_layers = fields.Integer(required=True)
    kv_cache_bytes_per_token_bf16 = fields.Integer(required=True, allow_none=True)
    source = fields.String(required=True)
    notes = fields.String(required=True)

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


class ModelListSchema(Schema):
    count = fields.Integer(required=True)
    models = fields.List(fields.Nested(ModelPresetSchema), required=True)


class HealthSchema(Schema):
    status = fields.String(required=True)


class DimensionScoreSchema(Schema):
    dimension = fields.String(required=True)
    value = Num(required=True, allow_none=True)
    unit = fields.String(required=True)
    score = Num(required=True)
    weight = Num(required=True)
    contribution = Num(required=True)


class RankedCardSchema(Schema):
    rank = fields.Integer(required=True)
    card = fields.Nested(CardInfoSchema, required=True)
    total_score = Num(required=True)
    scores = fields.List(fields.Nested(DimensionScoreSchema), required=True)
    explanation = fields.String(required=True)


class ExcludedCardSchema(Schema):
    card = fields.Nested(CardInfoSchema, required=True)
    cards_needed = fields.Integer(required=True, allow_none=True)
    reason = fields.String(required=True)


class RankResponseSchema(Schema):
    line = fields.String(required=True)
    weights = fields.Dict(keys=fields.String(), values=Num(), required=True)
    normalisation = fields.String(required=True)
    ranking = fields.List(fields.Nested(RankedCardSchema), required=True)
    excluded = fields.List(fields.Nested(ExcludedCardSchema), required=True)
    assumptions = _assumptions()
    warnings = _warnings()


class CandidateSchema(Schema):
    card = fields.Nested(CardInfoSchema, required=True)
    count = fields.Integer(required=True, allow_none=True)
    fits = fields.Boolean(required=True)
    figure = fields.String(required=True)
    value = Num(required=True, allow_none=True)
    price_total = Num(required=True, allow_none=True)
    value_per_cost = Num(required=True, allow_none=True)
    reason = fields.String(required=True)


class LineExclusionSchema(Schema):
    line = fields.String(required=True)
    reason = fields.String(required=True)


class ScenarioCheckSchema(Schema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    guide_answer = fields.String(required=True)
    agrees = fields.Boolean(required=True)
    comparison = fields.List(fields.String(), required=True)


class RecommendResponseSchema(Schema):
    line = fields.String(required=True)
    tier = fields.Nested(CardInfoSchema, required=True, allow_none=True)
    count = fields.Integer(required=True, allow_none=True)
    ranked_by = fields.String(required=True)
    value = Num(required=True, allow_none=True)
    example_cards = fields.List(fields.Nested(CardInfoSchema), required=True)
    excluded_lines = fields.List(fields.Nested(LineExclusionSchema), required=True)
    candidates = fields.List(fields.Nested(CandidateSchema), required=True)
    host = fields.Nested(HostSchema, required=True, allow_none=True)
    reasons = fields.List(fields.String(), required=True)
    lang = fields.String(required=True)
    summary = fields.String(required=True)
    scenario = fields.Nested(ScenarioCheckSchema, required=True, allow_none=True)
    assumptions = _assumptions()
    warnings = _warnings()


class NormalizeResponseSchema(Schema):
    value = Num(required=True)
    precision = fields.String(required=True)
    sparse = fields.Boolean(required=True)
    accumulate = fields.String(required=True, allow_none=True)
    dense_value = Num(required=True)
    dense_bf16 = Num(required=True)
    dense = fields.Dict(keys=fields.String(), values=Num(), required=True)
    rules = fields.List(fields.String(), required=True)

    @pre_dump
    def flatten(self, result, **kwargs):
        return {**_attrs(result), "dense": dict(result.dense)}


class TroubleshootMatchSchema(Schema):
    id = fields.String(required=True)
    symptom = fields.String(required=True)
    cause = fields.String(required=True)
    check = fields.String(required=True)
    fix = fields.String(required=True)
    score = Num(required=True)
    matched = fields.List(fields.String(), required=True)
    source = fields.String(required=True)


class TroubleshootResponseSchema(Schema):
    query = fields.String(required=True)
    lang = fields.String(required=True)
    matches = fields.List(fields.Nested(TroubleshootMatchSchema), required=True)
    diagnosis_order = fields.List(fields.String(), required=True)
    lessons = fields.List(fields.String(), required=True)
    advice = fields.List(fields.String(), required=True)
    source = fields.String(required=True)


class BatchItemSchema(Schema):
    index = fields.Integer(required=True)
    ok = fields.Boolean(required=True)
    estimate = fields.Nested(EstimateResponseSchema)
    problem = fields.Nested(ProblemSchema)


class BatchResponseSchema(Schema):
    count = fields.Integer(required=True)
    items = fields.List(fields.Nested(BatchItemSchema), required=True)
