"""A quotable one-paragraph summary of an estimate: coded messages, said in the caller's language."""

from collections.abc import Iterator

from . import messages as M
from .cards import Card
from .cost import EnergyAnswer, OwnershipAnswer
from .inputs import Workload
from .memory import FitAnswer, MemoryBreakdown
from .model import ModelSpec, beyond_context
from .plan import PlanAnswer
from .throughput import ThroughputAnswer
from .training_time import TrainingAnswer
from .zh import sentences


def summarise(
    lang: str, model: ModelSpec, workload: Workload, card: Card, memory: MemoryBreakdown,
    fit: FitAnswer, plan: PlanAnswer, speed: ThroughputAnswer | None, train: TrainingAnswer | None,
    energy: EnergyAnswer, machines: int = 1, fits_in: M.Message | None = None,
) -> str:
    """The estimate in a few sentences a chatbot can quote, each a coded message said in `lang`;
    `fits_in` says the format that fits on the cards asked when the one asked does not."""
    return sentences(lang, _sentences(model, workload, card, fit, plan, speed, train, energy, machines, fits_in))


def _sentences(model, workload, card, fit, plan, speed, train, energy, machines,
               fits_in: M.Message | None = None) -> Iterator[M.Message]:
    yield from _memory_sentences(model, workload, card, fit, fits_in)
    if speed is not None and fit.cards_needed is not None:
        r = speed.decode_tokens_per_s_range
        batch = (M.SUMMARY_BATCH(total=speed.total_tokens_per_s, batch_size=speed.batch_size)
                 if speed.batch_size > 1 else M.SUMMARY_SINGLE())
        said = dict(cards=speed.cards, card=card.id, expected=speed.decode_tokens_per_s_expected, low=r.low,
                    high=r.high, ceiling=speed.decode_tokens_per_s_ceiling, bound=M.BOUND_WORDS[speed.bound](),
                    batch=batch)
        yield M.SUMMARY_SPEED_PLAN(**said, plan=plan.description) if plan.cards > 1 else M.SUMMARY_SPEED(**said)
        if speed.max_total_tokens_per_s is not None:
            yield M.SUMMARY_LOAD(prompt=speed.prompt_tokens, output=speed.output_tokens,
                                 total=speed.max_total_tokens_per_s, sequences=speed.capacity_batch_size)
    if train is not None and train.time_s is not None:
        yield _training(train)
    who = M.MACHINES_DRAW(machines=machines) if machines > 1 else M.MACHINE_DRAWS()
    yield M.SUMMARY_ENERGY(who=who, power_w=energy.power_w, cost=energy.electricity_cost_per_year,
                           currency=energy.currency, price=energy.price_per_kwh)


def _memory_sentences(model: ModelSpec, workload: Workload, card: Card, fit: FitAnswer,
                      fits_in: M.Message | None = None) -> Iterator[M.Message]:
    """What the job needs, and whether the cards asked hold it (the format that does when not)."""
    cards = fit.total_bytes // max(1, fit.need_bytes_per_card)  # the cards the plan uses
    mode = M.MODE_WORDS[workload.mode]()
    if cards <= 1:
        yield M.SUMMARY_NEED(params=model.params, precision=workload.precision.name, mode=mode,
                             total_bytes=fit.total_bytes, state_bytes=fit.model_state_bytes_per_card)
    else:
        yield M.SUMMARY_NEED_MANY(params=model.params, precision=workload.precision.name, mode=mode,
                                  card_bytes=fit.need_bytes_per_card, cards=cards, total_bytes=fit.total_bytes,
                                  state_bytes=fit.model_state_bytes_per_card)
    if beyond_context(model, workload.context_tokens):
        yield M.SUMMARY_CONTEXT(context=workload.context_tokens, positions=model.max_context_tokens)
    if fit.cards_needed is None:
        yield M.SUMMARY_NEVER(card=card.id)
        return
    if not fit.count_given and fit.cards_needed > 1:  # "can one 4090 ...?" asked without a count
        yield M.SUMMARY_NOT_ONE(card=card.id, needed=fit.cards_needed)
    if fit.fits:
        yield M.SUMMARY_FITS(cards=fit.count, card=card.id, free_bytes=fit.free_bytes_per_card)
    else:
        yield M.SUMMARY_SHORT(cards=fit.count, card=card.id, short_bytes=-fit.free_bytes_per_card,
                              needed=fit.cards_needed)
        if fits_in is not None:
            yield fits_in


def _training(train: TrainingAnswer) -> M.Message:
    r = train.time_s_range
    assert train.time_s is not None and r is not None  # a time is quoted with its range
    said = dict(tokens=train.train_tokens, time_s=train.time_s, cards=train.cards, low_s=r.low, high_s=r.high)
    if train.method != "step model":
        return M.SUMMARY_TRAIN(**said, mfu=train.mfu, scaling=train.scaling_efficiency,
                               method=M.TRAINING_METHOD[train.method]())
    # The step model's time is priced at its own MFU (the run's goodput included), not the guide's
    all_in = train.compute_flops / (train.cards * train.peak_flops_per_s * train.time_s) \
        if train.compute_flops else train.mfu
    if train.time_s_guide_curve is None:
        return M.SUMMARY_TRAIN_STEP(**said, mfu=all_in)
    return M.SUMMARY_TRAIN_STEP_GUIDE(**said, mfu=all_in, guide_s=train.time_s_guide_curve)


# --- the other tools' summaries: each answer's first sentence, the one an assistant quotes

def memory_summary(lang: str, model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown,
                   card: Card | None, fit: FitAnswer | None) -> str:
    """The memory the job needs, and with a card whether the cards asked hold it."""
    if card is None or fit is None:
        said = [M.SUMMARY_MEMORY_ALONE(params=model.params, precision=workload.precision.name,
                                       mode=M.MODE_WORDS[workload.mode](), total_bytes=breakdown.total_bytes,
                                       weights_bytes=breakdown.weights_bytes)]
        if beyond_context(model, workload.context_tokens):
            said.append(M.SUMMARY_CONTEXT(context=workload.context_tokens, positions=model.max_context_tokens))
        return sentences(lang, said)
    return sentences(lang, _memory_sentences(model, workload, card, fit))


def cost_summary(lang: str, energy: EnergyAnswer, ownership: OwnershipAnswer | None, machines: int) -> str:
    """The draw and a year's electricity, the fleet's when there are several installations, and
    the cost of ownership when a card price is known."""
    who = (M.INSTALLATION_DRAWS() if energy.power_basis == "given" else
           M.MACHINES_DRAW(machines=machines) if machines > 1 else M.MACHINE_DRAWS())
    said = [M.SUMMARY_ENERGY(who=who, power_w=energy.power_w, cost=energy.electricity_cost_per_year,
                             currency=energy.currency, price=energy.price_per_kwh)]
    if energy.machines > 1:
        said.append(M.SUMMARY_FLEET(installations=energy.machines, cost=energy.fleet_electricity_cost_per_year,
                                    currency=energy.currency))
    if ownership is not None:
        said.append(M.SUMMARY_OWNERSHIP(years=ownership.years, total=ownership.total, low=ownership.total_low,
                                        high=ownership.total_high, currency=ownership.currency))
    return sentences(lang, said)


def card_summary(lang: str, card: Card) -> str:
    """A card's headline figures: memory, bandwidth, its best 16-bit (else first) dense rate, power."""
    precision = next((p for p in ("bf16", "fp16") if p in card.dense_flops), next(iter(card.dense_flops)))
    name = card.name if card.kind == "card" else card.id  # a guide tier by its code: its name is English prose
    return sentences(lang, [M.SUMMARY_CARD(
        name=name, memory_gib=round(card.memory_bytes / 2**30, 1), bandwidth=card.bandwidth_bytes_per_s / 1e9,
        tflops=card.dense_flops[precision] / 1e12, precision=precision.upper(), power_w=card.power_w)])


def model_summary(lang: str, model: ModelSpec) -> str:
    """A model's size, depth, KV cache per token (bf16) and the format it ships in."""
    name, precision = model.name, model.released_precision or "bf16"
    per_layer = model.kv_values_per_token_per_layer
    kv_bytes_per_token = None if per_layer is None or model.layers is None else per_layer * 2 * model.layers
    if model.layers is None or kv_bytes_per_token is None:
        said = M.SUMMARY_MODEL_SIZE(name=name, params=model.params, precision=precision)
    elif model.is_moe:
        said = M.SUMMARY_MODEL_MOE(name=name, params=model.params, active=model.active_params, layers=model.layers,
                                   kv_bytes=kv_bytes_per_token, precision=precision)
    else:
        said = M.SUMMARY_MODEL(name=name, params=model.params, layers=model.layers, kv_bytes=kv_bytes_per_token,
                               precision=precision)
    return sentences(lang, [said])


PAGES = {"cards": (M.SUMMARY_CARDS_FIRST, M.SUMMARY_CARDS_PAGE),
         "models": (M.SUMMARY_MODELS_FIRST, M.SUMMARY_MODELS_PAGE)}


def page_summary(lang: str, what: str, count: int, total: int, offset: int) -> str:
    """A page of a list (`what`: cards or models): how many of how many, from where, and where
    the next page starts."""
    first, later = PAGES[what]
    said = [later(count=count, total=total, offset=offset) if offset else first(count=count, total=total)]
    if offset + count < total:
        said.append(M.SUMMARY_NEXT_PAGE(offset=offset + count))
    return sentences(lang, said)


def trouble_summary(lang: str, cause: str | None, check: str | None) -> str:
    """The best row's cause and quick check, in the rows' language; or that nothing matches."""
    if cause is None or check is None:
        return sentences(lang, [M.SUMMARY_TROUBLE_NONE()])
    return sentences(lang, [M.SUMMARY_TROUBLE(cause=cause, check=check)])
