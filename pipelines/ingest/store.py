"""Write a batch of files' rows: staged, de-duplicated against what is already loaded, committed at once.

Each batch of files (``pipelines.ingest.batch``; a big file is a batch of its own) loads in one
transaction. Its rows are first appended to temporary staging tables chunk by chunk; at the end,
duplicates are resolved in SQL and the rows are moved to the core tables, every file's line
accounting is checked, and everything commits together. A process that dies before the commit
leaves the database exactly as it was before the batch.

Duplicates (the same round, ``table_id``/``round_no``; the same device event,
``device_id``/``event_seq``):
- identical content -> kept once; the later line is accepted and listed in core_duplicate_lines;
- different content -> every copy (this file's, the one loaded earlier, and its identical
  duplicates) goes to quarantine as ``conflicting duplicate``, the copy loaded earlier is removed
  from the core tables (its file's counts move from accepted to quarantined), and the key is
  flagged; any later copy of a flagged key is quarantined too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from pipelines.ingest.duck import arrow, registered
from pipelines.ingest.lines import iter_lines
from schemas.reasons import REASONS
from schemas.tables import CORE_ACTIONS, CORE_ROUNDS, CORE_WAGERS

STAGING = {
    "rounds": "core_rounds", "wagers": "core_wagers", "actions": "core_actions",
    "events": "core_device_events", "quarantine": "core_quarantine",
}
EVENT_CONTENT = ("table_id", "shoe_id", "ts", "event", "round_no", "card", "decks")


class InvariantError(RuntimeError):
    """Lines read != rows accepted + rows quarantined: a defect of the loader. Loud, never ignored."""


@dataclass
class FileCounts:
    lines_read: int
    rows_accepted: int
    rows_quarantined: int
    rows_duplicate: int


@dataclass(frozen=True)
class StagedFile:
    """What the core_source_files row of a file loaded in this batch needs."""

    source_file: str
    kind: str
    sha256: str
    size: int
    lines_read: int
    input_root: str
    path: Path


def begin_batch(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("BEGIN TRANSACTION")
    for stg, core in STAGING.items():
        con.execute(f"CREATE OR REPLACE TEMP TABLE stg_{stg} AS SELECT * FROM {core} LIMIT 0")


def drop_staging(con: duckdb.DuckDBPyConnection) -> None:
    for stg in STAGING:
        con.execute(f"DROP TABLE IF EXISTS stg_{stg}")
        con.execute(f"DROP TABLE IF EXISTS bat_{stg}")
    for t in ("_r_class", "_r_hash", "_e_class"):
        con.execute(f"DROP TABLE IF EXISTS {t}")


def stage(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    """Append a polars frame (canonical columns) to a staging table."""
    if frame.is_empty():
        return
    with registered(con, "_stage_frame", arrow(frame)):
        con.execute(f"INSERT INTO stg_{name} BY NAME SELECT * FROM _stage_frame")


def read_lines(path: Path, wanted: set[int]) -> dict[int, str]:
    """The text of some lines of a file (to quarantine a copy that was accepted earlier)."""
    found: dict[int, str] = {}
    if not wanted or not path.is_file():
        return found
    top = max(wanted)
    for chunk in iter_lines(path):
        lo, hi = chunk.first_line, chunk.first_line + len(chunk)
        for n in [w for w in wanted if lo <= w < hi]:
            found[n] = chunk.lines[n - lo]
        if hi > top:
            break
    return found


def _quarantine_earlier(con: duckdb.DuckDBPyConnection, moved: pl.DataFrame, kind: str, detail: str) -> None:
    """Quarantine copies accepted by earlier files: (source_file, source_line, was_duplicate)."""
    if moved.is_empty():
        return
    known = {f: (root, size) for f, root, size in
             con.execute("SELECT source_file, input_root, size_bytes FROM core_source_files").fetchall()}
    rows = []
    for (sf,), grp in moved.group_by(["source_file"], maintain_order=True):
        root, size = known.get(sf, (None, None))
        path = Path(root) / sf if root else None
        same_file = path is not None and path.is_file() and path.stat().st_size == size  # not rewritten since
        text = read_lines(path, set(grp["source_line"].to_list())) if same_file else {}
        for line in grp["source_line"].to_list():
            rows.append((sf, line, text.get(line, "")))
    frame = pl.DataFrame(rows, schema={"source_file": pl.String, "source_line": pl.Int64, "raw": pl.String}, orient="row")
    with registered(con, "_earlier", frame.to_arrow()):
        con.execute(f"""
            INSERT INTO core_quarantine
            SELECT source_file, source_line, '{kind}', '{REASONS["conflicting_duplicate"]}', 'conflicting_duplicate',
                   '{detail}' || CASE WHEN raw = '' THEN '; the line could not be re-read from its file' ELSE '' END, raw
            FROM _earlier""")
    # the earlier files' accounting: accepted -> quarantined (and duplicate -> quarantined)
    counts = moved.group_by("source_file").agg(pl.len().alias("n"), pl.col("was_duplicate").sum().alias("d"))
    with registered(con, "_moved_counts", counts.to_arrow()):
        con.execute("""
            UPDATE core_source_files f SET rows_accepted = f.rows_accepted - m.n,
                   rows_quarantined = f.rows_quarantined + m.n, rows_duplicate = f.rows_duplicate - m.d
            FROM _moved_counts m WHERE f.source_file = m.source_file""")


def _stage_conflicts(con: duckdb.DuckDBPyConnection, lines: pl.DataFrame, source_file: str, path: Path,
                     kind: str, detail: str) -> None:
    if lines.is_empty():
        return
    text = read_lines(path, set(lines["source_line"].to_list()))
    frame = pl.DataFrame({
        "source_file": source_file, "source_line": lines["source_line"], "kind": kind,
        "reason": REASONS["conflicting_duplicate"], "reason_code": "conflicting_duplicate",
        "detail": detail, "raw": [text.get(n, "") for n in lines["source_line"].to_list()],
    })
    stage(con, "quarantine", frame)


ROUND_CONTENT = tuple(c for c in CORE_ROUNDS.column_names
                      if c not in ("source_file", "source_line", "gaming_day", "content_hash"))
WAGER_CONTENT = tuple(c for c in CORE_WAGERS.column_names if c not in ("table_id", "round_no", "source_file", "source_line"))
ACTION_CONTENT = tuple(c for c in CORE_ACTIONS.column_names if c not in ("table_id", "round_no", "source_file", "source_line"))
_HIT = "(table_id, round_no) IN (SELECT (table_id, round_no) FROM _r_class WHERE hit)"


def _struct(alias: str, cols: tuple[str, ...]) -> str:
    return "{" + ", ".join(f"'{c}': {alias}.{c}" for c in cols) + "}"


def _content_sql(rounds: str, wagers: str, actions: str, key: tuple[str, ...]) -> str:
    """Rows (table_id, round_no, source_line, h): MD5 of a round's canonical content (round, wagers,
    actions; not its source, not its gaming day), for the rounds whose key is a hit."""
    k = ", ".join(key)
    return f"""
        SELECT r.table_id, r.round_no, r.source_line,
               md5(to_json({{'r': {_struct('r', ROUND_CONTENT)}, 'w': w.l, 'a': a.l}})) AS h
        FROM (SELECT * FROM {rounds} WHERE {_HIT}) r
        LEFT JOIN (SELECT {k}, list({_struct('x', WAGER_CONTENT)} ORDER BY x.wager_order) AS l
                   FROM {wagers} x WHERE {_HIT} GROUP BY {k}) w USING ({k})
        LEFT JOIN (SELECT {k}, list({_struct('x', ACTION_CONTENT)} ORDER BY x.action_order) AS l
                   FROM {actions} x WHERE {_HIT} GROUP BY {k}) a USING ({k})"""


def resolve_rounds(con: duckdb.DuckDBPyConnection, source_file: str, path: Path) -> None:
    """Move this file's staged rounds (with wagers, actions) into the core tables, duplicates resolved.

    Content is compared only for keys seen more than once (rare), so the common path hashes nothing.
    """
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _r_class AS
        WITH k AS (SELECT table_id, round_no, count(*) AS n, min(source_line) AS first_line
                   FROM stg_rounds GROUP BY table_id, round_no),
        f AS (SELECT DISTINCT table_id, round_no FROM core_round_flags WHERE flag = 'conflicting_duplicate')
        SELECT k.*, c.source_file AS core_file, c.source_line AS core_line, f.table_id IS NOT NULL AS flagged,
               (k.n > 1 OR c.source_line IS NOT NULL OR f.table_id IS NOT NULL) AS hit, f.table_id IS NOT NULL AS conflict
        FROM k LEFT JOIN core_rounds c USING (table_id, round_no) LEFT JOIN f USING (table_id, round_no)""")
    hits = con.execute("SELECT count(*) FROM _r_class WHERE hit").fetchall()[0][0]
    if hits:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE _r_hash AS
                        {_content_sql('stg_rounds', 'stg_wagers', 'stg_actions', ('source_line',))}
                        UNION ALL
                        {_content_sql('core_rounds', 'core_wagers', 'core_actions', ('table_id', 'round_no'))}""")
        con.execute("""UPDATE _r_class k SET conflict = true FROM
                       (SELECT table_id, round_no FROM _r_hash GROUP BY ALL HAVING count(DISTINCT h) > 1) d
                       WHERE k.table_id = d.table_id AND k.round_no = d.round_no""")
        con.execute("""UPDATE stg_rounds s SET content_hash = h.h FROM _r_hash h
                       WHERE h.table_id = s.table_id AND h.round_no = s.round_no AND h.source_line = s.source_line""")
        con.execute("""UPDATE core_rounds c SET content_hash = h.h FROM _r_hash h
                       WHERE h.table_id = c.table_id AND h.round_no = c.round_no AND h.source_line = c.source_line
                         AND c.content_hash IS DISTINCT FROM h.h""")
    # 1. conflicts: this file's lines, the earlier copy, its duplicates -> quarantine; flag the key
    mine = con.sql("""SELECT s.source_line, s.table_id, s.round_no FROM stg_rounds s
                      JOIN _r_class k USING (table_id, round_no) WHERE k.conflict""").pl()
    if not mine.is_empty():
        detail = "the same table_id and round_no arrived with different content"
        _stage_conflicts(con, mine, source_file, path, "rounds_jsonl", detail)
        earlier = con.sql("""
            SELECT c.source_file, c.source_line, false AS was_duplicate, c.table_id, c.round_no
            FROM core_rounds c JOIN _r_class k USING (table_id, round_no) WHERE k.conflict
            UNION ALL
            SELECT d.source_file, d.source_line, true, k.table_id, k.round_no
            FROM core_duplicate_lines d JOIN _r_class k
              ON d.kind = 'rounds_jsonl' AND d.row_key = k.table_id || '/' || k.round_no::VARCHAR
            WHERE k.conflict""").pl()
        _quarantine_earlier(con, earlier, "rounds_jsonl", detail)
        con.execute("""
            INSERT INTO core_round_flags
            SELECT table_id, round_no, 'conflicting_duplicate',
                   'copies with different content; every copy is in core_quarantine', ?, source_line
            FROM stg_rounds WHERE (table_id, round_no) IN (SELECT (table_id, round_no) FROM _r_class WHERE conflict)""",
                    [source_file])
        with registered(con, "_earlier_flags", earlier.to_arrow()):
            con.execute("""INSERT INTO core_round_flags SELECT table_id, round_no, 'conflicting_duplicate',
                           'copies with different content; every copy is in core_quarantine', source_file, source_line
                           FROM _earlier_flags""")
        for t in ("core_wagers", "core_actions", "core_rounds"):
            con.execute(f"""DELETE FROM {t} WHERE (table_id, round_no) IN
                            (SELECT (table_id, round_no) FROM _r_class WHERE conflict AND core_line IS NOT NULL)""")
        con.execute("""DELETE FROM core_duplicate_lines WHERE kind = 'rounds_jsonl' AND row_key IN
                       (SELECT table_id || '/' || round_no::VARCHAR FROM _r_class WHERE conflict)""")
    # 2. identical copies: listed, not stored twice
    con.execute("""
        INSERT INTO core_duplicate_lines
        SELECT ?, s.source_line, 'rounds_jsonl', s.table_id || '/' || s.round_no::VARCHAR,
               CASE WHEN k.core_line IS NOT NULL THEN k.core_file ELSE ? END,
               CASE WHEN k.core_line IS NOT NULL THEN k.core_line ELSE k.first_line END
        FROM stg_rounds s JOIN _r_class k USING (table_id, round_no)
        WHERE NOT k.conflict AND (k.core_line IS NOT NULL OR s.source_line <> k.first_line)""",
                [source_file, source_file])
    # 3. new rounds: the first copy, with its wagers and actions
    if not hits:  # the common case: every round is new
        for t in ("rounds", "wagers", "actions"):
            con.execute(f"INSERT INTO core_{t} BY NAME SELECT * FROM stg_{t}")
        return
    keep = """(SELECT s.source_line FROM stg_rounds s JOIN _r_class k USING (table_id, round_no)
               WHERE NOT k.conflict AND k.core_line IS NULL AND s.source_line = k.first_line)"""
    con.execute(f"INSERT INTO core_rounds BY NAME SELECT * FROM stg_rounds WHERE source_line IN {keep}")
    con.execute(f"INSERT INTO core_wagers BY NAME SELECT * FROM stg_wagers WHERE source_line IN {keep}")
    con.execute(f"INSERT INTO core_actions BY NAME SELECT * FROM stg_actions WHERE source_line IN {keep}")


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def resolve_events(con: duckdb.DuckDBPyConnection, source_file: str, path: Path) -> None:
    """Move this file's staged device events into core_device_events, duplicates resolved.

    ``_e_class`` holds only the events whose key is already loaded or flagged (rare)."""
    same = " AND ".join(f"s.{c} IS NOT DISTINCT FROM c.{c}" for c in EVENT_CONTENT)
    # Constant predicates per device let DuckDB skip the row groups of other devices (zone maps):
    # a file is one device's export, so the loaded events it can collide with are few.
    ranges = con.execute("SELECT device_id, min(event_seq), max(event_seq) FROM stg_events GROUP BY 1").fetchall()
    if not ranges:
        return
    if len(ranges) <= 16:
        near = " OR ".join(f"(device_id = {_lit(d)} AND event_seq BETWEEN {lo} AND {hi})" for d, lo, hi in ranges)
    else:
        near = "true"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _e_class AS
        WITH f AS (SELECT DISTINCT device_id, event_seq FROM core_device_event_flags WHERE flag = 'conflicting_duplicate')
        SELECT s.source_line, s.device_id, s.event_seq, c.source_file AS core_file, c.source_line AS core_line,
               (f.device_id IS NOT NULL OR (c.source_line IS NOT NULL AND NOT ({same}))) AS conflict
        FROM stg_events s
        LEFT JOIN (SELECT * FROM core_device_events WHERE {near}) c
               ON c.device_id = s.device_id AND c.event_seq = s.event_seq
        LEFT JOIN f ON f.device_id = s.device_id AND f.event_seq = s.event_seq
        WHERE c.source_line IS NOT NULL OR f.device_id IS NOT NULL""")
    mine = con.sql("SELECT source_line, device_id, event_seq FROM _e_class WHERE conflict").pl()
    if not mine.is_empty():
        detail = "the same device_id and event_seq arrived with different content"
        _stage_conflicts(con, mine, source_file, path, "shoe_csv", detail)
        earlier = con.sql("""
            SELECT c.source_file, c.source_line, false AS was_duplicate, c.device_id, c.event_seq
            FROM core_device_events c JOIN _e_class k USING (device_id, event_seq) WHERE k.conflict
            UNION ALL
            SELECT d.source_file, d.source_line, true, k.device_id, k.event_seq
            FROM core_duplicate_lines d JOIN _e_class k
              ON d.kind = 'shoe_csv' AND d.row_key = k.device_id || '/' || k.event_seq::VARCHAR
            WHERE k.conflict""").pl()
        _quarantine_earlier(con, earlier, "shoe_csv", detail)
        note = "copies with different content; every copy is in core_quarantine"
        con.execute(f"""INSERT INTO core_device_event_flags
                        SELECT device_id, event_seq, 'conflicting_duplicate', '{note}', ?, source_line
                        FROM _e_class WHERE conflict""", [source_file])
        with registered(con, "_earlier_flags", earlier.to_arrow()):
            con.execute(f"""INSERT INTO core_device_event_flags SELECT device_id, event_seq, 'conflicting_duplicate',
                            '{note}', source_file, source_line FROM _earlier_flags""")
        con.execute("""DELETE FROM core_device_events WHERE (device_id, event_seq) IN
                       (SELECT (device_id, event_seq) FROM _e_class WHERE conflict AND core_file IS NOT NULL)""")
        con.execute("""DELETE FROM core_duplicate_lines WHERE kind = 'shoe_csv' AND row_key IN
                       (SELECT device_id || '/' || event_seq::VARCHAR FROM _e_class WHERE conflict)""")
    con.execute("""
        INSERT INTO core_duplicate_lines
        SELECT ?, source_line, 'shoe_csv', device_id || '/' || event_seq::VARCHAR, core_file, core_line
        FROM _e_class WHERE NOT conflict AND core_file IS NOT NULL""", [source_file])
    if con.execute("SELECT count(*) FROM _e_class").fetchall()[0][0] == 0:  # the common case: all new
        con.execute("INSERT INTO core_device_events BY NAME SELECT * FROM stg_events")
    else:
        con.execute("""INSERT INTO core_device_events BY NAME SELECT * FROM stg_events
                       WHERE source_line NOT IN (SELECT source_line FROM _e_class)""")


def _batch_collides(con: duckdb.DuckDBPyConnection, kind: str) -> bool:
    """Whether any staged key of the batch is staged twice, already loaded, or flagged (rare)."""
    stg, key, core, flags = (("stg_rounds", "table_id, round_no", "core_rounds", "core_round_flags")
                             if kind == "rounds_jsonl" else
                             ("stg_events", "device_id, event_seq", "core_device_events", "core_device_event_flags"))
    # inner joins, so DuckDB hashes the (small) batch and streams the (big) core table past it
    sql = f"""
        WITH k AS (SELECT {key}, count(*) AS n FROM {stg} GROUP BY ALL)
        SELECT (SELECT count(*) FROM k WHERE n > 1)
             + (SELECT count(*) FROM k JOIN (SELECT {key} FROM {core}) USING ({key}))
             + (SELECT count(*) FROM k JOIN (SELECT DISTINCT {key} FROM {flags}) USING ({key}))"""
    return con.execute(sql).fetchall()[0][0] > 0


def finish_batch(con: duckdb.DuckDBPyConnection, kind: str, files: list[StagedFile]) -> dict[str, FileCounts]:
    """Move the batch's staged rows into the core tables, account every file, commit.

    The common case (no key of the batch staged twice, loaded before or flagged) moves every
    table with one statement. Otherwise the files are resolved one by one, in order, exactly as
    if each were loaded alone: the batch's rows are set aside and each file's slice is staged,
    de-duplicated and moved before the next.
    """
    tables = ("rounds", "wagers", "actions") if kind == "rounds_jsonl" else ("events",)
    counts: dict[str, FileCounts] = {}
    if not _batch_collides(con, kind):
        for t in tables:
            con.execute(f"INSERT INTO {STAGING[t]} BY NAME SELECT * FROM stg_{t}")
        con.execute("INSERT INTO core_quarantine BY NAME SELECT * FROM stg_quarantine")
        first = "stg_rounds" if kind == "rounds_jsonl" else "stg_events"
        staged = dict(con.execute(f"SELECT source_file, count(*) FROM {first} GROUP BY 1").fetchall())
        quarantined = dict(con.execute("SELECT source_file, count(*) FROM stg_quarantine GROUP BY 1").fetchall())
        for f in files:
            counts[f.source_file] = _record(con, f, staged.get(f.source_file, 0), quarantined.get(f.source_file, 0), 0)
    else:
        for t in (*tables, "quarantine"):
            con.execute(f"CREATE OR REPLACE TEMP TABLE bat_{t} AS SELECT * FROM stg_{t}")
        for f in files:
            for t in (*tables, "quarantine"):
                con.execute(f"DELETE FROM stg_{t}")
                con.execute(f"INSERT INTO stg_{t} SELECT * FROM bat_{t} WHERE source_file = ?", [f.source_file])
            if kind == "rounds_jsonl":
                resolve_rounds(con, f.source_file, f.path)
            else:
                resolve_events(con, f.source_file, f.path)
            counts[f.source_file] = _account_file(con, f)
    check_all_files(con)
    drop_staging(con)
    con.execute("COMMIT")
    return counts


def _account_file(con: duckdb.DuckDBPyConnection, f: StagedFile) -> FileCounts:
    """One file resolved on its own (its rows in the stg_* tables): quarantine and account it."""
    con.execute("INSERT INTO core_quarantine BY NAME SELECT * FROM stg_quarantine")
    quarantined = con.execute("SELECT count(*) FROM stg_quarantine").fetchall()[0][0]
    staged = con.execute(f"SELECT count(*) FROM {'stg_rounds' if f.kind == 'rounds_jsonl' else 'stg_events'}").fetchall()[0][0]
    conflicts = con.execute("SELECT count(*) FROM stg_quarantine WHERE reason_code = 'conflicting_duplicate'").fetchall()[0][0]
    duplicate = con.execute("SELECT count(*) FROM core_duplicate_lines WHERE source_file = ?", [f.source_file]).fetchall()[0][0]
    return _record(con, f, staged - conflicts, quarantined, duplicate)


def _record(con: duckdb.DuckDBPyConnection, f: StagedFile, accepted: int, quarantined: int, duplicate: int) -> FileCounts:
    """The file's core_source_files row, after checking its line accounting."""
    if accepted + quarantined != f.lines_read:
        raise InvariantError(
            f"{f.source_file}: lines read {f.lines_read} != accepted {accepted} + quarantined {quarantined}")
    con.execute(
        "INSERT INTO core_source_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, now(), 'loaded', NULL, ?)",
        [f.source_file, f.kind, f.sha256, f.size, f.lines_read, accepted, quarantined, duplicate, f.input_root],
    )
    return FileCounts(f.lines_read, accepted, quarantined, duplicate)


def check_all_files(con: duckdb.DuckDBPyConnection) -> None:
    """Every loaded file still balances (an earlier file's counts change when its round conflicts)."""
    bad = con.execute("""
        SELECT source_file, lines_read, rows_accepted, rows_quarantined FROM core_source_files
        WHERE status = 'loaded' AND lines_read <> rows_accepted + rows_quarantined LIMIT 3""").fetchall()
    if bad:
        raise InvariantError(f"line accounting broken for {bad}")


def record_unreadable(con: duckdb.DuckDBPyConnection, *, source_file: str, kind: str, sha256: str, size: int,
                      error: str, input_root: str) -> None:
    con.execute(
        "INSERT INTO core_source_files VALUES (?, ?, ?, ?, 0, 0, 0, 0, now(), 'unreadable', ?, ?)",
        [source_file, kind, sha256, size, error, input_root],
    )
