"""An investigation and an evidence pack open in headless Chromium (tests/browser.py, the report's harness) with no
console error, no request off file://, no dialog; the investigation's charts draw; the pack draws its cards."""

from __future__ import annotations

import csv
import re
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


LONG = {"dealer_id": "D-" + "dealer" * 50, "shoe_id": "S-" + "shoe" * 60, "player_id": "P-" + "verylongplayer" * 20}


@pytest.fixture(scope="module")
def long_ids(tmp_path_factory, prefect_harness):
    """One table's night whose ids (dealer, shoe, player, wager) run to hundreds of characters, audited."""
    import json
    import shutil

    from pipelines.audit.run import run_audit
    from pipelines.db import publish_snapshot

    root = tmp_path_factory.mktemp("long-ids")
    night = root / "night"
    night.mkdir()
    shutil.copy(SAMPLE / "shoe_AE-0102_2026-11-24.csv", night)
    lines = (SAMPLE / "rounds_BAC-02_2026-11-24.jsonl").read_text(encoding="utf-8").splitlines()
    rounds = []
    for i, line in enumerate(lines):
        r = json.loads(line)
        if i < 40:
            r.update(dealer_id=LONG["dealer_id"], shoe_id=LONG["shoe_id"])
            for w in r["wagers"]:
                w.update(player_id=LONG["player_id"], wager_id="W-" + "wagerid" * 40 + w["wager_id"])
        rounds.append(json.dumps(r))
    (night / "rounds_BAC-02_2026-11-24.jsonl").write_text("\n".join(rounds) + "\n", encoding="utf-8")
    run_audit(night, root / "pitaudit.duckdb", root / "out", "06:00", progress=False)
    publish_snapshot(root / "pitaudit.duckdb")
    return root, json.loads(rounds[0])["round_no"]


@pytest.mark.parametrize("page", ["evidence pack", "investigation", "report"])
def test_ids_of_hundreds_of_characters_wrap_inside_the_page(browser, long_ids, tmp_path, page):
    """A dealer, shoe, player or wager id of 300 characters made the evidence pack 2,900 px and the investigation
    3,000 px wide in a 1,400 px window (the round's table, the steps, the findings table ran off the page)."""
    from pipelines.evidence.pack import write_pack
    from pipelines.investigate import Subject
    from pipelines.investigation.command import write_investigation

    root, round_no = long_ids
    db = root / "pitaudit.duckdb"
    if page == "evidence pack":
        path = write_pack(db, "BAC-02", round_no, tmp_path / "pack")[0] / "index.html"
    elif page == "investigation":
        path = write_investigation(db, Subject("player", LONG["player_id"]), tmp_path / "inv")
    else:
        path = root / "out" / "report.html"
    width = 1400
    visit = browser.open(path, viewport=(width, 1000))
    visit.assert_clean()
    visit.screenshot(f"long-ids-{page.replace(' ', '-')}")
    assert visit.page.evaluate("() => document.documentElement.scrollWidth") <= width


def test_a_long_id_in_the_reports_findings_table_wraps_inside_its_own_cell(browser, long_ids):
    """The findings table keeps its rows on one line each; a 300-character dealer id there pushed the player and the
    amounts 3,000 px to the right, then (wrapping but still on one line) ran over them."""
    root, _ = long_ids
    visit = browser.open(root / "out" / "report.html", viewport=(1400, 1000))
    visit.assert_clean()
    cells = visit.page.evaluate("""() => [...document.querySelectorAll('#findings-table tbody tr')]
        .flatMap(tr => [...tr.children]).map(td => [td.textContent, td.scrollWidth, td.clientWidth])""")
    long = [c for c in cells if c[0] == LONG["dealer_id"]]
    assert long and all(width < 500 for _, _, width in long), long  # its own cell, 30em at most
    assert all(scroll <= client + 1 for _, scroll, client in cells), [c for c in cells if c[1] > c[2] + 1]


@pytest.mark.parametrize("page", ["report.html", "investigations/player/P-615419/2026-11-24_2026-11-24/index.html"])
def test_the_findings_tables_fit_a_laptops_window_with_each_detail_on_a_row_of_its_own(browser, audited_sample, page):
    """At 1,400 px the findings' detail, the widest column, sat past the right edge: the report's findings table and
    an investigation's scrolled sideways inside their box, and every sentence had to be scrolled to. Each finding's
    detail is a row of its own under its columns now, across the table, and a click on it opens the finding's facts
    under it (report)."""
    visit = browser.open(audited_sample / "out" / page, viewport=(1400, 1000))
    visit.assert_clean()
    table = "#findings-table" if page == "report.html" else "#findings table"
    if page == "report.html":
        visit.page.wait_for_selector("#findings-table[data-ready='1']")
    fit = visit.page.evaluate(f"""() => {{ const t = document.querySelector('{table}');
        return [t.scrollWidth, t.parentElement.clientWidth, t.querySelectorAll('thead th').length,
                [...t.querySelectorAll('tbody tr.detail td')].map(td => [td.colSpan, td.textContent.length])]; }}""")
    width, room, columns, details = fit
    assert width <= room + 1, fit[:3]
    assert details and all(span == columns and length > 0 for span, length in details), details[:3]
    if page == "report.html":
        visit.page.click("#findings-body tr.detail")
        after = visit.page.evaluate("() => document.querySelector('#findings-body tr.detail').nextElementSibling.className")
        assert after == "facts"


def test_the_funnels_handle_axis_labels_every_tick_with_a_whole_amount(browser, audited_sample):
    """The hold funnel's log axis wrote the ticks between decades as bare digits ("2 3 4 ... 100k 2 3"), which read
    as handles of 2 and 3: each tick it writes is a whole amount now (20k, 50k, 100k)."""
    visit = browser.open(audited_sample / "out" / "report.html", viewport=(1000, 900))
    visit.assert_clean()
    axes = visit.page.evaluate("""() => [...document.querySelectorAll('#hold .js-plotly-plot')]
        .filter(g => g.layout.xaxis.type === 'log')
        .map(g => [...g.querySelectorAll('.xtick text, .xminor text')].map(t => t.textContent))""")
    assert axes and all(len(ticks) >= 2 for ticks in axes), axes
    assert all(re.fullmatch(r"\d+(\.\d+)?[kMG]?", t) and (len(t) > 1) for ticks in axes for t in ticks), axes


def test_the_reports_round_numbers_are_written_as_evidence_round_takes_them(browser, long_ids):
    """A round number is an id: the findings table wrote 29,444, which ``pitaudit evidence --round`` refuses ("not a
    valid integer") when a reviewer copies it from the row."""
    root, _ = long_ids
    visit = browser.open(root / "out" / "report.html", viewport=(1400, 1000))
    visit.assert_clean()
    heads = visit.page.evaluate("() => [...document.querySelectorAll('#findings-head th')].map(th => th.textContent)")
    at = next(i for i, h in enumerate(heads) if h.startswith("round"))
    rounds = visit.page.evaluate(f"""() => [...document.querySelectorAll('#findings-table tbody tr[data-i]')]
        .map(tr => tr.children[{at}].textContent)""")
    numbered = [r for r in rounds if r]
    assert numbered and all(r.isdigit() and int(r) >= 10_000 for r in numbered), rounds


@pytest.mark.parametrize("page", ["report.html", "investigations/player/P-615419/2026-11-24_2026-11-24/index.html",
                                  "evidence"])
def test_short_ids_and_days_keep_to_one_line_in_narrow_columns(browser, audited_sample, page):
    """In a 1,000 px window the report's statistical findings, the investigation's findings and a pack's wagers broke
    ``P-615419``, ``NCB-04`` and ``W-00160000288`` after a hyphen or inside the number, and the trend broke
    ``2026-11-24``: a reader copying the first line got half an id or a day; the report's per-table hold wrote its
    verdict "outside the band" on three lines. Each stays on one line now."""
    if page == "evidence":
        table, round_no = _dispute()
        page = f"evidence/{table}/{round_no}/index.html"
    visit = browser.open(audited_sample / "out" / page, viewport=(1000, 900))
    visit.assert_clean()
    lines = visit.page.evaluate("""() => [...document.querySelectorAll('.ident.short, td.day, td.verdict')].map(td => {
        const r = document.createRange(); r.selectNodeContents(td);
        return [td.textContent, new Set([...r.getClientRects()].map(b => Math.round(b.top))).size]; })""")
    shown = {text for text, _ in lines}
    assert any(t.startswith("P-") for t in shown), shown
    assert page.startswith("evidence") or any(t.startswith(("tonight ", "2026-")) for t in shown), shown
    assert page != "report.html" or "outside the band" in shown, shown
    assert [(text, n) for text, n in lines if n > 1] == []
