"""Joins onto a wide frame that copy only its key columns.

A polars join gathers every column of both sides into a new frame. The audit's wager frame carries
some forty columns, and adding two or three to it by a join copied all forty each time: on a Hold'em
or Blackjack group that copying cost more than the engine's pass. Here the join runs on the left
frame's key columns alone, in the left frame's row order, and the new columns are put beside the
wide frame as they are. The rows and values are the plain join's (``tests/test_audit_joins.py``).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

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
    at = _round_rows(left, right, on)
    if at is not None:  # a round key, unique on the right: each left row's right row found by an int64 search
        if how == "inner" and (at < 0).any():
            left, at = left.filter(pl.Series(at >= 0)), at[at >= 0]
        return left.hstack(right.drop(on).gather(_gather_index(at)))
    if how == "inner":
        right = right.with_columns(pl.lit(True).alias(_HIT))
    extra = left.select(on).join(right, on=on, how="left", maintain_order="left")
    if extra.height != left.height:  # a key repeated on the right: the plain join's rows
        return left.join(right.drop(_HIT, strict=False), on=on, how=how, maintain_order="left")
    out = left.hstack(extra.drop(on))
    if how == "inner":
        # every row matched (the common case): nothing to filter, where a filter would copy every column
        out = out.drop(_HIT) if not extra[_HIT].null_count() else out.filter(pl.col(_HIT).is_not_null()).drop(_HIT)
    return out


ROUND_BITS = 40  # a round's key: its table's number above 40 bits of round number


def _round_rows(left: pl.DataFrame, right: pl.DataFrame, on: list[str]) -> np.ndarray | None:
    """For ``on`` = (a text key, an integer key) of the same types on both sides, no null in them and no key twice on
    the right: per row of ``left``, the row of ``right`` with its key (-1: none), by numpy over one int64 key per
    row (the table's number above 40 bits of round number), searched once per run of equal left keys. The join on
    the two keys hashed every left row's text; the rows it pairs are these. None for any other shape."""
    if len(on) != 2 or left.height == 0 or right.height == 0:
        return None
    text, number = on
    if not (left[text].dtype == right[text].dtype == pl.String) or left[number].dtype != right[number].dtype \
            or not left[number].dtype.is_integer():
        return None
    if any(frame[c].null_count() for frame in (left, right) for c in on):
        return None
    lr, rr = left[number].to_numpy().astype(np.int64), right[number].to_numpy().astype(np.int64)
    if min(lr.min(), rr.min()) < 0 or max(lr.max(), rr.max()) >= 1 << ROUND_BITS:
        return None
    tables: dict = {}
    rk = (_run_codes(right[text], tables, grow=True) << ROUND_BITS) | rr
    by_key = np.argsort(rk, kind="stable")
    sk = rk[by_key]
    if (sk[1:] == sk[:-1]).any():  # a key twice on the right: the join repeats rows
        return None
    lt = _run_codes(left[text], tables)
    lk = (np.maximum(lt, 0) << ROUND_BITS) | lr
    starts = _run_starts(lk)
    found = np.minimum(np.searchsorted(sk, lk[starts]), len(sk) - 1)
    at = np.repeat(np.where(sk[found] == lk[starts], by_key[found], -1), np.diff(np.append(starts, len(lk))))
    at[lt < 0] = -1  # a table the right side does not have
    return at


def attach_round_blocks(left: pl.DataFrame, right: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """``attach(left, right, on)`` (a left join) for ``on`` = (table, round number, an id within the round), where
    ``right`` holds every row of some of ``left``'s rounds, each round's rows together and in ``left``'s order: an
    engine pass's results beside the wagers it settled.

    Then each right row's place in ``left`` is its round's first row plus its rank in the round, found by numpy over
    one int64 key per round, and the ids are compared at those places; no key is hashed, which was most of the
    join's cost (three keys, two of them text, on every wager). Anything else (rows out of that shape, a null key,
    an id twice in a round, a shared column name) is the plain :func:`attach`.
    """
    at = _block_rows(left, right, on)
    if at is None:
        return attach(left, right, on)
    extra = right.drop(on)
    if len(at) == left.height and (at == np.arange(left.height)).all():
        return left.hstack(extra)
    # a gather from one chunk: the engine's frames come in several, and a gather across chunks costs several times more
    return left.hstack(extra.rechunk().gather(_gather_index(at)))


def _block_rows(left: pl.DataFrame, right: pl.DataFrame, on: list[str]) -> np.ndarray | None:
    """Per row of ``left``: the row of ``right`` with its key (-1: none), when ``right`` has the shape
    :func:`attach_round_blocks` asks for; else None."""
    if len(on) != 3 or left.height == 0 or right.height == 0 or (set(left.columns) & set(right.columns)) - set(on):
        return None
    table, round_no, ident = on
    for frame in (left, right):
        if any(frame[c].null_count() for c in on) or not frame[round_no].dtype.is_integer():
            return None
    lr, rr = left[round_no].to_numpy(), right[round_no].to_numpy()
    if lr.min() < 0 or rr.min() < 0 or max(lr.max(), rr.max()) >= 1 << ROUND_BITS:
        return None
    tables: dict = {}  # numbered in the order left first shows them, as left[table].unique(maintain_order=True)
    lk = (_run_codes(left[table], tables, grow=True) << ROUND_BITS) | lr.astype(np.int64)
    rk = (_run_codes(right[table], tables) << ROUND_BITS) | rr.astype(np.int64)
    if (rk < 0).any() or (lk[1:] < lk[:-1]).any():  # a table left does not have; left not in round order
        return None
    left_start = _run_starts(lk)
    left_len = np.diff(np.append(left_start, len(lk)))
    run_start = _run_starts(rk)
    run_len = np.diff(np.append(run_start, len(rk)))
    block = np.minimum(np.searchsorted(lk[left_start], rk[run_start]), len(left_start) - 1)
    if ((lk[left_start][block] != rk[run_start]).any() or (left_len[block] != run_len).any()
            or (np.bincount(block, minlength=len(left_start)) > 1).any()):  # a round split in two runs, or not whole
        return None
    pos = np.repeat(left_start[block] - run_start, run_len) + np.arange(len(rk))
    if not (left[ident].gather(pl.Series(pos)) == right[ident]).all():
        return None
    # an id twice in a round would make the join repeat rows
    if right[ident].n_unique() != right.height and right.select(pl.struct(table, round_no, ident).is_duplicated().any()).item():
        return None
    at = np.full(left.height, -1, dtype=np.int64)
    at[pos] = np.arange(len(pos))
    return at


def _run_codes(s: pl.Series, index: dict, grow: bool = False) -> np.ndarray:
    """``index[value]`` for every value of ``s`` (-1 for any other), looked up once per run of equal values (the
    frames come grouped by table: a few runs); with ``grow``, a value not in ``index`` is added with the next number."""
    runs = s.rle_id().to_numpy()
    starts = _run_starts(runs)
    values = s.gather(pl.Series(starts)).to_list()
    if grow:
        for v in values:
            index.setdefault(v, len(index))
    return np.array([index.get(v, -1) for v in values], dtype=np.int64)[runs]


def _run_starts(keys: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``keys`` (not empty) begins."""
    return np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))


def _gather_index(at: np.ndarray) -> pl.Series:
    """``at`` (a right row per left row, -1: none) as the index of a gather: a null where there is no row."""
    return pl.Series(at) if (at >= 0).all() else pl.Series(pa.array(np.maximum(at, 0), mask=at < 0), dtype=pl.Int64)
