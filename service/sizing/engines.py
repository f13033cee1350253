"""Decode engines: how close each class comes to the roofline ceiling, and the names callers
use for them."""

from dataclasses import dataclass

from .errors import InvalidInputError


@dataclass(frozen=True)
class Engine:
    """How close an engine class comes to the decode ceiling: the share of bandwidth it streams
    weights at (low, typical, high), and a fixed cost per layer and step (kernel launches and
    synchronisation), which is what holds small models back on fast cards."""

    low: float
    typical: float
    high: float
    layer_overhead_s: float
    why: str


# Calibrated on service/accuracy/data/decode.csv (published batch-1 runs; `make validate` refits
# and reports the spread): llama.cpp from 27 runs on 19 cards, exllamav2 and MLC from their
# READMEs, HF transformers from two h2oGPT runs. Engines without published batch-1 runs keep
# the guide's figures and no per-layer cost.
ENGINES = {
    None: Engine(0.5, 0.6, 0.7, 0.0, "guide: about 60 % of the ceiling on one card, 70 % with a "
                 "tuned engine (median error 20 % over the published runs)"),
    "llama.cpp": Engine(0.5, 0.87, 0.9, 38e-6, "llama.cpp, fitted on 27 published runs: 87 % of "
                        "the bandwidth plus 38 us per layer and token (median error 5 %)"),
    "transformers": Engine(0.3, 0.6, 0.7, 300e-6, "HF transformers generate(): Python and launch "
                           "overhead of about 300 us per layer and token (two h2oGPT runs)"),
    "exllamav2": Engine(0.6, 0.9, 0.9, 20e-6, "exllamav2's README: 90 % of the bandwidth, 20 us per layer"),
    "mlc-llm": Engine(0.6, 0.9, 0.9, 20e-6, "MLC LLM's README: 90 % of the bandwidth, 20 us per layer"),
    "vllm": Engine(0.55, 0.7, 0.8, 0.0, "a tuned serving engine: about 70 % (guide); no published "
                   "batch-1 runs calibrate it yet"),
    "sglang": Engine(0.55, 0.7, 0.8, 0.0, "a tuned serving engine: about 70 % (guide); no published "
                     "batch-1 runs calibrate it yet"),
    "tensorrt-llm": Engine(0.6, 0.75, 0.85, 0.0, "a tuned engine with fused kernels: 70 %+ (guide); no "
                           "published batch-1 runs calibrate it yet"),
}
ENGINE_ALIASES = {"ollama": "llama.cpp", "hf": "transformers", "pytorch": "transformers",
                  "trt-llm": "tensorrt-llm", "tensorrt": "tensorrt-llm", "llamacpp": "llama.cpp",
                  "exllama": "exllamav2", "mlc": "mlc-llm"}
ENGINE_NAMES = tuple(name for name in ENGINES if name) + tuple(ENGINE_ALIASES)


def engine_name(engine: str | None) -> str | None:
    """The engine class a name stands for; InvalidInputError for one the service does not know."""
    if engine is None:
        return None
    key = engine.strip().lower()
    key = ENGINE_ALIASES.get(key, key)
    if key not in ENGINES:
        raise InvalidInputError(f"unknown engine {engine!r}; known: {', '.join(ENGINE_NAMES)}",
                                "workload.engine")
    return key
