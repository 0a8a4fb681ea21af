"""A night's statistical findings are its new evidence (``run.findings_of(..., new_evidence_only=True)``): an entity
with no rows on the night its window ends with is not a finding again (it was one the last night it played, on more
of its rows), and an entity whose rows are the same in two of the night's windows is one finding, the shorter
window's. Over 30 simulated nights a shoe of the third night had been a finding 31 times, on every night after. The
tests stay whole."""

import datetime as dt
import json

import polars as pl

from pipelines.stats.config import StatsParams
from pipelines.stats.load import StatsInputs
from pipelines.stats.run import findings_of, run_windows, with_fdr
from pipelines.stats.synthetic import Floor, night
from pipelines.stats.tests_frame import tests_frame as make_test_rows

NIGHT = dt.date(2026, 11, 30)


def _test(entity: str, window: int, first: dt.date, last: dt.date, p: float) -> dict:
    return {"kind": "hold_anomaly", "test": "hold_shoe", "entity": entity, "window_days": window, "first_day": first,
            "last_day": last, "table_id": "BAC-08", "game": "baccarat", "currency": "USD", "bet": "all", "rounds": 80,
            "wagers": 300, "expected_net": -1000, "recorded_net": 90000, "p_value": p, "sentence": f"{entity} held",
            "evidence": "{}"}


def test_an_old_shoe_and_a_shoe_of_tonight_in_three_windows():
    old, today = NIGHT - dt.timedelta(days=20), NIGHT
    rows = [
        _test("shoe S-0093 x all bets", 30, old, old, 1e-10),  # dealt 20 days ago: no row tonight
        _test("shoe S-0400 x all bets", 1, today, today, 1e-10),  # dealt tonight: the same rows in all three windows
        _test("shoe S-0400 x all bets", 7, today, today, 1e-10),
        _test("shoe S-0400 x all bets", 30, today, today, 1e-10),
        _test("shoe S-0399 x all bets", 1, today, today, 1e-10),  # begun last night, ended tonight: two sets of rows
        _test("shoe S-0399 x all bets", 7, today - dt.timedelta(days=1), today, 1e-10),
        _test("shoe S-0399 x all bets", 30, today - dt.timedelta(days=1), today, 1e-10),
    ] + [_test(f"shoe S-{i:04d} x all bets", 1, today, today, 0.5) for i in range(40)]
    tests = with_fdr(make_test_rows(rows), StatsParams()).with_columns(pl.lit(NIGHT).alias("window_end"))
    assert tests["flagged"].sum() == 7  # the tests are what they were: all seven flagged
    every = findings_of(tests, StatsParams())
    new = findings_of(tests, StatsParams(), new_evidence_only=True)
    assert every.height == 7
    got = sorted((d["entity"], d["window_days"]) for d in (json.loads(f.split("). ", 1)[1]) for f in new["detail"]))
    assert got == [("shoe S-0399 x all bets", 1), ("shoe S-0399 x all bets", 7), ("shoe S-0400 x all bets", 1)]
    assert set(new["gaming_day"]) == {NIGHT}


def test_a_drifting_table_that_did_not_play_tonight_is_no_finding_tonight():
    """Night 1: three tables, one drifting far below theory (flagged). Night 2: the other two only. Night 2's 7-day
    window still tests the drifting table (on night 1's rows) and flags it, but that is no finding of night 2."""
    first, second = NIGHT - dt.timedelta(days=1), NIGHT
    w1, c1, e1 = night(Floor(baccarat_tables=3, baccarat_rounds=300, blackjack_tables=0, drift=0.35, drift_rounds=1200),
                       first, 7)
    drifting = w1["table_id"].unique().sort()[-1]  # the synthetic floor's last baccarat table drifts
    w2, c2, e2 = night(Floor(baccarat_tables=3, baccarat_rounds=300, blackjack_tables=0), second, 8)
    w2, c2 = w2.filter(pl.col("table_id") != drifting), c2.filter(pl.col("table_id") != drifting)
    inputs = StatsInputs(pl.concat([w1, w2], how="diagonal_relaxed"), pl.concat([e1, e2], how="diagonal_relaxed"),
                         pl.concat([c1, c2], how="diagonal_relaxed"), first, second)
    tests = with_fdr(run_windows(inputs, second, [first, second], StatsParams())[0], StatsParams())
    on_drifting = tests.filter(pl.col("flagged") & (pl.col("test") == "hold_table") & (pl.col("table_id") == drifting))
    assert on_drifting.height > 0 and (on_drifting["window_days"] == 7).all() and (on_drifting["last_day"] == first).all()
    def on_table(findings: pl.DataFrame) -> pl.DataFrame:
        return findings.filter((pl.col("table_id") == drifting) & pl.col("detail").str.starts_with(f"table {drifting} "))

    assert on_table(findings_of(tests, StatsParams())).height == on_drifting.height  # as every flagged test was
    new = findings_of(tests, StatsParams(), new_evidence_only=True)
    assert on_table(new).height == 0
    # what is left is tonight's: every finding's entity played tonight
    flagged_tonight = tests.filter(pl.col("flagged") & (pl.col("last_day") == second))
    assert new.height <= flagged_tonight.height
