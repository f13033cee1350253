"""Calibrated ranges from `make validate`'s out-of-sample ratios: the bands of
service/sizing/calibration.py, their coverage measured with each publication left out, and the
table the service reads (service/sizing/data/calibration.toml).

Each published run is a point: its facts (the figure and the slices calibration.Facts names),
measured / estimated as a buyer asks out of sample, and its publication. A band of a slice is the
weighted 10th, 50th and 90th percentile of its points' factors, each publication weighted equally,
its ends moved out by split-conformal's finite-sample correction (calibration.band_levels).
Coverage: each run is scored against the band the service would state for it, made from the
other publications' runs alone (split-conformal with the publication as the unit); a slice's
coverage is the share of its runs that fell inside.
"""

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ..sizing import calibration as cal
from ..sizing.catalog import get_card, get_model
from ..sizing.engines import engine_name
from ..sizing.precision import get_precision

TOML_HEADER = """\
# Written by `make validate` (service/accuracy/bands.py); do not edit by hand.
# Each band: a slice of a figure (figure, load, vendor, weights, arch; "" for any), the 10th,
# 50th and 90th percentile of measured / estimated over published runs asked as a buyer asks
# out of sample (each publication weighted equally, the ends moved out by split-conformal's
# finite-sample correction), the runs and publications behind it, the share of its runs that
# fell inside a band made without their publication, and the engines measured.
"""


@dataclass(frozen=True)
class Point:
    facts: cal.Facts
    factor: float  # measured / estimated of the figure as stated, the model's own, as a buyer asks
    group: str  # the publication
    case: str = ""
    index: int = 0  # the result it stands for (validate.run's order)


def facts_of(figure: str, row: dict, load: str = cal.ANY) -> cal.Facts:
    """A published run's facts, as the service would see the buyer's question."""
    card = get_card(row["card"])
    model = get_model(row["model"]).spec if row.get("model") else None
    precision = row.get("precision") or ("nf4" if row.get("mode") == "qlora" else "bf16")
    engine = engine_name(row.get("engine") or None) if figure in (cal.DECODE, cal.FULL_LOAD, cal.TTFT) else None
    return cal.Facts(figure, cal.vendor_of(card.vendor), cal.weights_of(get_precision(precision).bits_per_value),
                     cal.arch_of(model is not None and model.is_moe), engine, load)


def _bands_of(points: list[Point]) -> dict[tuple[str, ...], cal.Band]:
    by_key: dict[tuple[str, ...], list[Point]] = defaultdict(list)
    for point in points:
        for key in point.facts.slices():
            by_key[key].append(point)
    out = {}
    for key, members in by_key.items():
        per_group: dict[str, int] = defaultdict(int)
        for point in members:
            per_group[point.group] += 1
        weights = [1 / per_group[p.group] for p in members]
        factors = [p.factor for p in members]
        low_level, high_level = cal.band_levels(weights)
        engines = tuple(sorted({p.facts.engine for p in members if p.facts.engine}))
        out[key] = cal.Band(key, cal.weighted_quantile(factors, weights, low_level),
                            cal.weighted_quantile(factors, weights, 0.5),
                            cal.weighted_quantile(factors, weights, high_level),
                            len(members), len(per_group), 0.0, engines)
    return out


def table(points: list[Point]) -> cal.Table:
    return cal.Table(_bands_of(points))


@dataclass(frozen=True)
class Scored:
    point: Point
    calibrated: cal.Calibrated  # as stated for it without its publication

    @property
    def inside(self) -> bool:
        return self.calibrated.low * (1 - 1e-9) <= self.point.factor <= self.calibrated.high * (1 + 1e-9)

    @property
    def width(self) -> float:
        return self.calibrated.high / self.calibrated.low


def scored(points: list[Point], in_sample: bool = False) -> list[Scored]:
    """Each point against the range stated for it from the other publications' points (or, in
    sample, from all of them)."""
    out = []
    whole = table(points) if in_sample else None
    by_group: dict[str, list[Point]] = defaultdict(list)
    for point in points:
        by_group[point.group].append(point)
    for group, members in by_group.items():
        t = whole or table([p for p in points if p.group != group])
        out += [Scored(p, cal.calibrate(p.facts, t)) for p in members]
    return out


def final_table(points: list[Point]) -> cal.Table:
    """The table the service reads: every band from all points, with the coverage its runs had
    out of sample."""
    bands = _bands_of(points)
    inside: dict[tuple[str, ...], list[bool]] = defaultdict(list)
    for s in scored(points):
        for key in s.point.facts.slices():
            inside[key].append(s.inside)
    return cal.Table({key: _with_coverage(band, inside[key]) for key, band in bands.items()})


def _with_coverage(band: cal.Band, inside: list[bool]) -> cal.Band:
    from dataclasses import replace

    return replace(band, coverage=sum(inside) / len(inside) if inside else 0.0)


def _toml_value(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def to_toml(t: cal.Table) -> str:
    lines = [TOML_HEADER]
    for key in sorted(t.bands):
        band = t.bands[key]
        figure, load, vendor, weights, arch = key
        fields = {"figure": figure, "load": load, "vendor": vendor, "weights": weights, "arch": arch,
                  "low": band.low, "median": band.median, "high": band.high, "cases": band.cases,
                  "sources": band.sources, "coverage": band.coverage, "engines": band.engines}
        lines.append("[[band]]")
        lines += [f"{name} = {_toml_value(value)}" for name, value in fields.items()]
        lines.append("")
    return "\n".join(lines)


def summary(rows: Iterable[Scored]) -> dict:
    rows = list(rows)
    return {"cases": len(rows), "sources": len({s.point.group for s in rows}),
            "coverage": sum(s.inside for s in rows) / len(rows),
            "median_width": statistics.median(s.width for s in rows)}
