"""Reconstruct every round from the card device's sequence, not from what the table system claims.

A round's evidence is the device's card and burn events carrying its ``round_no``, in the device's
``event_seq`` order (burns kept: the engine checks them against the deal procedure). The number of
decks is the shoe's ``shoe_start``. The table system's record only says which round it is and what
was wagered; where the two disagree, or one is missing, the round's ``note`` says so in a sentence.

What needs a whole shoe or a device's whole event stream, not one round (how many decks the shoe
holds, each card's copy number in the shoe, gaps in the device's event numbering) is annotated on
every event by the loader's query (:mod:`pipelines.audit.load`), before the rows leave DuckDB.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from pipelines.audit.frames import RECON_SCHEMA, conform, in_order
from pipelines.audit.params import AuditParams
from rulebook.cards import FOREIGN, NO_CARD

# the device's order of a round's events: what the engine reads the cards in
DEVICE_ORDER = ["table_id", "round_no", "device_id", "event_seq"]


def reconstruct(events: pl.DataFrame, rounds: pl.DataFrame, params: AuditParams) -> pl.DataFrame:
    """One row per round of the partition: the device's card sequence beside the table system's record.

    ``events`` are annotated device events (``pipelines.audit.load.EVENT_COLUMNS``); ``rounds`` the table system's
    rounds (core_rounds). Rounds seen by only one side are kept, with a note saying which.
    """
    dealt = events.filter(pl.col("round_no").is_not_null() & pl.col("event").is_in(["card", "burn"]))
    # Each round's events are wanted in device order, and the rounds in any order (the result is sorted by round at
    # the end). The load reads the events in (device_id, event_seq) order, which is each round's device order
    # already: then the sort, the costliest step here, is skipped.
    if not in_order(dealt, ["device_id", "event_seq"]):
        dealt = dealt.sort(DEVICE_ORDER)
    per_round = _per_round(
        dealt,
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
        reductions=(
            ("_lost_before", "sum", "lost_before"),
            ("_lost_after", "last", "lost_after"),
            ("_quarantined", "sum", "quarantined_before"),
            ("_seq_lo", "min", "event_seq"),
            ("_seq_hi", "max", "event_seq"),
        ),
    ).with_columns((pl.col("_lost_before") + pl.col("_lost_after")).alias("lost_events"))
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
    df = df.with_columns(_notes(df))
    return conform(df, RECON_SCHEMA).sort(["table_id", "round_no"])


_REDUCE = {"sum": pl.Expr.sum, "min": pl.Expr.min, "max": pl.Expr.max, "last": pl.Expr.last}
_UFUNC = {"sum": np.add, "min": np.minimum, "max": np.maximum}


def _per_round(dealt: pl.DataFrame, *aggs: pl.Expr, reductions: tuple[tuple[str, str, str], ...] = ()) -> pl.DataFrame:
    """``dealt.group_by(["table_id", "round_no"], maintain_order=True).agg(*aggs, *reduced)``, where ``reductions``
    are ``(name, sum | min | max | last, column)``.

    Each round's events come together in device order (one run of equal keys per round): then the rows are grouped
    by the run's number, an integer, instead of hashing the text and integer key of every event, which was most of
    the grouping's cost, and a reduction of an integer column with no null is numpy's over the runs. The groups, their
    order and every aggregate are the same; a round whose events come in two runs takes the grouping by key."""
    runs = dealt.select(pl.struct("table_id", "round_no").rle_id().alias("_run")).to_series()
    if dealt.height:
        starts = np.flatnonzero(np.diff(runs.to_numpy(), prepend=-1))
        if not dealt.select("table_id", "round_no")[starts].is_duplicated().any():
            arrays = {name: _reduced(dealt[column], how, starts) for name, how, column in reductions}
            rest = [_REDUCE[how](pl.col(column)).alias(name) for name, how, column in reductions if arrays[name] is None]
            out = dealt.with_columns(runs).group_by("_run", maintain_order=True).agg(
                pl.col("table_id").first(), pl.col("round_no").first(), *aggs, *rest
            ).drop("_run")
            return out.with_columns(values.alias(name) for name, values in arrays.items() if values is not None)
    return dealt.group_by(["table_id", "round_no"], maintain_order=True).agg(
        *aggs, *(_REDUCE[how](pl.col(column)).alias(name) for name, how, column in reductions)
    )


def _reduced(s: pl.Series, how: str, starts: np.ndarray) -> pl.Series | None:
    """``how`` of ``s`` over the runs beginning at ``starts``, as polars' aggregation gives it (its type included), by
    numpy; None where that is not exact: a null in the column, a type other than a 64-bit integer or a whole
    decimal, a decimal beyond what int64 sums exactly."""
    if s.null_count() or not (s.dtype == pl.Int64 or (isinstance(s.dtype, pl.Decimal) and s.dtype.scale == 0)):
        return None
    if how == "sum" and len(s) and s.abs().max() >= (1 << 62) // len(s):
        return None  # a sum numpy might wrap where polars would not, or the reverse
    values = (s if s.dtype == pl.Int64 else s.cast(pl.Int64)).to_numpy()
    if how == "last":
        out = values[np.append(starts[1:], len(values)) - 1]
    else:
        out = _UFUNC[how].reduceat(values, starts)
    return pl.Series(out, dtype=pl.Int64).cast(s.dtype)


def _note_parts() -> list[tuple[pl.Expr, pl.Expr]]:
    """The note's sentences, each with the condition under which the round gets it."""
    return [
        (~pl.col("has_cards"),
         pl.format("the device recorded no cards for round {} of {}", pl.col("round_no"), pl.col("table_id"))),
        (~pl.col("has_table_record"),
         pl.format("device {} dealt round {} but the table system has no record of it", pl.col("device_id"), pl.col("round_no"))),
        (pl.col("_shoes").list.len() > 1,
         pl.format("the round's cards came from more than one shoe ({}); read in device order", pl.col("_shoes").list.join(", "))),
        (pl.col("_devices").list.len() > 1,
         pl.format("the round's cards came from more than one device ({}); read in device order", pl.col("_devices").list.join(", "))),
        (pl.col("has_cards") & pl.col("has_table_record") & pl.col("_table_shoe").is_not_null()
         & (pl.col("_table_shoe") != pl.col("device_shoe_id")),
         pl.format("the table system names shoe {}, the device dealt from shoe {}: the device's cards stand",
                   pl.col("_table_shoe"), pl.col("device_shoe_id"))),
        (pl.col("lost_events").fill_null(0) > 0,
         pl.format(
             "device {} skipped {} event_seq number(s) within or next to this round's events ({} to {}){}: "
             "a card may be missing, so the round cannot be reconstructed",
             pl.col("device_id"), pl.col("lost_events"), pl.col("_seq_lo"), pl.col("_seq_hi"),
             pl.when(pl.col("_quarantined") > 0)
             .then(pl.format(", {} of its log line(s) there are in quarantine", pl.col("_quarantined")))
             .otherwise(pl.lit("")),
         )),
        (pl.col("has_cards") & pl.col("decks").is_null(),
         pl.format("no shoe_start for shoe {}: the rule set's number of decks is assumed", pl.col("device_shoe_id"))),
    ]


def _note() -> pl.Expr:
    """Why a round cannot be reconstructed, or what the reconstruction had to assume (null: nothing to say)."""
    text = pl.concat_str([pl.when(cond).then(value) for cond, value in _note_parts()], separator="; ", ignore_nulls=True)
    return pl.when(text == "").then(None).otherwise(text)


def _notes(df: pl.DataFrame) -> pl.Series:
    """:func:`_note` of every round, its sentences written only on the rounds that have something to say (a few):
    formatting them on every round and discarding most cost more than the grouping of the events."""
    says = df.select(pl.any_horizontal(cond for cond, _ in _note_parts()).fill_null(False)).to_series().arg_true()
    if len(says) > df.height // 4:
        return df.select(_note().alias("note")).to_series()
    out = pl.repeat(None, df.height, dtype=pl.String, eager=True).alias("note")
    return out.scatter(says, df[says].select(_note()).to_series()) if len(says) else out
