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
from typing import TYPE_CHECKING

from ..sizing import calibration as cal
from ..sizing import questions as domain
from ..sizing.catalog import get_card, get_model
from ..sizing.inputs import HardwareInput, Notes, WorkloadInput, resolve_workload
from ..sizing.model import ModelSpec
from ..sizing.plan import Parallelism
from ..sizing.throughput import ThroughputAnswer, capacity_copy, throughput_answer
from ..sizing.training_time import cluster_for, training_answer, training_compute_flops
from ..sizing.units import SECONDS_PER_HOUR

if TYPE_CHECKING:
    from . import bands

MAX_IMPLIED_MFU = 0.55
CALIBRATION = Path(__file__).resolve().parents[1] / "sizing" / "data" / "calibration.toml"
SINGLE, SEVERAL, FULL = "single card, one stream", "several cards, one stream", "several cards, full load"
TTFT, TTFT_LOADED = "time to first token, light load", "time to first token, under load"
SCALE, RUNS, POWER = "training at scale", "training, whole runs", "machine power"
TUNE_SPEED, TUNE_MEMORY = "fine-tuning, speed", "fine-tuning, peak memory"
# The gate, on the out-of-sample ratios as a buyer asks: the median error per regime, and the
# median ratio within this factor of 1 (errors all on one side are a bias even when each is small).
MAX_MEDIAN_ERROR = {SINGLE: 0.25, SEVERAL: 0.30, FULL: 0.30, TTFT: 0.40, SCALE: 0.30, RUNS: 0.30,
                    POWER: 0.15, TUNE_SPEED: 0.40, TUNE_MEMORY: 0.40}
# Regimes reported and range-gated, whose typical figure is not gated yet, and why.
NOT_GATED = {TTFT: "three publications, each scored without the others' correction; more light-load runs "
                   "would let it apply out of sample",
             TTFT_LOADED: "queueing and the engine's scheduler under load are not modelled yet"}
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
         TTFT: "ttft.csv", TTFT_LOADED: "ttft.csv", SCALE: "training_scale.csv", RUNS: "training.csv",
         TUNE_SPEED: "finetune.csv",
         TUNE_MEMORY: "finetune.csv", POWER: "power.csv"}
UNITS = {SINGLE: "tokens/s", SEVERAL: "tokens/s", FULL: "output tokens/s", TTFT: "s", TTFT_LOADED: "s",
         SCALE: "MFU", RUNS: "GPU-hours", TUNE_SPEED: "tokens/s", TUNE_MEMORY: "GiB", POWER: "W"}
COSTS = {RUNS, TTFT, TTFT_LOADED, TUNE_MEMORY}  # ratio measured / estimated


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
    facts: "cal.Facts | None" = None  # the question's facts, for its calibrated range (bands.py)
    # The calibration's typical factor (measured / estimated of the figure as the service states
    # it), in sample and from the other publications' bands: the estimates above are the model's.
    typical_factor: float = 1.0
    typical_factor_oos: float = 1.0

    @property
    def cost(self) -> bool:
        return self.regime in COSTS

    def ratio_of(self, estimate: float | None, measured: float | None = None) -> float:
        return ratio(self.regime, estimate, self.measured if measured is None else measured)

    @property
    def ratio(self) -> float:
        """With the run's settings, in sample."""
        return self.ratio_of(self.expected)

    def stated(self, estimate: float | None, factor: float) -> float | None:
        """The service's figure from the model's: the calibration's typical factor applies to the
        figure as stated (a rate or a time), and this regime measures it or its inverse."""
        if estimate is None or self.facts is None:
            return estimate
        same = (self.facts.figure in cal.RATES) == (self.regime not in COSTS)
        return estimate * factor if same else estimate / factor

    def ratios(self) -> dict[str, float]:
        buyer = self.expected if self.buyer is None else self.buyer
        asked = self.buyer_measured
        t, o = self.typical_factor, self.typical_factor_oos
        return {"buyer": self.ratio_of(self.stated(buyer, t), asked), "settings": self.ratio_of(self.stated(
                    self.expected, t)),
                "buyer_oos": self.ratio_of(self.stated(buyer if self.buyer_oos is None else self.buyer_oos, o), asked),
                "settings_oos": self.ratio_of(self.stated(
                    self.expected if self.settings_oos is None else self.settings_oos, o))}

    def raw_ratio(self, oos: bool = True) -> float:
        """As a buyer asks, the model's own figure (before the calibration's typical factor)."""
        buyer = self.expected if self.buyer is None else self.buyer
        return self.ratio_of(buyer if not oos or self.buyer_oos is None else self.buyer_oos, self.buyer_measured)

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
    t, p, e = int(row["tensor"]), int(row["pipeline"]), _int(row.get("expert")) or 1
    workload = resolve_workload(WorkloadInput(
        mode="pretrain", precision=precision, context_tokens=int(row["context_tokens"]),
        batch_size=int(row["micro_batch"]), train_tokens=TRAIN_TOKENS, recompute=row["recompute"] or None,
        zero_stage=_int(row["zero_stage"]), global_batch_tokens=batch,
        virtual_stages=_int(row.get("virtual_stages")),
        parallelism=Parallelism(tensor=t, pipeline=p, expert=e, data=cards // (t * p * e))), notes)
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


# A fine-tune's mode as the sources name it, and its recipe's settings as the service names them.
TUNE_MODES = {"full": "full_finetune", "lora": "lora", "qlora": "qlora", "dora": "lora"}
TUNE_OPTIMIZERS = {"adamw": ("adamw", None), "adamw-fused": ("adamw", None), "adamw-8bit": ("adam8bit", None),
                   "paged-adamw-8bit": ("adam8bit", "low-memory"), "optimizer-in-backward": (None, "low-memory"),
                   "cpu-offload": (None, "cpu-offload"), "sgd": ("sgd", None)}
TUNE_TOKENS = 1e9  # any count: a steady rate does not depend on it


def finetune_job(row: dict, buyer: bool):
    """The service's fine-tune of the row's model on its cards. As a buyer asks: model, card,
    count, mode, sequence length and micro-batch (what the buyer's data and loader fix), the
    service choosing plan, recipe and recomputation; with the settings: the run's optimizer,
    memory recipe and recomputation too."""
    model = get_model(row["model"]).spec
    mode = TUNE_MODES[row["mode"]]
    given: dict = {"mode": mode, "context_tokens": int(row["sequence_tokens"]), "train_tokens": TUNE_TOKENS,
                   "batch_size": _int(row.get("micro_batch")) or 1}
    if not buyer:
        optimizer, recipe = TUNE_OPTIMIZERS.get(row.get("optimizer") or "", (None, None))
        if recipe and mode == "full_finetune":
            given["recipe"] = recipe
        if optimizer:
            given["optimizer"] = optimizer
        if row.get("recompute") in ("full", "none", "selective"):
            given["recompute"] = row["recompute"]
    notes = Notes()
    workload = resolve_workload(WorkloadInput(**given), notes, model)
    return domain.place_training(model, workload, HardwareInput(get_card(row["card"]), int(row["count"] or 1)), notes)


def finetune_speed_estimate(row: dict, buyer: bool) -> Estimate:
    """Steady tokens/s of the whole job (every card): the run's tokens over its time without the
    whole run's restarts and checkpoints (the sources time steady steps)."""
    from ..sizing.training_time import STEP_CONSTANTS

    answer = finetune_job(row, buyer).answer
    if not answer.time_s:
        return Estimate(0.0)
    return Estimate(TUNE_TOKENS / (answer.time_s * STEP_CONSTANTS.run_goodput))


def finetune_memory_estimate(row: dict, buyer: bool) -> Estimate:
    """Peak memory per card in GiB: what the service says each card needs for the job."""
    from ..sizing.units import GIB

    job = finetune_job(row, buyer)
    return Estimate(job.placement.need_bytes_per_card / GIB)


MEASURED = {SINGLE: "measured_tokens_per_s", SEVERAL: "measured_tokens_per_s", FULL: "measured_output_tokens_per_s",
            TTFT: "measured_ttft_s", TTFT_LOADED: "measured_ttft_s", SCALE: "measured_mfu", RUNS: "gpu_hours",
            TUNE_SPEED: "measured_tokens_per_s", TUNE_MEMORY: "measured_peak_memory_gib"}
READERS: dict[str, Callable[[dict, bool], Estimate]] = {
    SINGLE: decode_estimate, SEVERAL: decode_estimate, FULL: throughput_estimate, TTFT: ttft_estimate,
    TTFT_LOADED: ttft_estimate, SCALE: training_scale_estimate, RUNS: training_run_estimate,
    TUNE_SPEED: finetune_speed_estimate,
    TUNE_MEMORY: finetune_memory_estimate}


def _every(row: dict) -> bool:
    return True


# Regimes that share a file and split its rows.
ROWS: dict[str, Callable[[dict], bool]] = {TTFT: lambda row: ttft_load(row) == "light",
                                           TTFT_LOADED: lambda row: ttft_load(row) == "loaded"}


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
            if not (row.get(MEASURED[regime]) or "").strip() or not ROWS.get(regime, _every)(row):
                continue  # a file two regimes share: this row measured the other one
            source = row["source"]
            group = previous if source.lower().startswith("same as above") and previous else source_group(source)
            previous = group
            out.append(Case(regime, row, group))
    return out


FIGURES = {SINGLE: cal.DECODE, SEVERAL: cal.DECODE, FULL: cal.FULL_LOAD, TTFT: cal.TTFT, TTFT_LOADED: cal.TTFT,
           SCALE: cal.TRAINING,
           RUNS: cal.TRAINING, TUNE_SPEED: cal.FINETUNE_SPEED, TUNE_MEMORY: cal.FINETUNE_MEMORY}


def ttft_load(row: dict) -> str:
    """A time to first token's load: light (one prompt alone) or loaded (several at once, or the
    engine's full load)."""
    load = row.get("load", "").lower()
    number = _LOAD.search(load)
    alone = number is not None and int(number[1]) <= 1 and "offline" not in load and "max" not in load
    return "light" if alone else "loaded"


def case_facts(regime: str, row: dict) -> cal.Facts | None:
    """The facts of the buyer's question a case stands for (its calibration slice)."""
    from .bands import facts_of

    if regime not in FIGURES or not row.get("card"):
        return None
    return facts_of(FIGURES[regime], row, ttft_load(row) if FIGURES[regime] == cal.TTFT else cal.ANY)


def _result(case: Case, buyer: Estimate, settings: Estimate) -> Result:
    row = case.row
    implied = settings.ceiling if case.regime == RUNS else None
    return Result(case.regime, row["case"], row.get("engine", ""), row["source"], float(row[MEASURED[case.regime]]),
                  settings.value, None if case.regime == RUNS else settings.ceiling, row.get("notes", ""),
                  buyer=buyer.value, group=case.group, implied_mfu=implied, facts=case_facts(case.regime, row))


def run(paths: dict[str, Path | None] | None = None, out_of_sample: bool = True) -> list[Result]:
    """Every case of every regime, from the packaged files or the paths given: in sample, and
    (unless told not to) out of sample with its source left out of the fits; the model's own
    figures (no calibration table in force), with the typical factor the calibration states for
    each, in sample and from the other publications' bands."""
    with cal.applied(cal.UNCALIBRATED):
        results = _run(paths, out_of_sample)
    return _with_typical_factors(results)


def _with_typical_factors(results: list[Result]) -> list[Result]:
    from . import bands

    factors: dict[int, list[float]] = {}
    for oos in (False, True):
        for scored in bands.scored(range_points(results, out_of_sample=oos), in_sample=not oos):
            factors.setdefault(scored.point.index, [1.0, 1.0])[oos] = scored.calibrated.typical
    return [replace(r, typical_factor=factors[i][0], typical_factor_oos=factors[i][1]) if i in factors else r
            for i, r in enumerate(results)]


def _run(paths: dict[str, Path | None] | None, out_of_sample: bool) -> list[Result]:
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
    lines += [f"| {regime} | not gated: {NOT_GATED[regime]} |" if regime in NOT_GATED
              else f"| {regime} | {MAX_MEDIAN_ERROR[regime]:.0%} |" if len({r.group for r in rows}) >= MIN_GATED_SOURCES
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


def range_points(results: list[Result], out_of_sample: bool = True) -> "list[bands.Point]":
    """Each case with a calibration slice as a point: measured / estimated as a buyer asks (out of
    sample unless told otherwise)."""
    from .bands import Point  # bands reads this module's regimes

    out = []
    for i, r in enumerate(results):
        x = r.raw_ratio(out_of_sample)
        if r.facts is None or not x > 0:
            continue
        out.append(Point(r.facts, 1 / x if r.facts.figure in cal.RATES else x, r.group, r.case, i))
    return out


# Ranges that hold (issue "Ranges that hold"), read out of sample as a buyer asks: in each regime
# with at least MIN_RANGE_SOURCES publications, the published figure inside the stated range at
# least RANGE_COVERAGE of the time; the median width (high / low) over every case at most
# MAX_MEDIAN_WIDTH; the median ratio within TARGET_MEDIAN is reported beside them.
RANGE_COVERAGE = 0.75
MAX_MEDIAN_WIDTH = 1.8
MIN_RANGE_SOURCES = 3


def range_report(results: list[Result]) -> tuple[list[str], list[str], cal.Table]:
    """The ranges' table by regime and by slice, the gate's failures, and the calibration table."""
    from . import bands

    oos_points, in_points = range_points(results), range_points(results, out_of_sample=False)
    oos, ins = bands.scored(oos_points), bands.scored(in_points, in_sample=True)
    lines = ["", "## Ranges that hold", "",
             "Every figure with a range states low, typical and high: the ends are the model's figure times",
             "the 10th and 90th percentile of measured / estimated in its slice (service/sizing/calibration.py),",
             "each publication weighted equally; the typical figure is the model's, or the model's times the",
             "slice's median where three or more publications show it biased beyond x1/1.15-1.15. *Out of",
             "sample*: the case's publication left out of the fitted constants and of the bands. Coverage: the",
             "share of published figures inside the stated range; width: high / low. Gate, out of sample as a",
             f"buyer asks: coverage at least {RANGE_COVERAGE:.0%} in each regime with at least {MIN_RANGE_SOURCES} "
             f"publications, and a median width of at most {MAX_MEDIAN_WIDTH} over every case (reported: the",
             f"median ratio of the typical figure within x{TARGET_MEDIAN[0]}-{TARGET_MEDIAN[1]}).", "",
             "| regime | cases | sources | coverage (oos) | median width (oos) | coverage (in sample) "
             "| median width (in sample) | median ratio (oos) | within x0.8-1.25 (oos) | gate |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    failures = []
    for regime in FILES:
        o = [x for x in oos if results[x.point.index].regime == regime]
        i = [x for x in ins if results[x.point.index].regime == regime]
        if not o:
            continue
        rows = [r for r in results if r.regime == regime]
        so, si = bands.summary(o), bands.summary(i)
        ratios = summary([r.ratios()["buyer_oos"] for r in rows])
        gated = so["sources"] >= MIN_RANGE_SOURCES
        holds = so["coverage"] >= RANGE_COVERAGE
        if gated and not holds:
            failures.append(f"{regime}: the stated range holds {so['coverage']:.0%} of published figures out of "
                            f"sample, under {RANGE_COVERAGE:.0%}")
        lines.append(f"| {regime} | {so['cases']} | {so['sources']} | {so['coverage']:.0%} | "
                     f"{so['median_width']:.2f} | {si['coverage']:.0%} | {si['median_width']:.2f} | "
                     f"{ratios['median_ratio']:.2f} | {ratios['within']:.0%} | "
                     f"{('yes' if holds else 'no') if gated else 'not gated: under 3 sources'} |")
    whole = bands.summary(oos)
    lines += ["", f"Over every case out of sample: coverage {whole['coverage']:.0%}, median width "
              f"{whole['median_width']:.2f} ({whole['cases']} cases, {whole['sources']} publications).", ""]
    if whole["median_width"] > MAX_MEDIAN_WIDTH:
        failures.append(f"the median width {whole['median_width']:.2f} exceeds {MAX_MEDIAN_WIDTH}")
    table = bands.final_table(oos_points)
    lines += ["### The bands the service states (service/sizing/data/calibration.toml)", "",
              "| slice | cases | sources | low | median | high | coverage (oos) |", "|---|---|---|---|---|---|---|"]
    for key in sorted(table.bands):
        b = table.bands[key]
        lines.append(f"| {'/'.join(k for k in key if k)} | {b.cases} | {b.sources} | {b.low:.2f} | {b.median:.2f} | "
                     f"{b.high:.2f} | {b.coverage:.0%} |")
    return lines, failures, table


def violations(results: list[Result]) -> list[str]:
    out = [f"{r.regime}: {r.case} measured {r.measured:,.4g} beats its ceiling {r.ceiling:,.4g}"
           for r in results if r.beats_ceiling and r.implied_mfu is None]
    out += [f"{r.regime}: {r.case} implies an MFU of {r.implied_mfu:.0%}" for r in results
            if r.beats_ceiling and r.implied_mfu is not None]
    out += [f"{r.regime}: {r.case} has no estimate" for r in results
            if not all(x > 0 for x in r.ratios().values())]
    for regime, rows in by_regime(results).items():
        if len({r.group for r in rows}) < MIN_GATED_SOURCES or regime in NOT_GATED:
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
    for name in dict.fromkeys(FILES.values()):  # a file two regimes share is one option
        regimes = ", ".join(regime for regime, file in FILES.items() if file == name)
        parser.add_argument(f"--{name.removesuffix('.csv').replace('_', '-')}", type=Path,
                            help=f"{regimes} cases CSV (default: the packaged {name})")
    parser.add_argument("--in-sample", action="store_true", help="skip the out-of-sample refits (fast)")
    parser.add_argument("--out", type=Path, default=Path("docs/accuracy.md"))
    parser.add_argument("--calibration", type=Path, default=CALIBRATION,
                        help="where the bands the service states are written (out of sample only)")
    args = parser.parse_args(argv)
    paths = {regime: getattr(args, name.removesuffix(".csv")) for regime, name in FILES.items()}
    results = run(paths, out_of_sample=not args.in_sample)
    ranges, range_failures, table = range_report(results)
    text = report(results) + "\n".join(ranges) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    if not args.in_sample:
        from .bands import to_toml

        args.calibration.write_text(to_toml(table), encoding="utf-8")
    print(text)
    problems = violations(results) + (range_failures if not args.in_sample else [])
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
