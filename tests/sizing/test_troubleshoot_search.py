"""GET /troubleshoot's search: free text in Chinese or English finds the guide's row through the
row's own words and the guide's prose about it (BM25 over character unigrams and bigrams and
Latin words), and the answer carries the five-step diagnosis order, each step with its check."""

import math

import pytest

from service.sizing.troubleshoot import (
    BM25_K1,
    Term,
    bm25,
    build_index,
    diagnose,
    guide,
    idf,
    matched_phrases,
    normalise,
    stem,
    term_score,
    terms,
)

# (query, the row that must come first)
QUERIES = [
    # the guide's own words (section 6.1's heading and first paragraph, section 2.3's fourth wall)
    ("显存够用但跑不起来", "fragmentation"),
    ("nvidia-smi 显示还有 20GB 空闲但程序报显存不足", "fragmentation"),
    ("跑着跑着速度掉了", "throttling"),
    # English paraphrases
    ("runs out of memory though nvidia-smi shows free memory", "fragmentation"),
    ("gets slower after a few hours", "throttling"),
    ("training on two cards is half as fast as one", "interconnect"),
    # the table's words and users' words, both languages
    ("报显存不足但还有余量", "fragmentation"),
    ("CUDA out of memory", "fragmentation"),
    ("跑几小时后变慢", "throttling"),
    ("显存温度很高", "throttling"),
    ("slows down", "throttling"),
    ("多卡训练速度只有单卡一半", "interconnect"),
    ("机器随机重启", "psu"),
    ("the machine reboots at random and nothing is in the logs", "psu"),
    ("机器经常自己关机", "psu"),
    ("训练 loss 无故发散", "silent_errors"),
    ("loss is nan", "silent_errors"),
    ("推理速度只有理论值三成", "software_stack"),
    ("vllm only gets 30% of the theoretical rate", "software_stack"),
    ("多机训练扩展效率骤降", "network"),
    ("scaling collapses when we add more nodes", "network"),
    ("卡识别不到", "firmware"),
    ("找不到第二张卡", "firmware"),
    ("a card is not detected", "firmware"),
]

NONSENSE = ["purple smoke", "xyzzy plugh frobnicate", "今天天气很好", "the the the", "卡", "help"]


@pytest.mark.parametrize(("query", "row"), QUERIES)
def test_a_query_finds_its_row_first(query, row):
    matches = diagnose(query).matches
    assert matches and matches[0].row.id == row, [(m.row.id, m.score) for m in matches]


@pytest.mark.parametrize(("query", "row"), QUERIES)
def test_the_language_of_the_answer_does_not_change_the_match(query, row):
    assert diagnose(query, lang="zh").matches[0].row.id == row


@pytest.mark.parametrize("query", NONSENSE)
def test_nonsense_matches_no_row_and_still_gives_the_order(query):
    answer = diagnose(query)
    assert answer.matches == () and len(answer.steps) == 5


def test_the_match_names_the_stretches_of_the_query_it_found():
    [best, *_] = diagnose("nvidia-smi 显示还有 20GB 空闲但程序报显存不足").matches
    assert "报显存不足" in best.matched and best.score > 0
    assert diagnose("runs out of memory").matches[0].matched == ("runs out of memory",)


def test_rows_far_below_the_best_are_left_out_and_the_limit_holds():
    for query, _ in QUERIES:
        matches = diagnose(query, limit=8).matches
        assert all(m.score >= 0.25 * matches[0].score for m in matches)
        assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
        assert len(diagnose(query, limit=1).matches) == 1


def test_throttling_first_brings_the_power_cap_advice():
    assert diagnose("跑着跑着速度掉了", lang="zh").advice[0].startswith("消费级卡长时间运行")
    assert diagnose("显存够用但跑不起来").advice == ()


# --- the diagnosis order ----------------------------------------------------------------------


def test_the_diagnosis_order_is_the_guides_with_a_check_per_step():
    topics = ("temperature", "power", "interconnect", "driver and firmware versions",
              "power and grounding of the rack")
    steps = diagnose("anything").steps
    assert [s.split(":")[0] for s in steps] == list(topics)
    assert all("Check: " in s for s in steps)
    assert "85 C" in steps[0] and "95 C" in steps[0]
    assert "peer-to-peer bandwidth test" in steps[2] and "half or quarter" in steps[2]
    assert "driver_version,vbios_version" in steps[3] and "ground resistance" in steps[4]


def test_the_diagnosis_order_in_chinese_has_the_checks_in_chinese():
    steps = diagnose("随便", lang="zh").steps
    assert [s.split("：")[0] for s in steps] == ["温度", "功耗", "互联", "驱动和固件版本", "机柜供电和接地"]
    assert all("查法：" in s for s in steps)
    assert "点对点带宽" in steps[2] and "接地电阻" in steps[4]


def test_every_step_has_both_languages():
    for step in guide().steps:
        assert all((step.topic, step.look, step.check, step.topic_zh, step.look_zh, step.check_zh))


# --- the data ---------------------------------------------------------------------------------


def test_every_row_carries_the_guides_prose_with_where_it_stands():
    for row in guide().rows:
        assert row.passages, row.id
        for passage in row.passages:
            assert passage.where.startswith("guide section ") and passage.zh and passage.en


# --- the terms --------------------------------------------------------------------------------


def test_chinese_becomes_characters_and_pairs_latin_becomes_words():
    found = [t.text for t in terms(normalise("显存不足 CUDA OOM"))]
    assert found == ["显", "存", "不", "足", "显存", "存不", "不足", "cuda", "oom"]


def test_common_characters_and_words_are_left_out_but_not_their_pairs():
    found = {t.text for t in terms(normalise("速度掉了 the card is slow"))}
    assert "了" not in found and "掉了" in found
    assert {"the", "is"}.isdisjoint(found) and {"card", "slow"} <= found


def test_full_width_text_is_folded():
    assert normalise("ＯＯＭ　２０ＧＢ") == "oom 20gb"


@pytest.mark.parametrize(("word", "stemmed"), [
    ("slower", "slow"), ("slows", "slow"), ("slowing", "slow"), ("hours", "hour"), ("cards", "card"),
    ("loss", "loss"), ("diverges", "diverg"), ("diverged", "diverg"), ("diverge", "diverg"),
    ("bus", "bus"), ("oom", "oom"),
])
def test_the_stemmer_joins_forms_of_a_word(word, stemmed):
    assert stem(word) == stemmed


def test_terms_keep_their_place_in_the_text():
    text = normalise("报显存不足")
    assert all(text[t.start:t.end] == t.text for t in terms(text))


def test_phrases_merge_overlapping_pairs_and_words_across_stop_words():
    text = normalise("out of memory though 显存不足")
    hits = [t for t in terms(text) if t.text in {"out", "memory", "显存", "存不", "不足", "显"}]
    assert matched_phrases(text, hits) == ("out of memory", "显存不足")
    assert matched_phrases(text, [Term("显", 21, 22, char=True)]) == ()


# --- BM25 -------------------------------------------------------------------------------------


def test_idf_is_positive_and_falls_as_more_rows_hold_the_term():
    values = [idf(n, 8) for n in range(1, 9)]
    assert all(v > 0 for v in values) and values == sorted(values, reverse=True)
    assert idf(1, 8) == pytest.approx(math.log(1 + 7.5 / 1.5))


def test_term_score_saturates_and_discounts_long_rows():
    assert term_score(1, 1.0, 10, 10) == pytest.approx(1.0)
    assert term_score(100, 1.0, 10, 10) < BM25_K1 + 1
    assert term_score(2, 1.0, 10, 10) > term_score(1, 1.0, 10, 10)
    assert term_score(1, 1.0, 40, 10) < term_score(1, 1.0, 10, 10)


def test_bm25_prefers_the_row_with_the_rarer_term():
    index = build_index(["显存 碎片", "显存 温度", "显存 互联"])
    query = terms(normalise("显存碎片"))
    scores = [bm25(query, index, row) for row in range(3)]
    assert scores[0] > scores[1] == scores[2] > 0
    assert bm25(terms(normalise("nothing here")), index, 0) == 0
