"""The catalogs a running app answers from: the packaged ones, extended by an operator's file."""

import os
from pathlib import Path

from flask import Flask, current_app

from ..overlay import ENV_VAR, load_catalog_file, pinned_catalogs
from ..sizing import GIVEN_BY_CALLER, LANGUAGES, Catalogs, Price, data_translations, packaged_catalogs, translations

_KEY = "sizing.catalogs"


def init_catalogs(app: Flask) -> None:
    """The catalogs, extended by the operator's file: as gunicorn's master read it at start
    (every worker serves the same file, whatever is on disk when it starts), else read now; a
    bad file raises and stops the start. The messages' gettext catalogs are read here too."""
    path = app.config.get("CATALOG_FILE") or os.environ.get(ENV_VAR)
    catalogs = packaged_catalogs()
    if path:
        catalogs = pinned_catalogs(path) or load_catalog_file(Path(path), catalogs)
        app.logger.info("catalog extended from %s", path)
    app.extensions[_KEY] = catalogs
    for lang in LANGUAGES:  # the message catalogs too (zh.po parsed once, ~45 ms), not on a first Chinese answer
        translations(lang)
        data_translations(lang)


def current_catalogs() -> Catalogs:
    return current_app.extensions[_KEY]


def caller_prices(amounts: dict | None, currency: str, field: str) -> dict[str, Price]:
    """Prices a request gives (card name -> amount), keyed by the card's catalog id; an unknown
    name is an error naming `field`."""
    cards = current_catalogs().cards
    return {cards.get(name, field).id: Price(amount, currency, GIVEN_BY_CALLER())
            for name, amount in (amounts or {}).items()}
