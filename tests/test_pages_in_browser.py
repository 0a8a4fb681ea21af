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


@pytest.mark.parametrize("width", [1400, 1000])
def test_an_investigations_charts_fit_their_boxes_and_the_page_its_window(browser, audited_sample, tmp_path, width):
    """Every chart is drawn inside its box and nothing makes the page scroll sideways, on a wide screen and a laptop's.
    Before: at 1400 px the results chart, drawn while it was the grid's only figure, was 1,230 px wide in a 614 px
    box (its right half, the band's end and the legend, cut off), and a statistical finding's JSON made the page
    2,255 px wide; at 1000 px the money tables' headers did (1,284 px)."""
    from pipelines.investigate import Subject
    from pipelines.investigation.command import write_investigation

    page = write_investigation(audited_sample / "pitaudit.duckdb", Subject("player", "P-836253"), tmp_path / "inv")
    visit = browser.open(page, viewport=(width, 1000))
    visit.assert_clean()
    assert browser.wait_for_plots(visit.page) >= 2
    boxes = visit.page.evaluate("""() => [...document.querySelectorAll('.plot')].map(d => [d.dataset.figure,
        d.getBoundingClientRect().width, d.querySelector('.main-svg').getBoundingClientRect().width])""")
    assert all(svg <= box for _, box, svg in boxes), boxes
    assert visit.page.evaluate("() => document.documentElement.scrollWidth") <= width
    # the results chart's legend below its time axis's title (it sat on "bets closed (UTC)")
    title_bottom, legend_top = visit.page.evaluate("""() => { const d = document.querySelector('[data-figure^="results-"]');
        return [d.querySelector('.xtitle').getBoundingClientRect().bottom, d.querySelector('.legend').getBoundingClientRect().top]; }""")
    assert title_bottom <= legend_top, (title_bottom, legend_top)
    visit.screenshot(f"investigation-{width}px")


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
