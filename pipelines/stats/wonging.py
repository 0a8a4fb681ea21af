"""advantage_play, mid-shoe entry ("wonging"): a blackjack player who joins a shoe already under way only
when the count left in it favours the player.

Per player: every shoe he entered after its first ``mid_shoe_after_rounds`` rounds is one entry. Under the
null he joins at a moment unrelated to the count, so the rank of the true count at his entry among the
true counts before every round of that shoe he could have joined (the rounds after the first
``mid_shoe_after_rounds``; ties averaged) is uniform on 1..m. The statistic is the sum of his entries'
centred ranks, ``T = sum (rank_i - (m_i + 1) / 2)``, whose variance under that null is exactly
``sum (m_i^2 - 1) / 12``; one-sided (entering at high counts), normal tail, a player with at least
``mid_shoe_min_entries`` entries. Ranks rather than counts: a shoe whose count runs far in one
direction weighs as much as any other. The evidence lists each entry with its count and rank.
"""

from __future__ import annotations

import json
import math

import polars as pl

from pipelines.stats.config import StatsParams
from pipelines.stats.counts import counts_before_rounds
from pipelines.stats.distributions import _norm_sf
from pipelines.stats.tests_frame import fmt_p, tests_frame


#: one row per player, currency and shoe he played in a day: his first round of the shoe that day (``entered``: its
#: place in the shoe, with its round, day and rule set) and, when it is past ``mid_shoe_after_rounds``, the rank of
#: its true count among the shoe's rounds he could have joined (``rank`` of ``m``), that count and the mean count of
#: those rounds (``mu``). A shoe's count is the same whichever day's read it comes from (``load.SHOE_SPAN``), so a
#: window's entries are the earliest of its days' rows: a night's rows are summarised once (``summaries``).
ENTRIES_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String, "currency": pl.String, "table_id": pl.String, "shoe_id": pl.String, "entered": pl.Int64,
    "round_no": pl.Int64, "gaming_day": pl.Date, "ruleset": pl.String, "rank": pl.Float64, "m": pl.Int64,
    "true_count": pl.Float64, "mu": pl.Float64,
}
ENTRY_KEYS = ["player_id", "currency", "table_id", "shoe_id"]


def shoe_entries(wagers: pl.DataFrame, cards: pl.DataFrame, params: StatsParams) -> pl.DataFrame:
    """``ENTRIES_SCHEMA``: each rated blackjack player's first round of each shoe in ``wagers``, ranked in its shoe."""
    mains = wagers.filter((pl.col("game") == "blackjack") & (pl.col("bet") == "main") & pl.col("player_id").is_not_null()
                          & (pl.col("amount") > 0))
    if cards.height == 0 or mains.height == 0:
        return pl.DataFrame(schema=ENTRIES_SCHEMA)
    # the counts of the blackjack tables' shoes only (a shoe's count is its own: other tables' cards change nothing)
    counts = counts_before_rounds(cards.join(mains.select("table_id").unique(), on="table_id", how="semi"))
    hands = mains.select("player_id", "currency", "table_id", "round_no", "gaming_day", "ruleset").unique().join(
        counts, on=["table_id", "round_no"], how="inner")
    entries = hands.sort("round_in_shoe").group_by(ENTRY_KEYS).agg(
        pl.col("round_in_shoe").first().alias("entered"), pl.col("round_no").first(), pl.col("gaming_day").first(),
        pl.col("ruleset").first())
    eligible = counts.filter(pl.col("round_in_shoe") > params.mid_shoe_after_rounds).with_columns(
        pl.col("true_count").rank("average").over("table_id", "shoe_id").alias("rank"),
        pl.len().over("table_id", "shoe_id").alias("m"),
        pl.col("true_count").mean().over("table_id", "shoe_id").alias("mu"))
    e = entries.join(eligible.select("table_id", "shoe_id", "round_in_shoe", "rank", "m", "true_count", "mu"),
                     left_on=["table_id", "shoe_id", "entered"], right_on=["table_id", "shoe_id", "round_in_shoe"],
                     how="left")
    return e.select([pl.col(c).cast(t) for c, t in ENTRIES_SCHEMA.items()])


def window_entries(days: pl.DataFrame) -> pl.DataFrame:
    """The entries of a window from its days' ``shoe_entries``: per player and shoe, the earliest (a shoe that runs
    past midnight has a row on each day the player played it)."""
    if days.height == 0:
        return days
    return days.sort("entered", "gaming_day").group_by(ENTRY_KEYS).agg(pl.all().first()).select(list(ENTRIES_SCHEMA))


def mid_shoe_entry_tests(wagers: pl.DataFrame, cards: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """One test row per blackjack player with enough mid-shoe entries."""
    return entry_rows(shoe_entries(wagers, cards, params), params, window_days)


def entry_rows(entries: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """The test rows from a window's entries (``shoe_entries`` of its wagers, or ``window_entries`` of its days')."""
    e = entries.filter((pl.col("entered") > params.mid_shoe_after_rounds) & pl.col("rank").is_not_null())
    if e.height == 0:
        return tests_frame([])
    e = e.with_columns((pl.col("rank") - (pl.col("m") + 1) / 2).alias("centred"),
                       ((pl.col("m") ** 2 - 1) / 12).alias("var"))
    summary = e.group_by("player_id", "currency").agg(
        pl.len().alias("entries"), pl.col("centred").sum().alias("t"), pl.col("var").sum().alias("var"),
        pl.col("true_count").mean().alias("tc_mean"), (pl.col("true_count") >= 2).sum().alias("tc2"),
        pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
        pl.col("ruleset").first(), pl.col("table_id").unique().sort().alias("tables"),
        # by round number, then day, table and shoe: two entries of one number (other tables or days) came out in
        # either order from one run to the next, and the evidence keeps the first 50
        pl.struct("table_id", "shoe_id", "round_no", pl.col("true_count").round(2), "rank", "m")
        .sort_by("round_no", "gaming_day", "table_id", "shoe_id").alias("list"),
    ).filter(pl.col("entries") >= params.mid_shoe_min_entries).sort("player_id", "currency")
    mu = e.group_by("player_id", "currency").agg(pl.col("mu").mean())
    mu_of = {(r["player_id"], r["currency"]): r["mu"] for r in mu.iter_rows(named=True)}
    rows = []
    for r in summary.iter_rows(named=True):
        z = r["t"] / math.sqrt(r["var"]) if r["var"] > 0 else 0.0
        p = max(1e-12, _norm_sf(z))
        sentence = (f"{r['player_id']} entered {r['entries']} blackjack shoes mid-shoe at a mean true count of "
                    f"{r['tc_mean']:+.1f} (the same shoes' rounds: {mu_of[(r['player_id'], r['currency'])]:+.1f}), "
                    f"{r['tc2']} of them at +2 or more; p = {fmt_p(p)}")
        evidence = {"entries": r["entries"], "z": round(z, 3), "mean_true_count_at_entry": round(r["tc_mean"], 3),
                    "mean_true_count_of_the_shoes": round(mu_of[(r["player_id"], r["currency"])], 3),
                    "entries_at_tc2": r["tc2"], "after_rounds": params.mid_shoe_after_rounds,
                    "entry_list": r["list"][:50], "tables": r["tables"],
                    "statistic": "sum of centred ranks of the true count at entry within each shoe; exact permutation variance"}
        rows.append({"kind": "advantage_play", "test": "mid_shoe_entry", "entity": f"{r['player_id']} x mid-shoe entries",
                     "window_days": window_days, "first_day": r["first_day"], "last_day": r["last_day"],
                     "table_id": r["tables"][0] if len(r["tables"]) == 1 else None, "player_id": r["player_id"],
                     "game": "blackjack", "ruleset": r["ruleset"], "currency": r["currency"], "bet": "main",
                     "rounds": r["entries"], "wagers": r["entries"], "p_value": p, "sentence": sentence,
                     "evidence": json.dumps(evidence, default=str)})
    return tests_frame(rows)
