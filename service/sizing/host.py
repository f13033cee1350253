"""Sizing the machine around the cards: PSU, host RAM, CPU cores, rack power, cooling and noise."""

import math
from dataclasses import dataclass

from .catalog import Card
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
CARDS_PER_SERVER = 8
SERVER_PER_CARD_POWER = (10_000 / 5_600, 12_000 / 5_600)
UPS_FACTOR = 1.5


@dataclass(frozen=True)
class HostSizing:
    """The machines that carry `cards` cards of one kind."""

    cards: int
    machines: int
    cards_power_w: float
    system_peak_w: float
    transient_peak_w: float
    psu_w: int | None
    host_ram_gb: int
    cpu_cores: int
    server_power_w_low: float | None
    server_power_w_high: float | None
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
        return "servers at 10-12 kW per 8 x 700 W cards, scaled by the cards' power (guide 4.3)"
    return f"rated card power plus {PLATFORM_W} W for the host's CPU, board, drives and fans"


def host_sizing(card: Card, cards: int) -> HostSizing:
    """Desktop or workstation build for consumer and workstation cards; servers for data centre."""
    if _in_servers(card):
        return _servers(card, cards)
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
    return HostSizing(cards, math.ceil(cards / 4), cards_w, peak, transient, psu,
                      host_ram_gb(card, cards), max(MIN_CPU_CORES, CORES_PER_CARD * cards),
                      None, None, None, None, peak, tuple(notes))


def _servers(card: Card, cards: int) -> HostSizing:
    servers = math.ceil(cards / CARDS_PER_SERVER)
    cards_w = card.power_w * cards
    low, high = (cards_w * f for f in SERVER_PER_CARD_POWER)
    notes = (
        f"{servers} server(s) at {low / servers / WATTS_PER_KW:.1f}-{high / servers / WATTS_PER_KW:.1f} kW each: two "
        "independent feeds per server, UPS sized at 1.5x (guide section 4.3)",
        "data-centre fans run above 70 dB: a machine room, never an office (guide section 4.3)",
        "plan storage that keeps the cards fed: local NVMe caches or distributed storage with "
        "prefetch, or utilisation falls from about 90 % to 50 % (guide section 4.3)",
    )
    return HostSizing(cards, servers, cards_w, high, high, None,
                      host_ram_gb(card, cards), max(MIN_CPU_CORES, CORES_PER_CARD * cards),
                      low, high, UPS_FACTOR * high, 2 * servers, (low + high) / 2, notes)
