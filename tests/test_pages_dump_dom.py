"""A minimal browser check that needs no Playwright: Debian's chromium --headless --dump-dom renders an investigation
and an evidence pack; the investigation's plotly charts draw their SVG, the pack its cards, and the console shows
no error and no refused request (each page's Content-Security-Policy forbids every request, so an attempted one
is logged as refused). tests/test_pages_in_browser.py does the same through the report's Playwright harness."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable (apt-get install chromium)")
SAMPLE = Path(__file__).parents[1] / "data" / "sample"


def _render(page: Path, tmp_path: Path) -> tuple[str, str]:
    profile = tmp_path / "chromium-profile"
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180)
    return result.stdout, result.stderr


def _console_problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if re.search(r"CONSOLE|Refused to|Uncaught|net::ERR", line) and "dbus" not in line]


def test_an_investigation_renders_its_charts_with_no_console_error(audited_sample, tmp_path):
    from pipelines.investigate import Subject
    from pipelines.investigation.command import write_investigation
    from pipelines.notebooks import sample_subjects

    page = write_investigation(audited_sample / "pitaudit.duckdb", Subject("player", sample_subjects()["counter"]), tmp_path / "inv")
    dom, stderr = _render(page, tmp_path)
    figures = dom.count('class="plotly-graph-div')
    assert figures >= 3
    assert dom.count('class="main-svg"') >= figures  # every figure drew its SVG
    assert _console_problems(stderr) == []


def test_an_evidence_pack_renders_its_cards_with_no_console_error(audited_sample, tmp_path):
    from pipelines.evidence.pack import write_pack

    with (SAMPLE / "ground_truth.csv").open(newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["kind"] == "payout_mismatch")
    folder, _ = write_pack(audited_sample / "pitaudit.duckdb", row["table_id"], int(row["round_no"]), tmp_path / "pack")
    dom, stderr = _render(folder / "index.html", tmp_path)
    assert dom.count('class="card ') >= 4 and row["wager_id"] in dom
    assert _console_problems(stderr) == []
