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
from contextlib import ExitStack
from pathlib import Path

import polars as pl

from pipelines.audit.params import parse_day_start
from pipelines.currency import format_money


class AuditError(RuntimeError):
    """The audit cannot run; the message is one line a person can act on."""


def prefect_home() -> Path:
    """pitaudit's own Prefect home (its embedded server's database, its settings), apart from any other Prefect
    user's runs: ``~/.pitaudit/prefect``."""
    return Path.home() / ".pitaudit" / "prefect"


def prefect_defaults(console: str = "CRITICAL", own_home: bool = True) -> None:
    """Prefect as pitaudit runs it, each a default the user's own environment overrides:

    - its state in a home of its own (:func:`prefect_home`) unless the user names one (``PREFECT_HOME``) or points
      pitaudit at a server (``PREFECT_API_URL``: the server keeps the state);
    - telemetry off; a patient start for the temporary server;
    - the runs' logs (INFO) sent to the server, where the UI shows them, while the console handler shows only
      ``console`` and above: the CLI prints its own progress and a one-line reason, never Prefect's traceback of
      the failure (``PITAUDIT_DEBUG=1`` shows the traceback).
    """
    if own_home and "PREFECT_HOME" not in os.environ and "PREFECT_API_URL" not in os.environ:
        home = prefect_home()
        try:
            home.mkdir(parents=True, exist_ok=True)  # Prefect creates the last folder only
            os.environ["PREFECT_HOME"] = str(home)
        except OSError:
            pass  # a read-only home: Prefect's default home it is
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO")
    os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", console)
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
    # the temporary server records one flow run; its loops for schedules, deployments, work pools and automations
    # have nothing to do here. (The server used 9-11 CPU s without them against 11-12 with them on a
    # 200,000-round night: a small gain, within the noise of five runs; a user's own settings still win.)
    for service in IDLE_SERVER_SERVICES:
        os.environ.setdefault(f"PREFECT_SERVER_SERVICES_{service}_ENABLED", "false")


IDLE_SERVER_SERVICES = ("CANCELLATION_CLEANUP", "FOREMAN", "LATE_RUNS", "SCHEDULER", "PAUSE_EXPIRATIONS", "REPOSSESSOR",
                        "CLEANUP_RECONCILER", "TRIGGERS")


def not_utf8(**paths: Path) -> str | None:
    """The reason when one of ``paths`` (named by keyword: ``input_folder=...``) is not UTF-8, else None.

    A file system name is bytes; one written in Latin-1 (``café`` as the byte 0xe9) reached DuckDB ("cannot encode
    str as UTF-8", "std::bad_cast") or Prefect's parameters (UnicodeEncodeError) in the middle of a run. The path is
    shown with its bytes escaped, as a file of the input whose name is not UTF-8 is (pipelines.ingest.discover)."""
    from pipelines.ingest.discover import escaped_if_not_utf8

    for label, path in paths.items():
        shown = escaped_if_not_utf8(str(Path(path).absolute()))
        if shown is not None:
            return f"the {label.replace('_', ' ')}'s path {shown} is not UTF-8: rename it"
    return None


def check_can_run(input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str) -> None:
    """Raise :class:`AuditError` with the reason when the audit cannot run."""
    input_dir, db_path, out_dir = Path(input_dir), Path(db_path), Path(out_dir)
    problem = not_utf8(input_folder=input_dir, database=db_path, output_folder=out_dir)
    if problem:
        raise AuditError(problem)
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


def check_database(db_path: Path) -> None:
    """Raise :class:`AuditError` when the database cannot be opened for writing (not a DuckDB file, held by a
    process that is not a pitaudit run: a notebook on the writer's file). Called under the writer lock: another
    audit holding the file is waited for there, not reported here."""
    from pipelines.db import DatabaseError, open_writer

    try:
        open_writer(db_path).close()
    except DatabaseError as exc:
        raise AuditError(str(exc)) from None


class NothingToAudit(AuditError):
    """The input (or the days asked for) held no round to audit: a distinct exit status, not a clean night."""


def run_audit(input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str = "06:00",
              progress: bool = True, settings=None, gaming_day: str | None = None, from_day: str | None = None,
              to_day: str | None = None, dask: str | None = None):
    """Run the whole audit; returns the flow's :class:`pipelines.audit.flow.AuditOutcome`.

    ``settings``: the run's :class:`pipelines.settings.Settings` (the CLI builds them; default: the
    environment's). ``gaming_day`` or ``from_day``/``to_day`` choose the days (default: the input's).
    ``dask``: ``local`` or a scheduler address: the groups run on a Dask cluster (``runner.dask_task_runner``).
    Raises :class:`NothingToAudit` when there was no round to audit, :class:`AuditError` (one line) when it
    cannot run. Prints a short summary to stdout and progress to stderr (``progress=False`` silences it).
    """
    from pipelines.audit.scope import ScopeError, chosen_days

    input_dir, db_path, out_dir = Path(input_dir), Path(db_path), Path(out_dir)
    try:
        chosen_days(gaming_day, from_day, to_day)
    except ScopeError as exc:
        raise AuditError(str(exc)) from None
    if dask is not None:
        from pipelines.audit.runner import parse_dask_address

        try:
            dask = parse_dask_address(dask)
        except ValueError as exc:
            raise AuditError(str(exc)) from None
    check_can_run(input_dir, db_path, out_dir, gaming_day_start)
    if dask is not None:
        from pipelines.audit.runner import check_scheduler

        try:
            check_scheduler(dask)
        except ConnectionError as exc:
            raise AuditError(str(exc)) from None
    prefect_defaults()
    from pipelines.audit.server import EarlyServer

    # Prefect's server takes seconds to answer: its process starts now, and this one ingests meanwhile
    # (pipelines.audit.ahead), under the writer lock the flow then keeps (issue 13)
    early = EarlyServer()
    held = ExitStack()
    try:
        with held:
            early.launch()
            return _run_flow(input_dir, db_path, out_dir, gaming_day_start, progress, settings, gaming_day, from_day,
                             to_day, dask, early, held)
    finally:
        early.close()


def _run_flow(input_dir: Path, db_path: Path, out_dir: Path, gaming_day_start: str, progress: bool, settings,
              gaming_day, from_day, to_day, dask, early, held):
    """:func:`run_audit` once the server's process is launched (``early``): the ingest first (it imports nothing of
    Prefect, which takes seconds), then the flow; ``held`` keeps the writer lock of the ingest run ahead until the
    flow is done."""
    from pipelines.audit.ahead import ingest_ahead
    from pipelines.audit.collector import tuned_gc
    from pipelines.ingest.run import IngestError
    from pipelines.settings import Settings, SettingsError, load_settings

    settings = settings or load_settings()
    try:
        with tuned_gc():
            ingested = ingest_ahead(held, input_dir, db_path, gaming_day_start, settings) \
                if early.launched is not None and isinstance(settings, Settings) else None
        from pipelines.audit.flow import audit_flow
        from pipelines.audit.runner import group_processes, task_runner
        from pipelines.audit.server import embedded_server

        if dask is not None:
            from pipelines.audit.runner import dask_task_runner

            # a local cluster of PITAUDIT_AUDIT_PROCESSES worker processes (default one per core), one group each
            flow_fn = audit_flow.with_options(task_runner=dask_task_runner(dask, settings.audit_processes))
        else:
            processes = group_processes(input_dir, settings.audit_processes)
            flow_fn = audit_flow.with_options(task_runner=task_runner(processes)) if processes else audit_flow
        with embedded_server(early), tuned_gc():
            outcome = flow_fn(str(input_dir), str(db_path), str(out_dir), gaming_day_start, gaming_day=gaming_day,
                              from_day=from_day, to_day=to_day, progress=progress,
                              settings=settings.model_dump(exclude_unset=False) if isinstance(settings, Settings) else None,
                              ingested=ingested)
    except AuditError:
        raise
    except (IngestError, SettingsError) as exc:
        raise AuditError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (PITAUDIT_DEBUG=1 shows it)
        if settings.debug:
            raise
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        hint = "; PITAUDIT_DUCKDB_MEMORY sets DuckDB's memory limit" if "Out of Memory" in text else ""
        if "No space left on device" not in text:
            hint += full_disk_hint(Path(db_path).parent, Path(out_dir))
        raise AuditError(f"the audit stopped: {type(exc).__name__}: {text}{hint}") from None
    if not outcome.audited:
        raise NothingToAudit(f"nothing to audit: {outcome.nothing}")
    print(summary_text(outcome), file=sys.stdout, flush=True)
    return outcome


# a disk with less room than this after a failed run is taken as its cause: a write that fails on a full disk does
# not always say so (polars' Parquet writer said "Invalid thrift: transport error" when its file's footer did not fit)
FULL_DISK_BYTES = 1 << 20


def full_disk_hint(*folders: Path) -> str:
    """``"; the disk of FOLDER is full (N bytes free)"`` for the first of ``folders`` (the database's, the output's:
    or the nearest that exists) whose disk has less than :data:`FULL_DISK_BYTES` free, else ``""``."""
    import shutil

    for folder in folders:
        near = folder
        while not near.exists() and near != near.parent:
            near = near.parent
        try:
            free = shutil.disk_usage(near).free
        except OSError:
            continue
        if free < FULL_DISK_BYTES:
            return f"; the disk of {folder} is full ({free:,} bytes free)"
    return ""


def summary_text(outcome) -> str:
    """A few lines for the terminal: what was audited, what was found, where the report is."""
    f = outcome.findings
    by_sev = dict(f.group_by("severity").len().iter_rows()) if f.height else {}
    by_kind = sorted(f.group_by("kind").len().iter_rows(), key=lambda kv: (-kv[1], kv[0])) if f.height else []
    money = f.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))
    stake = money.group_by("currency").agg(pl.col("difference").cast(pl.Int128).abs().sum()).sort("currency") \
        if money.height else None
    t = outcome.totals
    wagers = int(t["wagers"].sum() or 0) if t.height else 0
    unsettled = int(t["unsettled"].sum() or 0) if t.height else 0
    lines = []
    ing = outcome.ingest
    if ing is not None and hasattr(ing, "files"):
        lines.append(
            f"ingest: {len(ing.files):,} file(s) ({ing.count('loaded'):,} loaded, {ing.count('already loaded'):,} already "
            f"loaded, {ing.count('unreadable'):,} unreadable, {ing.count('refused'):,} refused), {ing.lines_read:,} line(s) read, "
            f"{ing.rows_quarantined:,} quarantined"
            + (f", {ing.source_changes:,} round(s) or event(s) changed since loaded" if ing.source_changes else "")
        )
        from pipelines.console import shown

        lines += [f"  {f.status}: {shown(f.source_file)}: {shown(f.error)}" for f in ing.files
                  if f.status in ("unreadable", "refused")]
    lines += [
        f"audited gaming day(s) {outcome.scope.label()}: {outcome.rounds:,} table rounds, {wagers:,} wagers "
        f"({unsettled:,} not settleable from the evidence) in {outcome.partitions} partition(s), "
        f"{outcome.resettled} re-settled ({outcome.device_rounds:,} rounds with device cards), the others unchanged "
        f"since their last audit; {outcome.quarantined:,} input line(s) quarantined",
        f"findings: {f.height:,} ({by_sev.get('high', 0):,} high, {by_sev.get('medium', 0):,} medium, {by_sev.get('low', 0):,} low)"
        + (": " + ", ".join(f"{k} {n:,}" for k, n in by_kind) if by_kind else ""),
    ]
    if stake is not None and stake.height:
        lines.append("money at stake: " + ", ".join(format_money(int(v), c) for c, v in stake.iter_rows()))
    if outcome.engine_errors:
        lines.append(f"warning: the rules engine could not settle {outcome.engine_errors:,} round(s); see unsettled_reason in settlements.parquet")
    lines += [f"warning: {w}" for w in outcome.warnings]
    lines.append(f"report: {outcome.paths['report']}")
    return "\n".join(lines)
