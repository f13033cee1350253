"""Ranges that hold: the low and high ends of every figure a published measurement can check,
from the out-of-sample error of the figure's regime.

`make validate` (service/accuracy/validate.py) asks the service, as a buyer asks, about every
published run in service/accuracy/data/, with the fitted constants refitted without the run's
own publication, and writes what it measured to data/calibration.toml: for each regime, the
10th, 50th and 90th percentiles of measured / estimated, each publication weighted equally (one
large table does not speak for a regime), how many runs and publications stand behind it, and
the share of runs that fell inside a band made without their publication (the coverage).

A regime is a figure (decode speed, full-load output, time to first token, training time, a
fine-tune's speed and peak memory) sliced by what moves the error most: the cards' maker, then
the weights' format class and dense against mixture-of-experts. A question takes the narrowest
slice that at least MIN_SOURCES publications measured; where its own slice has fewer, the
broader band is kept and the note says how thin the evidence is; where no publication measured
the cards' maker or the engine named for that figure, the range is the widest this figure has
anywhere, widened again, and says "no published run of this kind". Never a narrow range
without evidence.

The typical figure is the model's, or, where the model is biased in the question's slice (its
maker's or narrower, at least three publications, the median measured / estimated beyond
x1/1.15-1.15, the band on one side of 1 and no wider than x2), the model's times that median; the
range always holds the typical figure.
"""

import contextlib
import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from . import messages as M
from .catalog import read_data
from .ranges import Range

# Figures a published run can check, as the calibration table names them.
DECODE, FULL_LOAD, TTFT, TRAINING, FINETUNE_SPEED, FINETUNE_MEMORY = (
    "decode", "full_load", "ttft", "training_time", "finetune_speed", "finetune_memory")
FIGURES = (DECODE, FULL_LOAD, TTFT, TRAINING, FINETUNE_SPEED, FINETUNE_MEMORY)
# Figures stated as rates (tokens/s); the others are times (a fine-tune's speed is stated as its
# time) or bytes. Factors are measured / estimated of the figure as stated.
RATES = (DECODE, FULL_LOAD)
# A band is used as it stands when at least this many publications measured its slice.
MIN_SOURCES = 3
# The nominal coverage: the 10th to the 90th percentile of measured / estimated.
LOW_QUANTILE, HIGH_QUANTILE = 0.10, 0.90
# Where nothing was measured: the widest band of the figure, each end moved out by this factor,
# and never narrower than NO_EVIDENCE_FLOOR either side.
NO_EVIDENCE_WIDENING = 1.5
NO_EVIDENCE_FLOOR = (0.5, 2.0)
# A slice whose median measured / estimated lies beyond this factor either way, with nine runs in
# ten off the same way (the model is biased there: _biased), states its median as the typical.
BIAS = 1.15
BIAS_MAX_WIDTH = 2.0
ANY = ""


@dataclass(frozen=True)
class Facts:
    """What a question is, as far as its error goes: the figure, the cards' maker, the weights'
    format class, dense or mixture-of-experts, the engine (None: the default), and for time to
    first token the load (light: one prompt alone)."""

    figure: str
    vendor: str
    weights: str
    arch: str
    engine: str | None = None
    load: str = ANY

    def slices(self) -> tuple[tuple[str, ...], ...]:
        """The slices from the narrowest to the figure as a whole."""
        load = self.load
        return ((self.figure, load, self.vendor, self.weights, self.arch), (self.figure, load, self.vendor, ANY, ANY),
                (self.figure, load, ANY, ANY, ANY))


def vendor_of(vendor: str | None) -> str:
    """The maker's slice: nvidia, amd, intel, or other (a card with no maker named is NVIDIA's,
    as the catalog's tiers are)."""
    name = (vendor or "NVIDIA").lower()
    return name if name in ("nvidia", "amd", "intel") else "other"


def weights_of(bits_per_value: float) -> str:
    """The weights' format class: 16-bit (and wider), 8-bit, or 4-bit and below."""
    if bits_per_value >= 12:
        return "16-bit"
    return "8-bit" if bits_per_value >= 6 else "4-bit"


def arch_of(moe: bool) -> str:
    return "moe" if moe else "dense"


@dataclass(frozen=True)
class Band:
    """One slice of the calibration table: the percentiles of measured / estimated out of
    sample, what stands behind them, and the coverage `make validate` measured."""

    key: tuple[str, ...]
    low: float
    median: float
    high: float
    cases: int
    sources: int
    coverage: float
    engines: tuple[str, ...] = ()

    @property
    def width(self) -> float:
        return self.high / self.low


@dataclass(frozen=True)
class Table:
    bands: dict[tuple[str, ...], Band]

    def band(self, key: tuple[str, ...]) -> Band | None:
        return self.bands.get(key)

    def widest(self, figure: str, load: str = ANY) -> tuple[float, float]:
        """The widest ends any slice of `figure` (at `load`) has, widened (NO_EVIDENCE_WIDENING)
        and at least NO_EVIDENCE_FLOOR either side."""
        ends = [(b.low, b.high) for k, b in self.bands.items()
                if k[0] == figure and k[1] == load and b.sources >= MIN_SOURCES]
        low = min((e[0] for e in ends), default=1.0) / NO_EVIDENCE_WIDENING
        high = max((e[1] for e in ends), default=1.0) * NO_EVIDENCE_WIDENING
        return min(low, NO_EVIDENCE_FLOOR[0]), max(high, NO_EVIDENCE_FLOOR[1])


@dataclass(frozen=True)
class Calibrated:
    """The factors the model's figure is multiplied by for the typical value and the ends, and why
    (measured / estimated: for a time, the low end is the fastest)."""

    low: float
    high: float
    note: M.Message
    typical: float = 1.0  # the band's median where the model is biased there (BIAS), else 1

    def value(self, model: float) -> float:
        """The typical figure from the model's."""
        return model * self.typical

    def range(self, model: float, ceiling: float | None = None) -> Range:
        """The range around the typical figure, from the model's figure; a rate never above the
        `ceiling` physics sets (a roofline)."""
        low, typical, high = model * self.low, model * self.typical, model * self.high
        if ceiling is not None:
            low, typical, high = min(low, ceiling), min(typical, ceiling), min(high, ceiling)
        return Range(low, typical, high, note=self.note)


def _as_band(row: dict) -> Band:
    key = (row["figure"], row.get("load", ANY), row.get("vendor", ANY), row.get("weights", ANY), row.get("arch", ANY))
    return Band(key, float(row["low"]), float(row["median"]), float(row["high"]), int(row["cases"]),
                int(row["sources"]), float(row["coverage"]), tuple(row.get("engines", ())))


def read_table(data: dict) -> Table:
    """The table from its TOML, parsed."""
    return Table({band.key: band for band in map(_as_band, data.get("band", []))})


@functools.cache
def packaged() -> Table:
    """The packaged calibration table (data/calibration.toml, written by `make validate`)."""
    return read_table(read_data("calibration.toml"))


_in_force: list[Table] = []


def table() -> Table:
    """The table in force: the packaged one, or one `applied` for the time being."""
    return _in_force[-1] if _in_force else packaged()


@contextlib.contextmanager
def applied(given: Table) -> Iterator[None]:
    """`given` in force instead of the packaged table while the block runs (make validate scores
    the model's own figures with an empty table, then states each case's range from the other
    publications' bands)."""
    _in_force.append(given)
    for_question.cache_clear()
    try:
        yield
    finally:
        _in_force.pop()
        for_question.cache_clear()


UNCALIBRATED = Table({})


def calibrate(facts: Facts, given: Table | None = None) -> Calibrated:
    """The factors for a question with these facts (the module's docstring)."""
    t = given or table()
    keys = facts.slices()
    whole = t.band(keys[-1])
    engine_seen = facts.engine is None or (whole is not None and facts.engine in whole.engines)
    maker = t.band(keys[1])
    if whole is None or maker is None or not engine_seen:
        low, high = t.widest(facts.figure, facts.load)
        what = facts.engine if not engine_seen and facts.engine else facts.vendor
        return Calibrated(low, high, M.RANGE_NO_EVIDENCE(figure=_FIGURE_NAMES[facts.figure](), what=what, low=low,
                                                         high=high))
    chosen = next(band for band in (t.band(k) for k in keys) if band is not None and
                  (band.sources >= MIN_SOURCES or band.key == keys[-1]))
    own = t.band(keys[0])
    typical = chosen.median if _biased(chosen) else 1.0
    low, high = min(chosen.low, typical), max(chosen.high, typical)
    if own is not None and own is not chosen:  # a thin slice of its own: its runs stay inside
        low, high = min(low, own.low), max(high, own.high)
    if chosen.sources < MIN_SOURCES:  # the figure as a whole has few publications: never narrow
        widest_low, widest_high = t.widest(facts.figure, facts.load)
        low, high = min(low, widest_low), max(high, widest_high)
    thin = chosen.sources < MIN_SOURCES or own is None or own is not chosen
    said = M.RANGE_THIN if thin else M.RANGE_CALIBRATED
    return Calibrated(low, high, said(
        figure=_FIGURE_NAMES[facts.figure](), regime=_regime_name(chosen.key), runs=chosen.cases,
        sources=chosen.sources, coverage=chosen.coverage, low=low, high=high), typical)


def _biased(band: Band) -> bool:
    """Whether the model is biased in the band's slice by evidence enough to state the band's
    median instead: a slice of the cards' maker or narrower (never a median borrowed across
    makers), at least MIN_SOURCES publications, the median beyond x1/BIAS-BIAS, the band on one
    side of 1 (nine runs in ten, by publication, off the same way) and no wider than
    BIAS_MAX_WIDTH (where publications disagree more, their median says little about a question:
    an error that is a fixed time, not a factor, spreads a band so)."""
    return (bool(band.key[2]) and band.sources >= MIN_SOURCES and abs(math.log(band.median)) > math.log(BIAS)
            and (band.low > 1 or band.high < 1) and band.width <= BIAS_MAX_WIDTH)


_FIGURE_NAMES = {DECODE: M.FIGURE_DECODE, FULL_LOAD: M.FIGURE_FULL_LOAD, TTFT: M.FIGURE_TTFT,
                 TRAINING: M.FIGURE_TRAINING, FINETUNE_SPEED: M.FIGURE_FINETUNE_SPEED,
                 FINETUNE_MEMORY: M.FIGURE_FINETUNE_MEMORY}


def _regime_name(key: tuple[str, ...]) -> str:
    """A slice as its id: the figure and its slices joined by '/' (decode/nvidia/4-bit/moe)."""
    return "/".join(part for part in key if part)


def band_levels(weights: list[float]) -> tuple[float, float]:
    """The quantile levels of the band's ends under split-conformal's finite-sample correction:
    the nominal 10th and 90th percentiles moved out by the effective number of independent
    runs (n_eff = (sum w)^2 / sum w^2; with every publication weighted equally it lies between
    the publications and the runs): level (1 + 1/n_eff) x 0.9, as (n + 1)(1 - alpha) / n."""
    n_eff = sum(weights) ** 2 / sum(w * w for w in weights)
    high = min(1.0, HIGH_QUANTILE * (1 + 1 / n_eff))
    return 1 - high, high


def weighted_quantile(values: list[float], weights: list[float], q: float) -> float:
    """The q-quantile of `values` under `weights` (interpolated between the weighted midpoints),
    in log space: the ratios are multiplicative."""
    pairs = sorted(zip((math.log(v) for v in values), weights, strict=True))
    total = sum(w for _, w in pairs)
    if len(pairs) == 1:
        return math.exp(pairs[0][0])
    cumulative, points = 0.0, []
    for value, weight in pairs:
        points.append(((cumulative + weight / 2) / total, value))
        cumulative += weight
    if q <= points[0][0]:
        return math.exp(points[0][1])
    for (p0, v0), (p1, v1) in zip(points, points[1:], strict=False):
        if q <= p1:
            return math.exp(v0 + (v1 - v0) * (q - p0) / (p1 - p0))
    return math.exp(points[-1][1])


@functools.lru_cache(maxsize=4096)
def for_question(figure: str, vendor: str | None, bits_per_value: float, moe: bool, engine: str | None,
                 load: str = ANY) -> Calibrated:
    """The factors for a question on cards of `vendor`, weights of `bits_per_value`, a dense or
    mixture-of-experts model and the engine class named (None: the default), from the packaged
    table (the same for every question with these facts, so worked out once)."""
    return calibrate(Facts(figure, vendor_of(vendor), weights_of(bits_per_value), arch_of(moe), engine, load))
