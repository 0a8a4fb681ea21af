"""The canonical tables as Parquet files, partitioned by gaming day, a table's rows together: what Dask workers read.

Workers on a Dask cluster (``pitaudit audit --dask``) never open the DuckDB file: the file has one writer,
and a worker on another machine could not open it anyway. After the ingest the writer's process
publishes the canonical tables beside the database (``audit.duckdb`` -> ``audit.parquet/``) in the
hive layout any tool that reads files understands (DuckDB, polars, pyarrow, Spark)::

    audit.parquet/rounds/gaming_day=2026-03-14/data_0.parquet
    audit.parquet/wagers/...   audit.parquet/actions/...   audit.parquet/device_events/...
    audit.parquet/quarantine/data_0.parquet        (not partitioned: a line has no table)
    audit.parquet/device_tables/data_0.parquet     (which tables each device's events name)

A wager or an action takes its round's gaming day; a device event its round's, or for an event of no
recorded round (a shoe start, a burn before the first round, a round the table system never logged)
the local date of its time at the table's UTC offset shifted back by the gaming day's start, the rule
``load.annotated_events_sql`` applies. The values in the folder names are DuckDB's (percent-encoded).

Within a day's file the rows keep the database's order (the ingest appends file by file, so a table's
rows lie together) in row groups of :data:`ROW_GROUP_ROWS`, so that a reader of a few tables skips the
other tables' row groups by their ``table_id`` min/max. (Folders by table as well, one file per table
and day, cost twice the CPU to write on the 1,000,000-round night, 3,366 small files, and twice to read
back a group from them: a worker opened and pruned every folder of the night for each group.)

A worker reads a group of partitions with :func:`open_group_reader`: an in-memory DuckDB holding the
canonical tables (the schema's own DDL) filled with the rows of the group's tables and of every table
their devices' events name (so that a device's whole event stream, which the gap and copy checks
window over, is there). ``load.load_partition`` then runs the very
queries it runs on the database file, so the results are the same rows. :func:`open_night_reader`
gives views over the whole night (the gap checks need it whole). Publishing writes a new folder and
swaps it in by rename, so a reader never sees half a night. Only the audited gaming days and a margin
around them are published (every read of the audit's is windowed to those days, ``load.Window``), so the
cost is a night's, not the history's.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb

from pipelines.audit.load import MARGIN_DAYS
from pipelines.db import open_bounded_reader, set_memory_limit
from pipelines.settings import READER_MEMORY
from schemas.ddl import create_table_sql
from schemas.tables import TABLES_BY_NAME

# dataset folder -> canonical table
PARTITIONED = {"rounds": "core_rounds", "wagers": "core_wagers", "actions": "core_actions",
               "device_events": "core_device_events"}
HIVE = "hive_partitioning = true, hive_types = {'gaming_day': DATE}"
#: rows per row group of a day's file: a table's day of device events is some 8,000 rows, of wagers some 4,500, so a
#: group's read skips most of the night's row groups by their table_id min/max
ROW_GROUP_ROWS = 20_480


def canon_dir(db_path: Path | str) -> Path:
    """Where the Parquet copy of ``db_path`` lives: ``audit.duckdb`` -> ``audit.parquet/``."""
    path = Path(db_path)
    return path.with_name(f"{path.stem}.parquet")


def is_canon(source: Path | str) -> bool:
    """True when ``source`` is a published Parquet folder (not a DuckDB file)."""
    return Path(source).is_dir() and (Path(source) / "device_tables").is_dir()


def _lit(path: Path) -> str:
    """A path as an SQL string literal (a table function's file argument cannot be a bound parameter in a view)."""
    return "'" + Path(path).as_posix().replace("'", "''") + "'"


def _columns(table: str) -> list[str]:
    return [f.name for f in TABLES_BY_NAME[table].fields]


def _near(days) -> tuple[str, str]:
    """SQL predicates on a round's gaming day (alias ``r``) and an event's instant (alias ``e``) that keep the rows of
    ``days`` with a margin wider than every read of the audit's (``load.Window``: MARGIN_DAYS around the days);
    TRUE for every row when ``days`` is None."""
    if not days:
        return "TRUE", "TRUE"
    margin = dt.timedelta(days=MARGIN_DAYS + 2)
    lo, hi = min(days) - margin, max(days) + margin
    return (f"(r.gaming_day BETWEEN DATE '{lo.isoformat()}' AND DATE '{hi.isoformat()}')",
            f"(e.ts >= TIMESTAMPTZ '{lo.isoformat()} 00:00:00+00' AND "
            f"e.ts < TIMESTAMPTZ '{(hi + dt.timedelta(days=1)).isoformat()} 00:00:00+00')")


def _select_sql(day_start_minutes: int, days=None) -> dict[str, str]:
    """Each dataset's rows (of ``days`` and a margin; None: all), with the gaming day it is partitioned by."""
    near_rounds, near_events = _near(days)
    def cols(table: str, alias: str) -> str:
        return ", ".join(f"{alias}.{c}" for c in _columns(table) if c != "gaming_day")

    return {
        "rounds": f"SELECT {cols('core_rounds', 'r')}, r.gaming_day FROM core_rounds r WHERE {near_rounds}",
        "wagers": f"SELECT {cols('core_wagers', 'w')}, r.gaming_day FROM core_wagers w "
                  f"JOIN core_rounds r USING (table_id, round_no) WHERE {near_rounds}",
        "actions": f"SELECT {cols('core_actions', 'a')}, r.gaming_day FROM core_actions a "
                   f"JOIN core_rounds r USING (table_id, round_no) WHERE {near_rounds}",
        "device_events": f"""
            SELECT {cols('core_device_events', 'e')},
                   coalesce(r.gaming_day, CAST((e.ts AT TIME ZONE 'UTC')
                        + to_minutes(coalesce(o.off, 0) - {int(day_start_minutes)}) AS DATE)) AS gaming_day
            FROM core_device_events e
            LEFT JOIN core_rounds r ON r.table_id = e.table_id AND r.round_no = e.round_no
            LEFT JOIN (SELECT table_id, min(utc_offset_minutes) AS off FROM core_rounds GROUP BY table_id) o
                   ON o.table_id = e.table_id
            WHERE {near_events}""",
    }


def publish_canon(db_path: Path | str, day_start_minutes: int, memory_limit: str = READER_MEMORY, days=None) -> Path:
    """Write the canonical tables of ``db_path`` as partitioned Parquet (module docstring); returns the folder.

    ``days``: the gaming days the run audits; the rows of those days and of a margin around them, wider than any
    read of the audit's (rounds by gaming day, device events by their instant), are published, not the database's
    whole history (None: every row). Called by the writer's process between the ingest and the audit, under the
    writer's lock."""
    target = canon_dir(db_path)
    fresh = target.with_name(target.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    con = open_bounded_reader(db_path, memory_limit)
    try:
        con.execute("SET enable_progress_bar = false")
        # the rows in the database's order (the default, preserve_insertion_order): a table's rows together, each
        # group's read skips the other tables' row groups (module docstring); each group's rows are sorted when read
        for name, sql in _select_sql(day_start_minutes, days).items():
            con.execute(f"COPY ({sql}) TO {_lit(fresh / name)} (FORMAT parquet, PARTITION_BY (gaming_day), "
                        f"COMPRESSION zstd, ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        (fresh / "quarantine").mkdir()
        con.execute(f"COPY (SELECT {', '.join(_columns('core_quarantine'))} FROM core_quarantine) "
                    f"TO {_lit(fresh / 'quarantine' / 'data_0.parquet')} (FORMAT parquet)")
        (fresh / "source_changes").mkdir()  # small: every version a re-export replaced (source_changed findings)
        con.execute(f"COPY (SELECT {', '.join(_columns('core_source_changes'))} FROM core_source_changes) "
                    f"TO {_lit(fresh / 'source_changes' / 'data_0.parquet')} (FORMAT parquet)")
        (fresh / "device_tables").mkdir()
        con.execute(f"COPY (SELECT DISTINCT device_id, table_id FROM core_device_events e WHERE {_near(days)[1]}) "
                    f"TO {_lit(fresh / 'device_tables' / 'data_0.parquet')} (FORMAT parquet)")
    finally:
        con.close()
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    fresh.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return target


def _files(canon: Path, dataset: str) -> str | None:
    """The glob of a dataset's files, or None when it has none (an empty table writes no partition)."""
    folder = canon / dataset
    if not any(folder.rglob("*.parquet")):
        return None
    return _lit(folder / "*" / "*.parquet")


def _memory_connection(memory_limit: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")
    set_memory_limit(con, memory_limit)
    return con


def open_group_reader(canon: Path | str, tables, memory_limit: str = READER_MEMORY) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the canonical tables holding every row of the tables ``tables`` and of the tables
    their devices' events name (module docstring); the caller closes it."""
    canon = Path(canon)
    con = _memory_connection(memory_limit)
    device_tables = _lit(canon / "device_tables" / "data_0.parquet")
    # the group's tables, and every table the devices seen at them served (a device's whole stream)
    wanted = [r[0] for r in con.execute(
        f"""SELECT DISTINCT table_id FROM read_parquet({device_tables})
            WHERE device_id IN (SELECT device_id FROM read_parquet({device_tables}) WHERE list_contains($1, table_id))
            UNION SELECT unnest($1::VARCHAR[])""", [list(tables)]).fetchall()]
    for dataset, table in PARTITIONED.items():
        con.execute(create_table_sql(TABLES_BY_NAME[table]))
        files = _files(canon, dataset)
        if files is not None:
            cols = ", ".join(_columns(table))
            # the range first: DuckDB skips the row groups outside it by their statistics
            con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM read_parquet({files}, {HIVE}) "
                        "WHERE table_id BETWEEN $2 AND $3 AND list_contains($1, table_id)",
                        [wanted, min(wanted), max(wanted)])
    con.execute(create_table_sql(TABLES_BY_NAME["core_quarantine"]))
    cols = ", ".join(_columns("core_quarantine"))
    con.execute(f"""INSERT INTO core_quarantine ({cols}) SELECT {cols}
                    FROM read_parquet({_lit(canon / 'quarantine' / 'data_0.parquet')})
                    WHERE source_file IN (SELECT DISTINCT source_file FROM core_device_events)""")
    return con


def open_night_reader(canon: Path | str, memory_limit: str = READER_MEMORY) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose canonical tables are views over the whole published night; the caller closes it."""
    canon = Path(canon)
    con = _memory_connection(memory_limit)
    for dataset, table in PARTITIONED.items():
        files = _files(canon, dataset)
        if files is None:
            con.execute(create_table_sql(TABLES_BY_NAME[table]))
        else:
            con.execute(f"CREATE VIEW {table} AS SELECT {', '.join(_columns(table))} FROM read_parquet({files}, {HIVE})")
    cols = ", ".join(_columns("core_quarantine"))
    con.execute(f"CREATE VIEW core_quarantine AS SELECT {cols} "
                f"FROM read_parquet({_lit(canon / 'quarantine' / 'data_0.parquet')})")
    con.execute(f"CREATE VIEW core_source_changes AS SELECT {', '.join(_columns('core_source_changes'))} "
                f"FROM read_parquet({_lit(canon / 'source_changes' / 'data_0.parquet')})")
    return con


def open_source_reader(source: Path | str, memory_limit: str, tables=None) -> duckdb.DuckDBPyConnection:
    """What an audit task reads from: the database file read-only, or the published Parquet (``tables``: the
    group's tables; None: the whole night)."""
    if is_canon(source):
        if tables is None:
            return open_night_reader(source, memory_limit)
        return open_group_reader(source, tables, memory_limit)
    return open_bounded_reader(source, memory_limit)
