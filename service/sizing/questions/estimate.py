"""The whole estimate: memory, fit, plan, speed or training time, cost, the alternatives and
the ranges, in one answer."""

import functools
from dataclasses import dataclass, replace

from .. import defaults as d
from .. import messages as M
from ..capacity import Target, capacity_for
from ..cards import Card
from ..catalog import Price
from ..errors import InvalidInputError
from ..host import host_sizing
from ..inputs import (
    EnergyInput,
    HardwareInput,
    Notes,
    Workload,
    WorkloadInput,
    in_format,
    resolve_workload,
)
from ..memory import memory_breakdown
from ..model import ModelSpec
from ..plan import Parallelism, machine_slots
from ..precision import get_precision
from ..summary import summarise
from ..throughput import (
    setup,
    stream_speed,
    throughput_answer,
)
from ..training import compute_multiplier
from ..zh import said_in
from .costs import duty_warnings, electricity, ownership
from .placing import Serving, least_serving, opening, place_serving, place_training, plan_shown
from .results import Alternative, Estimate


@dataclass(frozen=True)
class Parts:
    """The costly parts of an estimate, each computed only when the answer shows it (a sparse
    answer may name none): the alternatives (a placement each), the summary (and the smaller
    format that fits, which it names), the full-load figures (and the plan that serves most at
    full load), the decode curve, the machines' costs (host, energy and ownership), and the notes
    (what the plan and the decode weights are said to rest on, which only assumptions and
    warnings show), the ends of the speed's ranges with its roofline ceiling (ENDS_FIELDS), and
    the ranges of time to first token and of full-load output (two more prefills and two more
    full-load steps), and the reasons: the memory's parts and what its range rests on, and why
    the job fits or not (memory.components, memory.total_bytes_range, fit.reason, and the
    warnings, which quote the fit's reason). A part shown is the same whether or not the others
    were computed."""

    alternatives: bool = True
    summary: bool = True
    full_load: bool = True
    curve: bool = True
    costs: bool = True
    notes: bool = True
    ends: bool = True
    prefill_range: bool = True
    full_load_range: bool = True
    reasons: bool = True

    def __post_init__(self) -> None:
        # what a part quotes is computed with it: the summary says the full load, the machines'
        # draw and the speed's range and ceiling; the notes are said by the full-load figures and
        # the costs too
        if self.summary or self.notes:
            object.__setattr__(self, "full_load", True)
            object.__setattr__(self, "costs", True)
        if self.notes:
            object.__setattr__(self, "reasons", True)
        if self.summary:
            object.__setattr__(self, "ends", True)
        if self.full_load_range:
            object.__setattr__(self, "full_load", True)


EVERY_PART = Parts()


def estimate(
    model: ModelSpec,
    workload: WorkloadInput,
    hardware: HardwareInput,
    energy: EnergyInput,
    lang: str | None = None,
    price: Price | None = None,
    overhead: float | None = None,
    parts: Parts = EVERY_PART,
    target: Target | None = None,
) -> Estimate:
    """Memory, fit and card count under the engine's plan, speed or training time, electricity,
    warnings, summary; the costly `parts` only when asked (the others empty or null)."""
    notes, resolved = opening(model, workload, cards=(hardware.card,), quiet=not parts.notes)
    card = hardware.card
    speed = train = None
    if resolved.training:
        job = place_training(model, resolved, hardware, notes)
        train, resolved, breakdown, fit, shown = job.answer, job.workload, job.breakdown, job.fit, job.placement
        plan = plan_shown(shown, train)
    else:
        serve = place_serving(model, resolved, hardware, notes, full_load=parts.full_load, said=parts.reasons)
        breakdown, fit, shown = serve.breakdown, serve.fit, serve.placement
        speed = throughput_answer(model, resolved, breakdown, shown, serve.setup, notes, curve=parts.curve,
                                  full_load=serve.full_load, full_load_shown=parts.full_load, ends=parts.ends,
                                  prefill_range=parts.prefill_range, full_load_range=parts.full_load_range)
        plan = plan_shown(shown)
    host = power = owned = None
    if parts.costs:
        host = host_sizing(card, shown.cards, machine_slots(shown.parallelism, shown.cards_per_machine))
        power = electricity(host, card, energy, notes)
        owned = ownership(shown.cards, price, power, overhead, speed, train, notes)
        duty_warnings(card, energy, train, notes)
    language = notes.use("lang", lang, d.LANG)
    bound = speed.bound if speed is not None else "compute"
    text = ""
    if parts.summary:
        assert host is not None and power is not None  # Parts: a summary's costs are computed with it
        fits_in = None if resolved.training or fit.fits or hardware.count is None else \
            _format_that_fits(model, workload, resolved, hardware)
        text = summarise(language, model, resolved, card, breakdown, fit, plan, speed, train, power,
                         host.machines, fits_in)
    compared = _alternatives(model, workload, resolved, hardware, serve if speed is not None else None,
                             None if speed is None else speed.decode_tokens_per_s_expected) \
        if parts.alternatives else ()
    capacity = None
    if target is not None:
        if resolved.training:
            raise InvalidInputError(M.ERROR_TARGET_NEEDS_INFERENCE(), "target")
        capacity = capacity_for(model, resolved, hardware, target, notes)
    return said_in(language, Estimate(
        model=model, card=card, mode=resolved.mode, precision=resolved.precision.name, fits=fit.fits,
        cards_needed=fit.cards_needed, bound=bound, alternatives=compared,
        memory=breakdown, fit=fit, parallelism=plan, throughput=speed, training=train,
        # without Parts.costs the answer does not show energy or host (nor anything made of them)
        energy=power, host=host,  # type: ignore[arg-type]
        ownership=owned, capacity=capacity, lang=language,
        summary=text, workload=resolved, **notes.said()))


INFERENCE_ALTERNATIVES = ("bf16", "fp8", "awq", "q4_k_m")


def _format_that_fits(model: ModelSpec, given: WorkloadInput, workload: Workload,
                      hardware: HardwareInput) -> M.Message | None:
    """Serving that does not fit on the cards asked: the format among the alternatives, smaller
    than the one asked and the largest of them, that fits on those cards, with its speed there
    ("Can Llama 3.1 70B run on two RTX 4090s?" is answered in 4 bits, not only with 8 cards)."""
    smaller = sorted((p for p in (get_precision(n) for n in INFERENCE_ALTERNATIVES)
                      if p.bytes_per_value < workload.precision.bytes_per_value),
                     key=lambda p: -p.bytes_per_value)
    for precision in smaller:
        notes = Notes.unread()
        try:
            resolved = in_format(given, workload, precision.name)
            job = place_serving(model, resolved, hardware, notes, said=False)
        except InvalidInputError:
            continue
        if job.fit.fits:
            return M.SUMMARY_FITS_IN(precision=precision.name, cards=job.fit.count, card=hardware.card.id,
                                     speed=stream_speed(resolved, job.setup))
    return None


TRAINING_ALTERNATIVES = ((None, "selective"), (1, "selective"), (2, "selective"), (3, "selective"),
                         (None, "full"))


def _alternatives(model: ModelSpec, given: WorkloadInput, workload: Workload, hardware: HardwareInput,
                  serve: Serving | None, speed: float | None) -> tuple[Alternative, ...]:
    """The same job in other formats (inference) or other sharding and recomputation
    (training): cards needed on this card, and decode speed or per-card model state; for
    inference also the plan that needs fewer cards, when there is one. `speed` is the answer's
    own tokens/s per stream (its format's, when its plan is the least count's)."""
    out = []
    if not workload.training:
        released = (model.released_precision,) if model.released_precision else ()
        assert serve is not None  # an inference answer was served
        for name in dict.fromkeys((*released, *INFERENCE_ALTERNATIVES)):
            out.append(_inference_alternative(model, given, name, hardware.card, serve, speed))
        if serve is not None and serve.placements.fewer is not None:
            out.append(_fewer_cards(model, workload, hardware, serve))
        return tuple(out)
    for stage, recompute in TRAINING_ALTERNATIVES:
        variant = replace(given, zero_stage=stage, recompute=recompute)
        label = M.ALT_TRAINING(split=M.ALT_GUIDE_SPLIT() if stage is None else M.ALT_ZERO(stage=stage),
                               recompute=recompute)
        out.append(_training_alternative(model, variant, hardware, label))
    return tuple(out)


def _inference_alternative(model: ModelSpec, given: WorkloadInput, name: str, card: Card,
                           serve: Serving, speed: float | None = None) -> Alternative:
    """The job in another format on the least count of the card, on the machines and links the
    answer's own plan found (the same for every format); in the answer's own format, on the
    answer's own memory and least count (and its speed's setup, when it is shown on that count)."""
    label = M.kept(M.ALT_PRECISION, precision=name)  # the same few labels on every answer
    notes = Notes.unread()
    try:
        resolved = in_format(given, serve.workload, name)
        asked = serve.workload  # in_format changes the format, the KV cache's and the plan, no more
        if resolved.precision == asked.precision and resolved.kv_precision == asked.kv_precision \
                and asked.parallelism is None:
            breakdown, least = serve.breakdown, serve.placements.least
            found = None if least is None else (least, serve.setup if serve.placement is least else setup(
                model, resolved, breakdown, card, least.parallelism, serve.fabric, Notes.unread()))
        else:
            breakdown = memory_breakdown(model, resolved, notes, said=False)  # its weights' bytes are said
            found = least_serving(model, resolved, breakdown, card, serve.per_machine, serve.fabric)
    except InvalidInputError as exc:
        return Alternative(label, None, "decode_tokens_per_s_expected", None, M.NOT_ANSWERED(detail=exc.message))
    if found is None:
        return Alternative(label, None, "decode_tokens_per_s_expected", None, M.ALT_DOES_NOT_FIT())
    least, s = found
    own = speed is not None and s is serve.setup  # the answer's own format and plan: the answer's own speed
    return Alternative(label, least.cards, "decode_tokens_per_s_expected", speed if own else stream_speed(resolved, s),
                       _weights_and_plan(breakdown.weights_bytes, least.parallelism))


@functools.lru_cache(maxsize=1024)
def _weights_and_plan(weights_bytes: int, plan: Parallelism) -> M.Message:
    """An alternative's weights and plan, said once for each (the same few on every question of
    a model on a card)."""
    return M.ALT_WEIGHTS(weights_bytes=weights_bytes, plan=plan.said())


def _fewer_cards(model, workload: Workload, hardware: HardwareInput, serve: Serving) -> Alternative:
    """The layer split that holds the job on fewer cards than the engine's tensor plan."""
    fewer, least = serve.placements.fewer, serve.placements.least
    # _alternatives asks only when `fewer` is set, and serving_placements sets it only beside a `least`
    assert fewer is not None and least is not None
    planned = replace(workload, parallelism=fewer.parallelism)
    s = setup(model, planned, serve.breakdown, hardware.card, fewer.parallelism, serve.fabric, Notes.unread())
    return Alternative(M.ALT_PLAN(plan=fewer.parallelism.said()), fewer.cards, "decode_tokens_per_s_expected",
                       stream_speed(planned, s),
                       M.ALT_PIPELINE(cards=fewer.cards, needs=least.cards))


def _training_alternative(model, variant, hardware, label) -> Alternative:
    notes = Notes.unread()
    try:
        resolved = resolve_workload(variant, notes, model)
        job = place_training(model, resolved, replace(hardware, count=None), notes)
    except InvalidInputError as exc:
        return Alternative(label, None, "need_bytes_per_card", None, M.NOT_ANSWERED(detail=exc.message))
    if job.fit.cards_needed is None:
        return Alternative(label, None, "need_bytes_per_card", None, M.ALT_NO_COUNT())
    return Alternative(label, job.fit.cards_needed, "need_bytes_per_card", job.fit.need_bytes_per_card,
                       M.ALT_FLOPS(flops=compute_multiplier(resolved.recompute, resolved.adapters),
                                   plan=job.placement.parallelism.said()))
