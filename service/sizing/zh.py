"""Chinese for the answer's words when an answer is asked for in Chinese (lang=zh).

Every sentence the domain says (warnings, assumption notes, reasons, plans, summaries) is a coded
message (messages.py), said from the gettext catalog locale/zh.po with its parameters in Chinese
too. A parameter that is catalog data, not a sentence of the service's (a family's why, a card's
link name), is said from the same catalog's entries under the context "catalog"; ids, numbers and
cited sources stay as they are. tests/api/test_chinese.py fails on a sentence an answer says in
English under lang=zh.
"""

from dataclasses import fields, is_dataclass, replace

from .catalog import data_translations, translations
from .messages import Message


def to_zh(text: str) -> str:
    """Catalog data a message quotes (a family's why, a card's link name) in Chinese, from the
    catalog's entries under the context "catalog"; any other text (an id, a number) as it is."""
    return data_translations("zh").get(text, text)


def _coded_in_zh(value):
    """`value` with every coded message in it, at any depth of dataclasses and tuples, said in
    Chinese (the same object where nothing in it is a message)."""
    if isinstance(value, Message):
        return value.said(translations("zh"), to_zh)
    if isinstance(value, tuple):
        said = tuple(_coded_in_zh(v) for v in value)
        return said if any(a is not b for a, b in zip(said, value, strict=True)) else value
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _coded_in_zh(getattr(value, f.name)) for f in fields(value) if f.init}
        changed = {k: v for k, v in changes.items() if v is not getattr(value, k)}
        return replace(value, **changed) if changed else value
    return value


# Chinese sentences end in 。 and follow one another without a space; English ones take a space.
_SENTENCE_GAP = {"zh": ""}


def sentences(lang: str, said) -> str:
    """Coded messages said in `lang` as one paragraph (a summary)."""
    return _SENTENCE_GAP.get(lang, " ").join(m.say(translations("zh"), to_zh) if lang == "zh" else m for m in said)


def said_in(lang: str, result):
    """The result with its words in `lang` (zh translates; any other language leaves it as it
    is): every coded message wherever it stands (warnings, notes, reasons, host notes, ranges)."""
    if lang != "zh":
        return result
    return _coded_in_zh(result)
