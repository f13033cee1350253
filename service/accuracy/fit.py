"""`make fit`: refit the fitted constants on the published runs of `make validate`.

Each target is a set of constants (an engine class's, the training step's) with a grid per
constant the data can pin down, scored by the median |log(estimate / measurement)| over the
cases it trains on, estimated with each run's own settings (a fit may use what the run ran; a
buyer's question is scored after). The search moves one constant at a time to the best value on
its grid (holding the others) until no single move improves the score: the constants in the
code must be such a point, which the tests check. `make validate` calls `fitted` once per
source left out, and falls back to a target's stated prior where no other source pins it.

Prints the result beside the current values and what it does to the median and worst ratio, so
that a new measurement moves a constant in review, never silently. The grids are coarse on
purpose: the data rarely tells 5 % apart.
"""

import argparse
import contextlib
import math
import statistics
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from ..sizing import calibration as cal
from ..sizing import engines
from . import validate

SERVING = (validate.SINGLE, validate.SEVERAL, validate.FULL)
EVERY_SERVING = SERVING + (validate.TTFT, validate.TTFT_LOADED)


@dataclass(frozen=True)
class Target:
    """Constants to refit: where they live, a grid per field, which cases train them, which cases
    they bear on, and the values they take when no case is left to fit on (their prior)."""

    name: str
    regimes: tuple[str, ...]  # the regimes whose cases train it
    grid: dict[str, tuple]
    why: str
    get: Callable[[], object]
    put: Callable[[object], None]
    bears_on: Callable[[str, dict], bool]  # (regime, row): whether its constants move this case
    prior: dict = field(default_factory=dict)
    prior_why: str = ""
    kind: str = "engine"  # targets of one kind lend each other their fits (population_prior)

    def affects(self, regime: str, row: dict) -> bool:
        return self.bears_on(regime, row)

    def trains_on(self, regime: str, row: dict) -> bool:
        return regime in self.regimes and self.bears_on(regime, row)


def _us(*values: float) -> tuple[float, ...]:
    return tuple(round(v * 1e-6, 12) for v in values)


def _engine_target(engine: str, regimes: tuple[str, ...], grid: dict[str, tuple], why: str,
                   prior: dict, prior_why: str) -> Target:
    def bears_on(regime: str, row: dict) -> bool:
        if regime not in EVERY_SERVING:
            return False
        named = engines.engine_name(row.get("engine") or None)
        return (named or engines.DEFAULT_ENGINE) == engine

    def put(value: object) -> None:
        engines.ENGINES[engine] = value  # type: ignore[assignment]
        if engine == engines.DEFAULT_ENGINE:  # no engine named: the default's figures
            engines.ENGINES[None] = replace(value, why=engines.ENGINES[None].why)  # type: ignore[type-var]

    return Target(engine, regimes, grid, why, lambda: engines.ENGINES[engine], put, bears_on, prior, prior_why)


# Priors: what an engine's constants are without published runs of it: the guide's 70 % of the
# bandwidth for a tuned engine, its 60-70 % of peak for large matmuls, no fixed costs beyond
# the other engines' typical (vLLM's 60 us per layer is not assumed for a fused engine).
_GUIDE_MATMULS = (0.6, 0.65, 0.7)
_MATMULS = tuple((round(t - 0.1, 2), t, round(min(0.95, t + 0.1), 2))
                 for t in (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85))
# A request's fixed wait for its first token: 0-150 ms.
_REQUEST = _us(0, 10_000, 20_000, 30_000, 50_000, 75_000, 100_000, 150_000)
TARGETS: list[Target] = [
    _engine_target(
        "llama.cpp", (validate.SINGLE, validate.SEVERAL),
        {"hop_s": _us(0, 100, 200, 300, 400, 500, 700),
         "collective_s": _us(0, 20, 40, 60, 80),
         "hbm_efficiency": tuple((0.3, t, min(0.87, t + 0.2)) for t in (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7))},
        "per-hop cost of a layer split, per-sync cost of a row split, bandwidth share on HBM",
        {"hop_s": 0.0, "collective_s": 0.0, "hbm_efficiency": None}, "no extra costs, the same share on HBM"),
    _engine_target(
        "gpt-fast", (validate.SINGLE, validate.SEVERAL),
        {"typical": (0.6, 0.65, 0.69, 0.75, 0.8), "layer_overhead_s": _us(0, 10, 20, 30, 40, 60),
         "collective_s": _us(0, 10, 20, 30, 40, 60), "quantized_factor": (0.5, 0.6, 0.7, 0.8, 1.0)},
        "bandwidth share, per-layer cost, per all-reduce cost, share kept on int8/int4",
        {"typical": 0.7, "layer_overhead_s": 0.0, "collective_s": 0.0, "quantized_factor": 1.0},
        "the guide's 70 %, no fixed costs"),
    _engine_target(
        "tensorrt-llm", (validate.FULL, validate.SEVERAL, validate.SINGLE),
        {"typical": (0.6, 0.65, 0.7, 0.75, 0.8),
         "compute_efficiency": _MATMULS,
         "moe_compute_share": (0.4, 0.5, 0.6, 0.7, 0.85, 1.0),
         "moe_layer_overhead_s": _us(0, 25, 50, 100, 200, 400),
         "sequence_overhead_s": _us(0, 2, 5, 10, 20),
         "fp4_compute_share": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
         "expert_half_width": (0.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)},
        "bandwidth share, matmul share of peak, expert matmul share of that, extra per MoE layer, "
        "host work per running sequence, share of that kept through the FP4 rate, expert width at half "
        "the expert share",
        {"typical": 0.7, "compute_efficiency": _GUIDE_MATMULS, "moe_compute_share": 1.0,
         "moe_layer_overhead_s": 0.0, "sequence_overhead_s": 0.0, "fp4_compute_share": 1.0,
         "expert_half_width": 0.0},
        "the guide's 70 % of the bandwidth and 60-70 % of peak"),
    _engine_target(
        "vllm", (validate.SINGLE, validate.SEVERAL, validate.FULL, validate.TTFT),
        {"layer_overhead_s": _us(0, 10, 20, 40, 60), "request_overhead_s": _REQUEST,
         "moe_layer_overhead_s": _us(0, 50, 100, 150, 200, 300, 400),
         "compute_efficiency": _MATMULS, "sequence_overhead_s": _us(0, 2, 5, 10, 20)},
        "per-layer cost, extra per MoE layer, matmul share of peak under load, host work per running "
        "sequence, fixed time a request waits for its first token",
        {"layer_overhead_s": 0.0, "moe_layer_overhead_s": 0.0, "compute_efficiency": _GUIDE_MATMULS,
         "sequence_overhead_s": 0.0, "request_overhead_s": 0.0},
        "no fixed costs, the guide's 60-70 % of peak"),
    _engine_target(
        "sglang", (validate.SEVERAL, validate.TTFT),
        {"moe_layer_overhead_s": _us(0, 100, 200, 300, 400, 500, 600, 800), "request_overhead_s": _REQUEST},
        "extra per MoE layer, fixed time a request waits for its first token",
        {"moe_layer_overhead_s": 0.0, "request_overhead_s": 0.0}, "no extra cost per MoE layer or request"),
]


def _training_target() -> Target:
    from ..sizing import training_time

    def put(value: object) -> None:
        training_time.STEP_CONSTANTS = value  # type: ignore[assignment]

    return Target(
        "training step", (validate.SCALE, validate.RUNS),
        {"bf16_efficiency": (0.5, 0.55, 0.6, 0.65, 0.7), "hidden_half": (0.0, 300.0, 600.0, 1200.0),
         "tensor_exposed": (0.3, 0.6, 1.0), "data_tail": (0.0, 0.1, 0.3), "attention_factor": (0.5, 1.0),
         "run_goodput": (0.6, 0.7, 0.8, 0.85, 0.9, 1.0)},
        "layers' share of peak, the hidden size at half of it, exposed tensor-parallel and data-parallel "
        "shares, attention's FLOPs, a whole run's steady share",
        lambda: training_time.STEP_CONSTANTS, put, lambda regime, row: regime in (validate.SCALE, validate.RUNS),
        {"bf16_efficiency": 0.65, "hidden_half": 0.0, "tensor_exposed": 1.0, "data_tail": 0.0,
         "attention_factor": 1.0, "run_goodput": 1.0},
        "the guide's 60-70 % of peak for large matmuls, every collective exposed, no run losses",
        kind="training")


TARGETS.append(_training_target())


MAX_ROUNDS = 5


# An error counts up to x3 at most: one case far off (a run that measured something else) does
# not pull every constant towards it, while the tails still weigh, as the target counts them.
MAX_COUNTED_ERROR = math.log(3)


def score(ratios: list[float], regimes: list[str] | None = None) -> float:
    """The mean |log ratio| (each capped at x3) of each regime, averaged over the regimes: a
    regime of ten batch-1 runs weighs as much as one of five hundred full-load runs (they pin
    different constants), and the tails count, not only the median."""
    regimes = regimes or [""] * len(ratios)
    by: dict[str, list[float]] = {}
    for ratio, regime in zip(ratios, regimes, strict=True):
        by.setdefault(regime, []).append(min(validate._log_error(ratio), MAX_COUNTED_ERROR))
    return statistics.fmean(statistics.fmean(errors) for errors in by.values())


@contextlib.contextmanager
def applied(values: dict[str, dict]) -> Iterator[None]:
    """Targets' constants set to `values` (by target name) for the duration."""
    saved = []
    try:
        for target in TARGETS:
            if target.name in values and values[target.name]:
                current = target.get()
                saved.append((target, current))
                target.put(replace(current, **values[target.name]))  # type: ignore[type-var]
        yield
    finally:
        for target, current in reversed(saved):
            target.put(current)


def _ratios(target: Target, cases: list[validate.Case], values: dict) -> list[float]:
    """The model's own ratios (no calibration table in force: its typical factors are fitted
    on what these constants leave)."""
    with applied({target.name: values}), cal.applied(cal.UNCALIBRATED):
        out = []
        for case in cases:
            out.append(validate.ratio(case.regime, case.estimate(False).value,
                                      float(case.row[validate.MEASURED[case.regime]])))
        return out


def fitted(target: Target, cases: list[validate.Case], start: dict | None = None,
           flat: set[str] | None = None) -> dict:
    """The grid point the coordinate search reaches on `cases` from the current constants (or
    from `start`, with the fields it sets): the fields that differ from the current constants,
    by name (empty when the current point is already best). Names whose every grid value scores
    the same in the last round (the cases do not pin them) are added to `flat` when given."""
    best: dict = dict(start or {})
    regimes = [case.regime for case in cases]
    best_score = score(_ratios(target, cases, best), regimes)
    spreads: dict[str, float] = {}
    for _ in range(MAX_ROUNDS):
        moved = False
        for name, values in target.grid.items():
            trials = [best_score]
            for value in values:
                trial_values = {**best, name: value}
                trial = score(_ratios(target, cases, trial_values), regimes)
                trials.append(trial)
                if trial < best_score - 1e-9:
                    best, best_score, moved = trial_values, trial, True
            spreads[name] = max(trials) - min(trials)
        if not moved:
            break
    if flat is not None:
        flat.update(name for name, spread in spreads.items() if spread <= 1e-9)
    current = target.get()
    return {k: v for k, v in best.items() if v != getattr(current, k)}


def population_prior(target: Target, refit: dict[str, dict]) -> dict:
    """The values a target takes when no other source pins it: for each of its constants that
    other targets of its kind fit too, the median of their fitted values (as refitted without
    the source left out, `refit`, where that moved them); its stated prior for the rest. An
    engine no other publication measured is priced like the engines that were, not costless, but
    only by engines that do the same work (_same_mechanism)."""
    out = dict(target.prior)
    for name in target.grid:
        values = []
        for other in TARGETS:
            if other is target or other.kind != target.kind or name not in other.grid \
                    or not _same_mechanism(target, other):
                continue
            values.append(refit.get(other.name, {}).get(name, getattr(other.get(), name)))
        values = [v for v in values if v is not None]
        if not values:
            continue
        if isinstance(values[0], tuple):
            out[name] = tuple(statistics.median(parts) for parts in zip(*values, strict=True))
        else:
            out[name] = statistics.median(values)
    return out


def _same_mechanism(target: Target, other: Target) -> bool:
    """Whether two targets' constants price the same work: engines that spread a model the same
    way (a tensor split's all-reduce is not a layer split's row-split gather, nor its hop)."""
    return getattr(target.get(), "split", None) == getattr(other.get(), "split", None)


def training_cases(target: Target) -> list[validate.Case]:
    return [c for c in validate.cases() if target.trains_on(c.regime, c.row)]


def refit(target: Target, say: Callable[[str], None]) -> dict:
    cases = training_cases(target)
    current = target.get()
    best = fitted(target, cases)
    say(f"{target.name}: {len(cases)} cases from {len({c.group for c in cases})} sources ({target.why})")
    for name in target.grid:
        say(f"  {name}: {getattr(current, name)!r} -> {best.get(name, getattr(current, name))!r}")
    for label, values in (("now", {}), ("refit", best)):
        s = validate.summary(_ratios(target, cases, values))
        say(f"  {label}: median ratio {s['median_ratio']:.2f}, median error {s['median_error']:.0%}, "
            f"worst {s['worst_ratio']:.2f}")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help="targets to refit (default: all)")
    args = parser.parse_args(argv)
    for target in TARGETS:
        if not args.targets or target.name in args.targets:
            refit(target, print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
