"""A window's untouched entities keep the rows of the same window the night before (pipelines/stats/reuse.py,
issue 10: night 31's statistics against 30 nights). The rows must be those of working every entity out: a database
of simulated nights is audited night after night with the reuse, and each night's outcome is held to the same night
worked out from scratch (every test row with its p, q, flag, sentence and evidence; the funnel; the graph). A re-audit
of a past day with changed evidence must drop exactly the stored windows holding that day, and the next night's
windows must show the change.

The windows here are 1, 3 and 5 days over 9 nights, so that days leave the rolling windows; a player skips the last
nights (his luck rows are carried over), and each shoe plays one night (its hold rows are).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.stats.config import StatsParams
from pipelines.stats.synthetic import Floor, nights
from test_stats_windows import _write_evidence

FIRST = dt.date(2026, 11, 1)
DAYS = 9
PARAMS = StatsParams(windows=(1, 3, 5), hold_min_wagers=50)  # the games' shoes tested too
ABSENT = "P-LUCKY"  # plays two nights only


def _day(i: int) -> dt.date:
    return FIRST + dt.timedelta(days=i)


def _floor(seed_players: int = 40) -> Floor:
    return Floor(baccarat_tables=2, baccarat_rounds=120, blackjack_tables=1, blackjack_rounds=80, players=seed_players,
                 counter_units=8, counter_hands=40, luck_multiple=3, luck_bets=30, colluder=True, collusion_rate=0.05,
                 holdem_tables=1, holdem_rounds=40, blackjack_side=True)


def _database(folder: Path, seed: int, absent_from: int) -> Path:
    """The evidence of ``DAYS`` simulated nights; ``ABSENT`` plays only the two nights before night ``absent_from``."""
    w, c, e = nights(_floor(), FIRST, DAYS, seed=seed)
    away = (pl.col("gaming_day") >= _day(absent_from)) | (pl.col("gaming_day") < _day(absent_from - 2))
    w = w.filter(~((pl.col("player_id") == ABSENT) & away))
    db = folder / "nights.duckdb"
    _write_evidence(db, w, c, e)
    return db


class Spy:
    """Counts the rows each window's ``Reuse.match`` kept, by test (the tests must show the reuse at work)."""

    def __init__(self, monkeypatch):
        from pipelines.stats import reuse

        self.kept: dict[str, int] = {}
        self.games = 0  # the Hold'em and blackjack hold rows kept
        self.entities: set[str] = set()
        original = reuse.Reuse.match

        def match(me, candidates, on):
            mask, rows = original(me, candidates, on)
            for test, entity in rows.select("test", "entity").iter_rows():
                self.kept[test] = self.kept.get(test, 0) + 1
                self.entities.add(entity)
                self.games += test.startswith("hold_") and ("Hold'em" in entity or "blackjack" in entity)
            return mask, rows

        monkeypatch.setattr(reuse.Reuse, "match", match)


def _audit(db: Path, days: list[dt.date], reuse: bool = True):
    from pipelines.stats.run import statistics_step, write_statistics

    outcomes = statistics_step(db, days, PARAMS, reuse=reuse)
    write_statistics(db, outcomes)
    return outcomes


def _scratch(db: Path, days: list[dt.date], folder: Path):
    """The same nights worked out from scratch, on a copy of the database as it is now."""
    from pipelines.stats.run import statistics_step

    copy = folder / f"scratch-{days[0]}.duckdb"
    shutil.copyfile(db, copy)
    return statistics_step(copy, days, PARAMS, reuse=False)


def _same(a, b) -> None:
    """Two outcomes of one night: equal test rows (every column: p, q, flag, sentence, evidence), funnel and graph."""
    assert a.night == b.night and a.windows == b.windows
    order = ["window_days", "test", "entity", "currency"]
    ta, tb = a.tests.sort(order), b.tests.sort(order)
    assert ta.height == tb.height > 0
    assert ta.equals(tb), ta.join(tb, on=ta.columns, how="anti", nulls_equal=True).head(5)
    if a.funnel.height or b.funnel.height:
        fo = ["window_days", "entity_type", "entity", "bet", "currency"]
        fa, fb = a.funnel.sort(fo), b.funnel.sort(fo).select(a.funnel.columns).cast(a.funnel.schema)
        floats = [c for c, t in fa.schema.items() if t == pl.Float64]
        assert fa.drop(floats).equals(fb.drop(floats))
        # the funnel's p is not rounded: its last digits come from float sums over the far rows, which DuckDB hands over
        # in no set order (two runs from scratch differ as much)
        for c in floats:
            assert fa[c].to_numpy() == pytest.approx(fb[c].to_numpy(), rel=1e-12, abs=0, nan_ok=True), c
    assert a.graph.equals(b.graph)
    assert a.findings.sort("finding_id").equals(b.findings.sort("finding_id"))


def test_each_night_with_reuse_is_the_night_worked_out_from_scratch(tmp_path, monkeypatch):
    db = _database(tmp_path, seed=5, absent_from=6)
    spy = Spy(monkeypatch)
    for i in range(DAYS):
        day = _day(i)
        reference = _scratch(db, [day], tmp_path)[0]
        outcome = _audit(db, [day])[0]
        _same(outcome, reference)
    # the shoes of earlier nights, the absent player's luck, the games' shoes: kept, not worked out
    assert spy.kept.get("hold_shoe", 0) > 100 and spy.kept.get("luck", 0) >= 2, spy.kept
    assert spy.games > 10, spy.games  # the games' shoes too (the same padding width as the night before)


def test_a_re_audit_of_a_past_day_drops_the_windows_holding_it_and_the_next_night_shows_the_change(tmp_path, monkeypatch):
    from pipelines.db import open_reader, open_writer

    db = _database(tmp_path, seed=7, absent_from=7)
    for i in range(DAYS - 1):
        _audit(db, [_day(i)])
    changed = _day(4)
    con = open_reader(db)
    try:
        before = {r[0:2]: r[2] for r in con.execute("SELECT night, window_days, first_day FROM stat_window_basis").fetchall()}
        shoe = con.execute("""SELECT key FROM stat_day_hold WHERE gaming_day = ? AND grouping = 'shoe_id' AND level = 'all'
                              ORDER BY wagers DESC, key LIMIT 1""", [changed]).fetchall()[0][0]
        old = con.execute("""SELECT p_value, sentence FROM out_stat_tests WHERE night = ? AND window_days = 5
                             AND entity = ?""", [_day(DAYS - 2), f"shoe {shoe} x all bets"]).fetchall()
    finally:
        con.close()
    assert {(_day(i), w) for i in range(4, DAYS - 1) for w in (1, 3, 5)} <= set(before)
    assert len(old) == 1
    # the shoe's Banker wagers re-settled at a win for every player (a re-export with other nets): a re-audit of that day
    con = open_writer(db)
    try:
        con.execute("""UPDATE out_settlements SET recorded_net = abs(amount) WHERE gaming_day = ? AND bet = 'banker'
                       AND (table_id, round_no) IN (SELECT table_id, round_no FROM core_rounds WHERE shoe_id = ?)""",
                    [changed, shoe])
    finally:
        con.close()
    _audit(db, [changed])
    con = open_reader(db)
    try:
        after = {r[0:2]: r[2] for r in con.execute("SELECT night, window_days, first_day FROM stat_window_basis").fetchall()}
    finally:
        con.close()
    holding = {k for k, first in before.items() if first <= changed <= k[0]}
    # exactly the windows holding the day are gone, but the re-audited night's own (written now, from the new summaries)
    assert set(after) == (set(before) - holding) | {(changed, w) for w in (1, 3, 5)}
    assert {k for k in before if k not in holding} <= set(after)
    # the next night: its 5-day window holds the changed day; the shoe played only then, so it is untouched tonight,
    # and its row must be worked out anew (or carried over from a window written after the re-audit), not yesterday's
    spy = Spy(monkeypatch)
    night = _day(DAYS - 1)
    reference = _scratch(db, [night], tmp_path)[0]
    outcome = _audit(db, [night])[0]
    _same(outcome, reference)
    row = outcome.tests.filter((pl.col("window_days") == 5) & (pl.col("entity") == f"shoe {shoe} x all bets"))
    assert row.height == 1 and (row["p_value"][0], row["sentence"][0]) != old[0]
    assert spy.kept.get("hold_shoe", 0) > 0  # the windows that do not hold the changed day still carry rows over


def test_a_basis_of_other_parameters_is_not_used(tmp_path, monkeypatch):
    from pipelines.stats.run import statistics_step

    db = _database(tmp_path, seed=3, absent_from=5)
    for i in range(DAYS - 1):
        _audit(db, [_day(i)])
    spy = Spy(monkeypatch)
    other = StatsParams(windows=(1, 3, 5), hold_min_wagers=60)
    outcome = statistics_step(db, [_day(DAYS - 1)], other)[0]
    assert spy.kept == {}
    copy = tmp_path / "other.duckdb"
    shutil.copyfile(db, copy)
    _same(outcome, statistics_step(copy, [_day(DAYS - 1)], other, reuse=False)[0])


def test_nights_of_one_run_carry_rows_over_from_the_night_before_in_memory(tmp_path, monkeypatch):
    """A backfill of several nights in one run: each night's windows take the untouched entities' rows from the
    night before it in the same run (the database holds nothing yet), the same rows as from scratch."""
    db = _database(tmp_path, seed=9, absent_from=6)
    spy = Spy(monkeypatch)
    days = [_day(i) for i in range(DAYS)]
    reference = _scratch(db, days, tmp_path)
    outcomes = _audit(db, days)
    for a, b in zip(outcomes, reference):
        _same(a, b)
    assert spy.kept.get("hold_shoe", 0) > 100


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), absent_from=st.integers(2, DAYS), split=st.integers(1, DAYS - 1))
def test_incremental_nights_equal_from_scratch_whatever_the_floor(tmp_path_factory, seed, absent_from, split):
    """Any floor, any night a player leaves, nights audited one by one then the rest in one run: each night's outcome
    is the one worked out from scratch."""
    folder = tmp_path_factory.mktemp("reuse")
    db = _database(folder, seed=seed, absent_from=absent_from)
    days = [_day(i) for i in range(DAYS)]
    for day in days[:split]:
        reference = _scratch(db, [day], folder)[0]
        _same(_audit(db, [day])[0], reference)
    reference = _scratch(db, days[split:], folder)
    for a, b in zip(_audit(db, days[split:]), reference):
        _same(a, b)


def test_the_games_entities_are_carried_over_only_under_the_same_padding_width(tmp_path, monkeypatch):
    """A games entity's moments are summed over outcome vectors padded to the widest distribution the window tests;
    a basis written under another width (here: none recorded) carries no games row over, the others still."""
    from pipelines.db import open_writer

    db = _database(tmp_path, seed=13, absent_from=6)
    for i in range(DAYS - 1):
        _audit(db, [_day(i)])
    con = open_writer(db)
    try:
        con.execute("UPDATE stat_window_basis SET widths = '{}'")
    finally:
        con.close()
    spy = Spy(monkeypatch)
    night = _day(DAYS - 1)
    reference = _scratch(db, [night], tmp_path)[0]
    _same(_audit(db, [night])[0], reference)
    assert spy.games == 0 and spy.kept.get("hold_shoe", 0) > 0, (spy.games, spy.kept)
