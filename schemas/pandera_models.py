"""Pandera (polars) models generated from the column metadata, one per input and per canonical table.

Each rule becomes a ``pa.Check`` whose ``error`` is the rule's reason code, so a failure case says
directly why its row is quarantined. Validate eagerly on collected frames with ``lazy=True``
(``validate_frame``): pandera's polars backend checks data only on a ``DataFrame`` (a LazyFrame
validation checks names and types only), and ``lazy=True`` collects every failure case instead of
stopping at the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pandera.polars as pa
import polars as pl
from pandera.errors import SchemaError, SchemaErrors

from schemas.inputs import INPUT_TABLES
from schemas.metadata import Field, Rule, RowRule, Table
from schemas.rules import column_expr, row_expr
from schemas.tables import CANONICAL_TABLES
from schemas.vocabulary import Vocabulary, builtin_vocabulary

POLARS_TYPES: dict[str, pl.DataType] = {
    "text": pl.String(),
    "bigint": pl.Int64(),
    "integer": pl.Int32(),
    "smallint": pl.Int16(),
    "boolean": pl.Boolean(),
    "timestamptz": pl.Datetime("us", "UTC"),
    "date": pl.Date(),
    "text[]": pl.List(pl.String()),
    "json": pl.String(),
}

# pandera's own checks -> our reason codes
_PANDERA_CHECK_CODES = {"not_nullable": "missing_field"}


def polars_schema(t: Table) -> dict[str, pl.DataType]:
    """Column name -> polars dtype, in table order (to build or cast frames)."""
    return {f.name: POLARS_TYPES[f.type] for f in t.fields}


def _column_check(rule: Rule, col: str, vocab: Vocabulary) -> pa.Check:
    expr = column_expr(rule, col, vocab)
    return pa.Check(lambda data, e=expr: data.lazyframe.select(e), name=rule.code, error=rule.code)


def _row_check(rule: RowRule, vocab: Vocabulary) -> pa.Check:
    expr = row_expr(rule, vocab)
    return pa.Check(lambda data, e=expr: data.lazyframe.select(e), name=rule.code, error=rule.code)


def _column(f: Field, vocab: Vocabulary) -> pa.Column:
    return pa.Column(
        POLARS_TYPES[f.type],
        nullable=not f.required,
        checks=[_column_check(r, f.name, vocab) for r in f.rules],
        description=f.description,
        title=f.name,
    )


def build_model(t: Table, vocab: Vocabulary) -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {f.name: _column(f, vocab) for f in t.fields},
        checks=[_row_check(r, vocab) for r in t.row_rules],
        name=t.name,
        description=t.description,
        strict=True,
        ordered=False,
    )


@cache
def model(name: str, vocab: Vocabulary | None = None) -> pa.DataFrameSchema:
    """The pandera model of an input (``input_*``) or a canonical table (``core_*``), by name."""
    v = vocab or builtin_vocabulary()
    for t in (*INPUT_TABLES, *CANONICAL_TABLES):
        if t.name == name:
            return build_model(t, v)
    raise KeyError(f"no table or input named {name!r}")


@dataclass(frozen=True)
class Failure:
    """One failure case: the frame row, the column (null for a row check), the reason code, the value."""

    row: int
    column: str | None
    code: str
    value: str | None


def validate_frame(df: pl.DataFrame, schema: pa.DataFrameSchema) -> pl.DataFrame:
    """Validate a collected frame; return its failure cases as a frame ``(row, column, code, value)``.

    An empty frame means every row passed. A failure that is not about rows (a missing column, a
    wrong dtype) is a defect of the loader, not of the input: it raises.
    """
    empty = pl.DataFrame(schema={"row": pl.Int64, "column": pl.String, "code": pl.String, "value": pl.String})
    try:
        schema.validate(df, lazy=True)
    except SchemaErrors as exc:
        fc = exc.failure_cases
        if fc["index"].null_count():
            bad = fc.filter(pl.col("index").is_null())
            raise SchemaError(schema, df, f"{schema.name}: frame-level failure: {bad.to_dicts()[:3]}") from exc
        return fc.select(
            pl.col("index").cast(pl.Int64).alias("row"),
            pl.col("column").cast(pl.String),
            pl.col("check").replace(_PANDERA_CHECK_CODES).alias("code"),
            pl.col("failure_case").cast(pl.String).alias("value"),
        )
    return empty
