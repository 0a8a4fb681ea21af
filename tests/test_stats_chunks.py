"""A night summarised a chunk of tables at a time gives the summaries, tests and findings of the night summarised in
one piece (issue 13: the statistics step's memory is bounded by a chunk of ``PITAUDIT_GROUP_ROUNDS`` rounds, not
by the night; ``pipelines/stats/summary_chunks.py``).

The night: two gaming days of the statistical simulator's floor (baccarat, blackjack with Pair and Insurance,
Hold'em Bonus; a counter, a lucky bettor, a colluding dealer), dealers and players moving between tables, one
baccarat table on a second rule set (its Player, Tie, Pair and Tiger bets pay as the first's: equal outcome
vectors under two bets) and one round dealt by two dealers (the hold's general path). A bound of 60 rounds cuts
each day into a chunk per table or two. Every count, id, stake, list, cumulant and rule set must be equal; a
float summed over the wagers of an entity in several chunks (a dealer's theoretical net) to 1e-12 relative (the
chunks' sums added, not the wagers one by one; the one-piece pass itself moves those last bits from run to run,
since polars adds a player's rounds in no fixed order).
"""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_stats_windows import _write_evidence

from pipelines.stats.config import StatsParams
from pipelines.stats.synthetic import Floor, nights

FIRST = dt.date(2026, 11, 1)
DAYS = (FIRST, FIRST + dt.timedelta(days=1))
PARAMS = StatsParams(windows=(1, 7), pair_count_min_bets=5)
BOUND = 60
SECOND_RULESET = "hoiana-tiger-baccarat/no-commission"


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    floor = Floor(baccarat_tables=4, baccarat_rounds=100, blackjack_tables=2, blackjack_rounds=80, players=30,
                  counter_units=8, counter_hands=40, luck_multiple=5, luck_bets=30, colluder=True, collusion_rate=0.05,
                  holdem_tables=2, holdem_rounds=40, holdem_luck_multiple=5, holdem_luck_bets=20, blackjack_side=True)
    w, c, e = nights(floor, FIRST, len(DAYS), seed=5)
    w = w.with_columns(pl.when(pl.col("table_id") == "BAC-02").then(pl.lit(SECOND_RULESET)).otherwise("ruleset")
                       .alias("ruleset"))
    # one round's last wager dealt by another dealer (a round in two parts)
    at = w.filter((pl.col("table_id") == "BAC-03") & (pl.col("gaming_day") == FIRST))
    split = at.filter(pl.col("round_no") == at.group_by("round_no").len().sort("len", "round_no")["round_no"][-1])
    other = w.filter(pl.col("dealer_id") != split["dealer_id"][0])["dealer_id"][0]
    w = w.with_columns(pl.when(pl.col("wager_id") == split["wager_id"][-1]).then(pl.lit(other)).otherwise("dealer_id")
                       .alias("dealer_id"))
    # jackpot wagers beside the Bonus wagers of the Hold'em tables (a hit on every 40th)
    bonus = w.filter((pl.col("game") == "holdem_bonus") & (pl.col("bet") == "bonus")).with_row_index("i")
    jackpot = bonus.with_columns(
        pl.lit("progressive").alias("bet"), pl.lit("guide-holdem-bonus-progressive").alias("ruleset"),
        pl.lit("guide").alias("ruleset_version"), pl.lit(100, dtype=pl.Int64).alias("amount"),
        pl.when(pl.col("i") % 40 == 0).then(pl.lit(5000)).otherwise(pl.lit(-100)).cast(pl.Int64).alias("cards_net"),
        (pl.col("wager_id") + "-J").alias("wager_id"), (pl.col("wager_order") + 1_000_000).alias("wager_order"),
    ).drop("i").with_columns(pl.col("cards_net").alias("expected_net"), pl.col("cards_net").alias("recorded_net"),
                             pl.lit(0, dtype=pl.Int64).alias("difference"))
    w = pl.concat([w, jackpot.select(w.columns)], how="vertical_relaxed")
    db = tmp_path_factory.mktemp("chunks") / "n.duckdb"
    _write_evidence(db, w, c, e)
    return db


def _sorted(df: pl.DataFrame) -> pl.DataFrame:
    plain = [c for c, t in df.schema.items() if not isinstance(t, (pl.List, pl.Array))]
    keys = [c for c in plain if not df.schema[c].is_float()] + [c for c in plain if df.schema[c].is_float()]
    return df.sort(keys, nulls_last=True) if df.height and keys else df


def _numbers_close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=0)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_numbers_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_numbers_close(x, y) for x, y in zip(a, b))
    return a == b


def test_the_chunks_straddle_dealers_and_players_and_come_in_table_order(night):
    from pipelines.db import open_reader
    from pipelines.stats.load import load_inputs, table_chunks

    con = open_reader(night)
    try:
        chunks = table_chunks(con, FIRST, BOUND)
        whole = load_inputs(con, FIRST, FIRST).wagers
    finally:
        con.close()
    tables = [t for chunk in chunks for t in chunk]
    assert tables == sorted(whole["table_id"].unique().to_list()) and len(chunks) >= 6
    rounds = whole.group_by("table_id").agg(pl.col("round_no").n_unique())
    of = dict(rounds.iter_rows())
    assert all(sum(of[t] for t in chunk) <= BOUND or len(chunk) == 1 for chunk in chunks)
    chunk_of = {t: i for i, chunk in enumerate(chunks) for t in chunk}
    spread = whole.with_columns(pl.col("table_id").replace_strict(chunk_of).alias("chunk"))
    for who in ("dealer_id", "player_id"):
        assert spread.group_by(who).agg(pl.col("chunk").n_unique()).filter(pl.col("chunk") > 1).height > 3, who


def test_a_night_summarised_a_chunk_of_tables_at_a_time_gives_the_summaries_of_one_piece(night):
    from pipelines.db import open_reader
    from pipelines.stats.summary_store import summarise_days

    con = open_reader(night)
    try:
        one = summarise_days(con, list(DAYS), PARAMS, chunk_rounds=None)
        chunked = summarise_days(con, list(DAYS), PARAMS, chunk_rounds=BOUND)
    finally:
        con.close()
    assert chunked.days == one.days == DAYS
    for name, ref in one.frames().items():
        got = chunked.frames()[name]
        assert ref.height > 0, name
        assert got.schema == ref.schema, name
        if name.startswith("hold_"):  # the same ids, rows in the same order, cumulants to the bit
            assert_frame_equal(got.drop("theo") if name == "hold_entities" else got,
                               ref.drop("theo") if name == "hold_entities" else ref, check_exact=True)
        assert_frame_equal(_sorted(got), _sorted(ref), check_exact=False, rel_tol=1e-12, abs_tol=0)
    # the cases the merge must get right are in the night: equal vectors under two bets, a round of two dealers
    rows = one.hold_rows.join(one.hold_entities.select("gaming_day", "eid", "level"), on=["gaming_day", "eid"])
    assert rows.filter(pl.col("level") != "all").group_by("gaming_day", "eid", "a", "xid", "pid").len()["len"].max() > 1
    # ... whose all-bets rows differ by grouping (kept per entity), the other rounds' kept once for all three
    assert rows.filter(pl.col("level") == "all").height > 0 and one.hold_rounds.height > 0
    assert one.hold_rounds.select(pl.col("table_eid", "dealer_eid", "shoe_eid").is_not_null().all()).row(0) == (True,) * 3
    assert one.luck_entities["ruleset"].n_unique() == 2


def test_the_statistics_step_in_chunks_finds_what_it_finds_in_one_piece(night):
    from pipelines.stats.run import statistics_step

    one = statistics_step(night, list(DAYS), PARAMS, chunk_rounds=None)
    chunked = statistics_step(night, list(DAYS), PARAMS, chunk_rounds=BOUND)
    keys = ["test", "entity", "currency", "window_days"]
    for a, b in zip(one, chunked):
        assert a.tests.height > 100
        assert set(a.tests["test"]) >= {"hold_table", "hold_dealer", "hold_shoe", "dealer_error_rate", "luck", "jackpot_hits",
                                        "bet_vs_count", "pair_count", "tiger_count", "overpaid_pair", "mid_shoe_entry"}
        got, ref = b.tests.sort(keys), a.tests.sort(keys)
        assert_frame_equal(got.drop("evidence"), ref.drop("evidence"), check_exact=True)
        # the evidence's full-precision means (a side-bet measure's) move in their last digits from run to run of the
        # one-piece pass too: polars adds a player's rounds in no fixed order
        for e, f in zip(got["evidence"], ref["evidence"]):
            assert _numbers_close(json.loads(e), json.loads(f)), (e, f)
        assert_frame_equal(b.findings.sort("finding_id"), a.findings.sort("finding_id"), check_exact=True)
        assert_frame_equal(_sorted(b.funnel), _sorted(a.funnel), check_exact=False, rel_tol=1e-12, abs_tol=0)
        assert_frame_equal(_sorted(b.graph), _sorted(a.graph), check_exact=True)
    assert any(o.findings.height for o in one)


def test_the_games_draws_of_groupings_no_two_chunks_share_pass_as_they_are():
    """``summary_chunks._merge_shared`` groups only the rows of a grouping some key of which two chunks hold (a dealer,
    here also a shoe id reused at two tables): the rows and their order of the group-by over every row."""
    from pipelines.stats.summary_chunks import MERGES, _merge_shared

    keys, how = MERGES["games_draws"]
    day = dt.date(2026, 11, 24)

    def chunk(rows: list[tuple[str, str, float, int]]) -> pl.DataFrame:
        return pl.DataFrame([{"gaming_day": day, "grouping": g, "key": k, "currency": "USD", "game": "blackjack",
                              "ruleset": "bj", "ruleset_version": "1", "decks": 8, "bet": "pair", "amount": a,
                              "scale": a, "c": c} for g, k, a, c in rows])

    first = chunk([("table_id", "BJ-1", 10.0, 3), ("dealer_id", "D1", 10.0, 2), ("dealer_id", "D2", 5.0, 1),
                   ("shoe_id", "S1", 10.0, 3), ("shoe_id", "S9", 5.0, 1)])
    second = chunk([("table_id", "BJ-2", 10.0, 4), ("dealer_id", "D1", 10.0, 5), ("dealer_id", "D1", 25.0, 1),
                    ("shoe_id", "S9", 5.0, 2), ("shoe_id", "S2", 10.0, 1)])
    third = chunk([("table_id", "BJ-3", 10.0, 1), ("dealer_id", "D2", 5.0, 7), ("shoe_id", "S3", 10.0, 1)])
    nameless = chunk([(None, "X", 1.0, 1), ("table_id", "BJ-4", 1.0, 2)])
    for present in ([first, second, third], [first, third], [second, third], [first, nameless, second, nameless]):
        expected = pl.concat(present).group_by(keys, maintain_order=True).agg(how)
        assert_frame_equal(_merge_shared(present, keys, how), expected, check_exact=True)
    merged = _merge_shared([first, second, third], keys, how)
    assert merged.filter(pl.col("key") == "D1")["c"].to_list() == [7, 1]
    assert merged.filter(pl.col("key") == "S9")["c"].to_list() == [3]
    assert merged["key"].to_list()[:5] == ["BJ-1", "D1", "D2", "S1", "S9"]


@pytest.mark.parametrize("failing", ["_merge_frames", "_hold_frames"])
def test_a_merge_that_fails_on_either_thread_says_so_after_both_have_ended(night, monkeypatch, failing):
    """``merge_chunks`` merges the polars frames on a thread beside the baccarat hold's: an error of either reaches the
    caller, and only once the other thread's work is over (nothing of the merge runs on after the step has failed)."""
    import threading
    import time

    import pipelines.stats.summary_chunks as summary_chunks
    from pipelines.db import open_reader
    from pipelines.stats.summary_store import summarise_days

    other = "_hold_frames" if failing == "_merge_frames" else "_merge_frames"
    ended = []
    work = getattr(summary_chunks, other)

    def slow(*args):
        time.sleep(0.3)  # still at work when the failing side raises
        out = work(*args)
        ended.append(other)
        return out

    def fail(*args):
        raise RuntimeError(f"{failing} failed")

    monkeypatch.setattr(summary_chunks, other, slow)
    monkeypatch.setattr(summary_chunks, failing, fail)
    con = open_reader(night)
    try:
        with pytest.raises(RuntimeError, match=f"{failing} failed"):
            summarise_days(con, [FIRST], PARAMS, chunk_rounds=BOUND)
    finally:
        con.close()
    assert ended == [other]  # the other side's work ran to its end before the error left ``merge_chunks``
    assert not [t for t in threading.enumerate() if t.name.startswith("merge-frames")]
