"""Numeric formats: bytes per stored value, and which compute rate a format runs at."""

from dataclasses import dataclass

from .errors import UnknownPrecisionError


@dataclass(frozen=True)
class Precision:
    """A storage format for weights or KV cache.

    `bytes_per_value` is the average storage per value; `compute_keys` are the card's dense
    rates to use, in order of preference (weight-only formats compute in half precision).
    """

    name: str
    bytes_per_value: float
    compute_keys: tuple[str, ...]
    note: str


_PRECISIONS = {
    p.name: p
    for p in (
        Precision("fp32", 4.0, ("fp32",), "IEEE single precision"),
        Precision("bf16", 2.0, ("bf16", "fp16"), "bfloat16"),
        Precision("fp16", 2.0, ("fp16", "bf16"), "IEEE half precision"),
        Precision("fp8", 1.0, ("fp8", "bf16", "fp16"), "8-bit float (E4M3/E5M2)"),
        Precision("int8", 1.0, ("int8", "bf16", "fp16"), "8-bit integer"),
        Precision(
            "int4", 0.5, ("bf16", "fp16"), "4-bit integer weights, dequantised to half precision"
        ),
    )
}

_ALIASES = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float8": "fp8",
    "4bit": "int4",
    "8bit": "int8",
}

PRECISION_NAMES = tuple(_PRECISIONS)


def get_precision(name: str, field: str = "precision") -> Precision:
    """The format called `name` (case-insensitive), or UnknownPrecisionError."""
    key = name.strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    try:
        return _PRECISIONS[key]
    except KeyError:
        known = ", ".join(PRECISION_NAMES)
        raise UnknownPrecisionError(f"unknown precision {name!r}; known: {known}", field) from None
