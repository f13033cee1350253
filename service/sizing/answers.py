"""The energy answer: electricity per day and year, for one installation and a fleet."""

from dataclasses import dataclass

from . import defaults as d
from .cost import electricity_cost, energy_kwh_per_day, per_year
from .inputs import EnergyInput, Notes


@dataclass(frozen=True)
class EnergyAnswer:
    """Electricity for `machines` installations drawing `power_w` each."""

    power_w: float
    hours_per_day: float
    utilization: float
    pue: float
    price_per_kwh: float
    currency: str
    machines: int
    years: float
    energy_kwh_per_day: float
    energy_kwh_per_year: float
    electricity_cost_per_day: float
    electricity_cost_per_year: float
    fleet_energy_kwh_per_year: float
    fleet_electricity_cost_per_year: float
    electricity_cost_over_years: float
    fleet_electricity_cost_over_years: float


def energy_answer(power_w: float, given: EnergyInput, notes: Notes) -> EnergyAnswer:
    """kWh and cost per day and year, for one installation and for the fleet."""
    hours = notes.use("hours_per_day", given.hours_per_day, d.HOURS_PER_DAY)
    utilization = notes.use("utilization", given.utilization, d.UTILIZATION)
    pue = notes.use("pue", given.pue, d.PUE)
    price = notes.use("price_per_kwh", given.price_per_kwh, d.PRICE_PER_KWH)
    currency = notes.use("currency", given.currency, d.CURRENCY)
    machines = notes.use("machines", given.machines, d.MACHINES)
    years = notes.use("years", given.years, d.YEARS)
    day_kwh = energy_kwh_per_day(power_w, hours, utilization, pue)
    year_kwh = per_year(day_kwh)
    year_cost = electricity_cost(year_kwh, price)
    return EnergyAnswer(
        power_w=power_w,
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

