"""A vendor's marketing figure as dense figures per precision, with each rule named.

The ladder on current tensor units: dense FP8 and INT8 run at twice dense FP16/BF16, FP4 at
four times, TF32 at half; a "with sparsity" figure is
twice the dense one (guide section 1.3: a sparse INT8 figure is divided by 4 to compare with
dense BF16). GeForce cards quote FP16 with FP16 accumulate, twice the FP32-accumulate rate
training uses.
"""

from dataclasses import dataclass

from . import messages as M
from .errors import InvalidInputError
from .zh import sentences

# Dense rate relative to dense BF16 on tensor units.
LADDER = {"fp4": 4.0, "int4": 4.0, "fp8": 2.0, "int8": 2.0, "bf16": 1.0, "fp16": 1.0, "tf32": 0.5}
ACCUMULATE = ("fp16", "fp32")


@dataclass(frozen=True)
class Normalized:
    value: float
    precision: str
    sparse: bool
    accumulate: str | None
    dense_value: float
    dense_bf16: float
    dense: tuple[tuple[str, float], ...]
    rules: tuple[M.Message, ...]
    summary: str = ""  # the figure in a sentence to quote, in the answer's language


def normalize(value: float, precision: str, sparse: bool, accumulate: str | None = None) -> Normalized:
    """Dense figure in the given precision, its BF16 equivalent, and the whole ladder."""
    key = precision.strip().lower()
    if key not in LADDER:
        raise InvalidInputError(M.ERROR_NORMALIZE_PRECISION(precisions=tuple(LADDER)), "precision")
    if accumulate is not None and accumulate not in ACCUMULATE:
        raise InvalidInputError(M.ERROR_NORMALIZE_ACCUMULATE(accumulate=ACCUMULATE), "accumulate")
    rules: list[M.Message] = []
    dense = value
    if sparse:
        dense /= 2
        rules.append(M.NORMALIZE_SPARSE())
    if accumulate == "fp16" and key in ("fp16", "bf16", "fp8"):
        dense /= 2
        rules.append(M.NORMALIZE_FP16_ACCUMULATE())
    bf16 = dense / LADDER[key]
    if LADDER[key] != 1.0:
        factor = LADDER[key]
        rules.append(M.NORMALIZE_TO_BF16(precision=key, factor=factor) if factor > 1 else
                     M.NORMALIZE_TF32_TO_BF16(precision=key))
    ladder = tuple((name, bf16 * factor) for name, factor in LADDER.items())
    return Normalized(value, key, sparse, accumulate, dense, bf16, ladder, tuple(rules))


def normalize_summary(lang: str, figure: Normalized) -> str:
    """A vendor's figure as the dense figure in its own precision and in BF16."""
    return sentences(lang, [M.SUMMARY_NORMALIZE(value=figure.value, precision=figure.precision.upper(),
                                                dense_value=figure.dense_value, dense_bf16=figure.dense_bf16)])

