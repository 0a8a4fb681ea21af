"""hold_anomaly for Hold'em Bonus and blackjack: per table, dealer and shoe, per bet type (the Bonus, the
Pair, Insurance, and each game's main game), the players' recorded net against its distribution.

Each entity's net is a sum of independent draws of the bets' payout distributions (``payouts``), scaled by
the stakes; the tail is the same Lugannani-Rice saddle point on the exact cumulant generating function
as baccarat's (``distributions.batch_two_sided``). Which draws are independent:

- the **Bonus** and the **Pair**: each wager on its own seat's cards (the dependence through the cards
  two seats take from one deck or shoe is ignored: it is a removal effect, small and negative);
- **Insurance**: every insurance wager of a round is settled on the one card under the dealer's ace, so a
  round's insurance is one draw with the round's whole insurance stake (exact);
- the **main games**: the seats of a round play against one dealer hand (and at Hold'em one board), so
  their nets are positively correlated. A round is one draw of the single-seat distribution with the
  round's mean (its stake times the mean per unit) and spread about it ``sqrt(sum a_i^2 + rho (A^2 -
  sum a_i^2))``, the variance of seats of correlation ``rho`` (``seat_correlation``). At Hold'em rho is the
  engine's two-seat simulation (about 0.31), at blackjack two seats played on the engine's state machine
  (about 0.36), both under the stated strategy and frozen in ``payouts_frozen``; for a blackjack deck count
  the record does not hold, rho = 1, the largest variance the seats can have together (Cauchy-Schwarz): a
  bound, so that test is conservative. The skew of a round is the single seat's
  (an approximation: the saddle point uses it in the tail). Their null assumes a stated strategy
  (``payouts``), and a player who plays worse than it gives the house more: the test is one-sided,
  flagging only players winning more than that strategy allows. So is the **Bonus**'s where a fold loses it
  (``folded_bonus_loses``, all three rule sets): a player who folds a paying hand holds the house more.

The Bonus's 1000:1 line makes a sum with jumps (``distributions.jump_atoms``): its p-value is bounded through the
sum's body and its bands are the body's quantiles (``distributions.body_moments``), not the whole sum's moments.

The "all bets" level of baccarat is not formed here: a seat's Bonus and main game depend on the same
hole cards, in a way the per-bet distributions do not carry.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import MoneySums, batch_two_sided, body_moments
from pipelines.stats.games import distribution_of, settled_games
from pipelines.stats.hold import Z95, funnel_rows, hold_test_rows, skew_of, sum_quantile
from pipelines.stats.tests_frame import json_value, tests_frame

#: bets whose wagers of one round are settled together (one draw per round with the round's stake)
PER_ROUND = ("insurance", "main")
GAME_LABEL = {"holdem_bonus": "Hold'em", "blackjack": "blackjack"}
BET_LABEL = {"bonus": "Bonus", "pair": "Pair", "insurance": "Insurance", "main": "main-game"}


#: an entity of the games' hold: a grouping's key, per currency, game and bet type (``level``)
ENTITY = ("grouping", "key", "currency", "game", "level")
DIST = ["ruleset", "ruleset_version", "decks", "bet"]
_SUMS = ("wagers", "rounds", "handle", "theo", "recorded")


def games_hold_tests(wagers: pl.DataFrame, params: StatsParams, window_days: int = 1,
                     settled: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(test rows, funnel rows) of every Hold'em Bonus and blackjack table, dealer and shoe, per bet type: the sum of
    the per-day aggregates (``games_hold_aggregates``), as a window of summaries gives them."""
    w = settled_games(wagers) if settled is None else settled
    ents, draws = games_hold_aggregates(w, params)
    return games_hold_rows(ents, draws, params, window_days)


def games_hold_aggregates(w: pl.DataFrame, params: StatsParams) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per gaming day (a round is a day's): (each entity's counts and sums, its independent draws: one row per
    distinct distribution, stake and spread with its count ``c``). Both add up over days (``combine_hold``)."""
    if w.height == 0:
        return pl.DataFrame(), pl.DataFrame()
    w = w.with_columns((pl.col("amount") * pl.col("mean")).alias("theo"),
                       pl.struct("gaming_day", "table_id", "round_no").rank("dense").cast(pl.Int64).alias("rid"))
    ents, draws = [], []
    for grouping in params.hold_groupings:
        base = w.filter(pl.col(grouping).is_not_null()).with_columns(pl.col(grouping).alias("key"),
                                                                      pl.lit(grouping).alias("grouping"))
        if base.height == 0:
            continue
        ents.append(base.group_by("gaming_day", "key", "currency", "game", "bet").agg(
            pl.len().alias("wagers"), pl.col("rid").n_unique().alias("rounds"), pl.col("amount").cast(pl.Int128).sum().alias("handle"),
            pl.col("theo").sum(), pl.col("recorded_net").cast(pl.Int128).sum().alias("recorded"), pl.col("one_sided").any(),
            pl.col("gaming_day").min().alias("first_day"), pl.col("gaming_day").max().alias("last_day"),
            pl.col("table_id").unique().sort().alias("tables"), pl.col("ruleset").first(),
            pl.col("round_no").min().alias("first_round"), pl.col("round_no").max().alias("last_round"),
        ).rename({"bet": "level"}).select("gaming_day", pl.lit(grouping).alias("grouping"), pl.all().exclude("gaming_day")))
        draws.append(_draw_rows(base))
    if not ents:
        return pl.DataFrame(), pl.DataFrame()
    return pl.concat(ents), pl.concat(draws)


def _draw_rows(base: pl.DataFrame) -> pl.DataFrame:
    """The independent draws of a grouping's entities per day: one per wager (Bonus, Pair), one per round (Insurance,
    main games), kept once per distinct (distribution, stake, spread) with a count. A distribution (game, rule set,
    version, decks, bet: a day has a few) is grouped by as its number (``kind``) and the grouping's name is put back
    after (hashing six strings per wager twice was most of the games' hold summary); every sum is of whole amounts,
    exact in any order, so the draws are the same."""
    grouping = base["grouping"][0]
    kinds = base.select("game", *DIST).unique(maintain_order=True).with_row_index("kind")
    kinds = kinds.with_columns(pl.col("kind").cast(pl.Int64), pl.Series(
        "rho", [seat_correlation(r, v, int(d), b) for r, v, d, b in kinds.select(DIST).rows()], dtype=pl.Float64))
    base = base.join(kinds.select("game", *DIST, "kind"), on=["game", *DIST], how="left", nulls_equal=True).select(
        "gaming_day", "key", "currency", "rid", "bet", "kind", pl.col("amount").cast(pl.Float64))
    single = base.filter(~pl.col("bet").is_in(PER_ROUND)).select(
        "gaming_day", "key", "currency", "kind", "amount", pl.col("amount").alias("scale"))
    # a round's seats: the round's stake A = sum a_i, and the spread sqrt(sum a_i^2 + rho (A^2 - sum a_i^2)) that gives
    # the round's net its variance when any two seats' nets have correlation rho
    rounds = base.filter(pl.col("bet").is_in(PER_ROUND)).group_by("gaming_day", "key", "currency", "rid", "kind").agg(
        pl.col("amount").sum(), (pl.col("amount") ** 2).sum().alias("a2")).join(kinds.select("kind", "rho"), on="kind").select(
        "gaming_day", "key", "currency", "kind", "amount",
        (pl.col("a2") + pl.col("rho") * (pl.col("amount") ** 2 - pl.col("a2"))).sqrt().alias("scale"))
    counted = pl.concat([single, rounds]).group_by("gaming_day", "key", "currency", "kind", "amount", "scale").agg(
        pl.len().cast(pl.Int64).alias("c"))
    return counted.join(kinds.select("kind", "game", *DIST), on="kind").select(
        "gaming_day", pl.lit(grouping).alias("grouping"), "key", "currency", "game", *DIST, "amount", "scale", "c")


def combine_hold(ents: pl.DataFrame, draws: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Several days' aggregates as one: counts and money add, the tables unite, the rule set is the earliest day's,
    a draw's counts add."""
    return _combine_entities(ents), _combine_draws(draws)


def _combine_entities(ents: pl.DataFrame) -> pl.DataFrame:
    return ents.group_by(list(ENTITY)).agg(
        *[pl.col(c).sum() for c in _SUMS], pl.col("one_sided").any(), pl.col("first_day").min(), pl.col("last_day").max(),
        pl.col("tables").list.explode(keep_nulls=False, empty_as_null=False).unique().sort(),
        pl.col("ruleset").sort_by("gaming_day").first(), pl.col("first_round").min(), pl.col("last_round").max())


def _combine_draws(draws: pl.DataFrame) -> pl.DataFrame:
    return draws.group_by(*ENTITY[:4], *DIST, "amount", "scale").agg(pl.col("c").sum())


def games_hold_rows(ents: pl.DataFrame, draws: pl.DataFrame, params: StatsParams, window_days: int,
                    memo=None, reuse=None, widths: dict | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(test rows, funnel rows) from days' aggregates (``games_hold_aggregates``, any number of days). ``memo``: a
    ``windows.WindowMemo`` of the run's earlier windows; only the draws of the entities tested and not in it are
    added up (the draws are most of the work: one per distinct stake and spread of a round). ``reuse``: the same window
    of an earlier night (``pipelines.stats.reuse``): its rows stand for the entities untouched since. ``widths``: gets
    each grouping's padding width (the widest distribution of its tested entities), which the next night's reuse must
    find again."""
    if ents.height == 0:
        return tests_frame([]), pl.DataFrame()
    # only the entities with enough wagers are tested (``_grouping``): the others' days are not combined (a window's
    # blackjack shoes are 141,000 rows over 30 nights, and few are ever tested); the same groups of the same rows
    ents = _combine_entities(ents.filter(pl.col("wagers").sum().over(list(ENTITY)) >= params.hold_min_wagers))
    tests, funnels = [], []
    for grouping in params.hold_groupings:
        t, f = _grouping(ents.filter(pl.col("grouping") == grouping), draws.filter(pl.col("grouping") == grouping),
                         params, window_days, memo, reuse, widths)
        tests.append(t)
        if f.height:
            funnels.append(f)
    return pl.concat(tests), (pl.concat(funnels) if funnels else pl.DataFrame())


def _draws(draws: pl.DataFrame, summary: pl.DataFrame, kinds: pl.DataFrame | None = None) -> MoneySums:
    """The entities' independent draws (``_draw_rows``, summed over days) as a ``MoneySums``. ``kinds``: the
    distributions of every entity of ``summary`` when ``draws`` holds only some of them (``_numbered_draws``)."""
    draws = draws.join(summary.select("key", "currency", "game", "level", "ent"),
                       left_on=["key", "currency", "game", "bet"], right_on=["key", "currency", "game", "level"],
                       how="inner")
    kinds = _numbered_kinds(draws if kinds is None else kinds)
    return _numbered_draws(draws.join(kinds, on=DIST, how="left"), kinds, summary.height)


def _numbered_kinds(draws: pl.DataFrame) -> pl.DataFrame:
    """The distributions (``DIST``) of ``draws``, sorted, each with its number ``kind``."""
    return draws.select(DIST).unique().sort(DIST).with_row_index("kind").with_columns(pl.col("kind").cast(pl.Int64))


def _numbered_draws(draws: pl.DataFrame, kinds: pl.DataFrame, n: int) -> MoneySums:
    """The entities' independent draws (``_draw_rows``, summed over days and numbered: ``ent``, the distribution's
    number ``kind`` in ``kinds``, which is sorted by its columns) as a ``MoneySums`` of ``n`` entities, in the order of
    entity, distribution, stake and spread. The outcome vectors are padded to the widest of ``kinds`` (the
    distributions of every entity tested, of which ``draws`` may hold only some: the moments' sums then add the same
    terms in the same order)."""
    if kinds.height == 0 or draws.height == 0:
        return MoneySums(np.zeros(0, dtype=np.int64), np.zeros((0, 1)), np.zeros((0, 1)), np.zeros(0), np.zeros(0), n)
    draws = draws.sort("ent", "kind", "amount", "scale")
    pays = [distribution_of(r, v, int(d), b) for r, v, d, b in kinds.select(DIST).rows()]
    width = _width(kinds)
    values = np.zeros((len(pays), width))
    probs = np.zeros((len(pays), width))
    for i, p in enumerate(pays):
        values[i, :len(p.values)] = [float(v) for v in p.values]
        probs[i, :len(p.probs)] = [float(q) for q in p.probs]
    means = np.array([p.mean for p in pays])
    idx = draws["kind"].to_numpy()
    amount = draws["amount"].to_numpy()[:, None]
    scale = draws["scale"].to_numpy()[:, None]
    mu = means[idx][:, None]
    # the mean is the stake's (A mu), the spread about it the round's; with rho = 1 this is A times the net per unit
    x = np.where(probs[idx] > 0, amount * mu + scale * (values[idx] - mu), 0.0)
    return MoneySums(draws["ent"].to_numpy().astype(np.int64), x, probs[idx], np.ones(draws.height),
                     draws["c"].to_numpy().astype(float), n)


def seat_correlation(name: str, version: str, decks: int, bet: str) -> float:
    """The correlation of two seats' nets in one round: Insurance 1 (one card settles them all); the main games the
    engine's two-seat simulations (Hold'em about 0.31, blackjack about 0.36; frozen), or 1, the upper bound, for a
    blackjack rule set or deck count the record does not hold; independent bets 0."""
    if bet == "main":
        variance = distribution_of(name, version, decks, bet).variance
        if _game(name, version) == "holdem_bonus":
            from pipelines.stats.payouts_holdem import seat_covariance

            return seat_covariance(name, version)[0] / variance
        from pipelines.stats.payouts_blackjack import seat_covariance as blackjack_covariance

        cov = blackjack_covariance(name, version, decks)
        return 1.0 if cov is None else min(1.0, cov[0] / variance)
    return 1.0 if bet in PER_ROUND else 0.0


def _game(name: str, version: str) -> str:
    from pipelines.stats.distributions import ruleset_of

    return ruleset_of(name, version).game


def _grouping(ents: pl.DataFrame, draws: pl.DataFrame, params: StatsParams, window_days: int,
              memo=None, reuse=None, widths: dict | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    from pipelines.stats.reuse import interleave
    from pipelines.stats.windows import untouched_hold

    summary = ents.filter(pl.col("wagers") >= params.hold_min_wagers).sort("key", "game", "level", "currency").with_row_index(
        "ent").with_columns(pl.col("ent").cast(pl.Int64))
    if summary.height == 0:
        return tests_frame([]), pl.DataFrame()
    keys = summary.select(*ENTITY, "first_day", "last_day").rows()
    known = memo.known(keys) if memo is not None else np.full((summary.height, 4), np.nan)
    # an entity untouched since the basis night keeps its rows: not worked out, but its distributions still set the
    # width the moments are padded to (the same terms in the same order as when every entity is worked out)
    have = ~np.isnan(known[:, 3])
    # the draws of the entities tested, by the entity's number and the distribution's (sorted by its columns), so that
    # they are added up over the days and put in order by numbers (the same groups and order as by the strings)
    tested = draws.join(summary.select("key", "currency", "game", "level", "ent"), how="inner",
                        left_on=["key", "currency", "game", "bet"], right_on=["key", "currency", "game", "level"])
    kinds = _numbered_kinds(tested)
    width = _width(kinds)
    grouping = summary["grouping"][0]
    if widths is not None:
        widths[grouping] = width
    kept = np.zeros(summary.height, dtype=bool)
    if reuse is not None and reuse.widths.get(grouping) == width:
        # the same padding width as the night before: a carried-over entity's moments are the ones its from-scratch
        # sums would give (the moments are padded to the widest distribution of the window's tested entities)
        kept, old_tests, old_funnel = untouched_hold(summary, reuse, _bet_labels(summary))
    skip = have | kept
    wanted = tested.filter(pl.Series((~skip)[tested["ent"].to_numpy()]))  # the entities not worked out yet
    wanted = wanted.join(kinds, on=DIST, how="left").group_by("ent", "kind", "amount", "scale").agg(pl.col("c").sum())
    ms = _numbered_draws(wanted, kinds, summary.height)
    s = summary["recorded"].cast(pl.Float64).to_numpy()
    mean, var, k3 = ms.moments()
    band = body_moments(ms, (mean, var, k3))  # where the sum has jumps, its bands from its body (the 1000:1 line)
    least = ms.bounds()[0]  # the sum when every draw is at its least: no band passes it
    if have.any():
        mean, var, k3 = (np.where(have, known[:, i], v) for i, v in enumerate((mean, var, k3)))
        known_band = memo.known_band(keys)  # kept beside the moments (below): known together
        band = tuple(np.where(have, known_band[:, i], b) for i, b in enumerate(band))
        least = np.where(have, known_band[:, 3], least)
    one_sided = summary["one_sided"].to_numpy()
    # a one-sided entity at or below its mean has p = 1 whatever its tail (players winning less than the stated strategy
    # allows), and a known one has its p: each is asked at its mean, which needs no saddle point. Over 30 days most of
    # the Hold'em and blackjack entities lie far below their mean (players' decisions), and their saddle points were
    # solved only to be replaced by 1
    at_mean = skip | (one_sided & (s <= mean))
    p = batch_two_sided(ms, np.where(at_mean, mean, s), moments=(mean, var, k3))
    p = np.where(one_sided, np.where(s > mean, p / 2, 1.0), p)
    if have.any():
        p = np.where(have, known[:, 3], p)
    if kept.any():  # the untouched entities' rows are the basis's: the others are written
        work = ~kept
        keys = [k for k, w in zip(keys, work) if w]
        summary, s, mean, var, k3, p = summary.filter(pl.Series(work)), s[work], mean[work], var[work], k3[work], p[work]
        band = tuple(b[work] for b in band)
        least = least[work]
    if memo is not None:
        memo.keep(keys, mean, var, k3, p)
        memo.keep_band(keys, *band, least)
    sd = np.sqrt(var)
    g = skew_of(sd, k3)
    band_sd = np.sqrt(band[1])
    band_g = skew_of(band_sd, band[2])

    # once, not per entity
    band_low, band_high = (sum_quantile(band[0], band_sd, band_g, Z95, least),
                           sum_quantile(band[0], band_sd, band_g, -Z95, least))

    handle = summary["handle"].cast(pl.Float64).to_numpy()
    funnel = funnel_rows(summary, s, mean, sd, g, p, window_days, band=(band[0], band_sd, band_g), least=least)
    games, levels, sided = summary["game"].to_list(), summary["level"].to_list(), summary["one_sided"].to_list()
    variance = {"main": "a round's seats correlated as in the engine's two-seat simulation"}
    tests = hold_test_rows(
        summary, s, mean, sd, g, p, handle, band_low, band_high, window_days,
        bets=_bet_labels(summary), game=games,
        suffix=[" (one-sided: players winning more than the stated strategy allows)" if o else "" for o in sided],
        evidence_more=[f', "one_sided": {json_value(bool(o))}, "variance": {json_value(variance.get(lv, "exact"))}'
                       for o, lv in zip(sided, levels)])
    if kept.any():
        return interleave(tests, old_tests, kept), interleave(funnel, old_funnel, kept)
    return tests, funnel


def _width(kinds: pl.DataFrame) -> int:
    """The widest distribution of ``kinds`` (its outcomes): what every entity's outcome vectors are padded to."""
    return max((len(distribution_of(r, v, int(d), b).values) for r, v, d, b in kinds.select(DIST).rows()), default=0)


def _bet_labels(summary: pl.DataFrame) -> list[str]:
    """The games' bet labels of the entities' test rows ("Hold'em Bonus bets")."""
    return [f"{GAME_LABEL[gm]} {BET_LABEL[lv]} bets" for gm, lv in zip(summary["game"].to_list(), summary["level"].to_list())]
