"""One shape for every range an answer states: low, typical and high, and what the ends rest on."""

from dataclasses import dataclass, field

from . import messages as M
from .frozen import stores_fields


@stores_fields
@dataclass(frozen=True)
class Range:
    """A headline figure as low, typical and high, from the ranges of its factors."""

    low: float
    """The low end: the smallest value the figure takes over its factors' ranges, in the unit of the field that holds
    the range (for a time, the fastest)."""
    typical: float
    """The value the answer states for the figure, in the same unit."""
    high: float
    """The high end: the largest value the figure takes over its factors' ranges, in the same unit (for a time, the
    slowest)."""
    note: M.Message | None = field(default=None, kw_only=True)
    """What the low and high ends rest on (the shares, factors or spread behind them); null for a range the answer
    derives from another that says it."""
