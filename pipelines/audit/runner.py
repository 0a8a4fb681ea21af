"""Where the audit's groups run: threads for a small night, worker processes for a big one.

Reconstructing, re-settling and checking a group is Python that holds the interpreter lock most of
the time, so groups on threads take turns on one core; on a 1,000,000-round night that made the
audit stage as long as the sum of its groups. Prefect's ``ProcessPoolTaskRunner`` runs each
``audit group`` task (reported to the same flow run, with its steps in its log) in a spawned worker
process instead: each reads its partitions from the database read-only, as DuckDB lets several
processes do while nobody writes, and leaves its results in the staging folder; the flow's process
stays the only writer. Workers cost a few seconds to start (Prefect and polars imported in each),
so a night under :data:`PROCESS_MIN_BYTES` of input keeps to threads.

``Settings.audit_processes`` (``PITAUDIT_AUDIT_PROCESSES``) overrides the choice: ``0`` threads, ``N`` that many processes.

``pitaudit audit --dask local`` or ``--dask tcp://HOST:PORT`` runs the same tasks on a Dask cluster through
prefect-dask's ``DaskTaskRunner`` (:func:`dask_task_runner`): a ``distributed.LocalCluster`` of worker
processes started for the run, or the scheduler at that address. Dask does the scheduling and moves the
tasks and their results; the workers read the canonical data from the Parquet folder the writer
publishes after the ingest (``pipelines.audit.canon``), never the database file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.audit.params import AuditParams

PROCESS_MIN_BYTES = 128 * 2**20
WORKERS = max(2, os.cpu_count() or 1)


def input_bytes(input_dir: Path) -> int:
    """The size of the log files the ingest would read under ``input_dir``."""
    from pipelines.ingest.discover import discover

    total = 0
    for found in discover(Path(input_dir)):
        try:
            total += found.path.stat().st_size if found.problem is None else 0
        except OSError:
            pass  # the ingest reports the file it cannot read
    return total


def group_processes(input_dir: Path, chosen: int | None = None) -> int:
    """How many worker processes the groups run on; 0 = threads of the flow's process (see the module docstring).
    ``chosen``: ``Settings.audit_processes`` (None: decide from the input's size)."""
    if chosen is not None:
        return chosen
    return WORKERS if input_bytes(input_dir) >= PROCESS_MIN_BYTES else 0


def task_runner(processes: int):
    """The flow's task runner: a pool of ``processes`` workers, or threads when 0."""
    if processes:
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=processes, initializer=start_group_worker)
    from prefect.task_runners import ThreadPoolTaskRunner

    return ThreadPoolTaskRunner(max_workers=WORKERS)


def parse_dask_address(text: str) -> str:
    """``--dask``'s value: ``local``, or a scheduler address such as ``tcp://10.0.0.5:8786``; a clear error otherwise."""
    value = text.strip()
    if value == "local":
        return value
    scheme, sep, rest = value.partition("://")
    if not sep or not scheme or not rest or any(c.isspace() for c in value):
        raise ValueError(f"--dask takes local or a scheduler address such as tcp://HOST:8786; got {text!r}")
    return value


def dask_task_runner(address: str, workers: int | None = None):
    """prefect-dask's task runner: on a new local cluster of ``workers`` processes (one thread each, the groups
    fill the cores; default one per core) for ``local``, else on the running cluster at ``address``."""
    from prefect_dask import DaskTaskRunner

    if address == "local":
        n = workers or WORKERS
        return DaskTaskRunner(cluster_class="distributed.LocalCluster", cluster_kwargs={
            "n_workers": n, "threads_per_worker": 1, "processes": True, "dashboard_address": None,
            # one polars thread per worker (they share the cores), as in the process pool's start_group_worker
            "env": {"POLARS_MAX_THREADS": "1"},
            "preload": ["pipelines.audit.dask_worker"],  # the audit's collector thresholds in each worker
            # Dask's statistical profiler (for its dashboard, which this cluster does not serve) samples the running
            # task's stack 100 times a second from the worker's event loop, interrupting the group for the
            # interpreter lock: off, in this cluster's workers only (the nannies pass it on)
            "config": {"distributed.worker.profile.enabled": False},
        })
    return DaskTaskRunner(address=address)


def check_scheduler(address: str, timeout_s: int = 20) -> None:
    """Raise ``ConnectionError`` (one line) when no Dask scheduler answers at ``address``: checked before the ingest,
    so that a wrong address costs seconds, not a night's ingest and a traceback."""
    if address == "local":
        return
    from distributed import Client

    try:
        with Client(address, timeout=f"{timeout_s}s", set_as_default=False):
            pass
    except (OSError, TimeoutError, ValueError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConnectionError(f"no Dask scheduler answers at {address}: {text}") from None


def runs_on_dask() -> bool:
    """True inside a flow run whose task runner is prefect-dask's."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    return context is not None and type(context.task_runner).__name__ == "DaskTaskRunner"


def group_params(params: AuditParams, processes: int) -> AuditParams:
    """In worker processes the groups already fill the cores: the scalar engine's own pool stays off."""
    if processes and params.workers > 1:
        from dataclasses import replace

        return replace(params, workers=1)
    return params


def start_group_worker() -> None:
    """In a new worker: it ends with the flow's process even when that one is killed (``lifeline``), one polars
    thread (the workers share the cores), the modules a group's task runs (imported now, while the flow's process
    works out the scope, the partitions and their fingerprints, rather than when the worker's first group arrives)
    and the audit's collector thresholds."""
    from pipelines.lifeline import end_with_parent

    end_with_parent()
    os.environ.setdefault("POLARS_MAX_THREADS", "1")  # before polars is imported in this process
    import prefect.task_engine  # noqa: F401 - what runs each task in the worker
    import pipelines.audit.tasks  # noqa: F401 - the group's and the gaps' code, polars and DuckDB with it
    from pipelines.audit.collector import tune_gc
    tune_gc()


def start_group_workers() -> int:
    """Start the flow's worker processes now, when its task runner is a process pool; returns how many were asked for.

    A ``ProcessPoolExecutor`` spawns a worker only when a task is submitted and none is idle, so the pool's workers
    started with the first groups, after the audit stage's head had run in the flow's process alone (the scope, the
    partition keys and the fingerprints: ~6 CPU s on the 1,000,000-round night, one core idle) and each then imported
    its libraries (:func:`start_group_worker`) before its first group. Each worker is asked for here with a call that
    does nothing (the pool's own executor, not a Prefect task run: there is nothing to record), so that their starts
    run beside that head on the other core. Threads and a Dask cluster (started with the flow) are left as they are."""
    from prefect.context import FlowRunContext
    from prefect.task_runners import ProcessPoolTaskRunner

    context = FlowRunContext.get()
    runner = context.task_runner if context is not None else None
    executor = getattr(runner, "_executor", None) if isinstance(runner, ProcessPoolTaskRunner) else None
    if executor is None:
        return 0
    n = int(getattr(runner, "_max_workers", 0) or WORKERS)
    try:
        for _ in range(n):  # none is idle yet, so each call spawns one
            executor.submit(os.getpid)
    except (RuntimeError, OSError):  # a pool that cannot start says so at the first group's submit, as before
        return 0
    return n


@contextmanager
def server_for_workers() -> Iterator[None]:
    """Tasks submitted inside the block tell their worker processes the address of the flow's Prefect server.

    The embedded server's address is not a setting (it is chosen when the server starts); a worker that is not
    told starts an embedded server of its own (seconds each) and records its task runs there, apart from the
    flow run. Nothing changes when the flow's task runner is not a process pool or an API address is set.
    """
    from prefect.context import FlowRunContext
    from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings
    from prefect.task_runners import ProcessPoolTaskRunner

    context = FlowRunContext.get()
    if context is None or get_current_settings().api.url or not (
            isinstance(context.task_runner, ProcessPoolTaskRunner) or runs_on_dask()):
        yield
        return
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        url = str(client.api_url)
    with temporary_settings(updates={PREFECT_API_URL: url}):
        yield


def where_groups_run() -> str:
    """For the progress line: the flow's task runner, in words."""
    from prefect.context import FlowRunContext
    from prefect.task_runners import ProcessPoolTaskRunner

    context = FlowRunContext.get()
    runner = context.task_runner if context is not None else None
    if isinstance(runner, ProcessPoolTaskRunner):
        return "worker processes"
    if runs_on_dask():
        return "a Dask cluster"
    return "threads"


def end_group_workers() -> bool:
    """End the flow's worker processes once the groups, the sequence gaps and the settlements export are done.

    The process pool lives as long as the flow run; after the write its workers only sit idle, holding what their
    libraries keep of the groups' work (0.41 and 0.31 GB each on the 1,000,000-round night after ``release``), through
    the statistics step and publish, the two steps whose own memory peaks the run. Nothing is pending when this is
    called (every future has been waited for), so the runner's public ``cancel_all`` only shuts its executor down and
    stops forwarding the workers' log messages after the ones already queued; the runner's exit at the flow's end
    then finds nothing left to stop. Threads and a Dask cluster are left as they are. Returns whether workers ended.
    """
    from prefect.context import FlowRunContext
    from prefect.task_runners import ProcessPoolTaskRunner

    context = FlowRunContext.get()
    runner = context.task_runner if context is not None else None
    if not isinstance(runner, ProcessPoolTaskRunner):
        return False
    runner.cancel_all()
    return True
