"""What the outputs must survive: formula values in a CSV a person opens, and money that does not fit 64 bits.

- Text values that begin with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return get a leading ``'`` in
  findings.csv and quarantine.csv (docs/formats.md, output contract); numbers stay numbers; Parquet and DuckDB
  keep the value as read.
- A night of legal amounts whose total does not fit a BIGINT (at PITAUDIT_MAX_AMOUNT's largest bound) is
  summed exactly (HUGEINT / Int128); a difference never wraps; an amount of 2**63 - 1 is set aside at intake
  and neither that audit nor the next night's breaks.
"""

from __future__ import annotations

import csv
import io

import duckdb
import polars as pl
import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.csv_safe import FORMULA_STARTS, neutralise, neutralise_text
from pipelines.money import INT64_MAX, INT64_MIN, checked_difference
from test_audit_findings import BANKER_6_THREE_CARDS, PLAYER_NATURAL
from test_audit_support import NightBuilder

HYPERLINK = '=HYPERLINK("http://evil.example/","click")'
CMD = "=cmd|' /C calc'!A0"


def _rows(path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


# --- formula injection -----------------------------------------------------------------------------------------

def test_neutralise_quotes_formula_text_and_leaves_numbers_alone():
    df = pl.DataFrame({"t": ["=1+1", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "plain", None, "a=b", "'=x"],
                       "n": [-5, 3, -80000, 0, 1, 2, 3, 4, 5, 6]})
    out = neutralise(df)
    assert out["t"].to_list() == ["'=1+1", "'+1", "'-x", "'@SUM(A1)", "'\tx", "'\rx", "plain", None, "a=b", "'=x"]
    assert out["n"].to_list() == df["n"].to_list() and out.schema["n"] == pl.Int64


@given(st.text(max_size=20))
def test_no_neutralised_text_starts_a_formula_and_the_quote_is_all_that_changed(text):
    out = neutralise_text(text)
    assert not out.startswith(FORMULA_STARTS) if out else True
    assert out == text or (out == "'" + text and text.startswith(FORMULA_STARTS))
    assert neutralise(pl.DataFrame({"t": [text]}))["t"][0] == out


@pytest.fixture(scope="module")
def formula_night(tmp_path_factory, prefect_harness):
    root = tmp_path_factory.mktemp("formula")
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000, 2, HYPERLINK)], dealer_id="@SUM(A1)",
             recorded={"winner": "banker", "player_points": 0, "banker_points": 6})
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 10000, 1, "+1-555-0100")])
    inp = nb.write_input(root / "night")
    with open(inp / "rounds_night.jsonl", "a", encoding="utf-8") as fh:
        fh.write(CMD + "\n")
    result = CliRunner().invoke(app, ["audit", "--input", str(inp), "--db", str(root / "a.duckdb"), "--out", str(root / "out")])
    assert result.exit_code == 0, result.output
    return root


def test_findings_csv_neutralises_formula_text_and_keeps_negative_numbers(formula_night):
    rows = {r["wager_id"]: r for r in _rows(formula_night / "out" / "findings.csv") if r["wager_id"]}
    tiger = rows["W1"]
    assert tiger["player_id"] == "'" + HYPERLINK and tiger["dealer_id"] == "'@SUM(A1)"
    assert (tiger["expected_net"], tiger["recorded_net"], tiger["difference"]) == ("200000", "120000", "-80000")


def test_quarantine_csv_neutralises_the_raw_line(formula_night):
    bad = [r for r in _rows(formula_night / "out" / "quarantine.csv") if r["raw"].endswith("calc'!A0")]
    assert len(bad) == 1 and bad[0]["raw"] == "'" + CMD


def test_investigation_csvs_neutralise_formula_text(formula_night):
    out = formula_night / "investigation"
    result = CliRunner().invoke(app, ["investigate", "--db", str(formula_night / "a.duckdb"), "--player", HYPERLINK,
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    wagers = _rows(out / "wagers.csv")
    assert [r["player_id"] for r in wagers] == ["'" + HYPERLINK]
    assert pl.read_parquet(out / "wagers.parquet")["player_id"].to_list() == [HYPERLINK]


def test_parquet_and_the_database_keep_the_values_as_read(formula_night):
    s = pl.read_parquet(formula_night / "out" / "settlements.parquet")
    assert set(s["player_id"]) == {HYPERLINK, "+1-555-0100"} and set(s["dealer_id"]) == {"@SUM(A1)", "D1"}
    con = duckdb.connect(str(formula_night / "a.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT raw FROM core_quarantine").fetchall() == [(CMD,)]
        assert (HYPERLINK,) in con.execute("SELECT player_id FROM out_findings").fetchall()
    finally:
        con.close()


# --- money beyond 64 bits --------------------------------------------------------------------------------------

@given(st.integers(INT64_MIN, INT64_MAX) | st.none(), st.integers(INT64_MIN, INT64_MAX) | st.none())
def test_a_difference_is_exact_or_null_never_wrapped(recorded, expected):
    got = pl.DataFrame({"r": [recorded], "e": [expected]}, schema={"r": pl.Int64, "e": pl.Int64}).select(
        checked_difference("r", "e"))[0, 0]
    if recorded is None or expected is None:
        assert got is None
    else:
        true = recorded - expected
        assert got == (true if INT64_MIN <= true <= INT64_MAX else None)


BOUND = 10**15  # PITAUDIT_MAX_AMOUNT's largest setting
ROUNDS_PER_TABLE, TABLES, WAGERS = 400, 2, 12  # 9,600 wagers of 10**15: a total of 9.6e18 > 2**63 - 1 (9.2e18)


@pytest.fixture(scope="module")
def big_night(tmp_path_factory, prefect_harness):
    root = tmp_path_factory.mktemp("big")
    nb = NightBuilder()
    limits = {"min": 1, "max": BOUND, "differential": BOUND, "side_min": 1, "side_max": BOUND}
    for t in range(1, TABLES + 1):
        for n in range(1, ROUNDS_PER_TABLE + 1):
            wagers = [(f"T{t}R{n}W{k}", "player" if k % 2 else "banker", BOUND, BOUND if k % 2 else -BOUND, k % 7 + 1)
                      for k in range(WAGERS)]
            nb.round(f"BAC-0{t}", n, PLAYER_NATURAL, wagers, limits=limits)
    inp = nb.write_input(root / "night")
    result = CliRunner().invoke(app, ["audit", "--input", str(inp), "--db", str(root / "a.duckdb"),
                                      "--out", str(root / "out")], env={"PITAUDIT_MAX_AMOUNT": str(BOUND)})
    return root, result


def test_a_total_beyond_64_bits_is_summed_exactly(big_night):
    root, result = big_night
    assert result.exit_code == 0, result.output
    total = TABLES * ROUNDS_PER_TABLE * WAGERS * BOUND
    assert total > INT64_MAX
    from pipelines.audit.publish import settlement_totals
    from pipelines.audit.trend import night_totals

    con = duckdb.connect(str(root / "a.duckdb"), read_only=True)
    try:
        keys = con.execute("SELECT DISTINCT gaming_day, table_id FROM out_settlements").fetchall()
        trend = night_totals(con, (keys[0][0],))
    finally:
        con.close()
    totals = settlement_totals(root / "a.duckdb", keys)
    assert totals["wagered"].to_list() == [total] and totals["recorded"].to_list() == [0]
    assert totals["expected"].to_list() == [0]
    assert trend["handle"].to_list() == [total]
    html = (root / "out" / "report.html").read_text(encoding="utf-8")
    from pipelines.currency import format_amount

    assert format_amount(total, "USD") in html  # in dollars, exact (the report shows major units)


def test_an_amount_of_2_63_minus_1_is_set_aside_and_later_nights_are_unaffected(tmp_path, prefect_harness):
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 2**63 - 1, 2**63 - 1), ("W2", "player", 10000, 10000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W3", "player", 10000, 10000)])
    night1 = nb.write_input(tmp_path / "night1")
    first = CliRunner().invoke(app, ["audit", "--input", str(night1), "--db", str(tmp_path / "a.duckdb"),
                                     "--out", str(tmp_path / "out1")])
    assert first.exit_code == 0, first.output
    quarantine = _rows(tmp_path / "out1" / "quarantine.csv")
    assert len(quarantine) == 1 and str(2**63 - 1) in quarantine[0]["raw"]
    later = NightBuilder()
    later.round("BAC-01", 3, PLAYER_NATURAL, [("W4", "player", 10000, 10000)])
    night2 = later.write_input(tmp_path / "night2")
    (night2 / "rounds_night.jsonl").rename(night2 / "rounds_later.jsonl")
    second = CliRunner().invoke(app, ["audit", "--input", str(night2), "--db", str(tmp_path / "a.duckdb"),
                                      "--out", str(tmp_path / "out2")])
    assert second.exit_code == 0, second.output
    assert set(pl.read_parquet(tmp_path / "out2" / "settlements.parquet")["wager_id"]) >= {"W4"}
