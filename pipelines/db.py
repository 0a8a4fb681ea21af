"""The database: one writer, any number of read-only readers (the datasette rule).

Only the ingest/audit writer opens the DuckDB file read-write (``open_writer``); it creates the
canonical tables from ``schemas.ddl`` on first use. The flow's own steps read it with
``open_reader`` (``read_only=True``) between writes, so nothing but the writer can change the evidence.

DuckDB locks the file: a reader *process* holding it open would stop the next nightly run from
opening it for writing. So people (investigators, notebooks, dashboards) never open the writer's
file: at the end of every run the writer publishes a consistent read-only copy beside it
(``publish_snapshot``: checkpoint, copy, atomic rename), and ``open_snapshot`` opens that copy.
A reader can keep the snapshot open for a week; the writer replaces it by rename and is never blocked.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from schemas.ddl import SCHEMA_VERSION, all_ddl, upgrade_sql

from pipelines.settings import READER_MEMORY, WRITER_MEMORY, _memory_limit

# Memory DuckDB may use before it spills to disk; with the loader's own frames this keeps a large ingest
# under the 4 GB goal. ``Settings.duckdb_memory`` (PITAUDIT_DUCKDB_MEMORY, e.g. "8GB") overrides it.
DEFAULT_MEMORY_LIMIT = WRITER_MEMORY


class DatabaseError(RuntimeError):
    """The database file cannot be opened (locked by another writer, not a DuckDB file, ...)."""


def set_memory_limit(con: duckdb.DuckDBPyConnection, limit: str) -> None:
    """``SET memory_limit``; the text is checked again here (a number and a unit) since it goes into SQL."""
    con.execute(f"SET memory_limit = '{_memory_limit(limit)}'")


def _configure(con: duckdb.DuckDBPyConnection, db_path: Path | None, memory_limit: str) -> None:
    con.execute("SET enable_progress_bar = false")  # the CLI draws its own; DuckDB's would garble it
    set_memory_limit(con, memory_limit)
    if db_path is not None:
        spill = db_path.parent / (db_path.name + ".tmp")
        con.execute("SET temp_directory = ?", [spill.as_posix()])


# Row groups a checkpoint may merge (DuckDB's vacuum tasks): none. Each night appends to the same tables, and a
# checkpoint merged the new rows with the partly filled row groups the nights before left, rewriting them whole: the
# statistics' commit at night 31 of 30 nights rewrote three row groups of ``out_stat_tests`` (245,000 rows of test
# texts) to append 27,000, 1.0-1.1 CPU s and 2.5-3 s of wall (0.09 and 0.4 without), and the night's file grew by 57
# MB where its rows take 7 (the old blocks freed for later nights). A row group a delete empties is still dropped; a
# table keeps a row group per night's append instead, the same rows in the same order.
VACUUM_TASKS = 0


def open_writer(db_path: Path | str, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """The one read-write connection; creates the file and the canonical tables if missing.
    ``memory_limit``: ``Settings.writer_memory``. Its checkpoints merge no row groups (:data:`VACUUM_TASKS`)."""
    path = Path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path))
    except (duckdb.IOException, duckdb.Error) as exc:
        raise DatabaseError(f"cannot open {path} for writing: {str(exc).splitlines()[0]}") from exc
    try:
        _configure(con, path, memory_limit)
        con.execute(f"SET max_vacuum_tasks = {int(VACUUM_TASKS)}")
        create_tables(con)
    except BaseException:
        con.close()
        raise
    return con


def parse_connection(memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding no evidence, for a parse worker (its JSON parser)."""
    con = duckdb.connect(":memory:")
    _configure(con, None, memory_limit)
    return con


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the canonical tables unless this schema version is already there (one transaction)."""
    have = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'meta_schema'").fetchall()[0][0]
    version = get_meta(con, "schema_version") if have else None
    if version == str(SCHEMA_VERSION):
        return
    if version is not None and (not version.isdigit() or int(version) > SCHEMA_VERSION):
        raise DatabaseError(f"this database has the tables of pitaudit schema {version}, this pitaudit writes schema "
                            f"{SCHEMA_VERSION}: use the pitaudit that wrote it, or a new database file")
    con.execute("BEGIN TRANSACTION")
    try:
        for stmt in (upgrade_sql(int(version)) if version is not None else []) + all_ddl():
            con.execute(stmt)
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back the connection's transaction, if it still has one, from an ``except`` block about to re-raise.

    A ``COMMIT`` that fails (a full disk, an I/O error) has already ended the transaction: a plain ``ROLLBACK`` then
    raised "cannot rollback - no transaction is active", and that error, not the full disk, reached the person and
    the ingest's retry logic (which took the database's failure for the file's). Whatever stops the roll-back is
    left unsaid here: the caller re-raises the error that matters."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def open_reader(db_path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only connection (reports, notebooks, tests)."""
    path = Path(db_path)
    try:
        return duckdb.connect(str(path), read_only=True)
    except (duckdb.IOException, duckdb.Error) as exc:
        raise DatabaseError(f"cannot open {path} read-only: {str(exc).splitlines()[0]}") from exc


READER_MEMORY_LIMIT = READER_MEMORY


def open_bounded_reader(db_path: Path | str, memory_limit: str = READER_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """A read-only connection whose DuckDB spills to disk past a bounded memory (the audit's readers: several may
    run at once, one per worker, under the 4 GB goal). ``memory_limit``: ``Settings.reader_memory``."""
    con = open_reader(db_path)
    set_memory_limit(con, memory_limit)
    return con


def open_memory_writer() -> duckdb.DuckDBPyConnection:
    """An in-memory database with the canonical tables (tests)."""
    con = duckdb.connect()
    _configure(con, None, DEFAULT_MEMORY_LIMIT)
    create_tables(con)
    return con


def get_meta(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    rows = con.execute("SELECT value FROM meta_schema WHERE name = ?", [name]).fetchall()
    return rows[0][0] if rows else None


def set_meta(con: duckdb.DuckDBPyConnection, name: str, value: str) -> None:
    con.execute(
        "INSERT INTO meta_schema VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        [name, value],
    )


def create_keys_table(con: duckdb.DuckDBPyConnection, name: str, keys) -> None:
    """``keys`` ((gaming_day, table_id) pairs) as a temporary table ``name`` of the connection ``con``.

    Read-only databases allow temporary tables. Bound as two list parameters rather than a registered
    Arrow frame: registering Python objects while threads opened and closed connections intermittently
    failed inside DuckDB 2.0.1 ("Table Function with name python_arrow_scan does not exist", in two CI
    runs, the second with every registration already serialised); parameters also need no escaping of
    table ids, which come from the input.
    """
    keys = list(keys)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {name} AS "
        "SELECT unnest($1::DATE[]) AS gaming_day, unnest($2::VARCHAR[]) AS table_id",
        [[k[0] for k in keys], [k[1] for k in keys]],
    )


def snapshot_path(db_path: Path | str) -> Path:
    """Where readers find the published copy of ``db_path``: ``audit.duckdb`` -> ``audit.readonly.duckdb``."""
    path = Path(db_path)
    return path.with_name(f"{path.stem}.readonly{path.suffix or '.duckdb'}")


def _partial_snapshot(db_path: Path | str) -> Path:
    """Where the snapshot is copied before it replaces the last one: ``audit.readonly.duckdb.partial``."""
    target = snapshot_path(db_path)
    return target.with_name(target.name + ".partial")


def publish_snapshot(db_path: Path | str, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> Path:
    """Checkpoint the database and publish a read-only copy for readers, replacing the last one atomically.

    Called by the writer process at the end of a run, when no write is in flight: the checkpoint folds
    the write-ahead log into the file, so the copy is complete and consistent.
    """
    path = Path(db_path)
    early = _EARLY_COPIES.pop(path.resolve(), None)
    con = open_writer(path, memory_limit)
    target, partial = snapshot_path(path), _partial_snapshot(path)
    try:
        try:
            con.execute("CHECKPOINT")
            if early is None or not early.usable(path):
                clone_file(path, partial)
        finally:
            con.close()
        os.replace(partial, target)
    except BaseException:
        # a copy cut short (a full disk) is as big as the history: left beside the database, it stopped every later
        # night's ingest on that disk
        partial.unlink(missing_ok=True)
        raise
    return target


class _EarlyCopy:
    """The database file copied to the snapshot's partial file on a thread (:func:`start_snapshot_copy`)."""

    def __init__(self, path: Path, stamp: tuple) -> None:
        import threading

        self.stamp, self.error = stamp, None
        self.thread = threading.Thread(target=self._copy, args=(path, _partial_snapshot(path)),
                                       name="snapshot-copy", daemon=True)
        self.thread.start()

    def _copy(self, path: Path, partial: Path) -> None:
        try:
            clone_file(path, partial)
        except BaseException as exc:  # noqa: BLE001 - the snapshot then copies the file itself
            self.error = exc

    def usable(self, path: Path) -> bool:
        """Whether the copy is whole and the file has not changed since it began (else it is made again)."""
        self.thread.join()
        return self.error is None and _stamp(path) == self.stamp


_EARLY_COPIES: dict[Path, _EarlyCopy] = {}


def _stamp(path: Path) -> tuple:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, Path(f"{path}.wal").exists()


def start_snapshot_copy(db_path: Path | str) -> None:
    """Begin :func:`publish_snapshot`'s copy now, on a thread, once a run's last write is done: the audit's publish
    step only reads the file, so the copy runs beside it instead of after it (on a file system that cannot clone
    blocks it is a full copy of the history: 569 MB at 30 nights). :func:`publish_snapshot` keeps it only if the file
    is unchanged since (size, modification time, no write-ahead log; a checkpoint with nothing to fold leaves the file
    as it was), else copies again. Nothing starts while a write-ahead log is pending."""
    path = Path(db_path).resolve()
    earlier = _EARLY_COPIES.pop(path, None)
    if earlier is not None:  # a run that failed before its snapshot: its copy ends before another writes that file
        earlier.thread.join()
    stamp = _stamp(path)
    if not stamp[2]:
        _EARLY_COPIES[path] = _EarlyCopy(path, stamp)


def discard_snapshot_copy(db_path: Path | str) -> None:
    """End and delete :func:`start_snapshot_copy`'s copy of a run that fails before its snapshot: a partial file the
    size of the history is not left beside the database until the next run (a killed run's is replaced by it)."""
    path = Path(db_path).resolve()
    early = _EARLY_COPIES.pop(path, None)
    if early is None:
        return
    early.thread.join()
    _partial_snapshot(path).unlink(missing_ok=True)


@contextmanager
def duckdb_threads(con: duckdb.DuckDBPyConnection, threads: int) -> Iterator[None]:
    """``con`` on ``threads`` DuckDB threads for the block, its own setting restored after: for a connection that
    shares the cores with worker processes for a while (the ingest's writer, the investigation pages' reads)."""
    before = con.execute("SELECT current_setting('threads')").fetchone()[0]
    con.execute(f"SET threads = {int(threads)}")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(before)}")


def clone_file(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` with ``copy_file_range``, falling back to ``shutil.copyfile``.

    The snapshot is the whole database, and the database grows night after night. On a file system that shares
    blocks between files (XFS, Btrfs, OpenZFS 2.2) ``copy_file_range`` clones them, so the snapshot costs the
    same on the first night and after years of history; on one that cannot (ext4) the kernel copies the bytes
    itself, as ``shutil.copyfile``'s ``sendfile`` does."""
    size = source.stat().st_size
    try:
        with open(source, "rb") as src, open(target, "wb") as dst:
            done = 0
            while done < size:
                n = os.copy_file_range(src.fileno(), dst.fileno(), size - done)
                if n == 0:
                    break
                done += n
        if done == size:
            return
    except OSError:
        pass  # not offered between these files (another file system, an old kernel): copy as before
    shutil.copyfile(source, target)


def open_snapshot(db_path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the last published snapshot of ``db_path`` (what people should read)."""
    target = snapshot_path(db_path)
    if not target.exists():
        raise DatabaseError(f"no published snapshot at {target}: run `pitaudit ingest` or `pitaudit audit` first")
    return open_reader(target)
