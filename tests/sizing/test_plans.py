"""Many cards as properties: what every plan must keep, whatever the model, card and engine."""

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from service.sizing import estimate as e
from service.sizing.catalog import catalog, get_card, get_model
from service.sizing.engines import ENGINES
from service.sizing.inputs import EnergyInput, HardwareInput, Notes, WorkloadInput, resolve_workload
from service.sizing.plan import Parallelism
from service.sizing.serving import throughput_answer
from service.sizing.training_time import cluster_for, training_answer

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
    assert split.time_s - exposed <= plain.time_s * (1 + 1e-9)
    assert math.isclose(split.time_s - exposed, plain.time_s_linear, rel_tol=1e-6)


@settings(max_examples=150, deadline=None)
@given(serving, st.sampled_from(REAL_CARDS + tuple(c for c in catalog().cards if c.kind == "tier")),
       st.one_of(st.none(), st.integers(1, 64)))
def test_every_answer_carries_a_plan_whose_degrees_multiply_to_its_cards(job, card, count):
    model, workload = job
    answer = e.estimate(model, workload, HardwareInput(card, count), EnergyInput(), alternatives=False)
    plan = answer.parallelism
    assert plan.tensor * plan.pipeline * plan.expert * plan.data * plan.replicas == plan.cards
    assert plan.cards + plan.idle_cards == (answer.fit.count if answer.fits or answer.cards_needed is None
                                            else answer.cards_needed)
    assert plan.machines == answer.host.machines or plan.idle_cards
    assert answer.throughput.cards == plan.cards


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b")),
       st.sampled_from(("h100-sxm", "a100-40gb-sxm", "rtx-4090")), st.integers(1, 2048),
       st.sampled_from((None, 1, 3)))
def test_every_training_answer_carries_its_plan_and_batch(model, card_id, count, stage):
    spec, card = get_model(model).spec, get_card(card_id)
    workload = WorkloadInput(mode="pretrain", train_tokens=1e12, zero_stage=stage)
    answer = e.scaling(spec, workload, HardwareInput(card, count))
    plan, train = answer.parallelism, answer.training
    assert plan.tensor * plan.pipeline * plan.expert * plan.data == plan.cards == train.cards
    assert train.global_batch_tokens == (train.micro_batch * train.gradient_accumulation * plan.data
                                         * plan.expert * 4096)
