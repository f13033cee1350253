"""Throughput, training and energy answers, each composed from the formulas."""

from dataclasses import dataclass

from . import defaults as d
from . import scaling as s
from . import throughput as t
from . import weights
from .catalog import Card
from .cost import electricity_cost, energy_kwh_per_day, per_year
from .inputs import EnergyInput, Notes, Workload, compute_flops, interconnect_bytes_per_s
from .memory_answer import MemoryBreakdown
from .model import ModelSpec
from .units import SECONDS_PER_DAY

HALF_PRECISION_KEYS = ("bf16", "fp16")


@dataclass(frozen=True)
class ThroughputAnswer:
    """Decode on `cards` cards: roofline position, per-stream and total tokens/s."""

    cards: int
    batch_size: int
    compute_precision: str
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    ridge_flops_per_byte: float
    arithmetic_intensity_flops_per_byte: float
    attainable_flops_per_s: float
    bound: str
    bytes_per_step: int
    weights_read_bytes_per_step: int
    flops_per_token: int
    decode_efficiency: float
    decode_tokens_per_s_ceiling: float
    decode_tokens_per_s_expected: float
    total_tokens_per_s_ceiling: float
    total_tokens_per_s: float


def decode_efficiency(card: Card, cards: int, given: float | None, notes: Notes) -> float:
    """The share of the ceiling the stack reaches: the guide's single, dedicated or PCIe figure."""
    if cards == 1:
        default = d.DECODE_EFFICIENCY_SINGLE
    elif card.interconnect == "dedicated":
        default = d.DECODE_EFFICIENCY_DEDICATED
    else:
        default = d.DECODE_EFFICIENCY_PCIE
    return notes.use("decode_efficiency", given, default)


def throughput_answer(
    model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, card: Card, cards: int,
    notes: Notes,
) -> ThroughputAnswer:
    """Tensor-parallel decode over `cards`: bandwidths and peaks add, weights read once a step."""
    peak = cards * compute_flops(card, workload.precision.compute_keys, notes, "compute")
    read = _weights_read_bytes(model, workload, notes)
    bandwidth = cards * card.bandwidth_bytes_per_s
    roof = t.decode_roofline(
        bandwidth_bytes_per_s=bandwidth,
        peak_flops=peak,
        weights_read_bytes=read,
        kv_bytes_per_sequence=breakdown.kv_cache_bytes_per_sequence or 0,
        batch_size=workload.batch_size,
        flops_per_token=t.decode_flops_per_token(model.params_per_token),
    )
    efficiency = decode_efficiency(card, cards, workload.decode_efficiency, notes)
    total = t.expected_rate(roof.total_tokens_per_s_ceiling, efficiency)
    return ThroughputAnswer(
        cards=cards,
        batch_size=workload.batch_size,
        compute_precision=_compute_key(card, workload),
        peak_flops_per_s=peak,
        bandwidth_bytes_per_s=bandwidth,
        ridge_flops_per_byte=roof.ridge_flops_per_byte,
        arithmetic_intensity_flops_per_byte=roof.intensity_flops_per_byte,
        attainable_flops_per_s=roof.attainable_flops_per_s,
        bound=roof.bound,
        bytes_per_step=roof.step_bytes,
        weights_read_bytes_per_step=read,
        flops_per_token=t.decode_flops_per_token(model.params_per_token),
        decode_efficiency=efficiency,
        decode_tokens_per_s_ceiling=roof.total_tokens_per_s_ceiling / workload.batch_size,
        decode_tokens_per_s_expected=total / workload.batch_size,
        total_tokens_per_s_ceiling=roof.total_tokens_per_s_ceiling,
        total_tokens_per_s=total,
    )


def _compute_key(card: Card, workload: Workload) -> str:
    for key in workload.precision.compute_keys:
        if key in card.dense_flops:
            return key
    return "bf16"


def _weights_read_bytes(model: ModelSpec, workload: Workload, notes: Notes) -> int:
    """Weight bytes a decode step reads, and an assumption saying which parameters those are."""
    read = weights.decode_read_bytes(model, workload.precision, workload.batch_size)
    if model.expert_params and model.experts and model.experts_per_token:
        fraction = weights.expert_fraction_touched(
            model.experts, model.experts_per_token, workload.batch_size)
        notes.assume("decode_weights", "shared weights + routed experts",
                     f"MoE: memory holds all {model.params / 1e9:.1f}B parameters; a decode step "
                     f"reads the shared weights and the {fraction:.0%} of experts a batch of "
                     f"{workload.batch_size} routes to ({model.experts_per_token} of "
                     f"{model.experts} per token; {model.params_per_token / 1e9:.1f}B active)")
    elif model.is_moe:
        notes.assume("decode_weights", "min(batch x active, all)",
                     f"MoE: memory holds all {model.params / 1e9:.1f}B parameters; decode reads "
                     f"{model.params_per_token / 1e9:.1f}B active per sequence, at most all of them")
    elif model.decode_skipped_params:
        notes.assume("decode_weights", "all but the input embedding",
                     "each token reads one row of the input embedding table, every other weight "
                     "once per step")
    return read


@dataclass(frozen=True)
class TrainingAnswer:
    """Training compute and time on `cards`, and one step's gradient sync."""

    cards: int
    train_tokens: float | None
    compute_flops: float | None
    peak_flops_per_s: float
    mfu: float
    scaling_efficiency: float
    time_s_linear: float | None
    time_s: float | None
    time_days: float | None
    gradient_bytes: int
    interconnect_bytes_per_s: float | None
    gradient_sync_s: float | None
    step_compute_s: float
    step_time_s: float | None


def training_answer(
    model: ModelSpec, workload: Workload, card: Card, cards: int, notes: Notes
) -> TrainingAnswer:
    """6ND compute, time at the MFU and the guide's scaling curve, and the sync of a step."""
    peak = compute_flops(card, HALF_PRECISION_KEYS if workload.precision.name != "fp32"
                         else ("fp32",), notes, "compute")
    efficiency = _scaling_efficiency(cards, workload.scaling_efficiency, notes)
    flops = (None if workload.train_tokens is None
             else s.training_compute_flops(model.params_per_token, workload.train_tokens))
    linear = None if flops is None else s.training_time_s(flops, cards, peak, workload.mfu)
    time = None if linear is None else linear / efficiency
    gradient_bytes = model.params * notes.use("gradient_bytes_per_param", None,
                                              d.GRADIENT_BYTES_PER_PARAM)
    link = interconnect_bytes_per_s(card, notes) if cards > 1 else None
    sync = None if cards == 1 else (None if link is None else s.gradient_sync_s(gradient_bytes, link))
    if cards > 1 and link is None:
        notes.warn(f"{card.id} gives no interconnect bandwidth: gradient sync time not computed")
    step = s.step_compute_s(model.params_per_token,
                            workload.context_tokens * workload.batch_size, peak, workload.mfu)
    return TrainingAnswer(
        cards=cards,
        train_tokens=workload.train_tokens,
        compute_flops=flops,
        peak_flops_per_s=peak,
        mfu=workload.mfu,
        scaling_efficiency=efficiency,
        time_s_linear=linear,
        time_s=time,
        time_days=None if time is None else time / SECONDS_PER_DAY,
        gradient_bytes=gradient_bytes,
        interconnect_bytes_per_s=link,
        gradient_sync_s=0.0 if cards == 1 else sync,
        step_compute_s=step,
        step_time_s=step if cards == 1 else (None if sync is None else step + sync),
    )


def _scaling_efficiency(cards: int, given: float | None, notes: Notes) -> float:
    if given is not None:
        return given
    value = s.scaling_efficiency(cards)
    if cards > 1:
        notes.assume("scaling_efficiency", round(value, 4),
                     "guide's curve: 85 % at 8 cards, 80 % at 16, 75 % at 32, 10 % lost per "
                     "doubling beyond")
    return value


@dataclass(frozen=True)
class EnergyAnswer:
    """Electricity for `machines` installations drawing `power_w` each."""

    power_w: float
    hours_per_day: float
    utilization: float
    pue: float
    price_per_kwh: float
    currency: str
    machines: int
    years: float
    energy_kwh_per_day: float
    energy_kwh_per_year: float
    electricity_cost_per_day: float
    electricity_cost_per_year: float
    fleet_energy_kwh_per_year: float
    fleet_electricity_cost_per_year: float
    electricity_cost_over_years: float
    fleet_electricity_cost_over_years: float


def energy_answer(power_w: float, given: EnergyInput, notes: Notes) -> EnergyAnswer:
    """kWh and cost per day and year, for one installation and for the fleet."""
    hours = notes.use("hours_per_day", given.hours_per_day, d.HOURS_PER_DAY)
    utilization = notes.use("utilization", given.utilization, d.UTILIZATION)
    pue = notes.use("pue", given.pue, d.PUE)
    price = notes.use("price_per_kwh", given.price_per_kwh, d.PRICE_PER_KWH)
    currency = notes.use("currency", given.currency, d.CURRENCY)
    machines = notes.use("machines", given.machines, d.MACHINES)
    years = notes.use("years", given.years, d.YEARS)
    day_kwh = energy_kwh_per_day(power_w, hours, utilization, pue)
    year_kwh = per_year(day_kwh)
    year_cost = electricity_cost(year_kwh, price)
    return EnergyAnswer(
        power_w=power_w,
        hours_per_day=hours,
        utilization=utilization,
        pue=pue,
        price_per_kwh=price,
        currency=currency,
        machines=machines,
        years=years,
        energy_kwh_per_day=day_kwh,
        energy_kwh_per_year=year_kwh,
        electricity_cost_per_day=electricity_cost(day_kwh, price),
        electricity_cost_per_year=year_cost,
        fleet_energy_kwh_per_year=year_kwh * machines,
        fleet_electricity_cost_per_year=year_cost * machines,
        electricity_cost_over_years=year_cost * years,
        fleet_electricity_cost_over_years=year_cost * years * machines,
    )

