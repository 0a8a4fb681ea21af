"""The nightly audit as a Prefect flow, top to bottom: lock, ingest, scope, fingerprint, re-settle, write, publish.

1. **One writer.** The run takes the database's writer lock (``pipelines.writer_lock``) and keeps it from the
   ingest to the readers' snapshot: a second audit of the same database waits (``PITAUDIT_LOCK_WAIT``) or stops
   with a one-line reason; it never interleaves.
2. **Ingest** every input file into the core tables (the only task besides the write that opens the writer).
3. **Scope**: the gaming days this run audits and reports (``pipelines.audit.scope``): the input's, or those
   asked for (``gaming_day``, ``from_day``/``to_day``). None: nothing to audit (the CLI's exit status 4; the readers'
   snapshot is published when the ingest read anything, so that its quarantine rows reach the readers).
4. **Partitions** (gaming day x table) of those days, each with the **fingerprint** of its evidence
   (``pipelines.audit.fingerprint``); only those whose fingerprint changed since their last audit are
   re-settled. A re-run over the same input re-settles nothing and publishes the same files. On a pool of worker
   processes the workers start as step 3 begins, and the sequence gaps (which need only the days) go to them before
   the fingerprints are taken (steps 3-4 are the flow's process's alone; with the workers started at the first group,
   the other core had nothing to do meanwhile).
5. **Re-settle and check** the changed partitions: cut, in key order, into runs of about equal work
   (``load.contiguous_groups``), each group one task run (load -> reconstruct -> re-settle -> detect ->
   stage, each step's time in its log) on the task runner: threads for a small night, worker processes for a big one, or a Dask cluster
   (``pitaudit audit --dask``: its workers read the Parquet the writer publishes after the ingest, ``canon``;
   ``runner``). Each group leaves its rows in this run's own staging folder. The sequence gaps of the days run once beside them.
   (Statistical detectors, issue 11: after this step, over the night's settlements in the database.)
6. **Write** the changed partitions' ``out_`` rows and fingerprints in one transaction.
7. **Publish** findings.csv, settlements.parquet, quarantine.csv and report.html of the audited days into a
   temporary folder inside ``--out``, then move them into place together (``outputs``); then the read-only
   snapshot for investigators.
8. Tell Prefect what happened: the night's summary as a markdown artifact, the top findings as a table
   artifact, and, with ``PITAUDIT_NOTIFY_URL``, a notification when high-severity findings were found
   (``pipelines.audit.notify``; a failure notifies through the flow's ``on_failure`` hook).

The flow's parameters are plain strings (paths, dates, a time) so that a Prefect deployment can carry them
(``pitaudit serve``); the settings come from the environment of the process that runs it. Every task is a
thin wrapper of a plain function (``tasks``).
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl
from prefect import flow
from prefect.futures import as_completed

from pipelines.audit.load import Window, contiguous_groups
from pipelines.audit.params import AuditParams
from pipelines.audit.runner import (
    WORKERS, end_group_workers, group_params, runs_on_dask, server_for_workers, start_group_workers, task_runner,
    where_groups_run,
)
from pipelines.audit.scope import Scope, ScopeError, chosen_days, nothing_reason
from pipelines.db import discard_snapshot_copy, start_snapshot_copy
from pipelines.audit.tasks import (
    audit_group_task, export_settlements_task, fingerprints_task, gaps_task, ingest_task, keys_task, publish_canon_task,
    publish_task, scope_task, snapshot_task, statistics_task, write_database_task,
)
from pipelines.settings import Settings

# partitions run on a pool of WORKERS threads or processes (pipelines.audit.runner), in at least a few groups each
# so that they finish together, and in groups of at most about GROUP_ROUNDS rounds, so that what a worker holds at
# once stays small on a big night; on threads, the rounds the scalar engine settles use WORKERS processes
GROUPS_PER_WORKER = 4
GROUP_ROUNDS: int = Settings.model_fields["group_rounds"].default  # PITAUDIT_GROUP_ROUNDS's default


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
    scope: Scope = field(default_factory=lambda: Scope(()))
    resettled: int = 0  # partitions re-settled (the others were unchanged since their last audit)
    trend: pl.DataFrame | None = None  # pipelines.audit.trend.night_totals of the audited days and the nights before
    nothing: str | None = None  # why there was nothing to audit (then no file was written)
    warnings: tuple[str, ...] = ()  # what the console says beside the summary (pipelines.report.linked.LinkedPages)

    @property
    def audited(self) -> bool:
        return self.nothing is None


class Say:
    """Progress for a person: to Prefect's run logger (the UI shows it) and, when asked, to stderr."""

    def __init__(self, progress: bool) -> None:
        self.progress = progress

    def __call__(self, text: str, console: bool = True) -> None:
        from prefect.exceptions import MissingContextError
        from prefect.logging import get_run_logger

        try:
            get_run_logger().info(text)
        except MissingContextError:
            pass
        if self.progress and console:
            print(text, file=sys.stderr, flush=True)


def run_name() -> str:
    """The flow run's name: its gaming day when the parameters say it; renamed once the scope is known."""
    from prefect.runtime import flow_run

    p = flow_run.parameters
    if p.get("gaming_day"):
        return f"audit {p['gaming_day']}"
    if p.get("from_day") and p.get("to_day"):
        return f"audit {p['from_day']}..{p['to_day']}"
    return f"audit {Path(str(p.get('input_dir', ''))).name or 'input'} (days from the input)"


def _rename_run(scope: Scope) -> None:
    """Name the flow run by the gaming days it audits (the UI lists nights by name)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    try:
        from prefect.client.orchestration import get_client

        with get_client(sync_client=True) as client:
            client.update_flow_run(context.flow_run.id, name=f"audit {scope.label()}")
    except Exception:  # noqa: BLE001 - a name is a nicety; the audit goes on
        pass


def _stage_folder(db_path: Path) -> Path:
    """This run's own staging folder beside the database; leftovers of killed runs are removed (under the lock,
    no other run can be using one)."""
    for old in db_path.parent.glob(f".{db_path.name}.stage-*"):
        shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(Path(str(db_path) + ".stage"), ignore_errors=True)  # the shared folder of earlier versions
    return Path(tempfile.mkdtemp(prefix=f".{db_path.name}.stage-", dir=db_path.parent))


def _in_partitions(findings: pl.DataFrame, keys) -> pl.DataFrame:
    """The night-wide findings that lie in the partitions ``keys`` ((gaming_day, table_id) pairs), in their order."""
    wanted = set(keys)
    return findings.filter(pl.struct("gaming_day", "table_id").map_elements(
        lambda k: (k["gaming_day"], k["table_id"]) in wanted, return_dtype=pl.Boolean))


def _let_groups_end(futures: list) -> None:
    """After a failure, wait for the groups still running before their staging folder is removed: a group on a thread
    that went on after another failed (a full disk) wrote into the folder after its removal and made it again, left
    beside the database until the next run. The groups not started are cancelled, not waited for."""
    for future in futures:
        wrapped = getattr(future, "wrapped_future", None)
        if wrapped is not None:
            wrapped.cancel()  # a group still queued never starts (a running one is not stopped by this)
    for future in futures:
        wrapped = getattr(future, "wrapped_future", None)
        if wrapped is not None and wrapped.cancelled():
            continue
        try:
            future.wait()
        except Exception:  # noqa: BLE001 - the run's own failure is the one raised
            pass


def publish_for_dask(db_path: Path, params: AuditParams, timings: dict[str, float],
                     days: tuple[dt.date, ...]) -> Path:
    """What the group and gap tasks read: the database file, or on a Dask cluster (``pitaudit audit --dask``) the
    Parquet folder the writer publishes now (pipelines.audit.canon; the cluster's workers never open the database)."""
    if not runs_on_dask():
        return db_path
    t = time.perf_counter()
    folder = publish_canon_task(db_path, params, days)
    timings["parquet"] = time.perf_counter() - t
    return folder


def _on_failure(flow_, flow_run, state) -> None:
    from pipelines.audit.notify import notify_failure

    notify_failure(flow_run, state)


@flow(name="pitaudit-audit", flow_run_name=run_name, log_prints=False, persist_result=False,
      validate_parameters=False, task_runner=task_runner(0), on_failure=[_on_failure], on_crashed=[_on_failure])
def audit_flow(
    input_dir: str, db_path: str, out_dir: str, gaming_day_start: str = "06:00",
    gaming_day: str | None = None, from_day: str | None = None, to_day: str | None = None,
    progress: bool = False, settings: dict | None = None, ingested: str | None = None,
) -> AuditOutcome:
    """Audit the night(s) of ``input_dir`` into ``db_path`` and publish into ``out_dir`` (module docstring).

    ``gaming_day`` or ``from_day``/``to_day`` (``YYYY-MM-DD``) choose the days; ``settings`` overrides fields of
    the environment's ``PITAUDIT_*`` settings (``pipelines.settings.Settings``, as a dict). ``ingested``: the key of
    an ingest this process ran before the flow, under the writer lock it still holds (``pipelines.audit.ahead``).
    """
    from pipelines.audit.artifacts import publish_artifacts
    from pipelines.audit.notify import notify_high_findings
    from pipelines.audit.run import AuditError, check_can_run, check_database
    from pipelines.settings import settings_with
    from pipelines.writer_lock import LockError, writer_lock

    say = Say(progress)
    run_settings = settings_with(settings)
    input_path, db, out = Path(input_dir), Path(db_path), Path(out_dir)
    try:
        chosen = chosen_days(gaming_day, from_day, to_day)
    except ScopeError as exc:
        raise AuditError(str(exc)) from None
    check_can_run(input_path, db, out, gaming_day_start)
    params = group_params(AuditParams(gaming_day_start=gaming_day_start, workers=WORKERS, settings=run_settings),
                          1 if where_groups_run() in ("worker processes", "a Dask cluster") else 0)
    from contextlib import nullcontext

    from pipelines.audit.ahead import take

    ahead = take(ingested, db)  # the caller holds the lock and has ingested
    try:
        with nullcontext() if ahead else writer_lock(db, run_settings.lock_wait, say):
            check_database(db)
            outcome = _audit_locked(input_path, db, out, params, chosen, say, ahead)
    except LockError as exc:
        raise AuditError(str(exc)) from None
    if outcome.audited:
        publish_artifacts(outcome)
        notify_high_findings(outcome, run_settings)
    return outcome


def _audit_locked(input_dir: Path, db: Path, out: Path, params: AuditParams, chosen: Scope | None,
                  say: Say, ahead=None) -> AuditOutcome:
    """Steps 2-7 of the module docstring, under the writer lock (``ahead``: the ingest done before the flow)."""
    timings: dict[str, float] = {}
    t = time.perf_counter()
    ingest = ahead.summary if ahead else ingest_task(input_dir, db, params.gaming_day_start, params.settings)
    timings["ingest"] = ahead.seconds if ahead else time.perf_counter() - t

    t = time.perf_counter()
    start_group_workers()  # a pool's workers start (their imports) beside the scope, the keys and the fingerprints
    scope = chosen or scope_task(input_dir, ingest, params.day_start_minutes)
    keys = keys_task(db, params, scope.days) if scope.days else None
    if keys is None or keys.height == 0:
        why = (f"no round in the chosen gaming day(s) {scope.label()}" if chosen else
               nothing_reason(input_dir, ingest, bool(scope.days)))
        say(f"audit: nothing to audit: {why}", console=False)  # the CLI says it, once, as its reason
        if ingest.lines_read:  # the ingest wrote (quarantine rows, device events): the readers see the database as it is
            snapshot_task(db, params.settings)
        return AuditOutcome(findings=pl.DataFrame(), totals=pl.DataFrame(), paths={}, partitions=0, rounds=0,
                            device_rounds=0, quarantined=0, engine_errors=0, ingest=ingest, timings=timings,
                            scope=scope, nothing=why)
    _rename_run(scope)
    source = publish_for_dask(db, params, timings, scope.days)
    all_keys = list(keys.select("gaming_day", "table_id").iter_rows())
    stage_dir = _stage_folder(db)
    submitted: list = []  # every group's and the gaps' futures: on a failure, waited for before the stage goes
    try:
        # the sequence gaps need only the days: on a worker while this process fingerprints the partitions
        with server_for_workers():
            gaps = gaps_task.submit(source, params, scope.days)
        submitted.append(gaps)
        fingerprints = fingerprints_task(db, all_keys, params)
        changed = set(fingerprints["changed"])
        todo = keys.filter(pl.struct("gaming_day", "table_id").map_elements(
            lambda k: (k["gaming_day"], k["table_id"]) in changed, return_dtype=pl.Boolean)) if changed else keys.head(0)
        work = dict(zip(todo.select("gaming_day", "table_id").iter_rows(), todo["rounds"].to_list()))
        total_rounds = max(1, sum(work.values()))
        plan = contiguous_groups(todo, group_count(total_rounds, params.settings.group_rounds))
        cost = dict(zip(todo.select("gaming_day", "table_id").iter_rows(), todo["work"].to_list()))
        say(f"audit: gaming day(s) {scope.label()}: {keys.height} partition(s) (gaming day x table), {len(changed)} "
            f"changed since their last audit; {total_rounds if work else 0:,} rounds to re-settle in {len(plan)} "
            f"group(s) on {where_groups_run()}")
        results = []
        with server_for_workers():
            staged = {}
            # the heaviest groups first, so that the workers finish together; a group's index is its place in key order
            for index in sorted(range(len(plan)), key=lambda i: (-sum(cost[k] for k in plan[i]), i)):
                group = plan[index]
                label = f"{group[0][0].isoformat()} {group[0][1]}" + (f" and {len(group) - 1} more" if len(group) > 1 else "")
                staged[audit_group_task.submit(str(source), str(stage_dir), index, group, params, label)] = group
            submitted.extend(staged)
        done_keys = done_rounds = 0
        for future in as_completed(list(staged)):
            group = staged.pop(future)
            results.append(future.result())
            done_keys += len(group)
            done_rounds += sum(work.get(k, 0) for k in group)
            say(f"audit: {done_keys}/{len(work)} partitions re-settled and checked "
                f"({100 * done_rounds / total_rounds:.0f} % of the rounds, {time.perf_counter() - t:.0f} s)")
        gap_findings = gaps.result()
        # a gap may fall in a partition of its own (a day with no rounds): always replaced; others with their partition
        gap_keys = set(gap_findings.select("gaming_day", "table_id").drop_nulls().iter_rows()) if gap_findings.height else set()
        write_keys = sorted(changed | (gap_keys - set(all_keys)))
        if gap_findings.height:
            from pipelines.audit.frames import SETTLEMENTS_SCHEMA, empty
            from pipelines.audit.publish import stage as stage_files

            stage_files(stage_dir, len(plan), _in_partitions(gap_findings, write_keys), empty(SETTLEMENTS_SCHEMA))
        # the partitions not re-settled: their night-wide findings (a gap around them) replaced by tonight's
        unchanged = sorted(set(all_keys) - set(write_keys))
        if unchanged and gap_findings.height:
            from pipelines.audit.publish import stage_night_wide

            stage_night_wide(stage_dir, _in_partitions(gap_findings, unchanged))
        timings["audit"] = time.perf_counter() - t

        t = time.perf_counter()
        from pipelines.audit.outputs import output_folder

        every_key_changed = set(write_keys) >= set(all_keys)
        with output_folder(out) as partial:
            with server_for_workers():  # settlements.parquet from the staged files while the database loads them
                exported = export_settlements_task.submit(str(stage_dir), str(partial)) if every_key_changed else None
            try:
                write_database_task(db, write_keys, stage_dir, fingerprints["now"], work, params.settings, unchanged)
                settlements_partial = exported.result() if exported is not None else None
            finally:
                if exported is not None:
                    exported.wait()
            timings["write"] = time.perf_counter() - t
            end_group_workers()  # nothing more runs on them: their memory is the statistics' and publish's
            t = time.perf_counter()  # the statistical detectors: read the written nights, add their findings (issue 11)
            statistics_task(db, sorted({k[0] for k in all_keys}), params)
            timings["statistics"] = time.perf_counter() - t
            t = time.perf_counter()
            start_snapshot_copy(db)  # nothing writes the file until the snapshot: its copy runs beside the publish
            contents = {o.source_file: o.sha256 for o in getattr(ingest, "files", ()) if o.sha256}
            published = publish_task(partial, db, input_dir, all_keys, scope, settlements_partial, params.settings,
                                     contents)
        paths = {name: out / path.name for name, path in published["paths"].items()}
    except Exception:
        discard_snapshot_copy(db)  # no snapshot follows a failed step: its early copy goes too
        _let_groups_end(submitted)
        raise
    except BaseException:  # an interrupt: out at once (the next run removes what is left, as after a kill)
        discard_snapshot_copy(db)
        raise
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)
    snapshot_task(db, params.settings)
    timings["publish"] = time.perf_counter() - t
    say("audit: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    return AuditOutcome(
        findings=published["findings"],
        totals=published["totals"],
        paths=paths,
        partitions=len(all_keys),
        rounds=published["rounds"],
        device_rounds=sum(r.device_rounds for r in results),
        quarantined=published["quarantined"],
        engine_errors=sum(r.engine_errors for r in results),
        ingest=ingest,
        timings=timings,
        scope=scope,
        resettled=len(work),
        trend=published["trend"],
        warnings=tuple(published["linked"].warnings()),
    )
