"""What an investigation computes from the subject's rows: plain functions over frames (no database, no plotly).

Money stays in integer smallest units; the theoretical expectation and its band are statistics (floats), not
amounts anyone is paid.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from pipelines.stats.distributions import MoneySums, jump_atoms, without_jumps
from pipelines.stats.hold import skew_of, sum_quantile

Z95 = 1.959963984540054  # two-sided 95 %


def results_over_time(wagers: pl.DataFrame, moments: pl.DataFrame) -> pl.DataFrame:
    """Per currency, wager by wager in time order: cumulative net as recorded, as the rules settle it, and the
    theoretical expectation with its standard deviation and 95 % band.

    ``wagers``: :func:`pipelines.investigate.subject_wagers`; ``moments``: :func:`pipelines.investigate.bet_moments`
    (mean and variance of a bet's net per unit staked), with each bet's outcomes where its figure has them
    (:func:`pipelines.investigation.theory.exact_where_known`). A wager of a round the table voided or made a Free
    Hand is expected to net 0 with no spread; a wager whose bet has no estimate adds nothing to the theory (counted in
    ``without_theory``). ``sd`` is ``sqrt(sum amount^2 var)`` (the wagers independent). The band is the detectors'
    (``pipelines.stats.hold.sum_quantile``): the quantiles of a sum with its skew, from the moments of its body where a
    bet has rare jumps (the Hold'em Bonus's 1000:1 line), never below the least the sum can be (``_band_parts``). A
    symmetric ``theory +- 1.96 sd`` put a Bonus-heavy subject's band about 13 % too wide and centred wrong.
    """
    cols = ["currency", "n", "at", "gaming_day", "table_id", "round_no", "cum_wagered", "cum_recorded", "cum_rules",
            "cum_theory", "sd", "band_lo", "band_hi", "without_theory"]
    if wagers.height == 0:
        return pl.DataFrame(schema={c: pl.String if c in ("currency", "table_id") else pl.Float64 for c in cols})
    # each wager carries its bet's row number, not its outcomes (a list per wager cost more than the band itself)
    moments = moments.with_row_index("_bet")
    w = wagers.join(moments.select("ruleset", "bet", "currency", "mean_per_unit", "var_per_unit", "_bet"),
                    on=["ruleset", "bet", "currency"], how="left")
    settled = pl.col("status") == "settled"
    w = w.with_columns(
        pl.when(settled).then(pl.col("mean_per_unit") * pl.col("amount")).otherwise(0.0).alias("_mu"),
        pl.when(settled).then(pl.col("var_per_unit") * pl.col("amount").cast(pl.Float64) ** 2).otherwise(0.0).alias("_var"),
        (settled & pl.col("mean_per_unit").is_null()).cast(pl.Int64).alias("_no_theory"),
    )
    w = w.with_row_index("_i").sort(["currency", "bets_closed_at", "_i"], nulls_last=True)
    by = "currency"
    w = w.with_columns(pl.col("_var").fill_null(0.0).sum().over(by).sqrt().alias("_sd_all"))
    w = w.with_columns(*(pl.Series(name, values) for name, values in _band_parts(w, moments).items()))
    out = w.with_columns(
        (pl.int_range(pl.len()).over(by) + 1).alias("n"),
        pl.col("bets_closed_at").alias("at"),
        pl.col("amount").cum_sum().over(by).alias("cum_wagered"),
        pl.col("recorded_net").cum_sum().over(by).alias("cum_recorded"),
        pl.col("expected_net").fill_null(0).cum_sum().over(by).alias("cum_rules"),
        pl.col("_mu").fill_null(0.0).cum_sum().over(by).alias("cum_theory"),
        pl.col("_var").fill_null(0.0).cum_sum().over(by).sqrt().alias("sd"),
        *(pl.col(c).cum_sum().over(by) for c in ("_body_mean", "_body_var", "_body_k3", "_least")),
        pl.col("_no_theory").cum_sum().over(by).alias("without_theory"),
    )
    mean, var = out["_body_mean"].to_numpy(), out["_body_var"].to_numpy()
    sd = np.sqrt(np.maximum(var, 0.0))
    skew = skew_of(sd, out["_body_k3"].to_numpy())
    least = out["_least"].to_numpy()
    return out.with_columns(pl.Series("band_lo", sum_quantile(mean, sd, skew, -Z95, least)),
                            pl.Series("band_hi", sum_quantile(mean, sd, skew, Z95, least))).select(cols)


def _band_parts(w: pl.DataFrame, moments: pl.DataFrame) -> dict[str, np.ndarray]:
    """Each wager's share of the band's moments (mean, variance and third cumulant of its net) and of the least the
    sum can be, in ``w``'s order. A bet (``_bet``, its row of ``moments``) with outcomes (``unit_values``,
    ``unit_probs``) gives its own through the hold detector's own mechanism, each distinct stake an entity of a
    ``distributions.MoneySums``: its jumps (``jump_atoms``, against ``_sd_all``, the standard deviation of the subject's
    whole sum in that currency) left out and the others' chances scaled up (``without_jumps``), its least value from
    ``bounds``. A bet without outcomes gives its mean and variance, no skew, and no least; an unsettled wager nothing."""
    n = w.height
    mean, var = w["_mu"].fill_null(0.0).to_numpy().copy(), w["_var"].fill_null(0.0).to_numpy().copy()
    k3, least = np.zeros(n), np.full(n, -np.inf)
    settled = (w["status"] == "settled").fill_null(False).to_numpy()
    least[~settled] = 0.0
    if "unit_values" in moments.columns:
        amount = w["amount"].cast(pl.Float64).fill_null(0.0).to_numpy()
        sd_all = w["_sd_all"].to_numpy()
        bet = w["_bet"].fill_null(-1).to_numpy()
        for index, x, p in moments.select("_bet", "unit_values", "unit_probs").drop_nulls().iter_rows():
            rows = np.flatnonzero(settled & (bet == index))
            if rows.size == 0:
                continue
            # a wager's share depends on its stake only (a bet's rows are of one currency, so of one ``_sd_all``):
            # worked out once per distinct stake
            stakes, which = np.unique(amount[rows], return_inverse=True)
            which, k = which.reshape(-1), len(stakes)
            wagers = MoneySums(np.arange(k), np.broadcast_to(np.asarray(x, dtype=float), (k, len(x))),
                               np.broadcast_to(np.asarray(p, dtype=float), (k, len(x))), stakes, np.ones(k), k)
            jumps = jump_atoms(wagers, np.full(k, sd_all[rows[0]]))
            body = without_jumps(wagers, jumps)[0] if jumps.any() else wagers
            mean[rows], var[rows], k3[rows] = (v[which] for v in body.moments())
            least[rows] = wagers.bounds()[0][which]
    return {"_body_mean": mean, "_body_var": var, "_body_k3": k3, "_least": least}


def results_summary(over_time: pl.DataFrame) -> pl.DataFrame:
    """The last row of each currency's curve, with how many standard deviations the recorded net is from theory."""
    if over_time.height == 0:
        return pl.DataFrame(schema={"currency": pl.String})
    last = over_time.group_by("currency", maintain_order=True).last()
    return last.with_columns(
        pl.when(pl.col("sd") > 0).then((pl.col("cum_recorded") - pl.col("cum_theory")) / pl.col("sd")).alias("z_recorded"),
        (pl.col("cum_recorded") - pl.col("cum_rules")).alias("recorded_minus_rules"),
    ).select("currency", pl.col("n").alias("wagers"), "cum_wagered", "cum_recorded", "cum_rules", "cum_theory", "sd",
             "z_recorded", "recorded_minus_rules", "without_theory")


#: what ``by_table`` gives per table and currency
BY_TABLE_SCHEMA = {"table_id": pl.String, "currency": pl.String, "rounds": pl.Int64, "wagers": pl.Int64,
                   "wagered": pl.Int128, "recorded_net": pl.Int128, "expected_net": pl.Int128, "theory": pl.Float64,
                   "sd": pl.Float64, "above_theory": pl.Float64, "z_recorded": pl.Float64}


def by_table(wagers: pl.DataFrame, moments: pl.DataFrame) -> pl.DataFrame:
    """Per table and currency: the subject's rounds, wagers and money there, the theory of its settled wagers (each
    one's amount times its bet's mean net per unit, as ``results_over_time``) with its standard deviation, and how far
    the recorded net lies above it, in money and in standard deviations. Sorted within a currency by the net above
    theory, the largest first.

    Why: a dealer flagged for his hold over 30 days deals at many tables. Whether the shortfall is spread over them or
    sits at one table (whose shoe, or whose big bettor, is the matter, not the dealer) is the first thing an
    investigator asks, and the dealer's own page could not say it."""
    return _above_theory_by(wagers, moments, "table_id").select(list(BY_TABLE_SCHEMA))


#: the columns :func:`dealers_with_theory` adds to a page's dealers
DEALER_THEORY_SCHEMA = {"theory": pl.Float64, "sd": pl.Float64, "above_theory": pl.Float64, "z_recorded": pl.Float64}


def dealers_with_theory(dealers: pl.DataFrame, wagers: pl.DataFrame, moments: pl.DataFrame) -> pl.DataFrame:
    """The page's dealers (``pipelines.investigate.dealers_of``, in its order) with the theory of the wagers each dealt,
    its standard deviation and the recorded net above it, as :func:`by_table` has them per table.

    Why: the question a table flagged for its hold raises first is the mirror of a dealer's: is it one dealer (whose
    dealing is the matter) or every dealer alike (the shoe, or a player)?"""
    named = wagers.with_columns(pl.col("dealer_id").fill_null("(none recorded)"))  # as dealers_of names them
    theory = _above_theory_by(named, moments, "dealer_id").select("dealer_id", "currency", *DEALER_THEORY_SCHEMA)
    return dealers.join(theory, on=["dealer_id", "currency"], how="left", maintain_order="left", nulls_equal=True)


def _above_theory_by(wagers: pl.DataFrame, moments: pl.DataFrame, key: str) -> pl.DataFrame:
    """Per ``key`` and currency: rounds, wagers, money, theory, its s.d., the net above theory and in s.d. (sorted
    within a currency by the net above theory, the largest first)."""
    schema = {key: pl.String, **{c: t for c, t in BY_TABLE_SCHEMA.items() if c != "table_id"}}
    if wagers.height == 0:
        return pl.DataFrame(schema=schema)
    keys = [key, "currency"]
    money = wagers.group_by(keys).agg(
        pl.struct("gaming_day", "round_no").n_unique().cast(pl.Int64).alias("rounds"),
        pl.len().cast(pl.Int64).alias("wagers"),
        pl.col("amount").cast(pl.Int128).sum().alias("wagered"),
        pl.col("recorded_net").cast(pl.Int128).sum().alias("recorded_net"),
        pl.col("expected_net").cast(pl.Int128).sum().alias("expected_net"),
    )
    # the theory from whole sums per bet (exact in any order), added up per group with math.fsum (correctly rounded in
    # any order): the page's files are the same bytes on every run, whatever order a group-by met the wagers in
    stake = pl.col("amount").cast(pl.Int128)
    per_bet = wagers.filter(pl.col("status") == "settled").group_by(*keys, "ruleset", "bet").agg(
        stake.sum().alias("a"), (stake * stake).sum().alias("a2")).join(
        moments.select("ruleset", "bet", "currency", "mean_per_unit", "var_per_unit"), on=["ruleset", "bet", "currency"],
        how="left")
    mean_parts: dict[tuple, list[float]] = {}
    var_parts: dict[tuple, list[float]] = {}
    for group, cur, a, a2, mean, var in per_bet.select(*keys, "a", "a2", "mean_per_unit", "var_per_unit").iter_rows():
        mean_parts.setdefault((group, cur), []).append(0.0 if mean is None else mean * float(a))
        var_parts.setdefault((group, cur), []).append(0.0 if var is None else var * float(a2))
    pairs = money.select(keys).rows()
    theory = [math.fsum(mean_parts.get(k, ())) for k in pairs]
    sd = [math.sqrt(math.fsum(var_parts.get(k, ()))) for k in pairs]
    out = money.with_columns(pl.Series("theory", theory, dtype=pl.Float64), pl.Series("sd", sd, dtype=pl.Float64))
    out = out.with_columns((pl.col("recorded_net").cast(pl.Float64) - pl.col("theory")).alias("above_theory"))
    out = out.with_columns(pl.when(pl.col("sd") > 0).then(pl.col("above_theory") / pl.col("sd")).alias("z_recorded"))
    return out.sort(["currency", "above_theory", key], descending=[False, True, False], nulls_last=True).select(
        list(schema))


def bet_vs_count(wagers: pl.DataFrame, counts: pl.DataFrame, bets: tuple[str, ...] = ("main",)) -> pl.DataFrame:
    """The subject's blackjack wagers (``bets``) with the true count before their round (the detectors' count)."""
    w = wagers.filter((pl.col("game") == "blackjack") & pl.col("bet").is_in(list(bets)))
    if w.height == 0 or counts.height == 0:
        return pl.DataFrame(schema={"gaming_day": pl.Date, "table_id": pl.String, "round_no": pl.Int64, "wager_id": pl.String,
                                    "player_id": pl.String, "currency": pl.String, "amount": pl.Int64, "true_count": pl.Float64,
                                    "hilo_rc": pl.Int64, "seen": pl.Int64})
    joined = w.join(counts.select("table_id", "shoe_id", "round_no", "true_count", "hilo_rc", "seen"),
                    on=["table_id", "shoe_id", "round_no"], how="inner")
    return joined.select("gaming_day", "table_id", "round_no", "wager_id", "player_id", "currency", "amount",
                         "true_count", "hilo_rc", "seen").sort("gaming_day", "table_id", "round_no", "wager_id")


def bet_ramp(rows: pl.DataFrame) -> dict:
    """How bet size follows the count: Pearson correlation of amount with the true count, the mean bet per
    true-count bucket (floored, -3 to +5), and the ramp (mean bet at +2 or more over the mean bet at 0 or less).

    Of one currency's wagers (``currency``; bets in two currencies are not one scale): the subject's only one, else the
    one with the most wagers, the others' counts in ``other_currencies`` (their rows stay in ``bet_vs_count``)."""
    currency, others = None, {}
    if rows.height and "currency" in rows.columns:
        per = rows.group_by("currency").len().sort(["len", "currency"], descending=[True, False], nulls_last=True)
        currency = per["currency"][0]
        others = dict(zip(per["currency"][1:].to_list(), per["len"][1:].to_list()))
        rows = rows.filter(pl.col("currency") == currency) if currency is not None else rows.filter(pl.col("currency").is_null())
    if rows.height < 2:
        return {"wagers": rows.height, "correlation": None, "ramp": None, "by_count": [], "currency": currency,
                "other_currencies": others}
    r = rows.select(pl.corr("amount", "true_count")).item()
    bucket = rows.with_columns(pl.col("true_count").floor().clip(-3, 5).cast(pl.Int64).alias("tc"))
    by = bucket.group_by("tc").agg(pl.len().alias("wagers"), pl.col("amount").mean().alias("mean_bet")).sort("tc")
    high = bucket.filter(pl.col("tc") >= 2)["amount"].mean()
    low = bucket.filter(pl.col("tc") <= 0)["amount"].mean()
    return {
        "wagers": rows.height,
        "correlation": None if r is None or (isinstance(r, float) and math.isnan(r)) else float(r),
        "ramp": float(high / low) if high is not None and low else None,
        "by_count": by.to_dicts(),
        "currency": currency,
        "other_currencies": others,
    }
