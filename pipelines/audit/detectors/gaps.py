"""``sequence_gap``: events or rounds missing from the numbering.

A device's ``event_seq`` increases by exactly 1 per event (formats.md): a jump means events were
lost between two that were kept. A table's ``round_no`` is its game number: a number neither the
table system nor the device ever mentions lies in a gap (a round only one side saw is an
``unmatched_round`` instead, not a gap). Both need the whole night, across partitions, so they run
once over all events and rounds; each finding is filed under the partition (gaming day, table) of
the first event or round after the gap. Data gaps: ``low``.
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.findings import finalize, with_ids

# docs/formats.md states the event numbering; the rule texts have no clause for a log's numbering
RULE_REF = "FORMATS-EVENT-SEQ"
ROUND_RULE_REF = "FORMATS-ROUND-NO"


def event_seq_gaps(events: pl.DataFrame) -> pl.DataFrame:
    """One finding per jump in a device's ``event_seq`` (annotated events: ``lost_before``, ``quarantined_before``).

    Numbers whose lines are in quarantine were not lost by the device: the log holds them, unreadable,
    and quarantine.csv lists them. A jump fully explained that way is no finding; a partly explained
    one says how many of its numbers are in quarantine.
    """
    if events.height == 0:
        return pl.DataFrame()
    gaps = events.filter((pl.col("lost_before") > 0) & (pl.col("quarantined_before") < pl.col("lost_before")))
    if gaps.height == 0:
        return pl.DataFrame()
    missing = pl.col("lost_before")
    prev = pl.col("event_seq") - missing - 1
    quarantined = pl.when(pl.col("quarantined_before") > 0).then(
        pl.format(" ({} of them in quarantine)", pl.col("quarantined_before"))
    ).otherwise(pl.lit(""))
    out = gaps.with_columns(
        pl.lit("sequence_gap").alias("kind"),
        pl.lit("low").alias("severity"),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
        pl.lit(RULE_REF).alias("rule_ref"),
        pl.when(missing == 1)
        .then(pl.format("device {} lost event {}: its event_seq jumps from {} to {}", pl.col("device_id"),
                        prev + 1, prev, pl.col("event_seq")))
        .otherwise(pl.format("device {} lost {} events ({} to {}){}: its event_seq jumps from {} to {}", pl.col("device_id"),
                             missing, prev + 1, pl.col("event_seq") - 1, quarantined, prev, pl.col("event_seq")))
        .alias("detail"),
    )
    return with_ids(out, pl.format("{}#{}", pl.col("device_id"), pl.col("event_seq")))


def round_no_gaps(round_numbers: pl.DataFrame) -> pl.DataFrame:
    """One finding per run of game numbers a table skipped (``round_numbers``: every round either side saw)."""
    if round_numbers.height == 0:
        return pl.DataFrame()
    r = (
        round_numbers.select("table_id", "round_no", "gaming_day", "source_file", "source_line")
        .sort(["table_id", "round_no", "source_file", "source_line"])
        .unique(subset=["table_id", "round_no"], keep="first", maintain_order=True)
        .with_columns(pl.col("round_no").shift(1).over("table_id").alias("_prev"))
    )
    gaps = r.filter((pl.col("round_no") - pl.col("_prev")) > 1)
    if gaps.height == 0:
        return pl.DataFrame()
    missing = pl.col("round_no") - pl.col("_prev") - 1
    out = gaps.with_columns(
        pl.lit("sequence_gap").alias("kind"),
        pl.lit("low").alias("severity"),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
        pl.lit(ROUND_RULE_REF).alias("rule_ref"),
        pl.when(missing == 1)
        .then(pl.format("table {}: round {} is missing from both logs (rounds {} and {} were seen)", pl.col("table_id"),
                        pl.col("_prev") + 1, pl.col("_prev"), pl.col("round_no")))
        .otherwise(pl.format("table {}: rounds {} to {} ({} rounds) are missing from both logs (rounds {} and {} were seen)",
                             pl.col("table_id"), pl.col("_prev") + 1, pl.col("round_no") - 1, missing, pl.col("_prev"),
                             pl.col("round_no")))
        .alias("detail"),
    )
    return with_ids(out, pl.lit("round_no"))


def detect_gaps(jumps: pl.DataFrame, round_numbers: pl.DataFrame) -> pl.DataFrame:
    """Both kinds of gap over the whole night (``pipelines.audit.load.load_gap_evidence``): annotated device
    events just after an ``event_seq`` jump, and every round number either side saw."""
    return finalize([event_seq_gaps(jumps), round_no_gaps(round_numbers)])
