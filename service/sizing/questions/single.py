"""The memory question and the throughput question."""

from dataclasses import replace

from .. import messages as M
from ..cards import Card
from ..inputs import (
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
)
from ..memory import FitAnswer, MemoryBreakdown, memory_breakdown
from ..model import ModelSpec
from ..plan import PlanAnswer
from ..summary import memory_summary
from ..throughput import (
    throughput_answer,
)
from .placing import opening, place_serving, place_training, plan_shown, serving_plan, serving_plan_notes
from .results import MemoryResult, ThroughputResult


def memory(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput | None, lang: str = "en") -> MemoryResult:
    """The memory breakdown, and its fit (under the engine's plan) when a card is given; its
    summary said in `lang`."""
    result = _memory(model, workload, hardware)
    return replace(result, summary=memory_summary(lang, model, result.workload, result.breakdown, result.card,
                                                  result.fit))


def _memory(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput | None) -> MemoryResult:
    notes, resolved = opening(model, workload, cards=(hardware.card,) if hardware else ())
    if hardware is None:
        breakdown = memory_breakdown(model, resolved, notes)
        return _memory_result(model, resolved, breakdown, None, None, None, notes)
    # Memory answers the cards asked: the fit and the plan are for them, even where they fall short.
    if resolved.training:
        job = place_training(model, resolved, hardware, notes)
        return _memory_result(model, job.workload, job.breakdown, hardware.card, job.fit,
                              plan_shown(job.placements.asked), notes)
    breakdown = memory_breakdown(model, resolved, notes)
    plan = serving_plan(model, resolved, breakdown, hardware, notes)
    serving_plan_notes(model, resolved, plan.placements, plan.placements.asked, notes)
    return _memory_result(model, resolved, breakdown, hardware.card, plan.fit, plan_shown(plan.placements.asked),
                          notes)


def _memory_result(model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, card: Card | None,
                   fit: FitAnswer | None, plan: PlanAnswer | None, notes: Notes) -> MemoryResult:
    return MemoryResult(
        breakdown=breakdown, model=model, mode=workload.mode, precision=workload.precision.name,
        kv_precision=workload.kv_precision.name, fit=fit, card=card, parallelism=plan, workload=workload,
        **notes.said())


def throughput(model: ModelSpec, workload: WorkloadInput, hardware: HardwareInput) -> ThroughputResult:
    """Decode roofline, tokens/s and full-load capacity on the given cards (or the least count
    that holds the job), under the engine's plan."""
    notes, resolved = opening(model, workload, cards=(hardware.card,),
                               inference_only=M.ERROR_THROUGHPUT_IS_INFERENCE())
    job = place_serving(model, resolved, hardware, notes)
    answer = throughput_answer(model, resolved, job.breakdown, job.placement, job.setup, notes,
                               full_load=job.full_load)
    return ThroughputResult(throughput=answer, model=model, card=hardware.card,
                            precision=resolved.precision.name, fit=job.fit,
                            parallelism=plan_shown(job.placement), workload=resolved, **notes.said())
