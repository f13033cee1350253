"""Notes: what an answer assumed and warns about. A quiet one (an answer that shows neither, a
search's trial) keeps nothing and makes no note handed over to be made; notes kept with a
result worked out once are said again in the same order."""

from dataclasses import replace

import pytest

from service.sizing import messages as M
from service.sizing.catalog import get_card
from service.sizing.inputs import Notes
from service.sizing.links import fabric_for


def _made(made: list):
    def make():
        made.append(1)
        return M.PART_KV_CACHE()
    return make


@pytest.mark.parametrize(("notes", "kept", "made"), [(Notes(), 1, 1), (Notes(quiet=True), 0, 0), (Notes.unread(), 0, 0)])
def test_a_note_handed_over_is_made_only_by_notes_that_keep_it(notes, kept, made):
    calls: list = []
    notes.assume("x", 1, _made(calls))
    notes.assume("x", 2, _made(calls))  # said once: the second is not made either
    notes.warn(_made(calls))
    notes.warn(M.PART_KV_CACHE())  # the same warning once
    assert (len(notes.assumptions), len(notes.warnings), len(calls)) == (kept, kept, made + made)


def test_a_quiet_notes_still_answers_with_the_default():
    from service.sizing import defaults as d
    assert Notes(quiet=True).use("batch_size", None, d.BATCH_SIZE) == d.BATCH_SIZE.value
    assert Notes(quiet=True).use("batch_size", 7, d.BATCH_SIZE) == 7


def test_notes_said_again_keep_their_order_and_say_each_name_once():
    said = Notes()
    said.assume("a", 1, M.PART_KV_CACHE())
    said.assume("b", 2, M.PART_KV_CACHE())
    said.warn(M.FIT_NO_COUNT())
    notes = Notes()
    notes.assume("b", 0, M.PART_KV_CACHE())  # already said by the caller: its own value stays
    notes.replay(said)
    assert [(a.name, a.value) for a in notes.assumptions] == [("b", 0), ("a", 1)]
    assert notes.warnings == [M.FIT_NO_COUNT()]
    quiet = Notes(quiet=True)
    quiet.replay(said)
    assert quiet.assumptions == [] and quiet.warnings == []


def test_a_cards_fabric_is_worked_out_once_and_its_notes_said_to_every_caller():
    card = get_card("h100-sxm")
    first, second = Notes(), Notes()
    one = fabric_for(card, 8, None, first)
    assert fabric_for(card, 8, None, second) is one
    assert [(a.name, a.value, a.note) for a in first.assumptions] == \
        [(a.name, a.value, a.note) for a in second.assumptions] != []
    assert fabric_for(card, 4, None, Notes()) is not one  # another machine, another fabric
    assert fabric_for(card, 8, 100.0, Notes()).between.bytes_per_s < one.between.bytes_per_s


def test_a_card_of_the_same_id_with_other_figures_gets_its_own_fabric():
    card = get_card("h100-sxm")
    slower = replace(card, interconnect_bytes_per_s=card.interconnect_bytes_per_s / 2)
    assert fabric_for(slower, 8, None, Notes()).inside.bytes_per_s == \
        pytest.approx(fabric_for(card, 8, None, Notes()).inside.bytes_per_s / 2)
    # figures the hash leaves out: the same hash, other cards, other fabrics
    wide, narrow = (replace(card, link_domain_cards=2, pcie_bytes_per_s=rate) for rate in (64e9, 32e9))
    assert hash(wide) == hash(narrow) and wide != narrow
    assert fabric_for(wide, 8, None, Notes()).slot.bytes_per_s == \
        pytest.approx(2 * fabric_for(narrow, 8, None, Notes()).slot.bytes_per_s)


def test_custom_cards_hash_apart():
    """Every custom card's id is "custom": its figures keep a cache keyed on cards from one bucket."""
    from service.sizing.cards import custom_card
    made = {hash(custom_card(memory_gib=m, bandwidth_gb_per_s=1000, dense_tflops={"bf16": 100}, power_w=300))
            for m in range(1, 101)}
    assert len(made) == 100


def test_the_one_unread_notes_keeps_nothing_whatever_is_said_to_it():
    """Notes.unread() is one quiet Notes for every search and alternative (a quiet Notes keeps
    nothing): after whole answers in every mode it is still empty, and said to directly, too."""
    from service.sizing import questions as q
    from service.sizing.catalog import get_card, get_model
    from service.sizing.inputs import EnergyInput, HardwareInput, Notes, WorkloadInput

    for mode in ("inference", "full_finetune", "lora"):
        q.estimate(get_model("llama-3.1-70b").spec, WorkloadInput(mode=mode, train_tokens=1e9),
                   HardwareInput(get_card("rtx-4090"), 2), EnergyInput())
    unread = Notes.unread()
    unread.assume("x", 1, M.kept(M.FULL_LOAD))
    unread.warn(M.kept(M.FULL_LOAD))
    unread.replay(Notes(assumptions=[], warnings=[M.kept(M.FULL_LOAD)]))
    assert unread is Notes.unread() and unread.quiet
    assert unread.said() == {"assumptions": (), "warnings": ()} and not unread._named
