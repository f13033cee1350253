"""The weights of a quantised model are the size of its published files: the bits-per-weight
table is checked against real files, not restated.

Sources (each a public document's table):
- localmodels/Llama-2-13B-ggml on Hugging Face, README.md "Provided files" table: the llama.cpp
  k-quant and Q4_0 files of Llama 2 13B (13,015,864,320 parameters), sizes in GB (1e9 bytes).
- lmstudio-community/gpt-oss-20b-GGUF on Hugging Face, file list: gpt-oss-20b-MXFP4.gguf is
  12,109,565,632 bytes (as cited in service/sizing/precision.py).
The table's bits per weight are whole-file averages measured on Llama 2 7B (llama.cpp's quantize
README); a 13B file mixes its tensor types in slightly other shares, so 2 % is allowed.
"""

import pytest
from pytest import approx

from service.sizing import packaged_catalogs
from service.sizing.precision import as_loaded_by, get_precision
from service.sizing.weights import weights_bytes

LLAMA_2_13B_GGML_GB = {"q2_k": 5.51, "q3_k_s": 5.66, "q3_k_m": 6.31, "q3_k_l": 6.93, "q4_0": 7.32,
                       "q4_k_s": 7.37, "q4_k_m": 7.87}


def _model(name):
    return packaged_catalogs().models.get(name, "model").spec


@pytest.mark.parametrize(("precision", "file_gb"), LLAMA_2_13B_GGML_GB.items())
def test_a_llama_2_13b_file_weighs_what_its_format_says(precision, file_gb):
    model = _model("llama-2-13b")
    assert model.params == 13_015_864_320
    assert weights_bytes(model, get_precision(precision)) / 1e9 == approx(file_gb, rel=0.02)


def test_gpt_oss_20b_as_llama_cpp_stores_it_weighs_its_gguf_file():
    """MXFP4 experts, the other tensors at Q8_0 in a GGUF file (not 16-bit as in the safetensors)."""
    stored = as_loaded_by(get_precision("mxfp4"), "llama.cpp")
    assert weights_bytes(_model("gpt-oss-20b"), stored) == approx(12_109_565_632, rel=0.01)
