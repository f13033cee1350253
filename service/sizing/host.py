"""Sizing the machine around the cards: PSU, host RAM, CPU cores, rack power, cooling and noise."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from . import messages as M
from .cards import Card
from .catalog import catalog, read_data
from .frozen import stores_fields
from .units import GIB, WATTS_PER_KW

# Guide section 5.1: PSU = 1.5 x system peak; host RAM = 4 x card memory; 12+ cores.
PSU_FACTOR = 1.5
HOST_RAM_FACTOR = 4
MIN_CPU_CORES = 12
CORES_PER_CARD = 4  # enough to feed each card's data loader and the driver threads
PLATFORM_W = 250  # CPU, board, drives and fans of a desktop or workstation
PSU_UNIT_W = 1600  # guide section 5.1: the most one power supply unit gives
FLAGSHIP_TRANSIENT = 2.0  # guide 2.2: consumer flagship transients reach 2x rated power
FLAGSHIP_TIERS = ("C90",)
FLAGSHIP_MIN_PSU_W = 850
PSU_SIZES_W = (450, 550, 650, 750, 850, 1000, 1200, 1300, 1600, 2000, 2400, 2800, 3200)
RAM_SIZES_GB = (16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
# Guide section 4.3: an 8-card server draws 10-12 kW with 8 x 700 W cards (5.6 kW); scaled by
# the cards' power, servers of the guide's tiers; two independent feeds; UPS at 1.5x. Real cards
# are priced at their platform's published figure, or by the share model fitted on those.
SERVER_PER_CARD_POWER = (10_000 / 5_600, 12_000 / 5_600)
UPS_FACTOR = 1.5
_PLATFORM_KEYS = {"id", "name", "cards", "cards_per_machine", "max_power_w", "rack_scale",
                  "network_gb_per_s", "source", "notes"}


@dataclass(frozen=True)
class Platform:
    """A machine as its vendor sells it (data/platforms.toml): the cards it holds and the most it
    draws, in watts, as published."""

    id: str
    name: str
    cards: tuple[str, ...]
    cards_per_machine: int
    max_power_w: float
    rack_scale: bool
    source: str
    notes: str = ""
    network_gb_per_s: float | None = None


@dataclass(frozen=True)
class ShareModel:
    """A machine's draw in watts: card_factor x its cards' rated power + base_w. base_w is what a
    machine draws whatever its cards (CPUs, memory, drives, idle fans); the rest grows with them
    (the cards, their share of fans, voltage regulators, NICs and supply losses)."""

    card_factor: float
    base_w: float
    band: float = 0.0  # root-mean-square leave-one-out error on the platforms, as a fraction

    def power_w(self, cards_w: float) -> float:
        return self.card_factor * cards_w + self.base_w


@dataclass(frozen=True)
class PowerTable:
    """The platforms by card id, and the share model fitted on them."""

    platforms: tuple[Platform, ...]
    share: ShareModel

    def platform_for(self, card_id: str) -> Platform | None:
        return next((p for p in self.platforms if card_id in p.cards), None)


def platform(raw: Mapping, where: str) -> Platform:
    """A [[platform]] entry of platforms.toml, checked as it is read."""
    unknown = set(raw) - _PLATFORM_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    cards, per_machine, power = raw.get("cards"), raw.get("cards_per_machine"), raw.get("max_power_w")
    if not cards or not all(isinstance(c, str) for c in cards):
        raise ValueError(f"{where}: cards must list catalog card ids")
    if not isinstance(per_machine, int) or isinstance(per_machine, bool) or per_machine < 1:
        raise ValueError(f"{where}: cards_per_machine must be a whole number of at least 1")
    if not isinstance(power, int | float) or isinstance(power, bool) or power <= 0:
        raise ValueError(f"{where}: max_power_w must be a positive number of watts")
    if not isinstance(raw.get("rack_scale"), bool) or not raw.get("source") or not raw.get("id"):
        raise ValueError(f"{where}: id, rack_scale (true or false) and source are required")
    network = raw.get("network_gb_per_s")
    return Platform(id=raw["id"], name=raw.get("name", raw["id"]), cards=tuple(cards),
                    cards_per_machine=per_machine, max_power_w=float(power),
                    rack_scale=raw["rack_scale"], source=raw["source"], notes=raw.get("notes", ""),
                    network_gb_per_s=None if network is None else float(network))


def fit_share_model(rows: Sequence[tuple[float, float]]) -> ShareModel:
    """card_factor and base_w that best predict each (cards' rated power W, published machine W)
    row, by least squares on the relative error (a 6.5 kW server counts as much as a 120 kW
    rack); with fewer than two rows, the guide's 11 kW per 5.6 kW of cards and no base."""
    if len(rows) < 2:
        return ShareModel(sum(SERVER_PER_CARD_POWER) / 2, 0.0)
    xs = [w / p for w, p in rows]
    ys = [1 / p for _, p in rows]
    sxx, syy = sum(x * x for x in xs), sum(y * y for y in ys)
    sxy = sum(x * y for x, y in zip(xs, ys, strict=True))
    det = sxx * syy - sxy * sxy
    factor = (sum(xs) * syy - sum(ys) * sxy) / det
    return ShareModel(factor, (sum(ys) * sxx - sum(xs) * sxy) / det)


def leave_one_out_errors(rows: Sequence[tuple[float, float]]) -> tuple[float, ...]:
    """Each row's relative error (estimate / published - 1) under the model fitted without it."""
    return tuple(fit_share_model([*rows[:i], *rows[i + 1:]]).power_w(w) / p - 1
                 for i, (w, p) in enumerate(rows))


def fit_rows(platforms: Sequence[Platform], card_power_w: Mapping[str, float]) -> list[tuple[float, float]]:
    """(cards' rated power W, published W) of each platform whose first card the catalog knows."""
    return [(p.cards_per_machine * card_power_w[p.cards[0]], p.max_power_w)
            for p in platforms if p.cards[0] in card_power_w]


def power_table(platforms: Sequence[Platform], card_power_w: Mapping[str, float]) -> PowerTable:
    """The platforms with the share model fitted on them, its band their leave-one-out error."""
    rows = fit_rows(platforms, card_power_w)
    errors = leave_one_out_errors(rows) if len(rows) > 2 else ()
    band = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else 0.0
    fitted = fit_share_model(rows)
    return PowerTable(tuple(platforms), ShareModel(fitted.card_factor, fitted.base_w, band))


@cache
def packaged_power_table() -> PowerTable:
    """platforms.toml, read once, fitted on the packaged catalog's card power."""
    entries = read_data("platforms.toml").get("platform", [])
    platforms = tuple(platform(raw, f"platforms.toml platform {i + 1} ({raw.get('id')})")
                      for i, raw in enumerate(entries))
    return power_table(platforms, {c.id: c.power_w for c in catalog().cards if c.kind == "card"})


def rack_domain(card: Card) -> Platform | None:
    """The rack-scale NVLink domain a catalog card comes in (GB200 NVL72), if any."""
    found = packaged_power_table().platform_for(card.id) if card.kind == "card" else None
    return found if found is not None and found.rack_scale else None


@stores_fields
@dataclass(frozen=True)
class HostSizing:
    """The machines that carry `cards` cards of one kind, `cards_per_machine` at most in each.

    Figures named machine_ (and psu_w, host_ram_gb, cpu_cores, server_power_w_*) are for the
    fullest machine; the others are totals over every machine, each with its own platform.
    """

    cards: int
    """Cards the machines carry."""
    machines: int
    """Machines (desktops, workstations or servers) that carry the cards."""
    cards_per_machine: int
    """The most cards one machine carries (in /estimate, the whole tensor-parallel groups of the plan that fit in a
    machine)."""
    machine_cards: int
    """Cards in the fullest machine; a last, partly filled machine holds fewer."""
    machine_cards_power_w: float
    """Rated power of the fullest machine's cards, in W."""
    machine_peak_w: float
    """Peak draw of the fullest machine in W: its cards plus a 250 W platform for desktops and workstations;
    server_power_w_high for servers."""
    machine_transient_peak_w: float
    """Transient peak of the fullest machine in W: flagship consumer cards (C90) at 2x rated power plus the platform;
    otherwise machine_peak_w."""
    machine_typical_power_w: float
    """Typical draw of the fullest machine in W: the midpoint of server_power_w_low and _high for servers;
    machine_peak_w otherwise."""
    psu_w: int | None
    """PSU rating for the fullest desktop or workstation in W: 1.5 x machine_peak_w rounded up to a standard size (850
    W+ with a flagship card); null for servers."""
    psus: int | None
    """Power supplies to buy: one per desktop or workstation (the same as machines); null for data-centre servers,
    which take power_feeds."""
    host_ram_gb: int
    """Host RAM for the fullest machine in GB: 4 x its cards' memory, rounded up to a size one can buy."""
    cpu_cores: int
    """CPU cores for the fullest machine: 4 per card, at least 12."""
    server_power_w_low: float | None
    """Low end of one fullest server's draw in W (guide tier, platform's published figure, or fitted model less its
    error band); null for desktops and workstations."""
    server_power_w_high: float | None
    """High end of one fullest server's draw in W (guide tier, platform's published figure, or fitted model plus its
    error band); null for desktops and workstations."""
    cards_power_w: float
    """Rated power of all the cards over every machine, in W."""
    system_peak_w: float
    """Peak draw of every machine together, in W (the sum of each machine's peak)."""
    transient_peak_w: float
    """Transient peak of every machine together in W: flagship consumer cards at 2x rated power; otherwise the same as
    system_peak_w."""
    rack_power_w: float
    """Power the racks must supply and cool, in W: the same figure as system_peak_w."""
    ups_w: float | None
    """UPS capacity for data-centre servers in W: 1.5 x system_peak_w; null for desktops and workstations."""
    power_feeds: int | None
    """Independent power feeds: two per data-centre server; null for desktops and workstations."""
    typical_power_w: float
    """Typical draw of every machine together in W; electricity is priced at it (energy.power_w) when power_basis is
    machine."""
    notes: tuple[M.Message, ...]
    """Advice on building and housing the machines: each machine's own PSU or feeds, flagship transients, PSU splits,
    case airflow, server feeds and UPS, noise, storage."""


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


def power_basis(card: Card, table: PowerTable | None = None) -> M.Message:
    """Where host_sizing's typical power for these cards comes from, in words."""
    if not _in_servers(card):
        return M.kept(M.POWER_CARDS_PLUS_PLATFORM, platform_w=PLATFORM_W)
    if card.kind == "tier":
        return M.POWER_GUIDE_SERVERS()
    table = table or packaged_power_table()
    found = table.platform_for(card.id) if card.kind == "card" else None
    share = table.share
    if found is not None:
        return M.POWER_PLATFORM(platform=found.name, max_w=found.max_power_w, cards=found.cards_per_machine,
                                base_w=_base_w(found, share))
    return M.POWER_FITTED_SHARE(card=card.id, card_factor=share.card_factor, base_w=share.base_w)


def machine_loads(cards: int, per_machine: int) -> tuple[tuple[int, int], ...]:
    """(machines, cards in each): full machines, then the rest in one more."""
    full, rest = divmod(cards, per_machine)
    loads = ((full, per_machine),) if full else ()
    return loads + (((1, rest),) if rest else ())


def host_sizing(card: Card, cards: int, per_machine: int, table: PowerTable | None = None) -> HostSizing:
    """Desktops or workstations for consumer and workstation cards, servers (or rack-scale
    machines) for data-centre cards: one machine per `per_machine` cards, each with its own PSU
    (or feeds) and platform; `table` holds the platforms (default: the packaged ones)."""
    if table is None:
        return _packaged_host(card, cards, per_machine)
    return _host(card, cards, per_machine, table)


@lru_cache(maxsize=1024)
def _packaged_host(card: Card, cards: int, per_machine: int) -> HostSizing:
    """host_sizing on the packaged platforms: the same for every question on that card and count
    (made once; the answer is frozen, and its notes are messages kept with it)."""
    return _host(card, cards, per_machine, None)


def _host(card: Card, cards: int, per_machine: int, table: PowerTable | None) -> HostSizing:
    loads = machine_loads(max(1, cards), per_machine)
    if _in_servers(card):
        table = table or packaged_power_table()
        machines = [(count, _server(card, n, table)) for count, n in loads]
    else:
        machines = [(count, _build(card, n)) for count, n in loads]
    _, fullest = machines[0]
    count = sum(n for n, _ in machines)

    def total(key: str) -> float:
        return sum(n * machine[key] for n, machine in machines)

    notes = list(fullest["notes"])
    if count > 1:
        split = " + ".join(f"{n} x {k}" if n > 1 else f"{k}" for n, k in loads)
        notes.insert(0, M.MACHINES_EACH_NEED(machines=count, split=split))
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
        notes.append(M.FLAGSHIP_SPIKES())
    if psu > PSU_UNIT_W:
        notes.append(M.PSU_SPLIT(psu_w=psu, unit_w=PSU_UNIT_W))
    if card.line == "consumer":
        notes.append(M.CASE_AIRFLOW())
    return {"cards_w": cards_w, "peak": peak, "transient": transient, "typical": peak, "psu": psu,
            "ram": host_ram_gb(card, cards), "cores": max(MIN_CPU_CORES, CORES_PER_CARD * cards),
            "low": None, "high": None, "notes": notes}


def _base_w(found: Platform, share: ShareModel) -> float:
    """The part of a platform's published draw its cards do not drive: the share model's base,
    never more than the platform draws."""
    return min(max(share.base_w, 0.0), found.max_power_w)


def server_power_w(card: Card, cards: int, table: PowerTable) -> tuple[float, float, str]:
    """(low, high, where from) for one machine of `cards` cards, in watts: a guide tier at 10-12 kW
    per 5.6 kW of cards; a card with a platform at its published figure, a partly filled machine
    at base + cards / cards_per_machine of the rest; any other at the share model, +- its
    leave-one-out band."""
    cards_w = card.power_w * cards
    found = table.platform_for(card.id) if card.kind == "card" else None
    if card.kind == "tier":
        low, high = (cards_w * f for f in SERVER_PER_CARD_POWER)
        return low, high, M.BASIS_GUIDE()
    if found is not None:
        base = _base_w(found, table.share)
        draw = base + cards / found.cards_per_machine * (found.max_power_w - base)
        return draw, draw, M.BASIS_PUBLISHED(platform=found.name)
    draw = table.share.power_w(cards_w)
    return draw * (1 - table.share.band), draw * (1 + table.share.band), M.BASIS_FITTED()


def _server(card: Card, cards: int, table: PowerTable) -> dict:
    cards_w = card.power_w * cards
    low, high, basis = server_power_w(card, cards, table)
    span = f"{low / WATTS_PER_KW:.1f}" + (f"-{high / WATTS_PER_KW:.1f}" if high - low >= 50 else "")
    notes = [M.SERVER_FEEDS(span=span, basis=basis), M.SERVER_NOISE(), M.SERVER_STORAGE()]
    return {"cards_w": cards_w, "peak": high, "transient": high, "typical": (low + high) / 2,
            "psu": None, "ram": host_ram_gb(card, cards),
            "cores": max(MIN_CPU_CORES, CORES_PER_CARD * cards), "low": low, "high": high,
            "notes": notes}
