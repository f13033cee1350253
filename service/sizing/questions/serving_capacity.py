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
from ..zh import said_in
from .placing import opening
from .results import CapacityResult


def capacity(model: ModelSpec, workload: WorkloadInput, cards: tuple[Card, ...], target: Target,
             cards_per_node: int | None = None, network_gb_per_s: float | None = None,
             lang: str | None = None) -> CapacityResult:
    """The cards (and machines) of each kind that serve the target, each on the engine's best
    plan; the option with the fewest cards (then the least power) is best."""
    notes, resolved = opening(model, workload, cards=cards,
                               inference_only="a serving target needs an inference workload")
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
    """The capacity answer in a sentence a chatbot can quote."""
    speed = "" if target.tokens_per_s_per_user is None else target.tokens_per_s_per_user
    if lang == "zh":
        head = (f"{model.name}（{workload.precision.name}）同时服务 {target.concurrent_users} 位用户"
                + (f"、每人 {speed:g} token/s" if speed != "" else "")
                + (f"、首 token {target.ttft_s:g} 秒内" if target.ttft_s is not None else ""))
        if best is None:
            return head + "：所比较的卡都达不到。"
        plan, cards, machines = met_plan(best)
        return (head + f"：最少需要 {cards} 张 {best.card.id}（{plan.description}，"
                f"{machines} 台机器），每人约 {best.tokens_per_s_per_user:.1f} token/s。")
    head = (f"Serving {model.name} ({workload.precision.name}) to {target.concurrent_users} users at once"
            + (f" at {speed:g} tokens/s each" if speed != "" else "")
            + (f" with the first token within {target.ttft_s:g} s" if target.ttft_s is not None else ""))
    if best is None:
        return head + ": no card compared meets it."
    plan, cards, machines = met_plan(best)
    return (head + f" takes at least {cards} x {best.card.id} ({plan.description}, "
            f"{machines} machine{'s' if machines > 1 else ''}), about "
            f"{best.tokens_per_s_per_user:.1f} tokens/s per user.")
