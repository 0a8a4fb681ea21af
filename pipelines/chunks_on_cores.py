"""Spread a pure count's chunks over the machine's cores, for a command a person waits on.

The rules engine computes without I/O or processes of its own: a long count (the Hold'em main game's 1,755 flop
classes, minutes of CPU) takes a ``map_chunks(fn, chunks)`` and combines the chunks' results in their order, so it
gives the same figures to the last bit however they were run. The CLI hands it this one, which starts a pool of
spawned processes on its first use (a figure that needs no count starts none), each kept to a core of its own and
ending with the command however it ends; the pool is closed on the way out, and on Ctrl-C its workers are ended at
once.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager


def usable_cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _start_worker(counter, cores: list[int]) -> None:
    """A worker's start: end with the command that spawned it, even a killed one (``lifeline``), and keep to a core
    of its own (the next one not taken), so that what sizes its threads by the usable cores (the poker evaluator) runs
    one thread in it, not one per core in every worker."""
    from pipelines.lifeline import end_with_parent

    end_with_parent()
    # Ctrl-C reaches every process of the terminal's group: the command decides (it ends the pool); a worker that
    # died of it would leave its chunk's result missing, and the command waiting for it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with counter.get_lock():
        k = counter.value
        counter.value += 1
    try:
        os.sched_setaffinity(0, {cores[k % len(cores)]})
    except (AttributeError, OSError):  # pragma: no cover - not Linux, or not allowed: threads as they come
        pass


def _in_order(results, every_s: float = 0.25) -> Iterator:
    """The pool's results in order, waiting for each at most ``every_s`` at a time: a signal may reach one of the
    pool's threads rather than the main one, which then sees it (Ctrl-C) only when it wakes."""
    while True:
        try:
            yield results.next(timeout=every_s)
        except multiprocessing.TimeoutError:
            continue
        except StopIteration:
            return


@contextmanager
def chunks_on_cores(processes: int = 0) -> Iterator[Callable[[Callable, Iterable], Iterable]]:
    """A ``map_chunks`` running each chunk on one of ``processes`` worker processes (0: one per usable core), in
    order; one process or one chunk runs in this process, as the builtin ``map`` would. Leaving by an exception
    (Ctrl-C) ends the workers at once rather than after their chunks."""
    n = processes or usable_cores()
    pool = None

    def map_chunks(fn: Callable, chunks: Iterable) -> Iterable:
        nonlocal pool
        chunks = list(chunks)
        if n <= 1 or len(chunks) <= 1:
            return map(fn, chunks)
        if pool is None:
            # spawned, not forked: the parent has threads (the progress bar's), which a fork copies half-way
            context = multiprocessing.get_context("spawn")
            cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(n))
            pool = context.Pool(min(n, len(chunks)), initializer=_start_worker, initargs=(context.Value("i", 0), cores))
        return _in_order(pool.imap(fn, chunks))

    try:
        yield map_chunks
    except BaseException:
        if pool is not None:
            pool.terminate()
            pool = None
        raise
    finally:
        if pool is not None:
            pool.close()
            pool.join()
