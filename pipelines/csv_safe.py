"""CSV files a person may open in a spreadsheet, with no value read as a formula (CSV formula injection).

A spreadsheet takes a cell that begins with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a
carriage return before them) as a formula: a log line holding ``=HYPERLINK("http://...")`` would
become a live link in an auditor's sheet. Every *text* value that begins with one of those characters
is written with a leading ``'`` (OWASP's advice; the spreadsheet shows the text, and the quote tells
a reader it was added). Numbers stay numbers: ``-9500`` in an Int64 column is a net, not a formula,
and is written as it is. Only the CSV files change; Parquet and DuckDB keep every value as read.

Every CSV writer of the project (findings.csv, quarantine.csv, the investigation exports) goes
through :func:`write_csv` or applies :func:`neutralise` itself.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PATTERN = r"^[=+\-@\t\r]"


def neutralise(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with a ``'`` before every text value that a spreadsheet would take for a formula."""
    text = [c for c, t in df.schema.items() if t == pl.String]
    if not text:
        return df
    return df.with_columns(
        pl.when(pl.col(c).str.contains(_PATTERN)).then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
        for c in text
    )


def neutralise_text(value: str | None) -> str | None:
    """One value, the same rule (for writers that do not use polars)."""
    if value and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(df: pl.DataFrame, path: Path, **options) -> Path:
    """``df`` as a CSV a spreadsheet can open safely (:func:`neutralise`), dates as ``YYYY-MM-DD``."""
    options.setdefault("date_format", "%Y-%m-%d")
    neutralise(df).write_csv(path, **options)
    return path
