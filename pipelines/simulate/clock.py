"""Time in the simulator: integer milliseconds since the Unix epoch (UTC), written with the table's offset.

Every instant is an ``int64`` of milliseconds, so ordering is exact and nothing depends on the
machine's clock or time zone. Only the writers turn instants into ISO-8601 text with the table's
UTC offset (``2026-11-24T22:14:03.512+07:00``), vectorised through polars.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from pipelines.simulate.config import GAMING_DAY_START

MS_PER_S = 1000
MS_PER_MIN = 60 * MS_PER_S
MS_PER_HOUR = 60 * MS_PER_MIN
MS_PER_DAY = 24 * MS_PER_HOUR

_EPOCH = dt.datetime(1970, 1, 1)


def offset_text(offset_min: int) -> str:
    """``+07:00`` for 420 minutes."""
    sign = "+" if offset_min >= 0 else "-"
    hours, minutes = divmod(abs(offset_min), 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def gaming_day_start_ms(day: dt.date, offset_min: int) -> int:
    """The instant the gaming day ``day`` begins: 06:00 local at the table's offset."""
    local = dt.datetime.combine(day, GAMING_DAY_START)
    return int((local - _EPOCH).total_seconds()) * MS_PER_S - offset_min * MS_PER_MIN


def format_ts(ms: np.ndarray, offset_min: int, with_ms: bool) -> pl.Series:
    """ISO-8601 text with the offset, e.g. ``2026-11-24T22:14:03.512+07:00`` (or whole seconds)."""
    local = pl.Series(np.asarray(ms, dtype=np.int64) + offset_min * MS_PER_MIN).cast(pl.Datetime("ms"))
    pattern = "%Y-%m-%dT%H:%M:%S%.3f" if with_ms else "%Y-%m-%dT%H:%M:%S"
    return local.dt.strftime(pattern + offset_text(offset_min))


def format_ts_list(ms: np.ndarray, offset_min: int, with_ms: bool) -> list[str]:
    return format_ts(ms, offset_min, with_ms).to_list()
