"""The catalog endpoints: cards (the guide's tiers and real cards) and model presets."""

from flask import Blueprint, request
from werkzeug.exceptions import NotFound

from ..sizing import GIB, UnknownCardError, UnknownModelError
from . import schemas as s
from .catalogs import current_catalogs
from .dump import dumper
from .jsonio import query_args

bp = Blueprint("catalog", __name__)

_card, _cards, _query = dumper(s.CardSchema), dumper(s.CardListSchema), s._CardQuerySchema()
_model, _models = dumper(s.ModelPresetSchema), dumper(s.ModelListSchema)


def matches(card, query: dict) -> bool:
    """Whether a card passes the filters (line, kind, vendor, tier, min_memory_gib)."""
    return (
        query.get("line", card.line) == card.line
        and query.get("kind", card.kind) == card.kind
        and (query.get("vendor") is None or (card.vendor or "").lower() == query["vendor"].lower())
        and (query.get("tier") is None or (card.tier or "").lower() == query["tier"].lower())
        and card.memory_bytes >= query.get("min_memory_gib", 0) * GIB
    )


def matching(query: dict | None) -> list:
    """The catalog's cards (tiers included) that pass the filters, in catalog order."""
    return [c for c in current_catalogs().cards.cards if matches(c, query or {})]


@bp.get("/cards")
def list_cards():
    query = _query.load(query_args(request))
    catalogs = current_catalogs()
    cards = matching(query)
    return _cards({"count": len(cards), "cards": [(c, catalogs.prices.get(c.id), catalogs.rents.get(c.id))
                                                     for c in cards]})


@bp.get("/cards/<card_id>")
def get_card(card_id: str):
    catalogs = current_catalogs()
    try:
        card = catalogs.cards.get(card_id)
    except UnknownCardError as exc:
        raise NotFound(exc.message) from None
    return _card((card, catalogs.prices.get(card.id), catalogs.rents.get(card.id)))


@bp.get("/models")
def list_models():
    models = current_catalogs().models.models
    return _models({"count": len(models), "models": models})


@bp.get("/models/<path:model_id>")
def get_model(model_id: str):
    try:
        return _model(current_catalogs().models.get(model_id))
    except UnknownModelError as exc:
        raise NotFound(exc.message) from None
