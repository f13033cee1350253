"""Two instances on one host, PROMETHEUS_MULTIPROC_DIR unset: each master makes a metrics folder
of its own, so starting one neither wipes nor shares the other's counts, and each removes its
folder when it stops. A configured folder is still the one used (and emptied at start)."""

import subprocess

import requests
from prometheus_client.parser import text_string_to_metric_families

from . import server as srv

CARD = "/cards/<card_id>"  # the route template; /readyz is not used, the start-up polls it


def requests_to(base: str, route: str) -> float:
    """sizing_http_requests_total for one route template, summed over methods and statuses."""
    text = requests.get(f"{base}/metrics", timeout=5).text
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == "sizing_http_requests_total" and sample.labels.get("route") == route)


def metrics_folders(tmpdir) -> set[str]:
    return {p.name for p in tmpdir.iterdir() if p.name.startswith("sizing-metrics")}


def test_a_second_instance_neither_wipes_nor_shares_the_firsts_metrics(tmp_path):
    tmpdir = tmp_path / "tmp"  # the TMPDIR both instances share, as two services on one host do
    tmpdir.mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": None, "TMPDIR": str(tmpdir)}
    with srv.running(tmp_path / "a", workers=2, threads=2, **env) as a:
        for _ in range(3):
            assert requests.get(f"{a.base}/healthz", timeout=5).status_code == 200
        assert requests_to(a.base, "/healthz") == 3
        with srv.running(tmp_path / "b", workers=2, threads=2, **env) as b:
            assert requests_to(a.base, "/healthz") == 3, "starting B wiped A's metrics"
            assert requests_to(b.base, "/healthz") == 0, "B shows A's counts"
            for _ in range(2):
                assert requests.get(f"{b.base}/cards/rtx-4090", timeout=5).status_code == 200
            assert requests_to(b.base, CARD) == 2
            assert requests_to(a.base, CARD) == 0, "A shows B's counts"
            assert requests_to(a.base, "/healthz") == 3
            assert len(metrics_folders(tmpdir)) == 2
        # B removed its own folder when it stopped, and only its own.
        assert len(metrics_folders(tmpdir)) == 1
        assert requests_to(a.base, "/healthz") == 3
    assert metrics_folders(tmpdir) == set()


def fake_gunicorn(tmp_path):
    fake = tmp_path / "fake-gunicorn"
    fake.write_text('#!/bin/sh\necho "folder: ${PROMETHEUS_MULTIPROC_DIR-unset}"\n')
    fake.chmod(0o755)
    return fake


def test_the_entrypoint_leaves_an_unset_folder_to_gunicorn_and_wipes_nothing(tmp_path):
    # What a fixed default folder would be: another instance's, which must survive.
    other = tmp_path / "sizing-metrics"
    other.mkdir()
    (other / "counter_123.db").write_text("another instance's counts")
    result = subprocess.run([str(srv.ROOT / "deploy" / "entrypoint.sh")], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path),
                                 "GUNICORN": str(fake_gunicorn(tmp_path))})
    assert result.returncode == 0, result.stderr
    assert "folder: unset" in result.stdout
    assert (other / "counter_123.db").is_file()


def test_a_configured_folder_is_honoured(tmp_path):
    folder = tmp_path / "configured"
    result = subprocess.run([str(srv.ROOT / "deploy" / "entrypoint.sh")], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "PROMETHEUS_MULTIPROC_DIR": str(folder),
                                 "GUNICORN": str(fake_gunicorn(tmp_path))})
    assert result.returncode == 0, result.stderr
    assert f"folder: {folder}" in result.stdout and folder.is_dir()


def test_a_configured_folder_is_the_one_the_workers_write_to(tmp_path):
    folder = tmp_path / "configured"
    with srv.running(tmp_path, workers=1, threads=2, PROMETHEUS_MULTIPROC_DIR=str(folder)) as server:
        assert requests.get(f"{server.base}/healthz", timeout=5).status_code == 200
        assert requests_to(server.base, "/healthz") == 1
        assert any(folder.glob("counter_*.db"))
