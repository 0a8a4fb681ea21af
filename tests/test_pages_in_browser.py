"""An investigation and an evidence pack open in headless Chromium (tests/browser.py, the report's harness) with no
console error, no request off file://, no dialog; the investigation's charts draw; the pack draws its cards."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest


SAMPLE = Path(__file__).parents[1] / "data" / "sample"


def _dispute() -> tuple[str, int]:
    with (SAMPLE / "ground_truth.csv").open(newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["kind"] == "payout_mismatch")
    return row["table_id"], int(row["round_no"])


@pytest.mark.parametrize("kind,ident", [("player", "P-836253"), ("dealer", "D1011"), ("table", "BJ-01")])
def test_an_investigation_opens_clean_and_draws_its_charts(browser, audited_sample, tmp_path, kind, ident):
    from pipelines.investigate import Subject
    from pipelines.investigation.command import write_investigation

    page = write_investigation(audited_sample / "pitaudit.duckdb", Subject(kind, ident), tmp_path / "inv")
    visit = browser.open(page)
    visit.assert_clean()
    assert browser.wait_for_plots(visit.page) >= 2
    assert visit.page.locator("#rounds tbody tr").count() > 0
    visit.screenshot(f"investigation-{kind}")


def test_an_evidence_pack_opens_clean_and_draws_the_cards(browser, audited_sample, tmp_path):
    from pipelines.evidence.pack import write_pack

    table, round_no = _dispute()
    folder, _ = write_pack(audited_sample / "pitaudit.duckdb", table, round_no, tmp_path / "pack")
    visit = browser.open(folder / "index.html")
    visit.assert_clean()
    cards = visit.page.locator(".deck .card")
    assert cards.count() >= 4
    box = cards.first.bounding_box()
    assert box and box["width"] > 30 and box["height"] > 40  # drawn, not collapsed
    assert visit.page.locator("#wagers tr.bad").count() >= 1
    visit.screenshot("evidence-pack")


def test_the_audits_investigation_pages_draw_from_the_folders_one_plotly_js_in_a_copied_folder(browser, audited_sample,
                                                                                                tmp_path):
    """The audit's pages load ``investigations/plotly.min.js`` by a relative path: copied elsewhere, a page still draws."""
    import shutil

    copy = tmp_path / "copied" / "night"
    shutil.copytree(audited_sample / "out", copy)
    pages = sorted((copy / "investigations").rglob("index.html"))
    assert pages and (copy / "investigations" / "plotly.min.js").is_file()
    visit = browser.open(pages[0])
    visit.assert_clean()
    assert browser.wait_for_plots(visit.page) >= 2
