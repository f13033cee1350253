"""Cards: the guide's tiers and real cards with their figures and sources, the figures
derived from them, a caller's own card, and the card catalog's lookup (case, spaces and
underscores ignored; aliases accepted; the closest names offered for a miss)."""

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from . import messages as M
from .errors import InvalidInputError, SizingError, UnknownCardError
from .units import gb_per_s_to_bytes_per_s, gib_to_bytes, tflops_to_flops

LINES = ("consumer", "workstation", "datacenter")

INTERCONNECT_KINDS = ("pcie", "dedicated")

FIGURE_STATUSES = ("given", "approximate", "range", "derived", "missing")

# Guide: consumer and workstation cards talk over PCIe at 64 GB/s per card at best.
PCIE_LINE_GB_PER_S = 64.0



@dataclass(frozen=True)
class Figure:
    """One catalog figure and where it comes from (see the grammar in data/tiers.toml)."""

    typical: float | None
    status: str
    low: float | None = None
    high: float | None = None
    note: str = ""



@dataclass(frozen=True)
class Card:
    """An accelerator card or one of the guide's tiers, in SI units. Hashed by its id and headline
    figures (its other figures hold mappings), so that what depends only on a card is worked out
    once.

    `dense_flops` maps a precision (bf16, fp16, fp8, int8, ...) to dense FLOP/s (OP/s for
    int8); a precision the source does not give is absent. `interconnect_bytes_per_s` is
    None where the source gives no figure.
    """

    id: str
    name: str
    kind: str
    line: str
    tier: str | None
    memory_bytes: int
    bandwidth_bytes_per_s: float
    dense_flops: Mapping[str, float]
    power_w: float
    interconnect: str
    interconnect_bytes_per_s: float | None
    ecc: bool
    memory_type: str | None
    source: str
    notes: str = ""
    aliases: tuple[str, ...] = ()
    figures: Mapping[str, Figure] = field(default_factory=lambda: MappingProxyType({}))
    vendor: str | None = None
    form_factor: str | None = None
    interconnect_name: str | None = None
    measured_bandwidth_bytes_per_s: float | None = None
    measured_dense_flops: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    measured_source: str = ""
    link_domain_cards: int | None = None  # cards the dedicated link joins (None: a whole machine)
    pcie_bytes_per_s: float | None = None  # the slot, where the dedicated link does not reach
    lookup_warning: M.Message | None = None  # said when a family name ("A100") resolved to this variant
    line_assumed: M.Message | None = None  # why a custom card's line was inferred, when the caller gave none

    def __hash__(self) -> int:
        # equal cards have equal figures; every custom card is "custom", so its figures tell it apart
        return hash((self.id, self.memory_bytes, self.bandwidth_bytes_per_s, self.interconnect_bytes_per_s,
                     self.power_w))



_CARD_KEYS = {"id", "name", "vendor", "line", "tier", "form_factor", "memory_gib", "memory_type",
              "bandwidth_gb_per_s", "power_w", "interconnect", "interconnect_name",
              "interconnect_gb_per_s", "ecc", "aliases", "source", "notes", "dense_tflops",
              "measured_bandwidth_gb_per_s", "measured_dense_tflops", "measured_source",
              "link_domain_cards", "pcie_gb_per_s"}



def normalise_name(name: str) -> str:
    """A lookup key: lowercase, with runs of spaces, underscores and dashes as one dash."""
    return re.sub(r"[\s_\-]+", "-", name.strip().lower()).strip("-")



def _figure(raw: Mapping) -> Figure:
    status = raw.get("status", "given")
    if status not in FIGURE_STATUSES:
        raise ValueError(f"unknown figure status {status!r}")
    if status != "missing" and raw.get("typical") is None:
        raise ValueError("a figure that is not missing needs a typical value")
    return Figure(
        typical=raw.get("typical"),
        status=status,
        low=raw.get("low"),
        high=raw.get("high"),
        note=raw.get("note", ""),
    )



def tier_card(raw: Mapping) -> Card:
    figures = {name: _figure(value) for name, value in raw["figures"].items()}

    def typical(name: str) -> float | None:
        fig = figures.get(name)
        return None if fig is None else fig.typical

    def required(name: str) -> float:
        """A figure every tier gives: its memory, bandwidth and power."""
        value = typical(name)
        if value is None:
            raise ValueError(f"tier {raw['id']}: {name} needs a typical value")
        return value

    dense = {
        name.split(".", 1)[1]: tflops_to_flops(fig.typical)
        for name, fig in figures.items()
        if name.startswith("dense_tflops.") and fig.typical is not None
    }
    link = typical("interconnect_gb_per_s")
    return Card(
        id=raw["id"],
        name=raw["name"],
        kind="tier",
        line=raw["line"],
        tier=raw["id"],
        memory_bytes=gib_to_bytes(required("memory_gib")),
        bandwidth_bytes_per_s=gb_per_s_to_bytes_per_s(required("bandwidth_gb_per_s")),
        dense_flops=MappingProxyType(dense),
        power_w=float(required("power_w")),
        interconnect=raw["interconnect"],
        interconnect_bytes_per_s=None if link is None else gb_per_s_to_bytes_per_s(link),
        ecc=raw["ecc"],
        memory_type=raw.get("memory_type"),
        source=raw["source"],
        notes=raw.get("notes", ""),
        aliases=tuple(raw.get("aliases", ())),
        figures=MappingProxyType(figures),
    )



def _positive(raw: Mapping, key: str, where: str) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{where}: {key} must be a positive number, got {value!r}")
    return float(value)



def real_card(raw: Mapping, tiers: Mapping[str, "Card"], where: str = "card") -> "Card":
    """A real card from its data entry (grammar in data/cards.toml), checked as it is read."""
    unknown = set(raw) - _CARD_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("id", "name", "source"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{where}: {key} is required")
    if raw.get("line") not in LINES:
        raise ValueError(f"{where}: line must be one of {LINES}")
    if raw.get("interconnect") not in INTERCONNECT_KINDS:
        raise ValueError(f"{where}: interconnect must be one of {INTERCONNECT_KINDS}")
    if raw.get("tier") not in tiers:
        raise ValueError(f"{where}: tier must be one of {sorted(tiers)}")
    rates = raw.get("dense_tflops") or {}
    if not rates:
        raise ValueError(f"{where}: dense_tflops needs at least one precision")
    dense = {k: tflops_to_flops(_positive(rates, k, f"{where}.dense_tflops")) for k in rates}
    link = raw.get("interconnect_gb_per_s")
    measured = raw.get("measured_dense_tflops") or {}
    if (raw.get("measured_bandwidth_gb_per_s") or measured) and not raw.get("measured_source"):
        raise ValueError(f"{where}: measured figures need a measured_source")
    return Card(
        id=raw["id"],
        name=raw["name"],
        kind="card",
        line=raw["line"],
        tier=raw["tier"],
        memory_bytes=gib_to_bytes(_positive(raw, "memory_gib", where)),
        bandwidth_bytes_per_s=gb_per_s_to_bytes_per_s(_positive(raw, "bandwidth_gb_per_s", where)),
        dense_flops=MappingProxyType(dense),
        power_w=_positive(raw, "power_w", where),
        interconnect=raw["interconnect"],
        interconnect_bytes_per_s=None if link is None else gb_per_s_to_bytes_per_s(
            _positive(raw, "interconnect_gb_per_s", where)),
        ecc=bool(raw.get("ecc", False)),
        memory_type=raw.get("memory_type"),
        source=raw["source"],
        notes=raw.get("notes", ""),
        aliases=tuple(raw.get("aliases", ())),
        vendor=raw.get("vendor"),
        form_factor=raw.get("form_factor"),
        interconnect_name=raw.get("interconnect_name"),
        measured_bandwidth_bytes_per_s=None if raw.get("measured_bandwidth_gb_per_s") is None else
        gb_per_s_to_bytes_per_s(_positive(raw, "measured_bandwidth_gb_per_s", where)),
        measured_dense_flops=MappingProxyType(
            {k: tflops_to_flops(_positive(measured, k, f"{where}.measured_dense_tflops")) for k in measured}),
        measured_source=raw.get("measured_source", ""),
        link_domain_cards=_domain(raw, where),
        pcie_bytes_per_s=None if raw.get("pcie_gb_per_s") is None else gb_per_s_to_bytes_per_s(
            _positive(raw, "pcie_gb_per_s", where)),
    )



def _domain(raw: Mapping, where: str) -> int | None:
    value = raw.get("link_domain_cards")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise ValueError(f"{where}: link_domain_cards must be a whole number of at least 2")
    return value



def half_precision_rate(card: "Card") -> tuple[str, float] | None:
    """The card's dense half-precision FLOP/s and the figure it comes from: BF16 or FP16 as
    listed; else INT8 or FP8 halved (dense INT8/FP8 runs at twice half precision on current
    tensor units); else FP32 as a floor; None when the card lists no dense figure."""
    for key in ("bf16", "fp16"):
        if key in card.dense_flops:
            return key, card.dense_flops[key]
    for key in ("int8", "fp8"):
        if key in card.dense_flops:
            return key, card.dense_flops[key] / 2
    if "fp32" in card.dense_flops:
        return "fp32", card.dense_flops["fp32"]
    return None



def measured_bandwidth_fraction(card: "Card") -> float | None:
    """Measured over datasheet bandwidth for this card; None when it was not measured."""
    if card.measured_bandwidth_bytes_per_s:
        return min(1.0, card.measured_bandwidth_bytes_per_s / card.bandwidth_bytes_per_s)
    return None



def measured_compute_fraction(card: "Card", key: str) -> float | None:
    """Measured over datasheet dense rate for this precision; None when it was not measured."""
    measured, datasheet = card.measured_dense_flops.get(key), card.dense_flops.get(key)
    if measured and datasheet:
        return min(1.0, measured / datasheet)
    return None



@dataclass(frozen=True)
class Family:
    """A name several cards answer to ("A100"): the variant it means, and the others it might."""

    names: tuple[str, ...]
    card: str
    others: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Catalog:
    """All cards, in catalog order, with an index of every id and alias, and the family names
    that resolve to their most common variant with a warning naming the others."""

    cards: tuple[Card, ...]
    index: Mapping[str, Card]
    families: Mapping[str, Family] = field(default_factory=lambda: MappingProxyType({}))
    unsized: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # name -> why

    def get(self, name: str, field_name: str = "card") -> Card:
        """The card called `name` (id, alias or family name, any case), or UnknownCardError."""
        too_long(name, "card", field_name)
        key = normalise_name(name)
        card = self.index.get(key)
        if card is not None:
            return card
        unsized = self.unsized.get(key)
        if unsized is not None:
            raise UnknownCardError(M.ERROR_CARD_NOT_SIZED(name=name, why=unsized), field_name)
        family = self.families.get(key)
        if family is not None:
            return replace(self.index[family.card], lookup_warning=M.FAMILY_TAKEN_AS(
                name=name, card=family.card, why=family.why, others=family.others))
        closest = closest_names(name, {**self.index, **self._family_cards()})
        raise UnknownCardError(M.ERROR_UNKNOWN_CARD_CLOSEST(name=name, closest=closest) if closest else
                               M.ERROR_UNKNOWN_CARD(name=name), field_name)

    def _family_cards(self) -> dict[str, Card]:
        return {key: self.index[f.card] for key, f in self.families.items()}



MAX_NAME_CHARS = 200  # the longest card or model name a lookup takes (the request schemas' limit)


_TOO_LONG = {"card": M.ERROR_CARD_NAME_TOO_LONG, "model": M.ERROR_MODEL_NAME_TOO_LONG}


def too_long(name: str, kind: str, field_name: str, error: type[SizingError] = UnknownCardError) -> None:
    """A name longer than any in a catalog is refused before it is looked up or compared (`kind`:
    "card" or "model")."""
    if len(name) > MAX_NAME_CHARS:
        raise error(_TOO_LONG[kind](most=MAX_NAME_CHARS, chars=len(name)), field_name)


def _model_numbers(key: str) -> set[str]:
    """The tokens of a name that carry a model number ("a100", "4090", "mi300x"), not a memory
    size ("80gb") that cards of every generation share."""
    tokens = re.findall(r"[a-z]*\d+[a-z]*", key.replace("-", " "))
    return {t for t in tokens if not re.fullmatch(r"\d+(gb|g|gib|tb)", t)}


# A name is compared by its first HINT_CHARS characters: every catalog entry then costs a bounded
# comparison, so the closest-match search is linear in the catalog whatever a caller sends.
HINT_CHARS = 64
SIMILAR = 0.6  # difflib's cutoff for a near spelling


def _shared_start(a: str, b: str) -> int:
    """How many leading characters two names share."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def closest_names(name: str, index: Mapping) -> tuple[str, ...]:
    """The ids (at most three) of the entries nearest to `name`, for an error's "closest: a, b, c":
    first those that share its model number ("a100", "4090"), then the nearest spellings, so that
    a near miss names its own family before another generation's card."""
    key = normalise_name(name[:4 * HINT_CHARS])[:HINT_CHARS]
    numbers = _model_numbers(key)
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(key)
    family, near = [], []
    for position, entry in enumerate(index):
        matcher.set_seq1(entry[:HINT_CHARS])
        if numbers & _model_numbers(entry):
            family.append((-matcher.ratio(), position, entry))  # ties keep the catalog's order
        elif matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR and \
                matcher.ratio() >= SIMILAR:
            # best first; on a tie the longer shared start (MI301X: mi300x before mi350x)
            near.append((matcher.ratio(), _shared_start(key, entry), entry))
    ids: list[str] = []
    for _, _, entry in sorted(family) + sorted(near, reverse=True):
        entry_id = index[entry].id
        if entry_id not in ids:
            ids.append(entry_id)
    return tuple(ids[:3])



def name_index(entries, names) -> Mapping:
    """Every id and alias, normalised, to its entry; a name claimed twice is a data error.

    Aliases that normalise to the entry's own id are fine; two entries sharing one is not."""
    index: dict = {}
    for entry in entries:
        for name in names(entry):
            key = normalise_name(name)
            if key in index and index[key] is not entry:
                raise ValueError(f"catalog name {name!r} is claimed twice")
            index[key] = entry
    return MappingProxyType(index)



def build_catalog(cards: tuple[Card, ...], families: tuple[Family, ...] = (),
                  unsized: Mapping[str, str] = MappingProxyType({})) -> Catalog:
    """Index cards by id and aliases, and the family names (each naming cards the catalog has,
    and no name a card claims)."""
    index = name_index(cards, lambda c: (c.id, *c.aliases))
    by_family: dict[str, Family] = {}
    for family in families:
        missing = [i for i in (family.card, *family.others) if normalise_name(i) not in index]
        if missing:
            raise ValueError(f"family {family.names[0]!r} names cards not in the catalog: {missing}")
        for name in family.names:
            key = normalise_name(name)
            if key in index or key in by_family:
                raise ValueError(f"family name {name!r} is claimed twice")
            by_family[key] = family
    kept = {normalise_name(n): why for n, why in unsized.items()
            if normalise_name(n) not in index and normalise_name(n) not in by_family}
    return Catalog(cards=cards, index=index, families=MappingProxyType(by_family),
                   unsized=MappingProxyType(kept))


def family(raw: Mapping, where: str) -> Family:
    """A [[family]] entry of cards.toml."""
    names, card, others, why = raw.get("names"), raw.get("card"), raw.get("others"), raw.get("why")
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)
            and isinstance(card, str) and isinstance(others, list) and others
            and all(isinstance(o, str) for o in others) and isinstance(why, str) and why.strip()):
        raise ValueError(f"{where}: a family needs names, card, others and why")
    return Family(tuple(names), card, tuple(others), why)



def custom_card(
    *,
    memory_gib: float,
    bandwidth_gb_per_s: float,
    dense_tflops: Mapping[str, float],
    power_w: float,
    line: str | None = None,
    interconnect_gb_per_s: float | None = None,
    interconnect: str | None = None,
    ecc: bool | None = None,
    name: str = "custom card",
) -> Card:
    """A card described by the caller's figures (the same units as the catalog's); without a
    line, the line its figures suggest (said in the answer)."""
    assumed: M.Message | None = None
    if line is None:
        line, assumed = infer_line(memory_gib, interconnect_gb_per_s, interconnect, ecc)
    if line not in LINES:
        raise InvalidInputError(M.ERROR_UNKNOWN_LINE(lines=LINES), "hardware.card.line")
    kind = interconnect or ("dedicated" if line == "datacenter" else "pcie")
    link = interconnect_gb_per_s
    return Card(
        id="custom",
        name=name,
        kind="custom",
        line=line,
        tier=None,
        memory_bytes=gib_to_bytes(memory_gib),
        bandwidth_bytes_per_s=gb_per_s_to_bytes_per_s(bandwidth_gb_per_s),
        dense_flops=MappingProxyType({k: tflops_to_flops(v) for k, v in dense_tflops.items()}),
        power_w=float(power_w),
        interconnect=kind,
        interconnect_bytes_per_s=None if link is None else gb_per_s_to_bytes_per_s(link),
        ecc=line != "consumer" if ecc is None else ecc,
        memory_type=None,
        source=M.CARD_GIVEN(),
        line_assumed=assumed,
    )


# Above this a card-to-card link is a dedicated fabric, not a PCIe slot (Gen5 x16 is 128 GB/s).
PCIE_MAX_GB_PER_S = 128
CONSUMER_MAX_GIB = 32  # the largest consumer card (RTX 5090) holds 32 GB
WORKSTATION_MAX_GIB = 96  # the largest workstation card (RTX PRO 6000 Blackwell) holds 96 GB


def infer_line(memory_gib: float, link_gb_per_s: float | None, interconnect: str | None,
               ecc: bool | None) -> tuple[str, M.Message]:
    """The product line a card's figures suggest, and why: a dedicated link or more memory than a
    workstation card holds means data centre; ECC or more than a consumer card's 32 GB means
    workstation; else consumer."""
    fast_link = interconnect != "pcie" and (link_gb_per_s or 0) > PCIE_MAX_GB_PER_S
    if interconnect == "dedicated" or fast_link or memory_gib > WORKSTATION_MAX_GIB:
        return "datacenter", M.LINE_DATACENTER(memory_gib=WORKSTATION_MAX_GIB)
    if ecc or memory_gib > CONSUMER_MAX_GIB:
        return "workstation", M.LINE_WORKSTATION(consumer_gib=CONSUMER_MAX_GIB)
    return "consumer", M.LINE_CONSUMER(consumer_gib=CONSUMER_MAX_GIB)
