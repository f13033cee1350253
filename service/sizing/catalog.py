"""The catalog: the guide's tiers and model presets, read-only data with provenance.

The data files are read once, on first use, from the package itself; lookups ignore case,
spaces and underscores, and accept each entry's aliases.
"""

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType

from .errors import InvalidInputError, UnknownCardError, UnknownModelError
from .model import ModelSpec
from .units import gb_per_s_to_bytes_per_s, gib_to_bytes, tflops_to_flops

LINES = ("consumer", "workstation", "datacenter")
INTERCONNECT_KINDS = ("pcie", "dedicated")
FIGURE_STATUSES = ("given", "approximate", "range", "derived", "missing")

# Guide section 1.1: what each product line is built to endure.
LINE_DUTY = MappingProxyType(
    {
        "consumer": "an ordinary case and PSU, a few hours a day",
        "workstation": "tower or rack workstation, days of continuous work, certified drivers, ECC",
        "datacenter": "4U/8U chassis with dedicated power and cooling, 24x7 for three years",
    }
)

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
    """An accelerator card or one of the guide's tiers, in SI units.

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


def _tier_card(raw: Mapping) -> Card:
    figures = {name: _figure(value) for name, value in raw["figures"].items()}

    def typical(name: str) -> float | None:
        fig = figures.get(name)
        return None if fig is None else fig.typical

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
        memory_bytes=gib_to_bytes(typical("memory_gib")),
        bandwidth_bytes_per_s=gb_per_s_to_bytes_per_s(typical("bandwidth_gb_per_s")),
        dense_flops=MappingProxyType(dense),
        power_w=float(typical("power_w")),
        interconnect=raw["interconnect"],
        interconnect_bytes_per_s=None if link is None else gb_per_s_to_bytes_per_s(link),
        ecc=raw["ecc"],
        memory_type=raw.get("memory_type"),
        source=raw["source"],
        notes=raw.get("notes", ""),
        aliases=tuple(raw.get("aliases", ())),
        figures=MappingProxyType(figures),
    )


@dataclass(frozen=True)
class Catalog:
    """All cards, in catalog order, with an index of every id and alias."""

    cards: tuple[Card, ...]
    index: Mapping[str, Card]

    def get(self, name: str, field_name: str = "card") -> Card:
        """The card called `name` (id or alias, any case), or UnknownCardError."""
        card = self.index.get(normalise_name(name))
        if card is None:
            raise UnknownCardError(
                f"unknown card {name!r}; GET /cards lists the catalog", field_name
            )
        return card


def _index(entries, names) -> Mapping:
    """Every id and alias, normalised, to its entry; a name claimed twice is a data error."""
    index: dict = {}
    for entry in entries:
        for name in names(entry):
            key = normalise_name(name)
            if key in index and index[key] is not entry:
                raise ValueError(f"catalog name {name!r} is claimed twice")
            index[key] = entry
    return MappingProxyType(index)


def build_catalog(cards: tuple[Card, ...]) -> Catalog:
    """Index cards by id and aliases."""
    return Catalog(cards=cards, index=_index(cards, lambda c: (c.id, *c.aliases)))


def _read_data(name: str) -> dict:
    text = resources.files(__package__).joinpath(f"data/{name}").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def catalog() -> Catalog:
    """The packaged card catalog, read once."""
    return build_catalog(tuple(_tier_card(raw) for raw in _read_data("tiers.toml")["tier"]))


@dataclass(frozen=True)
class ModelPreset:
    """A named model: its id, aliases and architecture."""

    id: str
    aliases: tuple[str, ...]
    spec: ModelSpec
    notes: str


@dataclass(frozen=True)
class ModelCatalog:
    models: tuple[ModelPreset, ...]
    index: Mapping[str, ModelPreset]

    def get(self, name: str, field_name: str = "model") -> ModelPreset:
        """The preset called `name` (id or alias, any case), or UnknownModelError."""
        preset = self.index.get(normalise_name(name))
        if preset is None:
            raise UnknownModelError(
                f"unknown model {name!r}; GET /models lists the presets, or give params_billion",
                field_name,
            )
        return preset


_ARCH_FIELDS = ("active_params", "layers", "hidden_size", "attention_heads", "kv_heads",
                "head_dim", "vocab_size")


def _preset(raw: Mapping) -> ModelPreset:
    spec = ModelSpec(params=raw["params"], name=raw["name"], source=raw["source"],
                     **{name: raw.get(name) for name in _ARCH_FIELDS})
    return ModelPreset(id=raw["id"], aliases=tuple(raw.get("aliases", ())), spec=spec,
                       notes=raw.get("notes", ""))


@cache
def model_catalog() -> ModelCatalog:
    """The packaged model presets, read once."""
    presets = tuple(_preset(raw) for raw in _read_data("models.toml")["model"])
    return ModelCatalog(presets, _index(presets, lambda m: (m.id, m.spec.name, *m.aliases)))


def get_model(name: str, field_name: str = "model") -> ModelPreset:
    """Look a model preset up by id, name or alias."""
    return model_catalog().get(name, field_name)


def get_card(name: str, field_name: str = "card") -> Card:
    """Look a card or tier up by id or alias."""
    return catalog().get(name, field_name)


def custom_card(
    *,
    memory_gib: float,
    bandwidth_gb_per_s: float,
    dense_tflops: Mapping[str, float],
    power_w: float,
    line: str,
    interconnect_gb_per_s: float | None = None,
    interconnect: str | None = None,
    ecc: bool | None = None,
    name: str = "custom card",
) -> Card:
    """A card described by the caller's figures (the same units as the catalog's)."""
    if line not in LINES:
        raise InvalidInputError(f"line must be one of {', '.join(LINES)}", "hardware.card.line")
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
        source="figures given by the caller",
    )
