"""collusion_pattern: a dealer who overpays one player beyond both their own baselines.

Every wager has a dealer, a player and a re-settled ``difference`` (recorded - expected, positive when
the player was overpaid). For each dealer-player pair, the count of rounds together in which the player was overpaid, ``k``
of the pair's ``n`` rounds, is tested against a binomial with the rate the pair would have if overpayments did not depend on
who sits with whom: the larger of the dealer's rate with everybody else and the player's rate with
every other dealer, each shrunk toward the floor's rate by ``collusion_prior_rounds`` pseudo-rounds (a
dealer with 40 rounds and no error is not error-free). Taking the larger baseline keeps a careless
dealer, or a player whose wagers are hard to settle, from being called a colluder; excluding the pair
from both baselines keeps the collusion itself from hiding in the dealer's rate.

``graph`` is the dealer-player graph (every pair, tested or not) for reports: rounds, wagers, overpaid
wagers and amounts, nets.
"""

from __future__ import annotations

import json

import polars as pl

from pipelines.currency import format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import P_FLOOR, binom_sf
from pipelines.stats.tests_frame import fmt_p, tests_frame


def dealer_player_graph(wagers: pl.DataFrame, window_days: int = 1, by: tuple[str, ...] = ()) -> pl.DataFrame:
    """One row per dealer-player pair (and currency, and ``by``: the gaming day) with a re-settled wager. A round is
    (gaming day, table, round number), so every count adds up over days (``GRAPH_SUMS``)."""
    w = wagers.filter(pl.col("dealer_id").is_not_null() & pl.col("player_id").is_not_null()
                      & pl.col("expected_net").is_not_null() & pl.col("recorded_net").is_not_null())
    over = pl.col("difference") > 0
    under = pl.col("difference") < 0
    rnd = pl.struct("gaming_day", "table_id", "round_no")
    return w.group_by(*by, "dealer_id", "player_id", "currency").agg(
        rnd.n_unique().cast(pl.Int64).alias("rounds"), pl.len().cast(pl.Int64).alias("wagers"),
        over.sum().cast(pl.Int64).alias("overpaid_wagers"),
        rnd.filter(over).n_unique().cast(pl.Int64).alias("overpaid_rounds"),
        pl.col("difference").filter(over).sum().cast(pl.Int64).alias("overpaid_amount"),
        under.sum().cast(pl.Int64).alias("underpaid_wagers"),
        (-pl.col("difference").filter(under).sum()).cast(pl.Int64).alias("underpaid_amount"),
        pl.col("amount").sum().cast(pl.Int64).alias("wagered"),
        pl.col("expected_net").sum().cast(pl.Int64).alias("expected_net"),
        pl.col("recorded_net").sum().cast(pl.Int64).alias("recorded_net"),
        pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
        pl.col("table_id").unique().sort().alias("tables"), pl.col("game").first().alias("game"),
        pl.col("ruleset").first().alias("ruleset"),
    ).with_columns(pl.lit(window_days).cast(pl.Int64).alias("window_days")).sort(*by, "dealer_id", "player_id", "currency")


GRAPH_SUMS = ("rounds", "wagers", "overpaid_wagers", "overpaid_rounds", "overpaid_amount", "underpaid_wagers",
              "underpaid_amount", "wagered", "expected_net", "recorded_net")


def collusion_tests(graph: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    if graph.height == 0:
        return tests_frame([])
    # rounds, not wagers: one wrong settlement of a Hold'em round touches the Ante, Flop, Turn and River at once
    g = graph.with_columns(
        pl.col("overpaid_rounds").sum().over("dealer_id").alias("d_k"), pl.col("rounds").sum().over("dealer_id").alias("d_n"),
        pl.col("overpaid_rounds").sum().over("player_id").alias("p_k"), pl.col("rounds").sum().over("player_id").alias("p_n"),
    )
    floor_k, floor_n = int(g["overpaid_rounds"].sum()), int(g["rounds"].sum())
    floor = (floor_k + 1) / (floor_n + 2)
    prior = params.collusion_prior_rounds
    g = g.with_columns(
        ((pl.col("d_k") - pl.col("overpaid_rounds") + prior * floor) / (pl.col("d_n") - pl.col("rounds") + prior)).alias("dealer_rate"),
        ((pl.col("p_k") - pl.col("overpaid_rounds") + prior * floor) / (pl.col("p_n") - pl.col("rounds") + prior)).alias("player_rate"),
    ).with_columns(pl.max_horizontal("dealer_rate", "player_rate").alias("baseline"))
    tested = g.filter(pl.col("rounds") >= params.collusion_min_rounds)
    # most pairs were never overpaid: p = 1, written by frames (a night has tens of thousands of pairs)
    clean = tested.filter(pl.col("overpaid_rounds") == 0).select(
        pl.lit("collusion_pattern").alias("kind"), pl.lit("overpaid_pair").alias("test"),
        pl.format("dealer {} x {}", "dealer_id", "player_id").alias("entity"), pl.lit(window_days).cast(pl.Int64).alias("window_days"),
        "first_day", "last_day",
        pl.when(pl.col("tables").list.len() == 1).then(pl.col("tables").list.first()).alias("table_id"),
        "player_id", "dealer_id", "game", "ruleset", "currency", "rounds", "wagers", "expected_net", "recorded_net",
        pl.lit(1.0).alias("p_value"),
        pl.format("dealer {} never overpaid {} in {} rounds together; p = 1", "dealer_id", "player_id", "rounds").alias("sentence"),
        pl.concat_str(pl.lit('{"rounds":'), pl.col("rounds").cast(pl.String), pl.lit(',"wagers":'),
                      pl.col("wagers").cast(pl.String), pl.lit(',"overpaid_rounds":0}')).alias("evidence"),
    )
    rows = []
    for r in tested.filter(pl.col("overpaid_rounds") > 0).iter_rows(named=True):
        p = max(P_FLOOR, binom_sf(r["overpaid_rounds"], r["rounds"], r["baseline"]))  # below it: reported as it
        sentence = (f"dealer {r['dealer_id']} overpaid {r['player_id']} in {r['overpaid_rounds']} of {r['rounds']} rounds "
                    f"together ({r['overpaid_wagers']} wagers, {format_money(r['overpaid_amount'], r['currency'])} in all), "
                    f"{r['baseline'] * r['rounds']:.1f} expected from the "
                    f"dealer's rate with others ({1000 * r['dealer_rate']:.1f} per 1,000) and the player's with other dealers "
                    f"({1000 * r['player_rate']:.1f} per 1,000); p = {fmt_p(p)}")
        evidence = {k: r[k] for k in ("rounds", "wagers", "overpaid_rounds", "overpaid_wagers", "overpaid_amount", "underpaid_wagers",
                                      "underpaid_amount", "wagered", "tables")}
        evidence |= {"dealer_rate": round(r["dealer_rate"], 6), "player_rate": round(r["player_rate"], 6),
                     "floor_rate": round(floor, 6)}
        rows.append({"kind": "collusion_pattern", "test": "overpaid_pair",
                     "entity": f"dealer {r['dealer_id']} x {r['player_id']}", "window_days": window_days,
                     "first_day": r["first_day"], "last_day": r["last_day"],
                     "table_id": r["tables"][0] if len(r["tables"]) == 1 else None, "player_id": r["player_id"],
                     "dealer_id": r["dealer_id"], "game": r["game"], "ruleset": r["ruleset"], "currency": r["currency"],
                     "rounds": r["rounds"], "wagers": r["wagers"], "expected_net": r["expected_net"],
                     "recorded_net": r["recorded_net"], "p_value": p, "sentence": sentence,
                     "evidence": json.dumps(evidence, default=str)})
    return pl.concat([tests_frame(rows), tests_frame(clean)]).sort("dealer_id", "player_id", "currency")
