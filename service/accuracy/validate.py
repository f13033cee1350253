"""`make validate`: the service's own estimates against published measurements, by regime, as a
buyer asks and with the run's settings, in sample and out of sample.

Regimes (each a data file in this package, every row with its source):
  single card, one stream     decode.csv             batch-1 decode tokens/s on one card
  several cards, one stream   multicard_decode.csv   batch-1 decode on several cards
  several cards, full load    throughput.csv         output tokens/s at full load, prefill included
  time to first token         ttft.csv               time to first token, alone or under load
  training at scale           training_scale.csv     steady-state MFU of published plans
  training, whole runs        training.csv           GPU-hours of published pre-training runs
  machine power               power.csv              published maximum power of whole servers

Every case is estimated twice: as a buyer asks (model, card, count, engine, precision, and the
batch or the tokens; nothing else: the service chooses the plan, the micro-batch, the
recomputation) and with the run's own settings (its plan, cards per machine, KV format,
micro-batch, recomputation, ZeRO stage, network).

Out of sample: the engines' and the training step's fitted constants (service/accuracy/fit.py)
are refitted with the case's source left out (a paper, a benchmark suite, a repository: see
`source_group`) and the case is estimated with those; a constant no other source pins down
takes what the engines of its kind fit (fit.population_prior), else its stated prior. The gate
reads the out-of-sample figures as a buyer asks.

Ratio = estimate / measurement of a rate (tokens/s, MFU, watts), measured / estimated of a cost
or a time (GPU-hours, seconds to the first token): above 1 the service is optimistic. Exits
non-zero when a regime's out-of-sample median error passes its limit or its median ratio leaves
1/1.2-1.2 (a bias), when a case has no estimate, or when a measurement beats its ceiling (a
batch-1 decode above the bandwidth roofline of its plan; full-load output above the cards' peak
FLOP/s; a training run implying an MFU of 55 % or more). Offline: the cases are files here.
"""

import argparse
import csv
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from ..sizing import questions as domain
from ..sizing.catalog import get_card, get_model
from ..sizing.inputs import HardwareInput, Notes, WorkloadInput, resolve_workload
from ..sizing.model import ModelSpec
from ..sizing.plan import Parallelism
from ..sizing.throughput import ThroughputAnswer, capacity_copy, throughput_answer
from ..sizing.training_time import cluster_for, training_answer, training_compute_flops
from ..sizing.units import SECONDS_PER_HOUR

MAX_IMPLIED_MFU = 0.55
SINGLE, SEVERAL, FULL, TTFT = ("single card, one stream", "several cards, one stream",
                               "several cards, full load", "time to first token")
SCALE, RUNS, POWER = "training at scale", "training, whole runs", "machine power"
# The gate, on the out-of-sample ratios as a buyer asks: the median error per regime, and the
# median ratio within this factor of 1 (errors all on one side are a bias even when each is small).
MAX_MEDIAN_ERROR = {SINGLE: 0.25, SEVERAL: 0.30, FULL: 0.30, TTFT: 0.40, SCALE: 0.30, RUNS: 0.30,
                    POWER: 0.15}
MAX_MEDIAN_BIAS = 1.2
# A regime backed by one source is reported but not gated: leaving its source out leaves nothing
# to refit on, so its out-of-sample figures are its priors'.
MIN_GATED_SOURCES = 2
# What a buyer should be able to rely on (issue "Right out of sample"), reported per regime:
# the median within x0.87-1.15, the worst within x0.6-1.67, 80 % of cases within x0.8-1.25.
TARGET_MEDIAN = (0.87, 1.15)
TARGET_WORST = (0.6, 1.67)
TARGET_BAND = (0.8, 1.25)
TARGET_SHARE = 0.8
FILES = {SINGLE: "decode.csv", SEVERAL: "multicard_decode.csv", FULL: "throughput.csv",
         TTFT: "ttft.csv", SCALE: "training_scale.csv", RUNS: "training.csv", POWER: "power.csv"}
UNITS = {SINGLE: "tokens/s", SEVERAL: "tokens/s", FULL: "output tokens/s", TTFT: "s",
         SCALE: "MFU", RUNS: "GPU-hours", POWER: "W"}
COSTS = {RUNS, TTFT}  # ratio measured / estimated


def ratio(regime: str, estimate: float | None, measured: float) -> float:
    """Estimate / measurement of a rate, measurement / estimate of a cost or a time (above 1 the
    service is optimistic); 0 for no estimate."""
    if estimate is None or not estimate > 0:
        return 0.0
    return measured / estimate if regime in COSTS else estimate / measured


@dataclass(frozen=True)
class Estimate:
    """One way of asking: the service's figure and, for rates, the ceiling no engine beats."""

    value: float
    ceiling: float | None = None


@dataclass(frozen=True)
class Result:
    """One published measurement beside the service's estimates of it."""

    regime: str
    case: str
    engine: str
    source: str
    measured: float
    expected: float  # with the run's settings, in sample
    ceiling: float | None
    note: str = ""
    buyer: float | None = None  # as a buyer asks, in sample (None: same as `expected`)
    buyer_oos: float | None = None  # as a buyer asks, out of sample
    settings_oos: float | None = None  # with the run's settings, out of sample
    group: str = ""
    implied_mfu: float | None = None  # a whole run: the MFU its published GPU-hours imply
    # What a buyer's question is measured against where it differs from `measured`: at full load,
    # the most the same publication's runs show for these cards (copies of a smaller plan count).
    buyer_measured: float | None = None

    @property
    def cost(self) -> bool:
        return self.regime in COSTS

    def ratio_of(self, estimate: float | None, measured: float | None = None) -> float:
        return ratio(self.regime, estimate, self.measured if measured is None else measured)

    @property
    def ratio(self) -> float:
        """With the run's settings, in sample."""
        return self.ratio_of(self.expected)

    def ratios(self) -> dict[str, float]:
        buyer = self.expected if self.buyer is None else self.buyer
        asked = self.buyer_measured
        return {"buyer": self.ratio_of(buyer, asked), "settings": self.ratio,
                "buyer_oos": self.ratio_of(buyer if self.buyer_oos is None else self.buyer_oos, asked),
                "settings_oos": self.ratio_of(self.expected if self.settings_oos is None else self.settings_oos)}

    @property
    def beats_ceiling(self) -> bool:
        if self.implied_mfu is not None:
            return self.implied_mfu >= MAX_IMPLIED_MFU
        if self.ceiling is None:
            return False
        return self.measured > self.ceiling * (1 + 1e-9)


def read_cases(name: str, path: Path | None = None) -> list[dict]:
    """A data file's rows; lines starting with # are its documentation; a file not packaged
    (a regime with no cases yet) has none."""
    if path is not None:
        text = path.read_text(encoding="utf-8")
    else:
        packaged = resources.files(__package__).joinpath(f"data/{name}")
        if not packaged.is_file():
            return []
        text = packaged.read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


_ARXIV = re.compile(r"arXiv[:\s]*(\d{4}\.\d{4,5})", re.IGNORECASE)
_GITHUB = re.compile(r"github\.com/([\w.-]+/[\w.-]+)", re.IGNORECASE)
_REPO = re.compile(r"^\s*([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)[\s,(]")
_URL = re.compile(r"(?:https?://)?((?:[\w-]+\.)+(?:com|org|io|ai|net|dev|co)(?:/[\w.-]+)?)", re.IGNORECASE)


def source_group(source: str) -> str:
    """The publication a source names, which out-of-sample scoring leaves out whole: the arXiv
    paper, the GitHub repository (its READMEs, discussions and issues are one voice), else the
    site and its first path segment, else the source's first words."""
    for pattern in (_ARXIV, _GITHUB, _REPO):
        if found := pattern.search(source):
            return found[1].lower().removesuffix(".git")
    if found := _URL.search(source):
        return found[1].lower().removeprefix("www.")
    return " ".join(source.lower().split()[:4])


def plan(text: str) -> Parallelism | None:
    """'tensor=2;pipeline=4' as a Parallelism; '' as None (the engine's own plan)."""
    if not text or not text.strip():
        return None
    degrees = dict(part.split("=") for part in text.split(";"))
    return Parallelism(**{k.strip(): int(v) for k, v in degrees.items()})


def _int(value: str | None) -> int | None:
    return int(value) if value and value.strip() else None


def as_asked(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput) -> ThroughputAnswer:
    """Speed on the plan and cards the case names, even where the service would reserve more
    memory than the source's engine did and call for more cards."""
    notes = Notes()
    resolved = resolve_workload(workload, notes, model)
    job = domain.place_serving(model, resolved, hardware, notes, as_asked=True)
    return throughput_answer(model, resolved, job.breakdown, job.placement, job.setup, notes, curve=False,
                             full_load=job.full_load)


def _engine(row: dict) -> str | None:
    return row.get("engine") or None


def decode_estimate(row: dict, buyer: bool) -> Estimate:
    """Batch-1 decode on the row's cards (one card when it names no count); with its settings,
    on its plan and machines."""
    count = _int(row.get("count")) or 1
    asks = buyer and row.get("plan_by_default") != "yes"  # the engine's default then is the engine's
    workload = WorkloadInput(precision=row["precision"], context_tokens=int(row["context_tokens"]),
                             engine=_engine(row), parallelism=None if asks else plan(row.get("plan", "")))
    hardware = HardwareInput(get_card(row["card"]), count, None if asks else _int(row.get("cards_per_machine")))
    answer = as_asked(get_model(row["model"]).spec, workload, hardware)
    return Estimate(answer.decode_tokens_per_s_expected, answer.decode_tokens_per_s_ceiling)


def throughput_estimate(row: dict, buyer: bool) -> Estimate:
    """Output tokens/s at full load, prefill included; with its settings, on its plan and KV format."""
    workload = WorkloadInput(precision=row["precision"], kv_precision=None if buyer else row["kv_precision"] or None,
                             prompt_tokens=int(row["prompt_tokens"]), output_tokens=int(row["output_tokens"]),
                             engine=_engine(row), parallelism=None if buyer else plan(row["plan"]))
    hardware = HardwareInput(get_card(row["card"]), int(row["count"]))
    answer = as_asked(get_model(row["model"]).spec, workload, hardware)
    return Estimate(answer.max_total_tokens_per_s or 0.0, answer.max_total_tokens_per_s_ceiling)


_LOAD = re.compile(r"(\d+)")


def ttft_estimate(row: dict, buyer: bool) -> Estimate:
    """Time to first token: one prompt alone ('batch 1', '1 concurrent'), a stated number of
    sequences running at once, or the engine's full load ('offline', 'max')."""
    model = get_model(row["model"]).spec
    notes = Notes()
    workload = resolve_workload(WorkloadInput(
        precision=row["precision"], kv_precision=None if buyer else row.get("kv_precision") or None,
        prompt_tokens=int(row["prompt_tokens"]), output_tokens=int(row["output_tokens"]),
        engine=_engine(row), parallelism=None if buyer else plan(row.get("plan", ""))), notes, model)
    job = domain.place_serving(model, workload, HardwareInput(get_card(row["card"]), int(row["count"])), notes,
                               as_asked=True)
    load = row.get("load", "").lower()
    number = _LOAD.search(load)
    running = None if number is None or "offline" in load or "max" in load else int(number[1])
    if running is not None and running <= 1:
        answer = throughput_answer(model, workload, job.breakdown, job.placement, job.setup, notes, curve=False)
        return Estimate(answer.time_to_first_token_s)
    placement, s = job.full_load or (job.placement, job.setup)
    copy = capacity_copy(model, workload, s, placement.parallelism, workload.prompt_tokens,
                         workload.output_tokens or 1, placement.usable_bytes_per_card)
    if copy is None:
        return Estimate(0.0)
    if running is None:
        return Estimate(copy.at(None).time_to_first_token_s)
    return Estimate(copy.time_to_first_token_s(math.ceil(running / s.copies)))


def _model(row: dict) -> ModelSpec:
    if row.get("model"):
        return get_model(row["model"]).spec
    hidden, layers = int(row["hidden_size"]), int(row["layers"])
    vocab = int(row["vocab_size"])
    return ModelSpec(params=round(float(row["params_billion"]) * 1e9), layers=layers, hidden_size=hidden,
                     attention_heads=int(row["attention_heads"]), vocab_size=vocab,
                     embedding_params=vocab * hidden, name=row["case"])


TRAIN_TOKENS = 1e12  # any count: MFU does not depend on it


def _mfu(answer) -> float:
    """The steady-state MFU of the plan's step (0 where no recipe fits)."""
    return answer.effective_mfu if answer.time_s and answer.effective_mfu else 0.0


def training_scale_estimate(row: dict, buyer: bool) -> Estimate:
    """The MFU the step model expects, counted as the source does (6 FLOPs per parameter and
    token). As a buyer asks: model, card, count, sequence length and global batch, the service
    choosing the recipe; with the settings: the published plan, micro-batch, recomputation, ZeRO
    stage and network."""
    model = _model(row)
    card = get_card(row["card"])
    cards = int(row["cards"])
    precision = row.get("precision") or "bf16"
    batch = float(row["global_batch_tokens"])
    notes = Notes()
    if buyer:
        workload = resolve_workload(WorkloadInput(mode="pretrain", precision=precision,
                                                  context_tokens=int(row["context_tokens"]),
                                                  train_tokens=TRAIN_TOKENS, global_batch_tokens=batch), notes)
        job = domain.place_training(model, workload, HardwareInput(card, cards), notes)
        return Estimate(_mfu(job.answer))
    t, p = int(row["tensor"]), int(row["pipeline"])
    workload = resolve_workload(WorkloadInput(
        mode="pretrain", precision=precision, context_tokens=int(row["context_tokens"]),
        batch_size=int(row["micro_batch"]), train_tokens=TRAIN_TOKENS, recompute=row["recompute"],
        zero_stage=_int(row["zero_stage"]), global_batch_tokens=batch,
        parallelism=Parallelism(tensor=t, pipeline=p, data=cards // (t * p))), notes)
    hardware = HardwareInput(card, cards, None, float(row["network_gb_per_s"]) if row["network_gb_per_s"] else None)
    answer = training_answer(model, workload, card, workload.parallelism, cluster_for(card, hardware, notes), notes)
    return Estimate(_mfu(answer))


def _run_model(row: dict) -> ModelSpec:
    return ModelSpec(params=round(float(row["params_billion"]) * 1e9))


def training_run_estimate(row: dict, buyer: bool) -> Estimate:
    """GPU-hours the service expects for the run: its time on the run's GPU count x the count, the
    service choosing the recipe (what a buyer gives is what the source gives: parameters, tokens,
    card and count). Where the count is unpublished, the time of the same work on one card's
    worth of data parallelism. The ceiling field holds the MFU the published GPU-hours imply."""
    tokens = float(row["tokens"])
    card = get_card(row["card"])
    model = _run_model(row)
    notes = Notes()
    workload = resolve_workload(WorkloadInput(mode="pretrain", train_tokens=tokens), notes)
    if row["gpu_count"]:
        cards = int(row["gpu_count"])
        answer = domain.place_training(model, workload, HardwareInput(card, cards), notes).answer
    else:
        cards = 1
        answer = training_answer(model, workload, card, Parallelism(), cluster_for(card, HardwareInput(card, 1), notes),
                                 notes)
    implied = training_compute_flops(model.params, tokens) / (
        answer.peak_flops_per_s * float(row["gpu_hours"]) * SECONDS_PER_HOUR)
    return Estimate(answer.time_s * cards / SECONDS_PER_HOUR if answer.time_s else 0.0, implied)


MEASURED = {SINGLE: "measured_tokens_per_s", SEVERAL: "measured_tokens_per_s", FULL: "measured_output_tokens_per_s",
            TTFT: "measured_ttft_s", SCALE: "measured_mfu", RUNS: "gpu_hours"}
READERS: dict[str, Callable[[dict, bool], Estimate]] = {
    SINGLE: decode_estimate, SEVERAL: decode_estimate, FULL: throughput_estimate, TTFT: ttft_estimate,
    SCALE: training_scale_estimate, RUNS: training_run_estimate}


@dataclass(frozen=True)
class Case:
    """A row of a regime's file, with the publication it comes from."""

    regime: str
    row: dict
    group: str

    def estimate(self, buyer: bool) -> Estimate:
        return READERS[self.regime](self.row, buyer)


def cases(paths: dict[str, Path | None] | None = None) -> list[Case]:
    paths = paths or {}
    out = []
    for regime, name in FILES.items():
        if regime not in READERS:
            continue
        previous = ""
        for row in read_cases(name, paths.get(regime)):
            source = row["source"]
            group = previous if source.lower().startswith("same as above") and previous else source_group(source)
            previous = group
            out.append(Case(regime, row, group))
    return out


def _result(case: Case, buyer: Estimate, settings: Estimate) -> Result:
    row = case.row
    implied = settings.ceiling if case.regime == RUNS else None
    return Result(case.regime, row["case"], row.get("engine", ""), row["source"], float(row[MEASURED[case.regime]]),
                  settings.value, None if case.regime == RUNS else settings.ceiling, row.get("notes", ""),
                  buyer=buyer.value, group=case.group, implied_mfu=implied)


def run(paths: dict[str, Path | None] | None = None, out_of_sample: bool = True) -> list[Result]:
    """Every case of every regime, from the packaged files or the paths given: in sample, and
    (unless told not to) out of sample with its source left out of the fits."""
    every = cases(paths)
    results = [_result(case, case.estimate(True), case.estimate(False)) for case in every]
    best = most_published(every)
    results = [replace(r, buyer_measured=best[i]) if i in best else r for i, r in enumerate(results)]
    if out_of_sample:
        held = held_out(every)
        results = [replace(r, buyer_oos=held[i][0], settings_oos=held[i][1]) if i in held else r
                   for i, r in enumerate(results)]
    return results + _power_results(paths or {})


def most_published(every: list[Case]) -> dict[int, float]:
    """A buyer asks what N cards serve at full load, not what one plan on them serves. Where the
    same publication ran the same model, format, engine and lengths on fewer cards, N / n copies
    of that n-card plan serve N / n times its figure (copies are independent): the most of those
    is what the buyer's answer is measured against. (TensorRT-LLM's tables run 70B at tensor 8 on
    8 cards for 15,356 tokens/s, and at tensor 1 on one card for 4,021: eight copies serve 32,166.)
    Only full-load cases whose figure that raises appear."""
    runs: dict[tuple, list[tuple[int, float]]] = defaultdict(list)

    def key(case: Case) -> tuple:
        row = case.row
        return (case.group, row["model"], row["card"], row["precision"], row.get("kv_precision", ""),
                row["engine"], row["prompt_tokens"], row["output_tokens"])

    full = [(i, c) for i, c in enumerate(every) if c.regime == FULL]
    for _, case in full:
        runs[key(case)].append((int(case.row["count"]), float(case.row[MEASURED[FULL]])))
    out = {}
    for i, case in full:
        count, measured = int(case.row["count"]), float(case.row[MEASURED[FULL]])
        most = max(figure * (count // n) for n, figure in runs[key(case)] if count % n == 0)
        if most > measured:
            out[i] = most
    return out


def held_out(every: list[Case]) -> dict[int, tuple[float, float]]:
    """Each case's estimates (as a buyer asks, with its settings) with the fitted constants that
    bear on it refitted on the other sources' cases, from their priors; a constant those cases
    leave flat (nothing they measured moves it) is lent from the engines of its kind, as is every
    constant of an engine no other source measured."""
    from . import fit as fitting

    by_group: dict[str, list[int]] = defaultdict(list)
    for i, case in enumerate(every):
        by_group[case.group].append(i)
    out: dict[int, tuple[float, float]] = {}
    for group, members in by_group.items():
        held = [every[i] for i in members]
        values, unpinned, flat = {}, [], {}
        for target in fitting.TARGETS:
            if not any(target.affects(c.regime, c.row) for c in held):
                continue
            training = [c for c in every if c.group != group and target.trains_on(c.regime, c.row)]
            if training:  # from the prior; what the others leave flat is lent below
                flat[target.name] = set()
                values[target.name] = fitting.fitted(target, training, target.prior, flat[target.name])
            else:
                unpinned.append(target)
        lent = {}
        for target in fitting.TARGETS:  # constants no other source pins: priced like its kind's
            if flat.get(target.name):
                population = fitting.population_prior(target, values)
                lent[target.name] = {**values[target.name],
                                     **{name: population[name] for name in flat[target.name]}}
        values.update(lent)
        for target in unpinned:  # no other source: priced like its kind's refitted targets
            values[target.name] = fitting.population_prior(target, values)
        with fitting.applied(values):
            for i in members:
                out[i] = (every[i].estimate(True).value, every[i].estimate(False).value)
    return out


def _power_results(paths: dict[str, Path | None]) -> list[Result]:
    """Whole servers' published maximum power against the service's, out of sample as
    service/accuracy/power.py scores it (the platform's own entry left out)."""
    try:
        from . import power
    except ImportError:
        return []
    rows = read_cases(FILES[POWER], paths.get(POWER))
    out = []
    for case, source, measured, in_sample, oos in power.power_cases(rows):
        out.append(Result(POWER, case, "", source, measured, in_sample, None, buyer=in_sample,
                          buyer_oos=oos, settings_oos=oos, group=source_group(source)))
    return out


def _log_error(ratio: float) -> float:
    """|log ratio|; a case the service gave no estimate for (ratio 0) is the worst there is."""
    return abs(math.log(ratio)) if ratio > 0 else math.inf


def summary(ratios: list[float]) -> dict:
    """Median and worst ratio, the median error |ratio - 1|, and the share within x0.8-1.25."""
    errors = [abs(r - 1) for r in ratios]
    within = sum(TARGET_BAND[0] <= r <= TARGET_BAND[1] for r in ratios) / len(ratios)
    return {"median_ratio": statistics.median(ratios), "median_error": statistics.median(errors),
            "worst_ratio": max(ratios, key=_log_error), "cases": len(ratios), "within": within}


def meets_target(s: dict) -> bool:
    return (TARGET_MEDIAN[0] <= s["median_ratio"] <= TARGET_MEDIAN[1]
            and TARGET_WORST[0] <= s["worst_ratio"] <= TARGET_WORST[1] and s["within"] >= TARGET_SHARE)


def by_regime(results: list[Result]) -> dict[str, list[Result]]:
    return {regime: rows for regime in FILES if (rows := [r for r in results if r.regime == regime])}


def _short(source: str) -> str:
    return (source[:90] + "...") if len(source) > 90 else source


def _cell(s: dict) -> str:
    return f"{s['median_ratio']:.2f} / {s['worst_ratio']:.2f} / {s['within']:.0%}"


def report(results: list[Result]) -> str:
    lines = [
        "# Accuracy against published measurements",
        "",
        "Made by `make validate` (service/accuracy/validate.py) from the cases in",
        "service/accuracy/data/, each with its source. Ratio = estimate / measurement of a rate",
        "(tokens/s, MFU, watts); measured / estimated of a cost or a time (GPU-hours, seconds to the",
        "first token): above 1 the service is optimistic.",
        "",
        "Each cell: median ratio / worst ratio / share of cases within x0.8-1.25. *As a buyer asks*:",
        "model, card, count, engine, precision and the batch or tokens, nothing else (the service",
        "chooses plan, machines, KV format, micro-batch, recomputation). *With settings*: the run's",
        "own. *Out of sample*: the fitted constants (service/accuracy/fit.py) refitted with the",
        "case's source left out; a constant no other source pins takes the median of the engines",
        "of its kind (their stated priors where none fits it). The gate reads the out-of-sample",
        "figures as a buyer asks; the target is a median within x0.87-1.15, a worst within",
        "x0.6-1.67 and 80 % of cases within x0.8-1.25.",
        "",
        "| regime | unit | cases | sources | buyer, out of sample | settings, out of sample "
        "| buyer, in sample | settings, in sample | target met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    grouped = by_regime(results)
    for regime, rows in grouped.items():
        ratios = [r.ratios() for r in rows]
        s = {key: summary([x[key] for x in ratios]) for key in ("buyer_oos", "settings_oos", "buyer", "settings")}
        lines.append(f"| {regime} | {UNITS[regime]} | {len(rows)} | {len({r.group for r in rows})} | "
                     f"{_cell(s['buyer_oos'])} | {_cell(s['settings_oos'])} | {_cell(s['buyer'])} | "
                     f"{_cell(s['settings'])} | {'yes' if meets_target(s['buyer_oos']) else 'no'} |")
    lines += ["", "Invariants, checked on every case: no batch-1 decode beats the bandwidth roofline of its",
              "plan; no full-load output beats its cards' peak FLOP/s; no training run implies an MFU of",
              "55 % or more. Each regime's out-of-sample median ratio as a buyer asks must lie within",
              "1/1.2-1.2 (no bias), its median error within the limit below, and every case must have an",
              "estimate.", "", "| regime | median error limit |", "|---|---|"]
    lines += [f"| {regime} | {MAX_MEDIAN_ERROR[regime]:.0%} |" if len({r.group for r in rows}) >= MIN_GATED_SOURCES
              else f"| {regime} | not gated: one source, nothing to refit on without it |"
              for regime, rows in grouped.items()]
    misses = sorted((r for r in results), key=lambda r: -_log_error(r.ratios()["buyer_oos"]))[:10]
    lines += ["", "## The largest misses out of sample, as a buyer asks", "",
              "| regime | case | measured | estimated | ratio | source |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.regime} | {r.case} | {r.measured:,.4g} | {_buyer_oos(r):,.4g} | "
              f"{r.ratios()['buyer_oos']:.2f} | {_short(r.source)} |" for r in misses]
    for regime, rows in grouped.items():
        lines += ["", f"## {regime[0].upper()}{regime[1:]} ({UNITS[regime]})", "",
                  "| case | engine | measured | ceiling | buyer (oos) | settings (oos) | ratio buyer (oos) "
                  "| ratio settings (oos) | ratio settings (in sample) | source |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            x = r.ratios()
            ceiling = r.implied_mfu if r.implied_mfu is not None else r.ceiling
            lines.append(f"| {r.case} | {r.engine} | {r.measured:,.4g} | "
                         f"{'' if ceiling is None else f'{ceiling:,.4g}'} | {_buyer_oos(r):,.4g} | "
                         f"{r.expected if r.settings_oos is None else r.settings_oos:,.4g} | "
                         f"{x['buyer_oos']:.2f} | {x['settings_oos']:.2f} | {x['settings']:.2f} | {_short(r.source)} |")
    return "\n".join(lines) + "\n"


def _buyer_oos(r: Result) -> float:
    for value in (r.buyer_oos, r.buyer, r.expected):
        if value is not None:
            return value
    return 0.0


def violations(results: list[Result]) -> list[str]:
    out = [f"{r.regime}: {r.case} measured {r.measured:,.4g} beats its ceiling {r.ceiling:,.4g}"
           for r in results if r.beats_ceiling and r.implied_mfu is None]
    out += [f"{r.regime}: {r.case} implies an MFU of {r.implied_mfu:.0%}" for r in results
            if r.beats_ceiling and r.implied_mfu is not None]
    out += [f"{r.regime}: {r.case} has no estimate" for r in results
            if not all(x > 0 for x in r.ratios().values())]
    for regime, rows in by_regime(results).items():
        if len({r.group for r in rows}) < MIN_GATED_SOURCES:
            continue  # reported, not gated: out of sample needs another source to refit on
        s = summary([r.ratios()["buyer_oos"] for r in rows])
        limit = MAX_MEDIAN_ERROR[regime]
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
    parser.add_argument("--in-sample", action="store_true", help="skip the out-of-sample refits (fast)")
    parser.add_argument("--out", type=Path, default=Path("docs/accuracy.md"))
    args = parser.parse_args(argv)
    paths = {regime: getattr(args, name.removesuffix(".csv")) for regime, name in FILES.items()}
    results = run(paths, out_of_sample=not args.in_sample)
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
