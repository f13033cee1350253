"""Ranges that hold: the bands of published runs' error a range is stated from, how a question
finds its slice, and the fine-tuning recipes that make a "no" a yes."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.accuracy import bands
from service.sizing import calibration as cal
from service.sizing import questions as domain
from service.sizing.catalog import get_card, get_model
from service.sizing.inputs import HardwareInput, Notes, WorkloadInput, resolve_workload


def _band(key, low, median, high, sources, cases=10, engines=()):
    return cal.Band(key, low, median, high, cases, sources, 0.8, engines)


DECODE = ("decode", "", "", "", "")
NVIDIA = ("decode", "", "nvidia", "", "")
NVIDIA_16 = ("decode", "", "nvidia", "16-bit", "dense")
NVIDIA_4 = ("decode", "", "nvidia", "4-bit", "dense")
TABLE = cal.Table({
    DECODE: _band(DECODE, 0.6, 1.0, 1.9, 12, engines=("llama.cpp", "vllm")),
    NVIDIA: _band(NVIDIA, 0.65, 1.0, 1.8, 10),
    NVIDIA_16: _band(NVIDIA_16, 0.8, 1.0, 1.25, 5),
    NVIDIA_4: _band(NVIDIA_4, 0.9, 1.1, 1.4, 2),
    ("decode", "", "amd", "", ""): _band(("decode", "", "amd", "", ""), 0.3, 0.5, 0.55, 3),
    ("decode", "", "amd", "16-bit", "dense"): _band(("decode", "", "amd", "16-bit", "dense"), 0.3, 0.5, 0.55, 3),
})


def facts(vendor="nvidia", weights="16-bit", arch="dense", engine=None):
    return cal.Facts("decode", vendor, weights, arch, engine)


@pytest.mark.parametrize(("question", "low", "high", "code"), [
    (facts(), 0.8, 1.25, "range_calibrated"),  # its own slice, five publications
    # its own slice has two publications: the maker's band, stretched to hold that slice's runs
    (facts(weights="4-bit"), 0.65, 1.8, "range_thin"),
    (facts(weights="8-bit"), 0.65, 1.8, "range_thin"),  # no run of its own slice: the maker's band
    # no run on the maker's cards, or of an engine: the widest band (AMD's low, the figure's high), widened
    (facts(vendor="intel"), 0.3 / 1.5, 1.9 * 1.5, "range_no_evidence"),
    (facts(engine="exllamav2"), 0.3 / 1.5, 1.9 * 1.5, "range_no_evidence"),
])
def test_a_question_takes_the_narrowest_slice_three_publications_measured(question, low, high, code):
    found = cal.calibrate(question, TABLE)
    assert (found.low, found.high, found.note.code) == (pytest.approx(low), pytest.approx(high), code)


def test_no_evidence_is_never_narrower_than_the_widest_band_and_the_floor():
    found = cal.calibrate(facts(vendor="other"), TABLE)
    assert found.low <= min(b.low for b in TABLE.bands.values()) and found.high >= 2.0
    assert found.typical == 1.0


def test_a_slice_shown_biased_by_three_publications_states_its_median_as_the_typical():
    """AMD's runs all come out at half the model's figure: the typical is halved, the range holds it."""
    found = cal.calibrate(facts(vendor="amd"), TABLE)
    assert found.typical == 0.5
    assert found.range(100.0).typical == 50.0 and found.range(100.0).low == 30.0
    assert found.range(100.0, ceiling=40.0).high == 40.0  # never above the roofline


def test_a_median_borrowed_across_makers_or_from_a_band_that_holds_1_or_is_wide_corrects_nothing():
    table = cal.Table({DECODE: _band(DECODE, 0.3, 0.5, 0.8, 6),
                       NVIDIA: _band(NVIDIA, 0.5, 0.7, 1.3, 5)})
    assert cal.calibrate(facts(), table).typical == 1.0  # the maker's band holds 1
    wide = cal.Table({DECODE: _band(DECODE, 1.1, 2.3, 9.9, 6), NVIDIA: _band(NVIDIA, 1.1, 2.3, 9.9, 5)})
    assert cal.calibrate(facts(), wide).typical == 1.0  # one-sided, but publications disagree x9
    only_figure = cal.Table({DECODE: _band(DECODE, 0.3, 0.5, 0.55, 6), ("decode", "", "amd", "", ""): _band(
        ("decode", "", "amd", "", ""), 0.5, 1.0, 1.2, 1)})
    assert cal.calibrate(facts(vendor="amd"), only_figure).typical == 1.0  # the figure's median, across makers


@given(st.floats(0.05, 20), st.floats(0.05, 20), st.floats(0.05, 20), st.integers(1, 8),
       st.floats(1e-3, 1e6))
def test_a_range_always_holds_its_typical_figure(a, b, c, sources, model):
    low, median, high = sorted((a, b, c))
    table = cal.Table({DECODE: _band(DECODE, low, median, high, sources, engines=("vllm",)),
                       NVIDIA: _band(NVIDIA, low, median, high, sources),
                       NVIDIA_16: _band(NVIDIA_16, low, median, high, sources)})
    span = cal.calibrate(facts(), table).range(model)
    assert span.low <= span.typical <= span.high


def test_each_publication_weighs_the_same_however_many_runs_it_published():
    """One table of nine runs at 2.0 and two publications of one run at 1.0 each: the median is
    the publications', not the runs'."""
    values, weights = [2.0] * 9 + [1.0, 1.0], [1 / 9] * 9 + [1.0, 1.0]
    assert cal.weighted_quantile(values, weights, 0.5) == pytest.approx(1.0, rel=0.3)
    assert cal.weighted_quantile(values, [1.0] * 11, 0.5) == 2.0


@pytest.mark.parametrize(("weights", "high"), [([1.0] * 1000, 0.9009), ([1.0] * 9, 1.0), ([1.0] * 20, 0.945)])
def test_the_ends_move_out_with_few_independent_runs(weights, high):
    low_level, high_level = cal.band_levels(weights)
    assert high_level == pytest.approx(high, abs=1e-3) and low_level == pytest.approx(1 - high_level)


def test_out_of_sample_a_publication_is_scored_against_the_others_bands_only():
    make = lambda group, factor: bands.Point(facts(), factor, group)  # noqa: E731
    points = [make("a", 1.0), make("b", 1.1), make("c", 0.9), make("d", 3.0)]
    scored = {s.point.group: s for s in bands.scored(points)}
    assert not scored["d"].inside  # the others never saw a run at 3.0
    assert scored["a"].inside


def test_the_packaged_table_states_a_band_for_every_figure_it_calibrates():
    table = cal.packaged()
    figures = {key[0] for key in table.bands}
    assert {cal.DECODE, cal.FULL_LOAD, cal.TTFT, cal.TRAINING, cal.FINETUNE_SPEED, cal.FINETUNE_MEMORY} <= figures
    for band in table.bands.values():
        assert 0 < band.low <= band.median <= band.high and all(math.isfinite(x) for x in (band.low, band.high))
        assert 0 <= band.coverage <= 1 and band.sources <= band.cases


def _training(model, card, count, mode, **given):
    spec = get_model(model).spec
    notes = Notes()
    workload = resolve_workload(WorkloadInput(mode=mode, train_tokens=1e9, **given), notes, spec)
    return domain.place_training(spec, workload, HardwareInput(get_card(card), count), notes), notes


@pytest.mark.parametrize(("model", "card", "count"), [
    ("llama-3.1-8b", "h100-sxm", 8), ("llama-3.1-8b", "a100-80gb-sxm", 4), ("llama-3.1-70b", "h100-sxm", 16),
    ("qwen2.5-7b", "l40s", 8), ("llama-3.2-3b", "rtx-4090", 2)])
def test_lora_is_never_slower_than_a_full_fine_tune_of_the_same_model_on_the_same_cards(model, card, count):
    full, _ = _training(model, card, count, "full_finetune")
    lora, _ = _training(model, card, count, "lora")
    assert lora.answer.time_s <= full.answer.time_s


def test_a_full_fine_tune_of_an_8b_model_on_one_24_gb_card_is_answered_with_a_recipe_that_fits():
    """torchtune's single-card recipe runs it at 18.9 GiB on an RTX 4090 (its README's table)."""
    job, notes = _training("llama-3.1-8b", "rtx-4090", 1, "full_finetune")
    assert job.fit.fits and job.answer.time_s
    said = {a.name: a for a in notes.assumptions}
    assert said["recipe"].value == "low-memory" and said["recipe"].note.code == "recipe_fits"
    assert job.placement.need_bytes_per_card < 24 * 2**30


def test_a_recipe_the_caller_gives_is_kept_even_when_it_does_not_fit():
    job, notes = _training("llama-3.1-8b", "rtx-4090", 1, "full_finetune", recipe="standard")
    assert not job.fit.fits and "recipe" not in {a.name for a in notes.assumptions}


@pytest.mark.parametrize(("model", "card", "users", "speed"), [
    ("llama-3.1-70b", "h100-sxm", 200, 20), ("llama-3.1-8b", "l40s", 64, 30), ("qwen3-30b-a3b", "h200-sxm", 100, 40)])
def test_capacity_sizes_on_the_typical_figures_and_says_what_the_slow_ends_would_need(model, card, users, speed):
    from service.sizing.capacity import Target, capacity_for

    spec = get_model(model).spec
    notes = Notes()
    workload = resolve_workload(WorkloadInput(prompt_tokens=1000, output_tokens=500), notes, spec)
    answer = capacity_for(spec, workload, HardwareInput(get_card(card)), Target(users, speed), notes)
    assert answer.meets_target
    assert answer.cards_at_low_end is None or answer.cards_at_low_end >= answer.cards


def test_an_answers_ranges_say_what_they_rest_on_and_never_pass_the_roofline():
    spec = get_model("llama-3.1-8b").spec
    notes = Notes()
    workload = resolve_workload(WorkloadInput(precision="q4_k_m", engine="llama.cpp"), notes, spec)
    job = domain.place_serving(spec, workload, HardwareInput(get_card("rtx-4090"), 1), notes)
    from service.sizing.throughput import throughput_answer

    answer = throughput_answer(spec, workload, job.breakdown, job.placement, job.setup, notes)
    speed = answer.decode_tokens_per_s_range
    assert speed.note.code in ("range_calibrated", "range_thin")
    assert speed.high <= answer.decode_tokens_per_s_ceiling and speed.typical == answer.decode_tokens_per_s_expected
    assert answer.time_to_first_token_s_range.low <= answer.time_to_first_token_s


def test_a_figure_that_few_publications_measured_is_never_given_a_narrow_range():
    table = cal.Table({DECODE: _band(DECODE, 0.95, 1.0, 1.05, 2, engines=("vllm",)),
                       NVIDIA: _band(NVIDIA, 0.95, 1.0, 1.05, 2)})
    found = cal.calibrate(facts(), table)
    assert (found.low, found.high, found.note.code) == (0.5, 2.0, "range_thin")


def test_a_recipe_the_service_picks_leaves_the_plan_its_own_to_search():
    job, _ = _training("llama-3.1-8b", "rtx-4090", 1, "full_finetune")
    assert job.placement.given is False


def test_a_recipe_with_a_zero_stage_is_refused():
    from service.sizing.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as refused:
        resolve_workload(WorkloadInput(mode="full_finetune", recipe="low-memory", zero_stage=3), Notes())
    assert refused.value.field == "workload.recipe"
