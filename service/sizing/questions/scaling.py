"""The scaling question: a training job on 1 to 1,024 cards, the deadline's least count."""

import copy
import functools
import math
from dataclasses import replace

from .. import defaults as d
from .. import messages as M
from ..errors import InvalidInputError
from ..inputs import (
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
)
from ..model import ModelSpec
from ..plan import Parallelism
from ..training_time import TrainingAnswer, guide_curve_cards, least_cards_for, training_answer
from ..units import SECONDS_PER_DAY
from .placing import opening, place_training, plan_shown
from .results import ScalingPoint, ScalingResult

CURVE_CARDS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def scaling(
    model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput,
    deadline_days: float | None = None,
) -> ScalingResult:
    """Training compute and time on the cards by the plan's step and the guide's curve, the curve
    over card counts (copies of the plan's model-parallel group), and the least counts that meet
    a deadline."""
    notes, resolved = opening(model, workload, cards=(hardware.card,), training_only=M.ERROR_SCALING_IS_TRAINING(),
                               default_mode="pretrain")
    if resolved.train_tokens is None:
        raise InvalidInputError(M.ERROR_SCALING_NEEDS_TRAIN_TOKENS(), "workload.train_tokens")
    opened = copy.deepcopy(notes)
    job = place_training(model, resolved, hardware, notes)
    group = replace(job.placement.parallelism, data=1, replicas=1)
    answer = job.answer
    least = job.fit.cards_needed
    counts = {n for n in (*CURVE_CARDS, answer.cards, least or 1) if n % group.group == 0}
    curve = tuple(_curve_point(model, job.workload, hardware.card, group, n, job.cluster,
                               least is not None and n >= least)
                  for n in sorted(counts))
    by_deadline: tuple[int | None, int | None] = (None, None)
    if deadline_days is not None and job.fit.cards_needed is None:
        notes.warn(M.DEADLINE_NO_COUNT_HOLDS(card=hardware.card.id, deadline_days=deadline_days))
    if deadline_days is not None and job.fit.cards_needed is not None:
        deadline_s = deadline_days * SECONDS_PER_DAY
        guide_curve = guide_curve_cards(model, job.workload, hardware.card, group, job.cluster,
                                        job.fit.cards_needed, deadline_s)
        by_deadline = (_least_count_by(model, resolved, hardware, job.fit.cards_needed,
                                       job.placement.cards_per_machine, deadline_s), guide_curve)
        if by_deadline[0] is None:
            notes.warn(M.DEADLINE_UNREACHABLE(card=hardware.card.id, max_cards=d.MAX_CARDS,
                                              deadline_days=deadline_days))
    plan = plan_shown(job.placement, answer)
    if by_deadline[0] is not None and deadline_days is not None:
        if hardware.count is None:  # the answer is the deadline's count, said as asking with it says it
            notes = opened
            notes.assume("cards", by_deadline[0], M.DEADLINE_LEAST_COUNT(deadline_days=deadline_days,
                                                                          memory_cards=job.fit.cards_needed))
            at = place_training(model, resolved, replace(hardware, count=by_deadline[0]), notes)
            answer, plan = at.answer, plan_shown(at.placement, at.answer)
        else:
            _missed_deadline(answer, by_deadline[0], deadline_days, notes)
    return ScalingResult(
        training=answer, model=model, card=hardware.card, mode=job.workload.mode, fit=job.fit,
        parallelism=plan, curve=curve, deadline_days=deadline_days,
        cards_needed_by_memory=job.fit.cards_needed, cards_needed_for_deadline=by_deadline[0],
        cards_needed_for_deadline_guide_curve=by_deadline[1], workload=job.workload, **notes.said())


def _missed_deadline(shown: TrainingAnswer, cards: int, deadline_days: float, notes: Notes) -> None:
    """A count the caller gave stays, with a warning when it misses the deadline."""
    if shown.time_s is not None and shown.time_s > deadline_days * SECONDS_PER_DAY:
        notes.warn(M.DEADLINE_MISSED(cards=shown.cards, time_s=shown.time_s, needed=cards, deadline_days=deadline_days))


# The recipe a count gets is searched per count, so time is not monotone in the count: below
# the count the search finds, this many whole machines fewer are tried as well.
DEADLINE_LOOKBACK_MACHINES = 32


def _least_count_by(model: ModelSpec, resolved: Workload, hardware: HardwareInput, memory_cards: int,
                    per_machine: int, deadline_s: float) -> int | None:
    """The least count, in whole machines beyond one, whose own recipe (the one /scaling
    chooses on that count) finishes by the deadline: the answer a caller gets asking with that
    count. The count is galloped and bisected, then the machines below it are tried as well, as
    a count's recipe can make a smaller count faster."""
    @functools.cache
    def time_s(cards: int) -> float:
        try:
            time = place_training(model, resolved, replace(hardware, count=cards), Notes.unread()).answer.time_s
        except InvalidInputError:
            return math.inf
        return math.inf if time is None else time

    for cards in range(memory_cards, min(per_machine, d.MAX_CARDS) + 1):  # inside one machine
        if time_s(cards) <= deadline_s:
            return cards
    start = math.ceil(max(memory_cards, per_machine) / per_machine) * per_machine
    found = least_cards_for(time_s, deadline_s, start, per_machine, d.MAX_CARDS)
    if found is None:
        return None
    lower = max(start, found - DEADLINE_LOOKBACK_MACHINES * per_machine)
    return min((n for n in range(lower, found, per_machine) if time_s(n) <= deadline_s), default=found)


def _curve_point(model, workload, card, group: Parallelism, cards: int, place, fits: bool) -> ScalingPoint:
    par = replace(group, data=cards // group.group)
    answer = training_answer(model, workload, card, par, place, Notes.unread())
    return ScalingPoint(cards, fits, answer.scaling_efficiency, answer.time_s, answer.time_s_guide_curve)
