"""Which partitions need re-settling: a fingerprint of each one's evidence, kept with its audited rows.

A partition (gaming day x table) is re-settled only when what decides its findings changed since it was
last audited: its rounds, their wagers and actions, the device events dealt to them (and to the rounds the
table system never recorded), or the audit itself (the rule sets and the code of the rules engine and the
audit). Its fingerprint is the count and the sum of DuckDB's ``hash`` of every such row, whole (every
column, the source included), with the code's hash: a row added, removed or changed changes it. The
audited fingerprints live in ``out_partitions``, written in the same transaction as the partition's
``out_findings`` and ``out_settlements`` rows, so they can never describe rows that are not there.

A re-run over an unchanged database re-settles nothing and publishes the same outputs from the stored rows.
Only tonight's partitions are fingerprinted (the rounds of the audited days, by their ``gaming_day``; the
device events within the days' window), so the check does not grow with the history.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

from pipelines.audit.load import Window, _orphan_rounds
from pipelines.audit.params import AuditParams
from pipelines.db import create_keys_table

OUT_PARTITIONS = "out_partitions"
OUT_PARTITIONS_DDL = f"""CREATE TABLE IF NOT EXISTS {OUT_PARTITIONS} (
    gaming_day DATE NOT NULL,
    table_id VARCHAR NOT NULL,
    fingerprint VARCHAR NOT NULL,
    rounds BIGINT NOT NULL,
    PRIMARY KEY (gaming_day, table_id)
)"""

_ROOT = Path(__file__).resolve().parents[2]
# what decides a finding besides the evidence: the rules engine, the rule sets, the audit's own code
_CODE = (("rulebook", "*.py"), ("rulebook", "*.toml"), ("pipelines/audit", "*.py"), ("schemas", "*.py"))


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the rules engine, the rule sets and the audit's code: a new version re-audits every partition."""
    h = hashlib.sha256()
    for folder, pattern in _CODE:
        for path in sorted((_ROOT / folder).rglob(pattern)):
            if "__pycache__" in path.parts:
                continue
            h.update(path.relative_to(_ROOT).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def partition_fingerprints(con: duckdb.DuckDBPyConnection, keys: list[tuple[dt.date, str]],
                           params: AuditParams) -> dict[tuple[dt.date, str], str]:
    """The fingerprint of each partition of ``keys`` (module docstring), read with ``con``."""
    if not keys:
        return {}
    window = Window(tuple(sorted({k[0] for k in keys})))
    cur = con.cursor()
    try:
        create_keys_table(cur, "_fp_keys", keys)
        wagers_read, actions_read = _first_reads(cur, window)
        rows = cur.execute(f"""
            WITH r AS (
                SELECT r.gaming_day, r.table_id, r.round_no, hash(r) AS h FROM core_rounds r
                WHERE {window.rounds("r")}
                  AND (r.gaming_day, r.table_id) IN (SELECT (gaming_day, table_id) FROM _fp_keys)
            ),
            orphans AS (
                SELECT gaming_day, table_id, round_no, 0 AS h FROM ({_orphan_rounds(params.day_start_minutes, window)})
                WHERE (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _fp_keys)
            ),
            dealt AS (SELECT * FROM r UNION ALL SELECT * FROM orphans),
            rows AS (
                SELECT gaming_day, table_id, h FROM dealt
                UNION ALL
                SELECT d.gaming_day, d.table_id, hash(w) FROM core_wagers w JOIN r d USING (table_id, round_no)
                WHERE {wagers_read}
                UNION ALL
                SELECT d.gaming_day, d.table_id, hash(a) FROM core_actions a JOIN r d USING (table_id, round_no)
                WHERE {actions_read}
                UNION ALL
                SELECT d.gaming_day, d.table_id, hash(e) FROM core_device_events e
                JOIN dealt d ON d.table_id = e.table_id AND d.round_no = e.round_no
                WHERE {window.events("e")}
            )
            SELECT gaming_day, table_id, count(*) AS n, CAST(sum(CAST(h AS HUGEINT)) AS VARCHAR) AS s
            FROM rows GROUP BY gaming_day, table_id""").fetchall()
        cur.execute("DROP TABLE _fp_keys")
    finally:
        cur.close()
    code = code_fingerprint()
    found = {(day, table): f"{code}:{n}:{s}" for day, table, n, s in rows}
    return {k: hashlib.sha256(found.get(k, f"{code}:0:0").encode()).hexdigest()[:32] for k in keys}


def _first_reads(cur: duckdb.DuckDBPyConnection, window: Window) -> tuple[str, str]:
    """SQL conditions on ``core_wagers w`` and ``core_actions a`` that keep every row of the rounds of ``_fp_keys``:
    near the rounds' times (``load._near_rounds``) when that finds as many as the rounds' counts say they hold (a
    round's rows are its line's list, never more than its count), else ``TRUE``. Neither table has a gaming day: the
    join alone read every night's wagers and actions (3.06 M and 1.28 M rows at 30 nights of 20,000 rounds) to find
    tonight's; near the rounds' times DuckDB skips the other nights' row groups by their min/max. The rows hashed are
    the same either way, so the fingerprints are too."""
    from pipelines.audit.load import _near_rounds

    in_keys = f"{window.rounds('r')} AND (r.gaming_day, r.table_id) IN (SELECT (gaming_day, table_id) FROM _fp_keys)"
    rounds = cur.sql(f"""SELECT bets_open_at, bets_closed_at, settled_at, wager_count, action_count
                             FROM core_rounds r WHERE {in_keys}""").pl()
    of_rounds = f"JOIN (SELECT table_id, round_no FROM core_rounds r WHERE {in_keys}) k USING (table_id, round_no)"
    reads = []
    for table, alias, column, count, extra in (("core_wagers", "w", "placed_at", "wager_count", ""),
                                               ("core_actions", "a", "ts", "action_count", "a.ts IS NULL OR ")):
        near = _near_rounds(rounds, f"{alias}.{column}")
        if near is not None:
            near = f"({extra}{near})"
            found = cur.execute(f"SELECT count(*) FROM {table} {alias} {of_rounds} WHERE {near}").fetchall()[0][0]
            if found != int(rounds[count].sum() or 0):
                near = None
        reads.append(near or "TRUE")
    return reads[0], reads[1]


def stored_fingerprints(con: duckdb.DuckDBPyConnection, keys: list[tuple[dt.date, str]]) -> dict[tuple[dt.date, str], str]:
    """The fingerprints ``out_partitions`` holds for ``keys`` (those audited before)."""
    if not keys or not con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [OUT_PARTITIONS]).fetchall()[0][0]:
        return {}
    window = Window(tuple(sorted({k[0] for k in keys})))
    cur = con.cursor()
    try:
        create_keys_table(cur, "_fp_keys", keys)
        rows = cur.execute(f"""
            SELECT gaming_day, table_id, fingerprint FROM {OUT_PARTITIONS}
            WHERE {window.rounds()} AND (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _fp_keys)""").fetchall()
        cur.execute("DROP TABLE _fp_keys")
    finally:
        cur.close()
    return {(d, t): f for d, t, f in rows}


def changed_partitions(now: dict, stored: dict) -> list[tuple[dt.date, str]]:
    """The partitions whose fingerprint differs from the one audited last (or that were never audited), in order."""
    return sorted(k for k, f in now.items() if stored.get(k) != f)


def record_fingerprints(con: duckdb.DuckDBPyConnection, fingerprints: dict, rounds: dict) -> None:
    """Upsert the audited partitions' fingerprints (inside the caller's transaction)."""
    if not fingerprints:
        return
    keys = sorted(fingerprints)
    frame = pl.DataFrame({
        "gaming_day": [k[0] for k in keys], "table_id": [k[1] for k in keys],
        "fingerprint": [fingerprints[k] for k in keys], "rounds": [int(rounds.get(k, 0)) for k in keys],
    }, schema={"gaming_day": pl.Date, "table_id": pl.String, "fingerprint": pl.String, "rounds": pl.Int64})
    con.execute(f"""INSERT INTO {OUT_PARTITIONS}
        SELECT unnest($1::DATE[]), unnest($2::VARCHAR[]), unnest($3::VARCHAR[]), unnest($4::BIGINT[])
        ON CONFLICT (gaming_day, table_id) DO UPDATE SET fingerprint = excluded.fingerprint, rounds = excluded.rounds""",
                [frame["gaming_day"].to_list(), frame["table_id"].to_list(), frame["fingerprint"].to_list(),
                 frame["rounds"].to_list()])
