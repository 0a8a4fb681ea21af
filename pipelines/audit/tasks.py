"""The audit's Prefect tasks: thin wrappers around the plain functions, one job each.

No task caches (``NO_CACHE``: the inputs are large frames, and a re-run must re-read the database)
and no task persists its result. Reading tasks open the database read-only for the length of one
query; the ingest task and the write task are the only ones that open it read-write, one after the
other, never while a reader is open.
"""

from __future__ import annotations

import datetime as dt
import errno
import time
from pathlib import Path

import polars as pl
from prefect import task
from prefect.cache_policies import NO_CACHE

from pipelines.audit.detectors.burns import missing_shoe_burns, shoe_rulesets
from pipelines.audit.detectors.changes import source_changed
from pipelines.audit.detectors.gaps import detect_gaps
from pipelines.audit.findings import finalize
from pipelines.audit.fingerprint import changed_partitions, partition_fingerprints, stored_fingerprints
from pipelines.audit.load import (
    Window, load_gap_evidence, load_partition, load_shoe_openings, load_source_changes, one_reader, partition_keys,
)
from pipelines.audit.params import AuditParams
from pipelines.audit.partition import (
    PartitionResult, detect_in_partition, reconstruct_partition, settle_partition, summarise,
)
from pipelines.audit.publish import export_settlements, stage, write_database
from pipelines.audit.scope import Scope, input_scope
from pipelines.audit.canon import open_source_reader, publish_canon
from pipelines.db import open_bounded_reader
from pipelines.memory import release

TASK = {"cache_policy": NO_CACHE, "persist_result": False, "retries": 0}


def transient(task, task_run, state) -> bool:
    """Retry a failed I/O task only for what may pass (a file or the database briefly unavailable), never for
    what a person must fix (a bad option, a full disk, a permission)."""
    import duckdb

    try:
        exc = state.result(raise_on_failure=False)
    except Exception:  # noqa: BLE001
        return False
    if isinstance(exc, OSError):
        return exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT)
    return isinstance(exc, duckdb.IOException)


# the ingest and the publishing read and write files: a passing fault (a network share, a file being replaced)
# gets two more tries; each step is all or nothing, so a retry starts clean
IO_TASK = {**TASK, "retries": 2, "retry_delay_seconds": 5, "retry_condition_fn": transient}


@task(name="ingest", **IO_TASK)
def ingest_task(input_dir: Path, db_path: Path, gaming_day_start: str, settings=None):
    """Load every input file into the core tables (issue 4's loader), with the one writer connection."""
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder
    from pipelines.settings import Settings

    settings = settings or Settings.defaults()
    con = open_writer(db_path, settings.writer_memory)
    try:
        return ingest_folder(con, input_dir, gaming_day_start, settings=settings)
    finally:
        con.close()
        release()  # the writer's buffers, freed into the flow process's heap, back before the audit stage


@task(name="scope", **TASK)
def scope_task(input_dir: Path, ingest, day_start_minutes: int) -> Scope:
    """The gaming days of the input: of the files this run loaded, else of every input file (pipelines.audit.scope)."""
    from pipelines.ingest.discover import discover

    found = [f for f in discover(Path(input_dir)) if f.kind is not None and f.problem is None]
    every = [(str(f.kind), f.path) for f in found]
    new = {f.source_file: f for f in getattr(ingest, "files", []) if f.status == "loaded"}
    loaded = [(str(f.kind), f.path) for f in found if f.rel in new]
    # the days the ingest recorded as it read the files (the same rule): those files are not read again
    recorded = {f.path: days for f in found if f.rel in new
                for days in [getattr(new[f.rel], "gaming_days", None)] if days is not None}
    return input_scope(loaded, every, day_start_minutes, recorded)


@task(name="partition keys", **TASK)
def keys_task(db_path: Path, params: AuditParams, days: tuple[dt.date, ...]) -> pl.DataFrame:
    with one_reader():
        con = open_bounded_reader(db_path, params.settings.reader_memory)
        try:
            return partition_keys(con, params, Window(tuple(days)))
        finally:
            con.close()


@task(name="fingerprints", **TASK)
def fingerprints_task(db_path: Path, keys: list[tuple[dt.date, str]], params: AuditParams) -> dict:
    """``{"now": fingerprints, "changed": partitions to re-settle}`` (pipelines.audit.fingerprint)."""
    with one_reader():
        con = open_bounded_reader(db_path, params.settings.reader_memory)
        try:
            now = partition_fingerprints(con, keys, params)
            stored = stored_fingerprints(con, keys)
        finally:
            con.close()
    return {"now": now, "changed": changed_partitions(now, stored)}


@task(name="publish parquet", **TASK)
def publish_canon_task(db_path: Path, params: AuditParams, days: tuple[dt.date, ...]) -> Path:
    """The canonical tables of the audited days and their margin as partitioned Parquet, for the workers of a Dask
    cluster (pipelines.audit.canon)."""
    return publish_canon(db_path, params.day_start_minutes, params.settings.reader_memory, days)


@task(name="sequence gaps and source changes", **TASK)
def gaps_task(db_path: Path, params: AuditParams, days: tuple[dt.date, ...]) -> pl.DataFrame:
    """The findings that need more than a partition, of the audited days: numbering gaps (read with a margin
    around the days, pipelines.audit.load.Window), rounds or events re-exported with other content
    (source_changed, pipelines.audit.detectors.changes), and shoes dealt without their burn (the shoe's start and
    burns have no round: pipelines.audit.detectors.burns)."""
    window = Window(tuple(days))
    with one_reader():  # db_path: the database, or on a Dask cluster its published Parquet (pipelines.audit.canon)
        con = open_source_reader(db_path, params.settings.reader_memory)
        try:
            jumps, numbers = load_gap_evidence(con, params, window)
            changes = load_source_changes(con, params.day_start_minutes)
            shoes = load_shoe_openings(con, params, window)
        finally:
            con.close()
    found = finalize([detect_gaps(jumps, numbers), source_changed(changes), missing_shoe_burns(shoe_rulesets(shoes, params))])
    del jumps, numbers, changes, shoes
    release()
    return found.filter(pl.col("gaming_day").is_in(list(days))) if found.height else found


GROUP_STEPS = ("load", "reconstruct", "re-settle", "detect", "stage")


def audit_group(db_path: Path, stage_dir: Path, index: int, keys: tuple[tuple[dt.date, str], ...],
                params: AuditParams) -> tuple[PartitionResult, dict[str, float]]:
    """One group of partitions through every step (load, reconstruct, re-settle, detect, stage), its results left in
    the staging folder; returns its counts and each step's seconds. ``db_path``: the database file, or on a Dask
    cluster its published Parquet folder (pipelines.audit.canon)."""
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[step] = now - clock
        clock = now

    con = open_source_reader(db_path, params.settings.reader_memory, sorted({k[1] for k in keys}))
    try:
        part = load_partition(con, keys, params)
    finally:
        con.close()
    lap("load")
    recon = reconstruct_partition(part, params)
    lap("reconstruct")
    settled = settle_partition(part, recon, params)
    lap("re-settle")
    result = summarise(part, recon, settled, detect_in_partition(recon, settled, params))
    lap("detect")
    stage(Path(stage_dir), index, result.findings, result.settlements)  # the frames are freed with the group
    lap("stage")
    seconds["wagers"], seconds["events"] = part.wagers.height, part.events.height
    return result.counts_only(), seconds


@task(name="audit group", task_run_name="audit {label}", **TASK)
def audit_group_task(db_path: Path, stage_dir: Path, index: int, keys: tuple[tuple[dt.date, str], ...],
                     params: AuditParams, label: str = "") -> PartitionResult:
    """One group of partitions through every step (:func:`audit_group`): one task run, whose log says what each
    step took. (Each step was a task run of its own: 100 more on a 1,000,000-round night, about 4 CPU s of the
    server's and the workers' on a 2-core machine, for a view of the steps this log line gives as well.)"""
    from prefect.logging import get_run_logger

    result, seconds = audit_group(db_path, stage_dir, index, keys, params)
    get_run_logger().info(
        f"group {index} ({label}): {result.rounds:,} rounds, {int(seconds['wagers']):,} wagers, "
        f"{int(seconds['events']):,} device events; " + ", ".join(f"{s} {seconds[s]:.1f} s" for s in GROUP_STEPS))
    # before the worker's next group, or its idle end on a Dask cluster (a pool's workers end after the write); what
    # outlives the group is set aside, so the next group's collection walks only its own leftovers (pipelines.memory)
    release(set_aside=True)
    return result


@task(name="write database", **TASK)
def write_database_task(db_path: Path, keys: list[tuple[dt.date, str]], stage_dir: Path, fingerprints: dict,
                        rounds: dict, settings=None, unchanged: list[tuple[dt.date, str]] | None = None) -> None:
    """The re-settled partitions' rows and fingerprints, in one transaction (no retry: a failed write rolled back,
    and the next run does it again); the night-wide findings of the ``unchanged`` partitions (write_database)."""
    memory = [settings.writer_memory] if settings is not None else []
    write_database(db_path, keys, stage_dir, *memory, fingerprints={k: fingerprints[k] for k in keys if k in fingerprints},
                   rounds=rounds, unchanged=unchanged)
    release()  # the write's buffers back before the statistics step


@task(name="statistics", **TASK)
def statistics_task(db_path: Path, nights: list[dt.date], params: AuditParams) -> int:
    """The statistical detectors (issue 11) over each audited night and its rolling windows: they read the written
    database read-only, then their findings, funnel, dealer-player graph and tests are written by the one writer
    (after the reader is closed). Returns the number of statistical findings."""
    from pipelines.stats.run import statistics_step, write_statistics

    release()  # what the write left in the flow's process, before the step's own peak
    outcomes = statistics_step(db_path, nights, memory_limit=params.settings.reader_memory,
                               chunk_rounds=params.settings.group_rounds)
    write_statistics(db_path, outcomes, memory_limit=params.settings.writer_memory)
    found = sum(o.findings.height for o in outcomes)
    del outcomes
    release()
    return found


@task(name="export settlements", **TASK)
def export_settlements_task(stage_dir: Path, out_dir: Path) -> Path:
    """The staged settlements into a partial settlements.parquet (named by the publish task)."""
    path = export_settlements(Path(stage_dir), Path(out_dir))
    release()  # DuckDB's buffers of the copy, freed into the worker's heap (a Dask worker stays alive after it)
    return path


@task(name="publish", **IO_TASK)
def publish_task(folder: Path, db_path: Path, input_dir: Path, keys: list[tuple[dt.date, str]], scope: Scope,
                 settlements_partial: Path | None, settings=None, contents: dict[str, str] | None = None) -> dict:
    """findings.csv, settlements.parquet, quarantine.csv and report.html of the audited days into ``folder`` (the
    run's temporary output folder, pipelines.audit.outputs); ``contents``: the input files' SHA-256s."""
    from pipelines.audit.publish import publish_night

    try:
        return publish_night(Path(folder), Path(db_path), Path(input_dir), keys, scope, settlements_partial,
                             settings.reader_memory if settings is not None else None, settings, contents)
    except OSError as exc:
        # a write's OSError names no file: "No space left on device" alone left the operator to guess between the
        # output's disk and the database's; every file of the publish is written under the output folder
        if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not exc.filename:
            raise OSError(exc.errno, exc.strerror, str(Path(folder).parent)) from exc
        raise


@task(name="read-only snapshot", **IO_TASK)
def snapshot_task(db_path: Path, settings=None) -> Path:
    """The read-only copy investigators open (pipelines.db.publish_snapshot), under the run's writer lock."""
    from pipelines.db import publish_snapshot

    return publish_snapshot(db_path, *([settings.writer_memory] if settings is not None else []))
