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

from dataclasses import dataclass

import numpy as np
import polars as pl

HI_LO = np.array([-1, 1, 1, 1, 1, 1, 0, 0, 0, -1, -1, -1, -1], dtype=np.int64)  # by rank A..K
KO = np.array([-1, 1, 1, 1, 1, 1, 1, 0, 0, -1, -1, -1, -1], dtype=np.int64)
DEFAULT_DECKS = 8


@dataclass(frozen=True)
class ShoeRounds:
    """The rounds of the shoes in card-event order: ``rounds`` (table_id, shoe_id, round_no, decks, first_seq,
    round_in_shoe), and per round the cards of each rank (A..K) dealt in it (``dealt``) and in the shoe's earlier
    rounds (``before``), 13 columns each."""

    rounds: pl.DataFrame
    dealt: np.ndarray
    before: np.ndarray


def shoe_rounds(cards: pl.DataFrame) -> ShoeRounds:
    """``ShoeRounds`` of card events (table_id, shoe_id, event_seq, round_no, card_code, decks).

    The events in device order (table, shoe, sequence: the order ``load`` reads them in; sorted here if not) are cut
    where the round changes; a round whose cards come in two runs has them added. Counts by ``bincount``, the shoe's
    running totals by one cumulative sum. (The counters' Hi-Lo and KO and the pairs' and Tigers' shoe left each
    grouped the 7,000,000 cards of a night by round with string keys and took a window sum per rank and shoe.)"""
    c = cards.filter(pl.col("round_no").is_not_null() & pl.col("card_code").is_between(0, 51)).select(
        "table_id", "shoe_id", "round_no", "event_seq", (pl.col("card_code") // 4).cast(pl.Int64).alias("rank"),
        pl.col("decks").fill_null(DEFAULT_DECKS).cast(pl.Int64))
    t, sh, seq = pl.col("table_id"), pl.col("shoe_id"), pl.col("event_seq")
    ordered = c.height < 2 or c.select(
        ((t > t.shift()) | ((t == t.shift()) & ((sh > sh.shift()) | ((sh == sh.shift()) & (seq > seq.shift())))))
        .slice(1).all()).item()
    if not ordered:
        c = c.sort("table_id", "shoe_id", "event_seq")
    cut = (t.ne_missing(t.shift()) | sh.ne_missing(sh.shift()) | pl.col("round_no").ne_missing(pl.col("round_no").shift()))
    c = c.with_columns(cut.fill_null(True).alias("cut"))
    run = c["cut"].cum_sum().to_numpy().astype(np.int64) - 1
    runs = c.filter(pl.col("cut")).select("table_id", "shoe_id", "round_no", pl.col("event_seq").alias("first_seq"), "decks")
    if runs.select(pl.struct("table_id", "shoe_id", "round_no").is_duplicated().any()).item():
        # a round dealt in two runs (another round's card between): one round, first seen at its first run
        runs = runs.with_row_index("run")
        first = runs.group_by("table_id", "shoe_id", "round_no").agg(pl.col("run").min().alias("first_run"))
        of_run = runs.join(first, on=["table_id", "shoe_id", "round_no"], how="left").sort("run")["first_run"]
        kept = np.unique(of_run.to_numpy())
        run = np.searchsorted(kept, of_run.to_numpy()[run])
        runs = runs[kept].drop("run")
    n = runs.height
    dealt = np.bincount(run * 13 + c["rank"].to_numpy(), minlength=n * 13).reshape(n, 13).astype(np.int64)
    r_t, r_s = runs["table_id"], runs["shoe_id"]
    new_shoe = np.ones(n, dtype=bool)
    if n > 1:
        new_shoe[1:] = (r_t.head(n - 1).ne_missing(r_t.tail(n - 1)) | r_s.head(n - 1).ne_missing(r_s.tail(n - 1))).to_numpy()
    start = np.maximum.accumulate(np.where(new_shoe, np.arange(n), 0)) if n else np.zeros(0, dtype=np.int64)
    upto = np.cumsum(dealt, axis=0) - dealt  # every earlier round of the frame
    before = upto - upto[start] if n else upto
    rounds = runs.with_columns(pl.Series("round_in_shoe", np.arange(n) - start, dtype=pl.Int64))
    return ShoeRounds(rounds, dealt, before)


def counts_before_rounds(cards: pl.DataFrame, shoes: ShoeRounds | None = None) -> pl.DataFrame:
    """Per (table, shoe, round): cards seen before it, Hi-Lo running and true count, KO running count.

    ``cards``: table_id, shoe_id, event_seq, round_no, card_code, decks (card events only); ``shoes``: their
    ``shoe_rounds`` when the caller has them.
    """
    shoes = shoe_rounds(cards) if shoes is None else shoes
    r = shoes.rounds
    decks = r["decks"].to_numpy()
    seen = shoes.before.sum(axis=1)
    hilo_rc = shoes.before @ HI_LO
    # decks left as polars computed it (a division by the literal 52 is a product with its reciprocal): the same bits
    true_count = hilo_rc / (np.clip(decks * 52 - seen, 26, None) * (1 / 52))
    return r.select("table_id", "shoe_id", "round_no", "round_in_shoe", "decks").with_columns(
        pl.Series("seen", seen, dtype=pl.UInt32), pl.Series("hilo_rc", hilo_rc, dtype=pl.Int64),
        pl.Series("true_count", true_count, dtype=pl.Float64),
        pl.Series("ko_rc", shoes.before @ KO + 4 - 4 * decks, dtype=pl.Int64))


def ranks_left(shoes: ShoeRounds) -> np.ndarray:
    """Per round, the cards of each rank left in the shoe before it (never below 0)."""
    return np.clip(4 * shoes.rounds["decks"].to_numpy()[:, None] - shoes.before, 0, None)


def pair_probability_before_rounds(cards: pl.DataFrame, shoes: ShoeRounds | None = None) -> pl.DataFrame:
    """Per (table, shoe, round): P(a hand's first two cards pair) from the shoe left before the round."""
    shoes = shoe_rounds(cards) if shoes is None else shoes
    if shoes.rounds.height == 0:
        return pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String, "round_no": pl.Int64, "p_pair": pl.Float64})
    left = ranks_left(shoes)
    n = left.sum(axis=1)
    same = (left * (left - 1)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 1, same / (n * (n - 1)), np.nan)
    return shoes.rounds.select("table_id", "shoe_id", "round_no").with_columns(
        pl.Series("p_pair", p, dtype=pl.Float64).fill_nan(None))
