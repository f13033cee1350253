"""Engines: how close each class comes to the roofline, what one decode step costs it beyond the
bytes it reads, how it spreads a model over several cards, and the names callers use for them."""

from dataclasses import dataclass, replace

from . import messages as M
from .errors import InvalidInputError
from .frozen import keeps_hash


@keeps_hash
@dataclass(frozen=True)
class Engine:
    """An engine class.

    low, typical, high   share of the memory bandwidth it streams weights and KV cache at
    layer_overhead_s     fixed cost per layer and decode step on one card (kernel launches and
                         synchronisation), what holds small models back on fast cards
    moe_layer_overhead_s extra fixed cost per MoE layer and step (routing, gathering experts)
    sequence_overhead_s  host work per running sequence and step (sampling, logits, scheduling,
                         detokenising), what holds small models back at large batches
    request_overhead_s   fixed time a request spends before its first token besides its prefill
                         (admission, tokenising, scheduling, the first decode step and sampling,
                         the answer's first bytes), what a roofline does not see at light load
    collective_s         its own cost per tensor-parallel collective, beyond the link's latency
    hop_s                its own cost per pipeline hop (synchronising two cards), beyond the link's
    syncs_per_layer      tensor-parallel collectives per layer: 2 for Megatron-style splits (after
                         attention and after the MLP); llama.cpp's row split gathers the result of
                         every split matrix on the main card
    split                how it spreads one copy of a model over the cards of a machine by default:
                         "layer" (pipeline stages a token visits in turn) or "tensor"
    pipelined            whether pipeline stages work on different requests at once (serving
                         engines) or wait for each other (a layer split)
    expert_parallel      whether it spreads MoE experts over machines (expert parallelism)
    max_batch            its default cap on sequences running at once (None: memory decides; a
                         larger batch asked for raises it)
    large_card_batch     its cap instead on cards of at least LARGE_CARD_GIB that are not A100s
                         (None: max_batch everywhere)
    compute_efficiency   share of dense peak its matmuls reach when compute binds (low, typical,
                         high); None: the guide's 60-70 % for large matmuls
    moe_compute_share    what its expert matmuls (many small, uneven grouped GEMMs, with routing and
                         token permutation) reach, as a share of its dense matmuls' rate
    hbm_efficiency       its bandwidth share (low, typical, high) on HBM cards where it differs:
                         small batch-1 kernels keep too few requests in flight to fill HBM
    quantized_factor     the share of its 16-bit bandwidth its kernels keep on quantised weights
                         (dequantising costs it more than it saves in bytes)
    expert_half_width    the routed experts' intermediate size at which its expert matmuls reach half
                         of moe_compute_share (0: the width does not matter)
    fp4_compute_share    what its matmuls reach through a card's FP4 rate, as a share of what they reach
                         at 8 or 16 bits (block scales and activation quantisation ride on every
                         FP4 product)
    windowed_kv          whether it keeps only a sliding-window layer's window of KV cache by default
                         (False: it caches and attends over the whole context unless told)
    fitted               which of the figures are fitted on published runs, in words
    """

    low: float
    typical: float
    high: float
    layer_overhead_s: float
    why: str
    moe_layer_overhead_s: float = 0.0
    sequence_overhead_s: float = 0.0
    request_overhead_s: float = 0.0
    collective_s: float = 0.0
    hop_s: float = 0.0
    syncs_per_layer: int = 2
    split: str = "tensor"
    pipelined: bool = True
    expert_parallel: bool = False
    max_batch: int | None = None
    fitted: str = ""
    compute_efficiency: tuple[float, float, float] | None = None
    moe_compute_share: float = 1.0
    hbm_efficiency: tuple[float, float, float] | None = None
    quantized_factor: float = 1.0
    windowed_kv: bool = True
    large_card_batch: int | None = None
    fp4_compute_share: float = 1.0
    expert_half_width: float = 0.0


# vLLM's default max_num_seqs: 1,024 on cards of at least 70 GiB other than A100s ("For GPUs like
# H100 and MI300x, use larger default values"), 256 elsewhere (vllm-project/vllm
# vllm/engine/arg_utils.py @ 99d7eb5d, EngineArgs' usage-context defaults).
LARGE_CARD_GIB = 70
LARGE_CARD_EXCLUDED = ("a100",)


def batch_cap(engine: Engine, memory_gib: float, card_id: str) -> int | None:
    """The engine's default cap on sequences running at once on this card."""
    if engine.large_card_batch and memory_gib >= LARGE_CARD_GIB \
            and not card_id.startswith(LARGE_CARD_EXCLUDED):
        return engine.large_card_batch
    return engine.max_batch


# Calibrated on the published runs in service/accuracy/data/ (`make validate` reports the spread
# per regime, `make fit` refits the grids in service/accuracy/fit.py). Engines without published
# runs keep the guide's figures, and constants no run pins down are said to be assumed.
_SERVING_MATMULS = (0.45, 0.55, 0.65)  # at full load: TensorRT-LLM's 546 runs
# Routed experts' width at which their matmuls keep half the expert share: fitted on TensorRT-LLM's
# MoE runs (Mixtral 14,336 wide, Qwen3 768-1,536), assumed alike for the other serving engines.
_EXPERT_HALF_WIDTH = 4000.0
# trtllm-bench, which measures TensorRT-LLM's published throughput, caps the running batch at
# 4,096 ("Cap total batch size to avoid decoder buffer size becoming too large":
# NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py @ a7e572fb, finetune_setting).
TRTLLM_BENCH_MAX_BATCH = 4096
ENGINES: dict[str | None, Engine] = {
    "llama.cpp": Engine(
        0.5, 0.87, 0.9, 38e-6, "llama.cpp, fitted on 27 published runs: 87 % of the bandwidth plus "
        "38 us per layer and token (median error 5 %)", collective_s=60e-6, hop_s=700e-6,
        syncs_per_layer=7, split="layer", pipelined=False,
        hbm_efficiency=(0.3, 0.45, 0.65),
        fitted="bandwidth share and per-layer cost on one card; 700 us a hop of a layer split, 60 us "
               "a sync of a row split and 45 % of HBM bandwidth, on 132 runs over 1-16 cards"),
    "transformers": Engine(0.3, 0.6, 0.7, 300e-6, "HF transformers generate(): Python and launch "
                           "overhead of about 300 us per layer and token (two h2oGPT runs)",
                           split="layer", pipelined=False, max_batch=1,
                           fitted="per-layer cost (two runs)"),
    "exllamav2": Engine(0.6, 0.9, 0.9, 20e-6, "exllamav2's README: 90 % of the bandwidth, 20 us per "
                        "layer", split="layer", pipelined=False),
    "mlc-llm": Engine(0.6, 0.9, 0.9, 20e-6, "MLC LLM's README: 90 % of the bandwidth, 20 us per layer"),
    "gpt-fast": Engine(
        0.7, 0.8, 0.85, 40e-6, "gpt-fast (PyTorch, torch.compile): 80 % of the bandwidth and 40 us per "
        "layer, 80 % of that on int8/int4 weights", quantized_factor=0.8,
        fitted="bandwidth share, per-layer cost and the share kept on quantised weights, on its "
               "README's 27 runs on 1-8 A100s (median error 3 %)"),
    "vllm": Engine(
        0.55, 0.7, 0.8, 60e-6, "a tuned serving engine: about 70 % of the bandwidth (guide), 60 us per "
        "layer and 150 us more per MoE layer", moe_layer_overhead_s=150e-6, expert_parallel=True,
        max_batch=256, large_card_batch=1024, compute_efficiency=(0.45, 0.55, 0.65), sequence_overhead_s=20e-6,
        request_overhead_s=0.05, expert_half_width=_EXPERT_HALF_WIDTH,
        fitted="per-layer and per-MoE-layer cost on one-stream runs; matmul share and host work per "
               "sequence under load on full-load runs on Instinct cards (AMD's and Oracle's tables); 50 ms "
               "a request before its first token on light-load runs (GPUStack's); experts' half width "
               "assumed as TensorRT-LLM's"),
    "sglang": Engine(
        0.55, 0.7, 0.8, 0.0, "a tuned serving engine: about 70 % of the bandwidth (guide), 500 us more "
        "per MoE layer", moe_layer_overhead_s=500e-6, expert_parallel=True,
        compute_efficiency=_SERVING_MATMULS, expert_half_width=_EXPERT_HALF_WIDTH, request_overhead_s=0.05,
        fitted="the per-MoE-layer cost on 3 DeepSeek runs (thin: one model); 50 ms a request before its "
               "first token on light-load runs (SGLang's cookbook, GPUStack's); matmul share under load and "
               "experts' half width assumed as TensorRT-LLM's"),
    "tensorrt-llm": Engine(
        0.6, 0.75, 0.85, 0.0, "a tuned engine with fused kernels: 75 % of the bandwidth, matmuls at "
        "55 % of peak under load, 200 us more per MoE layer", moe_layer_overhead_s=200e-6,
        expert_parallel=True, compute_efficiency=_SERVING_MATMULS, moe_compute_share=0.85,
        sequence_overhead_s=5e-6, windowed_kv=False, fp4_compute_share=0.7, max_batch=TRTLLM_BENCH_MAX_BATCH,
        expert_half_width=_EXPERT_HALF_WIDTH,
        fitted="bandwidth share, matmul share of peak, expert matmul share, per-MoE-layer cost, host "
               "work per running sequence (5 us), the share kept through the FP4 rate (0.7) and the experts' "
               "half width (4,000) on 546 "
               "published runs from 4 sources (TensorRT-LLM's perf-overview, MLPerf Inference v5.1, "
               "NVIDIA's blogs), each regime weighed alike"),
}
# No engine named: a stated default, never a costless one. A buyer who names none gets the most
# deployed serving engine's figures (vLLM's, fitted as above); the guide's tiers keep the guide's
# own rule (throughput.setup).
DEFAULT_ENGINE = "vllm"
# Each engine's reasons are coded messages (messages.py), said in the caller's language.
for _name, _engine in list(ENGINES.items()):
    _code = "".join(ch if ch.isalnum() else "_" for ch in str(_name))
    ENGINES[_name] = replace(
        _engine, why=M.template(f"engine_{_code}_why", _engine.why, f"what {_name}'s figures rest on")(),
        fitted=M.template(f"engine_{_code}_fitted", _engine.fitted, f"what {_name}'s fitted figures were fitted on")()
        if _engine.fitted else "")
DEFAULT_ENGINE_WHY = M.template(
    "engine_default_why", "no engine named: a tuned serving engine assumed, with vLLM's figures ({why}); name the "
    "engine for its own", "no engine was named: the default engine's figures are used")
ENGINES[None] = replace(ENGINES[DEFAULT_ENGINE], why=DEFAULT_ENGINE_WHY(why=ENGINES[DEFAULT_ENGINE].why))
ENGINE_ALIASES = {"ollama": "llama.cpp", "hf": "transformers", "pytorch": "transformers",
                  "trt-llm": "tensorrt-llm", "tensorrt": "tensorrt-llm", "llamacpp": "llama.cpp",
                  "exllama": "exllamav2", "mlc": "mlc-llm", "gptfast": "gpt-fast",
                  # AutoAWQ generates through transformers' generate() with its fused AWQ modules
                  "autoawq": "transformers"}
ENGINE_NAMES = tuple(name for name in ENGINES if name) + tuple(ENGINE_ALIASES)


def engine_name(engine: str | None) -> str | None:
    """The engine class a name stands for; InvalidInputError for one the service does not know."""
    if engine is None:
        return None
    key = engine.strip().lower()
    key = ENGINE_ALIASES.get(key, key)
    if key not in ENGINES:
        raise InvalidInputError(M.ERROR_UNKNOWN_ENGINE(engine=engine, known=ENGINE_NAMES), "workload.engine")
    return key
