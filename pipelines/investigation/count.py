"""The Hi-Lo count before each round of a shoe, from the device's own card sequence: what a counter knew.

An investigation uses the statistical detectors' count (``pipelines.stats.counts``, issue 11), so the bets it
plots against the count are judged on the same numbers the ``advantage_play`` detector uses: before a round,
the running count is the sum of the Hi-Lo tags (2-6 +1, 7-9 0, T-K and A -1) of every card dealt face up in
the earlier rounds of the shoe (burns are not seen, so not counted); the true count is the running count per
deck left, cards left counted from the shoe's decks.
"""

from __future__ import annotations

import polars as pl

from pipelines.stats.counts import counts_before_rounds

COLUMNS = ("table_id", "shoe_id", "round_no", "decks", "seen", "hilo_rc", "true_count")


def true_counts(cards: pl.DataFrame) -> pl.DataFrame:
    """Per (table, shoe, round) the count before it; ``cards``: table_id, shoe_id, event_seq, round_no, card_code, decks."""
    return counts_before_rounds(cards).select(COLUMNS)
