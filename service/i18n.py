"""The messages' catalogs: `python -m service.i18n --check` (run by make check) fails when a
coded message (service/sizing/messages.py) lacks its translation in a language's catalog, when a
translation's fields differ from the English's, or when a catalog keeps an entry no message uses;
the same for the catalog data messages quote (a family's why, a card's link name: entries under
the context "catalog"). `--update` adds the entries of new messages and data to each catalog
(empty, to translate) and drops the unused ones, keeping every translation already made (a
reworded message keeps its code's translation marked fuzzy, which the check counts as missing
until a translator reviews it and removes the mark)."""

import argparse
import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from .api import problem_messages  # noqa: F401  (registers the error answers' messages)
from .sizing import (
    DATA_CONTEXT,
    LANGUAGES,
    TEMPLATES,
    check_data_translations,
    check_translations,
    data_texts,
    data_translations,
    translations,
)

LOCALE = Path(__file__).parent / "sizing" / "locale"


def check() -> list[str]:
    """Every catalog's problems, each prefixed with its language."""
    return [f"{lang}: {problem}" for lang in LANGUAGES if lang != "en"
            for problem in check_translations(translations(lang)) + check_data_translations(lang)]


def update(lang: str) -> Path:
    """The catalog of `lang` with an entry for every message (its meaning as a comment), the
    translations already made kept, the unused entries dropped."""
    path = LOCALE / f"{lang}.po"
    with path.open("rb") as po:
        old = read_po(po, locale=lang)
    made = Catalog(locale=lang, project=old.project, header_comment=old.header_comment, fuzzy=False)
    by_code = {comment.split(":")[0]: entry for entry in old for comment in entry.auto_comments}
    for template in TEMPLATES.values():
        said = (old.get(template.one) if template.one else None) or old.get(template.english)
        reworded = said is None and template.code in by_code
        if reworded:  # the English changed: its code's translation, marked fuzzy for review
            said = by_code[template.code]
        string = said.string if said else ""
        flags = ["python-brace-format"] + (["fuzzy"] if reworded or (said is not None and said.fuzzy) else [])
        comments = [f"{template.code}: {template.meaning}"]
        if template.one is None:  # one sentence (the first form of what was a plural)
            made.add(template.english, string if isinstance(string, str) else string[0], auto_comments=comments,
                     flags=flags)
        else:
            forms = (string,) * made.num_plurals if isinstance(string, str) else tuple(string)
            made.add((template.one, template.english), forms, auto_comments=comments, flags=flags)
    for text, where in data_texts().items():
        said = old.get(text, context=DATA_CONTEXT)
        made.add(text, said.string if said else "", auto_comments=[where], context=DATA_CONTEXT)
    written = io.BytesIO()
    write_po(written, made, width=100, sort_output=False)
    lines = [line for line in written.getvalue().decode("utf-8").splitlines(keepends=True)
             if not any(blank in line for blank in _BLANK_HEADERS)]
    path.write_text("".join(lines).replace("PROJECT VERSION", PROJECT), encoding="utf-8")
    return path


PROJECT = "accelerator-sizing-service"
# Babel's header fields the project does not fill (who translated, when, their team)
_BLANK_HEADERS = ("EMAIL@ADDRESS", "YEAR-MO-DA", "FULL NAME", "LL@li.org")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail on a missing or unused translation")
    parser.add_argument("--update", action="store_true", help="add new messages to the catalogs")
    args = parser.parse_args(argv)
    if args.update:
        for lang in LANGUAGES:
            if lang != "en":
                print(f"updated {update(lang)}")
        translations.cache_clear()
        data_translations.cache_clear()
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(TEMPLATES)} messages and {len(data_texts())} catalog texts, each translated in "
              f"{', '.join(LANGUAGES[1:])}")
    return 1 if problems and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
