"""The purchase comparison's HTML report in headless Chromium: asked of the running server
(POST /compare, Accept text/html), opened from disk with no network, it shows the options table
and both charts, prints to PDF and logs nothing to the console."""

import base64
import html
import json
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
    assert dom.count('<tr class="option ') == dom.count('<tr class="why ') == len(README_EXAMPLE["options"])
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


# Measures the laid-out page once it has loaded: the window, the page's width, the options
# table's right edge, and the width of each option's "Why" line.
PROBE = """<script>window.addEventListener("load", () => {
  const table = document.getElementById("options");
  const why = [...table.querySelectorAll("tr.why td[colspan]")].map(td => td.getBoundingClientRect().width);
  document.body.setAttribute("data-measured", JSON.stringify({viewport: window.innerWidth,
    page: document.documentElement.scrollWidth, table_right: table.getBoundingClientRect().right, why}));
});</script></body>"""


def test_the_options_fit_a_1280_px_window_each_with_its_reason_as_a_line(report, tmp_path):
    """At 1280 px the table ran past the window and cut its "Why" column to a few characters a
    line: every column is now in view and each reason spans the table under its option."""
    page = tmp_path / "measured.html"
    page.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE), encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1280,900", "--dump-dom", page.as_uri()).stdout
    measured = json.loads(html.unescape(re.search(r'data-measured="([^"]+)"', dom)[1]))
    assert measured["viewport"] == 1280
    assert measured["page"] <= measured["viewport"] and measured["table_right"] <= measured["viewport"], measured
    assert len(measured["why"]) == len(README_EXAMPLE["options"]) and min(measured["why"]) > 800, measured


def test_the_report_of_four_options_prints_on_two_a4_pages(report, tmp_path):
    """A committee prints it: it ran to 5 pages of A4 with the "Why" column four characters wide."""
    pdf = tmp_path / "report.pdf"
    printed = chromium(tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", report.as_uri())
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf.read_bytes()))
    assert 1 <= pages <= 2, (pages, printed.stderr[-2000:])
