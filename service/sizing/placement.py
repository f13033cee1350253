"""Placing a job on cards: the plan an engine runs, the least count it can run on, and whether
the job fits the cards asked for.

Serving engines (vLLM, SGLang, TensorRT-LLM) split one copy of a model with tensor parallelism
inside a machine, at a power-of-two degree that divides the heads, then with pipeline stages
(or, for MoE, expert parallelism) across machines; the cards left over serve further copies.
A layer split (llama.cpp, Ollama, HF transformers, exllamav2) spreads one copy over every card.
Training splits with tensor parallelism only when a card cannot hold the activations, and
shards model states over the data-parallel copies (ZeRO).
"""

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from . import defaults as d
from . import memory as m
from . import messages as M
from . import training as tr
from .cards import Card
from .engines import ENGINES, Engine
from .errors import InvalidInputError
from .frozen import stores_fields
from .inputs import HardwareInput, Notes, Workload
from .memory import FitAnswer, MemoryBreakdown, memory_breakdown
from .model import ModelSpec
from .plan import Parallelism, cards_per_machine, check_given, experts_divide, machines_for, tensor_degrees

MAX_SEARCH = 2 ** 10  # candidate copies (each a tensor group times a pipeline or expert degree) tried


@stores_fields
@dataclass(frozen=True)
class Placement:
    """A plan on `cards` cards (it uses parallelism.cards of them) and what its busiest card holds."""

    parallelism: Parallelism
    cards: int
    cards_per_machine: int
    machines: int
    sequences: int | None
    need_bytes_per_card: int
    model_state_bytes_per_card: int
    usable_bytes_per_card: int
    fits: bool
    max_concurrent_sequences: int | None
    zero_stage: int | None
    given: bool

    @property
    def idle_cards(self) -> int:
        return self.cards - self.parallelism.cards

    @property
    def free_bytes_per_card(self) -> int:
        return self.usable_bytes_per_card - self.need_bytes_per_card


def usable_bytes(card: Card, notes: Notes) -> int:
    fraction = notes.use("memory_usable_fraction", None, d.MEMORY_USABLE_FRACTION)
    return m.usable_bytes(card.memory_bytes, fraction)


# --- serving ------------------------------------------------------------------------------


@stores_fields
@dataclass(frozen=True)
class ServingPlacements:
    asked: Placement        # on the cards asked for (or the least count when none was asked)
    least: Placement | None  # the least count the engine's plan runs on; None: no count holds it
    fewer: Placement | None  # fewer cards under a layer split, when the engine's plan needs more
    options: tuple[Placement, ...] = ()  # every copy size that holds the batch on the cards asked


def serving_placements(
    model: ModelSpec, workload: Workload, breakdown: MemoryBreakdown, card: Card,
    count: int | None, per_machine: int, notes: Notes, fewer: bool = True,
) -> ServingPlacements:
    """The engine's plan on `count` cards and on the least count that holds the batch, and (unless
    not `fewer`) the layer split that holds it on fewer cards than the engine's plan."""
    usable = usable_bytes(card, notes)
    engine = ENGINES[workload.engine]
    batch = workload.batch_size

    def place(par: Parallelism, cards: int, given: bool = False) -> Placement:
        return _serving(breakdown, par, cards, batch, usable, per_machine, given)

    given = workload.parallelism
    if given is not None:
        check_given(model, given, False, engine.split == "tensor")
        if count is not None and given.cards != count:
            raise InvalidInputError(M.ERROR_PLAN_COUNT_MISMATCH(plan_cards=given.cards, count=count),
                                    "workload.parallelism")
        asked = place(given, given.cards, True)
        least = _serving_least(model, engine, per_machine, breakdown, batch, usable, place)
        return ServingPlacements(asked, least, None)
    least = _serving_least(model, engine, per_machine, breakdown, batch, usable, place)
    options: tuple[Placement, ...] = ()
    if count is None:
        if least is not None:
            asked = least
        else:
            largest = _largest(model, engine, per_machine)
            asked = place(largest, largest.cards)
    else:
        if engine.split == "tensor":
            options = _copies_on_count(model, engine, per_machine, count, place)
        # The first copy that holds the batch is the engine's plan on the count.
        asked = options[0] if options else _on_count(model, engine, per_machine, count, place)
    layer = None
    if fewer and engine.split == "tensor" and least is not None and least.cards > 1:
        split = _least(lambda par: place(par, par.cards), _layer_groups(model))
        if split is not None and split.cards < least.cards:
            layer = split
    return ServingPlacements(asked, least, layer, options)


def _serving_least(model, engine: Engine, per_machine: int, breakdown: MemoryBreakdown, batch: int,
                   usable: int, place) -> Placement | None:
    """The fewest cards that serve the batch: one copy that holds it all, or, under a tensor split,
    copies of a smaller one that share it when they take fewer cards (or one copy cannot)."""
    single = _least(lambda par: place(par, par.cards), groups(model, engine, per_machine))
    if engine.split != "tensor":
        return single
    bound = single.cards if single is not None else d.MAX_CARDS + 1
    replicated = _least_replicated(model, engine, per_machine, breakdown, batch, usable, place, bound)
    if replicated is not None and (single is None or replicated.cards < single.cards):
        return replicated
    return single


def _least_replicated(model, engine, per_machine, breakdown, batch, usable, place,
                      bound: int) -> Placement | None:
    """The copy size whose copies, each holding as many sequences as it can, serve the batch on
    the fewest cards, below `bound`. A copy is never larger than the count it beats."""
    if not breakdown.kv_cache_bytes_per_sequence:
        return None  # without a KV shape a copy's sequences are not counted
    if batch == 1 or bound == 1:
        return None  # one sequence is never shared by copies; one card is never beaten
    best: tuple[int, Parallelism] | None = None
    holding = groups_holding(model, engine, per_machine,
                             lambda par: bool(breakdown.max_sequences(par, usable)))
    for tried, par in enumerate(holding):
        if par.group >= (best[0] if best else bound) or tried >= MAX_SEARCH:
            break
        most = breakdown.max_sequences(par, usable)
        copies = math.ceil(batch / most)
        if copies > 1 and copies * par.group < (best[0] if best else bound):
            best = (copies * par.group, replace(par, replicas=copies))
    if best is None:
        return None
    placed = place(best[1], best[0])
    return placed if placed.fits else None


def _serving(breakdown: MemoryBreakdown, par: Parallelism, cards: int, batch: int, usable: int,
             per_machine: int, given: bool) -> Placement:
    sequences = math.ceil(batch / par.replicas)
    weights = breakdown.weights_bytes_per_card(par)  # worked out once for the need and the room left
    need = breakdown.serving_need_bytes_per_card(par, sequences, weights)
    per_copy = breakdown.max_sequences(par, usable, weights)
    return Placement(
        parallelism=par, cards=cards, cards_per_machine=per_machine,
        machines=machines_for(par, per_machine, cards), sequences=sequences,
        need_bytes_per_card=need, model_state_bytes_per_card=weights,
        usable_bytes_per_card=usable, fits=need <= usable,
        max_concurrent_sequences=None if per_copy is None else per_copy * par.replicas,
        zero_stage=None, given=given)


def groups(model: ModelSpec, engine: Engine, per_machine: int) -> Iterator[Parallelism]:
    """One copy of the model, smallest first, as the engine would split it."""
    limit = model.layers or d.MAX_CARDS
    if engine.split == "layer":
        yield from _layer_groups(model)
        return
    degrees = tensor_degrees(model, per_machine) or (1,)
    yield from _tensor_groups(degrees)
    t = degrees[-1]
    spread = model.is_moe and engine.expert_parallel
    for k in range(2, d.MAX_CARDS // t + 1):
        if spread and experts_divide(model, k):
            yield Parallelism(tensor=t, expert=k)
        elif k <= limit:
            yield Parallelism(tensor=t, pipeline=k)
        elif not spread or (model.experts and k > model.experts):
            return  # no more stages, and no expert degree beyond the experts divides them


@functools.lru_cache(maxsize=64)
def _tensor_groups(degrees: tuple[int, ...]) -> tuple[Parallelism, ...]:
    """One copy over each tensor degree: the first groups every serving search tries (the same
    few objects, frozen, for every search)."""
    return tuple(Parallelism(tensor=t) for t in degrees)


@dataclass(frozen=True)
class _Probe:
    parallelism: Parallelism
    fits: bool


class _Tried(Protocol):
    """What the searches read of a tried plan: a Placement, or a bare _Probe."""

    @property
    def parallelism(self) -> Parallelism: ...

    @property
    def fits(self) -> bool: ...


_T = TypeVar("_T", bound=_Tried)


def groups_holding(model: ModelSpec, engine: Engine, per_machine: int,
                   holds: Callable[[Parallelism], bool]) -> Iterator[Parallelism]:
    """The engine's copies that `holds` accepts, from the smallest that does (found by the
    galloping search, so a model no copy holds costs a few dozen probes, not thousands)."""
    first = _least(lambda par: _Probe(par, holds(par)), groups(model, engine, per_machine))
    if first is None:
        return
    smallest = first.parallelism.group
    yield from (par for par in groups(model, engine, per_machine)
                if par.group >= smallest and holds(par))


def _layer_groups(model: ModelSpec) -> Iterator[Parallelism]:
    """A layer split over 1, 2, ... cards, up to one layer a card."""
    yield from (Parallelism(pipeline=p) for p in range(1, min(model.layers or d.MAX_CARDS, d.MAX_CARDS) + 1))


def _largest(model: ModelSpec, engine: Engine, per_machine: int) -> Parallelism:
    degrees = tensor_degrees(model, per_machine) or (1,)
    return Parallelism(tensor=degrees[-1]) if engine.split == "tensor" else Parallelism()


def _least(place: Callable[[Parallelism], _T], groups: Iterator[Parallelism]) -> _T | None:
    """The first group that holds the batch. The groups inside one machine are tried in turn;
    beyond it the need falls as machines are added, along the expert groups and along the
    pipeline stages each, so the search gallops, then bisects, over each kind and keeps the
    smaller copy."""
    expert: list[Parallelism] = []
    pipeline: list[Parallelism] = []
    for par in groups:
        if par.pipeline == 1 and par.expert == 1:
            placed = place(par)
            if placed.fits:
                return placed
            continue
        (expert if par.expert > 1 else pipeline).append(par)
        if len(expert) + len(pipeline) >= MAX_SEARCH:
            break
    found = [p for p in (_gallop(place, expert), _gallop(place, pipeline)) if p is not None]
    return min(found, key=lambda p: p.parallelism.group) if found else None


def _gallop(place: Callable[[Parallelism], _T], candidates: list[Parallelism]) -> _T | None:
    """The first candidate that fits, when fitting is monotone along the list."""
    if not candidates:
        return None
    high = 0
    while not place(candidates[high]).fits:
        if high == len(candidates) - 1:
            return None
        high = min(len(candidates) - 1, 2 * high + 1)
    return _bisect(place, candidates[:high + 1])


def _bisect(place: Callable[[Parallelism], _T], candidates: list[Parallelism]) -> _T | None:
    if not candidates or not place(candidates[-1]).fits:
        return None
    low, high = 0, len(candidates) - 1
    while low < high:
        middle = (low + high) // 2
        if place(candidates[middle]).fits:
            high = middle
        else:
            low = middle + 1
    return place(candidates[low])


def _on_count(model, engine, per_machine, count, place) -> Placement:
    """The engine's plan on exactly `count` cards: one copy over all of them (a layer split), or
    the smallest copy that holds its share of the batch, with copies on the cards left over."""
    if engine.split == "layer":
        stages = min(count, model.layers or count)
        return place(Parallelism(pipeline=stages), count)
    best = None
    for par in groups(model, engine, per_machine):
        if par.group > count:
            break
        copies = replace(par, replicas=count // par.group)
        placed = place(copies, count)
        if placed.fits:
            return placed
        best = placed
    return best if best is not None else place(Parallelism(), count)


def _copies_on_count(model, engine, per_machine, count, place) -> tuple[Placement, ...]:
    """Every tensor degree inside a machine whose copies hold the batch on `count` cards, and the
    first multi-machine copy that does: the plans an operator chooses among for throughput."""
    out = []
    for par in groups(model, engine, per_machine):
        if par.group > count:
            break
        placed = place(replace(par, replicas=count // par.group), count)
        if placed.fits:
            out.append(placed)
            if par.pipeline > 1 or par.expert > 1:
                break
    return tuple(out)


# --- training -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingPlacements:
    asked: Placement
    least: Placement | None
    workload: Workload          # with the plan's ZeRO stage
    breakdown: MemoryBreakdown  # at the plan's tensor degree and stage


def training_placements(
    model: ModelSpec, workload: Workload, card: Card, count: int | None, per_machine: int,
    notes: Notes, network_gb_per_s: float | None = None,
) -> TrainingPlacements:
    """The plan a training engine runs on `count` cards (or the least count that holds it); on a
    count, the fastest recipe that fits (_fastest_recipe) over the settings the caller left open."""
    usable = usable_bytes(card, notes)
    breakdowns: dict[tuple, MemoryBreakdown] = {}

    def breakdown(stage: int | None, tensor: int) -> MemoryBreakdown:
        key = (stage, tensor)
        if key not in breakdowns:
            breakdowns[key] = memory_breakdown(model, replace(workload, zero_stage=stage), Notes.unread(), tensor,
                                               said=False)
        return breakdowns[key]

    def place(group: Parallelism, stage: int | None, copies: int, cards: int, given: bool) -> Placement:
        par = replace(group, data=copies)
        b = breakdown(stage, par.tensor)
        need = b.training_need_bytes_per_card(par)
        return Placement(par, cards, per_machine, machines_for(par, per_machine, cards), None, need,
                         b.model_state_bytes_per_card(par), usable, need <= usable, None, stage, given)

    given = workload.parallelism
    if given is not None:
        check_given(model, given, True, True)
    recipes = list(_recipes(model, workload, per_machine))
    copies_given = given.data if given is not None and given.data > 1 else None
    if given is not None:
        count = _count_for_given(count, given, recipes[0][0], copies_given)
    least = _training_least(recipes, place, given is not None)
    if least is None and "recompute" in workload.open_settings and workload.recompute != "full":
        # No count holds it with the activations stored: full recomputation is the next recipe
        # (at micro-batch 1 unless the caller set the micro-batch).
        micro = 1 if "batch_size" in workload.open_settings else workload.batch_size
        full = replace(workload, recompute="full", batch_size=micro)
        if training_placements(model, full, card, count, per_machine, Notes.unread(), network_gb_per_s).least:
            return training_placements(model, full, card, count, per_machine, notes, network_gb_per_s)
    if count is None:
        group, stage = recipes[0]
        asked = least if least is not None else place(group, stage, 1, group.group, given is not None)
    else:
        asked = _training_on_count(recipes, count, place, given is not None)
    held = _held_by_recipe(model, workload, card, count, per_machine, network_gb_per_s) \
        if count is not None and not asked.fits and _recipe_open(workload) else None
    if held is not None:
        notes.assume("recipe", held.recipe.name, M.RECIPE_FITS(recipe=held.recipe.name,
                                                               why=_RECIPE_WHY[held.recipe.name]()))
        return training_placements(model, held, card, count, per_machine, notes, network_gb_per_s)
    chosen = replace(workload, zero_stage=asked.zero_stage, parallelism=asked.parallelism)
    if count is not None and card.kind == "card" and _searchable(workload):
        fastest = _fastest_recipe(model, workload, card, count, per_machine, usable, network_gb_per_s)
        if fastest is not None:
            asked, chosen = fastest
            _recipe_note(chosen, asked, notes)
    final = memory_breakdown(model, chosen, notes, asked.parallelism.tensor)
    _training_reasons(asked, workload, notes)
    return TrainingPlacements(asked, least, chosen, final)


def _recipe_open(workload: Workload) -> bool:
    """A full fine-tune whose memory recipe the caller left open, on the standard one, with no
    ZeRO stage or plan given (a DeepSpeed or Megatron setup asked for as it is)."""
    return (workload.mode == "full_finetune" and "recipe" in workload.open_settings
            and workload.recipe.name == "standard" and workload.zero_stage is None and workload.parallelism is None)


_RECIPE_WHY = {"low-memory": M.RECIPE_LOW_MEMORY, "cpu-offload": M.RECIPE_CPU_OFFLOAD}


def _held_by_recipe(model: ModelSpec, workload: Workload, card: Card, count: int, per_machine: int,
                    network_gb_per_s: float | None) -> Workload | None:
    """The workload on the fastest memory recipe that holds a full fine-tune on `count` cards
    when the standard one does not (training.RECIPES): the others, each with what it runs (its
    recomputation, paged 8-bit states for low-memory where the optimizer was left open), priced by
    the step model; None when none fits."""
    from . import training_time as tt  # the step model prices plans, which it imports from here
    best: tuple[float, Workload] | None = None
    for name in ("low-memory", "cpu-offload"):
        recipe = tr.RECIPES[name]
        variant = replace(workload, recipe=recipe, open_settings=workload.open_settings - {"recipe"})
        if recipe.recompute is not None and "recompute" in workload.open_settings:
            variant = replace(variant, recompute=recipe.recompute)
        if name == "low-memory" and "optimizer" in workload.open_settings:
            variant = replace(variant, optimizer=tr.OPTIMIZERS["adam8bit"])
        placed = training_placements(model, variant, card, count, per_machine, Notes.unread(), network_gb_per_s)
        if not placed.asked.fits:
            continue
        quiet = Notes.unread()
        cluster = tt.cluster_for(card, HardwareInput(card, count, per_machine, network_gb_per_s), quiet)
        peak = tt.peak_for_training(card, variant, quiet)
        step = tt.plan_step(model, placed.workload, placed.asked.parallelism, peak, cluster,
                            tt.global_batch(model, variant, quiet))
        per_token = step.step_s / step.global_batch_tokens
        if best is None or per_token < best[0]:
            best = (per_token, variant)  # its plan and stage are searched again, not given
    return best[1] if best is not None else None


def _count_for_given(count: int | None, given: Parallelism, group: Parallelism,
                     copies_given: int | None) -> int | None:
    """The count a given training plan runs on: the one asked, which its degrees must fit, or,
    with its data-parallel copies given and no count, the cards they multiply to."""
    if count is None:
        return given.cards if copies_given else None
    if copies_given and count != given.cards:
        raise InvalidInputError(M.ERROR_PLAN_COUNT_MISMATCH(plan_cards=given.cards, count=count),
                                "workload.parallelism")
    if count % group.group:
        raise InvalidInputError(M.ERROR_COUNT_NOT_GROUP_MULTIPLE(count=count, group=group.group), "hardware.count")
    return count


def _searchable(workload: Workload) -> bool:
    """A recipe search runs for full training with some setting left open, unless an MFU or a
    scaling efficiency is given: then the time is the guide's formula, the same on every recipe,
    and the first that fits is kept. (Only on catalog cards: the guide's tiers and cards given by
    their figures keep the guide's recipe, as they keep its decode rule.)"""
    if workload.mfu_given or workload.scaling_efficiency is not None:
        return False
    return bool(workload.open_settings) or workload.parallelism is None


def _search_space(model: ModelSpec, workload: Workload, per_machine: int,
                  count: int) -> Iterator[tuple[Parallelism, Workload]]:
    """(one copy's split, the settings) a Megatron or FSDP user would try on `count` cards: tensor
    degrees inside a machine, pipeline stages in powers of two with interleaved stages, ZeRO-1
    (a distributed optimizer) beside model parallelism and FSDP (the guide's even split) or
    ZeRO-1 without it, micro-batches 1-8, selective or full recomputation. What the caller gave
    is kept."""
    from . import training_time as tt  # the step model prices plans, which it imports from here
    open_ = workload.open_settings
    micros = (1, 2, 4, 8) if "batch_size" in open_ else (workload.batch_size,)
    recomputes = ("selective", "full") if "recompute" in open_ else (workload.recompute,)
    given = workload.parallelism
    if given is not None:
        splits = [replace(given, data=1, replicas=1)]
    elif "zero_stage" not in open_ and workload.zero_stage in (2, 3):
        splits = [Parallelism()]  # DeepSpeed ZeRO-2/3 or FSDP asked for: data parallel
    else:
        degrees = tensor_degrees(model, per_machine) or (1,)
        stages = [p for p in (1, 2, 4, 8, 16, 32, 64, 128) if p <= (model.layers or 1)]
        splits = [Parallelism(tensor=t, pipeline=p) for t in degrees for p in stages
                  if t * p <= count and (p == 1 or t == degrees[-1])]
    for split in splits:
        stages_: tuple[int | None, ...]
        if workload.recipe.name != "standard":
            stages_ = (None,)  # the recipe places the state itself
        elif "zero_stage" in open_:
            stages_ = (None, 1) if split.model_parallel == 1 else (1,)
        else:
            stages_ = (workload.zero_stage,)
        virtual = workload.virtual_stages or tt.default_virtual_stages(model, split.pipeline)
        for stage in stages_:
            for recompute in recomputes:
                for micro in micros:
                    yield split, replace(workload, zero_stage=stage, recompute=recompute, batch_size=micro,
                                         virtual_stages=virtual)


def _fastest_recipe(model: ModelSpec, workload: Workload, card: Card, count: int, per_machine: int,
                    usable: int, network_gb_per_s: float | None) -> tuple[Placement, Workload] | None:
    """The recipe with the least step time per token that fits on `count` cards (the earlier on
    a tie), by the step model; None when none fits."""
    from . import training_time as tt  # the step model prices plans, which it imports from here
    quiet = Notes.unread()
    cluster = tt.cluster_for(card, HardwareInput(card, count, per_machine, network_gb_per_s), quiet)
    peak = tt.peak_for_training(card, workload, quiet)
    batch = tt.global_batch(model, workload, quiet)
    breakdowns: dict[tuple, MemoryBreakdown] = {}
    best: tuple[float, Placement, Workload] | None = None
    # Recipes whose copies' micro-batches overfill the global batch grow the batch the caller
    # asked for; they are tried only when no recipe keeps it.
    space = list(_search_space(model, workload, per_machine, count))

    def filled(split: Parallelism, variant: Workload) -> float:
        """The global batch the copies' micro-batches fill, in tokens: whole rounds of them."""
        per_round = variant.batch_size * (count // split.group)
        return math.ceil(batch / variant.context_tokens / per_round) * per_round * variant.context_tokens

    keeps = [(split, variant) for split, variant in space if filled(split, variant) <= batch * BATCH_KEPT]
    grows = [(split, variant) for split, variant in space if filled(split, variant) > batch * BATCH_KEPT]
    for split, variant in keeps + grows:
        if best is not None and filled(split, variant) > batch * BATCH_KEPT:
            break  # a recipe that keeps the batch fits: none that grows it is taken
        copies = count // split.group
        par = replace(split, data=copies)
        key = (variant.zero_stage, par.tensor, variant.batch_size, variant.recompute)
        if key not in breakdowns:
            breakdowns[key] = memory_breakdown(model, variant, Notes.unread(), par.tensor, said=False)
        b = breakdowns[key]
        need = b.training_need_bytes_per_card(par)
        if need > usable:
            continue
        step = tt.plan_step(model, variant, par, peak, cluster, batch)
        per_token = step.step_s / step.global_batch_tokens
        # A split with more model parallelism must be clearly faster than a simpler one found
        # before it: practitioners keep the simpler plan within a few percent.
        margin = 1 - 1e-9 if best is None or par.model_parallel <= best[1].parallelism.model_parallel \
            else 1 - SIMPLER_PLAN_MARGIN
        if best is None or per_token < best[0] * margin:
            placed = Placement(par, count, per_machine, machines_for(par, per_machine, count), None, need,
                               b.model_state_bytes_per_card(par), usable, True, None, variant.zero_stage,
                               workload.parallelism is not None)
            best = (per_token, placed, replace(variant, parallelism=par))
    return None if best is None else (best[1], best[2])


SIMPLER_PLAN_MARGIN = 0.05
# A global batch rounded up to whole rounds of the copies' micro-batches counts as kept within
# this factor (where the answer starts to warn that the batch grew).
BATCH_KEPT = 1.25


def _recipe_note(chosen: Workload, placed: Placement, notes: Notes) -> None:
    par = placed.parallelism
    stage = "FSDP (states split evenly)" if chosen.zero_stage is None else (
        "a distributed optimizer (ZeRO-1)" if chosen.zero_stage == 1 else f"ZeRO-{chosen.zero_stage}")
    virtual = f", {chosen.virtual_stages} interleaved stages a card" if par.pipeline > 1 else ""
    notes.assume("training_recipe", f"{par.describe()}, micro-batch {chosen.batch_size}, "
                 f"{chosen.recompute} recomputation, {stage}{virtual}", M.RECIPE_SEARCH())


_PlaceTraining = Callable[[Parallelism, int | None, int, int, bool], Placement]  # group, stage, copies, cards, given


def _training_least(recipes: list[tuple[Parallelism, int | None]], place: _PlaceTraining,
                    given: bool) -> Placement | None:
    """The fewest cards any recipe holds the job on (the earlier recipe on a tie)."""
    least = None
    for group, stage in recipes:
        def fits(n: int, g: Parallelism = group, s: int | None = stage) -> bool:
            return place(g, s, n, g.group * n, given).fits

        copies = _least_copies(fits)
        if copies is not None and (least is None or group.group * copies < least.cards):
            least = place(group, stage, copies, group.group * copies, given)
    return least


def _recipes(model: ModelSpec, workload: Workload, per_machine: int) -> Iterator[tuple[Parallelism, int | None]]:
    """(one copy's split, ZeRO stage) in the order a practitioner tries them: data parallel with
    the guide's even split of states (FSDP, ZeRO-3-like); tensor parallelism inside a machine
    with a distributed optimizer (Megatron, ZeRO-1); pipeline stages across machines; and the
    even split again when nothing else holds it. A stage the caller gave is kept throughout."""
    stage = workload.zero_stage
    given = workload.parallelism
    if given is not None:
        group = replace(given, data=1, replicas=1)
        if stage is not None or group.group == 1:
            yield group, stage
        else:
            yield group, 1
            yield group, None
        return
    yield Parallelism(), stage
    degrees = tensor_degrees(model, per_machine) or (1,)
    split_stage = stage if stage is not None else 1
    for t in degrees[1:]:
        yield Parallelism(tensor=t), split_stage
    t = degrees[-1]
    p = 2
    while p <= (model.layers or 64):
        yield Parallelism(tensor=t, pipeline=p), split_stage
        p *= 2
    if stage is None:
        for t in degrees[1:]:
            yield Parallelism(tensor=t), None


def _least_copies(fits: Callable[[int], bool]) -> int | None:
    """The least number of data-parallel copies that holds the states; sharding over more copies
    never needs more per card, so this gallops, then bisects."""
    if fits(1):
        return 1
    high = 2
    while not fits(high):
        if high >= d.MAX_CARDS:
            return None
        high = min(d.MAX_CARDS, high * 2)
    low = high // 2
    while low + 1 < high:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle
    return high


def _training_on_count(recipes, count, place, given) -> Placement:
    """The first recipe whose copies hold the job on `count` cards; a count that is not a
    multiple of a copy leaves the rest idle."""
    best = None
    for group, stage in recipes:
        if group.group > count:
            continue
        placed = place(group, stage, count // group.group, count, given)
        if placed.fits:
            return placed
        best = best or placed
    if best is None:
        group, stage = recipes[0]
        best = place(group, stage, max(1, count // group.group), count, given)
    return best


def _training_reasons(asked: Placement, workload: Workload, notes: Notes) -> None:
    par = asked.parallelism
    if asked.idle_cards:
        notes.warn(M.IDLE_CARDS_MULTIPLE(plan=par.said(), idle=asked.idle_cards, cards=asked.cards))
    if asked.given:
        notes.assume("parallelism", par.describe(), M.PLAN_GIVEN())
    elif par.model_parallel == 1:
        notes.assume("parallelism", par.describe(), M.PLAN_DATA_PARALLEL())
    else:
        notes.assume("parallelism", par.describe(), M.PLAN_TENSOR_INSIDE())
    if workload.zero_stage is None:
        notes.assume("zero_stage", "guide even split" if asked.zero_stage is None else asked.zero_stage,
                     M.ZERO_EVEN_SPLIT() if asked.zero_stage is None else M.ZERO_DISTRIBUTED_OPTIMIZER())


# --- the fit, as answered -------------------------------------------------------------------


def fit_answer(asked: Placement, least: Placement | None, card: Card, count_given: bool,
               said: bool = True) -> FitAnswer:
    """Whether the job fits the cards asked for under the engine's plan, and the least count;
    without `said`, not why (the reason null: an answer that shows neither it nor its warnings)."""
    needed = None if least is None else least.cards
    return FitAnswer(
        card_id=card.id, count=asked.cards, count_given=count_given, fits=asked.fits,
        cards_needed=needed, card_memory_bytes=card.memory_bytes,
        usable_bytes_per_card=asked.usable_bytes_per_card,
        need_bytes_per_card=asked.need_bytes_per_card,
        model_state_bytes_per_card=asked.model_state_bytes_per_card,
        free_bytes_per_card=asked.free_bytes_per_card,
        total_bytes=asked.need_bytes_per_card * asked.parallelism.cards,
        max_concurrent_sequences=asked.max_concurrent_sequences,
        reason=_reason(asked, card, needed) if said else None,  # type: ignore[arg-type]  # not shown (Parts)
    )


def _reason(asked: Placement, card: Card, needed: int | None) -> M.Message:
    """Why the plan fits or not, in clauses: what each card holds, what it can give, the idle
    cards, and what is to spare, short or needed (said on the last of those clauses)."""
    par = asked.parallelism
    state, need = asked.model_state_bytes_per_card, asked.need_bytes_per_card
    holds = dict(cards=asked.cards, card=card.id, state_bytes=state, rest_bytes=need - state, need_bytes=need)
    clauses = [M.FIT_HOLDS(**holds) if par.cards == 1 else M.FIT_HOLDS_PLAN(**holds, plan=par.said())]
    usable = dict(usable_bytes=asked.usable_bytes_per_card, memory_bytes=card.memory_bytes)
    if asked.idle_cards:
        clauses.append(M.FIT_USABLE(**usable))
        (plain, spare, short), last = (M.FIT_IDLE, M.FIT_IDLE_SPARE, M.FIT_IDLE_SHORT), \
            dict(idle=asked.idle_cards, cards=asked.cards)
    else:
        (plain, spare, short), last = (M.FIT_USABLE, M.FIT_USABLE_SPARE, M.FIT_USABLE_SHORT), usable
    if needed is None:
        clauses += [plain(**last), M.FIT_NO_COUNT()]
    elif asked.fits:
        clauses.append(spare(**last, spare_bytes=asked.free_bytes_per_card))
    else:
        clauses += [short(**last, short_bytes=-asked.free_bytes_per_card), M.FIT_CARDS_NEEDED(cards=needed)]
    return M.CLAUSES(clauses=tuple(clauses))


def cards_needed(model: ModelSpec, workload: Workload, card: Card,
                 breakdown: MemoryBreakdown | None = None) -> tuple[int | None, int]:
    """The least count of `card` the engine's plan holds the job on (None: no count does), and
    the usable bytes per card. A serving job's `breakdown` is the same on every card: a caller
    comparing cards makes it once."""
    notes = Notes()
    per_machine = cards_per_machine(card, None, notes)
    placed: TrainingPlacements | ServingPlacements
    if workload.training:
        placed = training_placements(model, workload, card, None, per_machine, notes)
    else:
        breakdown = breakdown or memory_breakdown(model, workload, notes)
        placed = serving_placements(model, workload, breakdown, card, None, per_machine, notes, fewer=False)
    least = placed.least
    return (None if least is None else least.cards), placed.asked.usable_bytes_per_card
