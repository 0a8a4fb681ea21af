"""Stage 5: the only stage that sees the writer. Each batch loads inside one transaction this module owns.

``load_batch`` begins the transaction, stages the batch's parsed rows (``store``), resolves repeated keys,
moves the rows into the core tables, checks every file's line accounting, records each file's read in
core_source_files, and commits; anything that goes wrong rolls it back, here, and is raised again. A process
killed at any point therefore leaves every file either fully loaded or absent, and the next run loads the
absent ones. ``known_sources`` is the one query of what is already loaded, made before the run's first batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.db import get_meta, rollback, set_meta
from pipelines.ingest.records import FileOutcome, FileStatus, InputFile, Loaded, Parsed
from pipelines.ingest.store import InvariantError, KnownKeys, create_staging, drop_staging, move_batch, move_direct, \
    stage


class DayStartMismatch(ValueError):
    """The database was loaded with another gaming-day start; the message is the one-line reason."""


@dataclass(frozen=True)
class BatchLoaded:
    outcomes: tuple[FileOutcome, ...]
    reasons: Counter
    source_changes: int
    partitions: frozenset  # (gaming_day, table_id) of the rounds read, and of the versions they replaced


def check_day_start(con: duckdb.DuckDBPyConnection, day_start_minutes: int) -> None:
    """The gaming-day start of every load into one database is the same (the days would not be comparable)."""
    recorded = get_meta(con, "gaming_day_start")
    if recorded is None:
        set_meta(con, "gaming_day_start", str(day_start_minutes))
    elif int(recorded) != day_start_minutes:
        r = int(recorded)
        raise DayStartMismatch(f"this database was loaded with gaming days starting at {r // 60:02d}:{r % 60:02d}; "
                               "use the same --gaming-day-start or a new database")


def known_sources(con: duckdb.DuckDBPyConnection, names: list[str] | None = None) -> Loaded:
    """What earlier runs loaded: contents, the prefixes of the reads of each of ``names`` (the files found now;
    None: every name), the unreadable files of those names recorded."""
    contents = frozenset(con.execute(
        "SELECT DISTINCT kind, sha256 FROM core_source_files WHERE status = 'loaded'").fetchall())
    of_names = "" if names is None else "AND source_file IN (SELECT unnest($names::VARCHAR[]))"
    bound = {} if names is None else {"names": list(names)}
    prefixes: dict[str, list[tuple[int, int, str]]] = {}
    for rel, n, lines, sha in con.execute(f"""
            SELECT DISTINCT source_file, prefix_bytes, prefix_lines, prefix_sha256 FROM core_source_files
            WHERE status = 'loaded' AND prefix_bytes > 0 {of_names} ORDER BY ALL""", bound).fetchall():
        prefixes.setdefault(rel, []).append((n, lines, sha))
    # only a name's latest read counts: a file unreadable on night 1, read on night 2 and unreadable again on night 3
    # is recorded again on night 3 (its outputs show this input's reads only, pipelines.audit.load)
    unreadable = {(rel, sha): (code, error) for rel, sha, code, error, status in con.execute(f"""
        SELECT source_file, sha256, reason_code, error, status FROM core_source_files WHERE true {of_names}
        QUALIFY row_number() OVER (PARTITION BY source_file ORDER BY ingested_at DESC, status = 'loaded') = 1""",
        bound).fetchall() if status != "loaded"}
    return Loaded(contents, {k: tuple(v) for k, v in prefixes.items()}, unreadable)


_SOURCE_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), ?, ?, ?, ?)"


def _source_row(f: InputFile | None, outcome: FileOutcome, input_root: Path, size: int = 0, sha: str = "") -> list:
    return [outcome.source_file, outcome.kind, f.sha256 if f else sha, f.size if f else size,
            f.first_line if f else 1, f.start_byte if f else 0,
            f.prefix_sha256 if f else None, f.prefix_bytes if f else None, f.prefix_lines if f else None,
            outcome.lines_read, outcome.rows_accepted, outcome.rows_quarantined, outcome.rows_duplicate,
            str(outcome.status), outcome.reason_code, outcome.error, str(input_root)]


def _insert_sources(con: duckdb.DuckDBPyConnection, rows: list[list], per_statement: int = 200) -> None:
    """core_source_files rows, many to a statement (one statement per file cost a millisecond each)."""
    for i in range(0, len(rows), per_statement):
        chunk = rows[i:i + per_statement]
        con.execute("INSERT INTO core_source_files VALUES " + ", ".join([_SOURCE_VALUES] * len(chunk)),
                    [v for row in chunk for v in row])


def _insert_source(con: duckdb.DuckDBPyConnection, f: InputFile | None, outcome: FileOutcome, input_root: Path,
                   size: int = 0, sha: str = "") -> None:
    _insert_sources(con, [_source_row(f, outcome, input_root, size, sha)])


def record_skipped(con: duckdb.DuckDBPyConnection, outcomes: Iterable[FileOutcome], input_root: Path) -> None:
    """The files that could not be read or were refused, one core_source_files row each (one transaction);
    one already recorded with the same reason is not recorded again (a re-run changes nothing)."""
    rows = [o for o in outcomes if o.status in (FileStatus.UNREADABLE, FileStatus.REFUSED) and o.recorded]
    if not rows:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        _insert_sources(con, [_source_row(None, o, input_root, sha=o.sha256) for o in rows])
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def load_batch(con: duckdb.DuckDBPyConnection, files: tuple[InputFile, ...], parts: Iterable[Parsed],
               input_root: Path, known: KnownKeys | None = None) -> BatchLoaded:
    """Load a batch's parsed parts (a list, or a stream of a big file's chunks) in one transaction.

    A file the parse could not read as lines (``Parsed.unreadable``) is recorded unreadable in the same
    transaction. Raises whatever stopped the load (the transaction rolled back): ``InvariantError`` for broken
    line accounting, anything else for the caller to retry file by file. ``known``: the run's key ranges
    (``store.KnownKeys``; None: each batch's keys are looked up in the core tables)."""
    kind = files[0].kind
    con.execute("BEGIN TRANSACTION")
    try:
        unreadable: dict[str, tuple[str, str]] = {}
        reasons: Counter = Counter()
        lines_read: Counter = Counter()
        days: dict = {}  # file -> its gaming days, when the parse recorded them (the audit's scope reads them)
        parts = iter(parts)
        first = next(parts, None)
        second = next(parts, None) if first is not None else None
        for part in (first, second):
            if part is not None:
                unreadable.update(part.unreadable)
                reasons.update(part.reasons)
                lines_read.update(part.lines_read)
                days.update(part.days)
        readable = tuple(f for f in files if f.rel not in unreadable)
        counts = None
        if first is not None and second is None:  # one part (a small batch): straight into the core tables
            frames = _frames_by_table(first)
            counts = move_direct(con, kind, readable, lines_read, frames, known)
            if counts is not None:
                changes = 0
                rounds = frames.get("rounds")
                read = set() if rounds is None else set(rounds.select("gaming_day", "table_id").unique().iter_rows())
                partitions = frozenset(read)
        if counts is None:  # a big file's parts, or a key that repeats: staged, then resolved
            if known is not None:
                known.forget(kind)
            create_staging(con)
            for part in (first, second):
                if part is not None:
                    for name, frame in part.frames:
                        stage(con, name, frame)
            for part in parts:
                for name, frame in part.frames:
                    stage(con, name, frame)
                unreadable.update(part.unreadable)
                reasons.update(part.reasons)
                lines_read.update(part.lines_read)
                days.update(part.days)
            readable = tuple(f for f in files if f.rel not in unreadable)
            read = set(con.execute("SELECT DISTINCT gaming_day, table_id FROM stg_rounds").fetchall())
            counts, changes = move_batch(con, kind, readable, lines_read)
            partitions = frozenset(read | set(con.execute("SELECT * FROM _left").fetchall()))
            drop_staging(con)
        outcomes = []
        sources = []
        for f in files:
            if f.rel in unreadable:
                code, why = unreadable[f.rel]
                o = FileOutcome(f.rel, f.kind, FileStatus.UNREADABLE, error=why, reason_code=code)
                sources.append(_source_row(None, o, input_root, f.size, f.sha256))
            else:
                c = counts[f.rel]
                o = FileOutcome(f.rel, f.kind, FileStatus.LOADED, c.lines_read, c.rows_accepted, c.rows_quarantined,
                                c.rows_duplicate, first_line=f.first_line, sha256=f.sha256,
                                gaming_days=days.get(f.rel))
                sources.append(_source_row(f, o, input_root))
            outcomes.append(o)
        _insert_sources(con, sources)
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return BatchLoaded(tuple(outcomes), reasons, changes, partitions)


def _frames_by_table(part: Parsed) -> dict:
    """A part's frames by staging table (a table named twice is concatenated)."""
    import polars as pl

    out: dict = {}
    for name, frame in part.frames:
        out[name] = pl.concat([out[name], frame]) if name in out else frame
    return out


def record_failed(con: duckdb.DuckDBPyConnection, f: InputFile, code: str, error: str, input_root: Path) -> FileOutcome:
    """A file whose load failed on its own (a defect, not bad input): recorded unreadable with the reason."""
    o = FileOutcome(f.rel, f.kind, FileStatus.UNREADABLE, error=error, reason_code=code)
    con.execute("BEGIN TRANSACTION")
    try:
        _insert_source(con, None, o, input_root, f.size, f.sha256)
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return o


__all__ = ["BatchLoaded", "DayStartMismatch", "InvariantError", "KnownKeys", "check_day_start", "known_sources",
           "load_batch", "record_failed", "record_skipped"]
