"""A quotable one-paragraph summary of an estimate, in English or Chinese."""

from typing import TypedDict

from .cards import Card
from .cost import EnergyAnswer
from .inputs import Workload
from .memory import FitAnswer, MemoryBreakdown
from .model import ModelSpec, beyond_context
from .plan import PlanAnswer
from .throughput import ThroughputAnswer
from .training_time import TrainingAnswer
from .units import BILLION, GB, SECONDS_PER_DAY


class _Sentences(TypedDict):
    """One language's table: the separator, the words for modes and bounds, and each sentence."""

    sep: str
    mode: dict[str, str]
    bound: dict[str, str]
    need: str
    need_many: str
    never: str
    fits: str
    short: str
    speed: str
    plan: str
    load: str
    batch: str
    single: str
    train: str
    train_step: str
    guide: str
    energy: str
    one_machine: str
    machines: str
    context: str


# One table per language: the same sentences in the same order, decided once in _sentences.
_TEXT: dict[str, _Sentences] = {
    "en": {
        "sep": " ",
        "mode": {"inference": "inference", "full_finetune": "a full fine-tune",
                 "lora": "a LoRA fine-tune", "qlora": "a QLoRA fine-tune", "pretrain": "pre-training"},
        "bound": {"memory": "memory-bound", "compute": "compute-bound"},
        "need": ("A {params_b:.1f}B-parameter model in {precision} for {mode} needs {total_gb:.1f} GB "
                 "on one card, of which {state_gb:.1f} GB is model state."),
        "need_many": ("A {params_b:.1f}B-parameter model in {precision} for {mode} needs {card_gb:.1f} GB "
                      "per card on {count} cards ({total_gb:.1f} GB in all), of which {state_gb:.1f} GB "
                      "per card is model state."),
        "never": "It does not fit on any number of {card} cards.",
        "fits": "It fits on {count} x {card} ({free_gb:.1f} GB free per card).",
        "short": ("It does not fit on {count} x {card} ({short_gb:.1f} GB short per card); "
                  "{needed} are needed."),
        "speed": ("On {cards} x {card}{plan} it generates about {expected:.1f} tokens/s per stream "
                  "({low:.1f}-{high:.1f}; ceiling {ceiling:.1f}, {bound}){batch}"),
        "plan": " ({plan})",
        "load": ("At full load ({prompt} tokens in, {output} out) it sustains about {total:,.0f} "
                 "output tokens/s with {sequences} sequences at once."),
        "batch": ", {total:.0f} tokens/s for a batch of {batch_size}.",
        "single": ".",
        "train": ("Training on {tokens:.3g} tokens takes about {days:.1f} days on {cards} cards "
                  "({low_days:.1f}-{high_days:.1f}) at {mfu:.0%} MFU and {scaling:.0%} scaling "
                  "({method}){guide}."),
        "train_step": ("Training on {tokens:.3g} tokens takes about {days:.1f} days on {cards} cards "
                       "({low_days:.1f}-{high_days:.1f}) at {mfu:.0%} MFU all in, restarts and "
                       "checkpoints included (step model){guide}."),
        "guide": "; the guide's scaling curve says {guide_days:.1f}",
        "energy": ("{who} about {power_w:,.0f} W: {cost:,.0f} {currency} of electricity "
                   "a year at {price:g} per kWh."),
        "one_machine": "The machine draws",
        "machines": "The {machines} machines draw",
        "context": ("The {context:,}-token context is beyond the model's {positions:,} positions: "
                    "expect degraded output."),
    },
    "zh": {
        "sep": "",
        "mode": {"inference": "推理", "full_finetune": "全参数微调", "lora": "LoRA 微调",
                 "qlora": "QLoRA 微调", "pretrain": "预训练"},
        "bound": {"memory": "带宽受限", "compute": "算力受限"},
        "need": ("{params_b:.1f}B 参数的模型以 {precision} 做{mode}，单卡需要 {total_gb:.1f} GB 显存，"
                 "其中模型状态 {state_gb:.1f} GB。"),
        "need_many": ("{params_b:.1f}B 参数的模型以 {precision} 做{mode}，在 {count} 张卡上每卡需要 "
                      "{card_gb:.1f} GB 显存（合计 {total_gb:.1f} GB），其中每卡模型状态 {state_gb:.1f} GB。"),
        "never": "任何数量的 {card} 都放不下。",
        "fits": "{count} 张 {card} 放得下（每卡余 {free_gb:.1f} GB）。",
        "short": "{count} 张 {card} 放不下（每卡差 {short_gb:.1f} GB），需要 {needed} 张。",
        "speed": ("{cards} 张 {card}{plan}上单路生成约 {expected:.1f} token/s（{low:.1f}-{high:.1f}；"
                  "上限 {ceiling:.1f}，{bound}）{batch}"),
        "plan": "（{plan}）",
        "load": ("满载时（输入 {prompt} token、输出 {output} token）同时处理 {sequences} 路，"
                 "总输出约 {total:,.0f} token/s。"),
        "batch": "，batch {batch_size} 时总吞吐约 {total:.0f} token/s。",
        "single": "。",
        "train": ("训练 {tokens:.3g} token 在 {cards} 张卡上约需 {days:.1f} 天（{low_days:.1f}-"
                  "{high_days:.1f}；利用率 {mfu:.0%}，扩展效率 {scaling:.0%}{guide}）。"),
        "train_step": ("训练 {tokens:.3g} token 在 {cards} 张卡上约需 {days:.1f} 天（{low_days:.1f}-"
                       "{high_days:.1f}；含重启与检查点的综合利用率 {mfu:.0%}，按步骤模型{guide}）。"),
        "guide": "；按指南的扩展曲线约 {guide_days:.1f} 天",
        "energy": ("{who}约 {power_w:,.0f} W，按每度电 {price:g} 算，每年电费约 "
                   "{cost:,.0f} {currency}。"),
        "one_machine": "整机功耗",
        "machines": "{machines} 台整机合计功耗",
        "context": "{context:,} token 的上下文超出了模型的 {positions:,} 个位置，输出质量会下降。",
    },
}


def summarise(
    lang: str, model: ModelSpec, workload: Workload, card: Card, memory: MemoryBreakdown,
    fit: FitAnswer, plan: PlanAnswer, speed: ThroughputAnswer | None, train: TrainingAnswer | None,
    energy: EnergyAnswer, machines: int = 1,
) -> str:
    """The estimate in a few sentences a chatbot can quote."""
    text = _TEXT["zh" if lang == "zh" else "en"]
    return text["sep"].join(_sentences(text, model, workload, card, memory, fit, plan, speed, train,
                                       energy, machines))


def _sentences(text, model, workload, card, memory, fit, plan, speed, train, energy, machines):
    cards = fit.total_bytes // max(1, fit.need_bytes_per_card)  # the cards the plan uses
    yield text["need" if cards <= 1 else "need_many"].format(
        params_b=model.params / BILLION, precision=workload.precision.name,
        mode=text["mode"][workload.mode], total_gb=fit.total_bytes / GB, count=cards,
        card_gb=fit.need_bytes_per_card / GB, state_gb=fit.model_state_bytes_per_card / GB)
    if beyond_context(model, workload.context_tokens):
        yield text["context"].format(context=workload.context_tokens, positions=model.max_context_tokens)
    if fit.cards_needed is None:
        yield text["never"].format(card=card.id)
    elif fit.fits:
        yield text["fits"].format(count=fit.count, card=card.id, free_gb=fit.free_bytes_per_card / GB)
    else:
        yield text["short"].format(count=fit.count, card=card.id,
                                   short_gb=-fit.free_bytes_per_card / GB, needed=fit.cards_needed)
    if speed is not None and fit.cards_needed is not None:
        r = speed.decode_tokens_per_s_range
        batch = (text["batch"].format(total=speed.total_tokens_per_s, batch_size=speed.batch_size)
                 if speed.batch_size > 1 else text["single"])
        yield text["speed"].format(
            cards=speed.cards, card=card.id, expected=speed.decode_tokens_per_s_expected,
            plan=text["plan"].format(plan=plan.description) if plan.cards > 1 else "",
            low=r.low, high=r.high, ceiling=speed.decode_tokens_per_s_ceiling,
            bound=text["bound"][speed.bound], batch=batch)
        if speed.max_total_tokens_per_s is not None:
            yield text["load"].format(prompt=speed.prompt_tokens, output=speed.output_tokens,
                                      total=speed.max_total_tokens_per_s,
                                      sequences=speed.capacity_batch_size)
    if train is not None and train.time_s is not None:
        r = train.time_s_range
        guide = ("" if train.time_s_guide_curve is None or train.method != "step model" else
                 text["guide"].format(guide_days=train.time_s_guide_curve / SECONDS_PER_DAY))
        step = train.method == "step model"
        # The step model's time is priced at its own MFU (the run's goodput included), not the guide's
        all_in = train.compute_flops / (train.cards * train.peak_flops_per_s * train.time_s) \
            if step and train.compute_flops else train.mfu
        yield text["train_step" if step else "train"].format(
            tokens=train.train_tokens, days=train.time_s / SECONDS_PER_DAY, cards=train.cards,
            low_days=r.low / SECONDS_PER_DAY, high_days=r.high / SECONDS_PER_DAY, mfu=all_in,
            scaling=train.scaling_efficiency, method=train.method, guide=guide)
    who = text["machines"].format(machines=machines) if machines > 1 else text["one_machine"]
    yield text["energy"].format(who=who, power_w=energy.power_w, cost=energy.electricity_cost_per_year,
                                currency=energy.currency, price=energy.price_per_kwh)
