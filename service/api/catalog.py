"""The catalog endpoints: cards (the guide's tiers and real cards) and model presets."""

from flask import Blueprint, request
from werkzeug.exceptions import NotFound

from ..sizing import GIB, UnknownCardError, UnknownModelError, card_summary, model_summary, page_summary
from . import schemas as s
from .catalogs import current_catalogs
from .dump import sparse_dumper
from .lang import answer_lang
from .operations import LIST_FIELDS_PARAMETER, answered, asked, fields_asked, operation

bp = Blueprint("catalog", __name__)



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
@operation(
    operation_id="listCards",
    tool=True,
    summary="The card catalog, filtered",
    answer=s.CardListSchema,
    answer_description="The cards that pass the filters (a page of them with limit).",
    query=s._CardQuerySchema,
    parameters=(LIST_FIELDS_PARAMETER,),
    tool_defaults={"limit": 25, "fields": "summary,count,total,offset,cards.id,cards.name,cards.kind,cards.line,"
                   "cards.memory_gib,cards.bandwidth_gb_per_s,cards.dense_tflops,cards.power_w"})
def list_cards():
    """Use to find card ids. Lists the guide's tiers (C30 to D-L) and real cards with memory in GiB,
    bandwidth in GB/s, dense TFLOP/s per precision, power in W, interconnect, ECC, tier and
    source."""
    query = asked()
    catalogs = current_catalogs()
    return _listed(s.CardListSchema, "cards", matching(query), query,
                   lambda c: (c, catalogs.prices.get(c.id), catalogs.rents.get(c.id)))


@bp.get("/cards/<card_id>")
@operation(
    operation_id="getCard",
    tool=True,
    summary="One card by id or alias",
    path_parameters={"card_id": "A card's or tier's id, alias or family name, in any case: rtx-4090, 4090, D-M."},
    answer=s.CardAnswerSchema,
    answer_description="The card.",
    query=s._EntryQuerySchema)
def get_card(card_id: str):
    """Use to read one card's figures (memory in GiB, bandwidth in GB/s, dense TFLOP/s, power in W) and
    sources. Ids and aliases are case-insensitive (D-M, dm, rtx-4090, "RTX 4090", 4090); unknown
    names answer 404 with the closest."""
    lang = answer_lang(asked())
    catalogs = current_catalogs()
    try:
        card = catalogs.cards.get(card_id)
    except UnknownCardError as exc:
        raise NotFound(exc.message) from None
    return answered((card, catalogs.prices.get(card.id), catalogs.rents.get(card.id), card_summary(lang, card)))


@bp.get("/models")
@operation(
    operation_id="listModels",
    tool=True,
    summary="The model presets",
    answer=s.ModelListSchema,
    answer_description="The model presets (a page of them with limit).",
    query=s._ModelQuerySchema,
    parameters=(LIST_FIELDS_PARAMETER,),
    tool_defaults={"limit": 25, "fields": "summary,count,total,offset,models.id,models.name,models.params,"
                   "models.active_params,models.layers,models.kv_cache_bytes_per_token_bf16,models.max_context_tokens,"
                   "models.released_precision"})
def list_models():
    """Use to find model ids. Lists the presets with their exact parameter counts, architecture
    (layers, heads, KV heads, head dimension), KV cache bytes per token, and sources."""
    query = asked()
    return _listed(s.ModelListSchema, "models", current_catalogs().models.models, query)


def _listed(schema, key: str, entries, query: dict, row=lambda entry: entry) -> dict:
    """A list as asked: the page from `offset` (at most `limit` entries; all without a limit),
    each entry as `row` makes it, whole or only the fields `fields=` names (compact rows)."""
    paths = fields_asked(request.args, schema)
    start, limit = query["offset"], query.get("limit")
    page = entries[start:] if limit is None else entries[start:start + limit]
    answer = {"summary": page_summary(answer_lang(query), key, len(page), len(entries), start),
              "count": len(page), "total": len(entries), "offset": start, key: [row(e) for e in page]}
    return answered(answer) if paths is None else sparse_dumper(schema, paths)(answer)


@bp.get("/models/<path:model_id>")
@operation(
    operation_id="getModel",
    tool=True,
    summary="One model preset by id or alias",
    path_parameters={"model_id": "A preset's id, name or alias, in any case; it may hold a slash: "
                                 "meta-llama/Llama-3.1-70B-Instruct."},
    answer=s.ModelAnswerSchema,
    answer_description="The model preset.",
    query=s._EntryQuerySchema)
def get_model(model_id: str):
    """Use to read one model's architecture, parameter count and KV cache bytes per token. Ids, names
    and aliases are case-insensitive (meta-llama/Llama-3.1-70B-Instruct); unknown names answer
    404 with the closest."""
    lang = answer_lang(asked())
    try:
        preset = current_catalogs().models.get(model_id)
    except UnknownModelError as exc:
        raise NotFound(exc.message) from None
    return answered((preset, model_summary(lang, preset.spec)))
