"""Placing a job on cards: the plan serving or training runs on the cards asked (or the least
count), what the answer says about it, and the opening every question shares."""

import functools
from dataclasses import dataclass, replace

from .. import defaults as d
from .. import messages as M
from ..cards import Card
from ..engines import ENGINES
from ..errors import InvalidInputError
from ..frozen import stores_fields
from ..inputs import (
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
    card_warnings,
    resolve_workload,
)
from ..links import Fabric, fabric_for
from ..memory import FitAnswer, MemoryBreakdown, memory_breakdown
from ..model import ModelSpec, context_warning
from ..placement import (
    Placement,
    ServingPlacements,
    TrainingPlacements,
    fit_answer,
    serving_placements,
    training_placements,
)
from ..plan import Parallelism, PlanAnswer, cards_per_machine, plan_answer
from ..throughput import (
    Setup,
    decode_weights_note,
    serving_capacity,
    setup,
    stream_speed,
)
from ..training_time import Cluster, TrainingAnswer, cluster_for, training_answer


@stores_fields
@dataclass(frozen=True)
class Serving:
    """An inference job placed on cards: the plan it runs, the fit, and its speed's setup."""

    workload: Workload
    breakdown: MemoryBreakdown
    placements: ServingPlacements
    fit: FitAnswer
    placement: Placement  # the plan speed is shown for: the cards asked, or those needed
    per_machine: int
    fabric: Fabric
    setup: Setup
    # The plan that serves most at full load on the same cards, where it is not the one shown
    # (which serves the batch asked fastest), with its setup: full-load figures are priced on it.
    full_load: "tuple[Placement, Setup] | None" = None


@dataclass(frozen=True)
class Training:
    """A training job placed on cards: the plan, the fit, the cluster and its time."""

    workload: Workload
    breakdown: MemoryBreakdown
    placements: TrainingPlacements
    fit: FitAnswer
    placement: Placement
    cluster: Cluster
    answer: TrainingAnswer


def place_serving(model: ModelSpec, resolved: Workload, hardware: HardwareInput, notes: Notes,
                  breakdown: MemoryBreakdown | None = None, as_asked: bool = False,
                  full_load: bool = True, said: bool = True) -> Serving:
    """The job on the cards asked (or the least count); speed is set up on the plan shown: the
    cards asked when they hold it (or always, `as_asked`, to price a plan that runs elsewhere with
    less memory reserved, as the accuracy suite does), else the least count's. Without
    `full_load` the plan that serves most at full load is not searched for (an answer that does
    not show full load). Without `said` the memory's parts and the fit's reason are not said (an
    answer that shows neither, nor its warnings)."""
    card = hardware.card
    # what is not said (the fit's reason, the memory's parts) is quoted by no note either
    assert said or notes.quiet, "place_serving: notes are kept, so the reasons are said"
    breakdown = breakdown or memory_breakdown(model, resolved, notes, said=said)
    plan = serving_plan(model, resolved, breakdown, hardware, notes, full_load, said)
    placements = plan.placements
    shown = placements.asked if as_asked else _shown(placements.asked, placements.least)
    if not notes.quiet:
        serving_plan_notes(model, resolved, placements, shown, notes)
        decode_weights_note(model, resolved.batch_size, notes)
    s = setup(model, resolved, breakdown, card, shown.parallelism, plan.fabric, notes)
    most = None
    if plan.full_load is not None and shown is placements.asked and plan.full_load[0] is not shown:
        most = plan.full_load
        plan_used = most[0].parallelism
        notes.assume("full_load_parallelism", plan_used.describe(), M.FULL_LOAD_PLAN(plan=plan_used.said()))
    return Serving(resolved, breakdown, placements, plan.fit, shown, plan.per_machine, plan.fabric, s, most)


def least_serving(model: ModelSpec, resolved: Workload, breakdown: MemoryBreakdown, card: Card,
                  per_machine: int, fabric: Fabric) -> tuple[Placement, Setup] | None:
    """The least count of `card` that holds the job, the engine's plan on it and its speed set up:
    what place_serving shows for no count, without the notes it keeps or the layer split beside
    it (an alternative's, on the machines and links of the answer it is an alternative to)."""
    least = serving_placements(model, resolved, breakdown, card, None, per_machine, Notes.unread(), fewer=False).least
    if least is None:
        return None
    return least, setup(model, resolved, breakdown, card, least.parallelism, fabric, Notes.unread())


@stores_fields
@dataclass(frozen=True)
class ServingPlan:
    placements: ServingPlacements
    fit: FitAnswer
    per_machine: int
    fabric: Fabric
    full_load: tuple[Placement, Setup] | None = None  # the copy size that serves most at full load


def serving_plan(model: ModelSpec, resolved: Workload, breakdown: MemoryBreakdown,
                  hardware: HardwareInput, notes: Notes, full_load: bool = True, said: bool = True) -> ServingPlan:
    """The engine's plan on the cards for the question asked: among the copy sizes that hold the
    batch, the one that serves the batch asked fastest (one stream gets every card of one copy
    that helps it; a large batch, copies that share it), and beside it the one that serves the
    most at full load, for the full-load figures. Each copy size is set up once for both."""
    card = hardware.card
    per_machine = cards_per_machine(card, hardware.cards_per_node, notes)
    placements = serving_placements(model, resolved, breakdown, card, hardware.count, per_machine, notes)
    fabric = fabric_for(card, per_machine, hardware.network_gb_per_s, notes)
    most = None
    if len(placements.options) > 1:
        options = [(placed, setup(model, resolved, breakdown, card, placed.parallelism, fabric, Notes.unread()))
                   for placed in placements.options]
        placements = replace(placements, asked=_fastest(resolved, options)[0])
        most = _most_served(model, resolved, options) if full_load else None
    fit = fit_answer(placements.asked, placements.least, card, hardware.count is not None, said)
    _fit_warnings(fit, card, notes)
    return ServingPlan(placements, fit, per_machine, fabric, most)


def _fastest(workload: Workload, options: list[tuple[Placement, Setup]]) -> tuple[Placement, Setup]:
    """Of the copy sizes that hold the batch on the cards, the one that decodes the batch asked
    fastest: the most tokens/s in total for that batch (for one stream, per stream), the
    smallest copy on a tie."""
    return max(options, key=lambda option: stream_speed(workload, option[1]) * workload.batch_size)


def _most_served(model: ModelSpec, workload: Workload,
                 options: list[tuple[Placement, Setup]]) -> tuple[Placement, Setup]:
    """Of the copy sizes that hold the batch on the cards, the one whose copies serve the most
    output at full load (the smallest on a tie): more copies of a small split, or fewer of a
    larger one with room for longer batches."""
    def served(option: tuple[Placement, Setup]) -> float:
        placed, s = option
        return serving_capacity(model, workload, s, placed, Notes.unread(), ends=False)["max_total_tokens_per_s"] or 0.0

    return max(options, key=served)  # max keeps the first of equals: the smallest copy


def place_training(model: ModelSpec, resolved: Workload, hardware: HardwareInput, notes: Notes) -> Training:
    card = hardware.card
    per_machine = cards_per_machine(card, hardware.cards_per_node, notes)
    placements = training_placements(model, resolved, card, hardware.count, per_machine, notes)
    fit = fit_answer(placements.asked, placements.least, card, hardware.count is not None)
    _fit_warnings(fit, card, notes)
    shown = _shown(placements.asked, placements.least)
    place = cluster_for(card, hardware, notes)
    if shown.fits:
        answer = training_answer(model, placements.workload, card, shown.parallelism, place, notes)
        _training_warnings(answer, card, shown.parallelism, notes)
    else:  # no count holds it: no time, and no warning about a run that cannot start
        scratch = Notes(quiet=notes.quiet)
        answer = training_answer(model, placements.workload, card, shown.parallelism, place, scratch)
        notes.assume_all(scratch.assumptions)
        notes.warn(_training_fixes(model, placements.workload, card, per_machine))
        answer = replace(answer, time_s=None, time_days=None, time_s_range=None,
                         time_s_guide_curve=None, step_time_s=None, steps=None)
    return Training(placements.workload, placements.breakdown, placements, fit, shown, place, answer)


def _training_fixes(model: ModelSpec, workload: Workload, card: Card, per_machine: int) -> M.Message:
    """What makes a training batch fit when no count of `card` holds it: the largest micro-batch
    that does, full recomputation, or both; tensor parallelism is what remains."""
    def least(variant: Workload) -> int | None:
        try:
            held = training_placements(model, variant, card, None, per_machine, Notes.unread()).least
        except InvalidInputError:
            return None
        return None if held is None else held.cards

    fixes = []
    for recompute in dict.fromkeys((workload.recompute, "full")):
        micro = workload.batch_size
        while micro >= 1:
            cards = least(replace(workload, batch_size=micro, recompute=recompute))
            if cards is not None:
                fixes.append(_fix(micro if micro != workload.batch_size else None,
                                  recompute != workload.recompute, cards, card.id))
                break
            micro //= 2
    return M.TRAINING_BATCH_FITS_NOWHERE(micro_batch=workload.batch_size, context_tokens=workload.context_tokens,
                                         card=card.id, found=tuple(fixes) or (M.FIX_NONE(),))


def _fix(micro_batch: int | None, recompute: bool, cards: int, card: str) -> M.Message:
    """What fits: a smaller micro-batch, full recomputation, both, or the batch as asked."""
    if micro_batch is not None and recompute:
        return M.FIX_MICRO_BATCH_AND_RECOMPUTE(micro_batch=micro_batch, cards=cards, card=card)
    if micro_batch is not None:
        return M.FIX_MICRO_BATCH(micro_batch=micro_batch, cards=cards, card=card)
    if recompute:
        return M.FIX_RECOMPUTE(cards=cards, card=card)
    return M.FITS_AS_ASKED(cards=cards, card=card)


def _shown(asked: Placement, least: Placement | None) -> Placement:
    """Speed is shown on the cards asked for when they hold the job, else on those needed."""
    if asked.fits or least is None:
        return asked
    return least


def plan_shown(shown: Placement, training: TrainingAnswer | None = None) -> PlanAnswer:
    return plan_answer(shown.parallelism, shown.cards, shown.machines, shown.cards_per_machine,
                       shown.given, training)


def opening(model: ModelSpec, workload: WorkloadInput, *, cards: tuple[Card, ...] = (),
             inference_only: M.Message | None = None, training_only: M.Message | None = None,
             default_mode: str | None = None, quiet: bool = False) -> tuple[Notes, Workload]:
    """How every answer opens: the notes it collects and its workload resolved. An answer only
    for one kind of work refuses the other with its reason; `default_mode` stands in for a mode
    not given (said in the assumptions); `quiet`, for an answer that shows no notes (Notes.quiet)."""
    notes = Notes(quiet=quiet)
    card_warnings(cards, notes)
    if default_mode is not None and workload.mode is None:
        notes.assume("mode", default_mode, M.SCALING_IS_TRAINING())
        workload = replace(workload, mode=default_mode)
    resolved = resolve_workload(workload, notes, model, cards)
    if inference_only is not None and resolved.training:
        raise InvalidInputError(inference_only, "workload.mode")
    if training_only is not None and not resolved.training:
        raise InvalidInputError(training_only, "workload.mode")
    context_warning(model, resolved.context_tokens, notes)
    return notes, resolved


def _fit_warnings(fit: FitAnswer, card: Card, notes: Notes) -> None:
    if fit.cards_needed is None:
        notes.warn(lambda: M.FITS_NOWHERE(card=card.id, reason=fit.reason))  # said where the warnings show
    elif not fit.fits:
        notes.warn(lambda: M.FITS_ON_MORE(reason=fit.reason, cards=fit.cards_needed))
    if fit.count > d.CLUSTER_COMPLEXITY_CARDS or (fit.cards_needed or 0) > d.CLUSTER_COMPLEXITY_CARDS:
        notes.warn(M.CLUSTER_COMPLEXITY(cards=d.CLUSTER_COMPLEXITY_CARDS))


@functools.lru_cache(maxsize=256)
def _tensor_plan_words(engine: str | None, heads: int | None, kv_heads: int | None, spread: bool) -> M.Message:
    """Why the engine runs a tensor plan, said once per engine, heads and kind of plan (the same
    words for every question of a model)."""
    said_heads = M.kept(M.HEADS_COUNT, heads=heads, kv_heads=kv_heads) if heads else M.THE_HEADS()
    return M.ENGINE_TENSOR_PLAN(engine=engine or M.ANY_SERVING_ENGINE(), heads=said_heads,
                                across=M.EXPERT_PARALLELISM() if spread else M.PIPELINE_STAGES())


def serving_plan_notes(model: ModelSpec, workload: Workload, placements: ServingPlacements,
                        shown: Placement, notes: Notes) -> None:
    """Say which plan the engine runs and why, and what it leaves on the table."""
    engine = ENGINES[workload.engine]
    par = shown.parallelism
    name = workload.engine or M.ANY_SERVING_ENGINE()
    if shown.given:
        why = M.PLAN_GIVEN()
    elif engine.split == "layer":
        why = M.ENGINE_SPLITS_LAYERS(engine=name)
    else:
        why = _tensor_plan_words(workload.engine, model.attention_heads, model.resolved_kv_heads, par.expert > 1)
    notes.assume("parallelism", par.describe(), why)
    if shown.idle_cards:
        notes.warn(M.IDLE_CARDS_GIVE_PLAN(plan=par.said(), idle=shown.idle_cards, cards=shown.cards))
    if engine.split == "layer" and par.pipeline > shown.cards_per_machine:
        notes.warn(M.LAYER_SPLIT_SPANS_MACHINES(cards=par.pipeline, machines=shown.machines))
    if par.tensor > shown.cards_per_machine:
        notes.warn(M.TENSOR_SPANS_MACHINES(cards=par.tensor))
    fewer, least = placements.fewer, placements.least
    if fewer is not None and least is not None:
        notes.assume("cards_needed", least.cards, M.PIPELINE_FEWER_CARDS(
            cards=least.cards, fewer=fewer.cards, plan=fewer.parallelism.said()))


BUBBLE_WARNING_SHARE = 0.2  # of a step; beyond it the plan wastes a fifth of its cards' time


BATCH_GROWTH_WARNING = 1.25  # a global batch a quarter above the one asked changes the training


def _training_warnings(train: TrainingAnswer, card: Card, par: Parallelism, notes: Notes) -> None:
    if train.global_batch_tokens > BATCH_GROWTH_WARNING * train.global_batch_tokens_asked:
        notes.warn(M.GLOBAL_BATCH_GROWS(tokens=train.global_batch_tokens, asked=train.global_batch_tokens_asked,
                                        copies=par.data * par.expert, micro_batch=train.micro_batch))
    if train.step_s and train.pipeline_bubble_s and train.pipeline_bubble_s > BUBBLE_WARNING_SHARE * train.step_s:
        notes.warn(M.PIPELINE_BUBBLE(share=train.pipeline_bubble_s / train.step_s, stages=par.pipeline,
                                     micro_batches=train.gradient_accumulation, virtual_stages=train.virtual_stages))
    if train.step_efficiency is not None and train.step_efficiency < 0.8 and train.cards > 1:
        parts = {M.PART_TENSOR: train.tensor_comm_s or 0.0, M.PART_EXPERT: train.expert_comm_s or 0.0,
                 M.PART_BUBBLE: train.pipeline_bubble_s or 0.0, M.PART_DATA: train.data_comm_exposed_s or 0.0}
        worst = max(parts, key=parts.__getitem__)
        notes.warn(M.STEP_MOSTLY_WAITING(share=train.step_efficiency, step_s=train.step_s, plan=par.said(),
                                         worst=worst(), worst_s=parts[worst]))
    if train.gradient_sync_s and train.gradient_sync_s > train.step_compute_s:
        notes.warn(M.GRADIENT_SYNC_BINDS(sync_s=train.gradient_sync_s, compute_s=train.step_compute_s))
    if not card.ecc and train.time_s is not None and train.time_s > d.LONG_RUN_S_WITHOUT_ECC:
        notes.warn(M.LONG_RUN_WITHOUT_ECC())
