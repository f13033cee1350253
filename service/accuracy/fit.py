"""`make fit`: refit the engines' constants on the published runs of `make validate`.

For each engine class, a grid over the constants the data can pin down, scored by the median
|log(estimate / measurement)| over the cases that name that engine. The search moves one constant
at a time to the best value on its grid (holding the others) until no single move improves the
score: the constants in service/sizing/engines.py must be such a point, which the tests check.
Prints the result beside the current values and what it does to the median and worst ratio, so
that a new measurement moves a constant in review, never silently. The grids are coarse on
purpose: the data rarely tells 5 % apart.
"""

import argparse
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..sizing import engines
from . import validate


@dataclass(frozen=True)
class Fit:
    """What to refit for one engine: which cases, and a grid per Engine field."""

    engine: str
    regimes: tuple[str, ...]
    grid: dict[str, tuple]
    why: str


def _us(*values: float) -> tuple[float, ...]:
    return tuple(v * 1e-6 for v in values)


FITS = (
    Fit("llama.cpp", ("single card, one stream", "several cards, one stream"),
        {"hop_s": _us(0, 100, 200, 300, 400, 500, 700),
         "collective_s": _us(0, 20, 40, 60, 80),
         "hbm_efficiency": tuple((0.3, t, min(0.87, t + 0.2)) for t in (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7))},
        "per-hop cost of a layer split, per-sync cost of a row split, bandwidth share on HBM"),
    Fit("gpt-fast", ("single card, one stream", "several cards, one stream"),
        {"typical": (0.6, 0.65, 0.69, 0.75, 0.8), "layer_overhead_s": _us(0, 10, 20, 30, 40, 60),
         "collective_s": _us(0, 10, 20, 30, 40, 60), "quantized_factor": (0.5, 0.6, 0.7, 0.8, 1.0)},
        "bandwidth share, per-layer cost, per all-reduce cost, share kept on int8/int4"),
    Fit("tensorrt-llm", ("several cards, full load", "several cards, one stream", "single card, one stream"),
        {"typical": (0.6, 0.65, 0.7, 0.75, 0.8),
         "compute_efficiency": tuple((t - 0.1, t, t + 0.1) for t in (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)),
         "moe_compute_share": (0.4, 0.5, 0.6, 0.7, 0.85, 1.0),
         "moe_layer_overhead_s": _us(0, 100, 200, 300, 400, 600)},
        "bandwidth share, dense matmul share of peak, expert matmul share of that, extra per MoE layer"),
    Fit("vllm", ("single card, one stream", "several cards, one stream"),
        {"layer_overhead_s": _us(0, 10, 20, 40, 60), "moe_layer_overhead_s": _us(0, 50, 100, 150, 200, 300, 400)},
        "per-layer cost, extra per MoE layer"),
    Fit("sglang", ("several cards, one stream",),
        {"moe_layer_overhead_s": _us(0, 100, 200, 300, 400, 500, 600, 800)},
        "extra per MoE layer"),
)


MAX_ROUNDS = 5


def score(results: list[validate.Result]) -> float:
    return statistics.median(validate._log_error(r.ratio) for r in results)


def evaluate(fit: Fit, rows: list[tuple[str, dict]], values: dict) -> list[validate.Result]:
    """The cases of `fit.engine` with the engine's constants set to `values`."""
    saved = engines.ENGINES[fit.engine]
    engines.ENGINES[fit.engine] = replace(saved, **values)
    try:
        return [validate.READERS[regime](row) for regime, row in rows]
    finally:
        engines.ENGINES[fit.engine] = saved


def cases(fit: Fit) -> list[tuple[str, dict]]:
    return [(regime, row) for regime in fit.regimes for row in validate.read_cases(validate.FILES[regime])
            if engines.engine_name(row.get("engine") or None) == fit.engine]


def refit(fit: Fit, say: Callable[[str], None]) -> dict:
    rows = cases(fit)
    current = engines.ENGINES[fit.engine]
    now = evaluate(fit, rows, {})
    best, best_score = {}, score(now)
    names = list(fit.grid)
    for _ in range(MAX_ROUNDS):
        moved = False
        for name in names:
            for value in fit.grid[name]:
                trial_values = {**best, name: value}
                trial = score(evaluate(fit, rows, trial_values))
                if trial < best_score - 1e-9:
                    best, best_score, moved = trial_values, trial, True
        if not moved:
            break
    best = {k: v for k, v in best.items() if v != getattr(current, k)}
    after = evaluate(fit, rows, best)
    say(f"{fit.engine}: {len(rows)} cases ({fit.why})")
    for name in names:
        say(f"  {name}: {getattr(current, name)!r} -> {best.get(name, getattr(current, name))!r}")
    for label, results in (("now", now), ("refit", after)):
        ratios = [r.ratio for r in results]
        summary = validate.summary(ratios)
        say(f"  {label}: median ratio {summary['median_ratio']:.2f}, median error "
            f"{summary['median_error']:.0%}, worst {summary['worst_ratio']:.2f}")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engines", nargs="*", help="engine classes to refit (default: all)")
    args = parser.parse_args(argv)
    for fit in FITS:
        if not args.engines or fit.engine in args.engines:
            refit(fit, print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
