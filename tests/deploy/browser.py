"""Headless Chromium (Debian's package; .ci/run installs it) for the tests that look at pages."""

import os
import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Chromium's own background traffic has nowhere to go on these machines.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--virtual-time-budget=15000", "--window-size=1280,2000")


def require_chromium() -> None:
    """Skip the calling module without Chromium; in CI, fail instead."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium for the browser tests", pytrace=False)
        pytest.skip("chromium is not installed (apt-get install chromium); CI installs it",
                    allow_module_level=True)


def chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """Run Chromium with a fresh profile under `tmp_path`; its console is logged to stderr."""
    profile = tmp_path / "profile"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr",
                           "--v=0", *args], capture_output=True, text=True, timeout=120)


def console_lines(result: subprocess.CompletedProcess) -> list[str]:
    """What the page wrote to its console (Chromium logs each message as a CONSOLE line)."""
    return [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
