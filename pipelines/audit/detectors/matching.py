"""``unmatched_round``: a round only one side saw.

A table-system round with no cards from the device cannot be re-settled (its wagers stay
unsettled, with this reason); a device round with no table-system record has cards but no wagers
to check. Both are data gaps: ``low``. They cite the evidence rule of the game (the cards decide:
TBAC-7.16, BJ-4.3, ...) since without the other side the cards cannot decide anything.
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import with_ids


def detect_unmatched(recon: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    odd = recon.filter(pl.col("has_table_record") != pl.col("has_cards"))
    if odd.height == 0:
        return pl.DataFrame()
    info = rounds.select(
        "table_id", "round_no", "dealer_id", "game", "ruleset", "ruleset_version", "currency", "clause_prefix",
        "status", "wager_count", "source_file", "source_line",
    )
    odd = odd.join(info, on=["table_id", "round_no"], how="left")
    # a device round's rule text: the table's other rounds say which game it plays
    table_prefix = rounds.group_by("table_id").agg(
        pl.col("clause_prefix").drop_nulls().first().alias("_table_prefix"),
        pl.col("game").first().alias("_table_game"),
        pl.col("ruleset").first().alias("_table_ruleset"),
    )
    odd = odd.join(table_prefix, on="table_id", how="left")
    ref = pl.coalesce("clause_prefix", "_table_prefix").replace_strict(
        {p: c.result_stands for p, c in CLAUSES.items()}, default="", return_dtype=pl.String
    )
    table_only = pl.col("has_table_record")
    out = odd.with_columns(
        pl.lit("unmatched_round").alias("kind"),
        pl.lit("low").alias("severity"),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
        ref.alias("rule_ref"),
        pl.coalesce("game", "_table_game").alias("game"),
        pl.coalesce("ruleset", "_table_ruleset").alias("ruleset"),
        pl.when(table_only).then(pl.format(
            "the table system recorded round {} ({}, {} wager(s)) but the device recorded no cards for it: "
            "it cannot be re-settled from the cards",
            pl.col("round_no"), pl.col("status"), pl.col("wager_count"),
        )).otherwise(pl.format(
            "device {} dealt {} card event(s) for round {} from shoe {} but the table system has no record of the round",
            pl.col("device_id"), pl.col("n_events"), pl.col("round_no"), pl.col("device_shoe_id"),
        )).alias("detail"),
        pl.when(table_only).then(pl.col("source_file")).otherwise(pl.col("device_source_file")).alias("source_file"),
        pl.when(table_only).then(pl.col("source_line")).otherwise(pl.col("device_source_line")).alias("source_line"),
    )
    return with_ids(out)
