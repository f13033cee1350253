"""The training step model: compute at the layers' efficiency, the exposed share of
communication, the pipeline bubble (p-1)/(m v); its constants in one frozen instance."""

import dataclasses

import pytest

from service.sizing import training_time as tt
from service.sizing.catalog import get_card, get_model
from service.sizing.inputs import HardwareInput, Notes, WorkloadInput, resolve_workload
from service.sizing.plan import Parallelism

H100 = get_card("h100-sxm")
LLAMA_405B = get_model("llama-3.1-405b").spec


def _step(virtual=None, pipeline=16, data=128, recompute="selective", constants=None, model=LLAMA_405B):
    workload = resolve_workload(WorkloadInput(
        mode="pretrain", context_tokens=8192, batch_size=1, recompute=recompute, zero_stage=1,
        global_batch_tokens=16e6, virtual_stages=virtual,
        parallelism=Parallelism(tensor=8, pipeline=pipeline, data=data)), Notes())
    par = workload.parallelism
    place = tt.cluster_for(H100, HardwareInput(H100, par.cards, None, 400), Notes())
    return tt.plan_step(model, workload, par, H100.dense_flops["bf16"], place, 16e6, constants)


def test_the_constants_are_one_frozen_instance_a_refit_replaces():
    refit = dataclasses.replace(tt.STEP_CONSTANTS, bf16_efficiency=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tt.STEP_CONSTANTS.bf16_efficiency = 0.5  # type: ignore[misc]
    assert _step(constants=refit).micro_compute_s == pytest.approx(
        _step().micro_compute_s * tt.STEP_CONSTANTS.bf16_efficiency / 0.5)


@pytest.mark.parametrize(("virtual", "bubble_share"), [(1, 15 / 16), (2, 15 / 32), (7, 15 / 112)])
def test_the_bubble_is_p_minus_1_over_m_v(virtual, bubble_share):
    """Llama 3 405B's plan: 16 micro-batches of 8K a copy (16M tokens over 128 copies)."""
    step = _step(virtual=virtual)
    assert step.accumulation == 16
    micro_s = (step.micro_compute_s + (step.tensor_comm_s + step.pipeline_comm_s) / step.accumulation)
    assert step.bubble_s == pytest.approx(bubble_share * step.accumulation * micro_s)


def test_more_interleaving_never_slower_here():
    assert _step(virtual=7).step_s < _step(virtual=2).step_s < _step(virtual=1).step_s


def test_data_parallel_traffic_is_each_ranks_shard():
    """A distributed optimizer reduce-scatters the rank's shard, params / (t x p), once a step:
    fp32 gradients, then gathers the bf16 weights; most of it hides behind the backward pass."""
    step = _step(virtual=7)
    shard = LLAMA_405B.params / (8 * 16)
    # 4 B + 2 B per parameter at 50 GB/s a card, 80 % of it achieved, and the rounds' latency
    assert 6 * shard * 127 / 128 / 50e9 < step.data_comm_s < 1.1 * 6 * shard * 127 / 128 / (0.8 * 50e9)
    assert step.data_exposed_s < 0.5 * step.data_comm_s
    assert step.data_exposed_s < 0.05 * step.step_s


def test_full_recomputation_costs_a_third_more_compute():
    assert _step(recompute="full").micro_compute_s / _step().micro_compute_s == pytest.approx(4 / 3, rel=0.01)


@pytest.mark.parametrize(("cards", "low", "high"), [(8192, 0.38, 0.48), (16384, 0.36, 0.46)])
def test_llama_3_405b_plan_lands_near_its_published_mfu(cards, low, high):
    """Llama 3 paper (arXiv 2407.21783) Table 4: 43 % on 8,192 H100s, 41 % on 16,384 (TP8 PP16)."""
    step = _step(virtual=7, data=cards // 128)
    mfu = 6 * LLAMA_405B.params_per_token * step.global_batch_tokens / (cards * H100.dense_flops["bf16"] * step.step_s)
    assert low <= mfu <= high


def test_the_guides_mfu_is_beside_the_step_not_on_it():
    """The step's time does not move with the guide's 40 % (an all-in figure); a given MFU
    replaces the step (time = 6ND / (cards x peak x MFU))."""
    model = get_model("llama-3.1-8b").spec
    place = tt.cluster_for(H100, HardwareInput(H100, 8), Notes())

    def answer(**given):
        workload = resolve_workload(WorkloadInput(mode="pretrain", train_tokens=1e11, **given), Notes())
        return tt.training_answer(model, workload, H100, Parallelism(data=8), place, Notes())

    step, given = answer(), answer(mfu=0.4)
    assert step.method == "step model" and given.method == "given MFU"
    assert given.time_s == pytest.approx(given.time_s_linear)
    assert step.time_s_guide_curve == pytest.approx(given.time_s_guide_curve)
    # effective_mfu is the steady state; a whole run's time also carries the run's goodput
    all_in = 6 * 1e11 * model.params_per_token / (8 * H100.dense_flops["bf16"] * step.time_s)
    assert step.effective_mfu * tt.STEP_CONSTANTS.run_goodput == pytest.approx(all_in)
