"""advantage_play, mid-shoe entry: a player who joins blackjack shoes under way only when the true count is
high is flagged with that evidence; a player who joins them at random moments is not."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import polars as pl

from pipelines.stats.config import StatsParams
from pipelines.stats.counts import counts_before_rounds
from pipelines.stats.load import StatsInputs
from pipelines.stats.run import detect_all, with_fdr
from pipelines.stats.synthetic import BLACKJACK, Floor, night
from pipelines.stats.wonging import mid_shoe_entry_tests

DAY = dt.date(2026, 11, 24)


def _with_entrants(seed: int):
    """A fair blackjack floor plus two back-seat players who each join every shoe of BJ-01 once after round 5 and
    play three rounds at one flat stake: the wonger at the first round whose true count is +2 or more (the
    shoe skipped when none is), the other at a random round."""
    floor = Floor(baccarat_tables=0, blackjack_tables=1, blackjack_rounds=4000, players=30)
    w, c, e = night(floor, DAY, seed)
    rng = np.random.default_rng(seed)
    counts = counts_before_rounds(c).filter(pl.col("table_id") == "BJ-01").sort("shoe_id", "round_in_shoe")
    template = w.filter(pl.col("table_id") == "BJ-01").unique("round_no", keep="first").select(
        "round_no", "dealer_id", "shoe_id", "decks", "gaming_day", "ruleset_version")
    rows = []
    for (shoe,), g in counts.group_by(["shoe_id"], maintain_order=True):
        late = g.filter(pl.col("round_in_shoe") > 5)
        if late.height < 4:
            continue
        high = late.filter(pl.col("true_count") >= 2)
        entries = {"P-WONGER": high["round_in_shoe"][0] if high.height else None,
                   "P-RANDOM": int(rng.choice(late["round_in_shoe"].to_numpy()[:-3]))}
        for player, first in entries.items():
            if first is None:
                continue
            for rno in g.filter(pl.col("round_in_shoe").is_between(first, first + 2))["round_no"].to_list():
                rows.append((player, rno))
    extra = pl.DataFrame(rows, schema={"player_id": pl.String, "round_no": pl.Int64}, orient="row").join(
        template, on="round_no").with_columns(
        pl.lit("BJ-01").alias("table_id"), pl.lit(9).cast(pl.Int64).alias("seat"), pl.lit("blackjack").alias("game"),
        pl.lit(BLACKJACK).alias("ruleset"), pl.lit("USD").alias("currency"), pl.lit("settled").alias("status"),
        pl.lit("main").alias("bet"), pl.lit(10_000).cast(pl.Int64).alias("amount"),
        pl.lit(10_000).cast(pl.Int64).alias("settled_amount"), *[pl.lit(0).cast(pl.Int64).alias(k) for k in (
            "cards_net", "expected_net", "recorded_net", "difference")],
        pl.lit(None, dtype=pl.String).alias("adjustment"), pl.concat_str(pl.lit("W-X-"), pl.col("player_id"), pl.col("round_no")).alias("wager_id"),
        pl.lit(99).cast(pl.Int64).alias("wager_order"), pl.lit("rounds_BJ-01.jsonl").alias("source_file"),
        pl.col("round_no").alias("source_line"))
    return pl.concat([w, extra.select(w.columns)]), c, e


def test_a_player_entering_shoes_only_at_high_counts_is_flagged_and_a_random_entrant_is_not():
    for seed in (1, 2):
        w, c, e = _with_entrants(seed)
        t = mid_shoe_entry_tests(w, c, StatsParams())
        wonger = t.filter(pl.col("player_id") == "P-WONGER").row(0, named=True)
        random = t.filter(pl.col("player_id") == "P-RANDOM").row(0, named=True)
        ev = json.loads(wonger["evidence"])
        assert ev["entries"] >= 10 and ev["entries_at_tc2"] == ev["entries"]  # every entry at +2 or more, listed
        assert ev["mean_true_count_at_entry"] > ev["mean_true_count_of_the_shoes"] + 0.5  # his shoes are those that ran high
        assert all(x["true_count"] >= 2 for x in ev["entry_list"])
        assert wonger["p_value"] < 1e-3 and "mid-shoe at a mean true count of +" in wonger["sentence"]
        assert random["p_value"] > 0.01
        # through the whole night's tests and the FDR: the wonger is a finding, the random entrant is not
        flagged = with_fdr(detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 1)[0], StatsParams()).filter(pl.col("flagged"))
        assert flagged.filter(pl.col("test") == "mid_shoe_entry")["player_id"].to_list() == ["P-WONGER"]
        assert flagged.filter(pl.col("player_id") == "P-RANDOM").height == 0


def test_mid_shoe_rank_statistic_on_a_hand_made_shoe():
    """One shoe of 9 rounds, rounds 6-8 eligible (after 5), true counts 0, +3, -1: an entry at round 7 has rank 3 of
    m = 3, centred +1, variance (9 - 1) / 12; five such shoes: z = 5 / sqrt(5 * 8 / 12) = 2.74, p = 0.0031."""
    cards, wagers = [], []
    seq = 0
    for s in range(5):
        sid = f"S-{s}"
        # the count before each round: cards dealt in rounds 0-5 are neutral (7s), then a 2 (+1), ... chosen so that
        # the Hi-Lo running count before rounds 6, 7, 8 is 0, +3, -1 (one deck: true count = running count * 52 / left)
        plan = [[6, 6]] * 6 + [[1, 1, 1], [12, 12, 12, 12], [6]]  # ranks: 6 = a seven, 1 = a deuce, 12 = a king
        for r, ranks in enumerate(plan):
            for rank in ranks:
                seq += 1
                cards.append(("BJ-01", sid, seq, s * 100 + r, rank * 4, 1))
        for r in (7, 8):
            wagers.append((s * 100 + r,))
    c = pl.DataFrame(cards, schema={"table_id": pl.String, "shoe_id": pl.String, "event_seq": pl.Int64, "round_no": pl.Int64,
                                    "card_code": pl.Int16, "decks": pl.Int64}, orient="row")
    w = pl.DataFrame({"round_no": [r for (r,) in wagers]}).with_columns(
        pl.lit("P-1").alias("player_id"), pl.lit("USD").alias("currency"), pl.lit("BJ-01").alias("table_id"),
        pl.lit("blackjack").alias("game"), pl.lit("main").alias("bet"), pl.lit(100).alias("amount"),
        pl.lit(DAY).alias("gaming_day"), pl.lit(BLACKJACK).alias("ruleset"))
    t = mid_shoe_entry_tests(w, c, StatsParams()).row(0, named=True)
    ev = json.loads(t["evidence"])
    assert ev["entries"] == 5 and ev["z"] == round(5 / (5 * 8 / 12) ** 0.5, 3)
    assert abs(t["p_value"] - 0.00309) < 5e-5


def test_a_players_entry_list_does_not_depend_on_the_order_its_rows_come_in():
    """Entries of one round number at two tables (or days) came out of the list in either order from one run to the
    next (it was sorted by round number alone), and the evidence keeps the first 50: it is sorted by round number,
    then day, table and shoe, whatever order the rows arrive in."""
    from pipelines.stats.wonging import ENTRIES_SCHEMA, entry_rows

    rows = []
    for k in range(60):
        for table in ("BJ-02", "BJ-01"):  # the same round numbers at both tables
            rows.append({"player_id": "P-1", "currency": "USD", "table_id": table, "shoe_id": f"S-{table}-{k}",
                         "entered": 7, "round_no": 1000 + k, "gaming_day": DAY, "ruleset": BLACKJACK,
                         "rank": float(k % 3 + 1), "m": 3, "true_count": 0.5 * (k % 5), "mu": 0.0})
    entries = pl.DataFrame(rows, schema=ENTRIES_SCHEMA)
    seen = {entry_rows(entries.sample(fraction=1.0, shuffle=True, seed=seed), StatsParams())["evidence"][0]
            for seed in range(8)}
    assert len(seen) == 1
    listed = json.loads(seen.pop())["entry_list"]
    assert len(listed) == 50
    assert [(e["round_no"], e["table_id"]) for e in listed[:4]] == [(1000, "BJ-01"), (1000, "BJ-02"), (1001, "BJ-01"),
                                                                     (1001, "BJ-02")]
