"""The frames the audit passes between its steps, and the two it publishes.

Every step is a plain function ``(frames, params) -> frame``; these schemas are what those frames
hold, so a step can be tested with a hand-made frame and an empty partition still yields a frame
of the right shape. Money columns are Int64 in the currency's smallest unit.
"""

from __future__ import annotations

import polars as pl

# --- the output contract (docs/formats.md): findings.csv columns, in this order -----------------------
FINDING_CONTRACT_COLUMNS: tuple[str, ...] = (
    "finding_id", "kind", "severity", "gaming_day", "table_id", "round_no", "wager_id", "seat",
    "player_id", "dealer_id", "expected_net", "recorded_net", "difference", "rule_ref", "detail",
    "source_file", "source_line", "p_value", "q_value",
)

FINDINGS_SCHEMA: dict[str, pl.DataType] = {
    "finding_id": pl.String,
    "kind": pl.String,
    "severity": pl.String,
    "gaming_day": pl.Date,
    "table_id": pl.String,
    "round_no": pl.Int64,
    "wager_id": pl.String,
    "seat": pl.Int64,
    "player_id": pl.String,
    "dealer_id": pl.String,
    "expected_net": pl.Int64,
    "recorded_net": pl.Int64,
    "difference": pl.Int64,
    "rule_ref": pl.String,
    "detail": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    # statistical findings only (pipelines.stats): the test's p-value and its Benjamini-Hochberg q-value
    # over every entity tested that night; empty for the deterministic kinds
    "p_value": pl.Float64,
    "q_value": pl.Float64,
    # beyond the contract, after it
    "game": pl.String,
    "ruleset": pl.String,
    "ruleset_version": pl.String,
    "currency": pl.String,
    "device_id": pl.String,
}

SEVERITIES: tuple[str, ...] = ("high", "medium", "low")

# --- settlements.parquet: one row per wager ---------------------------------------------------------
SETTLEMENTS_SCHEMA: dict[str, pl.DataType] = {
    "gaming_day": pl.Date,
    "table_id": pl.String,
    "round_no": pl.Int64,
    "wager_id": pl.String,
    "wager_order": pl.Int64,
    "seat": pl.Int64,
    "player_id": pl.String,
    "dealer_id": pl.String,
    "game": pl.String,
    "ruleset": pl.String,
    "ruleset_version": pl.String,
    "currency": pl.String,
    "status": pl.String,  # the table's round status: settled, void, free_hand
    "bet": pl.String,
    "amount": pl.Int64,  # as placed
    "settled_amount": pl.Int64,  # the amount the rules settle at (limits, differential, Hold'em ratios applied)
    "cards_net": pl.Int64,  # what the cards and decisions say, on the amount as placed (engine)
    "expected_net": pl.Int64,  # what the rules prescribe, all considered; null when the evidence cannot decide
    "clause": pl.String,  # the clause that decides expected_net (pay table, or the procedure clause that overrides it)
    "pay_clause": pl.String,  # the engine's pay-table clause
    "adjustment": pl.String,  # what changed the settlement from cards_net: limit, ratio, differential, void, free_hand
    "detail": pl.String,
    "recorded_net": pl.Int64,
    "difference": pl.Int64,  # recorded_net - expected_net (positive: the player was overpaid)
    "unsettled_reason": pl.String,  # why expected_net is null
    "source_file": pl.String,
    "source_line": pl.Int64,
}

# --- the reconstruction: one row per round (table system round, device round, or both) ---------------
RECON_SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String,
    "round_no": pl.Int64,
    "gaming_day": pl.Date,
    "has_table_record": pl.Boolean,
    "has_cards": pl.Boolean,
    "complete": pl.Boolean,  # cards seen and no event_seq gap within or next to the round: reconstructable
    "lost_events": pl.Int64,  # event_seq numbers skipped within or next to the round's events
    "device_id": pl.String,
    "device_shoe_id": pl.String,
    "codes": pl.List(pl.Int16),  # every card/burn event of the round, device order (rulebook.cards codes)
    "burns": pl.List(pl.Boolean),
    "dealt": pl.List(pl.Int16),  # the card events only (burns excluded), device order
    "foreign_burn": pl.Boolean,
    "foreign_reads": pl.List(pl.String),  # what the device read where a card was foreign
    "n_events": pl.Int64,
    "first_card_at": pl.Datetime("us", "UTC"),  # the first card dealt (burns excluded)
    "decks": pl.Int64,  # from the shoe's shoe_start; null when the device did not say
    "excess_cards": pl.List(pl.Int16),  # cards seen more often in the shoe than its decks hold, at this round
    "note": pl.String,  # why the round cannot be reconstructed, or what was assumed
    "device_source_file": pl.String,
    "device_source_line": pl.Int64,
}

# --- what the engine said about each round -------------------------------------------------------------
ROUND_RESULTS_SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String,
    "round_no": pl.Int64,
    "ruleset_version": pl.String,
    "engine_void": pl.Boolean,
    "void_clause": pl.String,
    "outcome": pl.String,  # JSON text in the recorded_result vocabulary
    "out_winner": pl.String,  # the outcome's winner / player_points / banker_points, where the game has them
    "out_player_points": pl.Int16,
    "out_banker_points": pl.Int16,
    "engine_error": pl.String,  # the engine refused the round (a bug or an input it cannot take): the reason
}

# what the engine calls irregular, one row per irregularity (a round may have several)
IRREGULARITIES_SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String,
    "round_no": pl.Int64,
    "idx": pl.Int64,  # order within the round
    "kind": pl.String,  # a finding kind: card_integrity, drawing_rule_violation, illegal_action, ...
    "clause": pl.String,
    "detail": pl.String,
    "voids_round": pl.Boolean,
}

WAGER_RESULTS_SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String,
    "round_no": pl.Int64,
    "wager_id": pl.String,
    "net": pl.Int64,
    "pay_clause": pl.String,
    "detail": pl.String,
    "unsettled_reason": pl.String,
}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def conform(df: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """``df`` with exactly ``schema``'s columns, in order and type; missing columns are null."""
    if df.width == 0:
        return empty(schema)
    cols = []
    for name, dtype in schema.items():
        if name in df.columns:
            cols.append(pl.col(name).cast(dtype))
        else:
            cols.append(pl.lit(None, dtype=dtype).alias(name))
    return df.select(cols)


def in_order(df: pl.DataFrame, keys: list[str]) -> bool:
    """The rows are sorted by ``keys`` (nulls nowhere in them), checked in one pass over adjacent rows: frames that
    come from the load in order need no sort, which costs more than the check."""
    if df.height < 2:
        return True
    if df.select(pl.any_horizontal(pl.col(keys).is_null()).any()).item():
        return False
    return bool(df.select(_not_before_previous(keys).slice(1).all()).item())


def _not_before_previous(keys: list[str]) -> pl.Expr:
    head, rest = keys[0], keys[1:]
    prev = pl.col(head).shift()
    if not rest:
        return pl.col(head) >= prev
    return (pl.col(head) > prev) | ((pl.col(head) == prev) & _not_before_previous(rest))
