"""Energy and electricity cost."""

from .units import DAYS_PER_YEAR, SECONDS_PER_HOUR, WATTS_PER_KW


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
    """A year's cost over the tokens a year produces at that rate, per million tokens."""
    tokens = tokens_per_s * SECONDS_PER_HOUR * hours_per_day * DAYS_PER_YEAR * utilization
    return None if tokens <= 0 else cost_per_year / tokens * 1e6
