"""Publish the audit: the ``out_`` tables in DuckDB (the flow's one writer) and the files of the output contract.

- ``out_findings`` and ``out_settlements`` are replaced partition by partition (gaming day x table)
  inside one transaction, so a re-run over the same input leaves the same rows.
- ``findings.csv`` (the contract's columns first, then ``game, ruleset, ruleset_version, currency,
  device_id``), ``settlements.parquet`` (one row per wager), ``quarantine.csv`` (every line set
  aside) and ``report.html`` (self-contained). Rows are sorted and nothing depends on the clock, so
  the same input yields byte-identical CSV files.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from pipelines.audit.frames import FINDINGS_SCHEMA, SETTLEMENTS_SCHEMA, conform
from pipelines.audit.findings import sort_findings
from pipelines.db import open_writer

_DUCK_TYPES = {
    pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Int16: "SMALLINT", pl.Int32: "INTEGER", pl.Date: "DATE",
    pl.Boolean: "BOOLEAN",
}

OUT_TABLES: dict[str, dict[str, pl.DataType]] = {
    "out_findings": FINDINGS_SCHEMA,
    "out_settlements": SETTLEMENTS_SCHEMA,
}


def _ddl(name: str, schema: dict[str, pl.DataType]) -> str:
    cols = ",\n    ".join(f"{c} {_DUCK_TYPES[type(t) if not isinstance(t, type) else t]}" for c, t in schema.items())
    return f"CREATE TABLE {name} (\n    {cols}\n)"


def _ensure(con, name: str, schema: dict[str, pl.DataType]) -> None:
    """Create the table, or rebuild it when its columns are not this version's (out_ tables are derived data)."""
    existing = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [name]
    ).fetchall()
    if [r[0] for r in existing] == list(schema):
        return
    if existing:
        con.execute(f"DROP TABLE {name}")
    con.execute(_ddl(name, schema))


def write_database(
    db_path: Path, keys: list[tuple[dt.date, str]], findings: pl.DataFrame, settlements: pl.DataFrame
) -> None:
    """Replace the audited partitions' rows of out_findings and out_settlements, in one transaction."""
    con = open_writer(db_path)
    try:
        for name, schema in OUT_TABLES.items():
            _ensure(con, name, schema)
        key_frame = pl.DataFrame(keys, schema={"gaming_day": pl.Date, "table_id": pl.String}, orient="row")
        con.execute("BEGIN TRANSACTION")
        try:
            con.register("_keys", key_frame.to_arrow())
            for name, df in (("out_findings", findings), ("out_settlements", settlements)):
                con.execute(
                    f"DELETE FROM {name} WHERE (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _keys)"
                )
                con.register("_rows", conform(df, OUT_TABLES[name]).to_arrow())
                con.execute(f"INSERT INTO {name} SELECT * FROM _rows")
                con.unregister("_rows")
            con.unregister("_keys")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.close()


def write_files(
    out_dir: Path, findings: pl.DataFrame, settlements: pl.DataFrame, quarantine: pl.DataFrame
) -> dict[str, Path]:
    """findings.csv, settlements.parquet and quarantine.csv (the report is written by pipelines.report)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "findings": out_dir / "findings.csv",
        "settlements": out_dir / "settlements.parquet",
        "quarantine": out_dir / "quarantine.csv",
    }
    sort_findings(conform(findings, FINDINGS_SCHEMA)).write_csv(paths["findings"], date_format="%Y-%m-%d")
    conform(settlements, SETTLEMENTS_SCHEMA).sort(
        ["gaming_day", "table_id", "round_no", "wager_order", "wager_id"], nulls_last=True
    ).write_parquet(paths["settlements"], statistics=False)
    quarantine.select("source_file", "source_line", "reason", "raw").sort(
        ["source_file", "source_line", "reason"]
    ).write_csv(paths["quarantine"])
    return paths
