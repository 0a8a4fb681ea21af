"""The audit's Prefect tasks: thin wrappers around the plain functions, one job each.

No task caches (``NO_CACHE``: the inputs are large frames, and a re-run must re-read the database)
and no task persists its result. Reading tasks open the database read-only for the length of one
query; the ingest task and the write task are the only ones that open it read-write, one after the
other, never while a reader is open.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
from prefect import task
from prefect.cache_policies import NO_CACHE

from pipelines.audit.detectors.gaps import detect_gaps
from pipelines.audit.load import Partition, load_gap_evidence, load_partition, one_reader, partition_keys
from pipelines.audit.params import AuditParams
from pipelines.audit.partition import (
    PartitionResult, detect_in_partition, reconstruct_partition, settle_partition, summarise,
)
from pipelines.audit.publish import export_settlements, stage, write_database
from pipelines.audit.settle import Settled
from pipelines.db import open_bounded_reader

TASK = {"cache_policy": NO_CACHE, "persist_result": False, "retries": 0}


@task(name="ingest", **TASK)
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


@task(name="partition keys", **TASK)
def keys_task(db_path: Path, params: AuditParams) -> pl.DataFrame:
    with one_reader():
        con = open_bounded_reader(db_path, params.settings.reader_memory)
        try:
            return partition_keys(con, params)
        finally:
            con.close()


@task(name="sequence gaps", **TASK)
def gaps_task(db_path: Path, params: AuditParams) -> pl.DataFrame:
    with one_reader():
        con = open_bounded_reader(db_path, params.settings.reader_memory)
        try:
            jumps, numbers = load_gap_evidence(con, params)
        finally:
            con.close()
    return detect_gaps(jumps, numbers)


@task(name="load", task_run_name="load {label}", **TASK)
def load_task(db_path: Path, keys: tuple[tuple[dt.date, str], ...], params: AuditParams, label: str = "") -> Partition:
    con = open_bounded_reader(db_path, params.settings.reader_memory)
    try:
        return load_partition(con, keys, params)
    finally:
        con.close()


@task(name="reconstruct", task_run_name="reconstruct {part.label}", **TASK)
def reconstruct_task(part: Partition, params: AuditParams) -> pl.DataFrame:
    return reconstruct_partition(part, params)


@task(name="re-settle", task_run_name="re-settle {part.label}", **TASK)
def settle_task(part: Partition, recon: pl.DataFrame, params: AuditParams) -> Settled:
    return settle_partition(part, recon, params)


@task(name="detect", task_run_name="detect {part.label}", **TASK)
def detect_task(part: Partition, recon: pl.DataFrame, settled: Settled, params: AuditParams) -> PartitionResult:
    return summarise(part, recon, settled, detect_in_partition(recon, settled, params))


@task(name="stage", task_run_name="stage group {index}", **TASK)
def stage_task(stage_dir: Path, index: int, result: PartitionResult) -> PartitionResult:
    """Leave the group's results on disk; hand back only its counts (the frames are freed)."""
    stage(stage_dir, index, result.findings, result.settlements)
    return result.counts_only()


@task(name="audit group", task_run_name="audit {label}", **TASK)
def audit_group_task(db_path: Path, stage_dir: Path, index: int, keys: tuple[tuple[dt.date, str], ...],
                     params: AuditParams, label: str = "") -> PartitionResult:
    """One group of partitions through every step, each step a task run of its own (called, not submitted:
    a chain of submitted tasks would hold the pool's threads waiting on one another)."""
    part = load_task(db_path, keys, params, label)
    recon = reconstruct_task(part, params)
    settled = settle_task(part, recon, params)
    result = detect_task(part, recon, settled, params)
    return stage_task(stage_dir, index, result)


@task(name="write database", **TASK)
def write_database_task(db_path: Path, keys: list[tuple[dt.date, str]], stage_dir: Path,
                        memory_limit: str | None = None) -> None:
    write_database(db_path, keys, stage_dir, *([memory_limit] if memory_limit else []))


@task(name="export settlements", **TASK)
def export_settlements_task(stage_dir: Path, out_dir: Path) -> Path:
    """The staged settlements into a partial settlements.parquet (named by the publish task)."""
    return export_settlements(stage_dir, out_dir)


@task(name="publish", **TASK)
def publish_task(out_dir: Path, db_path: Path, keys: list[tuple[dt.date, str]], quarantine_and_files,
                 settlements_partial: Path, memory_limit: str | None = None) -> dict:
    """findings.csv, quarantine.csv and report.html from the written tables; settlements.parquet named."""
    from pipelines.audit.publish import read_findings, settlement_totals, write_files
    from pipelines.report import report_inputs, write_report

    quarantine, files = quarantine_and_files
    limit = [memory_limit] if memory_limit else []
    findings = read_findings(db_path, keys, *limit)
    totals = settlement_totals(db_path, keys, *limit)
    paths = write_files(out_dir, findings, quarantine, settlements_partial)
    paths["report"] = write_report(out_dir / "report.html", report_inputs(
        db_path, keys, out_dir, findings, totals, quarantine, files, memory_limit))
    return {"paths": paths, "findings": findings, "totals": totals}
