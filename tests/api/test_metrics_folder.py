"""The metrics folder lost, full or failing costs samples, never an answer (service/metrics.py), in
process: the sample files' pages reserved before they are written, failures noted and said in
/metrics and /readyz. tests/deploy/test_operators_files.py does the same to the real server."""

import os

import pytest
from prometheus_client.parser import text_string_to_metric_families

from service import metrics
from service.app import create_app
from service.metrics import FIRST_FILE_BYTES, _ReservedMmapedDict, folder_problem

ESTIMATE = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}


@pytest.fixture()
def fresh_failures(monkeypatch):
    monkeypatch.setattr(metrics, "FAILURES", metrics._Failures())
    return metrics.FAILURES


def test_a_sample_file_has_its_pages_reserved_as_it_grows(tmp_path):
    path = tmp_path / "counter_1.db"
    samples = _ReservedMmapedDict(str(path))
    try:
        assert os.stat(path).st_blocks * 512 >= FIRST_FILE_BYTES  # allocated, not a sparse hole
        for i in range(2000):  # about 200 KB of keys: the file doubles twice
            samples.write_value(f"a sample with a long enough name {i:05d}", float(i), 0.0)
        size = os.stat(path).st_size
        assert size > FIRST_FILE_BYTES and os.stat(path).st_blocks * 512 >= size
        assert dict((k, v) for k, v, _ in samples.read_all_values())["a sample with a long enough name 01999"] == 1999
    finally:
        samples.close()


def test_a_reservation_that_fails_leaves_no_empty_file_behind(tmp_path, monkeypatch):
    def full(fd, offset, size):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(OSError):
        _ReservedMmapedDict(str(tmp_path / "counter_2.db"))
    assert not (tmp_path / "counter_2.db").exists()  # an empty file would break every scrape


def test_what_is_wrong_with_the_folder(tmp_path, monkeypatch, fresh_failures):
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    assert folder_problem() is None  # one process, its own registry
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    assert folder_problem() is None
    metrics._safely(lambda: (_ for _ in ()).throw(OSError(28, "No space left on device", str(tmp_path / "x.db"))))
    assert "failed: OSError: No space left on device" in folder_problem()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "gone"))
    assert folder_problem() == "the metrics folder (PROMETHEUS_MULTIPROC_DIR) is missing"


def test_readyz_names_no_path_of_the_host(tmp_path, monkeypatch, fresh_failures):
    """What is wrong, and the setting to look at, for whoever asks: never where the folder is."""
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "secret-place"))
    ready = create_app({"TESTING": True}).test_client().get("/readyz")
    assert ready.status_code == 503 and "PROMETHEUS_MULTIPROC_DIR" in ready.get_json()["detail"]
    assert "secret-place" not in ready.get_data(as_text=True) and str(tmp_path) not in ready.get_data(as_text=True)


def scrape(client) -> dict[str, float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    return {s.name: s.value for family in text_string_to_metric_families(response.get_data(as_text=True))
            for s in family.samples if not s.labels}


def test_a_folder_that_cannot_be_read_is_said_in_metrics_and_readiness_not_in_answers(client, tmp_path, monkeypatch,
                                                                                      fresh_failures):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    (tmp_path / "counter_999.db").write_bytes(b"")  # cut short: what a full disk leaves
    assert scrape(client)["sizing_metrics_folder_ok"] == 0
    assert client.get("/readyz").status_code == 503
    assert client.post("/v1/estimate", json=ESTIMATE).status_code == 200
    (tmp_path / "counter_999.db").unlink()
    monkeypatch.setattr(metrics, "FAILURES", metrics._Failures())
    assert scrape(client)["sizing_metrics_folder_ok"] == 1 and client.get("/readyz").status_code == 200
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "gone"))
    assert scrape(client) == {"sizing_metrics_folder_ok": 0}
    problem = client.get("/readyz").get_json()
    assert problem["status"] == 503 and "is missing; answers go on" in problem["detail"]


def test_a_worker_start_is_counted_without_failing_however_the_folder_is(fresh_failures):
    metrics.count_worker_start()
    metrics.count_worker_start()
    assert metrics._worker_starts[0]._value.get() >= 2 and fresh_failures.recent() is None
