"""`make validate`: the service's own estimates against published measurements.

Prints, and writes to docs/accuracy.md, one table for batch-1 decode and one for training
GPU-hours: case, source, measured, estimated ceiling, estimated expected, ratio. Exits
non-zero when an invariant breaks (a batch-1 decode measurement above its ceiling; a
training run whose implied MFU is 55 % or more) or when the median error of the expected
decode rate exceeds 25 %. Offline: the cases are files in this package.
"""

import argparse
import csv
import statistics
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..sizing import estimate as domain
from ..sizing.catalog import get_card, get_model
from ..sizing.inputs import HardwareInput, Notes, WorkloadInput, resolve_workload
from ..sizing.model import ModelSpec
from ..sizing.scaling import training_compute_flops
from ..sizing.training_time import cluster_for, training_answer
from ..sizing.units import SECONDS_PER_HOUR

MAX_MEDIAN_DECODE_ERROR = 0.25
MAX_IMPLIED_MFU = 0.55


@dataclass(frozen=True)
class DecodeResult:
    case: str
    engine: str
    source: str
    measured: float
    ceiling: float
    expected: float

    @property
    def ratio(self) -> float:
        return self.expected / self.measured


@dataclass(frozen=True)
class TrainingResult:
    case: str
    source: str
    measured_gpu_hours: float
    expected_gpu_hours: float
    implied_mfu: float

    @property
    def ratio(self) -> float:
        return self.expected_gpu_hours / self.measured_gpu_hours


def read_cases(name: str, path: Path | None = None) -> list[dict]:
    """A data file's rows; lines starting with # are its documentation."""
    text = (path.read_text(encoding="utf-8") if path else
            resources.files(__package__).joinpath(f"data/{name}").read_text(encoding="utf-8"))
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def decode_case(row: dict) -> DecodeResult:
    workload = WorkloadInput(precision=row["precision"], context_tokens=int(row["context_tokens"]),
                             engine=row["engine"])
    answer = domain.throughput(get_model(row["model"]).spec, workload,
                               HardwareInput(get_card(row["card"]), 1)).throughput
    return DecodeResult(row["case"], row["engine"], row["source"], float(row["measured_tokens_per_s"]),
                        answer.decode_tokens_per_s_ceiling, answer.decode_tokens_per_s_expected)


def training_case(row: dict) -> TrainingResult:
    """GPU-hours the service expects for the run: its default time on the run's GPU count (one
    card where the count is unpublished) x the count."""
    params = round(float(row["params_billion"]) * 1e9)
    tokens = float(row["tokens"])
    card = get_card(row["card"])
    cards = int(row["gpu_count"]) if row["gpu_count"] else 1
    notes = Notes()
    workload = resolve_workload(WorkloadInput(mode="pretrain", train_tokens=tokens), notes)
    answer = training_answer(ModelSpec(params=params), workload, card, cards,
                             cluster_for(card, HardwareInput(card, cards), notes), notes)
    measured = float(row["gpu_hours"])
    implied = training_compute_flops(params, tokens) / (answer.peak_flops_per_s * measured * SECONDS_PER_HOUR)
    return TrainingResult(row["case"], row["source"], measured, answer.time_s * cards / SECONDS_PER_HOUR, implied)


def summary(ratios: list[float]) -> dict:
    errors = [abs(r - 1) for r in ratios]
    return {"median_ratio": statistics.median(ratios), "median_error": statistics.median(errors),
            "worst_ratio": max(ratios, key=lambda r: abs(r - 1)), "cases": len(ratios)}


def _short(source: str) -> str:
    return (source[:90] + "...") if len(source) > 90 else source


def report(decode: list[DecodeResult], training: list[TrainingResult]) -> str:
    d, t = summary([r.ratio for r in decode]), summary([r.ratio for r in training])
    lines = [
        "# Accuracy against published measurements",
        "",
        "Made by `make validate` (service/accuracy/validate.py) from the cases in",
        "service/accuracy/data/, each with its source. Ratio = estimated expected / measured.",
        "",
        "| | cases | median ratio | median error | worst ratio |",
        "|---|---|---|---|---|",
        f"| batch-1 decode (tokens/s) | {d['cases']} | {d['median_ratio']:.2f} | "
        f"{d['median_error']:.0%} | {d['worst_ratio']:.2f} |",
        f"| training (GPU-hours) | {t['cases']} | {t['median_ratio']:.2f} | "
        f"{t['median_error']:.0%} | {t['worst_ratio']:.2f} |",
        "",
        "Invariants, checked on every case: no batch-1 decode measurement exceeds its ceiling",
        "(bandwidth over the bytes read per token); no training run implies an MFU of 55 % or more.",
        "",
        "## Batch-1 decode",
        "",
        "| case | engine | measured tokens/s | ceiling | expected | ratio | source |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [f"| {r.case} | {r.engine} | {r.measured:.1f} | {r.ceiling:.1f} | {r.expected:.1f} | "
              f"{r.ratio:.2f} | {_short(r.source)} |" for r in decode]
    lines += ["", "## Training GPU-hours", "",
              "| case | measured GPU-hours | expected GPU-hours | ratio | implied MFU | source |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {r.case} | {r.measured_gpu_hours:,.0f} | {r.expected_gpu_hours:,.0f} | {r.ratio:.2f} | "
              f"{r.implied_mfu:.0%} | {_short(r.source)} |" for r in training]
    return "\n".join(lines) + "\n"


def violations(decode: list[DecodeResult], training: list[TrainingResult]) -> list[str]:
    out = [f"decode: {r.case} measured {r.measured:.1f} tokens/s above its ceiling {r.ceiling:.1f}"
           for r in decode if r.measured > r.ceiling]
    out += [f"training: {r.case} implies an MFU of {r.implied_mfu:.0%}" for r in training
            if r.implied_mfu >= MAX_IMPLIED_MFU]
    median = summary([r.ratio for r in decode])["median_error"]
    if median > MAX_MEDIAN_DECODE_ERROR:
        out.append(f"decode: median error {median:.0%} exceeds {MAX_MEDIAN_DECODE_ERROR:.0%}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decode", type=Path, help="decode cases CSV (default: the packaged one)")
    parser.add_argument("--training", type=Path, help="training cases CSV (default: the packaged one)")
    parser.add_argument("--out", type=Path, default=Path("docs/accuracy.md"))
    args = parser.parse_args(argv)
    decode = [decode_case(row) for row in read_cases("decode.csv", args.decode)]
    training = [training_case(row) for row in read_cases("training.csv", args.training)]
    text = report(decode, training)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    problems = violations(decode, training)
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
