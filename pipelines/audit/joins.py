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


def attach(
    left: pl.DataFrame, right: pl.DataFrame, on: list[str], how: str = "left", single: str | None = None
) -> pl.DataFrame:
    """``left.join(right, on=on, how=how)`` for ``how`` "left" or "inner", rows in ``left``'s order.

    Where ``right`` repeats a key (the join would repeat ``left``'s rows) or shares a column name
    with ``left`` besides the keys (the join would rename it), this is the plain join itself.

    ``single``: one of ``on`` that alone names a row of ``right`` on any night (a wager id). The join then
    hashes that column only and checks the other keys equal on every row it matched: half the cost of
    hashing two text keys and a number. Where a match differs in another key, or the column repeats on
    ``right``, it is the join on all of ``on``.
    """
    if how not in ("left", "inner"):
        raise ValueError(f"attach joins left or inner, not {how!r}")
    overlap = (set(left.columns) & set(right.columns)) - set(on)
    if overlap:
        return left.join(right, on=on, how=how, maintain_order="left")
    if how == "left" and right.height == 0:  # nothing to match: the join's new columns, all null
        return left.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in right.schema.items() if c not in on)
    if single is not None and right.height:
        out = _attach_on_one(left, right, on, how, single)
        if out is not None:
            return out
    if how == "inner":
        right = right.with_columns(pl.lit(True).alias(_HIT))
    extra = left.select(on).join(right, on=on, how="left", maintain_order="left")
    if extra.height != left.height:  # a key repeated on the right: the plain join's rows
        return left.join(right.drop(_HIT, strict=False), on=on, how=how, maintain_order="left")
    out = left.hstack(extra.drop(on))
    if how == "inner":
        out = out.filter(pl.col(_HIT).is_not_null()).drop(_HIT)
    return out


def _attach_on_one(left: pl.DataFrame, right: pl.DataFrame, on: list[str], how: str, single: str) -> pl.DataFrame | None:
    """``attach`` joined on ``single`` alone, or None where that is not the join on all of ``on``."""
    others = {k: f"{_HIT}_{k}" for k in on if k != single}
    # in one chunk: a text key in several chunks (an engine's pieces) made the one-key join slower than three keys
    extra = left.select(on).join(
        right.rechunk().rename(others).with_columns(pl.lit(True).alias(_HIT)), on=single, how="left", maintain_order="left"
    )
    if extra.height != left.height:  # ``single`` repeated on the right
        return None
    # every matched row agrees on the other keys (a null key never matches, as in the join on all of them)
    agree = pl.all_horizontal([pl.col(k) == pl.col(r) for k, r in others.items()]) | pl.col(_HIT).is_null()
    if not extra.select(agree.fill_null(False).all()).item():
        return None
    hit = extra[_HIT]
    out = left.hstack(extra.drop([*on, *others.values(), _HIT]))
    return out.filter(hit.is_not_null()) if how == "inner" else out
