"""The computing endpoints: parse with a schema, call the domain, dump with a schema."""

from flask import Blueprint, request

from ..metrics import count_estimate
from ..sizing import defaults
from ..sizing import estimate as domain
from ..sizing.catalog import Price
from .catalogs import current_catalogs
from . import schemas as s
from .jsonio import json_body

bp = Blueprint("sizing", __name__)

_estimate_in, _estimate_out = s.EstimateRequestSchema(), s.EstimateResponseSchema()
_memory_in, _memory_out = s.MemoryRequestSchema(), s.MemoryResponseSchema()
_throughput_in, _throughput_out = s.ThroughputRequestSchema(), s.ThroughputResponseSchema()
_scaling_in, _scaling_out = s.ScalingRequestSchema(), s.ScalingResponseSchema()
_cost_in, _cost_out = s.CostRequestSchema(), s.CostResponseSchema()


def _price(args: dict, hardware) -> Price | None:
    """The card price: given in the request, else the operator's catalog price for the card."""
    currency = args["energy"].currency or defaults.CURRENCY.value
    if "card_price" in args:
        return Price(args["card_price"], currency, "given by the caller")
    if hardware is None:
        return None
    return current_catalogs().prices.get(hardware.card.id)


@bp.post("/estimate")
def estimate():
    args = _estimate_in.load(json_body(request))
    result = domain.estimate(args["model"], args["workload"], args["hardware"], args["energy"],
                             args.get("lang"), _price(args, args["hardware"]),
                             args.get("overhead_fraction"))
    count_estimate("estimate", result.card.line)
    return _estimate_out.dump(result)


@bp.post("/memory")
def memory():
    args = _memory_in.load(json_body(request))
    hardware = args.get("hardware")
    result = domain.memory(args["model"], args["workload"], hardware)
    count_estimate("memory", hardware.card.line if hardware else "none")
    return _memory_out.dump(result)


@bp.post("/throughput")
def throughput():
    args = _throughput_in.load(json_body(request))
    result = domain.throughput(args["model"], args["workload"], args["hardware"])
    count_estimate("throughput", result.card.line)
    return _throughput_out.dump(result)


@bp.post("/scaling")
def scaling():
    args = _scaling_in.load(json_body(request))
    result = domain.scaling(args["model"], args["workload"], args["hardware"], args.get("deadline_days"))
    count_estimate("scaling", result.card.line)
    return _scaling_out.dump(result)


@bp.post("/cost")
def cost():
    args = _cost_in.load(json_body(request))
    hardware = args.get("hardware")
    power_w = domain.hardware_power_w(hardware) if hardware else args["power_w"]
    result = domain.cost(power_w, args["energy"], hardware.count or 1 if hardware else None,
                         _price(args, hardware), args.get("overhead_fraction"))
    count_estimate("cost", hardware.card.line if hardware else "none")
    return _cost_out.dump(result)
