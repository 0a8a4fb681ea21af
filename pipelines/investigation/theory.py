"""Each bet's mean and variance of net per unit staked, for the theory line and its band: exact where the
statistical detectors have the bet's payout distribution (every Tiger Baccarat bet, enumerated through the
rules engine: ``pipelines.stats.distributions.baccarat_payouts``), else the floor's own estimate
(:func:`pipelines.investigate.bet_moments`: every settled wager of the range, as the rules settled it)."""

from __future__ import annotations

import polars as pl


def exact_where_known(moments: pl.DataFrame) -> pl.DataFrame:
    """``moments`` (``bet_moments``) with ``mean_per_unit``/``var_per_unit`` replaced by the exact figures where a
    bet's distribution is known, and a ``method`` column: ``exact`` or ``floor estimate``."""
    from pipelines.stats.distributions import baccarat_payouts, ruleset_of

    rows = []
    for r in moments.iter_rows(named=True):
        method = "floor estimate"
        try:
            rs = ruleset_of(r["ruleset"], r["ruleset_version"])
        except Exception:  # noqa: BLE001 - a rule set the catalogue does not know keeps the floor's estimate
            rs = None
        if rs is not None and rs.game == "baccarat":
            payout = baccarat_payouts(rs.name, rs.version, int(rs.params.decks)).get(r["bet"])
            if payout is not None:
                r = {**r, "mean_per_unit": payout.mean, "var_per_unit": payout.variance}
                method = "exact"
        rows.append({**r, "method": method})
    if not rows:
        return moments.with_columns(pl.lit(None, dtype=pl.String).alias("method"))
    return pl.DataFrame(rows, schema={**moments.schema, "method": pl.String})
