"""Batches parsed in worker processes while the one writer stages and commits.

Parsing (DuckDB's JSON parser, polars passes, the contracts' checks) is about three quarters of a
load's CPU and runs on one core at a time; a thread beside the writer gained ~4 % (measured: the
parse holds the GIL between its native calls). Worker processes parse whole batches, each with an
in-memory DuckDB of its own that holds no evidence, and hand the writer the rows ready to stage;
only the writer process touches the database file. The workers are spawned, not forked (a fork of
a process whose polars or DuckDB threads are running can deadlock), and run polars and DuckDB on
one thread each (the workers already fill the cores). Nothing here is imported by a worker but
this module and what the parse needs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor

_parse_con = None  # this worker's in-memory DuckDB (one per process, made on first use)


def _start_worker() -> None:
    os.environ["POLARS_MAX_THREADS"] = "1"  # before polars is imported in this process


def parse_batch(files, day_start: int):
    """``run.parse_small_batch`` in a worker; returns its ``Parsed`` (picklable frames and counts)."""
    global _parse_con
    from pipelines.db import parse_connection
    from pipelines.ingest.run import parse_small_batch

    if _parse_con is None:
        _parse_con = parse_connection()
        _parse_con.execute("SET threads = 1")
    return parse_small_batch(files, day_start, _parse_con)


def parse_pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_start_worker)

