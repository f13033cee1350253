"""A quotable one-paragraph summary of an estimate, in English or Chinese."""

from .answers import EnergyAnswer
from .serving import ThroughputAnswer
from .training_time import TrainingAnswer
from .catalog import Card
from .inputs import Workload
from .memory_answer import FitAnswer, MemoryBreakdown
from .model import ModelSpec
from .units import BILLION, GB, SECONDS_PER_DAY

_MODE_EN = {
    "inference": "inference",
    "full_finetune": "a full fine-tune",
    "lora": "a LoRA fine-tune",
    "qlora": "a QLoRA fine-tune",
    "pretrain": "pre-training",
}
_MODE_ZH = {
    "inference": "推理",
    "full_finetune": "全参数微调",
    "lora": "LoRA 微调",
    "qlora": "QLoRA 微调",
    "pretrain": "预训练",
}
_BOUND_ZH = {"memory": "带宽受限", "compute": "算力受限"}


def summarise(
    lang: str, model: ModelSpec, workload: Workload, card: Card, memory: MemoryBreakdown,
    fit: FitAnswer, speed: ThroughputAnswer | None, train: TrainingAnswer | None,
    energy: EnergyAnswer,
) -> str:
    """The estimate in a few sentences a chatbot can quote."""
    if lang == "zh":
        return "".join(_zh(model, workload, card, memory, fit, speed, train, energy))
    return " ".join(_en(model, workload, card, memory, fit, speed, train, energy))


def _en(model, workload, card, memory, fit, speed, train, energy):
    size = f"{model.params / BILLION:.1f}B-parameter model"
    yield (f"A {size} in {workload.precision.name} for {_MODE_EN[workload.mode]} needs "
           f"{fit.total_bytes / GB:.1f} GB on {fit.count} card{'s' if fit.count > 1 else ''}, of which {memory.model_state_bytes / GB:.1f} GB is "
           f"model state.")
    if fit.cards_needed is None:
        yield f"It does not fit on any number of {card.id} cards."
    elif fit.fits:
        yield f"It fits on {fit.count} x {card.id} ({fit.free_bytes_per_card / GB:.1f} GB free per card)."
    else:
        yield (f"It does not fit on {fit.count} x {card.id} ({-fit.free_bytes_per_card / GB:.1f} GB "
               f"short per card); {fit.cards_needed} are needed.")
    if speed is not None and fit.cards_needed is not None:
        r = speed.decode_tokens_per_s_range
        yield (f"On {speed.cards} x {card.id} it generates about "
               f"{speed.decode_tokens_per_s_expected:.1f} tokens/s per stream ({r.low:.1f}-{r.high:.1f}; "
               f"ceiling {speed.decode_tokens_per_s_ceiling:.1f}, {speed.bound}-bound)"
               + (f", {speed.total_tokens_per_s:.0f} tokens/s for a batch of {speed.batch_size}."
                  if speed.batch_size > 1 else "."))
    if train is not None and train.time_s is not None:
        r = train.time_s_range
        guide = ("" if train.time_s_guide_curve is None or train.method != "communication model" else
                 f"; the guide's scaling curve says {train.time_s_guide_curve / SECONDS_PER_DAY:.1f}")
        yield (f"Training on {train.train_tokens:.3g} tokens "
               f"takes about {train.time_s / SECONDS_PER_DAY:.1f} days on {train.cards} cards "
               f"({r.low / SECONDS_PER_DAY:.1f}-{r.high / SECONDS_PER_DAY:.1f}) "
               f"at {train.mfu:.0%} MFU and {train.scaling_efficiency:.0%} scaling ({train.method}){guide}.")
    yield (f"The machine draws about {energy.power_w:,.0f} W: {energy.electricity_cost_per_year:,.0f} "
           f"{energy.currency} of electricity a year at {energy.price_per_kwh:g} per kWh.")


def _zh(model, workload, card, memory, fit, speed, train, energy):
    yield (f"{model.params / BILLION:.1f}B 参数的模型以 {workload.precision.name} 做"
           f"{_MODE_ZH[workload.mode]}，在 {fit.count} 张卡上需要 {fit.total_bytes / GB:.1f} GB 显存，"
           f"其中模型状态 {memory.model_state_bytes / GB:.1f} GB。")
    if fit.cards_needed is None:
        yield f"任何数量的 {card.id} 都放不下。"
    elif fit.fits:
        yield f"{fit.count} 张 {card.id} 放得下（每卡余 {fit.free_bytes_per_card / GB:.1f} GB）。"
    else:
        yield (f"{fit.count} 张 {card.id} 放不下（每卡差 {-fit.free_bytes_per_card / GB:.1f} GB），"
               f"需要 {fit.cards_needed} 张。")
    if speed is not None and fit.cards_needed is not None:
        r = speed.decode_tokens_per_s_range
        yield (f"{speed.cards} 张 {card.id} 上单路生成约 {speed.decode_tokens_per_s_expected:.1f} token/s"
               f"（{r.low:.1f}-{r.high:.1f}；上限 {speed.decode_tokens_per_s_ceiling:.1f}，"
               f"{_BOUND_ZH[speed.bound]}）"
               + (f"，batch {speed.batch_size} 时总吞吐约 {speed.total_tokens_per_s:.0f} token/s。"
                  if speed.batch_size > 1 else "。"))
    if train is not None and train.time_s is not None:
        r = train.time_s_range
        comm = ("" if train.time_s_guide_curve is None or train.method != "communication model" else
                f"；按指南的扩展曲线约 {train.time_s_guide_curve / SECONDS_PER_DAY:.1f} 天")
        yield (f"训练 {train.train_tokens:.3g} token 在 {train.cards} 张卡上约需 "
               f"{train.time_s / SECONDS_PER_DAY:.1f} 天（{r.low / SECONDS_PER_DAY:.1f}-"
               f"{r.high / SECONDS_PER_DAY:.1f}；利用率 {train.mfu:.0%}，扩展效率 "
               f"{train.scaling_efficiency:.0%}{comm}）。")
    yield (f"整机功耗约 {energy.power_w:,.0f} W，按每度电 {energy.price_per_kwh:g} 算，"
           f"每年电费约 {energy.electricity_cost_per_year:,.0f} {energy.currency}。")
