"""Chinese for the answer's words when an answer is asked for in Chinese (lang=zh).

Every sentence the domain says (warnings, assumption notes, reasons, plans, summaries) is a coded
message (messages.py), said from the gettext catalog locale/zh.po with its parameters in Chinese
too. A parameter that is plain catalog text, not a sentence of the service's (a link's name, a
family's why, where a model's positions come from), is translated by the few rules of zh_rules.py: each
a regular expression over that text (its variable parts as named groups) and the Chinese that
says the same; a group named `t_...` is translated in turn, and text no rule matches whole is
split at "; " and its parts translated one by one. tests/api/test_chinese.py fails on a sentence
an answer says in English under lang=zh.
"""

import re
from dataclasses import fields, is_dataclass, replace
from functools import lru_cache

from .catalog import translations
from .messages import Message
from .zh_rules import RULES

_COMPILED = tuple((re.compile(pattern, re.DOTALL), template)
                  for pattern, template in RULES)


@lru_cache(maxsize=4096)
def to_zh(text: str) -> str:
    """`text` in Chinese where a rule (or rules for each of its "; " parts) matches; else as is."""
    whole = _by_rule(text)
    if whole is not None:
        return whole
    parts = text.split("; ")
    if len(parts) > 1:
        return "；".join(to_zh(part) for part in parts)
    return text


def _by_rule(text: str) -> str | None:
    for pattern, template in _COMPILED:
        match = pattern.fullmatch(text)
        if match:
            groups = {k: to_zh(v) if k.startswith("t_") and v else (v or "")
                      for k, v in match.groupdict().items()}
            return template.format(**groups)
    return None


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
