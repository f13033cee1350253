"""Capacity for a serving target: how many cards (and machines) of a kind serve so many users at
so many tokens per second each, with a first token within so many seconds.

For each way the engine splits one copy of the model, the largest batch a copy can run while
every user still gets the speed asked (and the first token in time) sets how many users one copy
serves; copies fill the target. The plan with the fewest cards wins.
"""

import math
from dataclasses import dataclass, replace

from . import calibration
from . import defaults as d
from . import messages as M
from .cards import Card
from .engines import ENGINES
from .host import host_sizing
from .inputs import Assumption, HardwareInput, Notes, Workload
from .links import fabric_for
from .memory import memory_breakdown
from .model import ModelSpec
from .placement import groups_holding, usable_bytes
from .plan import Parallelism, PlanAnswer, cards_per_machine, machine_slots, machines_for, plan_answer
from .throughput import CapacityPoint, calibrated, capacity_copy, compute_ceiling, setup

PLANS_BEYOND_FIRST = 4  # larger copies tried after the first that holds a sequence


@dataclass(frozen=True)
class Target:
    """What a serving deployment must sustain: users at once, each at this speed, first token
    within this time (None: no such limit)."""

    concurrent_users: int
    """Users (sequences) served at once, as asked."""
    tokens_per_s_per_user: float | None = None
    """Decode speed each user must get, in tokens/s, as asked; null when no speed was set."""
    ttft_s: float | None = None
    """Time to first token each user must get at that load, in seconds, as asked; null when no limit was set."""


@dataclass(frozen=True)
class CapacityAnswer:
    """The cards of one kind a target needs, and what they deliver."""

    card: Card
    """The card this option sizes, in brief."""
    meets_target: bool
    """Whether some count of this card meets the target (within the most cards sized)."""
    cards: int | None
    """Least cards of this kind that meet the target; null when it is not met."""
    machines: int | None
    """Machines that carry cards; null when the target is not met."""
    parallelism: PlanAnswer | None
    """The plan one copy runs, with replicas as the copies; null when the target is not met."""
    copies: int | None
    """Copies of the model (replicas) serving the users; null when the target is not met."""
    sequences_per_copy: int | None
    """Sequences each copy runs at once, the users shared evenly; null when the target is not met."""
    tokens_per_s_per_user: float | None
    """Decode speed each user gets, in tokens/s: 1 / time_per_output_token_s. Null when the target is not met."""
    time_to_first_token_s: float | None
    """Time to first token at the batch each copy runs, in s; null when the target is not met."""
    time_per_output_token_s: float | None
    """One decode step at that batch, in s: the time between a user's tokens. Null when the target is not met."""
    total_tokens_per_s: float | None
    """Output tokens/s for all the target's users (tokens_per_s_per_user x concurrent_users), not the cards' full
    capacity; null when the target is not met."""
    power_w: float | None
    """Typical draw of all the machines in W, cards with their hosts; null when the target is not met."""
    reason: M.Message
    """Sentence on how the target is met (copies, plan, sequences per copy, tokens/s per user, most users a copy
    takes) or why it is not."""
    assumptions: tuple[Assumption, ...] = ()
    """Defaults this card's answer applied (machine size, links, usable memory, bandwidth share, fixed costs), with
    values and why."""
    cards_at_low_end: int | None = None
    """Least cards of this kind that meet the target if speed and first token come out at the slow ends of their
    ranges (published runs of this kind: see the throughput ranges' notes); null when none does within the most cards
    sized, or when the target is not met at the typical figures."""


def met_plan(answer: CapacityAnswer) -> tuple[PlanAnswer, int, int]:
    """The plan, cards and machines of an answer that meets its target (_met sets all three)."""
    plan, cards, machines = answer.parallelism, answer.cards, answer.machines
    assert plan is not None and cards is not None and machines is not None, "the answer meets no target"
    return plan, cards, machines


@dataclass(frozen=True)
class _Option:
    group: Parallelism
    batch: int  # sequences each copy runs for the target's users
    most: int   # the most it could run within the target
    point: CapacityPoint
    copies: int

    @property
    def cards(self) -> int:
        return self.copies * self.group.group


def capacity_for(model: ModelSpec, workload: Workload, hardware: HardwareInput, target: Target,
                 notes: Notes, count: int | None = None) -> CapacityAnswer:
    """The least cards (or, with `count`, that many cards) that meet `target` at the typical
    figures (_sized), and the cards that would meet it at the slow ends of their ranges."""
    answer = _sized(model, workload, hardware, target, notes, count, TYPICAL)
    if not answer.meets_target:
        return answer
    slow = _sized(model, workload, replace(hardware, count=None), target, Notes.unread(), None, SLOW)
    return replace(answer, cards_at_low_end=slow.cards if slow.meets_target else None)


TYPICAL, SLOW = "typical", "slow"


def _sized(model: ModelSpec, workload: Workload, hardware: HardwareInput, target: Target,
           notes: Notes, count: int | None, end: str) -> CapacityAnswer:
    """The least cards of `hardware.card` that meet `target`, on the engine's best plan; with
    `count`, whether that many cards meet it and how fast, on the plan that serves each user
    fastest (cards no copy uses stay idle). What the card's answer assumed (its machines, links,
    bandwidth share and fixed costs) is its own; `notes` takes what every card shares."""
    card = hardware.card
    engine = ENGINES[workload.engine]
    own = Notes()
    per_machine = cards_per_machine(card, hardware.cards_per_node, own)
    fabric = fabric_for(card, per_machine, hardware.network_gb_per_s, own)
    prompt, output = workload.prompt_tokens, workload.output_tokens or 1
    breakdown = memory_breakdown(model, replace(workload, batch_size=1), notes)
    usable = usable_bytes(card, own)
    best: _Option | None = None
    closest: tuple[float, float, Parallelism] | None = None
    tried = 0
    for group in groups_holding(model, engine, per_machine,
                                lambda par: breakdown.serving_need_bytes_per_card(par, 1) <= usable):
        s = setup(model, workload, breakdown, card, group, fabric, Notes.unread())
        option, fastest = _option(model, workload, s, group, prompt, output, usable, target, count, end)
        if option is not None and (best is None or _better(option, best, count)):
            best = option
        if fastest is not None and (closest is None or fastest[0] > closest[0]):
            closest = (*fastest, group)
        tried += 1
        if tried > PLANS_BEYOND_FIRST:
            break
    if best is None:
        return replace(_unmet(card, target, closest, tried), assumptions=tuple(own.assumptions))
    if count is None and best.cards > d.MAX_CARDS:
        return CapacityAnswer(card, False, None, None, None, None, None, None, None, None, None, None,
                              M.TARGET_NEEDS_TOO_MANY(cards=best.cards, card=card.id, most=d.MAX_CARDS),
                              tuple(own.assumptions))
    setup(model, workload, breakdown, card, best.group, fabric, own)  # the chosen plan's assumptions
    return replace(_met(card, best, per_machine, target, count), assumptions=tuple(own.assumptions))


def _better(option: _Option, best: _Option, count: int | None) -> bool:
    """Fewer cards, then more tokens/s; on a fixed count, faster per user."""
    if count is not None:
        return option.point.step_s < best.point.step_s
    ours, theirs = option.point.total_tokens_per_s, best.point.total_tokens_per_s
    return (option.cards, -ours) < (best.cards, -theirs)


def _option(model, workload, s, group, prompt, output, usable, target,
            count: int | None = None, end: str = TYPICAL) -> tuple[_Option | None, tuple | None]:
    """The largest batch one copy runs within the target, and the copy's best per-user speed
    and first-token time (at batch 1) for when it cannot; on `count` cards, as many copies as
    they hold, or none when those copies cannot carry every user within the target."""
    copy = capacity_copy(model, workload, s, group, prompt, output, usable)
    if copy is None:
        return None, None
    # the typical of published runs of this kind: steps under load by the full-load band, the
    # first token under load by the loaded band, one prompt alone by the light band
    full, loaded_band, light_band = (calibrated(figure, model, workload, s, load) for figure, load in (
        (calibration.FULL_LOAD, calibration.ANY), (calibration.TTFT, "loaded"), (calibration.TTFT, "light")))
    if end == SLOW:  # the slow ends: least output, latest first token
        speed, loaded, light = full.low, loaded_band.high, light_band.high
    else:
        speed, loaded, light = full.typical, loaded_band.typical, light_band.typical

    def ok(batch: int) -> bool:
        step_s, _ = copy.typical(batch)
        fast = target.tokens_per_s_per_user is None or speed / step_s >= target.tokens_per_s_per_user
        # the users' prompts also queue behind each other's (CapacityCopy.time_to_first_token_s)
        soon = target.ttft_s is None or loaded * copy.time_to_first_token_s(batch) <= target.ttft_s
        return fast and soon

    alone = (speed / copy.typical(1)[0], light * copy.prefill_alone_s)
    if not ok(1):
        return None, alone
    low, high = 1, copy.largest
    if ok(high):
        low = high
    while low < high:
        middle = (low + high + 1) // 2
        if ok(middle):
            low = middle
        else:
            high = middle - 1
    copies = math.ceil(target.concurrent_users / low) if count is None else count // group.group
    if copies == 0 or math.ceil(target.concurrent_users / copies) > low:
        return None, alone
    running = math.ceil(target.concurrent_users / copies)  # the users share the copies evenly
    point = copy.at(running)
    ceiling = compute_ceiling(model, s, prompt, output)  # no factor serves more than the cards' peak
    total = min(point.total_tokens_per_s * speed, ceiling)
    point = replace(point, step_s=point.step_s * point.total_tokens_per_s / total,
                    time_to_first_token_s=point.time_to_first_token_s * loaded, total_tokens_per_s=total)
    return _Option(group, running, low, point, copies), alone


def _met(card: Card, best: _Option, per_machine: int, target: Target, count: int | None) -> CapacityAnswer:
    par = replace(best.group, replicas=best.copies)
    cards = count or par.cards  # a count given is bought and powered, idle cards too
    host = host_sizing(card, cards, machine_slots(par, per_machine))
    users = target.concurrent_users
    per_user = 1 / best.point.step_s
    machines = machines_for(par, per_machine, cards)
    return CapacityAnswer(
        card=card, meets_target=True, cards=cards, machines=machines,
        parallelism=plan_answer(par, cards, machines, per_machine, False),
        copies=best.copies, sequences_per_copy=best.batch, tokens_per_s_per_user=per_user,
        time_to_first_token_s=best.point.time_to_first_token_s,
        time_per_output_token_s=best.point.step_s,
        total_tokens_per_s=per_user * users, power_w=host.typical_power_w,
        reason=(M.TARGET_MET_ONE_COPY if best.copies == 1 else M.TARGET_MET_COPIES)(
            copies=best.copies, plan=best.group.said(), cards=par.cards, card=card.id, sequences=best.batch,
            per_user=per_user, most=best.most))


def _unmet(card: Card, target: Target, closest, tried: int) -> CapacityAnswer:
    if tried == 0 or closest is None:
        reason = M.NO_PLAN_HOLDS_ONE(card=card.id)
    else:
        speed, ttft, group = closest
        wants = []
        if target.tokens_per_s_per_user is not None and speed < target.tokens_per_s_per_user:
            wants.append(M.TARGET_SPEED_MISSED(asked=target.tokens_per_s_per_user, speed=speed,
                                               plan=group.said()))
        if target.ttft_s is not None and ttft > target.ttft_s:
            wants.append(M.TARGET_TTFT_MISSED(asked_s=target.ttft_s, ttft_s=ttft))
        reason = M.CLAUSES(clauses=tuple(wants)) if wants else M.TARGET_NOT_MET()
    return CapacityAnswer(card, False, None, None, None, None, None, None, None, None, None, None,
                          reason)
