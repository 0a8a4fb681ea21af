"""Each bet's mean and variance of net per unit staked, for the theory line and its band on an investigation page.

From the statistical detectors' payout distributions (:func:`pipelines.stats.payouts.bet_distribution`) wherever
they give the bet, else the floor's own estimate (:func:`pipelines.investigate.bet_moments`: every settled wager of
the range, as the rules settled it). What each bet's figure is, exactly (the ``method`` column):

- ``exact``: every Tiger Baccarat bet (the shoe's first six cards enumerated through the rules engine), the
  Hold'em Bonus ``bonus`` (every hole-card holding on the pay table), the blackjack ``pair`` and ``insurance``
  (exact counts of the shoe): the mean and the variance are the bet's own, to the last digit;
- ``simulation``: the Hold'em Bonus main game (Ante, Flop, Turn and River of one seat together, per unit of
  Ante: given to the ``ante`` wager) and the blackjack ``main`` wager (per unit of the original wager, doubles
  and splits included): the engine's simulation of its stated strategy (2,000,000 rounds), mean and variance of
  its counts. A player who plays worse than that strategy has a lower mean than the line;
- ``in the Ante's figure``: the Hold'em ``flop``, ``turn`` and ``river`` wagers add their amount and nothing to
  the theory or the variance (the main game's figure, per unit of Ante, covers them);
- ``floor estimate``: anything else: a jackpot (``progressive``) wager, whose return needs a stake the rule set
  leaves unstated (MBS-1.1.12, THB-G-JACKPOT), and any bet of a rule set the catalogue does not know.
"""

from __future__ import annotations

import polars as pl

IN_THE_ANTE = ("flop", "turn", "river")


def _figure(rs, bet: str) -> tuple[float, float, str, str, list[float], list[float]] | None:
    """(mean, variance, method, source, values, probabilities) of one unit of ``bet`` under ``rs``, or None (the
    floor's estimate). The values and their probabilities are the bet's net per unit (a simulation's: its counts
    over its rounds): the band takes its skew and its rare jumps from them (``analysis.results_over_time``)."""
    from pipelines.stats.payouts import Untestable, bet_distribution

    if rs.game == "baccarat":
        from pipelines.stats.distributions import baccarat_payouts

        payout = baccarat_payouts(rs.name, rs.version, int(rs.params.decks)).get(bet)
        return None if payout is None else (payout.mean, payout.variance, "exact", "the shoe's first six cards enumerated",
                                            payout.units.tolist(), list(payout.probs))
    if rs.game == "holdem_bonus" and bet in IN_THE_ANTE:
        return 0.0, 0.0, "in the Ante's figure", "the main game per unit of Ante covers the Flop, Turn and River", [0.0], [1.0]
    name = "main" if rs.game == "holdem_bonus" and bet == "ante" else bet
    try:
        d = bet_distribution(rs, name)
    except (Untestable, KeyError, ValueError):
        return None
    return d.mean, d.variance, d.method, d.source, [float(v) for v in d.values], [float(q) for q in d.probs]


def exact_where_known(moments: pl.DataFrame) -> pl.DataFrame:
    """``moments`` (``bet_moments``) with ``mean_per_unit``/``var_per_unit`` replaced by the payout distributions'
    figures where they give the bet, and ``method``, ``source``, ``unit_values`` and ``unit_probs`` columns (module
    docstring; the last two null for the floor's estimate)."""
    from pipelines.stats.distributions import ruleset_of

    rows = []
    for r in moments.iter_rows(named=True):
        method, source, values, probs = "floor estimate", "every settled wager of the floor in the range", None, None
        try:
            rs = ruleset_of(r["ruleset"], r["ruleset_version"])
        except Exception:  # noqa: BLE001 - a rule set the catalogue does not know keeps the floor's estimate
            rs = None
        figure = _figure(rs, r["bet"]) if rs is not None else None
        if figure is not None:
            mean, var, method, source, values, probs = figure
            r = {**r, "mean_per_unit": mean, "var_per_unit": var}
        rows.append({**r, "method": method, "source": source, "unit_values": values, "unit_probs": probs})
    extra = {"method": pl.String, "source": pl.String, "unit_values": pl.List(pl.Float64), "unit_probs": pl.List(pl.Float64)}
    if not rows:
        return moments.with_columns(*(pl.lit(None, dtype=t).alias(c) for c, t in extra.items()))
    return pl.DataFrame(rows, schema={**moments.schema, **extra})
