"""Symptom text (Chinese or English) matched against the guide's troubleshooting table.

Each row is searched through everything it carries (data/troubleshoot.toml): its own words in
both languages, a few users' keywords, and the guide's prose about it, in Chinese and English.
The search needs no word segmenter: Chinese text becomes single characters and adjacent pairs
of characters (bigrams), Latin text lower-cased words with their plural and -ing/-ed/-er
endings cut, and rows are ranked by BM25 over those terms.
"""

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from .catalog import read_data

BM25_K1 = 1.2  # how soon repeats of a term in a row stop adding to its score
BM25_B = 0.75  # how much a long row is discounted against the average length
CHAR_WEIGHT = 0.3  # a single Chinese character says less than a pair of them or a word
MIN_SCORE = 1.0  # below this a row shares only terms that are everywhere in the table
RELATIVE_FLOOR = 0.25  # rows under this fraction of the best row's score are noise
SYMPTOM_REPEATS = 2  # the table's symptom weighs as much as two passages of prose

LONG_RUN_ROWS = ("throttling",)
LONG_RUN_WORDS = ("hours", "24x7", "24/7", "overnight", "days", "long run", "小时", "长时间", "连续", "通宵")

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[a-z0-9]+)")
_SUFFIXES = ("ing", "ed", "er", "ly")
STOP_WORDS = frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "it", "its", "of", "to",
    "in", "on", "at", "for", "and", "or", "but", "with", "as", "by", "from", "my", "our", "your",
    "i", "we", "you", "me", "this", "that", "these", "those", "there", "then", "than", "so", "do",
    "does", "did", "has", "have", "had", "what", "why", "how", "when", "can", "could", "will",
    "would", "just", "very", "some", "any", "if", "help", "please", "problem", "issue",
))
STOP_CHARS = frozenset("的了是在就也都和与或而又很这那个我你他它们吗呢吧啊把被让给但还着")
STOP_PAIRS = frozenset((
    "问题", "什么", "怎么", "为什", "一个", "这个", "那个", "我们",
    "你们", "他们", "可以", "因为", "所以", "但是", "如果", "就是",
))


@dataclass(frozen=True)
class Passage:
    """The guide's own sentences about a row, and where they stand."""

    where: str
    zh: str
    en: str


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
    passages: tuple[Passage, ...] = ()


@dataclass(frozen=True)
class Step:
    """One step of the diagnosis order: what to look at and how to check it."""

    topic: str
    look: str
    check: str
    topic_zh: str
    look_zh: str
    check_zh: str

    def text(self, lang: str) -> str:
        if lang == "zh":
            return f"{self.topic_zh}：{self.look_zh}。查法：{self.check_zh}"
        return f"{self.topic}: {self.look}. Check: {self.check}"


@dataclass(frozen=True)
class Match:
    row: Row
    score: float
    matched: tuple[str, ...]


@dataclass(frozen=True)
class Guide:
    rows: tuple[Row, ...]
    steps: tuple[Step, ...]
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


# --- terms ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """A search term and where it stands in the (normalised) text it came from."""

    text: str
    start: int
    end: int
    char: bool = False  # a single Chinese character

    @property
    def weight(self) -> float:
        return CHAR_WEIGHT if self.char else 1.0


def normalise(text: str) -> str:
    """Full-width forms folded to ASCII (NFKC), lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def stem(word: str) -> str:
    """A light English stemmer: a plural s, then one of -ing/-ed/-er/-ly, then a final e,
    each only where three letters remain ("slower" and "slows" both give "slow")."""
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def cjk_terms(run: str, offset: int) -> Iterator[Term]:
    """A run of Chinese characters as its characters (less weight, common ones left out) and
    its adjacent pairs."""
    for i, char in enumerate(run):
        if char not in STOP_CHARS:
            yield Term(char, offset + i, offset + i + 1, char=True)
    for i in range(len(run) - 1):
        if run[i: i + 2] not in STOP_PAIRS:
            yield Term(run[i: i + 2], offset + i, offset + i + 2)


def terms(text: str) -> tuple[Term, ...]:
    """The search terms of normalised text."""
    found: list[Term] = []
    for token in _TOKEN.finditer(text):
        if token.group("cjk"):
            found.extend(cjk_terms(token.group(), token.start()))
        elif token.group() not in STOP_WORDS:
            found.append(Term(stem(token.group()), token.start(), token.end()))
    return tuple(found)


# --- BM25 ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Index:
    """Term counts per row, and what BM25 needs about the whole table."""

    counts: tuple[Counter[str], ...]
    lengths: tuple[int, ...]
    average_length: float
    rows_with: Counter[str]


def build_index(texts: Sequence[str]) -> Index:
    counts = tuple(Counter(term.text for term in terms(normalise(text))) for text in texts)
    lengths = tuple(sum(count.values()) for count in counts)
    rows_with: Counter[str] = Counter()
    for count in counts:
        rows_with.update(count.keys())
    return Index(counts, lengths, sum(lengths) / max(len(lengths), 1), rows_with)


def idf(rows_with_term: int, rows: int) -> float:
    """Inverse document frequency, the form that never goes negative."""
    return math.log(1 + (rows - rows_with_term + 0.5) / (rows_with_term + 0.5))


def term_score(count: int, idf_value: float, length: int, average_length: float) -> float:
    """One term's BM25 contribution to one row."""
    saturation = count * (BM25_K1 + 1)
    damping = count + BM25_K1 * (1 - BM25_B + BM25_B * length / average_length)
    return idf_value * saturation / damping


def bm25(query: Sequence[Term], index: Index, row: int) -> float:
    """A row's score: the sum over the query's distinct terms found in it."""
    weights: dict[str, float] = {}
    for term in query:
        weights[term.text] = max(weights.get(term.text, 0.0), term.weight)
    count, rows = index.counts[row], len(index.counts)
    return sum(weight * term_score(count[text], idf(index.rows_with[text], rows), index.lengths[row],
                                   index.average_length)
               for text, weight in weights.items() if count[text])


def _joins(text: str, end: int, start: int) -> bool:
    """Whether two stretches of the query read as one phrase: they overlap (pairs of
    characters), or only spaces, punctuation and stop words stand between them."""
    return start < end or (start > end and not terms(text[end:start]))


def matched_phrases(text: str, hits: Sequence[Term]) -> tuple[str, ...]:
    """The stretches of the query that a row contains, single characters left out: "out of
    memory", "显存不足"."""
    spans: list[list[int]] = []
    for term in sorted((t for t in hits if not t.char), key=lambda t: t.start):
        if spans and _joins(text, spans[-1][1], term.start):
            spans[-1][1] = max(spans[-1][1], term.end)
        else:
            spans.append([term.start, term.end])
    return tuple(dict.fromkeys(text[start:end] for start, end in spans))


# --- the table -----------------------------------------------------------------------------


def _row(raw: dict) -> Row:
    passages = tuple(Passage(**p) for p in raw.get("passage", ()))
    fields = {k: v for k, v in raw.items() if k != "passage"}
    return Row(**{**fields, "keywords": tuple(fields["keywords"]), "passages": passages})


@cache
def guide() -> Guide:
    """The packaged table, read once."""
    data = read_data("troubleshoot.toml")
    d = data["diagnosis"]
    return Guide(tuple(_row(raw) for raw in data["row"]), tuple(Step(**s) for s in d["step"]),
                 tuple(d["lessons"]), tuple(d["lessons_zh"]), d["power_cap"], d["power_cap_zh"],
                 d["source"])


def row_text(row: Row) -> str:
    """Everything a row is searched by, both languages; the symptom, the table's own words for
    what a user sees, counts SYMPTOM_REPEATS times."""
    own = (*(row.symptom, row.symptom_zh) * SYMPTOM_REPEATS, row.cause, row.check, row.fix,
           row.cause_zh, row.check_zh, row.fix_zh)
    prose = (text for p in row.passages for text in (p.zh, p.en))
    return "\n".join((*own, *row.keywords, *prose))


@cache
def index() -> Index:
    return build_index([row_text(row) for row in guide().rows])


def rank(query: str) -> tuple[Match, ...]:
    """Every row that shares a pair of characters or a word with the query and scores at least
    MIN_SCORE, best first."""
    text = normalise(query)
    query_terms, table = terms(text), index()
    matches = []
    for i, row in enumerate(guide().rows):
        hits = [t for t in query_terms if table.counts[i][t.text]]
        phrases = matched_phrases(text, hits)
        row_score = bm25(query_terms, table, i)
        if phrases and row_score >= MIN_SCORE:
            matches.append(Match(row, round(row_score, 3), phrases))
    return tuple(sorted(matches, key=lambda m: -m.score))


def diagnose(query: str, lang: str = "en", line: str | None = None, limit: int = 3) -> Diagnosis:
    """The table rows the text points at, best first (rows far below the best left out), with
    the five-step diagnosis order, each step with its check; power-cap advice when a consumer
    card runs for long or the best match is throttling."""
    table = guide()
    ranked = rank(query)
    floor = RELATIVE_FLOOR * ranked[0].score if ranked else 0.0
    found = tuple(m for m in ranked if m.score >= floor)[:limit]
    long_run = any(word in query.lower() for word in LONG_RUN_WORDS)
    advice: tuple[str, ...] = ()
    if line == "consumer" or (found and found[0].row.id in LONG_RUN_ROWS) or (long_run and line != "datacenter"):
        advice = (table.power_cap_zh if lang == "zh" else table.power_cap,)
    zh = lang == "zh"
    return Diagnosis(query, found, tuple(step.text(lang) for step in table.steps),
                     table.lessons_zh if zh else table.lessons, advice, table.source)
