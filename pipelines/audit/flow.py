"""The nightly audit as a Prefect flow: ingest, reconstruct, re-settle, detect, write, publish.

The night is cut into partitions (gaming day x table); each partition runs three tasks in a chain
(reconstruct -> re-settle -> detect) and the partitions run side by side on the task runner, so
the same tasks can later be mapped over a cluster (a Dask task runner) without change. The event
and round-number gaps need the whole night and run once. The flow is the only writer of the
database: the ingest task loads the core tables, the write task replaces the audited partitions'
``out_`` rows; every other task reads frames handed to it.

Prefect runs embedded (no server to install; ``pipelines.audit.run`` switches telemetry off).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl
from prefect import flow
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from pipelines.audit.findings import finalize
from pipelines.audit.frames import SETTLEMENTS_SCHEMA, empty
from pipelines.audit.load import partitions
from pipelines.audit.params import AuditParams
from pipelines.audit.partition import PartitionResult
from pipelines.audit.tasks import (
    detect_task, gaps_task, ingest_task, publish_task, read_night_task, reconstruct_task, settle_task,
    write_database_task,
)


@dataclass
class AuditOutcome:
    """What the flow did: the published frames, their paths, and counts for the summary line."""

    findings: pl.DataFrame
    settlements: pl.DataFrame
    paths: dict[str, Path]
    partitions: int
    rounds: int
    device_rounds: int
    quarantined: int
    engine_errors: int
    ingest: object = None
    timings: dict[str, float] = field(default_factory=dict)


def _progress_printer(stream=None) -> Callable[[str], None]:
    stream = stream or sys.stderr

    def say(text: str) -> None:
        print(text, file=stream, flush=True)

    return say


# partitions run on a pool of this many workers, in a few groups each so that they finish together;
# the games settled one round at a time (blackjack) also use that many processes
WORKERS = max(2, os.cpu_count() or 1)
GROUPS_PER_WORKER = 4


@flow(name="pitaudit-audit", log_prints=False, persist_result=False, validate_parameters=False,
      task_runner=ThreadPoolTaskRunner(max_workers=WORKERS))
def audit_flow(
    input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str = "06:00",
    params: AuditParams | None = None, progress: bool = True,
) -> AuditOutcome:
    import time

    say = _progress_printer() if progress else (lambda text: None)
    params = params or AuditParams(gaming_day_start=gaming_day_start, workers=WORKERS)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    ingest = ingest_task(input_dir, db_path, gaming_day_start)
    timings["ingest"] = time.perf_counter() - t0
    t = time.perf_counter()
    night = read_night_task(db_path, params)
    parts = partitions(night, groups=GROUPS_PER_WORKER * WORKERS)
    n_keys = sum(len(p.keys) for p in parts)
    timings["read"] = time.perf_counter() - t
    say(f"audit: {night.rounds.height:,} table rounds, {night.wagers.height:,} wagers, "
        f"{night.events.height:,} device events in {n_keys} partition(s) (gaming day x table), {len(parts)} task group(s)")

    t = time.perf_counter()
    gaps = gaps_task.submit(night.events, night.rounds)
    futures = {}
    for part in parts:
        recon = reconstruct_task.submit(part, params)
        settled = settle_task.submit(part, recon, params)
        futures[detect_task.submit(part, recon, settled, params)] = part
    results: list[PartitionResult] = []
    done_keys = done_rounds = 0
    total_rounds = max(1, sum(p.rounds.height for p in parts))
    for future in as_completed(list(futures)):
        part = futures.pop(future)
        results.append(future.result())
        done_keys += len(part.keys)
        done_rounds += part.rounds.height
        say(f"audit: {done_keys}/{n_keys} partitions re-settled and checked "
            f"({100 * done_rounds / total_rounds:.0f} % of the rounds, {time.perf_counter() - t:.0f} s)")
    results.sort(key=lambda r: r.keys[0])
    findings = finalize([r.findings for r in results] + [gaps.result()])
    settlements = pl.concat([r.settlements for r in results]) if results else empty(SETTLEMENTS_SCHEMA)
    timings["audit"] = time.perf_counter() - t
    # gap findings may fall in a partition that has no rounds of its own: replace those too
    keys = sorted({k for p in parts for k in p.keys} | set(findings.select("gaming_day", "table_id").drop_nulls().iter_rows()))

    t = time.perf_counter()
    write_database_task(db_path, keys, findings, settlements)
    timings["write"] = time.perf_counter() - t

    from pipelines.report import ReportInputs

    files = ()
    if night.source_files is not None:
        files = tuple(
            (r["source_file"], r["kind"], r["lines_read"], r["rows_accepted"], r["rows_quarantined"])
            for r in night.source_files.iter_rows(named=True)
        )
    t = time.perf_counter()
    report = ReportInputs(findings=findings, settlements=settlements, quarantined=night.quarantine.height,
                          input_files=files)
    paths = publish_task(out_dir, findings, settlements, night.quarantine, report)
    timings["publish"] = time.perf_counter() - t
    say("audit: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    return AuditOutcome(
        findings=findings,
        settlements=settlements,
        paths=paths,
        partitions=n_keys,
        rounds=sum(r.rounds for r in results),
        device_rounds=sum(r.device_rounds for r in results),
        quarantined=night.quarantine.height,
        engine_errors=sum(r.engine_errors for r in results),
        ingest=ingest,
        timings=timings,
    )
