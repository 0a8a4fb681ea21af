"""Card counts from the device's own card sequence: what a counter at the table knew before each round.

Card codes are ``rank * 4 + suit`` with ranks ``A23456789TJQK`` (``rulebook.cards``). Before each
round of a shoe, the count is the sum of the tags of every card the device dealt face up in the
earlier rounds of that shoe (burn cards are not counted: nobody sees them). Two systems:

- **Hi-Lo** (balanced): 2-6 +1, 7-9 0, T-K and A -1; the true count is the running count per deck
  remaining, ``RC / (cards left / 52)``, cards left counted from the shoe's decks;
- **KO** (Knock-Out, unbalanced): 2-7 +1, 8-9 0, T-K and A -1, started at ``4 - 4 * decks`` so that
  its key count needs no division; its running count is the second measure.

For the baccarat pair bets the remaining shoe decides the odds exactly: the two cards of a hand are
an exchangeable draw from it, so P(pair) = sum_r n_r (n_r - 1) / (N (N - 1)) over the 13 ranks left.
"""

from __future__ import annotations

import numpy as np
import polars as pl

HI_LO = np.array([-1, 1, 1, 1, 1, 1, 0, 0, 0, -1, -1, -1, -1], dtype=np.int64)  # by rank A..K
KO = np.array([-1, 1, 1, 1, 1, 1, 1, 0, 0, -1, -1, -1, -1], dtype=np.int64)
DEFAULT_DECKS = 8


def counts_before_rounds(cards: pl.DataFrame) -> pl.DataFrame:
    """Per (table, shoe, round): cards seen before it, Hi-Lo running and true count, KO running count.

    ``cards``: table_id, shoe_id, event_seq, round_no, card_code, decks (card events only).
    """
    c = cards.filter(pl.col("round_no").is_not_null() & pl.col("card_code").is_between(0, 51)).with_columns(
        (pl.col("card_code") // 4).alias("rank"), pl.col("decks").fill_null(DEFAULT_DECKS).cast(pl.Int64))
    c = c.with_columns(
        pl.col("rank").replace_strict(list(range(13)), HI_LO.tolist(), return_dtype=pl.Int64).alias("hilo"),
        pl.col("rank").replace_strict(list(range(13)), KO.tolist(), return_dtype=pl.Int64).alias("ko"),
    )
    per_round = c.group_by("table_id", "shoe_id", "round_no").agg(
        pl.len().alias("n"), pl.col("hilo").sum(), pl.col("ko").sum(), pl.col("decks").first(),
        pl.col("event_seq").min().alias("first_seq"),
    ).sort("table_id", "shoe_id", "first_seq")
    shoe = ["table_id", "shoe_id"]
    out = per_round.with_columns(
        (pl.col("n").cum_sum().over(shoe) - pl.col("n")).alias("seen"),
        (pl.col("hilo").cum_sum().over(shoe) - pl.col("hilo")).alias("hilo_rc"),
        (pl.col("ko").cum_sum().over(shoe) - pl.col("ko") + 4 - 4 * pl.col("decks")).alias("ko_rc"),
        pl.int_range(pl.len()).over(shoe).alias("round_in_shoe"),
    ).with_columns(
        (pl.col("hilo_rc") / ((pl.col("decks") * 52 - pl.col("seen")).clip(26, None) / 52)).alias("true_count"),
    )
    return out.select("table_id", "shoe_id", "round_no", "round_in_shoe", "decks", "seen", "hilo_rc", "true_count", "ko_rc")


def pair_probability_before_rounds(cards: pl.DataFrame) -> pl.DataFrame:
    """Per (table, shoe, round): P(a hand's first two cards pair) from the shoe left before the round."""
    c = cards.filter(pl.col("round_no").is_not_null() & pl.col("card_code").is_between(0, 51)).with_columns(
        (pl.col("card_code") // 4).cast(pl.Int64).alias("rank"), pl.col("decks").fill_null(DEFAULT_DECKS).cast(pl.Int64))
    if c.height == 0:
        return pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String, "round_no": pl.Int64, "p_pair": pl.Float64})
    per_round = c.group_by("table_id", "shoe_id", "round_no").agg(
        pl.col("event_seq").min().alias("first_seq"), pl.col("decks").first(),
        *[(pl.col("rank") == r).sum().cast(pl.Int64).alias(f"r{r}") for r in range(13)],
    ).sort("table_id", "shoe_id", "first_seq")
    shoe = ["table_id", "shoe_id"]
    left = [(4 * pl.col("decks") - (pl.col(f"r{r}").cum_sum().over(shoe) - pl.col(f"r{r}"))).clip(0, None).alias(f"l{r}")
            for r in range(13)]
    per_round = per_round.with_columns(left)
    n = sum(pl.col(f"l{r}") for r in range(13))
    same = sum(pl.col(f"l{r}") * (pl.col(f"l{r}") - 1) for r in range(13))
    return per_round.select("table_id", "shoe_id", "round_no",
                            pl.when(n > 1).then(same / (n * (n - 1))).otherwise(None).alias("p_pair"))
