"""player_luck_anomaly for Hold'em Bonus and blackjack: the Bonus lines, the blackjack Pair and Insurance,
and the jackpot's hits.

The same statistic as baccarat's (``luck.py``): per player and bet, the sum of the wagers' nets from the
cards in units of each wager, against the exact convolution of the per-wager payout distributions
(``payouts.bet_distribution``: the Bonus's eight lines from 3:1 to 1000:1 on one integer grid, the Pair's
11:1, Insurance's 2:1); P(S >= observed). The main games are not tested for luck: their distribution
assumes a strategy, and a player's own play moves it (the hold detector tests them one-sided).

A jackpot wager's payout per unit staked needs the stake the rule sets leave unstated (MBS-1.1.12,
THB-G-JACKPOT) and the meter, so its luck is its hits: wagers that won a line, against the exact
probability of a line (``payouts_holdem.jackpot_hit_probability``), an exact binomial tail.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import polars as pl

from pipelines.currency import format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import P_FLOOR, binom_sf, sum_distribution
from pipelines.stats.games import distribution_of, jackpot_wagers, settled_games
from pipelines.stats.tests_frame import fmt_p, tests_frame

LUCK_BETS = ("bonus", "pair", "insurance")
LABEL = {"bonus": "Hold'em Bonus", "pair": "blackjack Pair", "insurance": "Insurance", "progressive": "jackpot"}

Part = tuple[str, str, int, str, int]  # ruleset, version, decks, bet, wagers


@lru_cache(maxsize=2048)
def _survival(parts: tuple[Part, ...]) -> tuple[int, int, np.ndarray]:
    pays = [(distribution_of(r, v, d, b).payout, n) for r, v, d, b, n in parts]
    import math

    grid = math.lcm(*(p.grid for p, _ in pays))
    offset, pmf = sum_distribution(pays)
    return grid, offset, np.cumsum(pmf[::-1])[::-1]


def games_luck_p_value(parts: tuple[Part, ...], observed: dict[int, int]) -> float:
    """P(S >= observed) for the parts' wagers; ``observed`` maps each part's grid to its integer sum on that grid.
    Below the expected sum the p-value is written 1 (conservative: no convolution spent on it)."""
    mean = sum(distribution_of(r, v, d, b).mean * n for r, v, d, b, n in parts)
    if sum(k / g for g, k in observed.items()) <= mean:
        return 1.0
    grid, offset, sf = _survival(parts)
    j = sum(k * (grid // g) for g, k in observed.items()) - offset
    if j <= 0:
        return 1.0
    if j >= len(sf):
        return P_FLOOR
    return float(min(1.0, max(P_FLOOR, sf[j])))


def detect_games_luck(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
                      settled: pl.DataFrame | None = None) -> pl.DataFrame:
    """One test row per (player, currency, game, bet) of the Bonus, Pair and Insurance, and per player's jackpot."""
    w = settled_games(wagers) if settled is None else settled
    rows = []
    if w.height:
        rows += _line_tests(w.filter(pl.col("player_id").is_not_null() & pl.col("bet").is_in(LUCK_BETS)), params, window_days)
    rows += _jackpot_tests(jackpot_wagers(wagers).filter(pl.col("player_id").is_not_null()) if wagers.height else wagers,
                           params, window_days)
    return tests_frame(rows)


def _line_tests(w: pl.DataFrame, params: StatsParams, window_days: int) -> list[dict]:
    if w.height == 0:
        return []
    ent = ["player_id", "currency", "game", "bet"]
    parts = w.group_by([*ent, "ruleset", "ruleset_version", "decks", "grid"]).agg(pl.len().alias("n"), pl.col("k").sum())
    summary = w.with_columns((pl.col("amount") * pl.col("mean")).alias("theo"), (pl.col("k") > 0).alias("won")).group_by(ent).agg(
        pl.len().alias("wagers"), pl.struct("table_id", "round_no", "gaming_day").n_unique().alias("rounds"),
        pl.col("won").sum().alias("wins"), pl.col("p_win").sum().alias("wins_expected"), pl.col("theo").sum(),
        pl.col("recorded_net").sum().alias("recorded"), pl.col("cards_net").sum().alias("cards"),
        pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
        pl.col("ruleset").first(), pl.col("table_id").unique().sort().alias("tables"),
    ).filter(pl.col("wagers") >= params.luck_min_wagers).sort(ent)
    by_entity: dict[tuple, list[dict]] = {}
    for q in parts.sort([*ent, "ruleset", "ruleset_version", "decks"]).iter_rows(named=True):
        by_entity.setdefault(tuple(q[k] for k in ent), []).append(q)
    rows = []
    for r in summary.iter_rows(named=True):
        qs = by_entity[tuple(r[k] for k in ent)]
        observed: dict[int, int] = {}
        for q in qs:
            observed[q["grid"]] = observed.get(q["grid"], 0) + q["k"]
        key = tuple((q["ruleset"], q["ruleset_version"], q["decks"], r["bet"], q["n"]) for q in qs)
        p = games_luck_p_value(key, observed)
        label = LABEL[r["bet"]]
        theo = int(round(r["theo"]))
        sentence = (f"{r['player_id']} won {r['wins']} of {r['wagers']} {label} bets, {r['wins_expected']:.1f} expected "
                    f"(net {format_money(r['cards'], r['currency'], signed=True)} against a theoretical "
                    f"{format_money(theo, r['currency'], signed=True)}); p = {fmt_p(p)}")
        evidence = {"wins": r["wins"], "wins_expected": round(r["wins_expected"], 3), "tables": r["tables"],
                    "net_units": round(sum(k / g for g, k in observed.items()), 2),
                    "expected_units": round(sum(distribution_of(*k[:4]).mean * k[4] for k in key), 2),
                    "distribution": [distribution_of(*k[:4]).source for k in key],
                    "statistic": "sum of nets in units of each wager; exact convolution"}
        rows.append({"kind": "player_luck_anomaly", "test": "luck", "entity": f"{r['player_id']} x {label} bets",
                     "window_days": window_days, "first_day": r["first_day"], "last_day": r["last_day"],
                     "table_id": r["tables"][0] if len(r["tables"]) == 1 else None, "player_id": r["player_id"],
                     "game": r["game"], "ruleset": r["ruleset"], "currency": r["currency"], "bet": r["bet"],
                     "rounds": r["rounds"], "wagers": r["wagers"], "expected_net": theo, "recorded_net": r["recorded"],
                     "p_value": p, "sentence": sentence, "evidence": json.dumps(evidence, default=str)})
    return rows


def _jackpot_tests(j: pl.DataFrame, params: StatsParams, window_days: int) -> list[dict]:
    if j.height == 0:
        return []
    ent = ["player_id", "currency", "ruleset", "ruleset_version"]
    summary = j.group_by(ent).agg(
        pl.len().alias("wagers"), pl.col("hit").sum().alias("hits"), pl.col("p_hit").first(), pl.col("how").first(),
        pl.col("recorded_net").sum().alias("recorded"), pl.col("gaming_day").min().alias("first_day"),
        pl.col("gaming_day").max().alias("last_day"), pl.col("table_id").unique().sort().alias("tables"),
        pl.struct("table_id", "round_no", "gaming_day").n_unique().alias("rounds"),
    ).filter(pl.col("wagers") >= params.luck_min_wagers).sort(ent)
    rows = []
    for r in summary.iter_rows(named=True):
        p = max(P_FLOOR, binom_sf(int(r["hits"]), int(r["wagers"]), float(r["p_hit"])))
        expected = r["wagers"] * r["p_hit"]
        sentence = (f"{r['player_id']} hit a jackpot line on {r['hits']} of {r['wagers']} jackpot wagers, "
                    f"{expected:.2f} expected; p = {fmt_p(p)}")
        evidence = {"hits": r["hits"], "hits_expected": round(expected, 4), "p_hit": r["p_hit"], "how": r["how"],
                    "tables": r["tables"], "statistic": "jackpot wagers that won a line; exact binomial tail",
                    "not_tested": "the money return: the rule set does not state the jackpot stake"}
        rows.append({"kind": "player_luck_anomaly", "test": "jackpot_hits", "entity": f"{r['player_id']} x jackpot bets",
                     "window_days": window_days, "first_day": r["first_day"], "last_day": r["last_day"],
                     "table_id": r["tables"][0] if len(r["tables"]) == 1 else None, "player_id": r["player_id"],
                     "game": "holdem_bonus", "ruleset": r["ruleset"], "currency": r["currency"], "bet": "progressive",
                     "rounds": r["rounds"], "wagers": r["wagers"], "recorded_net": r["recorded"],
                     "p_value": p, "sentence": sentence, "evidence": json.dumps(evidence, default=str)})
    return rows
