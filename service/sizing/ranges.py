"""One shape for every range an answer states: low, typical and high, and what the ends rest on."""

from dataclasses import dataclass, field

from . import messages as M
from .frozen import stores_fields


@stores_fields
@dataclass(frozen=True)
class Range:
    """A headline figure as low, typical and high, from the ranges of its factors."""

    low: float
    """The low end, in the unit of the field that holds the range (for a time, the fastest): for a figure published runs
    check, the typical figure times the 10th percentile of measured / estimated of runs of its kind; else the
    smallest value the figure takes over its factors' ranges."""
    typical: float
    """The value the answer states for the figure, in the same unit."""
    high: float
    """The high end, in the same unit (for a time, the slowest): the 90th percentile's counterpart of low, or the
    largest value the figure takes over its factors' ranges."""
    note: M.Message | None = field(default=None, kw_only=True)
    """What the low and high ends rest on: the published runs, publications and coverage of the figure's kind
    (range_calibrated, range_thin, range_no_evidence), or the shares, factors or spread behind them; null for a range
    the answer derives from another that says it."""
