"""Sums and differences of money that cannot overflow.

An amount is a signed 64-bit integer (BIGINT, polars Int64) in the currency's smallest unit, and the
ingest refuses amounts beyond a bound (``PITAUDIT_MAX_AMOUNT``). Still, a night's total of many large
legal amounts, or the difference of two nets near the limit, does not fit 64 bits: polars wraps
silently (2**63 - 1 + 10 becomes a large negative number) and a DuckDB ``CAST(... AS BIGINT)`` of a
sum stops the query. So:

- a total is summed by DuckDB as HUGEINT and read as DECIMAL(38,0) (:data:`SUM`), then held as
  polars Int128 (:func:`wide_money`): 10**38 is far beyond any night;
- a difference is computed in Int128 and kept where it fits the Int64 column; where it would not, it
  is null, and never a wrapped number (:func:`checked_difference`); the finding itself does not depend
  on it (a mismatch is ``recorded_net != expected_net``).
"""

from __future__ import annotations

import polars as pl

# a DuckDB sum of a BIGINT column, exact and as wide as a night needs (read as a polars Decimal, then Int128)
SUM = "CAST(sum({}) AS DECIMAL(38,0))"

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def wide_money(df: pl.DataFrame, columns) -> pl.DataFrame:
    """The money totals ``columns`` of ``df`` as Int128 (from DuckDB's DECIMAL(38,0), or any integer)."""
    return df.with_columns(pl.col(c).cast(pl.Int128) for c in columns if c in df.columns)


def checked_difference(recorded: str | pl.Expr, expected: str | pl.Expr) -> pl.Expr:
    """``recorded - expected`` without wrapping: Int64 where it fits, null where it would overflow."""
    rec = (pl.col(recorded) if isinstance(recorded, str) else recorded).cast(pl.Int128)
    exp = (pl.col(expected) if isinstance(expected, str) else expected).cast(pl.Int128)
    d = rec - exp
    return pl.when(d.is_between(INT64_MIN, INT64_MAX)).then(d).otherwise(None).cast(pl.Int64)


def money_for_files(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with its Int128 columns (money totals, :func:`wide_money`) as DECIMAL(38,0), ready for a Parquet file.

    Parquet has no 128-bit integer type: polars writes an Int128 column as 16 raw bytes with no logical type, and
    reads it back as Int128, but DuckDB, pyarrow, pandas and spreadsheets read those bytes as a blob. A file
    another tool may read (an investigation's rows, the statistics' scratch files DuckDB loads) holds the totals
    as DECIMAL(38,0), which every Parquet reader takes as the number it is."""
    return df.with_columns(pl.col(pl.Int128).cast(pl.Decimal(38, 0))) if pl.Int128 in df.dtypes else df


def int128_of_blobs(blobs: pl.Series) -> pl.Series:
    """Totals a table stored as the 16 little-endian bytes of an Int128 (a Parquet file written without
    :func:`money_for_files`) back as the numbers they are."""
    return pl.Series(blobs.name, [None if b is None else int.from_bytes(b, "little", signed=True) for b in blobs.to_list()],
                     dtype=pl.Int128)
