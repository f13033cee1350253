"""Cost: the formulas (energy, electricity, installation overhead, cost per token) and the
answers they make: electricity per day and year for one installation and a fleet, and the cost
of owning the cards with their installation."""

import math
from dataclasses import dataclass, field

from . import defaults as d
from . import messages as M
from .frozen import stores_fields
from .inputs import EnergyInput, Notes
from .units import DAYS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR, WATTS_PER_KW


def energy_kwh_per_day(power_w: float, hours_per_day: float, utilization: float, pue: float) -> float:
    """kW x hours a day x utilisation x PUE, in kWh per day."""
    return power_w / WATTS_PER_KW * hours_per_day * utilization * pue


def per_year(per_day: float) -> float:
    """A daily figure over the guide's 365-day year."""
    return per_day * DAYS_PER_YEAR


def electricity_cost(energy_kwh: float, price_per_kwh: float) -> float:
    """kWh x price per kWh, in the caller's currency."""
    return energy_kwh * price_per_kwh


# Guide section 5.3: racks, power distribution, cooling, switches, storage and staff add
# 50-100 % of the card price.
INSTALLATION_OVERHEAD = (0.5, 0.75, 1.0)


def installation_overhead(cards_cost: float, fraction: float) -> float:
    """Everything outside the cards, as a share of their price."""
    return cards_cost * fraction


def cost_per_million_tokens(cost_per_year: float, tokens_per_s: float, hours_per_day: float,
                            utilization: float) -> float | None:
    """A year's cost over the tokens a year produces at that rate, per million tokens; None when
    the machines produce less than one token a year (a few seconds' use a year, or none), where
    a price per token means nothing (and overflows a float)."""
    tokens = tokens_per_s * SECONDS_PER_HOUR * hours_per_day * DAYS_PER_YEAR * utilization
    return None if tokens < 1 else cost_per_year / tokens * 1e6


def cost_per_run(cost_per_year: float, run_s: float) -> float:
    """The share of a year's cost of owning that one run of `run_s` seconds takes."""
    return run_s * cost_per_year / (DAYS_PER_YEAR * SECONDS_PER_DAY)


MONTHS_PER_YEAR = 12


def rent_per_year(cards: int, per_card_hour: float, hours_per_day: float) -> float:
    """Renting the cards for the hours a day they run, a whole year."""
    return cards * per_card_hour * hours_per_day * DAYS_PER_YEAR


def break_even_months(capital: float, rent_yearly: float, operating_yearly: float) -> float | None:
    """The month where cumulative rent reaches cumulative ownership (capital on day one, then
    operating cost each month); None when renting never costs more than running one's own, or
    saves so little a month that no count of months reaches the capital."""
    saved_per_month = (rent_yearly - operating_yearly) / MONTHS_PER_YEAR
    months = capital / saved_per_month if saved_per_month > 0 else math.inf
    return months if math.isfinite(months) else None


def rent_cheaper_below(capital: float, rent_yearly: float, operating_yearly: float, years: float) -> float:
    """The share of the hours, over `years`, below which renting only those hours costs less
    than owning (whose electricity falls with use too); 1 when renting is cheaper at any use."""
    saved = (rent_yearly - operating_yearly) * years
    return 1.0 if saved <= 0 else min(1.0, capital / saved)


@stores_fields
@dataclass(frozen=True)
class EnergyAnswer:
    """Electricity for `machines` installations drawing `power_w` each."""

    power_w: float
    """Draw of one installation in W: the power_w given, or the typical draw of all the machines that carry the cards
    (host.typical_power_w); see power_basis."""
    power_basis: str = field(metadata={"description": (
        "Where power_w comes from: machine (the cards with the host they need: each machine's "
        "platform, or the guide's 10-12 kW per 8-card server, counted once per machine), given "
        "(the caller's figure, used as given), or cards (rated card power only).")})
    hours_per_day: float
    """Hours the installation runs per day: given, or 24."""
    utilization: float
    """Share (0-1) of power_w drawn while on: given, or 1.0."""
    pue: float
    """Power usage effectiveness, the multiplier for cooling and distribution: given, or 1.0."""
    price_per_kwh: float
    """Electricity price per kWh in currency: given, or the guide's 0.7."""
    currency: str
    """Currency of every cost figure: given, or CNY; echoed, never converted."""
    machines: int
    """Identical installations in the fleet (energy.machines, default 1); multiplies the fleet_ figures. Not
    host.machines, which power_w already covers."""
    years: float
    """Horizon of the over_years figures, in years: given, or 3."""
    energy_kwh_per_day: float
    """Energy of one installation per day in kWh: power_w / 1000 x hours_per_day x utilization x pue."""
    energy_kwh_per_year: float
    """Energy of one installation per year in kWh: energy_kwh_per_day x 365."""
    electricity_cost_per_day: float
    """Electricity cost of one installation per day, in currency: energy_kwh_per_day x price_per_kwh."""
    electricity_cost_per_year: float
    """Electricity cost of one installation per year, in currency: energy_kwh_per_year x price_per_kwh."""
    fleet_energy_kwh_per_year: float
    """Energy of the whole fleet per year in kWh: energy_kwh_per_year x machines."""
    fleet_electricity_cost_per_year: float
    """Electricity cost of the whole fleet per year, in currency: electricity_cost_per_year x machines."""
    electricity_cost_over_years: float
    """Electricity cost of one installation over the horizon, in currency: electricity_cost_per_year x years."""
    fleet_electricity_cost_over_years: float
    """Electricity cost of the whole fleet over the horizon, in currency: electricity_cost_per_year x years x
    machines."""


POWER_BASES = ("machine", "given", "cards")


def energy_answer(power_w: float, basis: str, given: EnergyInput, notes: Notes) -> EnergyAnswer:
    """kWh and cost per day and year, for one installation and for the fleet; `basis` names
    where `power_w` comes from (one of POWER_BASES)."""
    hours = notes.use("hours_per_day", given.hours_per_day, d.HOURS_PER_DAY)
    utilization = notes.use("utilization", given.utilization, d.UTILIZATION)
    pue = notes.use("pue", given.pue, d.PUE)
    price = notes.use("price_per_kwh", given.price_per_kwh, d.PRICE_PER_KWH)
    currency = notes.use("currency", given.currency, d.CURRENCY)
    machines = notes.use("installations", given.machines, d.MACHINES)
    years = notes.use("years", given.years, d.YEARS)
    day_kwh = energy_kwh_per_day(power_w, hours, utilization, pue)
    year_kwh = per_year(day_kwh)
    year_cost = electricity_cost(year_kwh, price)
    return EnergyAnswer(
        power_w=power_w,
        power_basis=basis,
        hours_per_day=hours,
        utilization=utilization,
        pue=pue,
        price_per_kwh=price,
        currency=currency,
        machines=machines,
        years=years,
        energy_kwh_per_day=day_kwh,
        energy_kwh_per_year=year_kwh,
        electricity_cost_per_day=electricity_cost(day_kwh, price),
        electricity_cost_per_year=year_cost,
        fleet_energy_kwh_per_year=year_kwh * machines,
        fleet_electricity_cost_per_year=year_cost * machines,
        electricity_cost_over_years=year_cost * years,
        fleet_electricity_cost_over_years=year_cost * years * machines,
    )



@dataclass(frozen=True)
class OwnershipAnswer:
    """Cards, the installation around them and electricity over the years, as a range."""

    cards: int
    """Cards priced: the cards the estimate places the job on in /estimate; hardware.count (or 1) in /cost."""
    card_price: float
    """Purchase price of one card, in currency: card_price given, or the operator's catalog price."""
    price_source: str
    """Where card_price comes from: "given by the caller", or the source of the operator's catalog entry."""
    currency: str
    """Currency of the totals: the electricity's (energy.currency). A card price in another currency is added as
    given, with a warning."""
    years: float
    """Horizon of the totals, in years: the same as energy.years."""
    cards_cost: float
    """Price of all the cards, in currency: cards x card_price."""
    installation_overhead_low: float
    """Low end of racks, power distribution, cooling, switches, storage and staff, in currency: 50 % of cards_cost, or
    overhead_fraction when given."""
    installation_overhead: float
    """Typical installation overhead (racks, power, cooling, network, storage, staff), in currency: 75 % of
    cards_cost, or overhead_fraction when given."""
    installation_overhead_high: float
    """High end of the installation overhead, in currency: 100 % of cards_cost, or overhead_fraction when given."""
    electricity_over_years: float
    """Electricity of one installation over the horizon, in currency; the same as energy.electricity_cost_over_years
    (not the fleet's)."""
    total_low: float
    """Low cost of ownership over the years, in currency: cards_cost + installation_overhead_low +
    electricity_over_years."""
    total: float
    """Typical cost of ownership over the years, in currency: cards_cost + installation_overhead +
    electricity_over_years."""
    total_high: float
    """High cost of ownership over the years, in currency: cards_cost + installation_overhead_high +
    electricity_over_years."""
    total_per_year: float
    """Typical cost of ownership per year, in currency: total / years."""
    total_per_day: float
    """Typical cost of ownership per day, in currency: total_per_year / 365."""
    cost_per_million_tokens: float | None
    """total_per_year over a year's output at throughput.total_tokens_per_s (hours_per_day, utilization), per million
    tokens; null for training, in /cost, or under one token a year."""
    cost_per_run: float | None
    """The training run's share of total_per_year, in currency: time_s / one year (365 days); null for inference, in
    /cost, without a training time, or at 0 hours a day."""


def ownership_answer(
    cards: int, card_price: float, price_source: str, energy: EnergyAnswer,
    overhead: float | None, notes: Notes, tokens_per_s: float | None = None,
    run_s: float | None = None,
) -> OwnershipAnswer:
    """Cards x price, 50-100 % installation overhead, electricity over the years as its own
    line; the cost of a million tokens at `tokens_per_s`, or of a run of `run_s` seconds."""
    low, typical, high = (overhead, overhead, overhead) if overhead is not None else INSTALLATION_OVERHEAD
    if overhead is None:
        notes.assume("installation_overhead", typical, M.INSTALLATION_OVERHEAD())
    cards_cost = cards * card_price
    electricity = energy.electricity_cost_over_years
    total = cards_cost * (1 + typical) + electricity
    yearly = total / energy.years
    run = None
    if run_s is not None:
        run = cost_per_run(yearly, run_s) if energy.hours_per_day else None
    return OwnershipAnswer(
        cards=cards, card_price=card_price, price_source=price_source, currency=energy.currency,
        years=energy.years, cards_cost=cards_cost,
        installation_overhead_low=installation_overhead(cards_cost, low),
        installation_overhead=installation_overhead(cards_cost, typical),
        installation_overhead_high=installation_overhead(cards_cost, high),
        electricity_over_years=electricity,
        total_low=cards_cost * (1 + low) + electricity, total=total,
        total_high=cards_cost * (1 + high) + electricity,
        total_per_year=yearly, total_per_day=yearly / DAYS_PER_YEAR,
        cost_per_million_tokens=None if tokens_per_s is None else cost_per_million_tokens(
            yearly, tokens_per_s, energy.hours_per_day, energy.utilization),
        cost_per_run=run,
    )
