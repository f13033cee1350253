"""The weights of a quantised model are the size of its published files: the bits-per-weight
table is checked against real files, not restated.

Sources (each a public document's table):
- localmodels/Llama-2-13B-ggml on Hugging Face, README.md "Provided files" table: the llama.cpp
  k-quant and Q4_0 files of Llama 2 13B (13,015,864,320 parameters), sizes in GB (1e9 bytes).
- lmstudio-community/gpt-oss-20b-GGUF on Hugging Face, file list: gpt-oss-20b-MXFP4.gguf is
  12,109,565,632 bytes (as cited in service/sizing/precision.py).
- TheBloke/Llama-2-13B-GPTQ on Hugging Face, README.md at commit b7db471d1789802a3a8e3b93cdd66a9f046f17c3,
  "Provided files and GPTQ parameters" table: main (4-bit, group 128) 7.26 GB,
  gptq-4bit-64g-actorder_True 7.51 GB, gptq-4bit-32g-actorder_True 8.00 GB.
- TheBloke/Llama-2-13B-chat-GPTQ on Hugging Face, gptq_model-8bit-128g.safetensors at commit
  0e8ccf13c5cea5cf8dbbe7bd98f4140697876fc9: 13.7 GB (the same architecture as Llama 2 13B).
- hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4 at commit a4e6a739f34e344d11e1faa3c2e47265764ab7cd and
  -AWQ-INT4 at commit 62c1d8421c4f4f80034a3ae710afba203187e3fe, file lists: safetensors shards of
  4.97 GB + 764 MB and 4.68 GB + 1.05 GB (4-bit, group 128, embeddings and head kept in 16-bit).
The table's bits per weight are whole-file averages measured on Llama 2 7B (llama.cpp's quantize
README); a 13B file mixes its tensor types in slightly other shares, so 2 % is allowed. The Hub
prints a file list's sizes to three figures, so the same 2 % holds for those.
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


# GPTQ and AWQ: the packed weights, a 16-bit scale and packed zero point per group, and the
# embeddings and output head left in 16-bit; the published files, not the formula, are the check.
# (Llama 3.1 8B's 128,256-token tables are a quarter of its 4-bit file: counted at 4 bits, the
# answer would be 4.2 GB, 27 % short.)
@pytest.mark.parametrize(("model", "precision", "file_gb"), [
    ("llama-2-13b", "gptq-int4-g128", 7.26),
    ("llama-2-13b", "gptq-int4-g64", 7.51),
    ("llama-2-13b", "gptq-int4-g32", 8.00),
    ("llama-2-13b", "gptq-int8-g128", 13.7),
    ("llama-3.1-8b", "gptq-int4-g128", 4.97 + 0.764),
    ("llama-3.1-8b", "awq-int4-g128", 4.68 + 1.05),
])
def test_a_gptq_or_awq_checkpoint_weighs_its_published_files(model, precision, file_gb):
    assert weights_bytes(_model(model), get_precision(precision)) / 1e9 == approx(file_gb, rel=0.02)

