"""Chinese for the answer's words when an answer is asked for in Chinese (lang=zh).

A coded message (messages.py: every warning) is said from the gettext catalog locale/zh.po, its
parameters in Chinese too. Text that is not yet a coded message (assumption notes, reasons, the
plan's description) is translated by rule, as below, until it becomes one.

Each rule is a regular expression that matches one English sentence the domain writes (its
variable parts as named groups) and the Chinese template that says the same; a group named
`t_...` holds a nested sentence that is translated in turn. A message no rule matches whole is
split at "; " and its parts are translated one by one. The rules live beside this module, in
zh_rules_warnings.py (warnings and recommendation reasons) and zh_rules_notes.py (assumption
notes and fit reasons), with the shapes and plan rules both share in zh_terms.py;
tests/api/test_chinese.py fails on a message an answer says in English
under lang=zh.
"""

import re
from dataclasses import fields, replace
from functools import lru_cache

from .catalog import translations
from .messages import Message
from .zh_rules_notes import RULES as NOTE_RULES
from .zh_rules_warnings import RULES as WARNING_RULES

_COMPILED = tuple((re.compile(pattern, re.DOTALL), template)
                  for pattern, template in (*WARNING_RULES, *NOTE_RULES))


def say_zh(text: str) -> str:
    """`text` in Chinese: a coded message from the catalog (its plain parts by rule), other text by
    rule."""
    if isinstance(text, Message):
        return text.say(translations("zh"), to_zh)
    return to_zh(text)


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


def said_in(lang: str, result):
    """The result with its words in `lang` (zh translates; any other language leaves it as it
    is): warnings, assumption notes, a fit's or an option's reason, the alternatives' notes, and
    the same inside its options and its capacity answer."""
    if lang != "zh":
        return result
    have = {f.name for f in fields(result)}
    changes: dict = {}
    if "warnings" in have:
        changes["warnings"] = tuple(say_zh(w) for w in result.warnings)
    if "assumptions" in have:
        changes["assumptions"] = tuple(replace(a, note=say_zh(a.note)) for a in result.assumptions)
    if "reason" in have and isinstance(result.reason, str):
        changes["reason"] = say_zh(result.reason)
    if "fit" in have and result.fit is not None:
        changes["fit"] = replace(result.fit, reason=say_zh(result.fit.reason))
    if "alternatives" in have:
        changes["alternatives"] = tuple(replace(a, note=say_zh(a.note)) for a in result.alternatives)
    if "options" in have:
        changes["options"] = tuple(said_in(lang, o) for o in result.options)
    if "capacity" in have and result.capacity is not None:
        changes["capacity"] = said_in(lang, result.capacity)
    return replace(result, **changes)
