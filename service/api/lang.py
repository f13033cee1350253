"""The answer language: the caller's `lang`, else Accept-Language, else English."""

from flask import request

from ..sizing import defaults


def preferred_lang() -> str | None:
    """zh or en from Accept-Language; None when the header names neither (default applies)."""
    if not request.accept_languages:
        return None
    return request.accept_languages.best_match(defaults.LANGS)
