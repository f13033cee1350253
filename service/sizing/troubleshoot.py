"""Symptom text (Chinese or English) matched against the guide's troubleshooting table."""

from dataclasses import dataclass
from functools import cache

from .catalog import read_data

MAX_PHRASE_WEIGHT = 12
LONG_RUN_ROWS = ("throttling",)
LONG_RUN_WORDS = ("hours", "24x7", "24/7", "overnight", "days", "long run", "小时", "长时间", "连续", "通宵")


@dataclass(frozen=True)
class Row:
    id: str
    symptom: str
    cause: str
    check: str
    fix: str
    symptom_zh: str
    cause_zh: str
    check_zh: str
    fix_zh: str
    keywords: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Match:
    row: Row
    score: float
    matched: tuple[str, ...]


@dataclass(frozen=True)
class Guide:
    rows: tuple[Row, ...]
    steps: tuple[str, ...]
    steps_zh: tuple[str, ...]
    lessons: tuple[str, ...]
    lessons_zh: tuple[str, ...]
    power_cap: str
    power_cap_zh: str
    source: str


@dataclass(frozen=True)
class Diagnosis:
    query: str
    matches: tuple[Match, ...]
    steps: tuple[str, ...]
    lessons: tuple[str, ...]
    advice: tuple[str, ...]
    source: str


@cache
def guide() -> Guide:
    """The packaged table, read once."""
    data = read_data("troubleshoot.toml")
    rows = tuple(Row(**{**raw, "keywords": tuple(k.lower() for k in raw["keywords"])})
                 for raw in data["row"])
    d = data["diagnosis"]
    return Guide(rows, tuple(d["steps"]), tuple(d["steps_zh"]), tuple(d["lessons"]),
                 tuple(d["lessons_zh"]), d["power_cap"], d["power_cap_zh"], d["source"])


def score(query: str, row: Row) -> Match:
    """Sum of the matched phrases' weights (their length, capped), phrases found by substring
    so that Chinese needs no word splitting."""
    text = query.lower()
    matched = tuple(k for k in row.keywords if k in text)
    return Match(row, float(sum(min(len(k), MAX_PHRASE_WEIGHT) for k in matched)), matched)


def diagnose(query: str, lang: str = "en", line: str | None = None, limit: int = 3) -> Diagnosis:
    """The table rows the text points at, best first, with the five-step diagnosis order;
    power-cap advice when a consumer card runs for long or the match is throttling."""
    table = guide()
    matches = sorted((score(query, row) for row in table.rows), key=lambda m: -m.score)
    found = tuple(m for m in matches if m.score > 0)[:limit]
    long_run = any(word in query.lower() for word in LONG_RUN_WORDS)
    advice: tuple[str, ...] = ()
    if line == "consumer" or any(m.row.id in LONG_RUN_ROWS for m in found) or (long_run and line != "datacenter"):
        advice = (table.power_cap_zh if lang == "zh" else table.power_cap,)
    zh = lang == "zh"
    return Diagnosis(query, found, table.steps_zh if zh else table.steps,
                     table.lessons_zh if zh else table.lessons, advice, table.source)
