"""What the report needs from the database, aggregated in SQL: the report itself never opens it.

Everything here reads the audited partitions only (``keys``: (gaming day, table) pairs) through a
read-only connection, and returns small frames: per-bet handle and house win (thousands of rows for a
night of millions of wagers; sums as DECIMAL(38,0), held as Int128: ``pipelines.money``), the findings'
local hour, the source files. The trend is ``pipelines.audit.trend.night_totals``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from pipelines.money import SUM
from pipelines.report.theory import BET_AGGREGATE_SCHEMA

_KEYED = "(gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _report_keys)"


def bet_aggregates(con, keys_table: str = "_report_keys") -> pl.DataFrame:
    """Per game, rule-set version, table, currency and bet: wagers, handle, sum of amount**2, house win.

    Void rounds and wagers the evidence cannot settle still count as handle: hold is what the table took
    on what was wagered (a returned wager adds handle and 0 win, as it does on the floor's own sheets).
    """
    df = con.sql(f"""
        SELECT game, ruleset, ruleset_version, table_id, currency, bet, count(*) AS wagers,
               {SUM.format("amount")} AS handle, sum(CAST(amount AS DOUBLE) * amount) AS handle_sq,
               {SUM.format("-recorded_net")} AS house_win
        FROM out_settlements WHERE {_KEYED.replace('_report_keys', keys_table)}
        GROUP BY ALL ORDER BY ALL""").pl()
    return df.cast(BET_AGGREGATE_SCHEMA) if df.height else pl.DataFrame(schema=BET_AGGREGATE_SCHEMA)


def finding_times(con) -> pl.DataFrame:
    """Per finding of the audited partitions that names a round: the local hour and time (HH:MM:SS) betting closed.

    Local = the UTC instant shifted by the offset the table system wrote (``utc_offset_minutes``).
    """
    return con.sql(f"""
        WITH r AS (
            SELECT table_id, round_no, any_value(epoch_us(bets_closed_at) // 1000000 + 60 * CAST(utc_offset_minutes AS BIGINT)) AS s
            FROM core_rounds WHERE {_KEYED} GROUP BY table_id, round_no)
        SELECT f.finding_id, CAST((r.s % 86400) // 3600 AS INTEGER) AS hour,
               strftime(make_timestamp(r.s * 1000000), '%H:%M:%S') AS closed_local
        FROM out_findings f JOIN r USING (table_id, round_no)
        WHERE (f.gaming_day, f.table_id) IN (SELECT (gaming_day, table_id) FROM _report_keys)""").pl()


def source_files(con) -> pl.DataFrame:
    """Every input file known to the database: kind, status, line accounting and why it could not be read."""
    cols = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'core_source_files'").fetchall()}
    extra = ", rows_duplicate" if "rows_duplicate" in cols else ", 0 AS rows_duplicate"
    return con.sql(f"""SELECT source_file, kind, status, lines_read, rows_accepted, rows_quarantined{extra}, error
                       FROM core_source_files ORDER BY source_file""").pl()


def gather_from(con, keys: list[tuple[dt.date, str]]) -> dict[str, pl.DataFrame]:
    """The report's aggregates for the audited partitions ``keys`` through an open read-only connection:
    ``bets`` (:func:`bet_aggregates`) and ``times`` (:func:`finding_times`)."""
    from pipelines.db import create_keys_table

    create_keys_table(con, "_report_keys", keys)
    return {"bets": bet_aggregates(con), "times": finding_times(con)}


def gather(db_path: Path, keys: list[tuple[dt.date, str]], memory_limit: str | None = None) -> dict[str, pl.DataFrame]:
    """:func:`gather_from`, every source file (:func:`source_files`) and the trend (``pipelines.audit.trend.night_totals``)
    through one bounded read-only connection (``memory_limit``: ``Settings.reader_memory``; None: the default)."""
    from pipelines.audit.trend import night_totals
    from pipelines.db import open_bounded_reader

    con = open_bounded_reader(db_path, *([memory_limit] if memory_limit else []))
    try:
        out = gather_from(con, keys)
        out["files"] = source_files(con)
        out["trend"] = night_totals(con, tuple(sorted({k[0] for k in keys})))
    finally:
        con.close()
    return out


def report_inputs(db_path: Path, keys: list[tuple[dt.date, str]], findings: pl.DataFrame, totals: pl.DataFrame,
                  quarantine: pl.DataFrame, memory_limit: str | None = None):
    """The report's inputs for the audited partitions from a database (benchmarks, tools): what the audit's
    publish step holds already, and :func:`gather`'s frames."""
    from pipelines.report.render import ReportInputs

    got = gather(db_path, keys, memory_limit)
    return ReportInputs(
        findings=findings, totals=totals, days=tuple(sorted({k[0] for k in keys})), tables=len({k[1] for k in keys}),
        quarantined=quarantine.height, bets=got["bets"], trend=got["trend"], quarantine=quarantine,
        source_files=got["files"], finding_times=got["times"], database=str(Path(db_path).resolve()),
    )
