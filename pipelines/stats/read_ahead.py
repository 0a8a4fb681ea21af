"""Read the next chunk of a night while the statistics summarise this one.

The statistics step reads a night a chunk of tables at a time (``load.load_inputs``: DuckDB's scan, join and sort,
then the Arrow hand-over to polars) and summarises each chunk (``summaries.summarise_chunk``: polars and numpy). One
after the other, each leaves a core idle much of the time on a 2-core machine: DuckDB's conversion and polars' small
group-bys run on one thread, the Python between them on one. ``read_ahead`` runs the next chunk's read on one
background thread while the caller summarises the chunk it has (both release the GIL in their engines), so the
night's read is mostly hidden behind its summaries. The same reads in the same order, each on the one connection
(only the background thread touches it until the loop ends): the same frames. It holds at most two chunks' reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

K = TypeVar("K")
R = TypeVar("R")


def read_ahead(read: Callable[[K], R], keys: Iterable[K]) -> Iterator[R]:
    """``read(key)`` of each key in order, the next one read on a background thread while the caller uses this one.
    The connection ``read`` uses is free again once the loop ends or is left (a read under way is waited for); a
    read's exception is raised where its result is taken."""
    keys = list(keys)
    if len(keys) <= 1:
        yield from (read(k) for k in keys)
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stats-read-ahead")
    pending: Future | None = None
    try:
        pending = pool.submit(read, keys[0])
        for following in keys[1:]:
            current = pending.result()
            pending = None  # (a failed read raised above: nothing is under way)
            pending = pool.submit(read, following)
            yield current
            del current
        current, pending = pending.result(), None
        yield current
    finally:
        if pending is not None:  # left early: the read under way ends before anyone else uses the connection
            pending.cancel()
            try:
                pending.result()
            except BaseException:  # noqa: BLE001 - the caller's own exception is the one that matters
                pass
        pool.shutdown(wait=True)
