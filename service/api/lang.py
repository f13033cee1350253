"""The answer language: the caller's `lang`, else Accept-Language, else English."""

from flask import g, request

from ..sizing import defaults


def preferred_lang() -> str | None:
    """zh or en from Accept-Language; None when the header names neither (default applies)."""
    if not request.accept_languages:
        return None
    return request.accept_languages.best_match(defaults.LANGS)


def asked_lang(given: str | None) -> str | None:
    """The language a request asks for: its `lang` (body, or query for a GET), else
    Accept-Language; None when it names neither (the default applies)."""
    return given or preferred_lang()


def problem_lang() -> str:
    """The language of an error answer, which the request's schema may not have read: the body's
    `lang` (kept by json_body), else the query's for any method but POST (a GET, a route that does
    not exist), else Accept-Language, else English. A POST says its lang in its body, as its
    answer does: a `?lang=` on a POST, even one to a route that does not exist or does not take
    POST, moves neither its answer nor its errors."""
    query = request.args.get("lang") if request.method != "POST" else None
    given = next((lang for lang in (g.get("asked_lang"), query) if lang in defaults.LANGS), None)
    return asked_lang(given) or "en"


def answer_lang(args: dict) -> str:
    """The language an answer is said in: its request's `lang`, else Accept-Language, else en."""
    return asked_lang(args.get("lang")) or "en"
