"""The Hi-Lo count before each round of a shoe, from the device's own card sequence: what a counter knew.

The statistical detectors (issue 11) compute the same in ``pipelines.stats.counts``; :func:`true_counts` uses
theirs when it is installed and this small pure function otherwise, with the same input and output columns,
so an investigation's count is the detectors' count. Before a round, the running count is the sum of the Hi-Lo
tags (2-6 +1, 7-9 0, T-K and A -1) of every card dealt face up in the earlier rounds of the shoe (burns are not
seen, so not counted); the true count is the running count per deck left, cards left counted from the shoe's
decks (at least half a deck, so the last hands of a shoe do not divide by nothing).
"""

from __future__ import annotations

import polars as pl

HI_LO_BY_RANK = (-1, 1, 1, 1, 1, 1, 0, 0, 0, -1, -1, -1, -1)  # A 2 3 4 5 6 7 8 9 T J Q K
DEFAULT_DECKS = 8  # a shoe whose shoe_start was lost


def counts_before_rounds(cards: pl.DataFrame) -> pl.DataFrame:
    """Per (table, shoe, round): cards seen before it, Hi-Lo running count ``hilo_rc`` and ``true_count``.

    ``cards``: table_id, shoe_id, event_seq, round_no, card_code, decks (card events only, burns excluded).
    """
    c = cards.filter(pl.col("round_no").is_not_null() & pl.col("card_code").is_between(0, 51)).with_columns(
        (pl.col("card_code").cast(pl.Int64) // 4).replace_strict(list(range(13)), list(HI_LO_BY_RANK), return_dtype=pl.Int64).alias("hilo"),
        pl.col("decks").fill_null(DEFAULT_DECKS).cast(pl.Int64),
    )
    per_round = c.group_by("table_id", "shoe_id", "round_no").agg(
        pl.len().cast(pl.Int64).alias("n"), pl.col("hilo").sum(), pl.col("decks").first(), pl.col("event_seq").min().alias("first_seq"),
    ).sort("table_id", "shoe_id", "first_seq")
    shoe = ["table_id", "shoe_id"]
    out = per_round.with_columns(
        (pl.col("n").cum_sum().over(shoe) - pl.col("n")).alias("seen"),
        (pl.col("hilo").cum_sum().over(shoe) - pl.col("hilo")).alias("hilo_rc"),
    ).with_columns(
        (pl.col("hilo_rc") / ((pl.col("decks") * 52 - pl.col("seen")).clip(26, None) / 52)).alias("true_count"),
    )
    return out.select("table_id", "shoe_id", "round_no", "decks", "seen", "hilo_rc", "true_count")


def true_counts(cards: pl.DataFrame) -> pl.DataFrame:
    """The detectors' count where installed (``pipelines.stats.counts``), else :func:`counts_before_rounds`."""
    try:
        from pipelines.stats.counts import counts_before_rounds as detectors_count
    except ImportError:
        return counts_before_rounds(cards)
    return detectors_count(cards).select("table_id", "shoe_id", "round_no", "decks", "seen", "hilo_rc", "true_count")
