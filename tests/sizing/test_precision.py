"""Quantisation formats: bits per weight with their scales, and what each keeps in 16-bit."""

import pytest
from pytest import approx

from service.sizing.errors import UnknownPrecisionError
from service.sizing.hfconfig import model_from_hf_config
from service.sizing.precision import get_precision
from service.sizing.units import GIB
from service.sizing.weights import decode_read_bytes, expert_fraction_touched, weights_bytes

from .test_hfconfig import LLAMA_31_8B, LLAMA_31_70B, MIXTRAL_8X7B


@pytest.mark.parametrize(
    ("name", "canonical", "bits"),
    [
        ("fp32", "fp32", 32), ("BF16", "bf16", 16), ("float16", "fp16", 16), ("fp8", "fp8", 8),
        ("int8", "int8", 8), ("int4", "int4", 4),
        ("Q8_0", "q8_0", 8.5),  # 34 bytes per block of 32: the block layout, not a measurement
        # The k-quant mixes' whole-file averages are checked against published files
        # (test_file_sizes.py), not restated here: only their names.
        ("q6_k", "q6_k", None), ("Q5_K_M", "q5_k_m", None), ("q4_k_m", "q4_k_m", None),
        ("Q4_0", "q4_0", 4.5), ("q3_k_m", "q3_k_m", None), ("Q2_K", "q2_k", None),
        # GPTQ and AWQ files are checked against published checkpoints (test_file_sizes.py)
        ("gptq", "gptq-int4-g128", None), ("GPTQ-int4-g32", "gptq-int4-g32", None),
        ("gptq-int8-g128", "gptq-int8-g128", None), ("awq", "awq-int4-g128", None),
        ("bnb-int8", "bnb-int8", 8), ("nf4", "nf4", 4.5), ("nf4-dq", "nf4-dq", 4.127),
        ("mxfp4", "mxfp4", 4.25), ("NVFP4", "nvfp4", 4.5),
    ],
)
def test_bits_per_weight(name, canonical, bits):
    precision = get_precision(name)
    assert precision.name == canonical
    if bits is not None:
        assert precision.bits_per_value == approx(bits, abs=1e-3)


@pytest.mark.parametrize("name", ["fp5", "gptq-int4-g100", "awq-int8", "q9_k", ""])
def test_unknown_formats_are_refused(name):
    with pytest.raises(UnknownPrecisionError):
        get_precision(name, "workload.precision")


def test_gguf_q4_0_of_llama_31_70b_matches_the_published_file():
    # refdata models.csv: the Q4_0 GGUF of Llama 3.1 70B Instruct is 37.22 GiB (4.53 bpw).
    spec = model_from_hf_config(LLAMA_31_70B)
    assert weights_bytes(spec, get_precision("q4_0")) / GIB == approx(37.22, rel=0.01)


def test_dense_decode_skips_the_input_embedding_table_only():
    spec = model_from_hf_config(LLAMA_31_8B)
    bf16 = get_precision("bf16")
    assert decode_read_bytes(spec, bf16, 1) == weights_bytes(spec, bf16) - 2 * 128256 * 4096


def test_moe_decode_reads_active_experts_and_memory_holds_all():
    spec = model_from_hf_config(MIXTRAL_8X7B)
    bf16 = get_precision("bf16")
    assert weights_bytes(spec, bf16) == approx(2 * 46.7e9, rel=1e-3)
    assert decode_read_bytes(spec, bf16, 1) == approx(2 * (12.88e9 - 32000 * 4096), rel=1e-3)
    assert decode_read_bytes(spec, bf16, 1024) == approx(decode_read_bytes(spec, bf16, 10**6), rel=1e-6)


@pytest.mark.parametrize(("batch", "fraction"), [(1, 0.25), (2, 1 - 0.75**2), (64, 1 - 0.75**64)])
def test_experts_touched_by_a_batch(batch, fraction):
    assert expert_fraction_touched(8, 2, batch) == approx(fraction)
