"""The investigators' queries and the notebook that charts them, on a snapshot of a hand-made night."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from out_tables import database_with
from pipelines.db import open_snapshot
from pipelines.investigate import dealer_overpayments, findings_about, player_by_day, table_hold_by_day

DAY1, DAY2 = dt.date(2026, 11, 23), dt.date(2026, 11, 24)


def _wager(day, table, round_no, wager, player, dealer, amount, recorded, expected, status="settled"):
    return {
        "gaming_day": day, "table_id": table, "round_no": round_no, "wager_id": wager, "player_id": player,
        "dealer_id": dealer, "currency": "USD", "status": status, "bet": "banker", "amount": amount,
        "recorded_net": recorded, "expected_net": expected,
        "difference": None if expected is None else recorded - expected,
    }


SETTLEMENTS = [
    _wager(DAY1, "BAC-01", 1, "W1", "P-1", "D7", 10000, 9500, 9500),
    _wager(DAY1, "BAC-01", 2, "W2", "P-1", "D7", 10000, 10000, 9500),  # overpaid 500 by D7
    _wager(DAY1, "BAC-01", 2, "W3", "P-2", "D7", 20000, -20000, -20000),
    _wager(DAY2, "BAC-01", 9, "W4", "P-1", "D8", 5000, -5000, -5000),
    _wager(DAY2, "BAC-01", 10, "W5", None, "D7", 3000, 3000, None),  # not settleable
]
FINDINGS = [
    {"finding_id": "F1", "kind": "payout_mismatch", "severity": "high", "gaming_day": DAY1, "table_id": "BAC-01",
     "round_no": 2, "wager_id": "W2", "player_id": "P-1", "dealer_id": "D7", "expected_net": 9500,
     "recorded_net": 10000, "difference": 500, "rule_ref": "TBAC-5.1.1", "detail": "commission not taken",
     "source_file": "rounds.jsonl", "source_line": 2},
    {"finding_id": "F2", "kind": "late_wager", "severity": "medium", "gaming_day": DAY2, "table_id": "BAC-02",
     "round_no": 4, "wager_id": "W9", "player_id": "P-3", "dealer_id": "D8", "rule_ref": "TBAC-4.2",
     "detail": "placed after the first card", "source_file": "rounds.jsonl", "source_line": 9},
]


@pytest.fixture
def snapshot_db(tmp_path) -> Path:
    return database_with(tmp_path / "audit.duckdb", SETTLEMENTS, FINDINGS)


def test_player_by_day_sums_each_day(snapshot_db):
    with open_snapshot(snapshot_db) as con:
        df = player_by_day(con, "P-1")
    assert df["gaming_day"].to_list() == [DAY1, DAY2]
    assert df["wagers"].to_list() == [2, 1]
    assert df["wagered"].to_list() == [20000, 5000]
    assert df["recorded_net"].to_list() == [19500, -5000]
    assert df["overpaid"].to_list() == [500, 0]


def test_dealer_overpayments_names_the_player_overpaid(snapshot_db):
    with open_snapshot(snapshot_db) as con:
        df = dealer_overpayments(con, "D7")
    top = df.row(0, named=True)
    assert (top["player_id"], top["overpaid_wagers"], top["overpaid"]) == ("P-1", 1, 500)
    assert set(df["player_id"]) == {"P-1", "P-2", "(unrated)"}


def test_table_hold_is_the_house_win_over_the_drop(snapshot_db):
    with open_snapshot(snapshot_db) as con:
        df = table_hold_by_day(con, "BAC-01")
    day1 = df.filter(pl.col("gaming_day") == DAY1).row(0, named=True)
    assert day1["wagered"] == 40000
    assert day1["house_win_recorded"] == 500  # -(9500 + 10000 - 20000)
    assert day1["house_win_expected"] == 1000
    assert day1["hold_expected"] == pytest.approx(1000 / 40000)


def test_findings_about_needs_a_subject_and_filters_by_it(snapshot_db):
    with open_snapshot(snapshot_db) as con:
        assert findings_about(con, dealer_id="D7")["wager_id"].to_list() == ["W2"]
        assert findings_about(con, table_id="BAC-02")["kind"].to_list() == ["late_wager"]
        with pytest.raises(ValueError):
            findings_about(con)
