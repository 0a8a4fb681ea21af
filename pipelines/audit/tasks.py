"""The audit's Prefect tasks: thin wrappers around the plain functions, one job each.

No task caches (``NO_CACHE``: the inputs are large frames, and a re-run must re-read the database)
and no task persists its result; the flow holds the results in memory and the write task is the
only one that opens the database read-write.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
from prefect import task
from prefect.cache_policies import NO_CACHE

from pipelines.audit.detectors.gaps import detect_gaps
from pipelines.audit.load import Night, Partition, read_night
from pipelines.audit.params import AuditParams
from pipelines.audit.partition import (
    PartitionResult, detect_in_partition, reconstruct_partition, settle_partition, summarise,
)
from pipelines.audit.publish import write_database, write_files
from pipelines.audit.settle import Settled

TASK = {"cache_policy": NO_CACHE, "persist_result": False, "retries": 0}


@task(name="ingest", **TASK)
def ingest_task(input_dir: Path, db_path: Path, gaming_day_start: str):
    """Load every input file into the core tables (issue 4's loader), with the one writer connection."""
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder

    con = open_writer(db_path)
    try:
        return ingest_folder(con, input_dir, gaming_day_start, progress=False)
    finally:
        con.close()


@task(name="read night", **TASK)
def read_night_task(db_path: Path, params: AuditParams) -> Night:
    return read_night(db_path, params)


@task(name="sequence gaps", **TASK)
def gaps_task(events: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    return detect_gaps(events, rounds)


@task(name="reconstruct", task_run_name="reconstruct {part.label}", **TASK)
def reconstruct_task(part: Partition, params: AuditParams) -> pl.DataFrame:
    return reconstruct_partition(part, params)


@task(name="re-settle", task_run_name="re-settle {part.label}", **TASK)
def settle_task(part: Partition, recon: pl.DataFrame, params: AuditParams) -> Settled:
    return settle_partition(part, recon, params)


@task(name="detect", task_run_name="detect {part.label}", **TASK)
def detect_task(part: Partition, recon: pl.DataFrame, settled: Settled, params: AuditParams) -> PartitionResult:
    return summarise(part, recon, settled, detect_in_partition(recon, settled, params))


@task(name="write database", **TASK)
def write_database_task(db_path: Path, keys: list[tuple[dt.date, str]], findings: pl.DataFrame,
                        settlements: pl.DataFrame) -> None:
    write_database(db_path, keys, findings, settlements)


@task(name="publish", **TASK)
def publish_task(out_dir: Path, findings: pl.DataFrame, settlements: pl.DataFrame, quarantine: pl.DataFrame,
                 report_inputs) -> dict[str, Path]:
    from pipelines.report import write_report

    paths = write_files(out_dir, findings, settlements, quarantine)
    paths["report"] = write_report(out_dir / "report.html", report_inputs)
    return paths
