"""Windows from per-day summaries give the p-values of the full re-read of their wagers (issue 10: tonight's audit
must not slow down as history grows; pipelines/stats/summaries.py, windows.py, summary_store.py). Every detector,
mid-shoe entry included: a window reads no wager and no card event.

A database is built from simulated nights (the statistical detectors' own simulator: shuffled shoes, the rules
engine's resolver; a counter, a lucky Big Tiger bettor and a colluding dealer planted; a Hold'em Bonus table with a
lucky Bonus bettor, blackjack with Pair and Insurance wagers). Each night is summarised
and written as the audit does, one night after the other; the windows of the last night read only the stored
summaries. The reference is today's full re-read: every detector over every wager and card event of each
window (``run.run_windows`` over ``load.load_inputs``). The statistics that are exact (the luck convolution,
the binomial tails of collusion and dealer error rates) must give equal p-values; the others equal to 1e-9
relative (their sums meet the rows in another order).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.stats.config import StatsParams
from pipelines.stats.synthetic import Floor, nights

FIRST = dt.date(2026, 11, 1)
DAYS = 9
PARAMS = StatsParams(windows=(1, 7, 30))
EXACT = {"luck", "overpaid_pair", "dealer_error_rate"}


def _write_evidence(db: Path, wagers: pl.DataFrame, cards: pl.DataFrame, errors: pl.DataFrame) -> None:
    """The tables the detectors read (out_settlements, out_findings, core_rounds, core_device_events), with the
    columns they use: a round closes at 20:00 of its gaming day plus a minute per round of its table, its cards
    are seen then, its shoe starts a minute before its first round."""
    from pipelines.db import open_writer
    from pipelines.stats.load import WAGER_COLUMNS

    rounds = wagers.group_by("gaming_day", "table_id", "round_no").agg(
        pl.col("game").first(), pl.col("shoe_id").first(), pl.col("decks").first()).sort("gaming_day", "table_id", "round_no")
    rounds = rounds.with_columns((pl.col("gaming_day").cast(pl.Datetime("us", "UTC")) + pl.duration(hours=20)
                                  + pl.duration(minutes=pl.int_range(pl.len()).over("gaming_day", "table_id"))).alias("closed"))
    shoes = rounds.group_by("table_id", "shoe_id").agg(pl.col("closed").min() - pl.duration(minutes=1), pl.col("decks").first())
    events = pl.concat([
        shoes.select("table_id", "shoe_id", pl.lit(0, dtype=pl.Int64).alias("event_seq"), pl.col("closed").alias("ts"),
                     pl.lit("shoe_start").alias("event"), pl.lit(None, dtype=pl.Int64).alias("round_no"),
                     pl.lit(None, dtype=pl.Int16).alias("card_code"), pl.col("decks").cast(pl.Int16)),
        cards.join(rounds.select("table_id", "round_no", "closed"), on=["table_id", "round_no"]).select(
            "table_id", "shoe_id", "event_seq", pl.col("closed").alias("ts"), pl.lit("card").alias("event"), "round_no",
            "card_code", pl.lit(None, dtype=pl.Int16).alias("decks")),
    ]).sort("ts", "table_id", "event_seq")
    from pipelines.audit.publish import ensure_out_tables

    con = open_writer(db)
    try:
        ensure_out_tables(con)
        for name, df in (("out_settlements", wagers.select(WAGER_COLUMNS)), ("out_findings", errors),
                         ("x_rounds", rounds), ("x_events", events)):
            path = db.with_name(f"{name}.parquet")
            df.write_parquet(path)
            source = f"read_parquet('{path.as_posix()}')"
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {source}" if name.startswith("out_")
                        else f"CREATE TABLE {name} AS SELECT * FROM {source}")
        con.execute("DELETE FROM core_rounds")
        con.execute("""INSERT INTO core_rounds BY NAME SELECT table_id, round_no, game, 'x' AS ruleset, shoe_id,
                       closed AS bets_closed_at, closed AS settled_at, gaming_day, 'settled' AS status, 0 AS wager_count,
                       0 AS action_count, 'USD' AS currency, 0 AS utc_offset_minutes, 'rounds.jsonl' AS source_file,
                       row_number() OVER () AS source_line FROM x_rounds""")
        con.execute("""INSERT INTO core_device_events BY NAME SELECT 'DEV-' || table_id AS device_id, table_id, shoe_id,
                       event_seq, ts, event, round_no, card_code, decks, 'events.jsonl' AS source_file,
                       row_number() OVER () AS source_line FROM x_events""")
    finally:
        con.close()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    floor = Floor(baccarat_tables=3, baccarat_rounds=150, blackjack_tables=1, blackjack_rounds=120, players=40,
                  counter_units=8, counter_hands=60, luck_multiple=5, luck_bets=40, colluder=True, collusion_rate=0.05,
                  holdem_tables=1, holdem_rounds=60, holdem_luck_multiple=5, holdem_luck_bets=30, blackjack_side=True)
    w, c, e = nights(floor, FIRST, DAYS, seed=11)
    db = tmp_path_factory.mktemp("windows") / "h.duckdb"
    _write_evidence(db, w, c, e)
    return db


def _by_test(tests: pl.DataFrame) -> dict[tuple, float]:
    return {(r["test"], r["entity"], r["currency"], r["window_days"]): r["p_value"] for r in tests.iter_rows(named=True)}


def test_the_windows_summed_from_stored_summaries_give_the_full_re_reads_p_values(history):
    from pipelines.db import open_reader
    from pipelines.stats.load import gaming_days, load_inputs
    from pipelines.stats.run import run_windows, statistics_step, write_statistics

    days = [FIRST + dt.timedelta(days=i) for i in range(DAYS)]
    for day in days:  # night after night, as the audit writes them
        write_statistics(history, statistics_step(history, [day], PARAMS))
    con = open_reader(history)
    try:
        stored = con.execute("SELECT gaming_day FROM stat_days ORDER BY 1").fetchall()
        assert [r[0] for r in stored] == days
        night = days[-1]
        from pipelines.stats.run import _summaries_for, statistical_findings, summary_windows
        from pipelines.stats.summaries import empty_summaries

        present = gaming_days(con)
        summaries, fresh, rows = _summaries_for(con, present, empty_summaries(), PARAMS)
        assert fresh.days == ()  # nothing re-read from the evidence: every day was stored
        summed = summary_windows(summaries, night, present, PARAMS, rows)[0]  # before the FDR rounds p to 6 digits
        flagged = statistical_findings(con, night, PARAMS).tests.filter(pl.col("flagged"))
        inputs = load_inputs(con, night - dt.timedelta(days=29), night)
        full = run_windows(inputs, night, gaming_days(con), PARAMS)[0]
    finally:
        con.close()
    new, ref = _by_test(summed), _by_test(full)
    assert set(new) == set(ref) and len(ref) > 500
    assert {k[3] for k in ref} == {1, 7, 30}
    assert {k[0] for k in ref} >= {"hold_table", "hold_dealer", "hold_shoe", "dealer_error_rate", "luck", "bet_vs_count",
                                   "pair_count", "tiger_count", "overpaid_pair", "mid_shoe_entry"}
    # mid-shoe entry too is summed from the nights' summaries (stat_day_entries), in every window
    assert {k[3] for k in ref if k[0] == "mid_shoe_entry"} == {1, 7, 30}
    # the Hold'em Bonus and blackjack bets' hold and luck are summed from their own summaries (hold_games, luck_games)
    games = {(k[0], e) for k in ref for e in ("Hold'em Bonus", "Hold'em main-game", "blackjack Pair", "Insurance",
                                              "blackjack main-game") if e in k[1]}
    assert {("hold_table", "Hold'em Bonus"), ("hold_table", "Hold'em main-game"), ("hold_dealer", "blackjack Pair"),
            ("hold_table", "blackjack main-game"), ("luck", "Hold'em Bonus"),
            ("luck", "blackjack Pair")} <= games, games
    for key, p in ref.items():
        if key[0] in EXACT:
            assert new[key] == p, key
        else:
            assert new[key] == pytest.approx(p, rel=1e-9, abs=0), key
    # the planted behaviours are found in the summed windows as in the full re-read
    assert {"P-COUNTER", "P-LUCKY", "P-COLLUDER"} <= set(flagged["player_id"].drop_nulls())


def test_a_day_without_a_stored_summary_is_summarised_from_the_evidence(history, tmp_path):
    """A database upgraded from schema 3 has no summaries: the windows summarise their days from the evidence (the
    same p-values), and the writer stores them for the next night."""
    import shutil

    from pipelines.db import open_reader, open_writer
    from pipelines.stats.run import statistical_findings, statistics_step, write_statistics

    db = tmp_path / "copy.duckdb"
    shutil.copyfile(history, db)
    night = FIRST + dt.timedelta(days=DAYS - 1)
    con = open_reader(db)
    try:
        before = _by_test(statistical_findings(con, night, PARAMS).tests)
    finally:
        con.close()  # (p-values to 6 digits, as the findings carry them)
    con = open_writer(db)
    try:
        for table in ("stat_days", "stat_day_hold", "stat_day_hold_rows", "stat_day_luck"):
            con.execute(f"DELETE FROM {table}")
    finally:
        con.close()
    outcomes = statistics_step(db, [night], PARAMS)
    assert set(outcomes[0].summaries.days) == {FIRST + dt.timedelta(days=i) for i in range(DAYS)}
    after = _by_test(outcomes[0].tests)
    assert set(after) == set(before)
    for key, p in before.items():
        assert after[key] == pytest.approx(p, rel=1e-5, abs=0), key  # 6 significant digits either side
    write_statistics(db, outcomes)
    con = open_reader(db)
    try:
        assert con.execute("SELECT count(*) FROM stat_days").fetchall()[0][0] == DAYS
    finally:
        con.close()


def test_a_schema_3_database_is_upgraded_in_place_with_the_summary_tables(tmp_path):
    from pipelines.db import get_meta, open_writer
    from schemas.derived import STAT_DAY_TABLES

    db = tmp_path / "old.duckdb"
    con = open_writer(db)
    for table in STAT_DAY_TABLES:
        con.execute(f"DROP TABLE {table}")
    con.execute("UPDATE meta_schema SET value = '3' WHERE name = 'schema_version'")
    con.close()
    con = open_writer(db)
    try:
        assert get_meta(con, "schema_version") == "7"
        have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert set(STAT_DAY_TABLES) <= have
    finally:
        con.close()


def _upgraded_from(db, version: int, summary_format: int, later_tables: tuple[str, ...]):
    """A new database made to look like one of schema ``version`` (the tables of later schemas dropped, FIRST
    summarised in ``summary_format``), then opened again by the writer, which upgrades it: that connection."""
    from pipelines.db import open_writer

    con = open_writer(db)
    for table in later_tables:
        con.execute(f"DROP TABLE {table}")
    con.execute("UPDATE meta_schema SET value = ? WHERE name = 'schema_version'", [str(version)])
    con.execute("INSERT INTO stat_days VALUES (?, ?)", [FIRST, summary_format])
    con.close()
    return open_writer(db)


def test_a_schema_4_database_gets_the_games_summary_tables_and_its_days_are_summarised_again(tmp_path):
    """Schema 5 adds the Hold'em Bonus and blackjack summaries: a schema-4 file gains their tables, and a day stored in
    the summaries' earlier format counts as not summarised (a window summarises it again from the evidence)."""
    from pipelines.db import get_meta
    from pipelines.stats.summary_store import summarised_days

    con = _upgraded_from(tmp_path / "four.duckdb", 4, 1, ("stat_day_games_hold", "stat_day_games_draws",
                                                          "stat_day_games_luck", "stat_day_games_luck_parts",
                                                          "stat_day_games_jackpot"))
    try:
        assert get_meta(con, "schema_version") == "7"
        have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "stat_day_games_draws" in have and "stat_day_games_jackpot" in have
        assert summarised_days(con, FIRST, FIRST) == set()
    finally:
        con.close()


def test_the_summary_frames_match_their_tables():
    """Every DaySummaries frame has a table of the same columns (schemas.derived) and back."""
    from pipelines.stats.summaries import empty_summaries
    from schemas.derived import STAT_DAY_TABLES, table_of

    frames = empty_summaries().frames()
    assert {table_of(f) for f in frames} == set(STAT_DAY_TABLES) - {"stat_days"}
    for frame, df in frames.items():
        assert df.columns == [c for c, _ in STAT_DAY_TABLES[table_of(frame)]], frame


def test_investigate_sums_the_stored_summaries_of_its_range(history):
    """``investigate(con, first, last)``: the stored summaries of its days give the full re-read's p-values."""
    from pipelines.db import open_reader
    from pipelines.stats.load import load_inputs
    from pipelines.stats.run import detect_all, investigate

    first, last = FIRST + dt.timedelta(days=2), FIRST + dt.timedelta(days=5)
    con = open_reader(history)
    try:
        got = _by_test(investigate(con, first, last, PARAMS).tests)  # p to 6 significant digits
        ref = _by_test(detect_all(load_inputs(con, first, last), PARAMS, 4)[0].with_columns(pl.lit(4).alias("window_days")))
    finally:
        con.close()
    assert set(got) == set(ref) and ref
    for key, p in ref.items():
        assert got[key] == pytest.approx(p, rel=1e-5, abs=0), key


def test_the_sum_distribution_over_its_span_is_the_exact_trinomial_tail():
    """``sum_distribution`` takes its FFT over the span Bernstein's inequality leaves all but 1e-18 in, not the whole
    support: n Banker bets (-1, a push, +0.95) against the exact sum over the trinomial counts (wins W, losses L:
    S = 19 W - 20 L twentieths), from the tail's middle down to 1e-10."""
    import math

    import numpy as np

    from pipelines.stats.distributions import baccarat_payouts, sum_distribution

    banker = baccarat_payouts("hoiana-tiger-baccarat/commission", "01/01.10.2024", 8)["banker"]
    probs = dict(zip(banker.values, banker.probs))
    pw, pl_, pt = probs[19], probs[-20], probs[0]
    n = 1500
    offset, pmf = sum_distribution([(banker, n)])
    assert len(pmf) < (39 * n + 1) / 2  # the span, not the support
    sf = np.cumsum(pmf[::-1])[::-1]
    lg = np.array([math.lgamma(i + 1) for i in range(n + 1)])

    def exact(s: int) -> float:
        total = 0.0
        for w in range(n + 1):
            top = min(n - w, math.floor((19 * w - s) / 20))
            if top < 0:
                continue
            ls = np.arange(top + 1)
            t = n - w - ls
            total += float(np.exp(lg[n] - lg[w] - lg[ls] - lg[t] + w * math.log(pw) + ls * math.log(pl_)
                                  + t * math.log(pt)).sum())
        return total

    for target in (0.3, 1e-3, 1e-6, 1e-10):
        j = int(np.argmax(sf < target))
        assert sf[j] == pytest.approx(exact(offset + j), rel=1e-5), target


def test_a_schema_5_database_gets_the_mid_shoe_entry_table_and_its_days_are_summarised_again(tmp_path):
    """Schema 6 adds mid-shoe entry's summary (stat_day_entries): a schema-5 file gains the table in place, and a day
    summarised in format 2 (without it) counts as not summarised, so a window summarises it again."""
    from pipelines.db import get_meta
    from pipelines.stats.summary_store import summarised_days

    con = _upgraded_from(tmp_path / "five.duckdb", 5, 2, ("stat_day_entries",))
    try:
        assert get_meta(con, "schema_version") == "7"
        cols = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = "
                                          "'stat_day_entries' ORDER BY ordinal_position").fetchall()]
        assert cols[:4] == ["player_id", "currency", "table_id", "shoe_id"] and "rank" in cols
        assert summarised_days(con, FIRST, FIRST) == set()
    finally:
        con.close()


def test_a_shoe_played_across_midnight_is_entered_once_at_its_earliest_round():
    """A window's mid-shoe entries from its days' rows: a player who played one shoe on two gaming days entered it
    once, at the earliest round (the day before's), as a re-read of the window's wagers finds him."""
    from pipelines.stats.wonging import ENTRIES_SCHEMA, entry_rows, window_entries

    day1, day2 = FIRST, FIRST + dt.timedelta(days=1)
    row = {"player_id": "P1", "currency": "USD", "table_id": "BJ-01", "ruleset": "r", "m": 40, "mu": 0.1}
    days = pl.DataFrame([
        {**row, "shoe_id": "S1", "entered": 30, "round_no": 130, "gaming_day": day2, "rank": 12.0, "true_count": 0.4},
        {**row, "shoe_id": "S1", "entered": 8, "round_no": 108, "gaming_day": day1, "rank": 39.0, "true_count": 3.1},
        *[{**row, "shoe_id": f"S{i}", "entered": 9, "round_no": 200 + i, "gaming_day": day2, "rank": 35.0,
           "true_count": 2.5} for i in range(2, 6)],
    ], schema=ENTRIES_SCHEMA)
    window = window_entries(days)
    assert window.height == 5
    assert window.filter(pl.col("shoe_id") == "S1").select("entered", "gaming_day", "rank").row(0) == (8, day1, 39.0)
    t = entry_rows(window, PARAMS, 2).row(0, named=True)
    assert t["wagers"] == 5 and t["first_day"] == day1 and t["last_day"] == day2
    # the statistic: centred ranks 39 - 20.5 and four of 35 - 20.5, variance 5 x (40^2 - 1) / 12
    import json
    import math

    assert json.loads(t["evidence"])["z"] == round((18.5 + 4 * 14.5) / math.sqrt(5 * 1599 / 12), 3)


def test_open_days_are_the_latest_day_with_a_sliver_of_the_day_befores_rounds():
    """``load.open_days``: the latest gaming day of the database with under 1/24 of the previous day's rounds is still in
    play (the next day's first rounds in tonight's export); with as many rounds as an hour of that day, or once a later
    day is in the database, it is a day like any other."""
    from pipelines.stats.load import open_days

    d0, d1, d2 = FIRST, FIRST + dt.timedelta(days=1), FIRST + dt.timedelta(days=2)
    con = duckdb.connect()
    con.execute("CREATE TABLE core_rounds (gaming_day DATE, round_no BIGINT)")
    con.execute("INSERT INTO core_rounds SELECT ?, range FROM range(2400)", [d0])
    con.execute("INSERT INTO core_rounds SELECT ?, range FROM range(99)", [d1])
    assert open_days(con, [d0, d1]) == {d1}
    assert open_days(con, [d1]) == {d1}
    assert open_days(con, [d0]) == set()  # a later day exists: d0 is complete
    con.execute("INSERT INTO core_rounds SELECT ?, 1000 + range FROM range(1)", [d1])  # 100 = 2400 / 24: an hour's play
    assert open_days(con, [d0, d1]) == set()
    con.execute("DELETE FROM core_rounds WHERE gaming_day = ? AND round_no >= 1000", [d1])
    con.execute("INSERT INTO core_rounds VALUES (?, 1)", [d2])  # a later day: d1 is over, however short
    assert open_days(con, [d0, d1]) == set()


def test_a_day_still_in_play_runs_its_own_window_only_and_the_day_before_runs_its_rolling_windows(tmp_path):
    """Night 31's export holds gaming day 31 and the first rounds of day 32: day 31 gets its 1-, 7- (and 30-) day
    windows, day 32 only its own 1-day window (its 7- and 30-day windows would test day 31's again with a few
    rounds more; the next night's run, which completes day 32, runs them)."""
    from pipelines.stats.run import statistics_step

    floor = Floor(baccarat_tables=3, baccarat_rounds=150, players=20)
    w, c, e = nights(floor, FIRST, 3, seed=7)
    last = FIRST + dt.timedelta(days=2)
    keep = w.filter((pl.col("gaming_day") < last) | ((pl.col("table_id") == w["table_id"].min()) & (pl.col("round_no") <= (
        w.filter(pl.col("gaming_day") == last)["round_no"].min() + 2))))
    rounds = keep.select("table_id", "round_no").unique()
    db = tmp_path / "open.duckdb"
    _write_evidence(db, keep, c.join(rounds, on=["table_id", "round_no"], how="semi"),
                    e.join(rounds, on=["table_id", "round_no"], how="semi") if e.height else e)
    day_before, in_play = statistics_step(db, [FIRST + dt.timedelta(days=1), last], PARAMS)
    assert set(day_before.tests["window_days"].unique()) == {1, 7}  # the 30-day window holds the same two days: skipped
    assert set(in_play.tests["window_days"].unique()) <= {1}
    # the day before's rolling windows are those it would have alone
    alone, = statistics_step(db, [FIRST + dt.timedelta(days=1)], PARAMS)
    assert day_before.tests.drop("q_value", "flagged").equals(alone.tests.drop("q_value", "flagged"))


def _assert_json_close(mine, theirs, path="evidence"):
    """Equal JSON, its floats to 1e-9 relative: the keys, the texts and the integers exactly."""
    if isinstance(theirs, float) and isinstance(mine, (int, float)):
        assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-12), path
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and sorted(mine) == sorted(theirs), path
        for key in theirs:
            _assert_json_close(mine[key], theirs[key], f"{path}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs), path
        for i, (a, b) in enumerate(zip(mine, theirs)):
            _assert_json_close(a, b, f"{path}[{i}]")
    else:
        assert mine == theirs and type(mine) is type(theirs), path


def test_a_one_day_windows_baccarat_hold_runs_beside_its_other_tests_and_gives_the_rows_it_gives_in_line(history, monkeypatch):
    """The 1-day window (the whole of a 1,000,000-round night's windows) runs its baccarat hold on a thread of its own,
    as the rolling windows do, and its rows and funnel rows are the ones the hold gives alone, first in their frames."""
    import threading

    from pipelines.db import open_reader
    from pipelines.stats import windows
    from pipelines.stats.load import gaming_days
    from pipelines.stats.run import _summaries_for
    from pipelines.stats.summaries import empty_summaries

    hold, threads = windows._hold, []

    def recorded(*args):
        threads.append(threading.current_thread().name)
        return hold(*args)

    monkeypatch.setattr(windows, "_hold", recorded)
    con = open_reader(history)
    try:
        present = gaming_days(con)
        summaries, _, rows = _summaries_for(con, present, empty_summaries(), PARAMS)
        night = present[-1]
        tests, funnel, _ = windows.window_tests(summaries, night, night, PARAMS, 1, rows)
        alone, alone_funnel = hold(summaries.only(night, night).hold_entities, night, night, PARAMS, 1, rows,
                                   windows.WindowMemo())
    finally:
        con.close()
    assert threads == ["window-hold_0"]
    assert alone.height > 10 and set(alone["test"]) == {"hold_table", "hold_dealer", "hold_shoe"}
    # the same rows; floats to their last bits apart (polars' threaded sums add in no fixed order: two runs of the same
    # code differ so, and the evidence's JSON prints those means), the rest exactly
    from polars.testing import assert_frame_equal

    beside = tests.head(alone.height)
    assert_frame_equal(beside.drop("evidence"), alone.drop("evidence"), check_exact=False, rel_tol=1e-9)
    for mine, theirs in zip(beside["evidence"], alone["evidence"], strict=True):
        _assert_json_close(json.loads(mine), json.loads(theirs))
    assert alone_funnel.height
    assert_frame_equal(funnel.head(alone_funnel.height), alone_funnel, check_exact=False, rel_tol=1e-9)
