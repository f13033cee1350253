"""The answer language: the caller's `lang`, else Accept-Language, else English."""

from flask import g, request

from ..sizing import defaults


def preferred_lang() -> str | None:
    """zh or en from Accept-Language; None when the header names neither (default applies)."""
    if not request.accept_languages:
        return None
    return request.accept_languages.best_match(defaults.LANGS)


def problem_lang() -> str:
    """The language of an error answer, which the request's schema may not have read: the body's
    `lang` where the body was JSON and named one (kept by json_body), else the query's `lang`,
    else Accept-Language, else English."""
    for asked in (g.get("asked_lang"), request.args.get("lang")):
        if asked in defaults.LANGS:
            return asked
    return preferred_lang() or "en"
