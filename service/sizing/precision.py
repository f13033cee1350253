"""Numeric formats for weights and KV cache: bits per value, scales included, and compute rate.

A format's `bits_per_value` is the average storage per weight including its block scales and
zero points. `keeps_embeddings` says the format leaves the embedding table and the output head
in 16-bit (GPTQ, AWQ, bitsandbytes, FP8/INT8 and FP4 checkpoints do; GGUF files quantise them
too, and the GGUF figures below are whole-file averages that already include them).
"""

import functools
import re
from dataclasses import dataclass, replace

from . import messages as M
from .errors import UnknownPrecisionError

HALF = ("bf16", "fp16")


@dataclass(frozen=True)
class Precision:
    """A storage format; `compute_keys` are the card rates to use, in order of preference."""

    name: str
    bits_per_value: float
    compute_keys: tuple[str, ...]
    note: str  # a coded message (messages.Message) once the module has loaded (_coded, below)
    keeps_embeddings: bool = False
    family: str = "float"
    kept_bits_per_value: float = 16.0

    @property
    def bytes_per_value(self) -> float:
        return self.bits_per_value / 8

    @property
    def kept_bytes_per_value(self) -> float:
        """Storage of the tensors the format leaves out of its scope (embeddings, output head,
        or everything but an MoE's experts): 16-bit, or 8-bit Q8_0 in a GGUF file."""
        return self.kept_bits_per_value / 8


# GGUF files of an MXFP4 checkpoint keep the tensors outside the experts at Q8_0, not 16-bit:
# gpt-oss-20b-MXFP4.gguf is 12,109,565,632 bytes (lmstudio-community/gpt-oss-20b-GGUF, as listed
# in two public download catalogs) against 13.76 GB for the BF16-and-MXFP4 safetensors.
GGUF_KEPT_BITS = 8.5
GGUF_ENGINES = ("llama.cpp",)


def as_loaded_by(precision: Precision, engine: str | None) -> Precision:
    """The format as an engine loads it: a GGUF engine stores MXFP4's kept tensors at Q8_0."""
    if engine in GGUF_ENGINES and precision.family == "fp4" and precision.keeps_embeddings:
        return replace(precision, kept_bits_per_value=GGUF_KEPT_BITS,
                       note=M.FORMAT_AS_GGUF(format=precision.note, bits=GGUF_KEPT_BITS))
    return precision


def _gguf(name: str, bpw: float, note: str) -> Precision:
    return Precision(name, bpw, HALF, f"GGUF {name.upper()}: {note}", family="gguf")


# llama.cpp tools/quantize/README.md (ggml-org/llama.cpp), "Llama 2 7B" table: bits per weight
# of the whole file, k-quant mixes and the tensors kept at higher precision included.
_LLAMA_CPP = "whole-file average on Llama 2 7B per llama.cpp's quantize README"

_FIXED: tuple[Precision, ...] = (
    Precision("fp32", 32, ("fp32",), "IEEE single precision"),
    Precision("bf16", 16, ("bf16", "fp16"), "bfloat16"),
    Precision("fp16", 16, ("fp16", "bf16"), "IEEE half precision"),
    Precision("fp8", 8, ("fp8", "bf16", "fp16"), "8-bit float (E4M3) with per-tensor or "
              "per-channel scales; embeddings and output head kept in 16-bit", True),
    Precision("int8", 8, ("int8", "bf16", "fp16"), "8-bit integer weights (W8A8) with "
              "per-channel scales; embeddings and output head kept in 16-bit", True),
    Precision("int4", 4, HALF, "plain 4-bit weights with no scales counted (the guide's 0.5 "
              "B/param); name gptq, awq, nf4 or a GGUF type for a real format's overhead", False,
              "int"),
    _gguf("q8_0", 8.5, "blocks of 32 int8 weights with an fp16 scale (34 bytes per 32)"),
    _gguf("q6_k", 6.56, _LLAMA_CPP + " (the Q6_K block alone is 6.5625)"),
    _gguf("q5_k_m", 5.68, _LLAMA_CPP),
    _gguf("q5_k_s", 5.52, _LLAMA_CPP),
    _gguf("q4_k_m", 4.84, _LLAMA_CPP),
    _gguf("q4_k_s", 4.58, _LLAMA_CPP),
    _gguf("q4_0", 4.5, "blocks of 32 4-bit weights with an fp16 scale (18 bytes per 32); the "
          "output tensor, kept at Q6_K, adds a few hundredths"),
    _gguf("q3_k_m", 3.91, _LLAMA_CPP),
    _gguf("q3_k_l", 4.27, _LLAMA_CPP),
    _gguf("q3_k_s", 3.50, _LLAMA_CPP),
    _gguf("q2_k", 3.35, _LLAMA_CPP + " (attention and output tensors get more bits)"),
    Precision("bnb-int8", 8, ("int8", "bf16", "fp16"), "bitsandbytes LLM.int8(): int8 weights "
              "with a per-row scale; embeddings and output head stay in 16-bit", True, "bnb"),
    Precision("nf4", 4.5, HALF, "bitsandbytes NF4: 4-bit weights with an fp32 absmax per block "
              "of 64 (4 + 32/64); embeddings and output head stay in 16-bit", True, "bnb"),
    Precision("nf4-dq", 4 + 8 / 64 + 32 / (64 * 256), HALF, "bitsandbytes NF4 with double "
              "quantisation (QLoRA): 8-bit absmax per 64, fp32 per 256 of those; embeddings "
              "and output head stay in 16-bit", True, "bnb"),
    Precision("mxfp4", 4.25, ("fp4", "bf16", "fp16"), "OCP MXFP4: E2M1 values with an E8M0 "
              "scale per block of 32 (4 + 8/32); embeddings and output head stay in 16-bit",
              True, "fp4"),
    Precision("nvfp4", 4.5, ("fp4", "fp8", "bf16", "fp16"), "NVIDIA NVFP4: E2M1 values with an "
              "FP8 E4M3 scale per block of 16 (4 + 8/16); embeddings and output head stay in "
              "16-bit", True, "fp4"),
)
# Each format's note is a coded message (its code from the format's name), said in the caller's
# language from the catalog like every other.
_FIXED = tuple(replace(p, note=M.template(f"format_{p.name.replace('-', '_')}", p.note, f"the {p.name} format")())
               for p in _FIXED)
_BY_NAME = {p.name: p for p in _FIXED}

_ALIASES = {
    "float32": "fp32", "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16", "half": "fp16",
    "float8": "fp8", "fp8-e4m3": "fp8", "e4m3": "fp8",
    "w8a8": "int8",
    "4bit": "int4", "8bit": "int8",
    "bnb-8bit": "bnb-int8", "llm.int8": "bnb-int8", "bitsandbytes-int8": "bnb-int8",
    "bnb-nf4": "nf4", "bnb-4bit": "nf4", "bitsandbytes-nf4": "nf4", "nf4-double-quant": "nf4-dq",
    "mx-fp4": "mxfp4", "nv-fp4": "nvfp4", "fp4": "nvfp4",
    "q4_k": "q4_k_m", "q5_k": "q5_k_m", "q3_k": "q3_k_m",
}

# GPTQ and AWQ: b-bit weights, an fp16 scale and a b-bit zero point per group of g weights.
_GROUPED = re.compile(r"^(?P<kind>gptq|awq)(?:[-_](?:int)?(?P<bits>[2348])(?:bit)?)?"
                      r"(?:[-_]g?(?P<group>\d+)g?)?$")
GROUP_SIZES = (32, 64, 128, 256)


def _grouped(match: re.Match, field: str) -> Precision:
    kind = match["kind"]
    bits = int(match["bits"] or 4)
    group = int(match["group"] or 128)
    if group not in GROUP_SIZES or (kind == "awq" and bits != 4):
        raise UnknownPrecisionError(
            M.ERROR_GROUPED_LAYOUT(kind=kind, bits=bits, group=group, group_sizes=GROUP_SIZES), field)
    bpw = bits + (16 + bits) / group
    return Precision(
        f"{kind}-int{bits}-g{group}", bpw, HALF,
        M.FORMAT_GROUPED(kind=kind.upper(), bits=bits, group=group, scale_and_zero_bits=16 + bits), True, kind)


@functools.lru_cache(maxsize=256)  # a grouped format ("awq", "int4-g128") is made once, not each time
def get_precision(name: str, field: str = "precision") -> Precision:
    """The format called `name` (case-insensitive), or UnknownPrecisionError."""
    key = name.strip().lower().replace(" ", "-")
    key = _ALIASES.get(key, key)
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key.replace("-", "_") in _BY_NAME:
        return _BY_NAME[key.replace("-", "_")]
    match = _GROUPED.match(key)
    if match:
        return _grouped(match, field)
    raise UnknownPrecisionError(M.ERROR_UNKNOWN_PRECISION(name=name, known=PRECISION_NAMES), field)


PRECISION_NAMES = tuple(_BY_NAME) + ("gptq", "awq")
