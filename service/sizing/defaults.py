"""Every default the service applies, with its value and why; each is reported back when used."""

from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from . import messages as M
from .units import GIB, SECONDS_PER_DAY

MODES = ("inference", "full_finetune", "lora", "qlora", "pretrain")
TRAINING_MODES = ("full_finetune", "lora", "qlora", "pretrain")
LANGS = ("en", "zh")


T = TypeVar("T", float, int, str)


@dataclass(frozen=True)
class Default(Generic[T]):
    """A default value and the reason for it (quoted back to the caller in `assumptions`)."""

    value: T
    note: str  # a coded message (messages.Message) once the module has loaded (_coded, below)


MODE = Default("inference", "no mode given")
PRECISION = Default("bf16", "half precision weights, the guide's default")
QLORA_PRECISION = Default("nf4-dq", "QLoRA keeps the frozen base in NF4 with double quantisation")
CONTEXT_TOKENS = Default(4096, "tokens per sequence (prompt plus output) when none is given")
BATCH_SIZE = Default(1, "one sequence at a time")
OUTPUT_TOKENS = 1000
OUTPUT_TOKENS_NOTE = ("tokens generated per request: 1000 (the length of TensorRT-LLM's published "
                      "1000-in/1000-out benchmark), at most half the context")
GLOBAL_BATCH_TOKENS = Default(4_000_000, "tokens per optimizer step: 4M, Llama 1 and 2's global "
                              "batch (Touvron et al. 2023), when the model publishes none")
MFU = Default(0.4, "guide: training utilisation (MFU) of about 40 %")
DECODE_EFFICIENCY_SINGLE = Default(0.6, "guide: single-card decode reaches about 60 % of its ceiling")
DECODE_EFFICIENCY_DEDICATED = Default(
    0.7, "guide: several cards over a dedicated interconnect keep 70 %+ of the ideal"
)
DECODE_EFFICIENCY_PCIE = Default(0.5, "guide: several cards over PCIe keep about 50 % of the ideal")
RUNTIME_OVERHEAD_BYTES_PER_CARD = Default(
    1 * GIB, "per card: driver context, kernels and framework workspace (1 GiB)"
)
MEMORY_USABLE_FRACTION = Default(
    0.9,
    "share of card memory an engine can allocate; the rest goes to fragmentation and reserved"
    " pools (guide section 6.1; vLLM's default gpu_memory_utilization is 0.9)",
)
GRADIENT_BYTES_PER_PARAM = Default(4, "guide: gradients synchronised in fp32 (7B -> 28 GB)")
OPTIMIZER = Default("adamw", "AdamW with fp32 moments, the common choice")
RECOMPUTE = Default("selective", "FlashAttention-style attention: the score matrix is never "
                    "stored (Korthikanti et al.'s selective recomputation)")
RECOMPUTE_ADAPTERS = Default("full", "LoRA and QLoRA recipes turn on gradient checkpointing")
LORA_RANK = Default(16, "a common LoRA rank")
LORA_TARGETS = Default("all_linear", "adapters on every linear layer of the blocks (QLoRA's recipe)")
OVERLAP = Default(0.8, "share of the backward pass (two thirds of a step) that gradient "
                  "communication can hide behind (bucketed all-reduce)")
PREFILL_EFFICIENCY = Default(0.65, "guide: large matmuls reach 60-70 % of peak")
# Links (service/sizing/links.py): the share of a link's one-way rate a collective reaches, and
# the latency of one round of a collective (a small all-reduce over n cards takes log2(n)
# rounds). From published nccl-tests and engine measurements (docs/links.md): NVLink 4 all-reduce
# bus bandwidth about 370 of 450 GB/s; PCIe 24-26 of 32 GB/s with peer-to-peer, 20-22 without;
# 400 Gb/s InfiniBand 46-48 of 50 GB/s. Small all-reduces: 6-10 us with engines' one-shot
# kernels and 19-24 us with NCCL on 8 H100s; about 42 us over PCIe on 8 cards without
# peer-to-peer; about 30 us between two machines.
LINK_EFFICIENCY = {
    "dedicated": Default(0.8, "collectives reach about 80 % of NVLink's one-way rate (nccl-tests "
                         "bus bandwidth about 370 of 450 GB/s on H100)"),
    "pcie": Default(0.7, "collectives reach about 70 % of the slot's one-way rate (24-26 of 32 GB/s "
                    "with peer-to-peer, 20-22 without)"),
    "network": Default(0.9, "RDMA reaches about 90 % of the NIC line rate (46-48 of 50 GB/s at 400 Gb/s)"),
}
LINK_LATENCY_S = {
    "dedicated": Default(6e-6, "6 us a round over NVLink/xGMI (8 cards: 18 us; engines' one-shot "
                         "kernels 6-10 us, NCCL 19-24 us)"),
    "pcie": Default(14e-6, "14 us a round over PCIe (8 cards without peer-to-peer: about 42 us)"),
    "network": Default(25e-6, "25 us a round between machines (two machines: about 30 us)"),
}
NETWORK_GB_PER_S_PER_MACHINE = {"datacenter": 400.0, "workstation": 25.0, "consumer": 12.5}
NETWORK_NOTE = ("per machine, between machines: 8 x 400 Gb/s in a data-centre server, 200 GbE "
                "for workstations, 100 GbE for consumer builds")
# Datasheet figures are not reached: one H200 measured 4.3 TB/s device-to-device against 4.8
# (0.90) and 769-798 TFLOP/s on a bf16 8192-cube matmul against 989.5 dense (0.79).
ACHIEVABLE_BANDWIDTH_FRACTION = Default(0.9, "measured copy bandwidth reaches about 90 % of the "
                                        "datasheet (one H200: 4.3 of 4.8 TB/s)")
ACHIEVABLE_COMPUTE_FRACTION = Default(0.79, "a large bf16 matmul reaches about 79 % of dense peak "
                                      "(one H200: 769-798 of 989.5 TFLOP/s)")
PRICE_PER_KWH = Default(0.7, "the guide's electricity price (0.7 per kWh)")
CURRENCY = Default("CNY", "the guide's currency")
PUE = Default(1.0, "no cooling or distribution overhead counted (PUE 1.0)")
UTILIZATION = Default(1.0, "running at full rated power whenever on")
HOURS_PER_DAY = Default(24, "running around the clock")
MACHINES = Default(1, "one installation")
YEARS = Default(3, "the guide's three-year horizon for data-centre equipment")
LANG = Default("en", "summary language")

# Guide section 1.1: consumer cards are built for "a few hours a day".
CONSUMER_MAX_HOURS_PER_DAY = 8
# Guide section 5.3: beyond 32 cards network and scheduling complexity rise steeply.
CLUSTER_COMPLEXITY_CARDS = 32
# Runs longer than this without ECC risk days lost to silent memory errors (guide 3.1).
LONG_RUN_S_WITHOUT_ECC = 3 * SECONDS_PER_DAY
# No answer is given for more cards than this.
MAX_CARDS = 100_000


def _coded(name: str, default: Default) -> Default:
    """The default with its note as a coded message, its code from the constant's name."""
    words = name.lower().replace("_", " ")
    return replace(default, note=M.template(f"default_{name.lower()}", default.note, f"the default {words}")())


# Every default above says its note as a coded message (messages.py), so that it can be said in
# the caller's language; a dict of defaults codes each entry under NAME_KEY.
for _name, _value in list(globals().items()):
    if isinstance(_value, Default):
        globals()[_name] = _coded(_name, _value)
    elif isinstance(_value, dict) and _value and all(isinstance(v, Default) for v in _value.values()):
        globals()[_name] = {key: _coded(f"{_name}_{key}", v) for key, v in _value.items()}
OUTPUT_TOKENS_NOTE = M.template("default_output_tokens", OUTPUT_TOKENS_NOTE, "the default output tokens")()
NETWORK_NOTE = M.template("default_network", NETWORK_NOTE, "the default network between machines")()
