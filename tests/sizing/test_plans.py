"""Many cards as properties: what every plan must keep, whatever the model, card and engine."""

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from service.sizing import questions as e
from service.sizing.catalog import catalog, get_card, get_model
from service.sizing.engines import ENGINES
from service.sizing.inputs import EnergyInput, HardwareInput, Notes, WorkloadInput, resolve_workload
from service.sizing.plan import Parallelism
from service.sizing.throughput import throughput_answer
from service.sizing.training_time import STEP_CONSTANTS, cluster_for, training_answer

PRESETS = ("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-32b", "mixtral-8x7b", "qwen3-30b-a3b",
           "gpt-oss-20b", "gemma-2-27b", "deepseek-v3", "phi-4")
FORMATS = ("bf16", "fp8", "int8", "awq", "q4_k_m")
SERVING = tuple(name for name, engine in ENGINES.items() if engine.split == "tensor")
LAYER_SPLITS = tuple(name for name, engine in ENGINES.items() if engine.split == "layer")
REAL_CARDS = tuple(card for card in catalog().cards if card.kind == "card")

serving = st.builds(
    lambda model, precision, engine, batch, prompt: (
        get_model(model).spec,
        WorkloadInput(precision=precision, engine=engine, batch_size=batch, prompt_tokens=prompt,
                      output_tokens=256)),
    st.sampled_from(PRESETS), st.sampled_from(FORMATS), st.sampled_from(SERVING),
    st.integers(1, 64), st.integers(16, 4096))


@settings(max_examples=150, deadline=None)
@given(serving, st.sampled_from(REAL_CARDS), st.integers(1, 31))
def test_adding_a_card_never_lowers_throughput_at_full_load(job, card, count):
    """Under a serving engine's own plan, one more card serves at least as many tokens per
    second: copies fill the cards, and an idle card costs nothing."""
    model, workload = job

    def full_load(n):
        answer = e.throughput(model, workload, HardwareInput(card, n))
        return answer.fit.fits, answer.throughput.max_total_tokens_per_s

    fits, before = full_load(count)
    fits_more, after = full_load(count + 1)
    assume(fits and fits_more and before is not None)
    assert after >= before * (1 - 1e-9)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(FORMATS), st.sampled_from(LAYER_SPLITS),
       st.sampled_from(REAL_CARDS), st.integers(1, 15), st.integers(1, 64))
def test_a_layer_split_costs_one_more_card_only_its_hop(model, precision, engine, card, count, batch):
    """A layer split runs its stages one after another, so one more card adds a hop and nothing
    else to a step (measured: llama.cpp's 8B on 1, 2, 4, 8 RTX 4090s at 128, 123, 118, 116
    tokens/s): its throughput falls by the hop, and only by it."""
    spec = get_model(model).spec
    workload = WorkloadInput(precision=precision, engine=engine, batch_size=batch)

    def step(n):
        answer = e.throughput(spec, workload, HardwareInput(card, n))
        return answer.fit.fits, answer.throughput.decode_step

    fits, before = step(count)
    fits_more, after = step(count + 1)
    assume(fits and fits_more)
    assert after.step_s - after.pipeline_comm_s == \
        pytest.approx(before.step_s - before.pipeline_comm_s, rel=1e-9)
    assert after.pipeline_comm_s >= before.pipeline_comm_s


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(FORMATS), st.sampled_from(LAYER_SPLITS),
       st.sampled_from(REAL_CARDS), st.integers(2, 16), st.integers(1, 8192))
def test_a_layer_split_never_makes_one_stream_faster_than_one_card(model, precision, engine, card,
                                                                    count, context):
    """One stream visits the stages in turn: however many cards, it reads every weight at one
    card's bandwidth (and pays for each hop)."""
    spec = get_model(model).spec
    workload = WorkloadInput(precision=precision, engine=engine, context_tokens=context)

    def stream(n):
        notes = Notes()
        resolved = resolve_workload(workload, notes)
        job = e.place_serving(spec, resolved, HardwareInput(card, n), notes, as_asked=True)
        return throughput_answer(spec, resolved, job.breakdown, job.placement, job.setup, notes, curve=False)

    many, one = stream(count), stream(1)
    assert many.decode_tokens_per_s_expected <= one.decode_tokens_per_s_expected * (1 + 1e-9)
    assert many.decode_tokens_per_s_ceiling <= one.decode_tokens_per_s_ceiling * (1 + 1e-9)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-32b", "mistral-nemo-12b")),
       st.sampled_from(("h100-sxm", "a100-80gb-sxm", "rtx-4090", "rtx-a6000", "mi300x")),
       st.sampled_from((2, 4, 8)), st.integers(1, 32), st.sampled_from((None, 1, 3)),
       st.sampled_from((1e6, 4e6, 16e6)))
def test_tensor_parallelism_costs_only_its_exposed_communication(model, card_id, tensor, copies,
                                                                  stage, batch_tokens):
    """The same cards in tensor parallel do the same compute per token; they can only take
    longer by the communication (and bubble) the step leaves exposed."""
    spec, card = get_model(model).spec, get_card(card_id)
    assume(spec.attention_heads % tensor == 0)
    cards = tensor * copies

    def train(par):
        notes = Notes()
        workload = resolve_workload(WorkloadInput(
            mode="pretrain", train_tokens=1e12, zero_stage=stage, global_batch_tokens=batch_tokens,
            parallelism=par), notes)
        return training_answer(spec, workload, card, par, cluster_for(card, HardwareInput(card, cards),
                                                                      notes), notes)

    split = train(Parallelism(tensor=tensor, data=copies))
    plain = train(Parallelism(data=cards))
    exposed = split.steps * (split.tensor_comm_s + split.data_comm_exposed_s + split.pipeline_bubble_s)
    steady = STEP_CONSTANTS.run_goodput  # a whole run's time is its steady steps over this share
    assert split.time_s * steady - exposed <= plain.time_s * steady * (1 + 1e-9)
    # The step model prices compute at the layers' efficiency, not the guide's MFU: what is left
    # once the exposed parts are taken out is the same compute on either plan.
    assert math.isclose(split.time_s * steady - exposed,
                        plain.time_s * steady - plain.steps * plain.data_comm_exposed_s, rel_tol=0.05)


@settings(max_examples=150, deadline=None)
@given(serving, st.sampled_from(REAL_CARDS + tuple(c for c in catalog().cards if c.kind == "tier")),
       st.one_of(st.none(), st.integers(1, 64)), st.one_of(st.none(), st.integers(1, 8)))
def test_every_answer_carries_a_plan_on_the_cards_it_prices(job, card, count, per_node):
    """The plan's cards and its idle ones are the cards asked when they hold the job, else the
    least count that does (or, when none does, the cards asked or one copy of the largest plan);
    the host houses exactly the plan's machines; the step's parts add up to it."""
    model, workload = job
    answer = e.estimate(model, workload, HardwareInput(card, count, per_node), EnergyInput(),
                        parts=e.Parts(alternatives=False))
    plan = answer.parallelism
    assert plan.idle_cards >= 0
    shown = count if count is not None and answer.fits else answer.cards_needed or count or plan.cards
    assert plan.cards + plan.idle_cards == shown
    assert answer.host.machines == plan.machines and answer.host.cards == plan.cards + plan.idle_cards
    assert answer.throughput.cards == plan.cards
    step = answer.throughput.decode_step
    parts = step.roofline_s + step.engine_s + step.tensor_comm_s + step.expert_comm_s + step.pipeline_comm_s
    assert parts == pytest.approx(step.step_s, rel=1e-9)
    assert step.roofline_s >= max(step.memory_s, step.compute_s) * (1 - 1e-9)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b")),
       st.sampled_from(("h100-sxm", "a100-40gb-sxm", "rtx-4090")), st.integers(1, 2048),
       st.sampled_from((None, 1, 3)), st.sampled_from((None, 1e6, 4e6, 16e6)))
def test_every_training_answer_fills_the_batch_asked_on_no_more_cards_than_it_needs(
        model, card_id, count, stage, batch_tokens):
    """The global batch is the one asked, rounded up to whole micro-batches on every copy (or one
    micro-batch per copy when the copies alone take more); a job that fits the cards asked never
    needs more of them; the curve's counts hold the job from the least count on."""
    spec, card = get_model(model).spec, get_card(card_id)
    workload = WorkloadInput(mode="pretrain", train_tokens=1e12, zero_stage=stage,
                             global_batch_tokens=batch_tokens)
    answer = e.scaling(spec, workload, HardwareInput(card, count))
    plan, train = answer.parallelism, answer.training
    round_tokens = train.micro_batch * plan.data * plan.expert * 4096
    assert train.global_batch_tokens >= train.global_batch_tokens_asked
    assert train.global_batch_tokens < max(train.global_batch_tokens_asked + round_tokens, round_tokens + 1)
    if answer.fit.fits:
        assert answer.fit.cards_needed is not None and answer.fit.cards_needed <= count
    fits = [point.fits for point in answer.curve]
    assert fits == sorted(fits)  # once a count holds the job, every larger one does


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(("mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3")), st.sampled_from((2, 4, 8)),
       st.sampled_from((0, 1, 2)))
def test_experts_spread_over_cards_hold_less_than_data_copies(model, k, stage):
    """Expert parallelism keeps each routed expert on one card of the k (data parallelism keeps
    them on all k): below ZeRO-3, where states are not sharded anyway, a card holds less."""
    spec = get_model(model).spec
    assume(spec.experts % k == 0)

    def state(par):
        workload = WorkloadInput(mode="pretrain", zero_stage=stage, parallelism=par)
        return e.memory(spec, workload, HardwareInput(get_card("h100-sxm"), k)).fit.model_state_bytes_per_card

    assert state(Parallelism(expert=k)) < state(Parallelism(data=k))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(FORMATS), st.sampled_from(LAYER_SPLITS),
       st.sampled_from(REAL_CARDS), st.integers(2, 16))
def test_a_layer_split_reads_each_weight_once_a_step(model, precision, engine, card, count):
    """However many stages, one step reads every weight once, as one card does."""
    spec = get_model(model).spec
    workload = WorkloadInput(precision=precision, engine=engine)

    def read(n):
        notes = Notes()
        resolved = resolve_workload(workload, notes)
        job = e.place_serving(spec, resolved, HardwareInput(card, n), notes, as_asked=True)
        answer = throughput_answer(spec, resolved, job.breakdown, job.placement, job.setup, notes, curve=False)
        return answer.weights_read_bytes_per_step

    assert read(count) == pytest.approx(read(1), rel=1e-6)
