"""Tonight against the previous nights: per-night totals for the report's trend.

The report shows the audited days, not the sum of every night in the database; beside them, the
nights before (at most :data:`TREND_NIGHTS` of them, so the query reads a bounded slice of the
``out_`` tables whatever the history): rounds, handle (the amount wagered), the players' net as
recorded and as the rules say, and the findings of each night. Plain data, no rendering: the
report (pipelines/report) draws it, and anything else may read it.

Sums are DuckDB HUGEINT cast to DECIMAL(38,0) and read as polars Int128: a night of wagers at the
ingest's bound cannot overflow them (``pipelines.money``).
"""

from __future__ import annotations

import datetime as dt

import duckdb
import polars as pl

from pipelines.money import SUM, wide_money

TREND_NIGHTS = 30

TREND_SCHEMA: dict[str, pl.DataType] = {
    "gaming_day": pl.Date,
    "currency": pl.String,
    "tonight": pl.Boolean,  # one of the days this run audited
    "rounds": pl.Int64,
    "wagers": pl.Int64,
    "handle": pl.Int128,
    "recorded_net": pl.Int128,
    "expected_net": pl.Int128,
    "findings": pl.Int64,
    "high_findings": pl.Int64,
}


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0])


def night_totals(con: duckdb.DuckDBPyConnection, days: tuple[dt.date, ...], nights: int = TREND_NIGHTS) -> pl.DataFrame:
    """One row per (gaming day, currency) for ``days`` and the ``nights`` gaming days before the first of them,
    in day order (TREND_SCHEMA). Nights with no audited row are absent (the report says so)."""
    if not days or not _has(con, "out_settlements"):
        return pl.DataFrame(schema=TREND_SCHEMA)
    lo, hi = min(days) - dt.timedelta(days=nights), max(days)
    settled = con.sql(f"""
        SELECT gaming_day, currency, count(DISTINCT (table_id, round_no)) AS rounds, count(*) AS wagers,
               {SUM.format("amount")} AS handle, {SUM.format("recorded_net")} AS recorded_net,
               {SUM.format("expected_net")} AS expected_net
        FROM out_settlements WHERE gaming_day BETWEEN ? AND ?
        GROUP BY gaming_day, currency""", params=[lo, hi]).pl()
    found = con.sql("""
        SELECT gaming_day, currency, count(*) AS findings, count(*) FILTER (WHERE severity = 'high') AS high_findings
        FROM out_findings WHERE gaming_day BETWEEN ? AND ? GROUP BY gaming_day, currency""", params=[lo, hi]).pl() \
        if _has(con, "out_findings") else pl.DataFrame(schema={"gaming_day": pl.Date, "currency": pl.String,
                                                               "findings": pl.Int64, "high_findings": pl.Int64})
    if settled.height == 0 and found.height == 0:
        return pl.DataFrame(schema=TREND_SCHEMA)
    settled = wide_money(settled, ("handle", "recorded_net", "expected_net"))
    out = settled.join(found.with_columns(pl.col("gaming_day").cast(pl.Date)), on=["gaming_day", "currency"],
                       how="full", coalesce=True, nulls_equal=True)
    tonight = pl.Series(sorted(days), dtype=pl.Date).implode()
    return out.with_columns(
        pl.col("gaming_day").cast(pl.Date),
        pl.col("gaming_day").cast(pl.Date).is_in(tonight).alias("tonight"),
        *(pl.col(c).fill_null(0).cast(pl.Int64) for c in ("rounds", "wagers", "findings", "high_findings")),
    ).select(list(TREND_SCHEMA)).cast(TREND_SCHEMA).sort(["gaming_day", "currency"], nulls_last=True)
