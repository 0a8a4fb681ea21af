"""A worker process ends when the process that spawned it does, even a killed one (the audit's group pool,
the engine's pool and the ingest's parsers all start theirs through :func:`end_with_parent`).

An audit killed by SIGKILL (an operator, the OOM killer, a scheduler's timeout) runs none of its clean-up:
its pools never shut their workers down. A ``ProcessPoolExecutor`` worker that is waiting for work waits on a
queue whose write end it holds itself, so it never sees its parent go; one that is busy finishes its group
first. Either way it lives on, holding the killed run's stderr, its memory and a read handle on the database.

So each worker watches the process that spawned it (``multiprocessing.parent_process``): a daemon thread
checks a few times a second that it is still its parent (a child whose parent dies is handed to another
process) and ends the worker at once when not. The kernel's own parent-death signal (``PR_SET_PDEATHSIG``)
is not used for workers: to the kernel the "parent" is the *thread* that started the child, and the pools
start workers from threads that may end before the pool does (a task's thread, for the engine's pool), which
would kill healthy workers.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

EVERY_S = 0.2


def _watch(parent_pid: int, every_s: float) -> None:  # pragma: no cover - runs in the worker
    while os.getppid() == parent_pid:
        time.sleep(every_s)
    os._exit(1)  # nothing to clean up: the run that wanted this worker's results is gone


def end_with_parent(every_s: float = EVERY_S) -> None:
    """In a new worker of a ``multiprocessing`` pool (its initializer): end this process as soon as the process that
    spawned it is gone, including when it died before this call. Nothing happens outside such a worker."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None:
        return
    if os.getppid() != parent.pid:
        os._exit(1)
    threading.Thread(target=_watch, args=(parent.pid, every_s), name="pitaudit-lifeline", daemon=True).start()
