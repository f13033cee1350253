"""The physics as properties: what must hold for every input, not only the worked examples."""

import dataclasses
import importlib
import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from service.sizing import questions as e
from service.sizing.cards import custom_card
from service.sizing.catalog import catalog, model_catalog
from service.sizing.errors import InvalidInputError
from service.sizing.inputs import EnergyInput, HardwareInput, Notes, WorkloadInput, resolve_workload
from service.sizing.memory import memory_breakdown
from service.sizing.model import ModelSpec
from service.sizing.plan import Parallelism

MODES = ("inference", "full_finetune", "lora", "qlora", "pretrain")
INFERENCE_PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")


@st.composite
def models(draw):
    heads = draw(st.integers(1, 128))
    return ModelSpec(
        params=draw(st.integers(10**6, 2 * 10**12)),
        layers=draw(st.integers(1, 200)),
        hidden_size=draw(st.integers(64, 32768)),
        attention_heads=heads,
        kv_heads=draw(st.integers(1, heads)),
        head_dim=draw(st.integers(16, 512)),
    )


cards = st.one_of(
    st.sampled_from(catalog().cards),
    st.builds(
        lambda mem, bw, tf, w, line, link: custom_card(
            memory_gib=mem, bandwidth_gb_per_s=bw, dense_tflops={"bf16": tf}, power_w=w,
            line=line, interconnect_gb_per_s=link),
        st.floats(1, 1024), st.floats(1, 20_000), st.floats(1, 20_000), st.floats(1, 5_000),
        st.sampled_from(("consumer", "workstation", "datacenter")),
        st.one_of(st.none(), st.floats(1, 2_000)),
    ),
)


def workloads(mode=None):
    return st.builds(
        WorkloadInput,
        mode=st.sampled_from(MODES) if mode is None else st.just(mode),
        context_tokens=st.integers(1, 1_000_000),
        batch_size=st.integers(1, 4096),
        train_tokens=st.one_of(st.none(), st.floats(1, 1e16)),
    )


@given(models(), st.sampled_from(MODES), st.integers(1, 512), st.integers(1, 512), st.integers(1, 8192))
def test_memory_never_falls_as_batch_or_context_grows(model, mode, batch, more, context):
    def total(b, c):
        return e.memory(model, WorkloadInput(mode=mode, batch_size=b, context_tokens=c), None).breakdown.total_bytes

    assert total(batch + more, context) >= total(batch, context)
    assert total(batch, context + more) >= total(batch, context)


@given(models(), cards, workloads("inference"), st.one_of(st.none(), st.integers(1, 64)))
def test_decode_ceiling_is_never_below_the_expected_rate(model, card, workload, count):
    answer = e.throughput(model, workload, HardwareInput(card, count)).throughput
    assert answer.decode_tokens_per_s_ceiling >= answer.decode_tokens_per_s_expected > 0
    assert answer.total_tokens_per_s_ceiling >= answer.total_tokens_per_s


@given(st.floats(1, 1e6), st.floats(0.001, 100), st.floats(1, 10), st.floats(0, 24))
def test_cost_is_linear_in_price(power_w, price, factor, hours):
    def yearly(p):
        return e.cost(EnergyInput(power_w=power_w, price_per_kwh=p, hours_per_day=hours)).energy.electricity_cost_per_year

    assert math.isclose(yearly(price * factor), factor * yearly(price), rel_tol=1e-9, abs_tol=1e-9)


@given(models(), cards, st.sampled_from(INFERENCE_PRECISIONS), st.integers(1, 16), st.integers(1, 64))
def test_splitting_over_more_cards_never_needs_more_memory_per_card(model, card, precision, count, batch):
    """Under one kind of split, more stages (or more tensor-parallel cards) never leave a card
    more to hold. (An engine may still choose copies on more cards, each holding more.)"""
    def per_card(par):
        workload = WorkloadInput(precision=precision, batch_size=batch, engine="llama.cpp", parallelism=par)
        return e.memory(model, workload, HardwareInput(card, par.cards)).fit.need_bytes_per_card

    if count < model.layers:  # a stage needs a layer
        assert per_card(Parallelism(pipeline=count + 1)) <= per_card(Parallelism(pipeline=count))
    assert per_card(Parallelism(tensor=2 * count)) <= per_card(Parallelism(tensor=count))


def _numbers(value):
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from _numbers(getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, float):
        yield value


@settings(max_examples=200)
@given(models(), cards, workloads(), st.one_of(st.none(), st.integers(1, 100_000)),
       st.sampled_from(("en", "zh")))
def test_no_answer_field_is_nan_or_infinite(model, card, workload, count, lang):
    result = e.estimate(model, workload, HardwareInput(card, count), EnergyInput(), lang)
    assert all(math.isfinite(x) for x in _numbers(result))
    assert result.summary


NOTHING_COSTLY = e.Parts(alternatives=False, summary=False, full_load=False, curve=False, costs=False, notes=False,
                         ends=False)


@given(models(), cards, workloads("inference"), st.one_of(st.none(), st.integers(1, 64)))
def test_an_estimate_that_computes_none_of_its_costly_parts_says_the_same_of_the_rest(model, card, workload, count):
    """What llm-analysis answers (memory, fit, the typical speed and time to first token), asked
    alone, is the whole answer's to the last bit: no end, note, curve or alternative it skips
    moves it."""
    hardware = HardwareInput(card, count)

    def answer(parts):
        try:
            return e.estimate(model, workload, hardware, EnergyInput(), parts=parts)
        except Exception as exc:  # the same refusal either way
            return type(exc), str(exc)

    whole, sparse = answer(e.EVERY_PART), answer(NOTHING_COSTLY)
    if isinstance(whole, tuple):
        assert sparse == whole
        return
    assert (sparse.memory, sparse.fit, sparse.parallelism) == (whole.memory, whole.fit, whole.parallelism)
    for name in ("decode_tokens_per_s_expected", "total_tokens_per_s", "time_to_first_token_s", "decode_step",
                 "compute_precision", "decode_efficiency_range", "max_concurrent_sequences",
                 "decode_tokens_per_s_guide"):
        assert getattr(sparse.throughput, name) == getattr(whole.throughput, name), name
    assert sparse.assumptions == sparse.warnings == () and sparse.alternatives == ()


ALTERNATIVE_FORMATS = ("bf16", "fp8", "awq", "q4_k_m", "mxfp4", "nvfp4", "fp32", "int8")


@given(st.builds(
    WorkloadInput,
    precision=st.one_of(st.none(), st.sampled_from(INFERENCE_PRECISIONS + ("mxfp4", "nvfp4"))),
    kv_precision=st.one_of(st.none(), st.sampled_from(("bf16", "fp8", "fp32"))),
    context_tokens=st.integers(2, 1_000_000),
    batch_size=st.one_of(st.none(), st.integers(1, 4096)),
    output_tokens=st.one_of(st.none(), st.integers(1, 1000)),
    engine=st.one_of(st.none(), st.sampled_from(("vllm", "tensorrt-llm", "llama.cpp", "sglang"))),
    parallelism=st.one_of(st.none(), st.just(Parallelism(tensor=2))),
), st.sampled_from(ALTERNATIVE_FORMATS), st.sampled_from([p.spec for p in model_catalog().models]))
def test_a_workload_in_another_format_is_what_resolving_it_in_that_format_makes(given_workload, name, model):
    """The alternatives resolve a workload once and change its format (inputs.in_format): the
    same workload resolve_workload makes of the request with that precision and no plan."""
    from service.sizing.errors import InvalidInputError
    from service.sizing.inputs import Notes, in_format, resolve_workload

    try:
        resolved = resolve_workload(given_workload, Notes.unread(), model)
    except InvalidInputError:
        return
    again = resolve_workload(dataclasses.replace(given_workload, precision=name, parallelism=None),
                             Notes.unread(), model)
    assert in_format(given_workload, resolved, name) == again


@settings(max_examples=150)
@given(models(), cards, workloads(), st.one_of(st.none(), st.integers(1, 4096)))
def test_an_answers_memory_lists_its_parts_and_says_what_its_range_rests_on(model, card, workload, count):
    """A breakdown made for its figures alone (an alternative's, a search's) lists no parts; the
    answer's own always does: its parts add up to its total, and its range says its ends."""
    try:
        memory = e.estimate(model, workload, HardwareInput(card, count), EnergyInput()).memory
    except InvalidInputError:
        return
    assert memory.components and sum(c.bytes for c in memory.components) == memory.total_bytes
    assert memory.total_bytes_range.note is not None


@given(models(), workloads(), st.sampled_from(INFERENCE_PRECISIONS), st.integers(1, 8))
def test_a_breakdown_for_its_figures_alone_has_the_figures_of_one_that_says_them(model, given_workload,
                                                                                  precision, tensor):
    try:
        workload = resolve_workload(dataclasses.replace(given_workload, precision=precision), Notes.unread(), model)
    except InvalidInputError:  # a format the mode refuses (int8 for a full fine-tune)
        assume(False)
    said = memory_breakdown(model, workload, Notes(), tensor)
    figures = memory_breakdown(model, workload, Notes(), tensor, said=False)
    assert figures.components == () and figures.total_bytes_range.note is None
    assert dataclasses.replace(figures, components=said.components, total_bytes_range=said.total_bytes_range) == said
    assert sum(c.bytes for c in said.components) == figures.total_bytes


@settings(max_examples=100)
@given(models(), cards, workloads("inference"), st.one_of(st.none(), st.integers(1, 64)))
def test_an_alternative_that_reuses_the_answers_speed_says_what_it_would_work_out(model, card, workload, count):
    """The alternative in the answer's own format, on the answer's own plan, quotes the answer's
    speed rather than pricing the step again: the same number as pricing it."""
    q = importlib.import_module("service.sizing.questions.estimate")  # the package names its function so

    hardware = HardwareInput(card, count)
    try:
        answer = e.estimate(model, workload, hardware, EnergyInput())
        notes, resolved = q.opening(model, workload, cards=(card,), quiet=True)
        serve = q.place_serving(model, resolved, hardware, notes)
    except InvalidInputError:
        return
    for alternative, name in zip(answer.alternatives, dict.fromkeys(q.INFERENCE_ALTERNATIVES), strict=False):
        worked_out = q._inference_alternative(model, workload, name, card, serve)
        assert alternative == worked_out


@settings(max_examples=200)
@given(st.sampled_from(("llama-3.1-8b", "mixtral-8x7b", "qwen2.5-72b")), st.sampled_from(("vllm", "tensorrt-llm")),
       st.sampled_from((Parallelism(), Parallelism(tensor=2), Parallelism(tensor=2, pipeline=2),
                        Parallelism(pipeline=4))),
       st.integers(0, 512), st.floats(0, 200_000), st.floats(0, 50_000), st.floats(0, 50_000),
       st.sampled_from(("typical", "low", "ideal")))
def test_a_steps_time_alone_is_the_steps_time_by_part(name, engine, plan, batch, context, prefill, prefill_context,
                                                       end):
    """step_time (what most readers of a step read) says what decode_step says of the same step."""
    from service.sizing.catalog import get_card, get_model
    from service.sizing.decode import decode_step, step_time
    from service.sizing.links import fabric_for
    from service.sizing.throughput import setup

    model, card = get_model(name).spec, get_card("h100-sxm")
    workload = resolve_workload(WorkloadInput(engine=engine), Notes.unread(), model)
    breakdown = memory_breakdown(model, workload, Notes.unread())
    dep = getattr(setup(model, workload, breakdown, card, plan, fabric_for(card, 8, None, Notes.unread()),
                        Notes.unread()), end)
    whole, alone = decode_step(dep, batch, context, prefill, prefill_context), \
        step_time(dep, batch, context, prefill, prefill_context)
    assert (alone.step_s, alone.bound, alone.engine_s, alone.comm_s) == \
        (whole.step_s, whole.bound, whole.engine_s, whole.comm_s)
