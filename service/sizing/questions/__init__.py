"""One call per question, a module per question: memory and throughput (single.py), scaling,
cost (costs.py), capacity (serving_capacity.py) and the whole estimate; the result types they
answer with (results.py); and how a job is placed on cards, which they share (placing.py)."""

from ..throughput import ENDS_FIELDS
from .costs import CONSUMER_DUTY_WARNING, cost, electricity
from .estimate import EVERY_PART, Parts, estimate
from .placing import Serving, Training, opening, place_serving, place_training
from .results import (
    Alternative,
    CapacityResult,
    CostResult,
    Estimate,
    MemoryResult,
    ScalingPoint,
    ScalingResult,
    ThroughputResult,
)
from .scaling import scaling
from .serving_capacity import capacity, capacity_summary
from .single import memory, throughput

__all__ = [
    "CONSUMER_DUTY_WARNING", "ENDS_FIELDS", "EVERY_PART", "Alternative", "Parts", "CapacityResult", "CostResult",
    "Estimate", "MemoryResult", "ScalingPoint", "ScalingResult", "Serving", "ThroughputResult", "Training", "capacity",
    "capacity_summary", "cost", "electricity", "estimate", "memory", "opening", "place_serving",
    "place_training", "scaling", "throughput",
]
