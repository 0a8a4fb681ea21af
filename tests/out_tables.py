"""A database holding only given ``out_`` rows (and its read-only snapshot), for tests of what readers build."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from pipelines.audit.frames import FINDINGS_SCHEMA, SETTLEMENTS_SCHEMA, conform
from pipelines.db import open_writer, publish_snapshot


def database_with(db: Path, settlements: list[dict], findings: list[dict]) -> Path:
    """``db`` with ``out_settlements`` and ``out_findings`` holding these rows (the other columns null)."""
    con = open_writer(db)
    for name, rows, schema in (("out_settlements", settlements, SETTLEMENTS_SCHEMA), ("out_findings", findings, FINDINGS_SCHEMA)):
        frame = conform(pl.DataFrame(rows, schema_overrides={k: v for k, v in schema.items() if k in rows[0]}), schema)
        con.register("frame", frame.to_arrow())
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
        con.unregister("frame")
    con.close()
    publish_snapshot(db)
    return db
