"""player_luck_anomaly for Hold'em Bonus and blackjack: the Bonus lines, the blackjack Pair and Insurance,
and the jackpot's hits.

Per player and bet, each wager's line won from the cards is scored by how rare it is (``rarity_scores``:
log2 of how much rarer than a loss, so a 1000:1 line counts 18 and a 3:1 pair 4), and the statistic is
the sum of the scores, against the exact convolution of the per-wager score distributions (from
``payouts.bet_distribution``: the Bonus's eight lines, the Pair's 11:1, Insurance's 2:1); P(S >= observed).
(Baccarat's luck sums nets in units; its top line is 50:1, the Bonus's 1000:1 would swamp that sum.) The main games are not tested for luck: their distribution
assumes a strategy, and a player's own play moves it (the hold detector tests them one-sided).

A jackpot wager's payout per unit staked needs the stake the rule sets leave unstated (MBS-1.1.12,
THB-G-JACKPOT) and the meter, so its luck is its hits: wagers that won a line, against the exact
probability of a line (``payouts_holdem.jackpot_hit_probability``), an exact binomial tail.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache

import numpy as np
import polars as pl

from pipelines.currency import format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import P_FLOOR, Payout, binom_sf, sum_distribution, tail_at
from pipelines.stats.entity_codes import typed_as
from pipelines.stats.games import distribution_of, jackpot_wagers, settled_games
from pipelines.stats.tests_frame import fmt_p, fmt_ps, json_list, json_value, only_table, rows_frame, tests_frame

LUCK_BETS = ("bonus", "pair", "insurance")
LABEL = {"bonus": "Hold'em Bonus", "pair": "blackjack Pair", "insurance": "Insurance", "progressive": "jackpot"}

Part = tuple[str, str, int, str, int]  # ruleset, version, decks, bet, wagers


@lru_cache(maxsize=256)
def rarity_scores(name: str, version: str, decks: int, bet: str) -> tuple[dict[int, int], Payout]:
    """A wager's score by its net (on the bet's grid): 0 for no win, and for a line won ``round(log2(P(no win) /
    P(line)))``, at least 1: a hit weighs as many "halvings" as it is rarer than a loss. With the net in units
    as the statistic (baccarat's), the Bonus's 1000:1 line (3.7 in a million) outweighs a hundred 3:1 wins, and the
    chance of hitting it once caps what the test can ever show (a player winning three times as often as
    chance over 300 bets came out at p = 0.001). The exact convolution of the scores is the null."""
    d = distribution_of(name, version, decks, bet)
    pay = d.payout
    lose = sum(float(p) for v, p in zip(d.values, d.probs) if v <= 0)
    score = {v: (max(1, round(math.log2(lose / q))) if v > 0 else 0) for v, q in zip(pay.values, pay.probs)}
    return score, Payout(bet, 1, tuple(score[v] for v in pay.values), pay.probs)


@lru_cache(maxsize=2048)
def _survival(parts: tuple[Part, ...]) -> tuple[int, np.ndarray]:
    offset, pmf = sum_distribution([(rarity_scores(r, v, d, b)[1], n) for r, v, d, b, n in parts])
    return offset, np.cumsum(pmf[::-1])[::-1]


@lru_cache(maxsize=1 << 16)
def games_luck_p_value(parts: tuple[Part, ...], observed: int) -> float:
    """P(S >= observed) for the sum ``S`` of the parts' wagers' rarity scores (exact convolution). Below the
    expected score the p-value is written 1 (conservative: no convolution spent on it). Kept per parts and score (the
    longer windows test most players on the same wagers again)."""
    scores = [(rarity_scores(r, v, d, b)[1], n) for r, v, d, b, n in parts]
    mean = sum(float(np.dot(payout.values, payout.probs)) * n for payout, n in scores)
    if observed <= mean:
        return 1.0
    offset, sf = _survival(parts)
    return tail_at(sf, observed - offset)


def detect_games_luck(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
                      settled: pl.DataFrame | None = None) -> pl.DataFrame:
    """One test row per (player, currency, game, bet) of the Bonus, Pair and Insurance, and per player's jackpot: the
    sum of the per-day aggregates (``games_luck_aggregates``), as a window of summaries gives them."""
    w = settled_games(wagers) if settled is None else settled
    return games_luck_rows(*games_luck_aggregates(wagers, w), params, window_days)


ENTITY = ["player_id", "currency", "game", "bet"]
JACKPOT = ["player_id", "currency", "ruleset", "ruleset_version"]


def games_luck_aggregates(wagers: pl.DataFrame, settled: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Per gaming day: (each player's and bet's sums, his wagers' parts: per distribution the count ``n``, the net on
    the grid ``k`` and the rarity score; his jackpot wagers and hits). All add up over days (``games_luck_rows``)."""
    lines = parts = pl.DataFrame()
    w = settled.filter(pl.col("player_id").is_not_null() & pl.col("bet").is_in(LUCK_BETS)) if settled.height else settled
    if w.height:
        scores = pl.DataFrame([{"ruleset": r, "ruleset_version": v, "decks": d, "bet": b, "k": k, "score": sc}
                               for r, v, d, b in w.select("ruleset", "ruleset_version", "decks", "bet").unique().rows()
                               for k, sc in rarity_scores(r, v, d, b)[0].items()],
                              schema={"ruleset": pl.String, "ruleset_version": pl.String, "decks": pl.Int64, "bet": pl.String,
                                      "k": pl.Int64, "score": pl.Int64})
        w = w.join(typed_as(scores, w), on=["ruleset", "ruleset_version", "decks", "bet", "k"], how="inner")
        parts = w.group_by("gaming_day", *ENTITY, "ruleset", "ruleset_version", "decks", "grid").agg(
            pl.len().alias("n"), pl.col("k").sum(), pl.col("score").sum())
        lines = w.with_columns((pl.col("amount") * pl.col("mean")).alias("theo"), (pl.col("k") > 0).alias("won")).group_by(
            "gaming_day", *ENTITY).agg(
            pl.len().alias("wagers"), pl.struct("table_id", "round_no").n_unique().alias("rounds"),
            pl.col("won").sum().alias("wins"), pl.col("p_win").sum().alias("wins_expected"), pl.col("theo").sum(),
            pl.col("recorded_net").sum().alias("recorded"), pl.col("cards_net").sum().alias("cards"),
            pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
            pl.col("ruleset").first(), pl.col("table_id").unique().sort().alias("tables"))
    j = jackpot_wagers(wagers).filter(pl.col("player_id").is_not_null()) if wagers.height else wagers
    jack = j.group_by("gaming_day", *JACKPOT).agg(
        pl.len().alias("wagers"), pl.col("hit").sum().alias("hits"), pl.col("p_hit").first(), pl.col("how").first(),
        pl.col("recorded_net").sum().alias("recorded"), pl.col("gaming_day").min().alias("first_day"),
        pl.col("gaming_day").max().alias("last_day"), pl.col("table_id").unique().sort().alias("tables"),
        pl.struct("table_id", "round_no").n_unique().alias("rounds"),
    ) if j.height else pl.DataFrame()
    return lines, parts, jack


def _union() -> pl.Expr:
    return pl.col("tables").list.explode(keep_nulls=False, empty_as_null=False).unique().sort()


def games_luck_rows(lines: pl.DataFrame, parts: pl.DataFrame, jack: pl.DataFrame, params: StatsParams,
                    window_days: int) -> pl.DataFrame:
    """The test rows from days' aggregates (``games_luck_aggregates``, any number of days)."""
    out = [tests_frame([])]
    if lines.height:
        out.append(_line_tests(lines, parts, params, window_days))
    if jack.height:
        out.append(tests_frame(_jackpot_tests(jack, params, window_days)))
    return pl.concat(out)


def _line_tests(lines: pl.DataFrame, parts: pl.DataFrame, params: StatsParams, window_days: int) -> pl.DataFrame:
    ent = ENTITY
    parts = parts.group_by([*ent, "ruleset", "ruleset_version", "decks", "grid"]).agg(
        pl.col("n").sum(), pl.col("k").sum(), pl.col("score").sum())
    summary = lines.group_by(ent).agg(
        *[pl.col(c).sum() for c in ("wagers", "rounds", "wins", "wins_expected", "theo", "recorded", "cards")],
        pl.col("first_day").min(), pl.col("last_day").max(), pl.col("ruleset").sort_by("gaming_day").first(), _union(),
    ).filter(pl.col("wagers") >= params.luck_min_wagers).sort(ent)
    grouped = parts.sort([*ent, "ruleset", "ruleset_version", "decks"]).group_by(ent, maintain_order=True).agg(
        "ruleset", "ruleset_version", "decks", "grid", "n", "k", "score").to_dict(as_series=False)
    by_entity = dict(zip(zip(*(grouped[k] for k in ent)),
                         zip(*(grouped[k] for k in ("ruleset", "ruleset_version", "decks", "grid", "n", "k", "score")))))
    cols = summary.select(*ent, "wins", "wagers", "wins_expected", "theo", "cards", "recorded", "tables").to_dict(as_series=False)
    dist: dict[tuple, object] = {}  # distribution_of's mean is summed anew on each call: once per distribution here

    def of(k: tuple):
        d = dist.get(k)
        if d is None:
            found = distribution_of(*k)
            d = dist[k] = (found.mean, json_value(found.source))
        return d

    ps, theos, evidence = [], [], []
    for who, cur, game, bet, wins, wexp, theo, tb in zip(cols["player_id"], cols["currency"], cols["game"], cols["bet"],
                                                       cols["wins"], cols["wins_expected"], cols["theo"], cols["tables"]):
        rulesets, versions, decks, grids, ns, ks, scores = by_entity[(who, cur, game, bet)]
        observed: dict[int, int] = {}
        for g, k in zip(grids, ks):
            observed[g] = observed.get(g, 0) + k
        key = tuple((r, v, d, bet, n) for r, v, d, n in zip(rulesets, versions, decks, ns))
        score = sum(scores)
        ps.append(games_luck_p_value(key, score))
        theos.append(int(round(theo)))
        dists = [of(k[:4]) for k in key]
        evidence.append(
            f'{{"wins": {json_value(wins)}, "wins_expected": {json_value(round(wexp, 3))}, "tables": {json_list(tb)}, '
            f'"net_units": {json_value(round(sum(k / g for g, k in observed.items()), 2))}, '
            f'"expected_units": {json_value(round(sum(m * k[4] for (m, _), k in zip(dists, key)), 2))}, '
            f'"distribution": [{", ".join(src for _, src in dists)}], "rarity_score": {json_value(score)}, '
            '"statistic": "sum of rarity scores (log2 of how much rarer than a loss each line won is); exact convolution"}')
    labels = [LABEL[b] for b in cols["bet"]]
    sentence = [f"{who} won {wins} of {wagers} {label} bets, {wexp:.1f} expected (net {format_money(cards, cur, signed=True)} "
                f"against a theoretical {format_money(theo, cur, signed=True)}); p = {fp}"
                for who, wins, wagers, label, wexp, cards, cur, theo, fp in zip(
                    cols["player_id"], cols["wins"], cols["wagers"], labels, cols["wins_expected"], cols["cards"],
                    cols["currency"], theos, fmt_ps(ps))]
    return rows_frame(summary.height, {
        "kind": "player_luck_anomaly", "test": "luck", "entity": [f"{who} x {label} bets" for who, label in zip(cols["player_id"], labels)],
        "window_days": window_days, "first_day": summary["first_day"], "last_day": summary["last_day"],
        "table_id": only_table(cols["tables"]), "player_id": cols["player_id"], "game": cols["game"],
        "ruleset": summary["ruleset"], "currency": cols["currency"], "bet": cols["bet"], "rounds": summary["rounds"],
        "wagers": cols["wagers"], "expected_net": theos, "recorded_net": cols["recorded"], "p_value": ps,
        "sentence": sentence, "evidence": evidence})


def _jackpot_tests(jack: pl.DataFrame, params: StatsParams, window_days: int) -> list[dict]:
    summary = jack.group_by(JACKPOT).agg(
        *[pl.col(c).sum() for c in ("wagers", "hits", "recorded", "rounds")], pl.col("p_hit").first(), pl.col("how").first(),
        pl.col("first_day").min(), pl.col("last_day").max(), _union(),
    ).filter(pl.col("wagers") >= params.luck_min_wagers).sort(JACKPOT)
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
