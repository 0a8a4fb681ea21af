"""hold_anomaly: the house's win far from its theoretical win, per table, dealer and shoe, per bet type.

For each entity (a table, a dealer or a shoe, on one bet type or on all of them) the players' actual
net ``S = sum recorded_net`` is compared with the distribution it has when every round is a fair draw
of the shoe: a round's outcome (result class x Player Pair x Banker Pair, 20 atoms, exact from the
enumeration of the shoe: ``distributions.joint_outcome_probabilities``) settles all of its wagers at
once, so the Banker and Player bets of one round cancel as they do at the table. The theoretical net
is ``sum a_i * E[X_i]`` (the handle times each bet's exact house edge); the tail comes from the
Lugannani-Rice saddle point on the exact cumulant generating function of the rounds
(``batch_two_sided``), which carries the skew of the 50:1 and 22:1 lines the normal curve misses. Two-sided: a hold far above
theory (short pays, a shoe stacked against the players) is as much a finding as one far below.

The funnel plot's data (``funnel``) gives, per entity, the handle, the actual and theoretical hold and
the 95 % and 99.7 % bands of the hold (quantiles of S from its mean, spread and skew: ``sum_quantile``); report
writers plot hold against handle with those bands.

Dealer error rates: rounds with a deterministic dealer-error finding per 1,000 rounds dealt, against
the floor's rate without that dealer, one-sided binomial (``dealer_error_rates``).
"""

from __future__ import annotations

import json
from typing import Callable

import numpy as np
import polars as pl

from pipelines.currency import format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import P_FLOOR, SADDLE_BEYOND, MoneySums, batch_two_sided, binom_sf
from pipelines.stats.hold_sums import hold_sums
from pipelines.stats.luck import settled_baccarat
from pipelines.stats.tests_frame import BET_LABEL, JsonLists, fmt_p, fmt_ps, json_value, only_table, rows_frame, tests_frame

GROUP_LABEL = {"table_id": "table", "dealer_id": "dealer", "shoe_id": "shoe"}
Z95, Z997 = 1.959963984540054, 2.967737925342750  # two-sided 95 % and 99.7 % normal quantiles


def hold_tests(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
               settled: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(test rows, funnel rows) of every game: baccarat here, Hold'em Bonus and blackjack in ``hold_games``."""
    from pipelines.stats.hold_games import games_hold_tests

    tests, funnel = baccarat_hold_tests(wagers, params, window_days, settled)
    more, more_funnel = games_hold_tests(wagers, params, window_days)
    funnels = [f for f in (funnel, more_funnel) if f.height]
    return pl.concat([tests, more]), (pl.concat(funnels) if funnels else pl.DataFrame())


def baccarat_hold_tests(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
                        settled: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(test rows, funnel rows) of every baccarat table, dealer and shoe, by bet type and all bets together.

    ``settled``: ``luck.settled_baccarat(wagers)`` when the caller has it already."""
    w = settled_baccarat(wagers) if settled is None else settled
    if w.height == 0:
        return tests_frame([]), pl.DataFrame()
    sums = hold_sums(w, params.hold_groupings, params.hold_min_wagers)
    tests, funnels = [tests_frame([])], []
    for g in sums.groupings:
        if g.summary.height == 0:
            continue
        t, f = hold_rows(g.summary, sums.moments(g), lambda far, g=g: sums.money_sums(g, far), window_days)
        tests.append(t)
        if f.height:
            funnels.append(f)
    return pl.concat(tests), (pl.concat(funnels) if funnels else pl.DataFrame())


def hold_rows(summary: pl.DataFrame, moments: tuple[np.ndarray, np.ndarray, np.ndarray],
              sums_for: "Callable[[np.ndarray], MoneySums]", window_days: int,
              known: np.ndarray | None = None, keep: np.ndarray | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(test rows, funnel rows) of one grouping's entities from their aggregates and the moments of their sums.

    ``summary``: an entity's counts and sums (``hold_sums``) with ``grouping`` and ``ent`` (0..n-1, the order of ``moments``);
    ``sums_for(far)``: a ``MoneySums`` holding the rows of at least the entities ``far`` (a boolean mask: those
    beyond ``SADDLE_BEYOND`` standard deviations, the only ones whose tail needs the saddle point), so that a
    window can read only those entities' rows. ``known``: p-values already worked out (NaN where not; a window's
    ``WindowMemo``): those entities' rows are not read and their saddle point is not solved again. ``keep``: the
    entities to write rows for (the others' rows come from elsewhere, ``reuse``: not worked out at all)."""
    s = summary["recorded"].cast(pl.Float64).to_numpy()
    mean, var, k3 = moments
    have = ~np.isnan(known) if known is not None else np.zeros(len(s), dtype=bool)
    if keep is not None:
        have = have | ~keep
    ask = np.where(have, mean, s)  # a known entity is asked at its mean: the normal figure, no rows (replaced below)
    far = np.abs(ask - mean) / np.sqrt(np.maximum(var, 1e-300)) > SADDLE_BEYOND
    p = batch_two_sided(sums_for(far), ask, saddle_beyond=SADDLE_BEYOND, moments=(mean, var, k3))
    if known is not None:
        p = np.where(~np.isnan(known), known, p)
    if keep is not None and not keep.all():
        summary, s, mean, var, k3, p = summary.filter(pl.Series(keep)), s[keep], mean[keep], var[keep], k3[keep], p[keep]
    sd = np.sqrt(var)
    g = skew_of(sd, k3)
    handle = summary["handle"].cast(pl.Float64).to_numpy()
    least = -handle  # every baccarat bet loses at most its stake (a Tie's Banker and Player bets push)

    # once, not per entity
    band_low, band_high = sum_quantile(mean, sd, g, Z95, least), sum_quantile(mean, sd, g, -Z95, least)

    funnel = funnel_rows(summary, s, mean, sd, g, p, window_days, least=least)
    return hold_test_rows(summary, s, mean, sd, g, p, handle, band_low, band_high, window_days), funnel


def hold_test_rows(summary: pl.DataFrame, s: np.ndarray, mean: np.ndarray, sd: np.ndarray, g: np.ndarray, p: np.ndarray,
                   handle: np.ndarray, band_low: np.ndarray, band_high: np.ndarray, window_days: int,
                   bets: list[str] | None = None, game: str | list[str] = "baccarat", suffix: list[str] | None = None,
                   evidence_more: list[str] | None = None) -> pl.DataFrame:
    """The hold test rows of one grouping's entities, column by column (one f-string per row for the sentence and
    one for the evidence's JSON, the bytes ``json.dumps`` wrote); ``bets``, ``suffix``, ``evidence_more``: the
    games' labels, one-sided note and evidence keys (``hold_games``); baccarat's by default."""
    n = summary.height
    cols = summary.select("grouping", "key", "level", "currency", "handle", "wagers", "rounds", "tables", "first_round",
                          "last_round", "recorded").to_dict(as_series=False)
    kind_label, bets, tests, entities = hold_identity(cols["grouping"], cols["key"], cols["level"], bets)
    hold, theo_hold = -s / handle, -mean / handle
    low, high = -band_low / handle, -band_high / handle
    money = [format_money(h, c) for h, c in zip(cols["handle"], cols["currency"])]
    ps = fmt_ps(p.tolist())
    suffix = suffix or [""] * n
    sentence = [f"{k} {key} held {h:+.1%} of {m} wagered on {b} ({w:,} wagers, {r:,} rounds), theory {t:+.1%}; 95 % band "
                f"{lo:+.1%} to {hi:+.1%}; p = {fp}{sfx}"
                for k, key, h, m, b, w, r, t, lo, hi, fp, sfx in zip(
                    kind_label, cols["key"], hold, money, bets, cols["wagers"], cols["rounds"], theo_hold, low, high, ps,
                    suffix)]
    tables = JsonLists()
    more = evidence_more or [""] * n
    evidence = ['{"handle": ' + json_value(hv) + ', "hold": ' + json_value(hr) + ', "theoretical_hold": ' + json_value(tr)
                + ', "sd": ' + json_value(sdv) + ', "skew": ' + json_value(gv) + ', "tables": ' + tables(tb)
                + ', "rounds_range": [' + json_value(fr) + ", " + json_value(lr) + '], "tail": "Lugannani-Rice saddle point"'
                + mo + "}"
                for hv, hr, tr, sdv, gv, tb, fr, lr, mo in zip(
                    cols["handle"], np.round(hold, 5), np.round(theo_hold, 5), [round(v, 1) for v in sd.tolist()],
                    [round(v, 3) for v in g.tolist()], cols["tables"], cols["first_round"], cols["last_round"], more)]
    return rows_frame(n, {
        "kind": "hold_anomaly", "test": tests, "entity": entities, "window_days": window_days,
        "first_day": summary["first_day"], "last_day": summary["last_day"],
        "table_id": [key if gr == "table_id" else t for gr, key, t in zip(cols["grouping"], cols["key"], only_table(cols["tables"]))],
        "dealer_id": [key if gr == "dealer_id" else None for gr, key in zip(cols["grouping"], cols["key"])],
        "game": game, "ruleset": summary["ruleset"], "currency": cols["currency"], "bet": cols["level"],
        "rounds": cols["rounds"], "wagers": cols["wagers"], "expected_net": [int(round(v)) for v in mean.tolist()],
        "recorded_net": [_int64(v) for v in cols["recorded"]], "p_value": p.tolist(), "sentence": sentence,
        "evidence": evidence})


def hold_identity(groupings: list[str], keys: list[str], levels: list[str], bets: list[str] | None = None
                  ) -> tuple[list[str], list[str], list[str], list[str]]:
    """(kind labels, bet labels, ``test`` and ``entity`` of each hold entity's test row): the identity a window's row
    is found by the next night (``reuse``); ``bets``: the games' labels, baccarat's by default."""
    kind_label = [GROUP_LABEL[x] for x in groupings]
    if bets is None:
        bets = ["all bets" if lv == "all" else f"{BET_LABEL.get(lv, lv)} bets" for lv in levels]
    return (kind_label, bets, [f"hold_{k}" for k in kind_label],
            [f"{k} {key} x {b}" for k, key, b in zip(kind_label, keys, bets)])


def skew_of(sd: np.ndarray, k3: np.ndarray) -> np.ndarray:
    """Each sum's skew ``k3 / sd^3`` from its standard deviation and third cumulant; 0 for a sum with no spread."""
    with np.errstate(divide="ignore", invalid="ignore"):  # a cube of 1e-300 is 0: the spreadless sums' 0/0 not taken
        return np.where(sd > 0, k3 / np.maximum(sd, 1e-300) ** 3, 0.0)


def sum_quantile(mean: np.ndarray, sd: np.ndarray, g: np.ndarray, z: float, least: np.ndarray | None = None) -> np.ndarray:
    """The quantile of an entity's sum at standard normal ``z`` with the skew ``g``: the Wilson-Hilferty frequency
    factor of a Pearson type III (shifted gamma) law, ``(2/g) ((1 + g z/6 - g^2/36)^3 - 1)`` standard deviations from
    the mean. To first order in ``g`` it is the Cornish-Fisher ``z + (z^2 - 1) g/6`` used before; unlike it, it rises
    with ``z`` at any skew (Cornish-Fisher turns back beyond ``|g| = 3/|z|``: a Big Tiger table's 99.7 % band fell
    inside its 95 % band), and where the gamma's support ends (the base below 0) the quantile is that end. ``least``:
    the smallest value the sum can take (every wager lost), which no quantile passes (a shifted gamma's support is not
    the sum's: a few Big Tiger wagers' band of hold reached 120 %, where a bet loses at most its stake)."""
    g = np.asarray(g, dtype=float)
    small = np.abs(g) < 1e-6
    gs = np.where(small, 1.0, g)
    base = np.maximum(1.0 + gs * z / 6.0 - gs * gs / 36.0, 0.0)
    factor = np.where(small, z + (z * z - 1) * g / 6.0, 2.0 / gs * (base ** 3 - 1.0))
    q = mean + sd * factor
    return q if least is None else np.maximum(q, least)


def funnel_rows(summary: pl.DataFrame, s: np.ndarray, mean: np.ndarray, sd: np.ndarray, g: np.ndarray,
                p: np.ndarray, window_days: int, band: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                least: np.ndarray | None = None) -> pl.DataFrame:
    """The funnel plot's rows (``out_stat_funnel``) of one grouping's entities: hold against handle, the theory
    and the 95 % and 99.7 % bands, from the entities' recorded sums ``s`` and their sums' moments; ``band``: the
    (mean, sd, skew) the bands are taken from where they are not the sum's (``hold_games``: a sum with jumps);
    ``least``: each sum's smallest possible value, which no band passes (``sum_quantile``)."""
    handle = summary["handle"].cast(pl.Float64).to_numpy()
    theory, spread = mean, sd
    if band is not None:
        mean, sd, g = band
    return summary.select(
        pl.col("grouping").replace_strict(GROUP_LABEL, default=pl.col("grouping")).alias("entity_type"),
        pl.col("key").alias("entity"), pl.col("level").alias("bet"), "currency", "first_day", "last_day",
        "rounds", "wagers", pl.col("handle").cast(pl.Int64, strict=False),  # null beyond 64 bits (the column is BIGINT)
    ).with_columns(
        pl.lit(window_days).alias("window_days"),
        summary.select((-pl.col("recorded").cast(pl.Int64, strict=False)).alias("house_win")).to_series(),
        pl.Series("hold", -s / handle), pl.Series("theoretical_hold", -theory / handle),
        pl.Series("hold_low_95", -sum_quantile(mean, sd, g, Z95, least) / handle),
        pl.Series("hold_high_95", -sum_quantile(mean, sd, g, -Z95, least) / handle),
        pl.Series("hold_low_997", -sum_quantile(mean, sd, g, Z997, least) / handle),
        pl.Series("hold_high_997", -sum_quantile(mean, sd, g, -Z997, least) / handle),
        pl.Series("sd_per_unit", spread / np.sqrt(handle)), pl.Series("p_value", p),
    )


def dealer_error_rates(wagers: pl.DataFrame, dealer_errors: pl.DataFrame, params: StatsParams,
                       window_days: int = 1) -> pl.DataFrame:
    """Per dealer: rounds with a dealer-error finding per 1,000 rounds dealt, against the floor's rate without him."""
    return dealer_error_rows(dealer_error_aggregates(wagers, dealer_errors), params, window_days)


def dealer_error_aggregates(wagers: pl.DataFrame, dealer_errors: pl.DataFrame, by: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per dealer (and ``by``, the gaming day): rounds dealt, rounds with a dealer-error finding, first and last day.
    A round is (gaming day, table, round number): the counts add up over days."""
    rounds = wagers.filter(pl.col("dealer_id").is_not_null()).select("dealer_id", "table_id", "round_no", "gaming_day").unique()
    per_dealer = rounds.group_by(*by, "dealer_id").agg(pl.len().alias("rounds"), pl.col("gaming_day").min().alias("first_day"),
                                                       pl.col("gaming_day").max().alias("last_day"))
    on = ["dealer_id", "table_id", "round_no", "gaming_day"]
    errs = dealer_errors.select(on).unique().join(rounds.select(on), on=on, how="semi")
    per_err = errs.group_by(*by, "dealer_id").agg(pl.len().alias("errors"))
    return per_dealer.join(per_err, on=[*by, "dealer_id"], how="left").with_columns(
        pl.col("errors").fill_null(0).cast(pl.Int64), pl.col("rounds").cast(pl.Int64))


def dealer_error_rows(d: pl.DataFrame, params: StatsParams, window_days: int = 1) -> pl.DataFrame:
    """The test rows from ``dealer_error_aggregates`` over a window (one row per dealer)."""
    d = d.sort("dealer_id")
    total_r, total_e = int(d["rounds"].sum() or 0), int(d["errors"].sum() or 0)
    d = d.filter(pl.col("rounds") >= params.dealer_error_min_rounds).filter(pl.lit(total_r) - pl.col("rounds") > 0)
    cols = d.select("dealer_id", "rounds", "errors").to_dict(as_series=False)
    floor = [(total_e - e + 1) / (total_r - r + 2) for r, e in zip(cols["rounds"], cols["errors"])]  # the floor without him
    # with one pseudo-error: never 0; below P_FLOOR a float's tail is no finer than that (reported as the floor)
    p = [max(P_FLOOR, binom_sf(e, r, f)) for e, r, f in zip(cols["errors"], cols["rounds"], floor)]
    sentence = [f"dealer {who} made {e} errors in {r:,} rounds ({1000 * e / r:.1f} per 1,000), the floor {1000 * f:.1f} per "
                f"1,000; p = {fp}" for who, e, r, f, fp in zip(cols["dealer_id"], cols["errors"], cols["rounds"], floor, fmt_ps(p))]
    evidence = [f'{{"errors": {e}, "rounds": {r}, "per_1000": {json_value(round(1000 * e / r, 2))}, '
                f'"floor_per_1000": {json_value(round(1000 * f, 2))}}}'
                for e, r, f in zip(cols["errors"], cols["rounds"], floor)]
    return rows_frame(d.height, {
        "kind": "hold_anomaly", "test": "dealer_error_rate", "entity": [f"dealer {who} error rate" for who in cols["dealer_id"]],
        "window_days": window_days, "first_day": d["first_day"], "last_day": d["last_day"], "dealer_id": cols["dealer_id"],
        "rounds": cols["rounds"], "p_value": p, "sentence": sentence, "evidence": evidence})


def funnel_curves(funnel: pl.DataFrame, points: int = 60) -> pl.DataFrame:
    """The funnel plot's band lines: per entity type, bet level, currency and window (and night, when the frame
    has one), the theoretical hold (handle-weighted) and its 95 % and 99.7 % bands on a log grid of handles.

    A hold's standard deviation at handle H is ``s / sqrt(H)`` with ``s`` the entities' ``sd_per_unit`` (their
    median: the bet mix of a typical entity); the lines are the normal bands a regulator's funnel plot draws,
    the per-entity bands in ``funnel`` (``hold_low_95`` ...) carry each entity's own skew.
    """
    keys = [k for k in ("night", "entity_type", "bet", "currency", "window_days") if k in funnel.columns]
    if funnel.height == 0:
        return pl.DataFrame()
    parts = []
    for key, g in funnel.group_by(keys, maintain_order=True):
        handle = g["handle"].cast(pl.Float64)
        theory = float((g["theoretical_hold"] * handle).sum() / handle.sum())
        s = float(g["sd_per_unit"].median())
        lo, hi = max(1.0, float(handle.min()) / 2), float(handle.max()) * 2
        grid = np.geomspace(lo, hi, points)
        sd = s / np.sqrt(grid)
        parts.append(pl.DataFrame({
            **{k: [v] * points for k, v in zip(keys, key)}, "handle": grid, "theoretical_hold": [theory] * points,
            "low_95": theory - Z95 * sd, "high_95": theory + Z95 * sd,
            "low_997": theory - Z997 * sd, "high_997": theory + Z997 * sd,
        }))
    return pl.concat(parts)


def _int64(value: int | None) -> int | None:
    """A sum for an Int64 column: None beyond 64 bits (the sums are taken exactly in 128)."""
    return value if value is None or -(2**63) <= value < 2**63 else None
