"""The links between cards and the collectives that cross them.

A link is what one card reaches its peers over: the achievable bytes per second in one direction
and the latency of one collective. Vendors quote a card's link as its total of both directions
(NVLink 4: 900 GB/s = 450 each way; PCIe 4.0 x16: 64 GB/s = 32 each way); collectives move data
in both directions at once, so each direction carries half, at the share a collective library
really reaches.
"""

import functools
import math
from dataclasses import dataclass, replace
from typing import Literal, overload

from . import defaults as d
from . import messages as M
from .cards import PCIE_LINE_GB_PER_S, Card
from .frozen import keeps_hash, kept_by_argument
from .host import rack_domain
from .inputs import Notes
from .units import GB

ACTIVATION_BYTES = 2  # hidden states (and their gradients) cross links in 16-bit


@dataclass(frozen=True)
class Link:
    """Achievable bytes per second in one direction and the fixed cost of one collective;
    `quoted_bytes_per_s` is the figure it rests on as its vendor quotes it (a card's link, both
    directions; a machine's network)."""

    name: str
    """The link's name: the catalog's (as its vendor names it) or a message (PCIe, the network)."""
    bytes_per_s: float
    latency_s: float
    note: M.Message
    quoted_bytes_per_s: float | None = None

    def scaled(self, scale: float) -> "Link":
        """The link with its costs times `scale`: bandwidth divided, latency multiplied."""
        return replace(self, bytes_per_s=self.bytes_per_s / scale, latency_s=self.latency_s * scale)


def card_link(card: Card, notes, floor: bool = True) -> Link | None:
    """The link between cards of one machine: the card's NVLink/xGMI/Infinity Fabric, or PCIe.

    Where no figure is given, the guide's PCIe figure stands in (for a dedicated link, as a
    floor, and only when `floor`; otherwise None)."""
    quoted = card.interconnect_bytes_per_s
    kind = card.interconnect
    if quoted is None:
        if kind != "pcie" and not floor:
            return None
        quoted = PCIE_LINE_GB_PER_S * GB
        said = M.INTERCONNECT_PCIE if kind == "pcie" else M.INTERCONNECT_PCIE_FLOOR
        notes.assume("interconnect_gb_per_s", PCIE_LINE_GB_PER_S, said(card=card.id, pcie_gb_per_s=PCIE_LINE_GB_PER_S))
        kind = "pcie"
    efficiency, latency = d.LINK_EFFICIENCY[kind], d.LINK_LATENCY_S[kind]
    name = card.interconnect_name or (M.LINK_PCIE() if kind == "pcie" else M.LINK_DEDICATED())
    link = Link(name, quoted / 2 * efficiency.value, latency.value,
                M.LINK_RATES(both_bytes_per_s=quoted, each_bytes_per_s=quoted / 2, efficiency=efficiency.value,
                             latency_s=latency.value), quoted)
    notes.assume("link", link.name, lambda: M.LINK_NOTE(rates=link.note, efficiency=efficiency.note,
                                                        latency=latency.note))
    return link


def network_link(card: Card, per_machine: int, given_gb_per_s: float | None, notes) -> Link:
    """A card's share of its machine's network, for traffic between machines: given, the
    rack-scale machine's own (one NIC port per card in a GB200 NVL72), or the line's."""
    machine_gb_per_s = given_gb_per_s or notes.use("network_gb_per_s", None, _network_default(card, per_machine))
    efficiency, latency = d.LINK_EFFICIENCY["network"], d.LINK_LATENCY_S["network"]
    per_card = machine_gb_per_s * GB / per_machine
    return Link(M.LINK_NETWORK(machine_bytes_per_s=machine_gb_per_s * GB), per_card * efficiency.value,
                latency.value,
                M.LINK_NETWORK_RATES(machine_bytes_per_s=machine_gb_per_s * GB, cards=per_machine,
                                     efficiency=efficiency.value, latency_s=latency.value),
                machine_gb_per_s * GB)


def _network_default(card: Card, per_machine: int) -> d.Default:
    domain = rack_domain(card)
    if domain is not None and domain.network_gb_per_s and per_machine == domain.cards_per_machine:
        return d.Default(domain.network_gb_per_s, M.RACK_NETWORK(
            domain=domain.name, network_gb_per_s=domain.network_gb_per_s, cards=domain.cards_per_machine))
    return d.Default(d.NETWORK_GB_PER_S_PER_MACHINE[card.line], d.NETWORK_NOTE)


def collective_latency_s(members: int, link: Link) -> float:
    """The fixed cost of one collective over `members` cards: the link's latency for each of the
    log2(n) rounds of a tree or recursive doubling (small messages take that path)."""
    return link.latency_s * max(1.0, math.log2(members))


@keeps_hash
@dataclass(frozen=True)
class Fabric:
    """The links cards of one plan talk over: their dedicated link within its reach (`domain`
    cards, or the whole machine), the PCIe slot beyond that reach inside a machine, and the
    network between machines of `per_machine` cards."""

    inside: Link
    slot: Link | None
    domain: int | None
    between: Link
    per_machine: int

    def scaled(self, scale: float) -> "Fabric":
        """Every link's costs times `scale` (the ends of a range), made once per fabric and scale:
        a card's fabric is kept (_fabric), and every answer on it asks for the same two ends."""
        return self if scale == 1.0 else self._scaled(scale)

    @kept_by_argument
    def _scaled(self, scale: float) -> "Fabric":
        return replace(self, inside=self.inside.scaled(scale),
                       slot=None if self.slot is None else self.slot.scaled(scale),
                       between=self.between.scaled(scale))

    def link(self, members: int) -> Link:
        """The slowest link a collective over `members` cards of one group crosses."""
        if members > self.per_machine:
            return self.between
        if self.domain is not None and members > self.domain and self.slot is not None:
            return self.slot
        return self.inside


@overload
def fabric_for(card: Card, per_machine: int, network_gb_per_s: float | None, notes: Notes,
               floor: Literal[True] = True) -> Fabric: ...
@overload
def fabric_for(card: Card, per_machine: int, network_gb_per_s: float | None, notes: Notes,
               floor: bool) -> Fabric | None: ...
def fabric_for(card: Card, per_machine: int, network_gb_per_s: float | None, notes: Notes,
               floor: bool = True) -> Fabric | None:
    """The card's fabric in machines of `per_machine`; None where its dedicated link has no
    figure and `floor` is off (training then falls back to the guide's curve)."""
    fabric, said = _fabric(card, per_machine, network_gb_per_s, floor)
    notes.replay(said)
    return fabric


@functools.lru_cache(maxsize=256)
def _fabric(card: Card, per_machine: int, network_gb_per_s: float | None, floor: bool) -> tuple[Fabric | None, Notes]:
    """fabric_for's fabric and the notes it says, worked out once for a card, machine and
    network: they depend on nothing else, and every question on those cards asks them again."""
    notes = Notes()
    inside = card_link(card, notes, floor)
    if inside is None:
        return None, notes
    slot = None
    if card.link_domain_cards is not None:
        quoted = card.pcie_bytes_per_s or PCIE_LINE_GB_PER_S * GB
        efficiency, latency = d.LINK_EFFICIENCY["pcie"], d.LINK_LATENCY_S["pcie"]
        slot = Link(M.LINK_PCIE_RATED(both_bytes_per_s=quoted), quoted / 2 * efficiency.value, latency.value,
                    M.LINK_BEYOND_BRIDGE(cards=card.link_domain_cards), quoted)
        notes.assume("link_domain_cards", card.link_domain_cards, M.LINK_DOMAIN(
            card=card.id, link=inside.name, cards=card.link_domain_cards, slot=slot.name))
    return Fabric(inside, slot, card.link_domain_cards, network_link(card, per_machine, network_gb_per_s, notes),
                  per_machine), notes


def allreduce_s(message_bytes: float, members: int, link: Link) -> float:
    """Ring all-reduce: 2(n-1)/n of the message over each link, plus the collective's latency."""
    if members <= 1:
        return 0.0
    return 2 * (members - 1) / members * message_bytes / link.bytes_per_s + collective_latency_s(members, link)


def gather_s(full_bytes: float, members: int, link: Link) -> float:
    """All-gather (or reduce-scatter) of a message sharded over `members`: (n-1)/n of it in."""
    if members <= 1:
        return 0.0
    return (members - 1) / members * full_bytes / link.bytes_per_s + collective_latency_s(members, link)


def all_to_all_s(bytes_per_card: float, members: int, link: Link) -> float:
    """All-to-all: each card sends (n-1)/n of its bytes to the others."""
    if members <= 1:
        return 0.0
    return (members - 1) / members * bytes_per_card / link.bytes_per_s + collective_latency_s(members, link)


def send_s(message_bytes: float, link: Link) -> float:
    """One point-to-point message (a pipeline hop)."""
    return message_bytes / link.bytes_per_s + link.latency_s


def hierarchical_allreduce_s(message_bytes: float, members: int, in_machine: int, inside: Link,
                             between: Link) -> float:
    """All-reduce over `members` cards, `in_machine` of them in each machine: a reduce-scatter and
    all-gather inside the machine, and an all-reduce of each card's shard across the machines."""
    local, machines, fewest = _spread(members, in_machine)
    return (allreduce_s(message_bytes, local, inside)
            + allreduce_s(message_bytes / fewest, machines, between))


def hierarchical_gather_s(full_bytes: float, members: int, in_machine: int, inside: Link,
                          between: Link) -> float:
    """All-gather (or reduce-scatter) over `members` cards, `in_machine` of them per machine."""
    local, machines, fewest = _spread(members, in_machine)
    return gather_s(full_bytes, local, inside) + gather_s(full_bytes / fewest, machines, between)


def _spread(members: int, in_machine: int) -> tuple[int, int, int]:
    """Cards of a group in one machine, the machines the group spans, and the cards in its
    emptiest machine: that machine's cards carry the largest shards over the network."""
    local = min(members, max(1, in_machine))
    machines = math.ceil(members / local)
    return local, machines, members - (machines - 1) * local
