"""`make validate`: the service's own estimates against published measurements, by regime.

Regimes (each a data file in this package, every row with its source):
  single card, one stream     decode.csv             batch-1 decode tokens/s on one card
  several cards, one stream   multicard_decode.csv   batch-1 decode on a plan over several cards
  several cards, full load    throughput.csv         output tokens/s at full load, prefill included
  training at scale           training_scale.csv     steady-state MFU of published plans
  training, whole runs        training.csv           GPU-hours of published pre-training runs

Ratio = estimate / measurement of a rate (tokens/s, MFU, or GPU-hours measured / estimated), so
above 1 the service is optimistic. Prints, and writes to docs/accuracy.md, per regime the cases,
the median and worst ratio and the median error, then every case. Exits non-zero when a regime's
median error passes its limit or its median ratio leaves 1/1.2-1.2 (a bias), when a case has no
estimate, or when a measurement beats its ceiling (a batch-1 decode above the
bandwidth roofline of its plan; full-load output above the cards' peak FLOP/s; a training run
implying an MFU of 55 % or more). Offline: the cases are files in this package.
"""

import argparse
import csv
import math
import statistics
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..sizing import questions as domain
from ..sizing.catalog import get_card, get_model
from ..sizing.inputs import HardwareInput, Notes, WorkloadInput, resolve_workload
from ..sizing.model import ModelSpec
from ..sizing.plan import Parallelism
from ..sizing.throughput import ThroughputAnswer, throughput_answer
from ..sizing.training_time import cluster_for, training_answer, training_compute_flops
from ..sizing.units import SECONDS_PER_HOUR

MAX_IMPLIED_MFU = 0.55
# The single-card model was fitted on its cases and is held to more than the new regimes.
MAX_MEDIAN_ERROR = {"single card, one stream": 0.25, "several cards, one stream": 0.30,
                    "several cards, full load": 0.30, "training at scale": 0.30,
                    "training, whole runs": 0.30}
# The median ratio itself must sit within this factor of 1: a regime whose errors are all on one
# side is biased even when each is small.
MAX_MEDIAN_BIAS = 1.2
FILES = {"single card, one stream": "decode.csv", "several cards, one stream": "multicard_decode.csv",
         "several cards, full load": "throughput.csv", "training at scale": "training_scale.csv",
         "training, whole runs": "training.csv"}
UNITS = {"single card, one stream": "tokens/s", "several cards, one stream": "tokens/s",
         "several cards, full load": "output tokens/s", "training at scale": "MFU",
         "training, whole runs": "GPU-hours"}


@dataclass(frozen=True)
class Result:
    """One published measurement beside the service's estimate of it."""

    regime: str
    case: str
    engine: str
    source: str
    measured: float
    expected: float
    ceiling: float | None
    note: str = ""
    # A cost (GPU-hours) rather than a rate: fewer estimated means optimistic, so the ratio is
    # measured / expected, and `ceiling` holds the MFU the measurement implies.
    cost: bool = False

    @property
    def ratio(self) -> float:
        return self.measured / self.expected if self.cost else self.expected / self.measured

    @property
    def beats_ceiling(self) -> bool:
        if self.ceiling is None:
            return False
        if self.cost:
            return self.ceiling >= MAX_IMPLIED_MFU
        return self.measured > self.ceiling * (1 + 1e-9)


def read_cases(name: str, path: Path | None = None) -> list[dict]:
    """A data file's rows; lines starting with # are its documentation."""
    text = (path.read_text(encoding="utf-8") if path else
            resources.files(__package__).joinpath(f"data/{name}").read_text(encoding="utf-8"))
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def plan(text: str) -> Parallelism | None:
    """'tensor=2;pipeline=4' as a Parallelism; '' as None (the engine's own plan)."""
    if not text.strip():
        return None
    degrees = dict(part.split("=") for part in text.split(";"))
    return Parallelism(**{k.strip(): int(v) for k, v in degrees.items()})


def _int(value: str) -> int | None:
    return int(value) if value and value.strip() else None


def as_asked(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput) -> ThroughputAnswer:
    """Speed on the plan and cards the source ran, even where the service would reserve more
    memory than the source's engine did and call for more cards."""
    notes = Notes()
    resolved = resolve_workload(workload, notes)
    job = domain.place_serving(model, resolved, hardware, notes, as_asked=True)
    return throughput_answer(model, resolved, job.breakdown, job.placement, job.setup, notes, curve=False)


def decode_case(row: dict, regime: str = "single card, one stream") -> Result:
    """Batch-1 decode on the row's cards and plan (one card when the row names no count)."""
    count = _int(row.get("count", "")) or 1
    workload = WorkloadInput(precision=row["precision"], context_tokens=int(row["context_tokens"]),
                             engine=row["engine"], parallelism=plan(row.get("plan", "")))
    hardware = HardwareInput(get_card(row["card"]), count, _int(row.get("cards_per_machine", "")))
    answer = as_asked(get_model(row["model"]).spec, workload, hardware)
    return Result(regime, row["case"], row["engine"], row["source"], float(row["measured_tokens_per_s"]),
                  answer.decode_tokens_per_s_expected, answer.decode_tokens_per_s_ceiling, row.get("notes", ""))


def throughput_case(row: dict) -> Result:
    """Output tokens/s at full load on the row's plan, prefill included."""
    workload = WorkloadInput(precision=row["precision"], kv_precision=row["kv_precision"],
                             prompt_tokens=int(row["prompt_tokens"]), output_tokens=int(row["output_tokens"]),
                             engine=row["engine"], parallelism=plan(row["plan"]))
    hardware = HardwareInput(get_card(row["card"]), int(row["count"]))
    answer = as_asked(get_model(row["model"]).spec, workload, hardware)
    return Result("several cards, full load", row["case"], row["engine"], row["source"],
                  float(row["measured_output_tokens_per_s"]), answer.max_total_tokens_per_s or 0.0,
                  answer.max_total_tokens_per_s_ceiling, row.get("notes", ""))


def _model(row: dict) -> ModelSpec:
    if row.get("model"):
        return get_model(row["model"]).spec
    hidden, layers = int(row["hidden_size"]), int(row["layers"])
    vocab = int(row["vocab_size"])
    return ModelSpec(params=round(float(row["params_billion"]) * 1e9), layers=layers, hidden_size=hidden,
                     attention_heads=int(row["attention_heads"]), vocab_size=vocab,
                     embedding_params=vocab * hidden, name=row["case"])


def training_scale_case(row: dict) -> Result:
    """The MFU the step model expects for the row's plan, against the published one. FLOPs are
    counted as the source does: 6 per parameter and token (the Megatron rows' recompute pass is
    taken out of their published figure)."""
    model = _model(row)
    card = get_card(row["card"])
    cards = int(row["cards"])
    t, p = int(row["tensor"]), int(row["pipeline"])
    notes = Notes()
    workload = resolve_workload(WorkloadInput(
        mode="pretrain", precision="bf16", context_tokens=int(row["context_tokens"]),
        batch_size=int(row["micro_batch"]), train_tokens=1e12, recompute=row["recompute"],
        zero_stage=_int(row["zero_stage"]), global_batch_tokens=float(row["global_batch_tokens"]),
        parallelism=Parallelism(tensor=t, pipeline=p, data=cards // (t * p))), notes)
    hardware = HardwareInput(card, cards, None, float(row["network_gb_per_s"]) if row["network_gb_per_s"] else None)
    answer = training_answer(model, workload, card, workload.parallelism, cluster_for(card, hardware, notes), notes)
    mfu = training_compute_flops(model.params_per_token, 1e12) / (cards * answer.peak_flops_per_s * answer.time_s)
    return Result("training at scale", row["case"], "", row["source"], float(row["measured_mfu"]), mfu, None,
                  row.get("notes", ""))


def training_case(row: dict) -> Result:
    """GPU-hours the service expects for the run: its default time on the run's GPU count (one
    card where the count is unpublished) x the count. The ceiling field holds the MFU the
    published GPU-hours imply."""
    params = round(float(row["params_billion"]) * 1e9)
    tokens = float(row["tokens"])
    card = get_card(row["card"])
    cards = int(row["gpu_count"]) if row["gpu_count"] else 1
    notes = Notes()
    workload = resolve_workload(WorkloadInput(mode="pretrain", train_tokens=tokens), notes)
    answer = training_answer(ModelSpec(params=params), workload, card, Parallelism(data=cards),
                             cluster_for(card, HardwareInput(card, cards), notes), notes)
    measured = float(row["gpu_hours"])
    implied = training_compute_flops(params, tokens) / (answer.peak_flops_per_s * measured * SECONDS_PER_HOUR)
    return Result("training, whole runs", row["case"], "", row["source"], measured,
                  answer.time_s * cards / SECONDS_PER_HOUR, implied, row.get("notes", ""), cost=True)


READERS = {"single card, one stream": decode_case,
           "several cards, one stream": lambda row: decode_case(row, "several cards, one stream"),
           "several cards, full load": throughput_case, "training at scale": training_scale_case,
           "training, whole runs": training_case}


def run(paths: dict[str, Path | None] | None = None) -> list[Result]:
    """Every case of every regime, from the packaged files or the paths given."""
    paths = paths or {}
    return [READERS[regime](row) for regime, name in FILES.items()
            for row in read_cases(name, paths.get(regime))]


def summary(ratios: list[float]) -> dict:
    """Median and worst ratio, and the median error |ratio - 1| (in log terms for the worst)."""
    errors = [abs(r - 1) for r in ratios]
    return {"median_ratio": statistics.median(ratios), "median_error": statistics.median(errors),
            "worst_ratio": max(ratios, key=_log_error), "cases": len(ratios)}


def _log_error(ratio: float) -> float:
    """|log ratio|; a case the service gave no estimate for (ratio 0) is the worst there is."""
    return abs(math.log(ratio)) if ratio > 0 else math.inf


def _short(source: str) -> str:
    return (source[:90] + "...") if len(source) > 90 else source


def report(results: list[Result]) -> str:
    lines = [
        "# Accuracy against published measurements",
        "",
        "Made by `make validate` (service/accuracy/validate.py) from the cases in",
        "service/accuracy/data/, each with its source. Ratio = estimate / measurement of a rate",
        "(tokens/s, MFU; for whole runs measured GPU-hours / estimated): above 1 the service is",
        "optimistic.",
        "",
        "| regime | unit | cases | median ratio | median error | worst ratio | limit |",
        "|---|---|---|---|---|---|---|",
    ]
    for regime in FILES:
        rows = [r for r in results if r.regime == regime]
        if not rows:
            continue
        s = summary([r.ratio for r in rows])
        lines.append(f"| {regime} | {UNITS[regime]} | {s['cases']} | {s['median_ratio']:.2f} | "
                     f"{s['median_error']:.0%} | {s['worst_ratio']:.2f} | {MAX_MEDIAN_ERROR[regime]:.0%} |")
    lines += ["", "Invariants, checked on every case: no batch-1 decode beats the bandwidth roofline of its",
              "plan; no full-load output beats its cards' peak FLOP/s; no training run implies an MFU of",
              "55 % or more. Each regime's median ratio must also lie within 1/1.2-1.2 (no bias), and",
              "every case must have an estimate."]
    for regime in FILES:
        rows = [r for r in results if r.regime == regime]
        if not rows:
            continue
        lines += ["", f"## {regime[0].upper()}{regime[1:]} ({UNITS[regime]})", "",
                  "| case | engine | measured | ceiling | estimated | ratio | source |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {r.case} | {r.engine} | {r.measured:,.4g} | "
                  f"{'' if r.ceiling is None else f'{r.ceiling:,.4g}'} | {r.expected:,.4g} | {r.ratio:.2f} | "
                  f"{_short(r.source)} |" for r in rows]
    return "\n".join(lines) + "\n"


def violations(results: list[Result]) -> list[str]:
    out = [f"{r.regime}: {r.case} measured {r.measured:,.4g} beats its ceiling {r.ceiling:,.4g}"
           for r in results if r.beats_ceiling and not r.cost]
    out += [f"{r.regime}: {r.case} implies an MFU of {r.ceiling:.0%}" for r in results
            if r.beats_ceiling and r.cost]
    out += [f"{r.regime}: {r.case} has no estimate" for r in results if not r.ratio > 0]
    for regime, limit in MAX_MEDIAN_ERROR.items():
        ratios = [r.ratio for r in results if r.regime == regime]
        if not ratios:
            continue
        s = summary(ratios)
        if s["median_error"] > limit:
            out.append(f"{regime}: median error {s['median_error']:.0%} exceeds {limit:.0%}")
        if not 1 / MAX_MEDIAN_BIAS <= s["median_ratio"] <= MAX_MEDIAN_BIAS:
            out.append(f"{regime}: median ratio {s['median_ratio']:.2f} is biased beyond "
                       f"{1 / MAX_MEDIAN_BIAS:.2f}-{MAX_MEDIAN_BIAS:.2f}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for regime, name in FILES.items():
        parser.add_argument(f"--{name.removesuffix('.csv').replace('_', '-')}", type=Path,
                            help=f"{regime} cases CSV (default: the packaged {name})")
    parser.add_argument("--out", type=Path, default=Path("docs/accuracy.md"))
    args = parser.parse_args(argv)
    paths = {regime: getattr(args, name.removesuffix(".csv")) for regime, name in FILES.items()}
    results = run(paths)
    text = report(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    problems = violations(results)
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
