"""The catalogs: the packaged data read once, on first use, from the package itself (tiers,
cards, models), the operator's prices beside them, and the lookups by name."""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType

from babel.messages.catalog import Catalog as MessageCatalog
from babel.messages.pofile import read_po

from .cards import Card, Catalog, build_catalog, family, normalise_name, real_card, tier_card
from .messages import Forms, Translations
from .presets import ModelCatalog, ModelPreset, build_model_catalog, model_preset, shared_configs


def read_data(name: str) -> dict:
    """A packaged data file (data/NAME, TOML), parsed."""
    text = resources.files(__package__).joinpath(f"data/{name}").read_text(encoding="utf-8")
    return tomllib.loads(text)


LANGUAGES = ("en", "zh")


# The context (msgctxt) of a gettext entry that translates catalog data, not a message.
DATA_CONTEXT = "catalog"


@cache
def translations(lang: str) -> Translations:
    """The coded messages' sentences in `lang` (English -> translation), from the packaged
    gettext catalog locale/LANG.po; English is the messages' own and needs none."""
    return _entries(lang, None)


@cache
def data_translations(lang: str) -> Mapping[str, str]:
    """The catalog data a message quotes, in `lang` (English -> translation): the entries of
    locale/LANG.po under the context "catalog" (see `data_texts`)."""
    entries = _entries(lang, DATA_CONTEXT)
    return MappingProxyType({text: said for text, said in entries.items() if isinstance(said, str)})


@cache
def _catalog(lang: str) -> MessageCatalog:
    """The packaged gettext catalog locale/LANG.po, parsed once for its messages and its data."""
    with resources.files(__package__).joinpath(f"locale/{lang}.po").open("rb") as po:
        return read_po(po, locale=lang)


def _entries(lang: str, context: str | None) -> Translations:
    if lang == "en":
        return MappingProxyType({})
    parsed = _catalog(lang)
    entries: dict[str, str | Forms] = {}
    for entry in parsed:
        if not entry.id or not entry.string or entry.context != context or entry.fuzzy:  # fuzzy: to review
            continue
        if isinstance(entry.id, str) and isinstance(entry.string, str):
            entries[entry.id] = entry.string
        elif isinstance(entry.id, tuple):  # a plural: keyed by its English plural, as its template is
            entries[entry.id[1]] = Forms(entry.string, parsed.plural_expr, entry.id[0])
    return MappingProxyType(entries)


def data_texts() -> dict[str, str]:
    """The packaged catalog's text that messages quote and that is said in the caller's language
    (text -> where it stands): a family's why, why a card is not sized, a card's link name, what
    the project measured on a card."""
    data = read_data("cards.toml")
    texts = {raw["why"]: "cards.toml family why" for raw in data.get("family", [])}
    texts |= {raw["why"]: "cards.toml unsized why" for raw in data.get("unsized", [])}
    texts |= {raw["interconnect_name"]: "cards.toml card interconnect_name" for raw in data.get("card", [])
              if raw.get("interconnect_name")}
    texts |= {raw["measured_source"]: "cards.toml card measured_source" for raw in data.get("card", [])
              if raw.get("measured_source")}
    return texts


def check_data_translations(lang: str) -> list[str]:
    """The catalog data without its translation in `lang`, and data entries nothing quotes."""
    said, texts = data_translations(lang), data_texts()
    return ([f"{where} {text!r}: no translation" for text, where in texts.items() if text not in said]
            + [f"unused catalog entry: {text!r}" for text in said if text not in texts])



@cache
def catalog() -> Catalog:
    """The packaged card catalog, read once: the guide's tiers, then real cards."""
    tiers = tuple(tier_card(raw) for raw in read_data("tiers.toml")["tier"])
    by_id = {t.id: t for t in tiers}
    data = read_data("cards.toml")
    cards = tuple(real_card(raw, by_id, f"cards.toml card {i + 1} ({raw.get('id')})")
                  for i, raw in enumerate(data.get("card", [])))
    families = tuple(family(raw, f"cards.toml family {i + 1}") for i, raw in enumerate(data.get("family", [])))
    unsized = {name: raw["why"] for raw in data.get("unsized", []) for name in raw["names"]}
    return build_catalog(tiers + cards, families, unsized)



@cache
def model_catalog() -> ModelCatalog:
    """The packaged model presets, read once."""
    entries = shared_configs(read_data("models.toml")["model"])
    return build_model_catalog(tuple(
        model_preset(raw, f"models.toml model {i + 1} ({raw.get('id')})")
        for i, raw in enumerate(entries)))



@dataclass(frozen=True)
class Price:
    """A card's price (to buy, or to rent per card-hour), with where it comes from and, for a
    published or quoted figure, the date it held on."""

    amount: float
    """The price: one card to buy, or one card for one hour to rent, in currency."""
    currency: str
    """Currency of amount, as given (the request's currency, or the operator's catalog entry)."""
    source: str
    """Where the price comes from: given by the caller, or the source stated in the operator's catalog file."""
    date: str | None = None
    """ISO date (YYYY-MM-DD) the price held on; always set for an operator's rental price, null when undated or given
    by the caller."""



@dataclass(frozen=True)
class Catalogs:
    """Everything a request may name: cards, model presets, card prices and rental prices per
    card-hour."""

    cards: Catalog
    models: ModelCatalog
    prices: Mapping[str, Price] = field(default_factory=lambda: MappingProxyType({}))
    rents: Mapping[str, Price] = field(default_factory=lambda: MappingProxyType({}))



def packaged_catalogs() -> Catalogs:
    """The catalogs shipped with the service."""
    return Catalogs(catalog(), model_catalog())



def extend_catalogs(
    base: Catalogs, cards: tuple[Card, ...], models: tuple[ModelPreset, ...],
    prices: Mapping[str, Price], rents: Mapping[str, Price] | None = None,
) -> Catalogs:
    """`base` with cards and models added or replaced by id, and prices (to buy, and to rent per
    card-hour) set.

    A replaced entry's aliases go with it; a name still claimed twice is an error.
    """
    card_ids, model_ids = {c.id for c in cards}, {m.id for m in models}
    merged_cards = tuple(c for c in base.cards.cards if c.id not in card_ids) + cards
    merged_models = tuple(m for m in base.models.models if m.id not in model_ids) + models
    claimed = {normalise_name(n) for c in merged_cards for n in (c.id, *c.aliases)}
    kept = tuple(f for f in dict.fromkeys(base.cards.families.values())  # an operator's name wins
                 if not claimed & {normalise_name(n) for n in f.names})
    card_catalog = build_catalog(merged_cards, kept, base.cards.unsized)
    rents = rents or {}
    for card_id in prices:
        card_catalog.get(card_id, "prices")
    for card_id in rents:
        card_catalog.get(card_id, "rents")
    return Catalogs(card_catalog, build_model_catalog(merged_models),
                    MappingProxyType({**base.prices, **{card_catalog.get(k).id: v
                                                        for k, v in prices.items()}}),
                    MappingProxyType({**base.rents, **{card_catalog.get(k).id: v
                                                       for k, v in rents.items()}}))



def get_model(name: str, field_name: str = "model") -> ModelPreset:
    """Look a packaged model preset up by id, name or alias."""
    return model_catalog().get(name, field_name)



def get_card(name: str, field_name: str = "card") -> Card:
    """Look a packaged card or tier up by id or alias."""
    return catalog().get(name, field_name)
