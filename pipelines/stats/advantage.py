"""advantage_play: bets that follow the count.

- **Blackjack**: each player's main-bet amounts against the Hi-Lo true count before the round
  (``counts.counts_before_rounds``), a rank correlation within each of the player's tables and
  gaming days (``stratified_rank_z``: a player's bet level differs between tables with different
  minimums, and pooling them would call him a counter when the dearer table's shoes ran rich), one-
  sided (bets rise with the count), z from the exact permutation variance, normal tail
  (n >= ``counter_min_hands``). The evidence carries the KO correlation as the
  second system, the bet ramp (mean bet in units of the player's smallest bet per true-count band)
  and the mid-shoe entries with the true count at entry (wonging).
- **Baccarat side bets**: the Pairs by the exact P(pair) of the remaining shoe before each round
  (``counts.pair_probability_before_rounds``), the Tiger bets by the effect-of-removal estimate of
  their EV in the shoe left (``tiger_count``: the mean of the three Tiger bets' EVs); a player's bets
  of the family are compared with the rounds he played: the mean measure where he bet against the
  mean over all his rounds, a one-sided z with the finite-population correction.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl

from pipelines.currency import format_amount, format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.counts import counts_before_rounds, pair_probability_before_rounds
from pipelines.stats.distributions import _norm_sf
from pipelines.stats.tests_frame import fmt_p, tests_frame

RAMP_BANDS = (("<= 0", None, 0.5), ("1", 0.5, 1.5), ("2", 1.5, 2.5), ("3", 2.5, 3.5), (">= 4", 3.5, None))


def stratified_rank_z(x: np.ndarray, y: np.ndarray, strata: np.ndarray) -> tuple[float, float]:
    """(rho, z) of the rank association of x and y within strata (a player's table and gaming day).

    Ranks are taken within each stratum, so a player who bets more at the table with the higher minimum is
    not a counter because that table's shoes ran hot. ``T = sum_s sum_i (rx - mean)(ry - mean)``; under
    the permutation null within strata its variance is ``sum_s Sxx_s Syy_s / (n_s - 1)`` exactly, and
    ``z = T / sd`` is close to normal for the hand counts tested. ``rho = T / sqrt(sum Sxx * sum Syy)``.
    """
    df = pl.DataFrame({"x": x, "y": y, "s": strata}).with_columns(
        pl.col("x").rank("average").over("s").alias("rx"), pl.col("y").rank("average").over("s").alias("ry"),
    ).with_columns((pl.col("rx") - pl.col("rx").mean().over("s")).alias("dx"),
                   (pl.col("ry") - pl.col("ry").mean().over("s")).alias("dy"))
    per = df.group_by("s").agg(pl.len().alias("n"), (pl.col("dx") * pl.col("dy")).sum().alias("t"),
                               (pl.col("dx") ** 2).sum().alias("sxx"), (pl.col("dy") ** 2).sum().alias("syy"))
    per = per.filter(pl.col("n") > 1).sort("s")
    t = float(per["t"].sum())
    var = float((per["sxx"] * per["syy"] / (per["n"] - 1)).sum())
    denom = math.sqrt(float(per["sxx"].sum()) * float(per["syy"].sum()))
    if var <= 0 or denom <= 0:
        return 0.0, 0.0
    return t / denom, t / math.sqrt(var)


HANDS_SCHEMA = {"player_id": pl.String, "currency": pl.String, "table_id": pl.String, "shoe_id": pl.String,
                "round_no": pl.Int64, "gaming_day": pl.Date, "amount": pl.Int64, "true_count": pl.Float64,
                "ko_rc": pl.Int64, "round_in_shoe": pl.Int64, "ruleset": pl.String, "expected_net": pl.Int64,
                "recorded_net": pl.Int64}


def blackjack_hands(wagers: pl.DataFrame, cards: pl.DataFrame, shoes=None) -> pl.DataFrame:
    """One row per blackjack player and round (``HANDS_SCHEMA``): his main bet (a player on two spots bets once per
    count) with the Hi-Lo true count and the KO running count before the round. What the counter test needs of a
    night, computed once: a window adds the nights' rows up without reading the card events again. ``shoes``: the
    cards' ``counts.shoe_rounds`` when the caller has them."""
    mains = wagers.filter((pl.col("game") == "blackjack") & (pl.col("bet") == "main") & pl.col("player_id").is_not_null()
                          & (pl.col("status") == "settled") & (pl.col("amount") > 0))
    if mains.height == 0:
        return pl.DataFrame(schema=HANDS_SCHEMA)
    hands = mains.join(counts_before_rounds(cards, shoes), on=["table_id", "round_no"], how="inner")
    hands = hands.group_by("player_id", "currency", "gaming_day", "table_id", "shoe_id", "round_no").agg(
        pl.col("amount").sum(), pl.col("true_count").first(), pl.col("ko_rc").first(), pl.col("round_in_shoe").first(),
        pl.col("ruleset").first(), pl.col("expected_net").sum(), pl.col("recorded_net").sum())
    return hands.select([pl.col(c).cast(t) for c, t in HANDS_SCHEMA.items()])


def counter_tests(wagers: pl.DataFrame, cards: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """Every blackjack player's main bets against the count, all players at once (``stratified_rank_z`` by frames)."""
    return counter_rows(blackjack_hands(wagers, cards), params, window_days)


def counter_rows(hands: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """The bet-versus-count test rows from a window's ``blackjack_hands``."""
    if hands.height == 0:
        return tests_frame([])
    who = ["player_id", "currency"]
    hands = hands.with_columns(pl.len().over(who).alias("n")).filter(pl.col("n") >= params.counter_min_hands)
    if hands.height == 0:
        return tests_frame([])
    stratum = [*who, "table_id", "gaming_day"]
    ranked = hands.with_columns(
        *[pl.col(c).cast(pl.Float64).rank("average").over(stratum).alias(f"r_{c}") for c in ("amount", "true_count", "ko_rc")])
    ranked = ranked.with_columns(
        *[(pl.col(f"r_{c}") - pl.col(f"r_{c}").mean().over(stratum)).alias(f"d_{c}") for c in ("amount", "true_count", "ko_rc")])
    per_stratum = ranked.group_by(stratum).agg(
        pl.len().alias("m"), (pl.col("d_amount") * pl.col("d_true_count")).sum().alias("t"),
        (pl.col("d_amount") * pl.col("d_ko_rc")).sum().alias("t_ko"), (pl.col("d_amount") ** 2).sum().alias("sxx"),
        (pl.col("d_true_count") ** 2).sum().alias("syy"), (pl.col("d_ko_rc") ** 2).sum().alias("syy_ko"),
    ).filter(pl.col("m") > 1)
    per_player = per_stratum.group_by(who).agg(
        pl.col("t").sum(), pl.col("t_ko").sum(), pl.col("sxx").sum(), pl.col("syy").sum(), pl.col("syy_ko").sum(),
        (pl.col("sxx") * pl.col("syy") / (pl.col("m") - 1)).sum().alias("var"),
        (pl.col("sxx") * pl.col("syy_ko") / (pl.col("m") - 1)).sum().alias("var_ko"))
    summary = hands.group_by(who).agg(
        pl.len().alias("n"), pl.col("amount").min().alias("lo"), pl.col("amount").max().alias("hi"),
        pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
        pl.col("ruleset").first(), pl.col("expected_net").sum(), pl.col("recorded_net").sum(),
        pl.col("table_id").unique().sort().alias("tables"),
    ).join(per_player, on=who, how="left").sort(who)
    band = (pl.when(pl.col("true_count") < 0.5).then(pl.lit("<= 0")).when(pl.col("true_count") < 1.5).then(pl.lit("1"))
            .when(pl.col("true_count") < 2.5).then(pl.lit("2")).when(pl.col("true_count") < 3.5).then(pl.lit("3"))
            .otherwise(pl.lit(">= 4")))
    ramp_rows = hands.with_columns(band.alias("band"), pl.col("amount").min().over(who).alias("unit")).group_by(
        *who, "band").agg(pl.len().alias("hands"), (pl.col("amount") / pl.col("unit")).mean().alias("units"))
    ramps: dict[tuple, dict] = {}
    for r in ramp_rows.iter_rows(named=True):
        ramps.setdefault((r["player_id"], r["currency"]), {})[r["band"]] = {"hands": r["hands"], "mean_units": round(r["units"], 2)}
    entries = hands.group_by(*who, "table_id", "shoe_id").agg(
        pl.col("round_in_shoe").min().alias("first"), pl.col("true_count").sort_by("round_no").first().alias("tc"))
    entry = entries.group_by(who).agg(pl.len().alias("entries"), (pl.col("first") > 5).sum().alias("mid"),
                                      ((pl.col("first") > 5) & (pl.col("tc") >= 2)).sum().alias("mid_tc2"))
    entry_of = {(r["player_id"], r["currency"]): r for r in entry.iter_rows(named=True)}
    rows = []
    for r in summary.iter_rows(named=True):
        player, currency, n = r["player_id"], r["currency"], r["n"]
        var, var_ko = r["var"] or 0.0, r["var_ko"] or 0.0
        denom, denom_ko = math.sqrt((r["sxx"] or 0) * (r["syy"] or 0)), math.sqrt((r["sxx"] or 0) * (r["syy_ko"] or 0))
        z = r["t"] / math.sqrt(var) if var > 0 else 0.0
        z_ko = r["t_ko"] / math.sqrt(var_ko) if var_ko > 0 else 0.0
        rho = r["t"] / denom if denom > 0 else 0.0
        rho_ko = r["t_ko"] / denom_ko if denom_ko > 0 else 0.0
        p = max(1e-12, _norm_sf(z))
        ramp = {label: ramps.get((player, currency), {}).get(label) for label, *_ in RAMP_BANDS}
        ramp = {k: v for k, v in ramp.items() if v}
        ent = entry_of.get((player, currency), {"entries": 0, "mid": 0, "mid_tc2": 0})
        top = ramp.get(">= 4") or ramp.get("3") or {}
        sentence = (f"{player} bet with the count over {n} blackjack hands: rank correlation {rho:.2f} with the Hi-Lo true "
                    f"count within each table and day (KO running count {rho_ko:.2f}), bets from {format_amount(r['lo'], currency)} to {format_money(r['hi'], currency)} "
                    f"({r['hi'] / r['lo']:.0f} units), {top.get('mean_units', 1):.1f} units on average at the highest "
                    f"counts; {ent['mid']} mid-shoe entries, {ent['mid_tc2']} at a true count of 2 or more; p = {fmt_p(p)}")
        evidence = {"rho_hilo": round(rho, 4), "z_hilo": round(z, 3), "rho_ko": round(rho_ko, 4), "z_ko": round(z_ko, 3),
                    "ramp": ramp, "entries": ent["entries"], "mid_shoe_entries": ent["mid"], "mid_shoe_entries_tc2": ent["mid_tc2"],
                    "tables": r["tables"]}
        tables = r["tables"]
        rows.append({"kind": "advantage_play", "test": "bet_vs_count", "entity": f"{player} x blackjack count",
                     "window_days": window_days, "first_day": r["first_day"], "last_day": r["last_day"],
                     "table_id": tables[0] if len(tables) == 1 else None, "player_id": player, "game": "blackjack",
                     "ruleset": r["ruleset"], "currency": currency, "bet": "main", "rounds": n, "wagers": n,
                     "expected_net": int(r["expected_net"]), "recorded_net": int(r["recorded_net"]),
                     "p_value": p, "sentence": sentence, "evidence": json.dumps(evidence, default=str)})
    return tests_frame(rows)


FAMILIES = (
    ("pairs", ("player_pair", "banker_pair"), "p_pair", "a pair", "{:.4f}"),
    ("tigers", ("tiger", "small_tiger", "big_tiger"), "tiger_ev", "a Tiger bet", "{:+.4f}"),
)


def _shoe_measures(wagers: pl.DataFrame, cards: pl.DataFrame, families: set[str], shoes=None) -> pl.DataFrame:
    """Per (table, round): the pair probability of the shoe left, and the mean estimated EV of the three Tiger bets."""
    from pipelines.stats.counts import shoe_rounds
    from pipelines.stats.tiger_count import TIGER_BETS, tiger_ev_before_rounds

    shoes = shoe_rounds(cards) if shoes is None else shoes
    out = pair_probability_before_rounds(cards, shoes).select("table_id", "round_no", "p_pair")
    if "tigers" in families:
        per_table = wagers.filter(pl.col("game") == "baccarat").group_by("table_id").agg(
            pl.col("ruleset").first(), pl.col("ruleset_version").first())
        rulesets = {t: (r, v) for t, r, v in per_table.iter_rows()}
        tiger = tiger_ev_before_rounds(cards, rulesets, shoes).select(
            "table_id", "round_no", (sum(pl.col(f"ev_{b}") for b in TIGER_BETS) / len(TIGER_BETS)).alias("tiger_ev"))
        out = out.join(tiger, on=["table_id", "round_no"], how="full", coalesce=True)
    else:
        out = out.with_columns(pl.lit(None, dtype=pl.Float64).alias("tiger_ev"))
    return out


def pair_count_tests(wagers: pl.DataFrame, cards: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """Baccarat side bets placed when the shoe left favours them: the Pairs (exact) and the Tigers (effect of removal)."""
    bac = wagers.filter((pl.col("game") == "baccarat") & pl.col("player_id").is_not_null() & (pl.col("status") == "settled"))
    if bac.height == 0 or cards.height == 0:
        return tests_frame([])
    # only families some player bets often enough (the Tiger effects of removal cost seconds to enumerate)
    counts = bac.group_by("player_id", "currency").agg(
        *[pl.col("bet").is_in(list(bets)).sum().alias(name) for name, bets, *_ in FAMILIES])
    families = {name for name, *_ in FAMILIES if counts.height and int(counts[name].max()) >= params.pair_count_min_bets}
    if not families:
        return tests_frame([])
    return pair_count_rows(side_bet_aggregates(bac, cards, families), params, window_days)


SIDE_SCHEMA = {"family": pl.String, "player_id": pl.String, "currency": pl.String, "n_all": pl.Int64, "n_bet": pl.Int64,
               "sum_all": pl.Float64, "m2_all": pl.Float64, "sum_bet": pl.Float64, "first_day": pl.Date, "last_day": pl.Date,
               "ruleset": pl.String, "expected_net": pl.Int64, "recorded_net": pl.Int64, "tables": pl.List(pl.String)}


def side_bet_aggregates(bac: pl.DataFrame, cards: pl.DataFrame, families: set[str], by: tuple[str, ...] = (),
                        shoes=None) -> pl.DataFrame:
    """Per family (pairs, tigers), player and currency (and ``by``, the gaming day): his rounds with a measure of the
    shoe left (``n_all``, their sum and sum of squared deviations ``m2_all``), the rounds he bet the family
    (``n_bet``, ``sum_bet``), days, nets of the family's bets, tables (``SIDE_SCHEMA``). Adds up over days
    (``combine_side_bets``: the deviations by the parallel formula). ``shoes``: the cards' ``counts.shoe_rounds``."""
    measures = _shoe_measures(bac, cards, families, shoes)
    wanted = [f for f in FAMILIES if f[0] in families]
    # every family's columns from one pass over the player's rounds
    present_all = bac.group_by("player_id", "currency", "gaming_day", "table_id", "round_no").agg(
        pl.col("ruleset").first(),
        *[c for name, bets, *_ in wanted for c in (
            pl.col("bet").is_in(list(bets)).any().alias(f"bet_{name}"),
            pl.col("expected_net").filter(pl.col("bet").is_in(list(bets))).sum().alias(f"expected_{name}"),
            pl.col("recorded_net").filter(pl.col("bet").is_in(list(bets))).sum().alias(f"recorded_{name}"))],
    ).join(measures.select("table_id", "round_no", *[measure for _, _, measure, *_ in wanted]), on=["table_id", "round_no"],
           how="inner") if wanted else pl.DataFrame()
    out = []
    for name, bets, measure, *_ in wanted:
        present = present_all.drop_nulls(measure).rename(
            {f"bet_{name}": "bet_fam", f"expected_{name}": "expected_net", f"recorded_{name}": "recorded_net"})
        m = pl.col(measure)
        out.append(present.group_by(*by, "player_id", "currency").agg(
            pl.len().alias("n_all"), pl.col("bet_fam").sum().alias("n_bet"), m.sum().alias("sum_all"),
            ((m - m.mean()) ** 2).sum().alias("m2_all"), m.filter(pl.col("bet_fam")).sum().alias("sum_bet"),
            pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
            # his first round's (the rounds come from a group_by in no set order: "first" alone was any round's)
            pl.col("ruleset").sort_by("gaming_day", "table_id", "round_no").first(),
            pl.col("expected_net").sum(), pl.col("recorded_net").sum(), pl.col("table_id").unique().sort().alias("tables"),
        ).with_columns(pl.lit(name).alias("family")))
    cols = [*by, *SIDE_SCHEMA]
    return pl.concat([o.select([pl.col(c).cast(SIDE_SCHEMA[c]) if c in SIDE_SCHEMA else pl.col(c) for c in cols]) for o in out]) \
        if out else pl.DataFrame(schema={**{b: pl.Date for b in by}, **SIDE_SCHEMA})


def pair_count_rows(agg: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """The test rows from a window's ``side_bet_aggregates`` (one row per family, player and currency)."""
    rows = []
    for name, bets, measure, what, fmt in FAMILIES:
        stats = agg.filter(pl.col("family") == name).with_columns(
            (pl.col("sum_all") / pl.col("n_all")).alias("mean_all"),
            pl.when(pl.col("n_all") > 1).then((pl.col("m2_all") / (pl.col("n_all") - 1)).clip(0, None).sqrt()).alias("sd_all"),
            pl.when(pl.col("n_bet") > 0).then(pl.col("sum_bet") / pl.col("n_bet")).alias("mean_bet"),
        ).filter((pl.col("n_bet") >= params.pair_count_min_bets) & (pl.col("n_bet") < pl.col("n_all"))).sort("player_id", "currency")
        for r in stats.iter_rows(named=True):
            fpc = math.sqrt(max(1e-12, 1 - r["n_bet"] / r["n_all"]))
            se = (r["sd_all"] or 0.0) / math.sqrt(r["n_bet"]) * fpc
            z = (r["mean_bet"] - r["mean_all"]) / se if se > 0 else 0.0
            p = max(1e-12, _norm_sf(z))
            label = "pair probability" if name == "pairs" else "mean Tiger-bet EV"
            sentence = (f"{r['player_id']} bet {what} on {r['n_bet']} of {r['n_all']} baccarat rounds; the shoe left gave a "
                        f"{label} of {fmt.format(r['mean_bet'])} where he bet against {fmt.format(r['mean_all'])} over his "
                        f"rounds (z = {z:.1f}); p = {fmt_p(p)}")
            rows.append({"kind": "advantage_play", "test": f"{name[:-1]}_count", "entity": f"{r['player_id']} x baccarat {name} count",
                         "window_days": window_days, "first_day": r["first_day"], "last_day": r["last_day"],
                         "table_id": r["tables"][0] if len(r["tables"]) == 1 else None, "player_id": r["player_id"],
                         "game": "baccarat", "ruleset": r["ruleset"], "currency": r["currency"], "bet": name,
                         "rounds": r["n_all"], "wagers": r["n_bet"], "expected_net": r["expected_net"],
                         "recorded_net": r["recorded_net"], "p_value": p, "sentence": sentence,
                         "evidence": json.dumps({"z": round(z, 3), f"mean_{measure}_bet": r["mean_bet"],
                                                 f"mean_{measure}_all": r["mean_all"], "tables": r["tables"],
                                                 "method": "exact pair probability" if name == "pairs"
                                                 else "effect-of-removal estimate of the Tiger bets' EV"}, default=str)})
    return tests_frame(rows)
