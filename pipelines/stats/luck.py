"""player_luck_anomaly: a player who does better on a bet type than the cards allow by chance.

Per player and bet type (and per player over all side bets together), the statistic is the sum of
the wagers' nets in units of each wager, ``S = sum net_i / amount_i``, from the re-settled cards
(``cards_net``, the pay table on the cards; not the recorded net, which the collusion detector
judges). Its null distribution is the exact convolution of the per-wager payout distributions
(``distributions.sum_distribution``: 12:1 and 20:1 Tiger lines, 50:1 Big Tiger, 8:1 Tie on one
integer grid), and the p-value is P(S >= observed). Counting each wager in units weighs a hit by
its payout, and a pay table prices a line near the inverse of its probability, so a rare hit
counts for about as much as it is rare: one Big Tiger (50 units) outweighs four Ties (32 units).
The p-value of a discrete statistic is conservative (P(p <= a) <= a).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import polars as pl

from pipelines.currency import format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import Payout, baccarat_payouts, sum_distribution, tail_at
from pipelines.stats.entity_codes import like, typed_as
from pipelines.stats.tests_frame import BET_LABEL, JsonLists, fmt_ps, json_value, only_table, rows_frame, tests_frame

SIDE_BETS = ("tie", "player_pair", "banker_pair", "tiger", "small_tiger", "big_tiger")
DEFAULT_DECKS = 8


def settled_baccarat(wagers: pl.DataFrame) -> pl.DataFrame:
    """Baccarat wagers settled on the pay table (no void, limit, differential adjustment), with their payout."""
    w = wagers.filter(
        (pl.col("game") == "baccarat") & (pl.col("status") == "settled") & pl.col("adjustment").is_null()
        & pl.col("cards_net").is_not_null() & (pl.col("amount") > 0)
    ).with_columns(pl.col("decks").fill_null(DEFAULT_DECKS).cast(pl.Int64))
    keys = w.group_by("ruleset", "ruleset_version", "decks", "bet").len().drop("len").rows()
    rows = []
    for name, version, decks, bet in keys:
        pay = baccarat_payouts(name, version, int(decks)).get(bet)
        if pay is None:
            continue
        rows.append({"ruleset": name, "ruleset_version": version, "decks": decks, "bet": bet, "grid": pay.grid,
                     "mean": pay.mean, "p_win": float(sum(q for v, q in zip(pay.values, pay.probs) if v > 0))})
    table = pl.DataFrame(rows, schema={"ruleset": pl.String, "ruleset_version": pl.String, "decks": pl.Int64,
                                       "bet": pl.String, "grid": pl.Int64, "mean": pl.Float64, "p_win": pl.Float64})
    return w.join(typed_as(table, w), on=["ruleset", "ruleset_version", "decks", "bet"], how="inner").with_columns(
        (pl.col("cards_net") * pl.col("grid") / pl.col("amount")).round(0).cast(pl.Int64).alias("k"))


@lru_cache(maxsize=4096)
def _survival(parts: tuple[tuple[str, str, int, str, int], ...]) -> tuple[int, int, np.ndarray]:
    """(grid, offset, P(S >= offset + j)) of the sum of the parts' wagers: cached, entities share n often."""
    payouts: list[tuple[Payout, int]] = [(baccarat_payouts(r, v, d)[b], n) for r, v, d, b, n in parts]
    grid = math.lcm(*(p.grid for p, _ in payouts))
    offset, pmf = sum_distribution(payouts)
    return grid, offset, np.cumsum(pmf[::-1])[::-1]


def luck_p_value(parts: tuple[tuple[str, str, int, str, int], ...], observed: dict[int, int]) -> float:
    """P(S >= observed) where ``observed`` maps each part's grid to its integer sum on that grid."""
    return _luck_p_value(parts, tuple(sorted(observed.items())))


@lru_cache(maxsize=1 << 16)
def _luck_p_value(parts: tuple[tuple[str, str, int, str, int], ...], observed: tuple[tuple[int, int], ...]) -> float:
    """``luck_p_value`` kept per entity's parts and sums: a night's 7- and 30-day windows test most of its players
    on the same wagers again (the survival arrays' own cache holds fewer than a night's players)."""
    observed = dict(observed)
    grid, offset, sf = _survival(parts)
    s = sum(k * (grid // g) for g, k in observed.items())
    j = s - offset
    return tail_at(sf, j)


def _above_mean(parts: tuple[tuple[str, str, int, str, int], ...], observed: dict[int, int]) -> bool:
    """Whether the player did better than his expected net (in units): only then can P(S >= s) be small.

    Below the mean the p-value is at least about one half; it is written as 1 (no convolution is spent on it),
    which keeps the test conservative (P(p <= a) <= a still holds)."""
    mean = sum(_unit_mean(r, v, d, b) * n for r, v, d, b, n in parts)
    return sum(k / g for g, k in observed.items()) > mean


@lru_cache(maxsize=256)
def _unit_mean(name: str, version: str, decks: int, bet: str) -> float:
    """A wager's expected net in units (``Payout.mean`` sums it anew on each call)."""
    return baccarat_payouts(name, version, decks)[bet].mean


@lru_cache(maxsize=1 << 16)
def _entity_p_value(parts: tuple[tuple[str, str, int, str, int], ...], observed: tuple[tuple[int, int], ...]) -> float:
    """An entity's p-value: 1 at or below its mean (``_above_mean``), else ``luck_p_value``; kept per parts and sums
    (the longer windows test most players on the same wagers again)."""
    sums = dict(observed)
    return _luck_p_value(parts, observed) if _above_mean(parts, sums) else 1.0


def detect_luck(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
                settled: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every game's luck tests: baccarat here, the Hold'em Bonus, jackpot, Pair and Insurance in ``luck_games``."""
    from pipelines.stats.luck_games import detect_games_luck

    return pl.concat([baccarat_luck(wagers, params, window_days, settled), detect_games_luck(wagers, params, window_days)])


def baccarat_luck(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
                  settled: pl.DataFrame | None = None) -> pl.DataFrame:
    """One test row per (player, currency, bet type) and per (player, currency, side bets together).

    ``settled``: ``settled_baccarat(wagers)`` when the caller has it already."""
    w = (settled_baccarat(wagers) if settled is None else settled).filter(pl.col("player_id").is_not_null())
    if w.height == 0:
        return tests_frame([])
    per_part, summary = luck_aggregates(w)
    return luck_rows(summary.filter(pl.col("wagers") >= params.luck_min_wagers), per_part, window_days)


ENTITY_KEYS = ("player_id", "currency", "entity_bet")
PART_KEYS = ("ruleset", "ruleset_version", "decks", "bet", "grid")


def luck_aggregates(w: pl.DataFrame, by: tuple[str, ...] = ()) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per part: wagers ``n`` and net ``k`` on the grid per entity and payout; per entity: wagers, rounds, wins,
    expected wins, theory, recorded and re-settled nets, days, rule set, tables) of settled wagers with a player.
    ``by`` adds grouping columns (the gaming day). Every column adds up over days but ``tables`` (a union)."""
    w = w.with_columns((pl.col("amount") * pl.col("mean")).alias("theo"), (pl.col("k") > 0).alias("won"))
    both = pl.concat([
        w.with_columns(pl.col("bet").alias("entity_bet")),
        w.filter(pl.col("bet").is_in(SIDE_BETS)).with_columns(like("side_bets", w, "bet").alias("entity_bet")),
    ])
    ent_keys = list(ENTITY_KEYS)
    # a part's bet is one of its keys, so a side bet's part of the "side_bets" entity is its part of its own bet's
    # entity: each part is counted once and the side bets' copied (integer counts and sums: the same rows)
    per_bet = w.group_by(*by, "player_id", "currency", *PART_KEYS).agg(pl.len().alias("n"), pl.col("k").sum().alias("k"))
    per_part = pl.concat([per_bet.with_columns(pl.col("bet").alias("entity_bet")),
                          per_bet.filter(pl.col("bet").is_in(SIDE_BETS)).with_columns(like("side_bets", w, "bet").alias("entity_bet"))]
                         ).select(*by, *ent_keys, *PART_KEYS, "n", "k")
    summary = both.group_by(*by, *ent_keys).agg(
        pl.len().alias("wagers"), pl.struct("gaming_day", "table_id", "round_no").n_unique().alias("rounds"),
        pl.col("won").sum().alias("wins"), pl.col("p_win").sum().alias("wins_expected"),
        pl.col("theo").sum().alias("theo"), pl.col("recorded_net").sum().alias("recorded"),
        pl.col("cards_net").sum().alias("cards"), pl.col("gaming_day").min().alias("first_day"),
        pl.col("gaming_day").max().alias("last_day"), pl.col("ruleset").first().alias("ruleset"),
        pl.col("table_id").unique().sort().alias("tables"),
    )
    return per_part, summary


def luck_rows(summary: pl.DataFrame, per_part: pl.DataFrame, window_days: int) -> pl.DataFrame:
    """The test rows of the entities of ``summary`` (already filtered by size) from their parts (``luck_aggregates``),
    column by column (the evidence's JSON is what ``json.dumps`` wrote)."""
    if summary.height == 0:
        return tests_frame([])
    ent_keys = list(ENTITY_KEYS)
    summary = summary.sort(ent_keys)
    grouped = per_part.join(summary.select(ent_keys), on=ent_keys, how="semi").sort(
        ent_keys + ["ruleset", "ruleset_version", "decks", "bet"]).group_by(ent_keys, maintain_order=True).agg(
        "ruleset", "ruleset_version", "decks", "bet", "grid", "n", "k").to_dict(as_series=False)
    parts_by_entity = dict(zip(zip(*(grouped[k] for k in ent_keys)),
                               zip(*(grouped[k] for k in ("ruleset", "ruleset_version", "decks", "bet", "grid", "n", "k")))))
    cols = summary.select(*ent_keys, "wins", "wagers", "wins_expected", "theo", "cards", "tables").to_dict(as_series=False)
    ps, theos, by_bets = [], [], []
    for key, theo in zip(zip(*(cols[k] for k in ent_keys)), cols["theo"]):
        rulesets, versions, decks, bets, grids, ns, ks = parts_by_entity[key]
        observed: dict[int, int] = {}
        for g, k in zip(grids, ks):
            observed[g] = observed.get(g, 0) + k
        ps.append(_entity_p_value(tuple(zip(rulesets, versions, decks, bets, ns)), tuple(sorted(observed.items()))))
        theos.append(int(round(theo)))
        by_bet: dict[str, tuple[int, float]] = {}  # a bet played under two rule sets or deck counts is two parts: added
        for b, n, k, g in zip(bets, ns, ks, grids):
            n0, u0 = by_bet.get(b, (0, 0.0))
            by_bet[b] = (n0 + n, u0 + k / g)
        by_bet = {b: (n, round(u, 2)) for b, (n, u) in by_bet.items()}
        by_bets.append("{" + ", ".join(f'{json_value(b)}: {{"wagers": {n}, "net_units": {json_value(u)}}}'
                                       for b, (n, u) in by_bet.items()) + "}")
    labels = [BET_LABEL.get(b, b) for b in cols["entity_bet"]]
    sentence = [f"{who} won {wins} of {wagers} {label} bets, {wexp:.1f} expected (net {format_money(cards, cur, signed=True)} "
                f"against a theoretical {format_money(theo, cur, signed=True)}); p = {fp}"
                for who, wins, wagers, label, wexp, cards, cur, theo, fp in zip(
                    cols["player_id"], cols["wins"], cols["wagers"], labels, cols["wins_expected"], cols["cards"],
                    cols["currency"], theos, fmt_ps(ps))]
    tables = JsonLists()
    evidence = [f'{{"wins": {json_value(wins)}, "wins_expected": {json_value(round(wexp, 2))}, "tables": {tables(tb)}, '
                f'"by_bet": {bb}, "statistic": "sum of nets in units of each wager; exact convolution"}}'
                for wins, wexp, tb, bb in zip(cols["wins"], cols["wins_expected"], cols["tables"], by_bets)]
    return rows_frame(summary.height, {
        "kind": "player_luck_anomaly", "test": "luck", "entity": [f"{who} x {label} bets" for who, label in zip(cols["player_id"], labels)],
        "window_days": window_days, "first_day": summary["first_day"], "last_day": summary["last_day"],
        "table_id": only_table(cols["tables"]), "player_id": cols["player_id"], "game": "baccarat",
        "ruleset": summary["ruleset"], "currency": cols["currency"], "bet": cols["entity_bet"], "rounds": summary["rounds"],
        "wagers": cols["wagers"], "expected_net": theos, "recorded_net": summary["recorded"], "p_value": ps,
        "sentence": sentence, "evidence": evidence})
