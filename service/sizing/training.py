"""Training memory per card: model states under ZeRO and model parallelism, activations with
and without recomputation, optimizers, and LoRA adapters.

Two accountings of model states, each named in the answer:
  guide       16 B/param (bf16 weights 2, bf16 gradients 2, fp32 master 4, Adam m 4, v 4),
              split evenly over the cards, as the guide does (ZeRO-3/FSDP-like).
  deepspeed   what DeepSpeed's estimators count for ZeRO stage 0-3 (deepspeed/runtime/zero/
              stage_1_and_2.py estimate_zero2_model_states_mem_needs, stage3.py
              estimate_zero3_model_states_mem_needs): bf16 weights and gradients 4 B, plus
              fp32 master, optimizer state and an fp32 gradient partition (16 B with Adam).
"""

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import messages as M

if TYPE_CHECKING:
    from .plan import Parallelism

MODEL_FLOPS_PER_PARAM_TOKEN = 6  # forward 2, backward 4
HALF_BYTES = 2
FP32_BYTES = 4


@dataclass(frozen=True)
class Optimizer:
    """An optimizer's state per parameter, by buffer."""

    name: str
    states: tuple[tuple[M.Template, float], ...]  # each state's name (a memory part) and bytes per parameter
    note: str

    @property
    def state_bytes_per_param(self) -> float:
        return sum(b for _, b in self.states)


OPTIMIZERS = {
    o.name: o
    for o in (
        Optimizer("adamw", ((M.PART_ADAM_M_FP32, 4), (M.PART_ADAM_V_FP32, 4)), "AdamW: fp32 m and v"),
        Optimizer("adam8bit", ((M.PART_ADAM_M_8BIT, 1), (M.PART_ADAM_V_8BIT, 1)),
                  "8-bit Adam (bitsandbytes): m and v in 8 bits with block scales"),
        Optimizer("sgd", ((M.PART_MOMENTUM_FP32, 4),), "SGD with momentum: one fp32 buffer"),
    )
}
RECOMPUTE_MODES = ("none", "selective", "full")


@dataclass(frozen=True)
class MemoryRecipe:
    """Where a full fine-tune keeps its training state, as the recipes practitioners run on few
    cards do: what stays on the card, what goes to host memory, and the recomputation it runs."""

    name: str
    master_on_card: bool  # fp32 master weights on the card (mixed precision); else none or on the host
    states_on_card: bool  # the optimizer's states on the card; else paged or offloaded to host memory
    gradients_whole: bool  # every gradient held until the step; else each freed as its step runs in backward
    recompute: str | None  # the recomputation it runs with (None: the workload's)
    host_step: bool  # the optimizer step runs on the host CPU (offload), not the card


# standard:    mixed precision as DeepSpeed and Megatron run it: bf16 weights and gradients, fp32
#              master weights and the optimizer's states on the cards.
# low-memory:  torchtune's single-device full fine-tune (recipes/full_finetune_single_device.py):
#              bf16 weights and no fp32 master, the optimizer step fused into the backward pass
#              (optimizer_in_bwd: each gradient freed as its parameter steps), bitsandbytes' paged
#              8-bit AdamW (states paged to host memory as the card fills), activation checkpointing.
# cpu-offload: ZeRO-Offload / FSDP CPU offload: fp32 master weights and optimizer states in host
#              memory and the optimizer step on the CPU; bf16 gradients go out and weights come back
#              over PCIe each step.
RECIPES = {r.name: r for r in (
    MemoryRecipe("standard", True, True, True, None, False),
    MemoryRecipe("low-memory", False, False, False, "full", False),
    MemoryRecipe("cpu-offload", False, False, True, None, True),
)}
# Seconds the host CPU spends per parameter on an Adam step of fp32 master weights and states
# (an assumption: a vectorised CPU Adam touches 16 B a parameter at some 20-40 GB/s of host
# memory bandwidth); fine-tunes with CPU offload are scored in `make validate`'s fine-tuning
# regime, whose range carries this figure's error.
HOST_ADAM_S_PER_PARAM = 1e-9

# Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
# section 4: per layer, 16-bit activations, sbh x (34 + 5as/h): attention block 11 sbh +
# 5as^2b (scores, softmax, dropout), MLP 19 sbh, two layer norms 4 sbh.
ATTENTION_SBH, MLP_SBH, NORMS_SBH, SCORES_ASB = 11, 19, 4, 5


def guide_states_per_card(params: int, bytes_per_param: float, cards: int) -> int:
    """The guide's model state (params x 16 B) split evenly over the cards, in bytes."""
    return math.ceil(params * bytes_per_param / cards)


def shard_params(params: int, expert_params: int, par: "Parallelism") -> tuple[float, float, float]:
    """(parameters one card holds, of them routed-expert ones, copies of a dense parameter): the
    dense ones split over tensor x pipeline and copied on data x expert ranks, the experts split
    over tensor x expert x pipeline and copied on data ranks only."""
    dense = (params - expert_params) / par.model_parallel
    experts = expert_params / (par.model_parallel * par.expert)
    return dense + experts, experts, par.data * par.expert


def deepspeed_states_per_card(
    params: int, largest_layer_params: int, stage: int, par: "Parallelism",
    optimizer: Optimizer, mixed_precision: bool = True, expert_params: int = 0,
) -> int:
    """Model states per card under ZeRO `stage` over the data-parallel copies, in bytes.

    Model parallelism first divides the parameters (tensor x pipeline, and expert for the routed
    experts); ZeRO shards the rest over the copies that hold the same shard (data x expert for
    dense parameters, data for experts). DeepSpeed's estimators: stage 2, 4P + 16P/N; stage 3,
    4 x largest layer + 18P/N (Adam, mixed precision). Stage 1 shards what stage 2's estimator
    shards; stage 0 shards nothing.
    """
    held, experts, dense_copies = shard_params(params, expert_params, par)
    dense = held - experts
    weights = HALF_BYTES if mixed_precision else FP32_BYTES
    gradients = HALF_BYTES if mixed_precision else FP32_BYTES
    master = FP32_BYTES if mixed_precision else 0
    fp32_gradients = FP32_BYTES if mixed_precision else 0
    sharded = master + optimizer.state_bytes_per_param + fp32_gradients
    spread = dense / dense_copies + experts / par.data  # a card's share of the sharded states
    if stage == 0:
        return math.ceil(held * (weights + gradients + sharded))
    if stage in (1, 2):
        return math.ceil(held * (weights + gradients) + spread * sharded)
    return math.ceil(4 * largest_layer_params / par.model_parallel + spread * (weights + sharded))


@dataclass(frozen=True)
class BlockShape:
    """What a layer's activations depend on. With `intermediate` known the block is the modern
    gated-MLP, dropout-free kind; without it, the GPT block Korthikanti et al. describe."""

    hidden: int
    heads: int | None = None
    kv_dim: int | None = None
    intermediate: int | None = None
    experts_per_token: int = 1

    def stored_sbh(self) -> float:
        """Bytes stored per token and hidden unit for one layer, the score matrix aside.

        GPT block (Korthikanti et al. 2022, section 4): attention 11, MLP 19, norms 4: 34.
        Gated, dropout-free block (the same accounting, no dropout masks): the QKV input, Q,
        the output-projection input and two norm inputs (2 each, 10), K and V (4 kv/h), and
        the MLP's input (2) with gate, up, activation and down inputs (8 I/h).
        """
        k = self.experts_per_token
        if self.intermediate is None:
            return ATTENTION_SBH + NORMS_SBH + MLP_SBH * k
        kv = (self.kv_dim or self.hidden) / self.hidden
        return 10 + 4 * kv + (2 + 8 * self.intermediate / self.hidden) * k

    def scores_per_asb(self) -> int:
        """Score-matrix bytes per head x s^2 x b when it is stored (eager attention): softmax
        output, dropout mask and output for a GPT block (5); the softmax output alone (2)."""
        return SCORES_ASB if self.intermediate is None else 2


def layer_activation_bytes(
    shape: BlockShape, sequence: int, micro_batch: int, tensor: int, recompute: str
) -> float:
    """One layer's stored activations on one card, in bytes (16-bit).

    With tensor parallelism the sequence-parallel form applies (everything divided by t).
    none: stored sbh plus the score matrix (eager attention); selective (or FlashAttention,
    which never stores the scores): stored sbh; full: the layer input only, 2 sbh.
    """
    sbh = sequence * micro_batch * shape.hidden
    if recompute == "full":
        return 2 * sbh / tensor
    scores = 0
    if recompute == "none" and shape.heads:
        scores = shape.scores_per_asb() * shape.heads * sequence * sequence * micro_batch
    return (shape.stored_sbh() * sbh + scores) / tensor


def activation_bytes(
    shape: BlockShape, layers: int, sequence: int, micro_batch: int, vocab: int | None,
    tensor: int, recompute: str,
) -> int:
    """Stored activations on the busiest card, in bytes.

    Pipeline parallelism does not reduce it: with 1F1B the first stage holds p micro-batches
    of L/p layers. Full recomputation adds one layer's activations (the layer being
    recomputed); the output logits for the loss are fp32, 4 s b V / t, unchunked.
    """
    total = layers * layer_activation_bytes(shape, sequence, micro_batch, tensor, recompute)
    if recompute == "full":
        total += layer_activation_bytes(shape, sequence, micro_batch, tensor, "selective")
    if vocab:
        total += FP32_BYTES * sequence * micro_batch * vocab / tensor
    return math.ceil(total)


ADAPTER_FLOPS_PER_PARAM_TOKEN = 4  # frozen base: forward 2, backward to the activations 2
RECOMPUTE_FLOPS_PER_PARAM_TOKEN = 2  # full recomputation runs each forward pass again


def model_flops_per_param_token(adapters: bool) -> int:
    """Model FLOPs per parameter and token: 6 (forward 2, backward 4: activations and weight
    gradients); 4 for LoRA, whose frozen base computes no weight gradients (the adapters'
    own FLOPs are a fraction of a percent)."""
    return ADAPTER_FLOPS_PER_PARAM_TOKEN if adapters else MODEL_FLOPS_PER_PARAM_TOKEN


def compute_multiplier(recompute: str, adapters: bool = False) -> float:
    """Hardware FLOPs per parameter per token: the model's 6 (4 for LoRA), plus 2 when every
    layer's forward is recomputed (Korthikanti et al.: full recomputation costs a third more)."""
    extra = RECOMPUTE_FLOPS_PER_PARAM_TOKEN if recompute == "full" else 0
    return float(model_flops_per_param_token(adapters) + extra)


def lora_adapter_params(linear_shapes, rank: int, targets: str) -> int:
    """r x (fan_in + fan_out) for each targeted linear layer (A is r x in, B is out x r)."""
    wanted = {"attention"} if targets == "attention" else {"attention", "mlp", "expert"}
    return sum(rank * (fan_in + fan_out) * count
               for tag, fan_in, fan_out, count in linear_shapes if tag in wanted)


# PEFT keeps adapters in fp32 over a quantised or 16-bit base: weights 4, gradients 4, plus
# the optimizer's state.
def lora_bytes_per_adapter_param(optimizer: Optimizer) -> float:
    return FP32_BYTES + FP32_BYTES + optimizer.state_bytes_per_param
