"""A plan of parallelism: how one job's work is split over cards, and the machines they sit in.

The degrees multiply to the cards the plan uses:
  tensor    each layer's matrices are split over this many cards, which combine their partial
            results with collectives inside every layer (Megatron-style; llama.cpp's row split)
  pipeline  the layers are split into this many stages, one after another (llama.cpp's layer
            split is a pipeline whose stages a token visits in turn)
  expert    MoE: the routed experts are spread over tensor x expert cards, while each group of
            `tensor` cards keeps its own copy of attention and the dense layers and serves its
            own share of the sequences (attention data-parallel); 1 for a dense model.
            Internally `expert` counts the attention groups; callers and answers speak as engines
            do (vLLM, SGLang, TensorRT-LLM), of the expert degree as the cards the experts spread
            over, tensor x attention groups (see `spanned` and `expert_width`)
  data      training: copies that each take a share of the global batch and reduce gradients
  replicas  serving: independent copies that each serve their own requests
"""

import functools
import math
from dataclasses import dataclass

from . import defaults as d
from . import messages as M
from .cards import Card
from .errors import InvalidInputError
from .frozen import cached, stores_fields
from .host import rack_domain
from .model import ModelSpec

# One machine holds: 8 cards on a data-centre baseboard (HGX, OAM) or in a PCIe server; 4
# dual-slot cards in a workstation tower; 4 consumer cards on a workstation-class board with
# risers and two supplies (a plain desktop takes 2, the second slot often x8).
CARDS_PER_MACHINE = {"datacenter": 8, "workstation": 4, "consumer": 4}
CARDS_PER_MACHINE_NOTE = {line: said() for line, said in M.MACHINE_HOLDS.items()}


@stores_fields
@dataclass(frozen=True)
class Parallelism:
    """Degrees of parallelism (see the module's docstring); their product is the card count."""

    tensor: int = 1
    pipeline: int = 1
    expert: int = 1
    data: int = 1
    replicas: int = 1
    # Routed experts held whole and spread over the tensor cards (expert parallelism over the
    # same cards, all-to-all priced) rather than each split over them; implied when expert > 1.
    expert_spread: bool = False

    def __post_init__(self) -> None:
        if min(self.tensor, self.pipeline, self.expert, self.data, self.replicas) < 1:
            name = next(n for n in ("tensor", "pipeline", "expert", "data", "replicas")
                        if getattr(self, n) < 1)
            raise InvalidInputError(M.ERROR_DEGREE_BELOW_ONE(degree=name), f"workload.parallelism.{name}")

    @property
    def cards(self) -> int:
        return self.tensor * self.pipeline * self.expert * self.data * self.replicas

    @property
    def group(self) -> int:
        """Cards that hold one copy of the model: tensor x pipeline x expert."""
        return self.tensor * self.pipeline * self.expert

    @property
    def model_parallel(self) -> int:
        """Cards one copy of a dense layer stack is split over: tensor x pipeline."""
        return self.tensor * self.pipeline

    @property
    def expert_width(self) -> int:
        """The expert degree as engines give it: the cards one copy's routed experts are spread
        over (1: experts split like every other matrix, or a dense model)."""
        if self.expert > 1 or self.expert_spread:
            return self.tensor * self.expert
        return 1

    def said(self) -> M.Message:
        """The plan in words, as a coded message: "tensor 4 x pipeline 2", "one card"; an MoE's
        experts spread over their cards after it. Said once per plan object (the search's groups
        are the same objects for every answer) and kept with it."""
        return self._words

    @cached
    def _words(self) -> M.Message:
        parts = [M.PLAN_DEGREE[name](degree=getattr(self, name))
                 for name in ("tensor", "pipeline", "expert", "data", "replicas") if getattr(self, name) > 1]
        said = M.PLAN_ONE_CARD() if not parts else parts[-1]
        for part in reversed(parts[:-1]):
            said = M.PLAN_TIMES(first=part, rest=said)
        if self.expert_width > 1:
            said = M.PLAN_EXPERTS_SPREAD(plan=said, cards=self.expert_width)
        return said

    def describe(self) -> str:
        """The plan in English words, as data (an assumption's value): the text of `said`."""
        return str(self.said())


def spanned(par: Parallelism) -> Parallelism:
    """A caller's serving plan, whose expert degree spans the ranks that hold the model as engines
    run it (tensor x attention data-parallel groups: vLLM's and TensorRT-LLM's EP = TP x DP,
    SGLang's --ep-size), in the internal degrees: tensor 8 with expert 8 runs on 8 cards."""
    e, t = par.expert, par.tensor
    if e <= 1:
        return par
    if e % t:
        raise InvalidInputError(M.ERROR_EXPERT_NOT_MULTIPLE_OF_TENSOR(expert=e, tensor=t),
                                "workload.parallelism.expert")
    return Parallelism(tensor=t, pipeline=par.pipeline, expert=e // t, data=par.data,
                       replicas=par.replicas, expert_spread=True)


@stores_fields
@dataclass(frozen=True)
class PlanAnswer:
    """The plan an answer used: its degrees, the cards and machines it occupies, whether the
    caller gave it, and for training how the global batch is filled."""

    tensor: int
    """Cards each layer's matrices are split over, combining partial results every layer."""
    pipeline: int
    """Stages the layers are split into, one after another."""
    expert: int
    """MoE: cards the routed experts spread over (tensor x attention data-parallel groups), as engines count it; 1 for
    a dense model. It includes the tensor cards: cards = pipeline x expert x copies."""
    data: int
    """Training: data-parallel copies, each taking a share of the global batch; 1 when serving."""
    replicas: int
    """Serving: independent copies of the model, each serving its own requests; 1 in training."""
    cards: int
    """Cards the plan uses, idle cards excluded."""
    idle_cards: int
    """Cards asked for that the plan leaves unused (the count is not a multiple of one copy)."""
    machines: int
    """Machines the cards occupy, idle cards included, at cards_per_machine each; a tensor group never straddles two
    machines."""
    cards_per_machine: int
    """Cards one machine holds: hardware.cards_per_machine, else the card's rack-scale link domain (72 in a GB200
    NVL72), else 8 data centre, 4 workstation or consumer."""
    given: bool
    """Whether the caller gave the plan in workload.parallelism; false when the engine's plan or the training recipe
    search chose it."""
    description: M.Message
    """The plan in words, e.g. "tensor 4 x pipeline 9 x replicas 2" or "one card"; an MoE plan names its attention
    data-parallel groups and the cards the experts spread over."""
    micro_batch: int | None = None
    """Training: sequences each data-parallel rank runs per micro-step (workload.batch_size); null when serving."""
    gradient_accumulation: int | None = None
    """Training: micro-batches each rank accumulates per optimizer step to fill the global batch; null when
    serving."""
    global_batch_tokens: int | None = None
    """Training: tokens per optimizer step as run, the asked global batch rounded up to whole micro-batches on every
    rank; null when serving."""

    @property
    def group(self) -> int:
        """Cards that hold one copy of the model: pipeline x the wider of tensor and expert."""
        return self.pipeline * max(self.tensor, self.expert)


def plan_answer(par: Parallelism, cards: int, machines: int, per_machine: int, given: bool,
                training=None) -> PlanAnswer:
    """The plan as answered; `training` (a TrainingAnswer) adds how the batch is filled."""
    return PlanAnswer(
        tensor=par.tensor, pipeline=par.pipeline, expert=par.expert_width, data=par.data,
        replicas=par.replicas, cards=par.cards, idle_cards=cards - par.cards, machines=machines,
        cards_per_machine=per_machine, given=given, description=par.said(),
        micro_batch=None if training is None else training.micro_batch,
        gradient_accumulation=None if training is None else training.gradient_accumulation,
        global_batch_tokens=None if training is None else training.global_batch_tokens)


def cards_per_machine(card: Card, given: int | None, notes) -> int:
    """Cards one machine holds: given, or the rack-scale NVLink domain the card comes in (a GB200
    NVL72 rack is one machine of 72: collectives inside it run over NVLink), or the line's
    typical machine."""
    if given is not None:
        return given
    domain = rack_domain(card)
    if domain is not None:
        return notes.use("cards_per_machine", None, d.Default(
            domain.cards_per_machine, M.RACK_DOMAIN(domain=domain.name, cards=domain.cards_per_machine)))
    return notes.use("cards_per_machine", None,
                     d.Default(CARDS_PER_MACHINE[card.line], CARDS_PER_MACHINE_NOTE[card.line]))


def machine_slots(par: Parallelism, per_machine: int) -> int:
    """Cards one machine carries under the plan: whole tensor groups when a group fits in one
    machine (a group never straddles two), else every slot."""
    if par.tensor <= per_machine:
        return per_machine // par.tensor * par.tensor
    return per_machine


def machines_for(par: Parallelism, per_machine: int, cards: int | None = None) -> int:
    """Machines the plan's cards (or `cards`, idle ones included) occupy."""
    return math.ceil((cards or par.cards) / machine_slots(par, per_machine))


@functools.lru_cache(maxsize=1024)  # every plan search of every answer asks it again for the same model
def tensor_degrees(model: ModelSpec, limit: int) -> tuple[int, ...]:
    """Tensor-parallel degrees a serving engine accepts, up to `limit`: powers of two that divide
    the attention heads, with KV heads divided or replicated (vLLM's rule: kv_heads % t == 0 or
    t % kv_heads == 0). Without head counts every power of two is allowed."""
    out = []
    t = 1
    while t <= limit:
        if tensor_divides(model, t):
            out.append(t)
        t *= 2
    return tuple(out)


def tensor_divides(model: ModelSpec, tensor: int) -> bool:
    """Whether `tensor` cards can split the model's attention heads (and KV heads) evenly."""
    heads, kv = model.attention_heads, model.resolved_kv_heads
    if heads and heads % tensor:
        return False
    return not (kv and model.attention != "mla" and kv % tensor and tensor % kv)


def experts_divide(model: ModelSpec, expert: int) -> bool:
    """Whether `expert` groups can each take an equal share of the routed experts (engines need
    the expert count divisible by the expert-parallel degree)."""
    return not model.experts or model.experts % expert == 0


def check_given(model: ModelSpec, par: Parallelism, training: bool, tensor_rule: bool) -> None:
    """A caller's plan must describe something an engine can run."""
    field = "workload.parallelism"
    if tensor_rule and par.tensor > 1 and not tensor_divides(model, par.tensor):
        raise InvalidInputError(M.ERROR_TENSOR_SPLITS_HEADS(
            tensor=par.tensor, heads=model.attention_heads, kv_heads=model.resolved_kv_heads), f"{field}.tensor")
    if model.layers and par.pipeline > model.layers:
        raise InvalidInputError(M.ERROR_PIPELINE_EXCEEDS_LAYERS(pipeline=par.pipeline, layers=model.layers),
                                f"{field}.pipeline")
    if par.expert_width > 1 and not model.is_moe:
        raise InvalidInputError(M.ERROR_EXPERT_NEEDS_MOE(), f"{field}.expert")
    if par.expert_width > 1 and not experts_divide(model, par.expert_width):
        raise InvalidInputError(M.ERROR_EXPERT_DIVIDES_EXPERTS(expert=par.expert_width, experts=model.experts),
                                f"{field}.expert")
    if training and par.replicas > 1:
        raise InvalidInputError(M.ERROR_TRAINING_COPIES_ARE_DATA(), f"{field}.replicas")
    if not training and par.data > 1:
        raise InvalidInputError(M.ERROR_SERVING_COPIES_ARE_REPLICAS(), f"{field}.data")
