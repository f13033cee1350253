"""make validate: invariants on every published case, the median decode error, and the gate."""

import csv
import io
import subprocess
import sys

import pytest

from service.accuracy import calibrate, validate

DECODE = [validate.decode_case(row) for row in validate.read_cases("decode.csv")]
TRAINING = [validate.training_case(row) for row in validate.read_cases("training.csv")]


@pytest.mark.parametrize("case", DECODE, ids=lambda r: r.case[:50])
def test_no_batch_1_measurement_beats_its_ceiling(case):
    assert case.measured <= case.ceiling
    assert case.expected <= case.ceiling


@pytest.mark.parametrize("case", TRAINING, ids=lambda r: r.case[:40])
def test_no_training_run_implies_an_mfu_of_55_percent(case):
    assert 0 < case.implied_mfu < validate.MAX_IMPLIED_MFU


def test_the_median_decode_error_is_within_25_percent():
    assert validate.summary([r.ratio for r in DECODE])["median_error"] <= validate.MAX_MEDIAN_DECODE_ERROR


def test_every_case_names_its_source():
    for name in ("decode.csv", "training.csv"):
        assert all(row["source"].strip() for row in validate.read_cases(name))


def test_make_validate_passes_and_writes_the_table(tmp_path):
    out = tmp_path / "accuracy.md"
    result = subprocess.run([sys.executable, "-m", "service.accuracy.validate", "--out", str(out)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "| batch-1 decode (tokens/s) |" in text and "| training (GPU-hours) |" in text


def _write(path, rows):
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_measurement_above_the_ceiling_fails_validation(tmp_path):
    rows = validate.read_cases("decode.csv")
    rows[0] = {**rows[0], "measured_tokens_per_s": "100000"}
    bad = _write(tmp_path / "decode.csv", rows)
    assert validate.main(["--decode", str(bad), "--out", str(tmp_path / "a.md")]) == 1


def test_an_impossible_training_run_fails_validation(tmp_path):
    rows = validate.read_cases("training.csv")
    rows[0] = {**rows[0], "gpu_hours": "100"}  # would imply an MFU far above 100 %
    bad = _write(tmp_path / "training.csv", rows)
    assert validate.main(["--training", str(bad), "--out", str(tmp_path / "a.md")]) == 1


def test_a_drifted_median_fails_validation(tmp_path):
    rows = [{**row, "measured_tokens_per_s": f"{float(row['measured_tokens_per_s']) / 2:.2f}"}
            for row in validate.read_cases("decode.csv")]
    assert validate.main(["--decode", str(_write(tmp_path / "d.csv", rows)),
                          "--out", str(tmp_path / "a.md")]) == 1


def test_the_calibration_script_measures_and_emits_a_loadable_catalog_entry(tmp_path, capsys):
    from service.overlay import load_catalog_file
    from service.sizing.catalog import packaged_catalogs

    assert calibrate.main(["--backend", "numpy", "--quick", "--card", "rtx-4090"]) == 0
    text = capsys.readouterr().out
    path = tmp_path / "catalog.yaml"
    path.write_text(text)
    card = load_catalog_file(path, packaged_catalogs()).cards.get("rtx-4090-measured")
    assert card.measured_bandwidth_bytes_per_s > 0 and card.measured_dense_flops["bf16"] > 0
    assert card.bandwidth_bytes_per_s == 1008e9  # the datasheet figures come with it


def test_a_slow_devices_entry_still_loads(tmp_path):
    """A CPU under load measures well under 0.05 TFLOP/s; the entry must keep it, not round to 0."""
    from service.overlay import load_catalog_file
    from service.sizing.catalog import packaged_catalogs

    slow = calibrate.Measurement("a busy CPU", 3.2, 0.0312, 1.5, 2_000_000, 3.0)
    path = tmp_path / "catalog.yaml"
    path.write_text(calibrate.catalog_entry(slow, "rtx-4090"))
    card = load_catalog_file(path, packaged_catalogs()).cards.get("rtx-4090-measured")
    assert card.measured_dense_flops["bf16"] == pytest.approx(0.0312e12)
    assert card.measured_bandwidth_bytes_per_s == pytest.approx(3.2e9)


@pytest.mark.parametrize(("n_bytes", "seconds", "gb_per_s"), [(1e9, 1.0, 2.0), (4e9, 0.002, 4000.0)])
def test_copy_bandwidth_counts_read_and_write(n_bytes, seconds, gb_per_s):
    assert calibrate.copy_bandwidth_gb_per_s(n_bytes, seconds) == pytest.approx(gb_per_s)


def test_matmul_rate():
    assert calibrate.matmul_tflops(8192, 2 * 8192**3 / 783.5e12) == pytest.approx(783.5)


def test_the_measured_h200_ceilings_are_used(client):
    body = client.post("/throughput", json={"model": "llama-3.1-8b", "hardware": {"card": "h200-sxm"}}).get_json()
    assert body["achievable_bandwidth_fraction"] == pytest.approx(4300 / 4800, abs=1e-4)
    assert body["decode_tokens_per_s_achievable"] == pytest.approx(body["decode_tokens_per_s_ceiling"] * 4300 / 4800)
    assert body["decode_tokens_per_s_expected"] <= body["decode_tokens_per_s_achievable"]
