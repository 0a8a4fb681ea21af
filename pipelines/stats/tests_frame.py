"""The one shape every detector returns: one row per entity tested, flagged or not.

The FDR needs every test of the night, not only the flagged ones, so each detector hands back all
of its entities with a p-value; ``run`` adds the q-values and turns the rows under the FDR level
into findings. ``evidence`` is JSON (the rounds behind it, the ramp, the counts) for the detail.
"""

from __future__ import annotations

import polars as pl

TEST_SCHEMA: dict[str, pl.DataType] = {
    "kind": pl.String,  # a statistical finding kind
    "test": pl.String,  # which statistic: hold, dealer_error_rate, luck, bet_vs_count, pair_count, overpaid_pair
    "entity": pl.String,  # what was tested, readable: "table BAC-03 x banker", "P-606720 x side bets"
    "window_days": pl.Int64,
    "first_day": pl.Date,
    "last_day": pl.Date,
    "table_id": pl.String,
    "player_id": pl.String,
    "dealer_id": pl.String,
    "game": pl.String,
    "ruleset": pl.String,
    "currency": pl.String,
    "bet": pl.String,
    "rounds": pl.Int64,
    "wagers": pl.Int64,
    "expected_net": pl.Int64,  # theoretical net of the entity's wagers to the players (rounded half to even)
    "recorded_net": pl.Int64,  # actual net to the players, as recorded
    "p_value": pl.Float64,
    "sentence": pl.String,
    "evidence": pl.String,
}


def tests_frame(rows: list[dict] | pl.DataFrame) -> pl.DataFrame:
    df = rows if isinstance(rows, pl.DataFrame) else pl.DataFrame(rows, schema=TEST_SCHEMA) if rows else pl.DataFrame(schema=TEST_SCHEMA)
    return df.select([pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c) for c, t in TEST_SCHEMA.items()])


def fmt_p(p: float) -> str:
    """A p-value for a sentence: two significant digits, ``< 1e-12`` at the floor."""
    from pipelines.stats.distributions import P_FLOOR

    if p <= P_FLOOR:
        return "< 1e-12"
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}".replace("e-0", "e-")


BET_LABEL = {
    "banker": "Banker", "player": "Player", "tie": "Tie", "banker_pair": "Banker Pair", "player_pair": "Player Pair",
    "tiger": "Tiger", "small_tiger": "Small Tiger", "big_tiger": "Big Tiger", "side_bets": "side",
    "all": "all", "main": "main", "pair": "Pair",
}
