"""Coded messages: each warning is a template (a stable code, its English, its meaning) said with
its parameters, and the gettext catalog says it in Chinese; a message without its translation,
a translation with other fields, or an entry nothing uses fails the check make check runs."""

import copy
import pickle

import pytest

from service import i18n
from service.sizing import (
    HardwareInput,
    WorkloadInput,
    check_data_translations,
    data_texts,
    data_translations,
    messages,
    questions,
    said_in,
    translations,
)
from service.sizing.catalog import catalog, get_card, get_model

ZH = translations("zh")


def test_every_message_has_its_chinese_and_nothing_else_is_kept():
    assert messages.check(ZH) == []
    assert set(ZH) == {t.english for t in messages.TEMPLATES.values()}


def test_the_check_fails_when_one_message_loses_its_chinese(monkeypatch, capsys):
    """What make check does (python -m service.i18n --check) with one entry of zh.po removed."""
    lost = messages.CLUSTER_COMPLEXITY.english
    monkeypatch.setattr(i18n, "translations", lambda lang: {k: v for k, v in ZH.items() if k != lost})
    assert i18n.main(["--check"]) == 1
    assert "zh: cluster_complexity: no translation" in capsys.readouterr().err


def test_the_catalog_data_a_message_quotes_has_its_chinese_too():
    """A family's why and a card's link name are data, not sentences of the service's: the same
    catalog translates them, under the context "catalog", and the check covers them alike."""
    assert check_data_translations("zh") == []
    assert set(data_translations("zh")) == set(data_texts())
    assert data_translations("zh")["NVLink bridge (pairs of cards)"] == "NVLink 桥（两卡一对）"


def test_the_check_fails_when_one_catalog_text_loses_its_chinese(monkeypatch, capsys):
    said = dict(data_translations("zh"))
    del said["Infinity Fabric (7 links)"]
    monkeypatch.setattr("service.sizing.catalog.data_translations", lambda lang: said)
    assert i18n.main(["--check"]) == 1
    assert "zh: cards.toml card interconnect_name 'Infinity Fabric (7 links)': no translation" in capsys.readouterr().err


def test_a_family_name_is_said_with_its_why_and_its_other_cards_in_chinese():
    """"A100" means the SXM4 80GB module; the others it may mean are a list of ids (joined with 、
    in Chinese), and the why comes from the catalog's data entries."""
    warning = catalog().get("A100").lookup_warning
    assert warning.params["others"] == ("a100-80gb-pcie", "a100-40gb-sxm", "a100-40gb-pcie")
    assert "it may also mean a100-80gb-pcie, a100-40gb-sxm, a100-40gb-pcie" in warning
    zh = said_in("zh", warning)
    assert "a100-80gb-pcie、a100-40gb-sxm、a100-40gb-pcie" in zh
    assert "HGX 服务器上的 SXM4 80GB 模组，部署最多的版本" in zh


@pytest.mark.parametrize(("broken", "problem"), [
    ({messages.CLUSTER_COMPLEXITY.english: "超过 {count} 张卡"}, "cluster_complexity: the translation's fields"),
    ({"a sentence nothing says": "没人说的话"}, "unused entry: 'a sentence nothing says'"),
])
def test_the_check_names_a_translation_with_other_fields_and_an_unused_entry(broken, problem):
    assert any(p.startswith(problem) for p in messages.check({**ZH, **broken}))


def test_a_message_is_its_english_and_keeps_its_code_and_parameters():
    said = messages.DEADLINE_MISSED(cards=8, time_s=3.5 * 86_400, needed=16, deadline_days=2)
    assert said == "8 cards take 3.5 days: 16 meet the 2-day deadline"
    assert said.code == "deadline_missed" and said.params["time_s"] == 3.5 * 86_400  # SI: seconds
    assert said.say(ZH) == "8 张卡需要 3.5 天：16 张才能赶上 2 天的期限"
    assert pickle.loads(pickle.dumps(said)).code == copy.deepcopy(said).code == "deadline_missed"
    # a template is one object per code, compared as itself, also once pickled or copied
    assert pickle.loads(pickle.dumps(said)).template is copy.deepcopy(said).template is said.template
    assert messages.kept(messages.PART_KV_CACHE) is messages.kept(messages.PART_KV_CACHE)


def test_nested_messages_and_lists_are_said_in_the_language_asked():
    fixes = (messages.FIX_MICRO_BATCH(micro_batch=1, cards=8, card="rtx-4090"), messages.FIX_NONE())
    said = messages.TRAINING_BATCH_FITS_NOWHERE(micro_batch=4, context_tokens=8192, card="rtx-4090", found=fixes)
    assert "so no time is quoted: micro-batch 1 fits on 8 x rtx-4090; no micro-batch fits" in said
    assert "不给出训练时间：微批 1 可放进 8 张 rtx-4090；即使开启完全重计算" in said.say(ZH)


@pytest.mark.parametrize(("said", "english"), [
    (messages.RACK_POWER_ONE(machine_w=14_300.0, ups_w=17_160.0), "draws up to 14.3 kW"),  # watts shown in kW
    (messages.GRADIENT_SYNC_BINDS(sync_s=0.25, compute_s=0.125), "gradient sync (250 ms)"),  # seconds in ms
    (messages.PCIE_TRAINING(loss=0.3), "loses 30 %+ of its efficiency"),  # a fraction in percent
])
def test_parameters_stay_in_si_and_the_template_shows_them_in_the_reader_s_unit(said, english):
    assert english in said


@pytest.mark.parametrize(("cards", "english", "chinese"), [
    (1, "1 card takes 3.5 days: 16 meet the 2-day deadline", "1 张卡需要 3.5 天：16 张才能赶上 2 天的期限"),
    (2, "2 cards take 3.5 days: 16 meet the 2-day deadline", "2 张卡需要 3.5 天：16 张才能赶上 2 天的期限"),
])
def test_a_count_is_said_in_the_plural_forms_of_each_language(cards, english, chinese):
    """gettext's plurals: English has two forms (1 card, 2 cards), Chinese one; the catalog's
    entry holds a sentence per form of its language and its Plural-Forms rule picks one."""
    said = messages.DEADLINE_MISSED(cards=cards, time_s=3.5 * 86_400, needed=16, deadline_days=2)
    assert said == english and said.say(ZH) == chinese and said.code == "deadline_missed"


def test_a_language_with_more_plural_forms_gets_the_form_its_rule_picks():
    rule = "(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)"  # Russian's
    forms = messages.Forms(("{cards} карта", "{cards} карты", "{cards} карт"), rule)
    assert [forms.for_count(n) for n in (1, 3, 5, 21)] == ["{cards} карта", "{cards} карты", "{cards} карт",
                                                            "{cards} карта"]
    said = messages.DEADLINE_MISSED(cards=3, time_s=86_400.0, needed=4, deadline_days=2)
    assert said.say({messages.DEADLINE_MISSED.english: forms}) == "3 карты"


def test_a_plural_message_needs_a_plural_entry_and_each_form_its_fields():
    english = messages.DEADLINE_MISSED.english
    assert "deadline_missed: the catalog's entry is singular" in " ".join(
        messages.check({**ZH, english: "{cards} 张卡需要 {time_s:days|.1f} 天：{needed} 张才能赶上 {deadline_days:g} 天的期限"}))
    assert "deadline_missed: no translation" in " ".join(messages.check({**ZH, english: messages.Forms(("",), "0")}))
    with pytest.raises(ValueError, match="other fields"):
        messages.template("plural_with_other_fields", "{cards} cards", "", one="{count} card", count="cards")


@pytest.mark.parametrize(("count", "n"), [(1, 1), (1.0, 1), (0, 0), (21, 21), (1.5, 2), (-1, 2), (True, 2), ("1", 2)])
def test_english_and_every_catalog_take_a_count_the_same_way(count, n):
    """English's one-or-other and a catalog's Plural-Forms rule are given the same n."""
    assert messages.plural_n(count) == n
    forms = messages.Forms(("one", "other"), "(n != 1)")
    template = messages.DEADLINE_MISSED
    assert (template.text_for({"cards": count}) == template.one) == (forms.for_count(count) == "one") == (n == 1)


def test_the_check_names_a_plural_whose_singular_in_the_catalog_is_stale():
    english = messages.DEADLINE_MISSED.english
    stale = messages.Forms(ZH[english], "0", "{cards} card takes a while")
    assert any("the catalog's singular is '{cards} card takes a while'" in p
               for p in messages.check({**ZH, english: stale}))


def test_a_reworded_message_keeps_its_translation_marked_fuzzy_for_review(tmp_path, monkeypatch):
    """`python -m service.i18n --update` after the English of a message changed: the entry is
    found by its code, keeps its Chinese, and is marked fuzzy, which the catalog reader skips (so
    the check says "no translation" until a translator removes the mark)."""
    from dataclasses import replace

    from babel.messages.pofile import read_po

    (tmp_path / "zh.po").write_bytes((i18n.LOCALE / "zh.po").read_bytes())
    monkeypatch.setattr(i18n, "LOCALE", tmp_path)
    old = messages.CLUSTER_COMPLEXITY
    monkeypatch.setitem(messages.TEMPLATES, old.code, replace(old, english=old.english + ", reworded"))
    i18n.update("zh")
    with (tmp_path / "zh.po").open("rb") as po:
        entry = read_po(po, locale="zh").get(old.english + ", reworded")
    assert entry.fuzzy and entry.string == ZH[old.english]


def test_a_template_refuses_parameters_it_does_not_say():
    with pytest.raises(TypeError, match="cluster_complexity takes"):
        messages.CLUSTER_COMPLEXITY(cards=32, extra=1)


def test_codes_are_unique_and_made_once():
    with pytest.raises(ValueError, match="defined twice"):
        messages.template("cluster_complexity", "again", "a second definition")


def test_an_answers_warnings_carry_their_codes_and_constants_come_from_the_constants():
    """Training Llama 3.1 70B on 64 RTX 4090s: more cards than the guide's 32, consumer cards
    around the clock, no ECC on a multi-day run."""
    answer = questions.scaling(get_model("llama-3.1-70b").spec, WorkloadInput(mode="pretrain", train_tokens=1e11),
                               HardwareInput(get_card("rtx-4090"), 64))
    codes = {w.code for w in answer.warnings if isinstance(w, messages.Message)}
    assert {"cluster_complexity", "long_run_without_ecc"} <= codes
    complexity = next(w for w in answer.warnings if getattr(w, "code", "") == "cluster_complexity")
    assert complexity.params == {"cards": 32}


def test_a_message_is_made_json_once_and_an_answer_dumped_again_is_the_same():
    """as_json keeps a message's JSON with it (a message kept across questions is dumped by each):
    the same object each time, and equal to what a fresh message says."""
    from service.sizing import messages as M

    kept = M.kept(M.HEADS_COUNT, heads=32, kv_heads=8)
    first = M.as_json(kept)
    assert M.as_json(kept) is first
    assert first == M.as_json(M.HEADS_COUNT(heads=32, kv_heads=8)) == {
        "code": "heads_count", "message": str(kept), "params": {"heads": 32, "kv_heads": 8}}
    nested = M.ENGINE_TENSOR_PLAN(engine="vllm", heads=kept, across=M.kept(M.PIPELINE_STAGES))
    assert M.as_json(nested)["params"]["heads"] == first
