"""Training time on N cards, by the guide's empirical scaling curve and by a communication
model (ring all-reduce inside and across nodes, overlapped with the backward pass)."""

import functools
import math
from dataclasses import dataclass

from . import cluster
from . import defaults as d
from . import scaling as s
from . import training as tr
from .catalog import Card
from .inputs import HardwareInput, Notes, Workload, compute_flops, interconnect_bytes_per_s
from .model import ModelSpec
from .precision import HALF
from .serving import Range
from .units import GB, SECONDS_PER_DAY

MFU_RANGE = (0.3, 0.5)  # public whole-run MFU is mostly 25-48 %; the guide uses 40 %


@dataclass(frozen=True)
class Cluster:
    """Where the cards sit: nodes of `cards_per_node`, each with a network share."""

    cards_per_node: int
    network_bytes_per_s_per_node: float
    link_bytes_per_s: float | None
    link_latency_s: float
    network_latency_s: float

    def nodes(self, cards: int) -> int:
        return math.ceil(cards / self.cards_per_node)


@dataclass(frozen=True)
class TrainingAnswer:
    """Training compute and time on `cards` cards, by two methods, and one step's timing."""

    cards: int
    nodes: int
    cards_per_node: int
    train_tokens: float | None
    flops_per_param_token: float
    compute_flops: float | None
    peak_flops_per_s: float
    mfu: float
    scaling_efficiency: float
    method: str
    time_s_linear: float | None
    time_s: float | None
    time_days: float | None
    time_s_range: Range | None
    time_s_guide_curve: float | None
    gradient_bytes: int
    interconnect_bytes_per_s: float | None
    network_bytes_per_s_per_node: float
    gradient_sync_s: float | None
    step_compute_s: float
    step_time_s: float | None
    allreduce_s: float | None
    overlap: float
    exposed_comm_s: float | None
    step_time_s_comm_model: float | None
    comm_model_efficiency: float | None
    time_s_comm_model: float | None


def cluster_for(card: Card, hardware: HardwareInput, notes: Notes) -> Cluster:
    """Node size, network and latencies: given, or the defaults for the card's line."""
    per_node = hardware.cards_per_node or notes.use(
        "cards_per_node", None, d.Default(d.CARDS_PER_NODE[card.line], f"a typical {card.line} node"))
    network = hardware.network_gb_per_s or notes.use(
        "network_gb_per_s", None, d.Default(d.NETWORK_GB_PER_S_PER_NODE[card.line],
                                            "per node, across nodes: 8 x 400 Gb/s in a data-centre "
                                            "node, 200 GbE for workstations, 100 GbE for consumer builds"))
    return Cluster(per_node, network * GB, interconnect_bytes_per_s(card, notes),
                   d.HOP_LATENCY_S[card.interconnect], d.HOP_LATENCY_S["network"])


def peak_for_training(card: Card, workload: Workload, notes: Notes) -> float:
    keys = ("fp32",) if workload.precision.name == "fp32" else HALF
    return compute_flops(card, keys, notes, "compute")


def training_answer(
    model: ModelSpec, workload: Workload, card: Card, cards: int, place: Cluster, notes: Notes
) -> TrainingAnswer:
    """Compute (6ND, 8ND with full recomputation), time by the guide's curve with its range,
    and by the communication model; the guide's step sync beside the ring all-reduce."""
    peak = peak_for_training(card, workload, notes)
    per_token = tr.compute_multiplier(workload.recompute)
    flops = None if workload.train_tokens is None else per_token * model.params_per_token * workload.train_tokens
    efficiency = _scaling_efficiency(cards, workload.scaling_efficiency, notes)
    linear = None if flops is None else s.training_time_s(flops, cards, peak, workload.mfu)
    gradient_bytes = model.params * notes.use("gradient_bytes_per_param", None, d.GRADIENT_BYTES_PER_PARAM)
    step = (per_token * model.params_per_token * workload.context_tokens * workload.batch_size
            / (workload.parallel.model_parallel * peak * workload.mfu))
    sync = _guide_sync(card, cards, gradient_bytes, place, notes)
    comm = _allreduce(workload, cards, gradient_bytes, place)
    exposed = None if comm is None else cluster.exposed_comm_s(comm, step, workload.overlap)
    comm_efficiency = None if exposed is None else cluster.comm_model_efficiency(step, exposed)
    method, used = _method(workload, efficiency, comm_efficiency, notes)
    time = None if linear is None else linear / used
    return TrainingAnswer(
        cards=cards, nodes=place.nodes(cards), cards_per_node=place.cards_per_node,
        train_tokens=workload.train_tokens, flops_per_param_token=per_token, compute_flops=flops,
        peak_flops_per_s=peak, mfu=workload.mfu, scaling_efficiency=used, method=method,
        time_s_linear=linear, time_s=time,
        time_days=None if time is None else time / SECONDS_PER_DAY,
        time_s_range=None if linear is None else _time_range(linear, workload, efficiency, comm_efficiency),
        time_s_guide_curve=None if linear is None else linear / efficiency,
        gradient_bytes=gradient_bytes, interconnect_bytes_per_s=place.link_bytes_per_s,
        network_bytes_per_s_per_node=place.network_bytes_per_s_per_node,
        gradient_sync_s=sync, step_compute_s=step,
        step_time_s=None if sync is None else step + sync,
        allreduce_s=comm, overlap=workload.overlap, exposed_comm_s=exposed,
        step_time_s_comm_model=None if exposed is None else step + exposed,
        comm_model_efficiency=comm_efficiency,
        time_s_comm_model=None if linear is None or comm_efficiency is None else linear / comm_efficiency,
    )


def _guide_sync(card: Card, cards: int, gradient_bytes: int, place: Cluster, notes: Notes) -> float | None:
    """The guide's first-order sync: gradient bytes over the card's link (0 on one card)."""
    if cards == 1:
        return 0.0
    if place.link_bytes_per_s is None:
        notes.warn(f"{card.id} gives no interconnect bandwidth: gradient sync time not computed")
        return None
    return s.gradient_sync_s(gradient_bytes, place.link_bytes_per_s)


def _allreduce(workload: Workload, cards: int, gradient_bytes: int, place: Cluster) -> float | None:
    """The data-parallel gradient all-reduce of one step (1.5x the traffic under ZeRO-3)."""
    dp = workload.parallel.data_parallel(cards)
    if dp == 1:
        return 0.0
    if place.link_bytes_per_s is None:
        return None
    in_node = max(1, place.cards_per_node // workload.parallel.tensor)
    nic = place.network_bytes_per_s_per_node / place.cards_per_node
    seconds = cluster.hierarchical_allreduce_s(
        gradient_bytes / workload.parallel.model_parallel, dp, in_node, place.link_bytes_per_s,
        place.link_latency_s, nic, place.network_latency_s)
    return seconds * (1.5 if workload.zero_stage == 3 else 1.0)


def _scaling_efficiency(cards: int, given: float | None, notes: Notes) -> float:
    """The guide's curve (or the given efficiency), reported beside the default method."""
    return given if given is not None else s.scaling_efficiency(cards)


# Published whole-run MFU (GPU-hours of LLaMA, OPT, Pythia, MPT, StarCoder: 25-48 %) already
# includes communication and scheduling; the guide's curve on top of it put LLaMA-65B's 2048
# GPUs at 2.5x its GPU-hours (service/accuracy). So by default time is compute at the MFU
# divided by the communication model's efficiency; the guide's curve is reported beside it.
COMM_MODEL_NOTE = ("time = compute at the MFU / the communication model's efficiency: published "
                   "whole-run MFU already includes scaling losses, and the guide's curve on top "
                   "of it overstates large runs (docs/accuracy.md)")


def _method(workload: Workload, guide: float, comm: float | None, notes: Notes) -> tuple[str, float]:
    if workload.scaling_efficiency is not None:
        return "given scaling efficiency", workload.scaling_efficiency
    if comm is None:
        notes.assume("training_time_method", "guide scaling curve",
                     "no link bandwidth for the communication model; the guide's curve is used")
        return "guide scaling curve", guide
    notes.assume("training_time_method", "communication model", COMM_MODEL_NOTE)
    return "communication model", comm


def _time_range(linear: float, workload: Workload, guide: float, comm: float | None) -> Range:
    """Time from the MFU range (30-50 %) and the two scaling methods (the communication model
    at best, the guide's curve at worst), unless given."""
    if workload.scaling_efficiency is not None:
        best = worst = typical = workload.scaling_efficiency
    else:
        typical = comm if comm is not None else guide
        best, worst = max(typical, guide), min(typical, guide)
    mfu = workload.mfu
    low_mfu, high_mfu = (MFU_RANGE if math.isclose(mfu, d.MFU.value) else (mfu, mfu))
    return Range(linear * mfu / (high_mfu * best), linear / typical, linear * mfu / (low_mfu * worst))


def deadline_cards(
    model: ModelSpec, workload: Workload, card: Card, place: Cluster, memory_cards: int,
    deadline_s: float,
) -> tuple[int | None, int | None]:
    """The least card counts whose time meets the deadline: by the default method (whose time
    the answer shows) and by the guide's curve; never fewer than memory needs. One card count
    fewer (one model-parallel group) does not meet it."""
    step = workload.parallel.model_parallel
    start = max(memory_cards, step)

    # Both searches probe mostly the same counts; one answer per count serves both.
    @functools.cache
    def answer(cards: int) -> TrainingAnswer:
        return training_answer(model, workload, card, cards, place, Notes())

    def default(cards: int) -> float:
        time = answer(cards).time_s
        return math.inf if time is None else time

    def guide(cards: int) -> float:
        time = answer(cards).time_s_guide_curve
        return math.inf if time is None else time

    return (_least(default, deadline_s, start, step), _least(guide, deadline_s, start, step))


def _least(time_s, deadline_s: float, start: int, step: int) -> int | None:
    found = cluster.least_cards_for(time_s, deadline_s, start, step, d.MAX_CARDS)
    while found is not None and found - step >= start and time_s(found - step) <= deadline_s:
        found -= step  # a dip at a node boundary: the smaller count also makes it
    return found
