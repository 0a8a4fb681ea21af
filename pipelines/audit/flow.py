"""The nightly audit as a Prefect flow: ingest, load, reconstruct, re-settle, detect, stage, write, publish.

The night is cut into partitions (gaming day x table), and the partitions, in key order, into runs
of about equal work (``load.contiguous_groups``); each group runs a chain of tasks (load ->
reconstruct -> re-settle -> detect -> stage, inside one "audit group" task run) and the groups run
side by side on the task runner: threads for a small night, worker processes for a big one
(``runner``); a Dask task runner would be the same swap, over a cluster. A task reads what it needs
from the database itself and leaves its results in a staging folder. The event and round-number
gaps need the whole night and run once. The flow is the only writer of the database: the ingest
task loads the core tables; the write task replaces the audited partitions' ``out_`` rows by the
staged ones in one transaction while settlements.parquet is exported from the same staged files;
the publish task writes the other files of the output contract from the tables.

Prefect runs embedded (no server to install; ``pipelines.audit.run`` switches telemetry off).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl
from prefect import flow
from prefect.futures import as_completed

from pipelines.audit.load import contiguous_groups
from pipelines.audit.params import AuditParams
from pipelines.audit.publish import clear_stage
from pipelines.audit.runner import WORKERS, server_for_workers, task_runner, where_groups_run
from pipelines.audit.tasks import (
    audit_group_task, export_settlements_task, gaps_task, ingest_task, keys_task, publish_task, write_database_task,
)

# partitions run on a pool of WORKERS threads or processes (pipelines.audit.runner), in at least a few groups each
# so that they finish together, and in groups of at most about GROUP_ROUNDS rounds, so that what a worker holds at
# once stays small on a big night; on threads, the games settled one round at a time (blackjack) use WORKERS processes
GROUPS_PER_WORKER = 4
GROUP_ROUNDS = 50_000


def group_count(total_rounds: int, per_group: int = GROUP_ROUNDS) -> int:
    """How many groups the night's partitions are dealt into (``per_group``: ``Settings.group_rounds``)."""
    return max(GROUPS_PER_WORKER * WORKERS, -(-total_rounds // per_group))


@dataclass
class AuditOutcome:
    """What the flow did: the findings, the settlement totals, the paths, counts for the summary line."""

    findings: pl.DataFrame
    totals: pl.DataFrame  # per currency: rounds, wagers, wagered, recorded, expected, unsettled
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


@flow(name="pitaudit-audit", log_prints=False, persist_result=False, validate_parameters=False,
      task_runner=task_runner(0))
def audit_flow(
    input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str = "06:00",
    params: AuditParams | None = None, progress: bool = True,
) -> AuditOutcome:
    say = _progress_printer() if progress else (lambda text: None)
    params = params or AuditParams(gaming_day_start=gaming_day_start, workers=WORKERS)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    ingest = ingest_task(input_dir, db_path, gaming_day_start, params.settings)
    timings["ingest"] = time.perf_counter() - t

    t = time.perf_counter()
    keys = keys_task(db_path, params)
    work = dict(zip(keys.select("gaming_day", "table_id").iter_rows(), keys["rounds"].to_list()))
    total_rounds = max(1, sum(work.values()))
    plan = contiguous_groups(keys, group_count(total_rounds, params.settings.group_rounds))
    cost = dict(zip(keys.select("gaming_day", "table_id").iter_rows(), keys["work"].to_list()))
    say(f"audit: {total_rounds:,} rounds in {keys.height} partition(s) (gaming day x table), {len(plan)} group(s) "
        f"on {where_groups_run()}")
    stage_dir = Path(str(db_path) + ".stage")
    clear_stage(stage_dir)
    staged = {}
    with server_for_workers():
        gaps = gaps_task.submit(db_path, params)
        # the heaviest groups first, so that the workers finish together; a group's index is its place in key order
        for index in sorted(range(len(plan)), key=lambda i: (-sum(cost[k] for k in plan[i]), i)):
            group = plan[index]
            label = f"{group[0][0].isoformat()} {group[0][1]}" + (f" and {len(group) - 1} more" if len(group) > 1 else "")
            staged[audit_group_task.submit(db_path, stage_dir, index, group, params, label)] = group
    results = []
    done_keys = done_rounds = 0
    for future in as_completed(list(staged)):
        group = staged.pop(future)
        results.append(future.result())
        done_keys += len(group)
        done_rounds += sum(work.get(k, 0) for k in group)
        say(f"audit: {done_keys}/{keys.height} partitions re-settled and checked "
            f"({100 * done_rounds / total_rounds:.0f} % of the rounds, {time.perf_counter() - t:.0f} s)")
    gap_findings = gaps.result()
    if gap_findings.height:
        from pipelines.audit.publish import stage as stage_files
        from pipelines.audit.frames import SETTLEMENTS_SCHEMA, empty

        stage_files(stage_dir, len(plan), gap_findings, empty(SETTLEMENTS_SCHEMA))
    timings["audit"] = time.perf_counter() - t
    # gap findings may fall in a partition of their own (a day with no rounds): replace those too
    all_keys = sorted(set(work) | set(gap_findings.select("gaming_day", "table_id").drop_nulls().iter_rows()))

    t = time.perf_counter()
    with server_for_workers():  # settlements.parquet from the staged files while the database loads them
        exported = export_settlements_task.submit(stage_dir, out_dir)
    try:
        write_database_task(db_path, all_keys, stage_dir, params.settings.writer_memory)
        settlements_partial = exported.result()
    except BaseException:
        exported.wait()
        (out_dir / ".settlements.parquet.partial").unlink(missing_ok=True)
        raise
    finally:
        exported.wait()
        clear_stage(stage_dir)
    timings["write"] = time.perf_counter() - t

    t = time.perf_counter()
    from pipelines.audit.load import load_quarantine, load_source_files
    from pipelines.db import open_reader

    con = open_reader(db_path)
    try:
        quarantine, source_files = load_quarantine(con), load_source_files(con)
    finally:
        con.close()
    files = tuple(
        (r["source_file"], r["kind"], r["lines_read"], r["rows_accepted"], r["rows_quarantined"])
        for r in source_files.iter_rows(named=True)
    )
    published = publish_task(out_dir, db_path, all_keys, (quarantine, files), settlements_partial,
                             params.settings.reader_memory)
    timings["publish"] = time.perf_counter() - t
    say("audit: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    return AuditOutcome(
        findings=published["findings"],
        totals=published["totals"],
        paths=published["paths"],
        partitions=keys.height,
        rounds=sum(r.rounds for r in results),
        device_rounds=sum(r.device_rounds for r in results),
        quarantined=quarantine.height,
        engine_errors=sum(r.engine_errors for r in results),
        ingest=ingest,
        timings=timings,
    )
