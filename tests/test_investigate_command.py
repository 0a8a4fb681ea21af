"""pitaudit investigate: the rows of a sample player, dealer and table are the database's (direct SQL counts), the
count before each round is Hi-Lo by hand, the band is the bets' variance, the planted counter's bets follow the
count, and a hostile id stays text."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
import shutil

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.db import open_reader
from pipelines.investigate import Subject
from pipelines.investigation.analysis import Z95, bet_ramp, by_table, results_over_time
from pipelines.investigation.command import write_investigation
from pipelines.investigation.count import true_counts

runner = CliRunner()
from pipelines.notebooks import sample_subjects  # noqa: E402

PLANTED = sample_subjects()  # data/sample/ground_truth.csv
COUNTER = PLANTED["counter"]  # advantage_play: a Hi-Lo counter at blackjack
SUBJECTS = [("player", COUNTER), ("dealer", PLANTED["dealer"]), ("table", PLANTED["dispute"][0]),
            ("player", PLANTED["dealer_player"])]


@pytest.mark.parametrize("kind,ident", SUBJECTS)
def test_an_investigation_holds_every_round_wager_and_finding_of_the_subject(audited_sample, tmp_path, kind, ident):
    result = runner.invoke(app, ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), f"--{kind}", ident,
                                 "--out", str(tmp_path / "inv")])
    assert result.exit_code == 0, result.output
    column = {"player": "player_id", "dealer": "dealer_id", "table": "table_id"}[kind]
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    wagers, rounds = con.execute(
        f"SELECT count(*), count(DISTINCT (gaming_day, table_id, round_no)) FROM out_settlements WHERE {column} = ?", [ident]).fetchall()[0]
    findings = con.execute(f"SELECT count(*) FROM out_findings WHERE {column} = ?", [ident]).fetchall()[0][0]
    dealers = con.execute(f"SELECT count(DISTINCT dealer_id) FROM out_settlements WHERE {column} = ?", [ident]).fetchall()[0][0]
    con.close()
    assert rounds > 0
    out = tmp_path / "inv"
    assert pl.read_csv(out / "wagers.csv").height == pl.read_parquet(out / "wagers.parquet").height == wagers
    assert pl.read_parquet(out / "rounds.parquet").height == rounds
    assert pl.read_parquet(out / "findings.parquet").height == findings
    assert pl.read_parquet(out / "dealers.parquet")["dealer_id"].n_unique() == dealers
    curve = pl.read_parquet(out / "results_over_time.parquet")
    assert curve.height == wagers
    # every Parquet file reads as numbers in a tool other than polars: its money totals too (DECIMAL, never the raw
    # 16 bytes polars writes for an Int128), and a round's amounts equal the settlements' sums
    import duckdb

    blobs = [(f.name, c) for f in out.glob("*.parquet") for c, kind, *_ in
             duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{f}')").fetchall() if kind == "BLOB"]
    assert blobs == []
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    sums = con.execute(f"SELECT sum(recorded_net), sum(expected_net) FROM out_settlements WHERE {column} = ?", [ident]).fetchall()[0]
    con.close()
    assert duckdb.sql(f"SELECT sum(recorded_net), sum(expected_net) FROM read_parquet('{out / 'rounds.parquet'}')").fetchall()[0] == sums
    page = (out / "index.html").read_text(encoding="utf-8")
    assert ident in page and page.count('class="plotly-graph-div"') >= 2
    # plotly.js is the file beside the page, loaded by a relative path: nothing from a network
    assert re.findall(r'<script src="([^"]*)"', page) == ["plotly.min.js"]
    assert (out / "plotly.min.js").read_text(encoding="utf-8").startswith("/**") and "cdn" not in page.lower()


def test_a_pages_tables_are_zstd_parquet_files_of_its_frames_the_same_bytes_on_every_run(audited_sample, tmp_path):
    """The page's Parquet files are written at zstd's fastest level (``command.PAGE_PARQUET``: a 30-day page holds
    every wager of its window): each reads back as the frame gathered for it, and a second run writes the same bytes."""
    import pyarrow.parquet as pq

    from pipelines.investigation.command import PAGE_PARQUET, TABLES, gather
    from pipelines.money import money_for_files

    subject = Subject("dealer", PLANTED["dealer"])
    for run in ("one", "two"):
        write_investigation(audited_sample / "pitaudit.duckdb", subject, tmp_path / run)
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    try:
        frames = gather(con, subject)
    finally:
        con.close()
    assert PAGE_PARQUET == {"compression": "zstd", "compression_level": 1}
    for name in TABLES:
        one, two = tmp_path / "one" / f"{name}.parquet", tmp_path / "two" / f"{name}.parquet"
        assert one.read_bytes() == two.read_bytes(), name
        meta = pq.ParquetFile(one).metadata
        codecs = {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups) for c in range(meta.num_columns)}
        assert codecs <= {"ZSTD"}, (name, codecs)
        assert pl.read_parquet(one).equals(money_for_files(frames[name])), name


def test_the_planted_counter_bets_with_the_count(audited_sample, tmp_path):
    write_investigation(audited_sample / "pitaudit.duckdb", Subject("player", COUNTER), tmp_path)
    rows = pl.read_parquet(tmp_path / "bet_vs_count.parquet")
    ramp = bet_ramp(rows)
    assert ramp["wagers"] > 80
    assert ramp["correlation"] > 0.3 and ramp["ramp"] > 1.5


def test_the_mean_bet_per_count_is_money_in_major_units_with_its_currency(audited_sample, tmp_path):
    """The count table's mean bet is the currency's money (59.09, USD), as every amount of the page: it showed the
    smallest unit with no currency (5,909 beside bets of 50.00 to 365.00 USD)."""
    from pipelines.currency import format_amount

    write_investigation(audited_sample / "pitaudit.duckdb", Subject("player", COUNTER), tmp_path)
    rows = pl.read_parquet(tmp_path / "bet_vs_count.parquet")
    ramp = bet_ramp(rows)
    cur = ramp["currency"]
    assert cur == rows["currency"].mode()[0] and not ramp["other_currencies"]
    section = (tmp_path / "index.html").read_text(encoding="utf-8").split('id="count"')[1].split("</section>")[0]
    cells = re.findall(r'<tr><td class="num">(-?\d+)</td><td class="num">([\d,]+)</td><td class="num">([^<]*)</td><td>([^<]*)</td></tr>', section)
    assert len(cells) == len(ramp["by_count"]) > 3
    for (tc, wagers, mean_bet, currency), b in zip(cells, ramp["by_count"]):
        assert (int(tc), currency) == (b["tc"], cur)
        assert mean_bet == format_amount(int(round(b["mean_bet"])), cur) and "." in mean_bet


def test_a_ramp_is_of_one_currency():
    """A counter's USD bets and a few VND ones: the correlation, the ramp and the mean bets are of the USD wagers (a
    bet of 1,000,000 VND is not a big bet at a high count); the VND wagers are counted apart."""
    tc = [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.5]
    rows = pl.DataFrame({"currency": ["USD"] * 6 + ["VND"] * 2, "true_count": tc,
                         "amount": [1000, 1000, 1000, 2000, 4000, 6000, 1_000_000, 2_000_000]})
    usd = bet_ramp(rows.filter(pl.col("currency") == "USD"))
    ramp = bet_ramp(rows)
    assert ramp["currency"] == "USD" and ramp["other_currencies"] == {"VND": 2} and ramp["wagers"] == 6
    assert ramp["correlation"] == pytest.approx(usd["correlation"]) and ramp["ramp"] == pytest.approx(5000 / 1000)
    assert [b["mean_bet"] for b in ramp["by_count"]] == [1000, 1000, 1000, 2000, 4000, 6000]


def test_a_range_with_nothing_in_it_is_one_line(audited_sample, tmp_path):
    result = runner.invoke(app, ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), "--player", COUNTER,
                                 "--from", "2027-01-01", "--out", str(tmp_path / "inv")])
    assert result.exit_code == 2 and f"nothing about player {COUNTER}" in result.output and "Traceback" not in result.output
    for args in ([], ["--player", "P-1", "--dealer", "D1"]):
        result = runner.invoke(app, ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), *args, "--out", str(tmp_path)])
        assert result.exit_code == 2 and "exactly one subject" in result.output


def test_a_backwards_range_is_worded_as_the_audit_words_it(audited_sample, tmp_path):
    """``investigate`` and ``audit`` name a backwards range in the same words, so one runbook line serves both."""
    result = runner.invoke(app, ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), "--player", COUNTER,
                                 "--from", "2026-11-25", "--to", "2026-11-24", "--out", str(tmp_path / "inv")])
    assert result.exit_code == 2 and "--to 2026-11-24 is before --from 2026-11-25" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "inv").exists()


def test_a_range_with_nothing_in_it_leaves_the_previous_investigation_in_its_folder(audited_sample, tmp_path):
    """The same folder again with a range that holds nothing of the subject (a mistyped --from): the previous run's
    files were removed before the nothing was found, so the command stopped with the investigator's page gone."""
    args = ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), "--player", COUNTER, "--out",
            str(tmp_path / "inv")]
    assert runner.invoke(app, args).exit_code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "inv").iterdir()}
    result = runner.invoke(app, [*args, "--from", "2027-01-01"])
    assert result.exit_code == 2 and f"nothing about player {COUNTER}" in result.output
    assert {p.name: p.read_bytes() for p in (tmp_path / "inv").iterdir()} == before


def test_the_hi_lo_count_before_each_round_by_hand():
    # one deck; round 1: 2c 5d Kh Ah 3s (+1 +1 -1 -1 +1 = +1); round 2: 9c 7h (0); round 3 is counted before it
    codes = {"2c": 4, "5d": 17, "Kh": 50, "Ah": 2, "3s": 11, "9c": 32, "7h": 26, "Tc": 36}
    seq = [(1, "2c"), (1, "5d"), (1, "Kh"), (1, "Ah"), (1, "3s"), (2, "9c"), (2, "7h"), (3, "Tc")]
    cards = pl.DataFrame({"table_id": ["BJ-01"] * len(seq), "shoe_id": ["S1"] * len(seq), "event_seq": list(range(len(seq))),
                          "round_no": [r for r, _ in seq], "card_code": [codes[c] for _, c in seq], "decks": [1] * len(seq)})
    out = true_counts(cards).sort("round_no")  # the detectors' count (pipelines.stats.counts), checked by hand
    assert out["seen"].to_list() == [0, 5, 7]
    assert out["hilo_rc"].to_list() == [0, 1, 1]
    assert out["true_count"].to_list() == pytest.approx([0.0, 1 / (47 / 52), 1 / (45 / 52)])


def test_theory_and_its_band_come_from_the_bets_mean_and_variance():
    t0 = dt.datetime(2026, 11, 24, 12, tzinfo=dt.timezone.utc)
    wagers = pl.DataFrame({
        "currency": ["USD"] * 3, "ruleset": ["r"] * 3, "bet": ["banker", "banker", "tie"], "status": ["settled", "void", "settled"],
        "amount": [100, 1000, 50], "recorded_net": [95, 0, -50], "expected_net": [95, 0, -50],
        "bets_closed_at": [t0, t0 + dt.timedelta(minutes=1), t0 + dt.timedelta(minutes=2)],
        "gaming_day": [dt.date(2026, 11, 24)] * 3, "table_id": ["BAC-01"] * 3, "round_no": [1, 2, 3],
    })
    moments = pl.DataFrame({"ruleset": ["r", "r"], "bet": ["banker", "tie"], "currency": ["USD", "USD"],
                            "mean_per_unit": [-0.0106, -0.1436], "var_per_unit": [0.9, 7.0]})
    curve = results_over_time(wagers, moments)
    last = curve.row(-1, named=True)
    assert last["cum_recorded"] == 45 and last["cum_wagered"] == 1150
    assert last["cum_theory"] == pytest.approx(-0.0106 * 100 - 0.1436 * 50)  # the void round expects 0
    sd = math.sqrt(0.9 * 100 ** 2 + 7.0 * 50 ** 2)
    assert last["band_hi"] - last["cum_theory"] == pytest.approx(Z95 * sd)  # a floor estimate: no skew, no jump
    assert last["sd"] == pytest.approx(sd)
    assert curve["n"].to_list() == [1, 2, 3]


def test_a_dealers_results_against_theory_by_table_by_hand():
    """Per table: the money summed, the theory of the settled wagers alone (TBAC-7.1: a void round's wagers are
    returned, expected to net 0), its s.d. from the bets' variances, and the net above theory, largest first."""
    t0 = dt.datetime(2026, 11, 24, 12, tzinfo=dt.timezone.utc)
    day = dt.date(2026, 11, 24)
    wagers = pl.DataFrame({
        "currency": ["USD"] * 5, "ruleset": ["r"] * 5, "bet": ["banker", "tie", "banker", "banker", "player"],
        "status": ["settled", "settled", "void", "settled", "settled"], "table_id": ["BAC-01", "BAC-01", "BAC-01", "BAC-02", "BAC-02"],
        "amount": [100, 50, 1000, 200, 300], "recorded_net": [95, 400, 0, -200, 300], "expected_net": [95, 400, 0, -200, 300],
        "bets_closed_at": [t0] * 5, "gaming_day": [day] * 5, "round_no": [1, 1, 2, 7, 7],
    })
    moments = pl.DataFrame({"ruleset": ["r"] * 3, "bet": ["banker", "tie", "player"], "currency": ["USD"] * 3,
                            "mean_per_unit": [-0.0106, -0.1436, -0.0124], "var_per_unit": [0.9, 7.0, 0.95]})
    rows = {r["table_id"]: r for r in by_table(wagers, moments).iter_rows(named=True)}
    one, two = rows["BAC-01"], rows["BAC-02"]
    assert (one["rounds"], one["wagers"], one["wagered"], one["recorded_net"]) == (2, 3, 1150, 495)
    assert one["theory"] == pytest.approx(-0.0106 * 100 - 0.1436 * 50)  # the void wager of 1,000 expects 0
    assert one["sd"] == pytest.approx(math.sqrt(0.9 * 100 ** 2 + 7.0 * 50 ** 2))
    assert one["above_theory"] == pytest.approx(495 - one["theory"])
    assert one["z_recorded"] == pytest.approx(one["above_theory"] / one["sd"])
    assert (two["rounds"], two["wagers"], two["recorded_net"]) == (1, 2, 100)
    assert two["theory"] == pytest.approx(-0.0106 * 200 - 0.0124 * 300)
    assert by_table(wagers, moments)["table_id"].to_list() == ["BAC-01", "BAC-02"]  # 503.2 above theory, then 105.8


def test_a_dealers_page_says_at_which_tables_his_results_came_from(audited_sample, tmp_path):
    """A dealer's rounds are all his own: his page charts the net above theory per table (where a hold flag's shortfall
    sits), and tables.csv holds every table he dealt with the money of his wagers there; a table's page has no such
    section (its one row is itself)."""
    dealer = PLANTED["dealer"]
    out = tmp_path / "dealer"
    result = runner.invoke(app, ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), "--dealer", dealer,
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    truth = con.execute("SELECT table_id, currency, count(*), sum(amount), sum(recorded_net) FROM out_settlements "
                        "WHERE dealer_id = ? GROUP BY ALL", [dealer]).fetchall()
    con.close()
    tables = pl.read_csv(out / "tables.csv")
    assert sorted(tables.select("table_id", "currency", "wagers", "wagered", "recorded_net").rows()) == sorted(truth)
    for (currency,), rows in tables.group_by(["currency"]):  # the net above theory, largest first, in each currency
        assert rows["above_theory"].to_list() == sorted(rows["above_theory"].to_list(), reverse=True), currency
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<section id="tables">' in page and "net above theory at each table" in page
    assert "Rounds under each dealer" not in page  # one bar, himself: not drawn for a dealer
    table = PLANTED["dispute"][0]
    result = runner.invoke(app, ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", table,
                                 "--out", str(tmp_path / "table")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "table" / "index.html").read_text(encoding="utf-8")
    assert '<section id="tables">' not in page and "Rounds under each dealer" in page


def test_a_bonus_heavy_subjects_band_holds_the_exact_quantiles_of_its_sum():
    """150 Hold'em Bonus wagers of 5.00 to 500.00 (HTB-6.1.2's 1000:1 line: 3.7 in a million, a hundred standard
    deviations of the sum at the larger stakes). The page's band is the detectors' (the body's skewed quantiles): at
    the curve's end within 5 % of the handle of the sum's exact 2.5 % and 97.5 % quantiles (its law by convolution).
    The symmetric theory +- 1.96 sd it drew before was more than 8 % of the handle off on a side and about 13 % too
    wide, on every Bonus-heavy player's and dealer's page."""
    from test_stats_jumps import STEP, _exact_law, _table_stakes

    from pipelines.investigate import moments_per_unit
    from pipelines.investigation.theory import exact_where_known

    stakes = _table_stakes()
    n = len(stakes)
    t0 = dt.datetime(2026, 11, 24, 12, tzinfo=dt.timezone.utc)
    wagers = pl.DataFrame({
        "currency": ["USD"] * n, "ruleset": ["hoiana-holdem-bonus"] * n, "bet": ["bonus"] * n, "status": ["settled"] * n,
        "amount": stakes.astype(int), "recorded_net": (-stakes).astype(int), "expected_net": (-stakes).astype(int),
        "bets_closed_at": [t0 + dt.timedelta(minutes=i) for i in range(n)], "gaming_day": [t0.date()] * n,
        "table_id": ["HTB-01"] * n, "round_no": list(range(n)),
    })
    counts = pl.DataFrame({"ruleset": ["hoiana-holdem-bonus"], "bet": ["bonus"], "currency": ["USD"],
                           "ruleset_version": ["01/01.05.2025"], "expected_net": [-500], "amount": [500], "c": [1]})
    moments = exact_where_known(moments_per_unit(counts))
    assert moments["method"].to_list() == ["exact"]
    last = results_over_time(wagers, moments).row(-1, named=True)

    law = _exact_law(stakes, int(10 * stakes.sum() / STEP))
    cdf = np.cumsum(law[:-1])
    sums = np.arange(len(cdf)) * STEP - stakes.sum()
    handle = stakes.sum()
    low, high = sums[np.searchsorted(cdf, 0.025)], sums[np.searchsorted(cdf, 0.975)]
    assert abs(last["band_lo"] - low) / handle < 0.05 and abs(last["band_hi"] - high) / handle < 0.05, (last, low, high)
    normal_lo, normal_hi = last["cum_theory"] - Z95 * last["sd"], last["cum_theory"] + Z95 * last["sd"]
    assert max(abs(normal_lo - low), abs(normal_hi - high)) / handle > 0.08
    assert (normal_hi - normal_lo) / (last["band_hi"] - last["band_lo"]) > 1.1
    assert last["band_lo"] >= -handle  # no band below every stake lost


HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_hostile_player_id_shows_as_text(tmp_path):
    from out_tables import database_with

    day = dt.date(2026, 11, 24)
    s = [{"gaming_day": day, "table_id": "BAC-01", "round_no": i, "wager_id": f"W{i}", "wager_order": 1, "seat": 1,
          "player_id": HOSTILE, "dealer_id": "D</script>", "game": "baccarat", "ruleset": "r", "currency": "USD",
          "status": "settled", "bet": "banker", "amount": 1000, "settled_amount": 1000, "recorded_net": 950,
          "expected_net": 950 if i else 900, "difference": 0 if i else 50} for i in range(3)]
    f = [{"finding_id": "F1", "kind": "payout_mismatch", "severity": "high", "gaming_day": day, "table_id": "BAC-01",
          "round_no": 0, "wager_id": "W0", "player_id": HOSTILE, "dealer_id": "D</script>", "expected_net": 900,
          "recorded_net": 950, "difference": 50, "rule_ref": "TBAC-5.1.1", "detail": HOSTILE, "currency": "USD"}]
    db = database_with(tmp_path / "audit.duckdb", s, f)
    result = runner.invoke(app, ["investigate", "--db", str(db), "--player", HOSTILE, "--out", str(tmp_path / "inv")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "inv" / "index.html").read_text(encoding="utf-8")
    assert HOSTILE not in page and "D</script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert pl.read_parquet(tmp_path / "inv" / "wagers.parquet")["player_id"].to_list() == [HOSTILE] * 3


def test_an_id_in_a_chart_is_drawn_as_text_not_as_plotlys_markup(tmp_path):
    """Plotly reads ``<a href>``, ``<b>``, ``<br>`` in chart labels: a dealer id ``<a href="https://...">`` was a live
    link on the dealers' bars (the page's JSON escapes ``<`` for the HTML parser, not for plotly). The labels from the
    log are HTML-escaped as the report's are (formats.md, report.html: every value from a log is escaped)."""
    import html
    import json
    import re

    from out_tables import database_with

    link = '<a href="https://evil.example/">D<b>X</b></a>'
    day = dt.date(2026, 11, 24)
    s = [{"gaming_day": day, "table_id": "BAC-01", "round_no": i, "wager_id": f"<b>W{i}</b>", "wager_order": 1,
          "seat": 1, "player_id": "P-1", "dealer_id": link if i else "D-2", "game": "baccarat", "ruleset": "r",
          "currency": "<i>U</i>", "status": "settled", "bet": "banker", "amount": 1000, "settled_amount": 1000,
          "recorded_net": 950, "expected_net": 950} for i in range(3)]
    f = [{"finding_id": "F1", "kind": "payout_mismatch", "severity": "high", "gaming_day": day, "table_id": "BAC-01",
          "round_no": 1, "wager_id": "<b>W1</b>", "player_id": "P-1", "dealer_id": link, "expected_net": 900,
          "recorded_net": 950, "difference": 50, "rule_ref": "TBAC-5.1.1", "detail": "d", "currency": "<i>U</i>"}]
    db = database_with(tmp_path / "audit.duckdb", s, f)
    result = runner.invoke(app, ["investigate", "--db", str(db), "--player", "P-1", "--out", str(tmp_path / "inv")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "inv" / "index.html").read_text(encoding="utf-8")
    decoder, figures = json.JSONDecoder(), []
    for m in re.finditer(r"Plotly\.newPlot\(\s*'?\"?[\w-]+'?\"?,\s*", page):
        figures.append(decoder.raw_decode(page, m.end())[0])
    labels = [x for fig in figures for trace in fig for x in trace.get("x", []) if isinstance(x, str)]
    assert html.escape(link, quote=False) in labels and "D-2" in labels  # the near-miss: a plain id as it is
    assert not any("<a" in x or "<b>" in x for x in labels)


def test_the_statistical_findings_about_the_subject_come_with_their_probabilities(audited_sample, tmp_path):
    """The sample's counter is flagged by the advantage_play detector: the investigation lists it, with p and q."""
    write_investigation(audited_sample / "pitaudit.duckdb", Subject("player", COUNTER), tmp_path)
    findings = pl.read_parquet(tmp_path / "findings.parquet").filter(pl.col("kind") == "advantage_play")
    assert findings.height == 1 and findings["p_value"][0] < 1e-3 and findings["q_value"][0] < 0.05
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "advantage_play" in page and "p = " in page


def test_a_finding_reads_across_the_page_and_a_floored_p_reads_below_the_floor(tmp_path):
    """A finding's detail is a row of its own under its columns (as the thirteenth cell it pushed the table past a
    1,400-pixel window: each sentence had to be scrolled to); a p-value floored at 1e-12 reads "p < 1e-12", as the
    sentence says, not "p = 1e-12"."""
    import html

    from out_tables import database_with

    from pipelines.stats.distributions import P_FLOOR

    day = dt.date(2026, 11, 24)
    s = [{"gaming_day": day, "table_id": "BJ-01", "round_no": i, "wager_id": f"W{i}", "wager_order": 1, "seat": 1,
          "player_id": "P-1", "dealer_id": "D-1", "game": "blackjack", "ruleset": "r", "currency": "USD",
          "status": "settled", "bet": "main", "amount": 1000, "settled_amount": 1000, "recorded_net": 1000,
          "expected_net": 1000} for i in range(3)]
    sentence = "P-1 bet with the count over 169 blackjack hands; p < 1e-12; q = 3.4e-10 (1 gaming day to 2026-11-24)."
    f = [{"finding_id": "F1", "kind": "advantage_play", "severity": "high", "gaming_day": day, "player_id": "P-1",
          "expected_net": 3000, "recorded_net": 3000, "detail": sentence + ' {"test":"bet_vs_count"}', "currency": "USD"},
         {"finding_id": "F2", "kind": "advantage_play", "severity": "high", "gaming_day": day, "player_id": "P-1",
          "expected_net": 3000, "recorded_net": 3000, "detail": "P-1, the 7-day window; p = 2.0e-9", "currency": "USD"}]
    f[0]["p_value"], f[1]["p_value"] = P_FLOOR, 2e-9
    f[0]["q_value"] = f[1]["q_value"] = 3.4e-10
    db = database_with(tmp_path / "audit.duckdb", s, f)
    result = runner.invoke(app, ["investigate", "--db", str(db), "--player", "P-1", "--out", str(tmp_path / "inv")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "inv" / "index.html").read_text(encoding="utf-8")
    section = page.split('id="findings"', 1)[1].split("</section>", 1)[0]
    assert "<b>p &lt; 1e-12</b>" in section and "<b>p = 1e-12</b>" not in section
    assert "<b>p = 2.0e-9</b>" in section
    header = section.split("</thead>", 1)[0]
    assert len(re.findall(r"<th[ >]", header)) == 12 and ">detail<" not in header
    rows = re.findall(r'<tr class="detail"><td colspan="12">(.*?)</td></tr>', section, flags=re.S)
    assert len(rows) == 2 and rows[0].startswith(html.escape(sentence, quote=False)) and "the test's evidence (JSON)" in rows[0]


def test_baccarat_theory_is_exact_and_the_rest_the_floors_estimate(audited_sample):
    """TBAC-5.1.1 Banker pays 19:20: its exact edge is 1.06 % (8 decks, the Banker's variance about 0.86); the
    blackjack main wager is the engine's simulation of basic strategy, the Pair exact (BJ-5.1 pays 11:1: 31/415
    of pairs in 8 decks), the Hold'em Ante carries the main game per unit of Ante and the Flop nothing of its own."""
    from pipelines.investigate import bet_moments
    from pipelines.investigation.theory import exact_where_known

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    try:
        m = exact_where_known(bet_moments(con))
    finally:
        con.close()
    banker = m.filter((pl.col("ruleset") == "hoiana-tiger-baccarat/commission") & (pl.col("bet") == "banker")).row(0, named=True)
    assert banker["method"] == "exact"
    assert banker["mean_per_unit"] == pytest.approx(-0.01058, abs=5e-5) and banker["var_per_unit"] == pytest.approx(0.86, abs=0.01)
    main = m.filter((pl.col("ruleset") == "hoiana-blackjack") & (pl.col("bet") == "main")).row(0, named=True)
    assert main["method"] == "simulation" and main["n"] > 100
    assert main["mean_per_unit"] == pytest.approx(-0.0014, abs=5e-4) and main["var_per_unit"] == pytest.approx(1.27, abs=0.05)
    pair = m.filter((pl.col("ruleset") == "hoiana-blackjack") & (pl.col("bet") == "pair")).row(0, named=True)
    p = 31 / 415  # BJ-4.2.3.1 a pair of the first two cards, 8 decks; pays 11:1
    assert pair["method"] == "exact" and pair["mean_per_unit"] == pytest.approx(12 * p - 1, abs=1e-12)
    assert pair["var_per_unit"] == pytest.approx(144 * p * (1 - p), rel=1e-9)
    holdem = m.filter(pl.col("ruleset") == "hoiana-holdem-bonus")
    methods = dict(zip(holdem["bet"].to_list(), holdem["method"].to_list()))
    assert methods.get("ante") == "simulation" and methods.get("bonus") == "exact"
    assert methods.get("flop") in (None, "in the Ante's figure")
    flop = holdem.filter(pl.col("bet") == "flop")
    assert flop.height == 0 or (flop["mean_per_unit"][0] == 0 and flop["var_per_unit"][0] == 0)


def test_bet_moments_agree_with_sql_and_do_not_depend_on_row_order(audited_sample):
    """The floor's estimate is DuckDB's own avg/var_pop of every wager's net per unit (to rounding), and the same
    counts met in another order give the same bits (a re-run's investigation pages do not change)."""
    from pipelines.investigate import bet_moments, moments_per_unit

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    try:
        ours = bet_moments(con)
        sql = pl.from_arrow(con.sql("""
            SELECT ruleset, bet, currency, count(*) AS n, avg(expected_net::DOUBLE / amount) AS mean_per_unit,
                   var_pop(expected_net::DOUBLE / amount) AS var_per_unit
            FROM out_settlements WHERE expected_net IS NOT NULL AND amount > 0 AND status = 'settled'
            GROUP BY ALL ORDER BY ruleset, bet, currency""").to_arrow_table())
        counts = pl.from_arrow(con.sql("""
            SELECT ruleset, bet, currency, ruleset_version, expected_net, amount, count(*) AS c
            FROM out_settlements WHERE expected_net IS NOT NULL AND amount > 0 AND status = 'settled'
            GROUP BY ALL""").to_arrow_table())
    finally:
        con.close()
    assert ours.height == sql.height > 5
    assert ours["n"].to_list() == sql["n"].to_list()
    for col in ("mean_per_unit", "var_per_unit"):
        for a, b in zip(ours[col].to_list(), sql[col].to_list()):
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    for seed in range(3):
        assert moments_per_unit(counts.sample(fraction=1.0, shuffle=True, seed=seed)).equals(ours)


def test_the_page_says_which_bets_theory_is_exact_and_which_simulated(audited_sample, tmp_path):
    from pipelines.investigate import Subject
    from pipelines.investigation.command import write_investigation

    page = write_investigation(audited_sample / "pitaudit.duckdb", Subject("table", "BJ-01"), tmp_path / "inv").read_text(
        encoding="utf-8")
    table = page.split('id="theory"', 1)[1].split("</table>", 1)[0]
    rows = {re.sub(r"<[^>]+>", "|", tr).split("|")[3]: tr for tr in table.split("<tr>")[2:]}
    assert "simulation" in rows["main"] and "exact" in rows["pair"]


def _plotly_built(kind: str, *args):
    """The figures as plotly's own objects build them (validated), for the dicts of pipelines.investigation.figures."""
    import html

    import plotly.graph_objects as go

    from pipelines.investigation.figures import _layout as layout, unit

    if kind == "results":
        curve, currency = args
        c = curve.filter(pl.col("currency") == currency)
        div, label = unit(currency)
        x = c["at"].to_list() if c["at"].null_count() == 0 else c["n"].to_list()
        f = lambda col: (c[col].cast(pl.Float64) / div).to_list()  # noqa: E731
        fig = go.Figure([
            go.Scatter(x=x, y=f("band_hi"), mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip"),
            go.Scatter(x=x, y=f("band_lo"), mode="lines", line={"width": 0}, fill="tonexty",
                       fillcolor="rgba(36,87,166,0.15)", name="95 % band of chance"),
            go.Scatter(x=x, y=f("cum_theory"), mode="lines", line={"color": "#2457a6", "dash": "dash"}, name="expected (theory)"),
            go.Scatter(x=x, y=f("cum_rules"), mode="lines", line={"color": "#039855"}, name="as the rules settle it"),
            go.Scatter(x=x, y=f("cum_recorded"), mode="lines", line={"color": "#b42318"}, name="as recorded (paid)"),
        ])
        return layout(fig, f"Cumulative net to the player(s), {label}", f"net ({label})",
                      "bets closed (UTC)" if x and not isinstance(x[0], int) else "wager").update_layout(
            legend={"orientation": "h", "y": -0.32, "yanchor": "top"})  # below the time axis's two rows of labels
    if kind == "count":
        rows, ramp = args
        div, label = unit(rows["currency"][0])
        fig = go.Figure([
            go.Scatter(x=rows["true_count"].to_list(), y=(rows["amount"].cast(pl.Float64) / div).to_list(), mode="markers",
                       marker={"size": 7, "opacity": 0.55, "color": "#2457a6"}, name="a wager",
                       text=[html.escape(w, quote=False) for w in rows["wager_id"].to_list()]),
            go.Scatter(x=[b["tc"] + 0.5 for b in ramp["by_count"]], y=[b["mean_bet"] / div for b in ramp["by_count"]],
                       mode="lines+markers", line={"color": "#b42318"}, name="mean bet per true count"),
        ])
        r = ramp.get("correlation")
        return layout(fig, "Bet size against the Hi-Lo true count before the round" + (f" (r = {r:.2f})" if r is not None else ""),
                      f"bet ({label})", "true count before the round")
    labels, values, title, y, colour = args
    return layout(go.Figure(go.Bar(x=[html.escape(str(v), quote=False) for v in labels], y=values, marker_color=colour)),
                  title, y, "", height=340).update_xaxes(type="category")  # labels from the log are escaped for plotly's tag subset


def test_the_figures_are_the_bytes_plotlys_validated_figures_give(audited_sample, tmp_path):
    """The figures are plain dicts (validating a 30-day curve of every wager copied each point several times); written
    out, each is byte for byte what plotly's validated figure objects give for the same rows."""
    from pipelines.investigation import figures as F

    write_investigation(audited_sample / "pitaudit.duckdb", Subject("player", COUNTER), tmp_path)
    curve = pl.read_parquet(tmp_path / "results_over_time.parquet")
    rows = pl.read_parquet(tmp_path / "bet_vs_count.parquet")
    ramp = bet_ramp(rows)
    assert curve.height > 80 and rows.height > 80
    gaps = curve.with_columns(pl.when(pl.int_range(pl.len()) % 7 == 3).then(None).otherwise(pl.col("band_lo")).alias("band_lo"),
                              pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("at"))  # missing values, and no times
    for frame in (curve, gaps):
        for cur in frame["currency"].unique().to_list():
            assert F.fragment(F.results_spec(frame, cur), "a") == F.fragment(_plotly_built("results", frame, cur), "a")
    assert F.fragment(F.count_spec(rows, ramp), "b") == F.fragment(_plotly_built("count", rows, ramp), "b")
    bars = (["payout_mismatch", "<b>x</b>", 3], [5, 2, 1], "Findings by kind", "findings", "#b42318")
    assert F.fragment(F.bars_spec(*bars), "c") == F.fragment(_plotly_built("bars", *bars), "c")


def _long_curve(n: int, seed: int = 7) -> pl.DataFrame:
    """One currency's curve of ``n`` wagers: a random walk of recorded nets around a theory line, with one spike
    above and one dip below it a single wager wide (which taking every k-th point would miss)."""

    rng = np.random.default_rng(seed)
    recorded = np.cumsum(rng.integers(-1000, 1000, n))
    recorded[n // 3] += 10**7
    recorded[2 * n // 3 + 1] -= 10**7
    theory = -12.5 * np.arange(1, n + 1)
    sd = 900.0 * np.sqrt(np.arange(1, n + 1))
    return pl.DataFrame({
        "currency": ["USD"] * n, "n": np.arange(1, n + 1), "at": [None] * n, "cum_recorded": recorded,
        "cum_rules": recorded - 5, "cum_theory": theory, "band_lo": theory - Z95 * sd, "band_hi": theory + Z95 * sd,
    }).with_columns(pl.col("at").cast(pl.Datetime("us", "UTC")))


def test_a_long_curve_is_thinned_to_the_bound_keeping_its_extremes_and_its_ends():

    from pipelines.investigation import figures as F

    n, bound = 50_001, 2_000
    curve = _long_curve(n)
    thin = F.thinned(curve, bound)
    assert thin.height <= bound and thin.height >= bound - 2
    assert thin.row(0) == curve.row(0) and thin.row(-1) == curve.row(-1)  # the first and the last wager
    assert thin["n"].is_sorted() and thin["n"].n_unique() == thin.height  # in order, each point once
    assert thin.join(curve, on=[c for c in thin.columns if c != "at"], how="anti").height == 0  # every point drawn is a real wager's
    gap = (curve["cum_recorded"].cast(pl.Float64) - curve["cum_theory"]).to_numpy()
    kept = set(thin["n"].to_list())
    assert {n // 3 + 1, 2 * n // 3 + 2} <= kept  # the one-wager spike and dip (n counts from 1)
    # in every bucket of the wagers between the ends, its farthest above and farthest below theory are drawn
    buckets = (bound - 2) // 2
    inner = np.arange(1, n - 1)
    which = (inner - 1) * buckets // (n - 2)
    for k in range(buckets):
        idx = inner[which == k]
        assert idx[np.argmax(gap[idx])] + 1 in kept and idx[np.argmin(gap[idx])] + 1 in kept
    # the drawn figure: five traces of the thinned points, the recorded line's extremes as the full curve's
    spec = F.results_spec(curve, "USD")
    assert all(len(t["x"]) == thin.height for t in spec["data"])
    recorded = next(t for t in spec["data"] if t.get("name") == "as recorded (paid)")["y"]
    assert max(recorded) == pytest.approx(curve["cum_recorded"].max() / 100)
    assert min(recorded) == pytest.approx(curve["cum_recorded"].min() / 100)
    assert recorded[-1] == pytest.approx(curve["cum_recorded"][-1] / 100)


def test_a_short_curve_is_drawn_whole():
    from pipelines.investigation import figures as F

    curve = _long_curve(F.MAX_POINTS)
    assert F.thinned(curve).equals(curve)
    assert all(len(t["x"]) == curve.height for t in F.results_spec(curve, "USD")["data"])
    assert F.thinned(curve, F.MAX_POINTS - 1).height < curve.height


def _counter_pages(audited_sample, tmp_path, max_points: int) -> tuple[dict, str, str]:
    """The planted counter's frames, and his page written whole and with charts of at most ``max_points`` points."""
    from pipelines.investigation.command import gather, write_pages

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    subject = Subject("player", COUNTER)
    try:
        frames = gather(con, subject)
    finally:
        con.close()
    whole = write_pages(frames, subject, tmp_path / "whole", "db").read_text(encoding="utf-8")
    thin = write_pages(frames, subject, tmp_path / "thin", "db", max_points=max_points).read_text(encoding="utf-8")
    return frames, whole, thin


def test_a_thinned_chart_says_so_and_where_every_point_is(audited_sample, tmp_path):
    frames, whole, thin = _counter_pages(audited_sample, tmp_path, 50)
    points = frames["results_over_time"].height
    assert points > 60
    assert "thinned" not in whole
    assert f"thinned to 50 of its {points:,}" in thin and "results_over_time.parquet and results_over_time.csv" in thin
    assert len(thin) < len(whole)


def test_the_csv_command_a_page_gives_is_one_shell_word_per_value():
    import shlex

    from pipelines.investigation.command import investigate_command

    hostile = "P'; rm -rf ~ #<b>"
    line = investigate_command(Subject("player", hostile, dt.date(2026, 11, 1), dt.date(2026, 11, 30)), "/data/my db.duckdb")
    assert shlex.split(line) == ["pitaudit", "investigate", "--db", "/data/my db.duckdb", "--player", hostile,
                                 "--from", "2026-11-01", "--to", "2026-11-30", "--out", "DIR"]


def _count_rows(n: int, seed: int = 5) -> pl.DataFrame:
    """``n`` blackjack wagers with their true count: flat bets of 100 to 500, and one bet of 90,000 at a count of +4 and
    one of 1 at -2 among them (a sample of every k-th wager would miss them)."""

    rng = np.random.default_rng(seed)
    amount = rng.integers(1, 6, n) * 100
    tc = rng.normal(0, 2, n)
    amount[n // 3 + 1], tc[n // 3 + 1] = 90_000, 4.3
    amount[2 * n // 3 + 1], tc[2 * n // 3 + 1] = 1, -2.5
    return pl.DataFrame({"gaming_day": [dt.date(2026, 11, 1)] * n, "table_id": ["BJ-01"] * n, "round_no": np.arange(n),
                         "wager_id": [f"W{i}" for i in range(n)], "player_id": ["P-1"] * n, "currency": ["USD"] * n,
                         "amount": amount, "true_count": tc, "hilo_rc": [0] * n, "seen": [0] * n})


def test_a_long_bet_versus_count_cloud_draws_a_spread_sample_and_every_counts_largest_and_smallest_bet():
    from pipelines.investigation import figures as F

    rows = _count_rows(30_001)
    sample = F.count_sample(rows, 2_000)
    assert 2_000 <= sample.height <= 2_000 + 18
    assert sample.join(rows, on=rows.columns, how="anti").height == 0 and sample["round_no"].is_sorted()
    assert {90_000, 1} <= set(sample["amount"].to_list())  # the one big bet and the one tiny bet
    bucket = pl.col("true_count").floor().clip(-3, 5)
    for b, grp in rows.group_by(bucket.alias("b")):
        drawn = sample.filter(bucket == b[0])["amount"]
        assert drawn.max() == grp["amount"].max() and drawn.min() == grp["amount"].min()
    # the markers are the sample, the mean-bet line every wager's (the ramp)
    ramp = bet_ramp(rows)
    spec = F.count_spec(rows, ramp)
    assert len(spec["data"][0]["x"]) == sample.height and spec["data"][1]["y"] == [b["mean_bet"] / 100 for b in ramp["by_count"]]
    short = rows.head(2_000)
    assert F.count_sample(short, 2_000).equals(short) and len(F.count_spec(short, bet_ramp(short))["data"][0]["x"]) == 2_000


def test_a_sampled_count_chart_says_so_and_where_every_wager_is(audited_sample, tmp_path):
    frames, whole, thin = _counter_pages(audited_sample, tmp_path, 30)
    wagers = frames["bet_vs_count"].height
    assert wagers > 60
    assert "markers are" not in whole
    assert f"of the {wagers:,} wagers: 30 spread evenly" in thin and "bet_vs_count.parquet and bet_vs_count.csv" in thin


def test_a_long_table_shows_its_first_rows_and_names_the_file_with_all_of_them(audited_sample, tmp_path):
    from pipelines.investigation.command import gather, write_pages
    from pipelines.investigation.render import MAX_HTML_ROWS

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    subject = Subject("player", COUNTER)
    try:
        frames = gather(con, subject)
    finally:
        con.close()
    short = write_pages({**frames, **{n: frames[n].head(5) for n in ("rounds", "findings", "dealers", "played_with")}},
                        subject, tmp_path / "short", "db").read_text(encoding="utf-8")
    long = dict(frames)
    for name in ("rounds", "findings", "dealers", "played_with"):  # each table made longer than the page shows
        frame = frames[name]
        assert frame.height > 0, name
        long[name] = pl.concat([frame] * (MAX_HTML_ROWS // frame.height + 2))
    page = write_pages(long, subject, tmp_path / "long", "db").read_text(encoding="utf-8")
    rounds = long["rounds"].height
    assert f"Every round ({rounds:,}; the first {MAX_HTML_ROWS} here, all in rounds.csv)" in page
    assert f"Findings ({MAX_HTML_ROWS} of {long['findings'].height:,}, the most money first; all in findings.csv)" in page
    assert f"The first {MAX_HTML_ROWS} of {long['dealers'].height:,}; all are in dealers.csv." in page
    assert f"The first {MAX_HTML_ROWS} of {long['played_with'].height:,}; all are in played_with.csv." in page
    body = page[page.index('<section id="rounds">'):]
    assert body.count("<tr") == MAX_HTML_ROWS + 1  # the header and the first rows
    assert "all are in" not in short and "here, all in" not in short and "the most money first" not in short


def test_pages_written_half_on_a_worker_thread_are_the_same_files(audited_sample, tmp_path):
    """The audit writes about half the subjects' pages on a second thread (from PAGES_IN_TWO_FROM subjects): the same
    files, byte for byte, and the same links, as one thread writes."""
    from pipelines.report.linked import write_investigations

    db = audited_sample / "pitaudit.readonly.duckdb"
    con = open_reader(db)
    try:
        findings = con.sql("SELECT * FROM out_findings WHERE p_value IS NOT NULL").pl()
        one = write_investigations(con, tmp_path / "one", findings, "db")
        two = write_investigations(con, tmp_path / "two", findings, "db", db_path=db, workers=2, split_from=1, split_rows=0)
    finally:
        con.close()
    pages = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert len([p for p in pages if p.name == "index.html"]) >= 2 and one[0] and one == two
    assert pages == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*") if p.is_file())
    for page in pages:
        assert (tmp_path / "one" / page).read_bytes() == (tmp_path / "two" / page).read_bytes(), page


def test_pages_started_early_and_cancelled_leave_no_worker_behind(audited_sample, tmp_path):
    """The audit starts the pages' worker as soon as the findings are read (``start_investigations``): finishing gives
    the same files and links as one thread; a publish that fails before finishing cancels it: the worker thread has
    ended when ``cancel`` returns (its cursor closed before the caller closes the connection) and writes no page after
    the one under way."""
    import threading

    from pipelines.report.linked import finish_investigations, start_investigations, write_investigations

    db = audited_sample / "pitaudit.readonly.duckdb"
    con = open_reader(db)
    try:
        findings = con.sql("SELECT * FROM out_findings WHERE p_value IS NOT NULL").pl()
        one = write_investigations(con, tmp_path / "one", findings, "db")
        started = start_investigations(con, tmp_path / "two", findings, db, workers=2, split_from=1, split_rows=0,
                                       database="db")
        assert started.pending is not None and started.theirs
        two = finish_investigations(con, tmp_path / "two", started, "db")
        earlier = set(threading.enumerate())
        cancelled = start_investigations(con, tmp_path / "three", findings, db, workers=2, split_from=1, split_rows=0,
                                         database="db")
        assert cancelled.pending is not None
        workers = [w for w in threading.enumerate() if w not in earlier and w.name.startswith("investigation-pages")]
        assert workers
        cancelled.cancel()
    finally:
        con.close()
    assert one == two and one[0]
    for page in (p for p in (tmp_path / "one").rglob("*") if p.is_file()):
        assert (tmp_path / "two" / page.relative_to(tmp_path / "one")).read_bytes() == page.read_bytes(), page
    assert cancelled.pending is None and not any(w.is_alive() for w in workers)


def test_a_stopped_pages_worker_writes_no_further_page(audited_sample, tmp_path):
    """``write_subject_pages(..., stop=)``: once the publish step has stopped the worker, no page is written and each
    subject says why (the thread cannot be killed: it ends after the page under way)."""
    import threading

    from pipelines.report.linked import subject_of, write_subject_pages

    db = audited_sample / "pitaudit.readonly.duckdb"
    con = open_reader(db)
    try:
        findings = con.sql("SELECT * FROM out_findings WHERE p_value IS NOT NULL").pl()
        subjects = list(dict.fromkeys(s for s in (subject_of(f) for f in findings.iter_rows(named=True)) if s))
        stop = threading.Event()
        stop.set()
        done, why = write_subject_pages(con, tmp_path, subjects, "db", tmp_path / "plotly.min.js", stop=stop)
        going = write_subject_pages(con, tmp_path / "going", subjects[:1], "db", tmp_path / "plotly.min.js",
                                    stop=threading.Event())
    finally:
        con.close()
    assert subjects and done == dict.fromkeys(subjects) and set(why) == set(subjects)
    assert not [p for p in tmp_path.rglob("index.html") if "going" not in p.parts]
    assert going[0][subjects[0]] and list((tmp_path / "going").rglob("index.html"))


def test_a_shoes_cards_read_near_its_rounds_give_each_rounds_count_as_the_whole_history_does():
    """``blackjack_cards(..., near=)`` reads the events within a day of the rounds wanted (the other nights' row groups
    skipped) and a shoe whose start lies further back whole: the count before each wanted round is the one every
    event of the database gives; another night's shoe of the same table is not read."""
    import duckdb

    from pipelines.investigate import blackjack_cards

    con = duckdb.connect()
    con.execute("""CREATE TABLE core_device_events (device_id VARCHAR, table_id VARCHAR, shoe_id VARCHAR, event_seq BIGINT,
                   ts TIMESTAMPTZ, event VARCHAR, round_no BIGINT, card_code SMALLINT, decks SMALLINT)""")
    t0 = dt.datetime(2026, 11, 1, 20, 0, tzinfo=dt.timezone.utc)

    def shoe(shoe_id: str, start: dt.datetime, first_seq: int, first_round: int, rounds: int, every: dt.timedelta) -> None:
        rows = [("D1", "BJ-01", shoe_id, first_seq, start, "shoe_start", None, None, 8)]
        for r in range(rounds):
            for k in range(4):
                rows.append(("D1", "BJ-01", shoe_id, first_seq + 1 + 4 * r + k, start + every * (r + 1), "card",
                             first_round + r, (7 * r + 3 * k) % 52, None))
        con.executemany("INSERT INTO core_device_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    shoe("S-1", t0 - dt.timedelta(days=20), 0, 1, 10, dt.timedelta(minutes=2))  # another night's shoe
    shoe("S-2", t0 - dt.timedelta(days=3), 100, 101, 30, dt.timedelta(hours=3))  # started 3 days before: read whole
    shoe("S-3", t0, 300, 301, 30, dt.timedelta(minutes=2))  # its later rounds lie after the rounds wanted
    wanted = pl.DataFrame({"table_id": ["BJ-01", "BJ-01"], "shoe_id": ["S-2", "S-3"]})
    near = (t0 - dt.timedelta(hours=6), t0 + dt.timedelta(minutes=20))  # S-2's rounds 124-130, S-3's rounds 301-310
    rounds = pl.DataFrame({"table_id": ["BJ-01"] * 17, "shoe_id": ["S-2"] * 7 + ["S-3"] * 10,
                           "round_no": list(range(124, 131)) + list(range(301, 311))})
    every = blackjack_cards(con, ["BJ-01"], wanted)
    read = blackjack_cards(con, ["BJ-01"], wanted, near)
    assert set(read["shoe_id"]) == {"S-2", "S-3"}
    assert read.filter(pl.col("shoe_id") == "S-2").equals(every.filter(pl.col("shoe_id") == "S-2"))  # whole
    on = ["table_id", "shoe_id", "round_no"]
    assert rounds.join(true_counts(read), on=on, how="left").sort(on).equals(
        rounds.join(true_counts(every), on=on, how="left").sort(on))
    assert rounds.join(true_counts(read), on=on, how="left")["true_count"].null_count() == 0


def test_the_workers_share_is_half_the_wagers_in_whole_groups_where_it_can():
    """``worker_share``: groups of one kind and window stay whole (their rows are read with one query per table) and
    the two processes get about half the wagers each; a group holding more than half of them is dealt by subject."""
    from pipelines.report.linked import worker_share

    d1, d7, d30 = dt.date(2026, 12, 1), dt.date(2026, 11, 25), dt.date(2026, 11, 2)
    dealers30 = [("dealer", f"D{i}", d30, d1) for i in range(4)]
    tables30 = [("table", f"T{i}", d30, d1) for i in range(2)]
    players7 = [("player", f"P{i}", d7, d1) for i in range(3)]
    subjects = [players7[0], *dealers30, players7[1], *tables30, players7[2]]
    rows = {**{s: 100 for s in dealers30}, **{s: 190 for s in tables30}, **{s: 10 for s in players7}}
    theirs = worker_share(subjects, rows)
    # the dealers' group (400) to the worker, the tables' (380) here, the players' (30) here: 400 against 410
    assert theirs == dealers30
    # one group of all the wagers: dealt by subject, half each, in the subjects' order
    lone = worker_share(dealers30, {s: 100 for s in dealers30})
    assert lone == [dealers30[0], dealers30[2]]
    assert worker_share([], {}) == []


def test_the_bars_keep_ids_that_look_like_numbers_apart_and_cut_a_long_one_short():
    """Dealer ids "007" and "7" (or "1042") on the dealers' bars: plotly reads an axis of number-like strings as a
    number line, so "007" and "7" were one bar at 7 and "1042" a thin bar at 1,042. The axis is one of categories; an
    id of 5,000 characters is cut short on it (the chart was its label), whole in the rows' files."""
    from pipelines.investigation import figures as F
    from pipelines.report.figures import LABEL_MAX

    spec = F.bars_spec(["007", "7", "1042"], [3, 2, 1], "Rounds under each dealer", "rounds")
    assert spec["layout"]["xaxis"]["type"] == "category" and spec["data"][0]["x"] == ["007", "7", "1042"]
    assert "ticktext" not in spec["layout"]["xaxis"]
    spec = F.bars_spec(["D" * 5000, "D1"], [1, 1], "Rounds under each dealer", "rounds")
    axis = spec["layout"]["xaxis"]
    assert axis["tickvals"] == ["D" * 5000, "D1"] and [len(t) <= LABEL_MAX for t in axis["ticktext"]] == [True, True]


def test_an_investigation_into_a_folder_of_other_files_stops_and_changes_none(audited_sample, tmp_path):
    """``--out report/``, the audit's own folder: the subject's findings.csv replaced the night's without a word (and
    index.html any page of that name). A folder holding other files is refused, as the evidence pack's is; an earlier
    investigation's folder is written again."""
    report = tmp_path / "report"
    report.mkdir()
    for name in ("findings.csv", "report.html"):
        shutil.copyfile(audited_sample / "out" / name, report / name)
    before = {p.name: p.read_bytes() for p in report.iterdir()}
    args = ["investigate", "--db", str(audited_sample / "pitaudit.duckdb"), "--player", COUNTER, "--out"]
    result = runner.invoke(app, [*args, str(report)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"pitaudit: {report} holds other files (report.html): give an empty folder or a previous "
        "investigation's"]
    assert {p.name: p.read_bytes() for p in report.iterdir()} == before
    for _ in range(2):  # a new folder, then the same folder again
        result = runner.invoke(app, [*args, str(tmp_path / "inv")])
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", ["investigate", "evidence"])
def test_a_link_among_a_previous_runs_files_is_replaced_and_what_it_pointed_at_left_alone(audited_sample, tmp_path,
                                                                                            command):
    """``index.html`` in an earlier investigation's folder, a symbolic link to a file elsewhere: the investigation
    wrote the page through it, over that file (the evidence pack removed its previous files first, as both now do)."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "index.html").symlink_to(outside)
    db = str(audited_sample / "pitaudit.duckdb")
    if command == "investigate":
        args = ["investigate", "--db", db, "--player", COUNTER, "--out", str(folder)]
    else:
        row = next(csv.DictReader(io.StringIO((audited_sample / "out" / "findings.csv").read_text(encoding="utf-8"))))
        args = ["evidence", "--db", db, "--table", row["table_id"], "--round", row["round_no"], "--out", str(folder)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "keep"
    assert not (folder / "index.html").is_symlink() and "<html" in (folder / "index.html").read_text(encoding="utf-8")
