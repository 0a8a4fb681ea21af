"""Joins onto a wide frame that copy only its key columns.

A polars join gathers every column of both sides into a new frame. The audit's wager frame carries
some forty columns, and adding two or three to it by a join copied all forty each time: on a Hold'em
or Blackjack group that copying cost more than the engine's pass. Here the join runs on the left
frame's key columns alone, in the left frame's row order, and the new columns are put beside the
wide frame as they are. The rows and values are the plain join's (``tests/test_audit_joins.py``).
"""

from __future__ import annotations

import polars as pl

_HIT = "__attach_hit"


def attach(left: pl.DataFrame, right: pl.DataFrame, on: list[str], how: str = "left") -> pl.DataFrame:
    """``left.join(right, on=on, how=how)`` for ``how`` "left" or "inner", rows in ``left``'s order.

    Where ``right`` repeats a key (the join would repeat ``left``'s rows) or shares a column name
    with ``left`` besides the keys (the join would rename it), this is the plain join itself.
    """
    if how not in ("left", "inner"):
        raise ValueError(f"attach joins left or inner, not {how!r}")
    overlap = (set(left.columns) & set(right.columns)) - set(on)
    if overlap:
        return left.join(right, on=on, how=how, maintain_order="left")
    if how == "left" and right.height == 0:  # nothing to match: the join's new columns, all null
        return left.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in right.schema.items() if c not in on)
    if how == "inner":
        right = right.with_columns(pl.lit(True).alias(_HIT))
    extra = left.select(on).join(right, on=on, how="left", maintain_order="left")
    if extra.height != left.height:  # a key repeated on the right: the plain join's rows
        return left.join(right.drop(_HIT, strict=False), on=on, how=how, maintain_order="left")
    out = left.hstack(extra.drop(on))
    if how == "inner":
        out = out.filter(pl.col(_HIT).is_not_null()).drop(_HIT)
    return out
