"""What the report needs from the database, aggregated in SQL: the report itself never opens it.

Everything here reads the audited partitions only (``keys``: (gaming day, table) pairs) through one
bounded read-only connection, and returns small frames: per-bet handle and house win (thousands of rows
for a night of millions of wagers), the findings' local hour, the source files, the previous nights.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from pipelines.report.theory import BET_AGGREGATE_SCHEMA

# the trend's frame: one row per gaming day and currency (render_report draws it when given; any other
# per-night function may feed it with these columns)
NIGHTS_SCHEMA: dict[str, pl.DataType] = {
    "gaming_day": pl.Date, "currency": pl.String, "rounds": pl.Int64, "wagers": pl.Int64, "handle": pl.Int64,
    "house_win": pl.Int64, "findings": pl.Int64, "high": pl.Int64, "overpaid": pl.Int64, "underpaid": pl.Int64,
}

_KEYED = "(gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _report_keys)"


def bet_aggregates(con, keys_table: str = "_report_keys") -> pl.DataFrame:
    """Per game, rule-set version, table, currency and bet: wagers, handle, sum of amount**2, house win.

    Void rounds and wagers the evidence cannot settle still count as handle: hold is what the table took
    on what was wagered (a returned wager adds handle and 0 win, as it does on the floor's own sheets).
    """
    df = con.sql(f"""
        SELECT game, ruleset, ruleset_version, table_id, currency, bet, count(*) AS wagers,
               CAST(sum(amount) AS BIGINT) AS handle, sum(CAST(amount AS DOUBLE) * amount) AS handle_sq,
               CAST(-sum(recorded_net) AS BIGINT) AS house_win
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


def night_totals(con, last_day: dt.date, nights: int = 30) -> pl.DataFrame:
    """The trend: per gaming day (the ``nights`` up to ``last_day``) and currency, from every partition in the database."""
    first = last_day - dt.timedelta(days=nights - 1)
    df = con.sql("""
        WITH s AS (
            SELECT gaming_day, currency, count(DISTINCT (table_id, round_no)) AS rounds, count(*) AS wagers,
                   CAST(sum(amount) AS BIGINT) AS handle, CAST(-sum(recorded_net) AS BIGINT) AS house_win
            FROM out_settlements WHERE gaming_day BETWEEN ? AND ? GROUP BY ALL),
        f AS (
            SELECT gaming_day, currency, count(*) AS findings, count(*) FILTER (WHERE severity = 'high') AS high,
                   CAST(coalesce(sum(difference) FILTER (WHERE difference > 0), 0) AS BIGINT) AS overpaid,
                   CAST(coalesce(-sum(difference) FILTER (WHERE difference < 0), 0) AS BIGINT) AS underpaid
            FROM out_findings WHERE gaming_day BETWEEN ? AND ? AND currency IS NOT NULL GROUP BY ALL)
        SELECT gaming_day, currency, coalesce(rounds, 0) AS rounds, coalesce(wagers, 0) AS wagers,
               coalesce(handle, 0) AS handle, coalesce(house_win, 0) AS house_win, coalesce(findings, 0) AS findings,
               coalesce(high, 0) AS high, coalesce(overpaid, 0) AS overpaid, coalesce(underpaid, 0) AS underpaid
        FROM s FULL JOIN f USING (gaming_day, currency) ORDER BY gaming_day, currency""",
        params=[first, last_day, first, last_day]).pl()
    return df.cast(NIGHTS_SCHEMA) if df.height else pl.DataFrame(schema=NIGHTS_SCHEMA)


def gather(db_path: Path, keys: list[tuple[dt.date, str]], trend_nights: int = 30,
           memory_limit: str | None = None) -> dict[str, pl.DataFrame]:
    """Everything above for the audited partitions ``keys``, through one bounded read-only connection
    (``memory_limit``: the readers' limit, ``Settings.reader_memory``; None: the default)."""
    from pipelines.db import create_keys_table, open_bounded_reader

    con = open_bounded_reader(db_path, *([memory_limit] if memory_limit else []))
    try:
        create_keys_table(con, "_report_keys", keys)
        out = {"bets": bet_aggregates(con), "times": finding_times(con), "files": source_files(con)}
        days = [k[0] for k in keys]
        out["nights"] = night_totals(con, max(days), trend_nights) if days else pl.DataFrame(schema=NIGHTS_SCHEMA)
    finally:
        con.close()
    return out


def report_inputs(db_path: Path, keys: list[tuple[dt.date, str]], out_dir: Path, findings: pl.DataFrame,
                  totals: pl.DataFrame, quarantine: pl.DataFrame, files: tuple = (), memory_limit: str | None = None):
    """The report's inputs for the audited partitions: what publish already holds, and :func:`gather`'s frames."""
    import os

    from pipelines.report.render import ReportInputs

    got = gather(db_path, keys, memory_limit=memory_limit)
    try:
        database = os.path.relpath(Path(db_path).resolve(), Path(out_dir).resolve())
    except ValueError:  # another drive (Windows)
        database = str(Path(db_path).resolve())
    return ReportInputs(
        findings=findings, totals=totals, days=tuple(sorted({k[0] for k in keys})), tables=len({k[1] for k in keys}),
        quarantined=quarantine.height, input_files=files, bets=got["bets"], nights=got["nights"],
        quarantine=quarantine, source_files=got["files"], finding_times=got["times"], database=database,
    )
