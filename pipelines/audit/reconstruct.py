"""Reconstruct every round from the card device's sequence, not from what the table system claims.

A round's evidence is the device's card and burn events carrying its ``round_no``, in the device's
``event_seq`` order (burns kept: the engine checks them against the deal procedure). The number of
decks is the shoe's ``shoe_start``. The table system's record only says which round it is and what
was wagered; where the two disagree, or one is missing, the round's ``note`` says so in a sentence.

Two annotations need the whole shoe, not one round, and are computed once over all events
(:func:`annotate_events`) before the night is cut into partitions: how many decks the shoe holds,
and how many times each card has been seen in the shoe so far (a card seen more often than the
decks hold it is an excess card: TBAC-7.1, HTB-7.1.3, BJ-7.14, MBS-5.2).
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.frames import RECON_SCHEMA, conform
from pipelines.audit.params import AuditParams
from rulebook.cards import FOREIGN, NO_CARD

# the columns of an annotated device event (what a partition's ``events`` frame holds)
EVENT_COLUMNS: tuple[str, ...] = (
    "device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "card_code",
    "shoe_decks", "copy_no", "gaming_day", "source_file", "source_line",
    "lost_before", "quarantined_before", "lost_after",
)


def local_gaming_day(ts: pl.Expr, offset_minutes: pl.Expr, day_start_minutes: int) -> pl.Expr:
    """The gaming day of a UTC instant at a UTC offset: the local date, shifted back by the day's start."""
    local = ts.dt.replace_time_zone(None) + pl.duration(minutes=offset_minutes - day_start_minutes)
    return local.dt.date()


def annotate_events(
    events: pl.DataFrame, rounds: pl.DataFrame, params: AuditParams, quarantine: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Every device event with its shoe's decks, the card's copy number in the shoe, its gaming day, and gaps.

    The gaming day of a dealt card is its round's (the table system's, from ``bets_closed_at``);
    for a round the table system never recorded it is the local date of the card at the table's UTC
    offset (from the table's other rounds; UTC when the table has none).

    ``lost_before`` is how many events the device's ``event_seq`` skips just before this one (and
    ``lost_after`` just after); ``quarantined_before`` how many of those are explained by lines of
    the device's log set aside in ``quarantine`` between the two events that were kept.
    """
    if events.height == 0:
        return pl.DataFrame(schema={c: _EVENT_DTYPES[c] for c in EVENT_COLUMNS})
    ev = events.sort(["device_id", "event_seq"], maintain_order=True)
    shoe_decks = (
        ev.filter(pl.col("event") == "shoe_start")
        .group_by(["table_id", "shoe_id"])
        .agg(pl.col("decks").first().cast(pl.Int64).alias("shoe_decks"))
    )
    ev = ev.join(shoe_decks, on=["table_id", "shoe_id"], how="left")
    ev = ev.with_columns(
        pl.when(pl.col("card_code") >= 0)
        .then(pl.int_range(1, pl.len() + 1).over(["table_id", "shoe_id", "card_code"]))
        .otherwise(None)
        .cast(pl.Int64)
        .alias("copy_no")
    )
    day_of_round = rounds.select("table_id", "round_no", pl.col("gaming_day").alias("_round_day"))
    offsets = rounds.group_by("table_id").agg(pl.col("utc_offset_minutes").first().cast(pl.Int64).alias("_offset"))
    ev = ev.join(day_of_round, on=["table_id", "round_no"], how="left").join(offsets, on="table_id", how="left")
    ev = ev.with_columns(
        pl.coalesce(
            pl.col("_round_day"),
            local_gaming_day(pl.col("ts"), pl.col("_offset").fill_null(0), params.day_start_minutes),
        ).alias("gaming_day")
    )
    ev = ev.sort(["device_id", "event_seq"]).with_columns(
        (pl.col("event_seq") - pl.col("event_seq").shift(1).over("device_id") - 1).fill_null(0).clip(lower_bound=0)
        .alias("lost_before"),
        pl.col("source_file").shift(1).over("device_id").alias("_prev_file"),
        pl.col("source_line").shift(1).over("device_id").alias("_prev_line"),
    )
    ev = ev.with_columns(_quarantined_between(ev, quarantine).alias("quarantined_before"))
    ev = ev.with_columns(pl.col("lost_before").shift(-1).over("device_id").fill_null(0).alias("lost_after"))
    return ev.select(EVENT_COLUMNS)


def _quarantined_between(ev: pl.DataFrame, quarantine: pl.DataFrame | None) -> pl.Series:
    """Per event: quarantined lines of its device's log(s) between it and the device's previous kept event."""
    counts = [0] * ev.height
    if quarantine is None or quarantine.height == 0:
        return pl.Series(counts, dtype=pl.Int64)
    by_file: dict[str, list[int]] = {}
    for f, line in quarantine.select("source_file", "source_line").iter_rows():
        by_file.setdefault(f, []).append(line)
    idx = ev.with_row_index("_i").filter(pl.col("lost_before") > 0)
    for i, file, line, pfile, pline in idx.select("_i", "source_file", "source_line", "_prev_file", "_prev_line").iter_rows():
        if pfile is None:
            continue
        if file == pfile:
            n = sum(1 for q in by_file.get(file, ()) if pline < q < line)
        else:
            n = sum(1 for q in by_file.get(pfile, ()) if q > pline) + sum(1 for q in by_file.get(file, ()) if q < line)
        counts[i] = n
    return pl.Series(counts, dtype=pl.Int64)


_EVENT_DTYPES: dict[str, pl.DataType] = {
    "device_id": pl.String, "table_id": pl.String, "shoe_id": pl.String, "event_seq": pl.Int64,
    "ts": pl.Datetime("us", "UTC"), "event": pl.String, "round_no": pl.Int64, "card": pl.String,
    "card_code": pl.Int16, "shoe_decks": pl.Int64, "copy_no": pl.Int64, "gaming_day": pl.Date,
    "source_file": pl.String, "source_line": pl.Int64, "lost_before": pl.Int64, "quarantined_before": pl.Int64,
    "lost_after": pl.Int64,
}


def reconstruct(events: pl.DataFrame, rounds: pl.DataFrame, params: AuditParams) -> pl.DataFrame:
    """One row per round of the partition: the device's card sequence beside the table system's record.

    ``events`` are annotated device events (:func:`annotate_events`); ``rounds`` the table system's
    rounds (core_rounds). Rounds seen by only one side are kept, with a note saying which.
    """
    dealt = events.filter(pl.col("round_no").is_not_null() & pl.col("event").is_in(["card", "burn"]))
    dealt = dealt.sort(["table_id", "round_no", "device_id", "event_seq"])
    per_round = dealt.group_by(["table_id", "round_no"], maintain_order=True).agg(
        pl.col("gaming_day").first().alias("_device_day"),
        pl.col("device_id").first(),
        pl.col("device_id").unique(maintain_order=True).alias("_devices"),
        pl.col("shoe_id").first().alias("device_shoe_id"),
        pl.col("shoe_id").unique(maintain_order=True).alias("_shoes"),
        pl.col("card_code").fill_null(NO_CARD).cast(pl.Int16).alias("codes"),
        (pl.col("event") == "burn").alias("burns"),
        pl.col("card_code").filter(pl.col("event") == "card").fill_null(NO_CARD).cast(pl.Int16).alias("dealt"),
        ((pl.col("event") == "burn") & (pl.col("card_code") == FOREIGN)).any().alias("foreign_burn"),
        pl.col("card").filter(pl.col("card_code") == FOREIGN).alias("foreign_reads"),
        pl.len().cast(pl.Int64).alias("n_events"),
        pl.col("ts").filter(pl.col("event") == "card").min().alias("first_card_at"),
        pl.col("shoe_decks").first().alias("decks"),
        pl.col("card_code").filter(pl.col("copy_no") > pl.col("shoe_decks")).cast(pl.Int16).alias("excess_cards"),
        pl.col("source_file").first().alias("device_source_file"),
        pl.col("source_line").first().alias("device_source_line"),
        (pl.col("lost_before").sum() + pl.col("lost_after").last()).alias("lost_events"),
        (pl.col("quarantined_before").sum()).alias("_quarantined"),
        pl.col("event_seq").min().alias("_seq_lo"),
        pl.col("event_seq").max().alias("_seq_hi"),
    )
    table = rounds.select(
        "table_id", "round_no", pl.col("gaming_day").alias("_table_day"), pl.col("shoe_id").alias("_table_shoe")
    )
    df = table.join(per_round, on=["table_id", "round_no"], how="full", coalesce=True)
    df = df.with_columns(
        pl.col("_table_day").is_not_null().alias("has_table_record"),
        pl.col("n_events").is_not_null().alias("has_cards"),
        (pl.col("n_events").is_not_null() & (pl.col("lost_events").fill_null(0) == 0)).alias("complete"),
        pl.coalesce("_table_day", "_device_day").alias("gaming_day"),
    )
    df = df.with_columns(_note().alias("note"))
    return conform(df, RECON_SCHEMA).sort(["table_id", "round_no"])


def _note() -> pl.Expr:
    """Why a round cannot be reconstructed, or what the reconstruction had to assume (null: nothing to say)."""
    parts = [
        pl.when(~pl.col("has_cards")).then(
            pl.format("the device recorded no cards for round {} of {}", pl.col("round_no"), pl.col("table_id"))
        ),
        pl.when(~pl.col("has_table_record")).then(
            pl.format("device {} dealt round {} but the table system has no record of it", pl.col("device_id"), pl.col("round_no"))
        ),
        pl.when(pl.col("_shoes").list.len() > 1).then(
            pl.format("the round's cards came from more than one shoe ({}); read in device order", pl.col("_shoes").list.join(", "))
        ),
        pl.when(pl.col("_devices").list.len() > 1).then(
            pl.format("the round's cards came from more than one device ({}); read in device order", pl.col("_devices").list.join(", "))
        ),
        pl.when(
            pl.col("has_cards") & pl.col("has_table_record") & pl.col("_table_shoe").is_not_null()
            & (pl.col("_table_shoe") != pl.col("device_shoe_id"))
        ).then(
            pl.format("the table system names shoe {}, the device dealt from shoe {}: the device's cards stand",
                      pl.col("_table_shoe"), pl.col("device_shoe_id"))
        ),
        pl.when(pl.col("lost_events").fill_null(0) > 0).then(
            pl.format(
                "device {} skipped {} event_seq number(s) within or next to this round's events ({} to {}){}: "
                "a card may be missing, so the round cannot be reconstructed",
                pl.col("device_id"), pl.col("lost_events"), pl.col("_seq_lo"), pl.col("_seq_hi"),
                pl.when(pl.col("_quarantined") > 0)
                .then(pl.format(", {} of its log line(s) there are in quarantine", pl.col("_quarantined")))
                .otherwise(pl.lit("")),
            )
        ),
        pl.when(pl.col("has_cards") & pl.col("decks").is_null()).then(
            pl.format("no shoe_start for shoe {}: the rule set's number of decks is assumed", pl.col("device_shoe_id"))
        ),
    ]
    text = pl.concat_str(parts, separator="; ", ignore_nulls=True)
    return pl.when(text == "").then(None).otherwise(text)
