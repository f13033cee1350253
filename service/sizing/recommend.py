"""Recommending a product line, a tier and a count: the guide's three questions pick the line,
the memory need picks the candidates, and the fastest (or the best per unit of cost) wins."""

from dataclasses import dataclass, replace

from . import defaults as d
from . import messages as M
from .capacity import Target, capacity_for, met_plan
from .cards import LINES, Card, Catalog
from .catalog import Price
from .errors import InvalidInputError
from .host import host_sizing
from .inputs import (
    Assumption,
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
    resolve_workload,
    say_derived_half_precision,
)
from .memory import MemoryBreakdown, memory_breakdown
from .model import ModelSpec, context_warning
from .placement import cards_needed
from .plan import cards_per_machine
from .questions import place_serving, place_training
from .throughput import decode_speed
from .zh import say_zh

# Cards one machine holds when the model may be split; a training cluster may grow to
# d.CLUSTER_COMPLEXITY_CARDS (guide 5.3: beyond 32 cards complexity rises steeply).
LINE_MAX_CARDS = {"consumer": 2, "workstation": 4, "datacenter": 8}
INFERENCE_ONLY_TIERS = ("D-S",)


@dataclass(frozen=True)
class Constraints:
    """The guide's questions. `power_w` is the most one card may draw (the request's
    power_w_per_card; power_w_total bounds the whole installation instead): what the PSU, case
    and cooling can take; `continuous_hours` how long it must run without a break."""

    power_w: float | None = None
    power_w_total: float | None = None
    continuous_hours: float | None = None
    splittable: bool | None = None
    budget: float | None = None
    certified_drivers: bool = False
    ecc: bool = False


@dataclass(frozen=True)
class Candidate:
    card: Card
    count: int | None
    fits: bool
    figure: str
    value: float | None
    price_total: float | None
    value_per_cost: float | None
    reason: str


@dataclass(frozen=True)
class Recommendation:
    line: str
    excluded_lines: tuple[tuple[str, str], ...]  # (line, why), in English
    choice: Candidate | None
    candidates: tuple[Candidate, ...]
    examples: tuple[Card, ...]
    ranked_by: str
    reasons_en: tuple[str, ...]
    reasons_zh: tuple[str, ...]
    assumptions: tuple[Assumption, ...] = ()
    warnings: tuple[str, ...] = ()
    excluded_lines_zh: tuple[tuple[str, str], ...] = ()  # (line, why), in Chinese


def line_exclusions(c: Constraints) -> dict[str, tuple[str, str]]:
    """Why each line is ruled out by the constraints, in English and Chinese (absent: allowed)."""
    out = {}
    hours = c.continuous_hours
    if hours is not None and hours > d.CONSUMER_MAX_HOURS_PER_DAY:
        out["consumer"] = (f"runs {hours:g} h continuously; consumer cards are built for a few hours a day",
                           f"需要连续运行 {hours:g} 小时；消费级卡按每天几小时设计")
    elif c.ecc:
        out["consumer"] = ("ECC is required; consumer cards have none", "需要 ECC；消费级卡没有")
    elif c.certified_drivers:
        out["consumer"] = ("certified drivers are required; consumer cards have none",
                           "需要认证驱动；消费级卡没有")
    if c.certified_drivers:
        out["datacenter"] = ("professional software needs workstation drivers with certification",
                             "专业软件需要工作站卡的认证驱动")
    return out


def recommend(
    model: ModelSpec, workload: WorkloadInput, constraints: Constraints, catalog: Catalog,
    prices: dict[str, Price], target: Target | None = None, assumed: tuple[Assumption, ...] = (),
) -> Recommendation:
    """Line by constraints (escalating when no tier of it holds the model), then the fastest
    tier that fits within the power and budget, or the best per unit of cost with prices. With
    a serving target, each tier is sized to meet it and the fewest cards (or the least cost)
    win. `assumed` are what the caller did not give (a scenario's model and workload), said
    first."""
    notes = Notes()
    for a in assumed:
        notes.assume(a.name, a.value, a.note)
    resolved = resolve_workload(workload, notes, model)
    context_warning(model, resolved.context_tokens, notes)
    if target is not None and resolved.training:
        raise InvalidInputError("a serving target needs an inference workload", "target")
    if constraints.budget is not None and not prices:
        notes.warn(M.BUDGET_UNCHECKED(budget=constraints.budget))
    result = _recommend(model, resolved, constraints, catalog, prices, target)
    if result.choice is not None:
        say_derived_half_precision(result.choice.card, notes)
    else:
        notes.warn(M.NO_TIER_MEETS())
    return replace(result, assumptions=tuple(notes.assumptions), warnings=tuple(notes.warnings))


def _recommend(model: ModelSpec, resolved: Workload, constraints: Constraints, catalog: Catalog,
               prices: dict[str, Price], target: Target | None) -> Recommendation:
    tiers = [c for c in catalog.cards if c.kind == "tier"]
    excluded = line_exclusions(constraints)
    allowed = [line for line in LINES if line not in excluded]
    if not allowed:
        raise InvalidInputError("the constraints rule out every product line", "constraints")
    reasons = [(f"{line}: {en}", f"{line}：{zh}") for line, (en, zh) in excluded.items()]
    candidates: tuple[Candidate, ...] = ()
    evaluated: list[Candidate] = []
    # A serving job's memory is the same on every card: made once for the candidates.
    breakdown = None if resolved.training or target is not None else memory_breakdown(model, resolved, Notes())
    for line in allowed:
        line_tiers = [card for card in tiers if card.line == line]
        if _pcie_cluster(model, resolved, line_tiers, constraints):
            reasons.append((f"{line}: a training job that needs several of its largest cards needs a "
                            "fast interconnect, and this line talks over PCIe (guide 6.4: never save "
                            "10 % on the interconnect, it costs 30 %+ of training efficiency)",
                            f"{line}：多卡训练需要高速互联，这一档只走通用总线（别为省 10% 选低一档"
                            "互联，训练效率损失 30% 起步）"))
            continue
        candidates = tuple(_candidate(model, resolved, card, constraints, prices, breakdown) if target is None
                           else _for_target(model, resolved, card, constraints, prices, target)
                           for card in line_tiers)
        evaluated.extend(candidates)
        fitting = [c for c in candidates if c.fits]
        if fitting:
            choice, ranked_by = _best(fitting)
            examples = _examples(model, resolved, catalog, choice, breakdown)
            en, zh = _reasons(line, reasons, choice, ranked_by)
            return Recommendation(line, _excluded(excluded, 0), choice, tuple(evaluated), examples,
                                  ranked_by, en, zh, excluded_lines_zh=_excluded(excluded, 1))
        if target is not None:
            reasons.append((f"{line}: no tier meets the target within the power limit",
                            f"{line}：在功耗限制内没有档位达到服务目标"))
            continue
        limit = _max_cards(line, constraints, resolved)
        reasons.append((f"{line}: no tier holds the model within {limit} card(s) and the power limit",
                        f"{line}：在 {limit} 张卡和功耗限制内没有档位放得下"))
    en, zh = tuple(r[0] for r in reasons), tuple(r[1] for r in reasons)
    return Recommendation(allowed[-1], _excluded(excluded, 0), None, tuple(evaluated), (),
                          "none", en, zh, excluded_lines_zh=_excluded(excluded, 1))


def _examples(model: ModelSpec, workload: Workload, catalog: Catalog, choice: Candidate,
              breakdown: MemoryBreakdown | None) -> tuple[Card, ...]:
    """Real cards of the chosen tier that hold the job on the count recommended."""
    count = choice.count or 1

    def holds(card: Card) -> bool:
        needed, _ = cards_needed(model, workload, card, breakdown)
        return needed is not None and needed <= count

    return tuple(card for card in catalog.cards
                 if card.kind == "card" and card.tier == choice.card.id and holds(card))


def _excluded(excluded: dict, language: int) -> tuple[tuple[str, str], ...]:
    """(line, why) for each excluded line, in English (0) or Chinese (1)."""
    return tuple((line, said[language]) for line, said in excluded.items())


def _pcie_cluster(model: ModelSpec, workload: Workload, line_tiers: list[Card], c: Constraints) -> bool:
    """A splittable training job that needs more than one of the line's largest PCIe card."""
    largest = max(line_tiers, key=lambda card: card.memory_bytes)
    if not (workload.training and c.splittable and largest.interconnect == "pcie"):
        return False
    needed, _ = cards_needed(model, workload, largest)
    return needed is None or needed > 1


def _max_cards(line: str, c: Constraints, workload: Workload) -> int:
    if not c.splittable:
        return 1
    if workload.training and line == "datacenter":
        return d.CLUSTER_COMPLEXITY_CARDS
    return LINE_MAX_CARDS[line]


def _candidate(model: ModelSpec, workload: Workload, card: Card, c: Constraints,
               prices: dict[str, Price], breakdown: MemoryBreakdown | None) -> Candidate:
    notes = Notes()
    figure = "training_tokens_per_s" if workload.training else (
        "total_tokens_per_s" if workload.batch_size > 1 else "decode_tokens_per_s_expected")
    if workload.training and card.tier in INFERENCE_ONLY_TIERS:
        return Candidate(card, None, False, figure, None, None, None,
                         M.INFERENCE_CARD(card=card.id))
    limit = _max_cards(card.line, c, workload)
    count, usable = cards_needed(model, workload, card, breakdown)
    if count is None or count > limit:
        need = _job(model, workload, card, limit, notes, breakdown).fit.need_bytes_per_card
        said = M.NEEDS_MORE_CARDS(limit=limit, need_bytes=need, usable_bytes=usable, cards=count) if count else \
            M.NEEDS_ANY_CARDS(limit=limit, need_bytes=need, usable_bytes=usable)
        return Candidate(card, count, False, figure, None, None, None, said)
    if c.power_w is not None and card.power_w > c.power_w:
        return Candidate(card, count, False, figure, None, None, None,
                         M.CARD_POWER_OVER(power_w=card.power_w, allowed_w=c.power_w))
    over = _over_total_power(c, card, count)
    if over:
        return Candidate(card, count, False, figure, None, None, None, over)
    job = _job(model, workload, card, count, notes, breakdown)
    value = _figure(model, workload, job, figure)
    price = prices.get(card.id)
    total = None if price is None else price.amount * count
    if c.budget is not None and total is not None and total > c.budget:
        return Candidate(card, count, False, figure, value, total, None,
                         M.OVER_BUDGET(cards=count, total=total, budget=c.budget))
    return Candidate(card, count, True, figure, value, total,
                     None if total is None else value / total,
                     M.CARDS_HOLD_IT(cards=count, card=card.id, need_bytes=job.fit.need_bytes_per_card,
                                     usable_bytes=usable, figure=figure, value=value))


def _for_target(model: ModelSpec, workload: Workload, card: Card, c: Constraints,
                prices: dict[str, Price], target: Target) -> Candidate:
    """The tier sized for a serving target: the cards (over as many machines as it takes) on
    the engine's best plan; a model that must not be split may only be copied, one card each."""
    figure = "cards_for_target"
    if c.power_w is not None and card.power_w > c.power_w:
        return Candidate(card, None, False, figure, None, None, None,
                         M.CARD_POWER_OVER(power_w=card.power_w, allowed_w=c.power_w))
    answer = capacity_for(model, workload, HardwareInput(card), target, Notes())
    if not answer.meets_target:
        return Candidate(card, None, False, figure, None, None, None, answer.reason)
    plan, cards, _ = met_plan(answer)
    over = _over_total_power(c, card, cards, answer.power_w)
    if over:
        return Candidate(card, cards, False, figure, None, None, None, over)
    group = plan.group
    if c.splittable is False and group > 1:
        return Candidate(card, cards, False, figure, None, None, None, M.MUST_NOT_SPLIT(cards=group))
    price = prices.get(card.id)
    total = None if price is None else price.amount * cards
    if c.budget is not None and total is not None and total > c.budget:
        return Candidate(card, cards, False, figure, cards, total, None,
                         M.OVER_BUDGET(cards=cards, total=total, budget=c.budget))
    return Candidate(card, cards, True, figure, cards, total,
                     None if total is None else 1 / total,
                     f"{answer.reason}; {answer.machines} machine(s), {answer.power_w:,.0f} W")


def machine_power_w(card: Card, count: int) -> float:
    """What the machines carrying `count` cards draw: the figure /cost and /estimate price."""
    return host_sizing(card, count, cards_per_machine(card, None, Notes())).typical_power_w


def _over_total_power(c: Constraints, card: Card, cards: int, power_w: float | None = None) -> str | None:
    """Why the machines break power_w_total (their draw, host included: `power_w` where the
    answer has it, else sized here), or None; nothing is sized without a total to check."""
    if c.power_w_total is None:
        return None
    power_w = power_w or machine_power_w(card, cards)
    if power_w <= c.power_w_total:
        return None
    return M.MACHINES_POWER_OVER(cards=cards, power_w=power_w, allowed_w=c.power_w_total)


def _job(model, workload: Workload, card: Card, count: int, notes: Notes,
         breakdown: MemoryBreakdown | None):
    hardware = HardwareInput(card, count)
    if workload.training:
        return place_training(model, workload, hardware, notes)
    return place_serving(model, workload, hardware, notes, breakdown)


def _figure(model, workload, job, figure) -> float:
    if workload.training:
        answer = job.answer
        return (answer.cards * answer.peak_flops_per_s * workload.mfu * answer.scaling_efficiency
                / (answer.flops_per_param_token * model.params_per_token))
    speed = decode_speed(workload, job.setup)
    return speed.total.typical if figure == "total_tokens_per_s" else speed.per_stream.typical


def _best(fitting: list[Candidate]) -> tuple[Candidate, str]:
    if fitting[0].figure == "cards_for_target":
        costs = [(c, c.price_total) for c in fitting if c.price_total is not None]
        if costs and len(costs) == len(fitting):
            return min(costs, key=lambda pair: pair[1])[0], "cost for the target"
        return min(fitting, key=lambda c: (c.value, c.card.power_w)), "fewest cards for the target"
    per_cost = [(c, c.value_per_cost) for c in fitting if c.value_per_cost is not None]
    if per_cost and len(per_cost) == len(fitting):
        return max(per_cost, key=lambda pair: pair[1])[0], f"{fitting[0].figure} per unit of cost"
    return max(fitting, key=_fitting_value), fitting[0].figure


def _fitting_value(candidate: Candidate) -> float:
    """The figure of a candidate that fits: _candidate and _for_target give one to every such."""
    assert candidate.value is not None, f"{candidate.card.id} fits without a {candidate.figure}"
    return candidate.value


_FIGURES_ZH = {
    "training_tokens_per_s": "训练吞吐（training_tokens_per_s）",
    "total_tokens_per_s": "总吞吐（total_tokens_per_s）",
    "decode_tokens_per_s_expected": "单路生成速度（decode_tokens_per_s_expected）",
    "fewest cards for the target": "满足目标所需卡数最少",
    "cost for the target": "满足目标的成本最低",
}


def ranked_by_zh(ranked_by: str) -> str:
    """What a recommendation was ranked by, in Chinese."""
    per_cost = ranked_by.endswith(" per unit of cost")
    figure = ranked_by.removesuffix(" per unit of cost")
    said = _FIGURES_ZH.get(figure, figure)
    return f"每单位成本的{said}" if per_cost else said


def _reasons(line, reasons, choice, ranked_by) -> tuple[tuple[str, ...], tuple[str, ...]]:
    card = choice.card
    met = "meets the target" if choice.figure == "cards_for_target" else "memory fits"
    met_zh = "满足服务目标" if choice.figure == "cards_for_target" else "显存放得下"
    en = [f"product line {line}: the lowest line the constraints allow", *(r[0] for r in reasons),
          f"{choice.count} x {card.id}: {met}, and it is the best by {ranked_by} "
          f"({choice.value:,.1f})"]
    zh = [f"产品线 {line}：约束条件允许的最低一档", *(r[1] for r in reasons),
          f"{choice.count} 张 {card.id}：{met_zh}，且按{ranked_by_zh(ranked_by)}最优（{choice.value:,.1f}）"]
    return tuple(en), tuple(zh)


@dataclass(frozen=True)
class Scenario:
    """One of the guide's worked scenarios (section 5) and the guide's answer to it."""

    id: str
    title: str
    model: str
    workload: dict
    constraints: Constraints
    guide_counts: dict
    guide_answer: str
    title_zh: str = ""
    guide_answer_zh: str = ""

    @property
    def guide_tiers(self) -> tuple[str, ...]:
        return tuple(self.guide_counts)


SCENARIOS = {
    s.id: s
    for s in (
        Scenario("developer", "one developer, 7B-13B fine-tune and inference", "llama-2-7b",
                 {"mode": "lora", "context_tokens": 4096},
                 Constraints(power_w=250, continuous_hours=4, splittable=False),
                 {"C70": 1, "W-A": 1},
                 "C70 (tight: LoRA at batch 1, 2K sequence) or W-A (7B LoRA at 4K, 13B 4-bit "
                 "inference at 20-30 tokens/s)",
                 "个人开发者，7B-13B 微调与推理",
                 "C70（紧张：LoRA batch 1、2K 序列）或 W-A（7B LoRA 4K，13B 4-bit 推理 20-30 token/s）"),
        Scenario("team_inference", "team inference service, 30B-70B, dozens of concurrent users",
                 "qwen2.5-32b", {"precision": "awq", "context_tokens": 4096, "batch_size": 32},
                 Constraints(power_w=300, continuous_hours=24 * 365, splittable=True),
                 {"W-B": 2, "D-S": 2},
                 "2 x W-B (replicas, data parallel) or 2-4 x D-S (tensor parallel); 70B half "
                 "precision needs 3 x W-B or 2 x D-M",
                 "团队推理服务，30B-70B，几十路并发",
                 "2 张 W-B（副本，数据并行）或 2-4 张 D-S（张量并行）；70B 半精度需要 3 张 W-B 或 2 张 D-M"),
        Scenario("training_cluster", "small training cluster, 7B-13B full fine-tune", "llama-2-7b",
                 {"mode": "full_finetune", "context_tokens": 4096, "batch_size": 1},
                 Constraints(power_w=700, continuous_hours=24 * 30, splittable=True, ecc=True),
                 {"D-M": 4},
                 "4 x 80 GB (33 GB each) for 7B, 8 cards for 13B; a high-speed interconnect; "
                 "stay at or under 32 cards",
                 "小型训练集群，7B-13B 全参数微调",
                 "7B 用 4 张 80 GB（每卡 33 GB），13B 用 8 张；要高速互联；控制在 32 张以内"),
    )
}


def scenario_assumptions(scenario: Scenario, given: set[str]) -> tuple[Assumption, ...]:
    """What a scenario supplies that the caller did not give: its model, workload and
    constraints, each with where it comes from."""
    why = M.SCENARIO_SUPPLIES(scenario=scenario.id, title=scenario.title)
    c = scenario.constraints
    supplied = {
        "model": scenario.model,
        "workload": ", ".join(f"{k} {v}" for k, v in scenario.workload.items()),
        "constraints": ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                 for k, v in vars(c).items() if v not in (None, False)),
    }
    return tuple(Assumption(name, value, why) for name, value in supplied.items() if name not in given)


def compare_with_guide(scenario: Scenario, result: Recommendation,
                       lang: str = "en") -> tuple[bool, tuple[str, ...]]:
    """Whether the service lands on one of the guide's tiers, and each guide tier's figures."""
    choice = result.choice
    chosen = choice.card.id if choice else None
    by_tier = {c.card.id: c for c in result.candidates}
    zh = lang == "zh"
    lines = []
    for tier in scenario.guide_tiers:
        candidate = by_tier.get(tier)
        if tier == chosen:
            assert candidate is not None  # the choice is one of the candidates
            guide_count = scenario.guide_counts[tier]
            differs = candidate.count != guide_count
            if zh:
                lines.append(f"{tier}：服务也选它，{candidate.count} 张" + (
                    f"，指南说 {guide_count} 张：{say_zh(candidate.reason)}" if differs else ""))
            else:
                lines.append(f"{tier}: the service's choice too, {candidate.count} card(s)" + (
                    f" where the guide says {guide_count}: {candidate.reason}" if differs else ""))
        elif candidate is None:
            lines.append(f"{tier}：未评估；更低一档的产品线（{result.line}）已满足约束" if zh else
                         f"{tier}: not evaluated; a lower line ({result.line}) already meets the "
                         "constraints")
        elif not candidate.fits:
            lines.append(f"{tier}：服务不同意：{say_zh(candidate.reason)}" if zh else
                         f"{tier}: the service disagrees: {candidate.reason}")
        else:
            assert choice is not None  # recommend chooses whenever a candidate fits
            lines.append(
                f"{tier}：{candidate.count} 张放得下，{candidate.figure} {candidate.value:,.1f}，"
                f"低于 {chosen} 的 {choice.value:,.1f}" if zh else
                f"{tier}: fits on {candidate.count} card(s) with {candidate.figure} "
                f"{candidate.value:,.1f}, below {chosen}'s {choice.value:,.1f}")
    return chosen in scenario.guide_tiers, tuple(lines)


def summary(result: Recommendation, lang: str) -> str:
    """The recommendation in a sentence or two."""
    choice = result.choice
    if choice is None:
        return ("没有任何档位满足这些约束。" if lang == "zh"
                else "No tier of any allowed line meets these constraints.")
    card = choice.card
    if lang == "zh":
        return (f"推荐 {result.line} 产品线的 {card.id}，{choice.count} 张：显存放得下，"
                f"且按{ranked_by_zh(result.ranked_by)}最优（{choice.value:,.1f}）。")
    return (f"Recommended: {choice.count} x {card.id} ({result.line} line): it holds the model and "
            f"is the best by {result.ranked_by} ({choice.value:,.1f}).")
