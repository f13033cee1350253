"""The purchase comparison's HTML report in headless Chromium: asked of the running server
(POST /compare, Accept text/html), opened from disk with no network, it shows the options table
and both charts, prints to PDF and logs nothing to the console."""

import base64
import re
import xml.etree.ElementTree as ET

import pytest
import requests

from . import server as srv
from .browser import chromium, console_lines, require_chromium

require_chromium()

README_EXAMPLE = {
    "model": "qwen2.5-72b",
    "workload": {"engine": "vllm", "prompt_tokens": 1000, "output_tokens": 500},
    "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20},
    "options": [{"card": "h20", "count": 8}, {"card": "h100-sxm", "count": 4}, {"card": "l20", "count": 8},
                {"card": "rtx-4090-d", "count": 16}],
    "years": 3, "energy": {"price_per_kwh": 1.2},
    "prices": {"h20": 110_000, "h100-sxm": 220_000, "l20": 30_000, "rtx-4090-d": 14_000},
    "rent_per_card_hour": {"h100-sxm": 15},
}


@pytest.fixture(scope="module", params=["en", "zh"])
def report(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"compare-{request.param}")
    with srv.running(folder, workers=1, threads=2) as server:
        response = requests.post(f"{server.base}/compare", json={**README_EXAMPLE, "lang": request.param},
                                 headers={"Accept": "text/html"}, timeout=60)
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/html")
    page = folder / "report.html"
    page.write_bytes(response.content)
    return page


def test_the_report_shows_the_options_table_and_both_charts(report, tmp_path):
    result = chromium(tmp_path, "--dump-dom", report.as_uri())
    dom = result.stdout
    assert '<table id="options">' in dom, result.stderr[-2000:]
    assert dom.count("<tr class=") == len(README_EXAMPLE["options"])
    charts = re.findall(r'<img class="chart" alt="[^"]*" src="data:image/svg\+xml;base64,([^"]+)"', dom)
    assert len(charts) == 2
    for chart in charts:  # each is a whole SVG with drawn lines or points
        root = ET.fromstring(base64.b64decode(chart))
        assert root.tag.endswith("svg") and len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 10
    assert console_lines(result) == []


def test_the_report_is_saved_as_a_screenshot_and_a_pdf(report, tmp_path):
    shot, pdf = tmp_path / "report.png", tmp_path / "report.pdf"
    shown = chromium(tmp_path, f"--screenshot={shot}", report.as_uri())
    printed = chromium(tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", report.as_uri())
    assert shot.is_file() and shot.stat().st_size > 50_000, shown.stderr[-2000:]
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 20_000, printed.stderr[-2000:]
    assert console_lines(shown) == [] and console_lines(printed) == []


def test_the_console_check_sees_an_error_when_there_is_one(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><script>console.error('broken on purpose')</script>")
    assert any("broken on purpose" in line for line in console_lines(chromium(tmp_path, "--dump-dom", page.as_uri())))
