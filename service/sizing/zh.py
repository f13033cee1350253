"""Chinese for the answer's words: the warnings, assumption notes and reasons the domain says in
English, translated by rule when an answer is asked for in Chinese (lang=zh).

Each rule is a regular expression that matches one English sentence the domain writes (its
variable parts as named groups) and the Chinese template that says the same; a group named
`t_...` holds a nested sentence that is translated in turn. A message no rule matches whole is
split at "; " and its parts are translated one by one. The rules live beside this module, in
zh_rules_warnings.py (warnings and recommendation reasons) and zh_rules_notes.py (assumption
notes and fit reasons); tests/api/test_chinese.py fails on a message an answer says in English
under lang=zh.
"""

import re
from dataclasses import replace
from functools import lru_cache

from .zh_rules_notes import RULES as NOTE_RULES
from .zh_rules_warnings import RULES as WARNING_RULES

_COMPILED = tuple((re.compile(pattern, re.DOTALL), template)
                  for pattern, template in (*WARNING_RULES, *NOTE_RULES))


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
    """The result with its warnings, assumption notes and fit reason in `lang` (zh translates;
    any other language leaves it as it is)."""
    if lang != "zh":
        return result
    changes: dict = {"warnings": tuple(to_zh(w) for w in result.warnings),
                     "assumptions": tuple(replace(a, note=to_zh(a.note)) for a in result.assumptions)}
    fit = getattr(result, "fit", None)
    if fit is not None and getattr(fit, "reason", None):
        changes["fit"] = replace(fit, reason=to_zh(fit.reason))
    return replace(result, **changes)
