"""``pitaudit audit``: check that the audit can run, run the flow, say what it found.

Everything that would stop the audit is checked first and reported as one line (:class:`AuditError`):
a missing input folder, a gaming-day start that is not a time, an output folder or database that
cannot be written, a database another process holds. Then the flow runs; its findings, whatever
they are, mean the audit ran (exit 0).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import polars as pl

from pipelines.audit.params import parse_day_start


class AuditError(RuntimeError):
    """The audit cannot run; the message is one line a person can act on."""


def prefect_defaults() -> None:
    """Embedded Prefect with telemetry off, quiet logs, and a patient start for the temporary server."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
    # the temporary server records one flow run; its loops for schedules, deployments, work pools and automations
    # have nothing to do here. (The server used 9-11 CPU s without them against 11-12 with them on a
    # 200,000-round night: a small gain, within the noise of five runs; a user's own settings still win.)
    for service in IDLE_SERVER_SERVICES:
        os.environ.setdefault(f"PREFECT_SERVER_SERVICES_{service}_ENABLED", "false")


IDLE_SERVER_SERVICES = ("CANCELLATION_CLEANUP", "FOREMAN", "LATE_RUNS", "SCHEDULER", "PAUSE_EXPIRATIONS", "REPOSSESSOR",
                        "CLEANUP_RECONCILER", "TRIGGERS")


def check_can_run(input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str) -> None:
    """Raise :class:`AuditError` with the reason when the audit cannot run."""
    input_dir, db_path, out_dir = Path(input_dir), Path(db_path), Path(out_dir)
    if not input_dir.exists():
        raise AuditError(f"input folder {input_dir} does not exist")
    if not input_dir.is_dir():
        raise AuditError(f"input {input_dir} is not a folder")
    try:
        parse_day_start(gaming_day_start)
    except ValueError as exc:
        raise AuditError(str(exc)) from None
    if out_dir.exists() and not out_dir.is_dir():
        raise AuditError(f"output {out_dir} exists and is not a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".pitaudit-", delete=True):
            pass
    except OSError as exc:
        raise AuditError(f"cannot write to the output folder {out_dir}: {exc.strerror or exc}") from None
    if db_path.exists() and db_path.is_dir():
        raise AuditError(f"database {db_path} is a folder, not a DuckDB file")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AuditError(f"cannot create the database's folder {db_path.parent}: {exc.strerror or exc}") from None
    if not os.access(db_path.parent, os.W_OK) or (db_path.exists() and not os.access(db_path, os.W_OK)):
        raise AuditError(f"database {db_path} is not writable")
    from pipelines.db import DatabaseError, open_writer

    try:
        open_writer(db_path).close()
    except DatabaseError as exc:
        raise AuditError(str(exc)) from None


def run_audit(input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str = "06:00",
              progress: bool = True, params=None, settings=None):
    """Run the whole audit; returns the flow's :class:`pipelines.audit.flow.AuditOutcome`.

    ``settings``: the run's :class:`pipelines.settings.Settings` (the CLI builds them; default: the defaults,
    or those ``params`` carries). Raises :class:`AuditError` (one line) when it cannot run. Prints a short summary to stdout and
    progress to stderr (``progress=False`` silences the progress lines).
    """
    input_dir, db_path, out_dir = Path(input_dir), Path(db_path), Path(out_dir)
    check_can_run(input_dir, db_path, out_dir, gaming_day_start)
    prefect_defaults()
    from pipelines.audit.collector import tuned_gc
    from pipelines.audit.flow import audit_flow
    from pipelines.audit.params import AuditParams
    from pipelines.audit.runner import WORKERS, group_params, group_processes, task_runner
    from pipelines.ingest.run import IngestError

    from dataclasses import replace

    params = params or AuditParams(gaming_day_start=gaming_day_start, workers=WORKERS)
    if settings is not None:
        params = replace(params, settings=settings)
    settings = params.settings
    processes = group_processes(input_dir, settings.audit_processes)
    params = group_params(params, processes)
    flow_fn = audit_flow.with_options(task_runner=task_runner(processes)) if processes else audit_flow
    try:
        with tuned_gc():
            outcome = flow_fn(input_dir, db_path, out_dir, gaming_day_start, params=params, progress=progress)
    except AuditError:
        raise
    except IngestError as exc:
        raise AuditError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (PITAUDIT_DEBUG=1 shows it)
        if settings.debug:
            raise
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise AuditError(f"the audit stopped: {type(exc).__name__}: {text}") from None
    print(summary_text(outcome), file=sys.stdout, flush=True)
    return outcome


def summary_text(outcome) -> str:
    """A few lines for the terminal: what was audited, what was found, where the report is."""
    f = outcome.findings
    by_sev = dict(f.group_by("severity").len().iter_rows()) if f.height else {}
    by_kind = sorted(f.group_by("kind").len().iter_rows(), key=lambda kv: (-kv[1], kv[0])) if f.height else []
    money = f.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))
    stake = money.group_by("currency").agg(pl.col("difference").abs().sum()).sort("currency") if money.height else None
    t = outcome.totals
    wagers = int(t["wagers"].sum() or 0) if t.height else 0
    unsettled = int(t["unsettled"].sum() or 0) if t.height else 0
    lines = []
    ing = outcome.ingest
    if ing is not None and hasattr(ing, "files"):
        lines.append(
            f"ingest: {len(ing.files)} file(s) ({ing.count('loaded')} loaded, {ing.count('already loaded')} already loaded, "
            f"{ing.count('unreadable')} unreadable, {ing.count('changed')} changed), {ing.lines_read:,} line(s) read, "
            f"{ing.rows_quarantined:,} quarantined"
        )
        lines += [f"  {f.status}: {f.source_file}: {f.error}" for f in ing.files if f.status in ("unreadable", "changed")]
    lines += [
        f"audited {outcome.rounds:,} table rounds ({outcome.device_rounds:,} with device cards), "
        f"{wagers:,} wagers ({unsettled:,} not settleable from the evidence) in {outcome.partitions} partition(s); "
        f"{outcome.quarantined:,} input line(s) quarantined",
        f"findings: {f.height:,} ({by_sev.get('high', 0):,} high, {by_sev.get('medium', 0):,} medium, {by_sev.get('low', 0):,} low)"
        + (": " + ", ".join(f"{k} {n:,}" for k, n in by_kind) if by_kind else ""),
    ]
    if stake is not None and stake.height:
        lines.append("money at stake: " + ", ".join(f"{v:,} {c or ''}".strip() for c, v in stake.iter_rows()))
    if outcome.engine_errors:
        lines.append(f"warning: the rules engine could not settle {outcome.engine_errors:,} round(s); see unsettled_reason in settlements.parquet")
    lines.append(f"report: {outcome.paths['report']}")
    return "\n".join(lines)
