"""Spread a pure count's chunks over the machine's cores, for a command a person waits on.

The rules engine computes without I/O or processes of its own: a long count (the Hold'em main game's 1,755 flop
classes, minutes of CPU) takes a ``map_chunks(fn, chunks)`` and combines the chunks' results in their order, so it
gives the same figures to the last bit however they were run. The CLI hands it this one, which starts a pool of
spawned processes on its first use (a figure that needs no count starts none) and ends it on the way out, Ctrl-C
included.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager


def usable_cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextmanager
def chunks_on_cores(processes: int = 0) -> Iterator[Callable[[Callable, Iterable], Iterable]]:
    """A ``map_chunks`` running each chunk on one of ``processes`` worker processes (0: one per usable core), in
    order; one process or one chunk runs in this process, as the builtin ``map`` would."""
    n = processes or usable_cores()
    pool: ProcessPoolExecutor | None = None

    def map_chunks(fn: Callable, chunks: Iterable) -> Iterable:
        nonlocal pool
        chunks = list(chunks)
        if n <= 1 or len(chunks) <= 1:
            return map(fn, chunks)
        if pool is None:
            # spawned, not forked: the parent has threads (the progress bar's), which a fork copies half-way
            pool = ProcessPoolExecutor(max_workers=min(n, len(chunks)), mp_context=multiprocessing.get_context("spawn"))
        return pool.map(fn, chunks)

    try:
        yield map_chunks
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
