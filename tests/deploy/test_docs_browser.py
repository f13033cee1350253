"""GET /docs in headless Chromium (Debian's package; .ci/run installs it): the operations render
from the bundled assets, with no network, and a screenshot is kept."""

import pytest

from . import server as srv
from .browser import chromium, require_chromium

require_chromium()


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    with srv.running(tmp_path_factory.mktemp("docs-server"), workers=1, threads=4) as server:
        yield server


def test_docs_render_every_operation(running, tmp_path):
    result = chromium(tmp_path, "--dump-dom", f"{running.base}/docs")
    dom = result.stdout
    assert "swagger-ui" in dom, result.stderr[-2000:]
    for path in ("/estimate", "/estimate/batch", "/recommend", "/troubleshoot", "/cards/{card_id}"):
        assert f'data-path="{path}"' in dom, f"{path} did not render"
    assert dom.count("opblock-summary-method") >= 20


def test_docs_screenshot_is_saved(running, tmp_path):
    shot = tmp_path / "docs.png"
    chromium(tmp_path, f"--screenshot={shot}", f"{running.base}/docs")
    assert shot.is_file() and shot.stat().st_size > 10_000


def test_without_keys_the_page_offers_no_authorize_button_or_padlocks(running, tmp_path):
    dom = chromium(tmp_path, "--dump-dom", f"{running.base}/docs").stdout
    assert 'data-path="/estimate"' in dom
    assert "btn authorize" not in dom and "authorization__btn" not in dom


def test_with_keys_the_page_offers_them(tmp_path):
    with srv.running(tmp_path, workers=1, threads=4, SIZING_API_KEYS="k1-test-key-0000000000000000000000") as server:
        dom = chromium(tmp_path, "--dump-dom", f"{server.base}/docs").stdout
    assert 'data-path="/estimate"' in dom
    assert "btn authorize" in dom and "authorization__btn" in dom
