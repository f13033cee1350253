"""The catalog endpoints: cards (tiers) and model presets."""

from flask import Blueprint
from werkzeug.exceptions import NotFound

from ..sizing.catalog import catalog, model_catalog
from ..sizing.errors import UnknownCardError, UnknownModelError
from . import schemas as s

bp = Blueprint("catalog", __name__)

_card, _cards = s.CardSchema(), s.CardListSchema()
_model, _models = s.ModelPresetSchema(), s.ModelListSchema()


@bp.get("/cards")
def list_cards():
    cards = catalog().cards
    return _cards.dump({"count": len(cards), "cards": cards})


@bp.get("/cards/<card_id>")
def get_card(card_id: str):
    try:
        return _card.dump(catalog().get(card_id))
    except UnknownCardError as exc:
        raise NotFound(exc.message) from None


@bp.get("/models")
def list_models():
    models = model_catalog().models
    return _models.dump({"count": len(models), "models": models})


@bp.get("/models/<model_id>")
def get_model(model_id: str):
    try:
        return _model.dump(model_catalog().get(model_id))
    except UnknownModelError as exc:
        raise NotFound(exc.message) from None
