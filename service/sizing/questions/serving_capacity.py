"""The capacity question: the least cards of each kind that serve a target."""


from .. import defaults as d
from .. import messages as M
from ..capacity import CapacityAnswer, Target, capacity_for, met_plan
from ..cards import Card
from ..engines import DEFAULT_ENGINE
from ..inputs import (
    HardwareInput,
    Workload,
    WorkloadInput,
)
from ..model import ModelSpec
from ..zh import said_in, sentences
from .placing import opening
from .results import CapacityResult


def capacity(model: ModelSpec, workload: WorkloadInput, cards: tuple[Card, ...], target: Target,
             cards_per_node: int | None = None, network_gb_per_s: float | None = None,
             lang: str | None = None) -> CapacityResult:
    """The cards (and machines) of each kind that serve the target, each on the engine's best
    plan; the option with the fewest cards (then the least power) is best."""
    notes, resolved = opening(model, workload, cards=cards,
                               inference_only=M.ERROR_TARGET_NEEDS_INFERENCE())
    options = tuple(capacity_for(model, resolved, HardwareInput(card, None, cards_per_node, network_gb_per_s),
                                 target, notes) for card in cards)
    meeting = [o for o in options if o.meets_target]
    best = min(meeting, key=lambda o: (o.cards, o.power_w or 0.0)) if meeting else None
    if best is None:
        notes.warn(M.NO_CARD_MEETS_TARGET())
    language = notes.use("lang", lang, d.LANG)
    return said_in(language, CapacityResult(
        model=model, target=target, prompt_tokens=resolved.prompt_tokens,
        output_tokens=resolved.output_tokens or 1, engine=resolved.engine or f"{DEFAULT_ENGINE} (default)",
        options=options,
        best=None if best is None else best.card.id, lang=language,
        summary=capacity_summary(language, model, resolved, target, best), workload=resolved,
        **notes.said()))


def capacity_summary(lang: str, model: ModelSpec, workload: Workload, target: Target,
                     best: CapacityAnswer | None) -> str:
    """The capacity answer in a sentence a chatbot can quote (coded messages said in `lang`)."""
    asked = serving_asked(model, workload, target)
    lengths = M.SERVING_LENGTHS(prompt=workload.prompt_tokens, output=workload.output_tokens or 1)
    if best is None:
        return sentences(lang, (M.CAPACITY_NONE(asked=asked), lengths))
    plan, cards, machines = met_plan(best)
    slow = best.cards_at_low_end
    low_end = (M.CAPACITY_LOW_END(cards=slow, card=best.card.id),) if slow is not None and slow > cards else ()
    return sentences(lang, (M.CAPACITY_BEST(
        asked=asked, cards=cards, card=best.card.id, plan=plan.description,
        machines=M.MACHINES_COUNT(machines=machines) if machines > 1 else M.ONE_MACHINE(),
        speed=best.tokens_per_s_per_user), *low_end, lengths))


def serving_asked(model: ModelSpec, workload: Workload, target: Target) -> M.Message:
    """What the serving question asked, as the head of its summary."""
    said = dict(model=model.name, precision=workload.precision.name, users=target.concurrent_users)
    speed, ttft = target.tokens_per_s_per_user, target.ttft_s
    if speed is not None and ttft is not None:
        return M.SERVING_ASKED_SPEED_TTFT(**said, speed=speed, ttft_s=ttft)
    if speed is not None:
        return M.SERVING_ASKED_SPEED(**said, speed=speed)
    if ttft is not None:
        return M.SERVING_ASKED_TTFT(**said, ttft_s=ttft)
    return M.SERVING_ASKED(**said)
