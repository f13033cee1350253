"""Sizing the machine around the cards: PSU, host RAM, CPU cores, rack power, cooling and noise."""

import math
from dataclasses import dataclass

from .cards import Card
from .units import GIB, WATTS_PER_KW

# Guide section 5.1: PSU = 1.5 x system peak; host RAM = 4 x card memory; 12+ cores.
PSU_FACTOR = 1.5
HOST_RAM_FACTOR = 4
MIN_CPU_CORES = 12
CORES_PER_CARD = 4  # enough to feed each card's data loader and the driver threads
PLATFORM_W = 250  # CPU, board, drives and fans of a desktop or workstation
FLAGSHIP_TRANSIENT = 2.0  # guide 2.2: consumer flagship transients reach 2x rated power
FLAGSHIP_TIERS = ("C90",)
FLAGSHIP_MIN_PSU_W = 850
PSU_SIZES_W = (450, 550, 650, 750, 850, 1000, 1200, 1300, 1600, 2000, 2400, 2800, 3200)
RAM_SIZES_GB = (16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
# Guide section 4.3: an 8-card server draws 10-12 kW with 8 x 700 W cards (5.6 kW); scaled by
# the cards' power, servers of other cards; two independent feeds; UPS at 1.5x.
SERVER_PER_CARD_POWER = (10_000 / 5_600, 12_000 / 5_600)
UPS_FACTOR = 1.5


@dataclass(frozen=True)
class HostSizing:
    """The machines that carry `cards` cards of one kind, `cards_per_machine` at most in each.

    Figures named machine_ (and psu_w, host_ram_gb, cpu_cores, server_power_w_*) are for the
    fullest machine; the others are totals over every machine, each with its own platform.
    """

    cards: int
    machines: int
    cards_per_machine: int
    machine_cards: int
    machine_cards_power_w: float
    machine_peak_w: float
    machine_transient_peak_w: float
    machine_typical_power_w: float
    psu_w: int | None
    psus: int | None
    host_ram_gb: int
    cpu_cores: int
    server_power_w_low: float | None
    server_power_w_high: float | None
    cards_power_w: float
    system_peak_w: float
    transient_peak_w: float
    rack_power_w: float
    ups_w: float | None
    power_feeds: int | None
    typical_power_w: float
    notes: tuple[str, ...]


def round_up(value: float, sizes: tuple[int, ...]) -> int:
    """The first standard size at or above `value` (multiples of the largest beyond it)."""
    for size in sizes:
        if size >= value:
            return size
    return math.ceil(value / sizes[-1]) * sizes[-1]


def host_ram_gb(card: Card, cards: int) -> int:
    """4 x the cards' memory (their "N GB"), rounded up to a size one can buy, in GB
    (guide: 24 GB of card memory wants 96 GB of RAM)."""
    return round_up(HOST_RAM_FACTOR * cards * card.memory_bytes / GIB, RAM_SIZES_GB)


def _in_servers(card: Card) -> bool:
    return card.line == "datacenter"


def power_basis(card: Card) -> str:
    """Where host_sizing's typical power for these cards comes from, in words."""
    if _in_servers(card):
        return ("servers at 10-12 kW per 8 x 700 W cards, scaled by the cards' power (guide 4.3), "
                "summed over the servers")
    return (f"rated card power plus {PLATFORM_W} W for each machine's CPU, board, drives and fans, "
            "summed over the machines")


def machine_loads(cards: int, per_machine: int) -> tuple[tuple[int, int], ...]:
    """(machines, cards in each): full machines, then the rest in one more."""
    full, rest = divmod(cards, per_machine)
    loads = ((full, per_machine),) if full else ()
    return loads + (((1, rest),) if rest else ())


def host_sizing(card: Card, cards: int, per_machine: int) -> HostSizing:
    """Desktops or workstations for consumer and workstation cards, servers for data-centre
    cards: one machine per `per_machine` cards, each with its own PSU (or feeds) and platform."""
    loads = machine_loads(max(1, cards), per_machine)
    size = _server if _in_servers(card) else _build
    machines = [(count, size(card, n)) for count, n in loads]
    _, fullest = machines[0]
    count = sum(n for n, _ in machines)

    def total(key: str) -> float:
        return sum(n * machine[key] for n, machine in machines)

    notes = list(fullest["notes"])
    if count > 1:
        split = " + ".join(f"{n} x {k}" if n > 1 else f"{k}" for n, k in loads)
        notes.insert(0, f"{count} machines ({split} cards): each needs its own PSU (or feeds), "
                        "platform and network port")
    server = _in_servers(card)
    return HostSizing(
        cards=cards, machines=count, cards_per_machine=per_machine, machine_cards=loads[0][1],
        machine_cards_power_w=fullest["cards_w"], machine_peak_w=fullest["peak"],
        machine_transient_peak_w=fullest["transient"], machine_typical_power_w=fullest["typical"],
        psu_w=fullest["psu"], psus=None if server else count,
        host_ram_gb=fullest["ram"], cpu_cores=fullest["cores"],
        server_power_w_low=fullest["low"], server_power_w_high=fullest["high"],
        cards_power_w=total("cards_w"), system_peak_w=total("peak"),
        transient_peak_w=total("transient"), rack_power_w=total("peak"),
        ups_w=UPS_FACTOR * total("peak") if server else None,
        power_feeds=2 * count if server else None,
        typical_power_w=total("typical"), notes=tuple(notes),
    )


def _build(card: Card, cards: int) -> dict:
    cards_w = card.power_w * cards
    peak = cards_w + PLATFORM_W
    flagship = card.tier in FLAGSHIP_TIERS
    transient = (FLAGSHIP_TRANSIENT * cards_w if flagship else cards_w) + PLATFORM_W
    # A PSU rides out millisecond transients above its rating; it is sized on the rated peak.
    psu = round_up(PSU_FACTOR * peak, PSU_SIZES_W)
    notes = []
    if flagship:
        psu = max(psu, FLAGSHIP_MIN_PSU_W)
        notes.append("flagship consumer cards spike to twice their rated power: 850 W+ PSU with a "
                     "strong single 12 V rail (guide section 2.2)")
    if psu > 1600:
        notes.append(f"a {psu} W PSU exceeds one 1600 W unit: split across two supplies or a "
                     "230 V circuit, and keep one tier of headroom (guide section 5.1)")
    if card.line == "consumer":
        notes.append("case airflow: front intake, rear exhaust; showcase cases built for liquid "
                     "cooling starve air-cooled cards (guide section 5.1)")
    return {"cards_w": cards_w, "peak": peak, "transient": transient, "typical": peak, "psu": psu,
            "ram": host_ram_gb(card, cards), "cores": max(MIN_CPU_CORES, CORES_PER_CARD * cards),
            "low": None, "high": None, "notes": notes}


def _server(card: Card, cards: int) -> dict:
    cards_w = card.power_w * cards
    low, high = (cards_w * f for f in SERVER_PER_CARD_POWER)
    notes = [
        f"each server at {low / WATTS_PER_KW:.1f}-{high / WATTS_PER_KW:.1f} kW: two independent "
        "feeds per server, UPS sized at 1.5x (guide section 4.3)",
        "data-centre fans run above 70 dB: a machine room, never an office (guide section 4.3)",
        "plan storage that keeps the cards fed: local NVMe caches or distributed storage with "
        "prefetch, or utilisation falls from about 90 % to 50 % (guide section 4.3)",
    ]
    return {"cards_w": cards_w, "peak": high, "transient": high, "typical": (low + high) / 2,
            "psu": None, "ram": host_ram_gb(card, cards),
            "cores": max(MIN_CPU_CORES, CORES_PER_CARD * cards), "low": low, "high": high,
            "notes": notes}
