"""Small DuckDB helpers for the loader."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import duckdb


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, obj) -> Iterator[None]:
    """Expose a polars/arrow object to SQL as ``name`` for the block; never masks the block's error."""
    con.register(name, obj)
    try:
        yield
    finally:
        try:
            con.unregister(name)
        except duckdb.Error:  # an aborted transaction refuses even this; the view dies with the rollback
            pass


def arrow(frame):
    """A polars frame as an arrow table without copying its strings (string_view, which DuckDB reads)."""
    import polars as pl

    return frame.to_arrow(compat_level=pl.CompatLevel.newest())
