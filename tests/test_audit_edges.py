"""The audit end to end on nights at the edges of what the ingest accepts: each case a night an exporter (or an
attacker) can write, which the ingest took and the audit then could not finish.

formats.md, Conventions: "an instant must lie from 0002-01-01 to 9998-12-31 (UTC), so that its local date and gaming
day, and the days the audit reads around them (margins, the 30-day windows, the trend), are dates".
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from test_audit_findings import BANKER_6_THREE_CARDS, PLAYER_NATURAL
from test_audit_support import NightBuilder


def _night() -> NightBuilder:
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000), ("W2", "banker", 10000, 9500)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W3", "player", 600000, 600000)])
    return nb


def _moved(folder: Path, day: str) -> Path:
    """The night's files with every instant of 2026-11-24 (local and UTC) moved to ``day``."""
    for f in folder.iterdir():
        f.write_text(f.read_text(encoding="utf-8").replace("2026-11-24", day), encoding="utf-8")
    return folder


@pytest.mark.parametrize("day", ["9998-12-30", "0002-01-03"])
def test_a_night_at_the_edge_of_the_accepted_instants_is_audited(tmp_path, prefect_harness, day):
    """The near-miss: the last and first days the ingest accepts audit like any night (their margins, windows and
    trend days are dates)."""
    from pipelines.audit.run import run_audit

    inp = _moved(_night().write_input(tmp_path / "night"), day)
    outcome = run_audit(inp, tmp_path / "a.duckdb", tmp_path / "out", progress=False)
    assert [d.isoformat() for d in outcome.scope.days] == [day]
    assert (tmp_path / "out" / "report.html").is_file()
    con = duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*), min(gaming_day) FROM out_settlements").fetchone() == (
            3, dt.date.fromisoformat(day))
    finally:
        con.close()


@pytest.mark.parametrize("day", ["9999-12-27", "0001-01-02"])
def test_a_night_beyond_them_is_quarantined_not_a_stopped_audit(tmp_path, prefect_harness, day):
    """The case that must not pass: rounds on 9999-12-27 (or 0001-01-02) were accepted, and the audit stopped on
    "OverflowError: date value out of range" (a day's margin or window past year 9999). Now every line is
    quarantined as not a timestamp and the night has nothing to audit."""
    from pipelines.audit.run import NothingToAudit, run_audit

    inp = _moved(_night().write_input(tmp_path / "night"), day)
    with pytest.raises(NothingToAudit):
        run_audit(inp, tmp_path / "a.duckdb", tmp_path / "out", progress=False)
    con = duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True)
    try:
        reasons = dict(con.execute("SELECT reason_code, count(*) FROM core_quarantine GROUP BY ALL").fetchall())
    finally:
        con.close()
    assert reasons.get("bad_timestamp", 0) >= 2
