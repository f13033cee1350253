"""The cost question: electricity, cost of ownership, and the duty warnings of a card."""


from .. import defaults as d
from .. import messages as M
from ..cards import Card
from ..catalog import Price
from ..cost import EnergyAnswer, OwnershipAnswer, energy_answer, ownership_answer
from ..errors import InvalidInputError
from ..host import HostSizing, host_sizing, power_basis
from ..inputs import (
    EnergyInput,
    HardwareInput,
    Notes,
    card_warnings,
)
from ..plan import cards_per_machine
from ..summary import cost_summary
from ..training_time import TrainingAnswer
from ..units import SECONDS_PER_DAY
from .results import CostResult


def cost(energy: EnergyInput, hardware: HardwareInput | None = None, price: Price | None = None,
         overhead: float | None = None, lang: str = "en") -> CostResult:
    """Electricity for the machines that carry `hardware` (or the draw given in `energy`); with
    cards and a price, the cost of owning them; the summary said in `lang`."""
    notes = Notes()
    host = None
    card_warnings((hardware.card,) if hardware else (), notes)
    if hardware is not None and energy.power_w is None:
        count = hardware.count or 1
        host = host_sizing(hardware.card, count, cards_per_machine(hardware.card, hardware.cards_per_node, notes))
    answer = electricity(host, hardware.card if hardware else None, energy, notes)
    owned = None
    if hardware is not None and price is not None:
        owned = ownership_answer(hardware.count or 1, price.amount, price.source, answer, overhead, notes)
        _currency_check(price, answer, notes)
    elif hardware is not None:
        notes.warn(M.CARD_PRICE_UNKNOWN())
    summary = cost_summary(lang, answer, owned, host.machines if host is not None else 1)
    return CostResult(energy=answer, ownership=owned, summary=summary, **notes.said())


def electricity(host: HostSizing | None, card: Card | None, energy: EnergyInput, notes: Notes) -> EnergyAnswer:
    """Electricity at the caller's `power_w` where given, else at the draw of the machines that
    carry the cards: one rule for every answer that prices power."""
    if energy.power_w is not None:
        return energy_answer(energy.power_w, "given", energy, notes)
    if host is None or card is None:
        raise InvalidInputError(M.ERROR_POWER_NEEDS_HARDWARE(), "power_w")
    notes.assume("power_w", host.typical_power_w, power_basis(card))
    return energy_answer(host.typical_power_w, "machine", energy, notes)


def _currency_check(price: Price, energy: EnergyAnswer, notes: Notes) -> None:
    if price.currency != energy.currency:
        notes.warn(M.CARD_PRICE_CURRENCY(price_currency=price.currency, currency=energy.currency))


def ownership(cards, price, electricity, overhead, speed, train, notes) -> OwnershipAnswer | None:
    if price is None:
        return None
    _currency_check(price, electricity, notes)
    return ownership_answer(cards, price.amount, price.source, electricity, overhead, notes,
                            tokens_per_s=None if speed is None else speed.total_tokens_per_s,
                            run_s=None if train is None else train.time_s)


# Guide sections 2.3 and 3.1: a consumer card on a data-centre duty.
CONSUMER_DUTY_WARNING = M.CONSUMER_AROUND_THE_CLOCK(cap=0.8, throttle=0.15, wander_low=0.05, wander_high=0.1,
                                                   hours=72)


def duty_warnings(card: Card, energy: EnergyInput, train: TrainingAnswer | None, notes: Notes) -> None:
    if card.line != "consumer":
        return
    long_run = train is not None and train.time_s is not None and train.time_s > SECONDS_PER_DAY
    asked_hours = energy.hours_per_day is not None and energy.hours_per_day > d.CONSUMER_MAX_HOURS_PER_DAY
    if long_run or asked_hours:
        notes.warn(CONSUMER_DUTY_WARNING)
