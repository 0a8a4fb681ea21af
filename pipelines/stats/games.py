"""The Hold'em Bonus and blackjack wagers as the luck and hold detectors test them: one row per tested
wager, with its bet's payout distribution (``payouts.bet_distribution``).

A Hold'em seat's Ante, Flop, Turn and River become one ``main`` wager per round (stake: the Ante; net:
their sum), since whether the Flop, Turn and River are placed is the player's decision on the cards
seen. Only wagers settled on the pay table are kept (status ``settled``, no adjustment, positive
stake); a Hold'em main game whose Flop is not twice its Ante, or whose Turn or River is not one Ante,
is not on the distribution's lattice and is left out. The jackpot wagers are kept apart
(``jackpot_wagers``): their money return needs the stake the rule sets leave unstated, their hits do not.
"""

from __future__ import annotations

from functools import lru_cache

import polars as pl

from pipelines.stats.entity_codes import like, typed_as
from pipelines.stats.payouts import BetDistribution, Untestable, bet_distribution

GAMES = ("holdem_bonus", "blackjack")
TESTED_BETS = {"holdem_bonus": ("bonus", "main"), "blackjack": ("main", "pair", "insurance")}
#: bets whose null assumes a stated strategy (tested one-sided in hold, not tested in luck)
DECISION_BETS = ("main",)
ROUND = ["gaming_day", "table_id", "round_no"]


@lru_cache(maxsize=256)
def distribution_of(name: str, version: str, decks: int, bet: str) -> BetDistribution | None:
    from pipelines.stats.distributions import ruleset_of

    try:
        return bet_distribution(ruleset_of(name, version), bet, decks)
    except (Untestable, KeyError):
        return None


def _on_pay_table(wagers: pl.DataFrame, game: str) -> pl.DataFrame:
    return wagers.filter((pl.col("game") == game) & (pl.col("status") == "settled") & pl.col("adjustment").is_null()
                         & pl.col("cards_net").is_not_null() & (pl.col("amount") > 0))


def _holdem_main(w: pl.DataFrame) -> pl.DataFrame:
    """One ``main`` row per seat and round: the Ante's stake, the four wagers' nets added."""
    parts = w.filter(pl.col("bet").is_in(["ante", "flop", "turn", "river"])).with_columns(
        ~((pl.col("status") == "settled") & pl.col("adjustment").is_null() & pl.col("cards_net").is_not_null()
          & (pl.col("amount") > 0)).alias("off_table"))
    if parts.height == 0:
        return parts
    keys = [*ROUND, "seat"]

    def of(bet: str) -> pl.Expr:
        return pl.col("amount").filter(pl.col("bet") == bet).sum()

    seats = parts.group_by(keys).agg(
        pl.col("player_id").drop_nulls().first(), pl.col("dealer_id").first(), pl.col("game").first(),
        pl.col("ruleset").first(), pl.col("ruleset_version").first(), pl.col("currency").first(),
        pl.col("shoe_id").first(), pl.col("decks").first(), of("ante").alias("amount"), of("flop").alias("flop"),
        of("turn").alias("turn"), of("river").alias("river"), (pl.col("bet") == "ante").sum().alias("antes"),
        pl.col("cards_net").sum(), pl.col("recorded_net").sum(), pl.len().alias("parts"), pl.col("off_table").any())
    # a seat any of whose main wagers was not settled on the pay table (void, adjusted) is left out whole
    ok = (~pl.col("off_table") & (pl.col("antes") == 1) & (pl.col("amount") > 0) & ((pl.col("flop") == 0) | (pl.col("flop") == 2 * pl.col("amount")))
          & ((pl.col("turn") == 0) | (pl.col("turn") == pl.col("amount")))
          & ((pl.col("river") == 0) | (pl.col("river") == pl.col("amount"))))
    return seats.filter(ok).with_columns(like("main", w, "bet").alias("bet")).drop("flop", "turn", "river", "antes", "parts", "off_table")


COLUMNS = [*ROUND, "seat", "player_id", "dealer_id", "game", "ruleset", "ruleset_version", "currency", "shoe_id",
           "decks", "bet", "amount", "cards_net", "recorded_net"]


def settled_games(wagers: pl.DataFrame) -> pl.DataFrame:
    """Every tested Hold'em Bonus and blackjack wager with its bet's distribution: ``grid``, ``mean``, ``p_win``,
    ``one_sided`` and ``k`` (its net from the cards on the 1/grid lattice of its stake)."""
    frames = []
    for game in GAMES:
        default_decks = 1 if game == "holdem_bonus" else 8
        every = wagers.filter(pl.col("game") == game).with_columns(pl.col("decks").fill_null(default_decks).cast(pl.Int64))
        w = _on_pay_table(every, game)
        if every.height == 0:
            continue
        if game == "holdem_bonus":
            w = pl.concat([w.filter(pl.col("bet") == "bonus").select(COLUMNS), _holdem_main(every).select(COLUMNS)])
        else:
            w = w.filter(pl.col("bet").is_in(TESTED_BETS[game])).select(COLUMNS)
        frames.append(w)
    if not frames:
        return pl.DataFrame()
    w = pl.concat(frames)
    rows = []
    for name, version, decks, bet in w.select("ruleset", "ruleset_version", "decks", "bet").unique().rows():
        d = distribution_of(name, version, int(decks), bet)
        if d is None:
            continue
        pay = d.payout
        rows.append({"ruleset": name, "ruleset_version": version, "decks": decks, "bet": bet, "grid": pay.grid,
                     "mean": d.mean, "p_win": d.win_probability, "one_sided": d.one_sided})
    table = pl.DataFrame(rows, schema={"ruleset": pl.String, "ruleset_version": pl.String, "decks": pl.Int64, "bet": pl.String,
                                       "grid": pl.Int64, "mean": pl.Float64, "p_win": pl.Float64, "one_sided": pl.Boolean})
    w = w.join(typed_as(table, w), on=["ruleset", "ruleset_version", "decks", "bet"], how="inner").with_columns(
        (pl.col("cards_net") * pl.col("grid") / pl.col("amount")).alias("k_exact"))
    # a net off the lattice (a double for less, a rounded 3:2 on an odd stake) is not a draw of the distribution
    return w.filter((pl.col("k_exact") - pl.col("k_exact").round(0)).abs() < 1e-9).with_columns(
        pl.col("k_exact").round(0).cast(pl.Int64).alias("k")).drop("k_exact")


def jackpot_wagers(wagers: pl.DataFrame) -> pl.DataFrame:
    """The Hold'em jackpot wagers settled on the rules, with ``hit`` (the cards won a line) and ``p_hit``."""
    w = _on_pay_table(wagers, "holdem_bonus").filter(pl.col("bet") == "progressive")
    if w.height == 0:
        return w
    rows = []
    for name, version in w.select("ruleset", "ruleset_version").unique().rows():
        p = jackpot_probability(name, version)
        if p is not None:
            rows.append({"ruleset": name, "ruleset_version": version, "p_hit": p[0], "how": p[1]})
    table = pl.DataFrame(rows, schema={"ruleset": pl.String, "ruleset_version": pl.String, "p_hit": pl.Float64, "how": pl.String})
    return w.join(typed_as(table, w), on=["ruleset", "ruleset_version"], how="inner").with_columns(
        (pl.col("cards_net") > 0).alias("hit"))


@lru_cache(maxsize=64)
def jackpot_probability(name: str, version: str) -> tuple[float, str] | None:
    from pipelines.stats.distributions import ruleset_of
    from pipelines.stats.payouts import jackpot_hit_distribution

    try:
        p, how = jackpot_hit_distribution(ruleset_of(name, version))
    except (Untestable, KeyError):
        return None
    return float(p), how
