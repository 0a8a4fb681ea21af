"""The report's hold funnel is the hold detector's (out_stat_funnel): its points are the table's rows, and the
per-table table's band and "outside" for the tables it judges are the detector's, so the two never disagree."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest


def _figure_data(page: str, div_id: str) -> list[dict]:
    m = re.search(r'Plotly\.newPlot\(\s*"' + re.escape(div_id) + r'",\s*', page)
    assert m, div_id
    data, _ = json.JSONDecoder().raw_decode(page, m.end())
    return data


def test_the_reports_funnel_points_are_the_detectors_rows(audited_sample):
    """Every table row of the one-night window on all bets (baccarat), and on the main game for the tables with no
    all-bets row (Hold'em, blackjack), is one point: its handle, its hold, its own band."""
    from pipelines.db import open_reader
    from pipelines.stats.run import funnel_frame

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    try:
        table = funnel_frame(con).filter((pl.col("entity_type") == "table") & (pl.col("window_days") == 1))
    finally:
        con.close()
    all_bets = table.filter(pl.col("bet") == "all")
    main = table.filter((pl.col("bet") == "main") & ~pl.col("entity").is_in(all_bets["entity"].to_list()))
    assert all_bets.height >= 10
    page = (audited_sample / "out" / "report.html").read_text(encoding="utf-8")
    seen = 0
    currencies = sorted(set(all_bets["currency"].to_list()) | set(main["currency"].to_list()))
    for i, currency in enumerate(currencies):
        traces = _figure_data(page, f"fig-hold-{i}")
        for level, rows in (("all bets", all_bets), ("main game", main)):
            want = rows.filter(pl.col("currency") == currency).sort("handle", "entity")
            points = [t for t in traces if t.get("name") == f"tables, {level}"]
            if want.height == 0:
                assert points == []
                continue
            points = points[0]
            assert points["x"] == pytest.approx([h / 100 for h in want["handle"].to_list()])  # USD, SGD, AUD: 2 decimals
            assert points["y"] == pytest.approx([100 * h for h in want["hold"].to_list()])
            assert [t.split(" ")[0] for t in points["text"]] == want["entity"].to_list()
            outside = [s == "x" for s in points["marker"]["symbol"]]
            # a main game is outside only below its band (a player worse than the strategy holds the house more)
            assert outside == [(h < lo) or (h > hi and level != "main game")
                               for h, lo, hi in zip(want["hold"], want["hold_low_95"], want["hold_high_95"])]
            bands = {t["name"] for t in traces if t.get("mode") == "lines"}
            assert {f"theory, {level}", f"95 % band, {level}", f"99.7 % band, {level}"} <= bands
            seen += want.height
    assert seen == all_bets.height + main.height


def test_the_tables_the_detector_judges_carry_its_band_in_the_table(audited_sample):
    from pipelines.db import open_reader
    from pipelines.stats.run import funnel_frame

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    try:
        rows = funnel_frame(con).filter((pl.col("entity_type") == "table") & (pl.col("bet") == "all")
                                        & (pl.col("window_days") == 1))
    finally:
        con.close()
    page = (audited_sample / "out" / "report.html").read_text(encoding="utf-8")
    table = re.search(r'<table[^>]*id="hold-tables">(.*?)</table>', page, re.S).group(1)
    cells = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        tds = [re.sub(r"<[^>]+>", "", td) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        cells[tds[1]] = tds
    for r in rows.iter_rows(named=True):
        tds = cells[r["entity"]]
        assert tds[-1] == "hold detector"
        assert tds[9] == f"{100 * r['hold_low_95']:.2f} .. {100 * r['hold_high_95']:.2f} %"
        outside = r["hold"] < r["hold_low_95"] or r["hold"] > r["hold_high_95"]
        assert tds[10] == ("outside the band" if outside else "within")
    assert any(t[-1] == "report" for t in cells.values())  # blackjack and Hold'em tables keep the report's band


@pytest.mark.parametrize("width", [1400, 1000])
def test_the_funnels_legend_is_clear_of_its_axis_title(browser, audited_sample, width):
    """The funnel's log axis writes two rows of tick labels and its title under them: the legend (at y = -0.15, as
    the other charts) was drawn over "handle (USD, log scale)" in every funnel of the sample's report."""
    visit = browser.open(audited_sample / "out" / "report.html", viewport=(width, 1000))
    visit.assert_clean()
    browser.wait_for_plots(visit.page)
    boxes = visit.page.evaluate("""() => [...document.querySelectorAll('[id^="fig-hold-"]')].map(d => {
        const t = d.querySelector('.xtitle').getBoundingClientRect(), l = d.querySelector('.legend').getBoundingClientRect();
        return [d.id, t.bottom, l.top]; })""")
    assert boxes and all(title_bottom <= legend_top for _, title_bottom, legend_top in boxes), boxes
    visit.screenshot(f"funnel-{width}px")
