"""Memory a step no longer uses, given back: glibc's free heap (``trim``) and the read buffers a small frame pins
(``compact``).

numpy's arrays and DuckDB's and Python's own allocations come from glibc's heap. An array smaller than glibc's
mmap threshold (which grows to 32 MB as big blocks are freed) lives in the heap, and the free pages between live
blocks stay in the process: a step that makes and frees such arrays chunk after chunk grows its resident memory
with every chunk although what it holds does not grow. On the 1,000,000-round night the statistics step, reading
21 chunks of tables, held 2.5 GB resident of which 1.4 GB was such free heap (measured with ``malloc_trim``;
``benchmarks/stats_memory.py``). ``trim`` returns it; elsewhere (no glibc) it does nothing.

polars keeps a string longer than 12 bytes as a view into a buffer shared with the frame it came from: a
1,000-row ``group_by(...).agg(pl.col(s).first())`` of a 10,000,000-row frame kept its 0.4 GB of strings alive.
A chunk's summaries kept so each chunk's read (a rule set's name, a shoe id) until the night's chunks were merged:
``compact`` copies a frame into buffers of its own.

``release`` (a collection, then ``trim``) ends a task that runs on an audit worker process, which goes on to its
next group (and on a Dask cluster stays alive after the last): on the 1,000,000-round night two idle workers had
held 0.44 and 0.31 GB through the statistics step (the cyclic garbage of their last group and glibc's free heap of
its DuckDB reads and numpy arrays), before the pool's workers were ended after the write
(``pipelines.audit.runner.end_group_workers``). polars' own allocator (jemalloc, with its background thread) gives its free pages back by
itself within seconds.

A full collection walks every object the process tracks that was alive before and is not frozen: in a group
worker, the modules, Prefect's and the libraries' objects imported after the worker froze its start
(``collector.tune_gc``), some 80,000-89,000, 60-105 ms of CPU a group on the 1,000,000-round night (1.56 s for its
20 groups), which found no cyclic garbage after each worker's first group. So the group's task releases with
``set_aside``: what survives its collection is frozen, and the next group's collection walks only what that group left
(0.17 s for the 20; an object frozen so is still freed by its reference count, and only a cycle among such objects
would stay until the process ends).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import io
from functools import lru_cache

import polars as pl


@lru_cache(maxsize=1)
def _libc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return libc if libc is not None and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def trim() -> bool:
    """Return the heap's free pages to the system; whether glibc was there to do it."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def release(set_aside: bool = False) -> None:
    """Collect the cyclic garbage, then ``trim``: what a finished task no longer holds goes back to the system.

    ``set_aside``: what survived the collection is then moved out of the collector's way (``gc.freeze``), so that the
    next ``release`` of this process walks only what was made since (see the module docstring: the groups' tasks)."""
    gc.collect()
    if set_aside:
        gc.freeze()
    trim()


def compact(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` in buffers of its own (through Arrow IPC in memory): its strings no longer keep alive the buffers of the
    frame they were cut from."""
    if df.width == 0:
        return df
    buffer = io.BytesIO()
    df.write_ipc(buffer, compression="uncompressed")
    buffer.seek(0)
    return pl.read_ipc(buffer)
