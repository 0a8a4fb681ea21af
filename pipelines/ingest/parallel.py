"""Stage 4 on worker processes: batches parsed ahead while the one writer loads them, in batch order.

Parsing (DuckDB's JSON parser, polars passes, the contracts' checks) is about three quarters of a load's CPU
and runs on one core at a time; a thread beside the writer gained ~4 % (measured: the parse holds the GIL
between its native calls). Worker processes parse whole batches, each with an in-memory DuckDB of its own
that holds no evidence, and hand back the rows ready to load; only the writer's process touches the database
file. The workers are spawned, not forked (a fork of a process whose polars or DuckDB threads are running can
deadlock), and run polars and DuckDB on one thread each (the workers already fill the cores). This module
imports only ``parse`` (and what the parse needs): nothing of the writer travels to a worker.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager

from pipelines.ingest.parse import parse_small_batch
from pipelines.ingest.worker_env import WORKER_ENV
from pipelines.ingest.records import InputFile, ParseOptions, Parsed

_con = None  # this worker's in-memory DuckDB (one per process, made on first use)




@contextmanager
def _one_thread_each() -> Iterator[None]:
    """The workers spawned inside see ``WORKER_ENV`` from their first instruction: a spawned worker imports this
    module (and polars, which sizes its thread pool and reads its allocator's settings then) before its initializer
    runs, so setting ``POLARS_MAX_THREADS`` there came too late and each worker ran two polars threads on a machine
    the workers already fill (measured on a 200,000-round night: 12.0 CPU s in the workers, 8.8 for the same parse
    on one thread). The writer's own polars is already sized; only processes started meanwhile inherit the
    variables."""
    before = {k: os.environ.get(k) for k in WORKER_ENV}
    for k, v in WORKER_ENV.items():
        os.environ[k] = v if k == "POLARS_MAX_THREADS" or not before[k] else f"{before[k]},{v}"
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _start_worker() -> None:
    os.environ["POLARS_MAX_THREADS"] = "1"  # too late for polars' pool (see _one_thread_each); kept for what reads it later
    from pipelines.lifeline import end_with_parent

    end_with_parent()  # a killed run leaves no parser behind


def _parse_in_worker(files: tuple[InputFile, ...], options: ParseOptions, memory_limit: str) -> Parsed:
    global _con
    if _con is None:
        from pipelines.db import parse_connection

        _con = parse_connection(memory_limit)
        _con.execute("SET threads = 1")
    return parse_small_batch(files, options, _con)


@contextmanager
def parse_ahead(batches: list[tuple[InputFile, ...]], wanted: list[int], options: ParseOptions, workers: int,
                memory_limit: str) -> Iterator[dict[int, Future]]:
    """Batches ``wanted`` (indices into ``batches``) parsed by ``workers`` processes, at most ``workers + 1`` in
    flight (memory stays bounded). Yields a dict the caller pops futures from, in batch order; each pop tops the
    queue up again."""
    with _one_thread_each(), ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                                                 initializer=_start_worker) as pool:
        queue = iter(wanted)

        class Ahead(dict):
            def pop(self, key, default=None):  # noqa: D401 - a dict whose pop submits the next batch
                out = super().pop(key, default)
                self.top_up()
                return out

            def top_up(self) -> None:
                while len(self) < workers + 1:
                    i = next(queue, None)
                    if i is None:
                        return
                    self[i] = pool.submit(_parse_in_worker, batches[i], options, memory_limit)

        ahead = Ahead()
        ahead.top_up()
        yield ahead
