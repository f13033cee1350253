"""Energy and electricity cost."""

from .units import DAYS_PER_YEAR, WATTS_PER_KW


def energy_kwh_per_day(power_w: float, hours_per_day: float, utilization: float, pue: float) -> float:
    """kW x hours a day x utilisation x PUE, in kWh per day."""
    return power_w / WATTS_PER_KW * hours_per_day * utilization * pue


def per_year(per_day: float) -> float:
    """A daily figure over the guide's 365-day year."""
    return per_day * DAYS_PER_YEAR


def electricity_cost(energy_kwh: float, price_per_kwh: float) -> float:
    """kWh x price per kWh, in the caller's currency."""
    return energy_kwh * price_per_kwh
