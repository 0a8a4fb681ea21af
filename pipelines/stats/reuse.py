"""A rolling window's tests carried over from the same window of the night before, for the entities it did not touch.

The 30-day window ending tonight holds the days of yesterday's 30-day window but the one that left it, and tonight.
An entity with no summary row on the days that left and none on the days that came in has exactly the rows it had
yesterday, so the same sums, the same null distribution and the same p-value: its test row and funnel row are
yesterday's (``out_stat_tests``, ``out_stat_funnel`` of that night and window length, or the outcome of the night
before in the same run), and only the touched entities are worked out. The FDR is taken over every row as before.

Which entities are untouched needs no read of the day that left: an entity's window rows start on its
``first_day`` and end on its ``last_day``. Tonight it is untouched when its ``last_day`` is on or before the night
the basis ends with (no row came in) and the basis row's ``first_day`` is inside tonight's window (no row left);
its first and last day, wagers and rounds are checked against the basis row's too.

When the basis may be used (``stored_basis``): the stored rows of a night's window are reused only if they were
worked out by the same detectors (a digest of the code of ``pipelines/stats`` and of the rules engine with its rule
sets) with the same parameters (``window_basis``), and if no day of the days both windows share was summarised again
since. The writer keeps one ``stat_window_basis`` row per window it wrote; writing a day's summaries again (a
re-audit, a backfill, a day summarised for lack of a stored summary) deletes the rows of every window holding that
day (``forget_windows``), and a run does not use a stored window that holds a day the run summarises itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import polars as pl

from pipelines.stats.tests_frame import TEST_SCHEMA

BASIS_TABLE = "stat_window_basis"
BASIS_DDL = (f"CREATE TABLE IF NOT EXISTS {BASIS_TABLE} (night DATE, window_days BIGINT, first_day DATE, "
             "basis VARCHAR, widths VARCHAR)")


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of the statistical detectors' code and the rules engine's (its rule sets included): a window's stored
    rows are reused only by the code that wrote them (an upgrade that changes a sentence or a distribution works
    every window out again once)."""
    import pipelines.stats
    import rulebook

    h = hashlib.sha256()
    for root in (Path(pipelines.stats.__file__).parent, Path(rulebook.__file__).parent):
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".toml") and p.is_file()):
            h.update(path.relative_to(root.parent).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def window_basis(params) -> str:
    """What a window's rows depend on besides its days' summaries: the code and the parameters (a digest)."""
    return hashlib.sha256((code_digest() + "|" + params.as_detail()).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Reuse:
    """The rows of the same window length ending ``after`` (the basis), for tonight's window starting ``first``."""

    after: dt.date
    first: dt.date
    tests: pl.DataFrame  # TEST_SCHEMA rows of the basis window
    funnel: pl.DataFrame  # its funnel rows (``hold.funnel_rows``' columns)
    widths: dict = field(default_factory=dict)  # the games' hold padding width per grouping (``hold_games``)

    def match(self, candidates: pl.DataFrame, on: list[str]) -> tuple[np.ndarray, pl.DataFrame]:
        """(which candidates are untouched, their basis test rows in the candidates' order). ``candidates``: one row per
        entity in the order the detector writes them, with the columns ``on`` (an entity's identity in the test rows:
        ``test`` and ``entity`` and ``currency``, or ``test``, ``player_id``, ``currency``, ``bet``), ``first_day``,
        ``last_day``, ``wagers`` and ``rounds``."""
        n = candidates.height
        none = np.zeros(n, dtype=bool)
        if n == 0 or self.tests.height == 0:
            return none, self.tests.clear()
        basis = _unique(self.tests.select(list(TEST_SCHEMA)), on).with_columns(pl.lit(True).alias("_found"))
        checks = ["first_day", "last_day", "wagers", "rounds"]
        joined = candidates.select(*on, *[pl.col(c).alias(f"_c_{c}") for c in checks]).join(
            basis, on=on, how="left", nulls_equal=True, maintain_order="left")
        ok = (joined["_found"].is_not_null() & (joined["_c_last_day"] <= self.after) & (joined["first_day"] >= self.first)
              & joined["_c_first_day"].eq_missing(joined["first_day"]) & joined["_c_last_day"].eq_missing(joined["last_day"])
              & joined["_c_wagers"].cast(pl.Int64).eq_missing(joined["wagers"])
              & joined["_c_rounds"].cast(pl.Int64).eq_missing(joined["rounds"]))
        mask = ok.fill_null(False).to_numpy()
        return mask, joined.filter(pl.Series(mask)).select(list(TEST_SCHEMA))

    def funnel_rows(self, candidates: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
        """(which candidates have one basis funnel row with the same counts, those rows in order). ``candidates``: the
        funnel's ``entity_type``, ``entity``, ``bet``, ``currency``, ``first_day``, ``last_day``, ``rounds``, ``wagers``."""
        on = ["entity_type", "entity", "bet", "currency", "first_day", "last_day", "rounds", "wagers"]
        n = candidates.height
        if n == 0 or self.funnel.height == 0:
            return np.zeros(n, dtype=bool), self.funnel.clear()
        basis = _unique(self.funnel.drop("night", strict=False), on[:4])
        cand = candidates.select(on).with_columns(pl.col("rounds").cast(pl.Int64), pl.col("wagers").cast(pl.Int64))
        basis = basis.with_columns(pl.col("rounds").cast(pl.Int64), pl.col("wagers").cast(pl.Int64),
                                   pl.lit(True).alias("_found"))
        joined = cand.join(basis, on=on, how="left", nulls_equal=True, maintain_order="left")
        mask = joined["_found"].fill_null(False).to_numpy()
        return mask, joined.filter(pl.Series(mask)).drop("_found")


def _unique(df: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """The rows of ``df`` whose ``on`` is on no other row (an identity held twice is not reused)."""
    return df.filter(pl.len().over(on) == 1) if df.height else df


def interleave(computed: pl.DataFrame, reused: pl.DataFrame, mask: np.ndarray) -> pl.DataFrame:
    """The rows of ``computed`` (for the entities not in ``mask``) and ``reused`` (those in it), in the entities' order."""
    if not mask.any():
        return computed
    reused = reused.select([pl.col(c).cast(t) for c, t in computed.schema.items()]) if computed.width else reused
    if computed.height == 0:
        return reused
    return pl.concat([computed.with_columns(pl.Series("_pos", np.flatnonzero(~mask))),
                      reused.with_columns(pl.Series("_pos", np.flatnonzero(mask)))]).sort("_pos").drop("_pos")


def previous_reuse(previous, night: dt.date, window_days: int) -> Reuse | None:
    """The basis of tonight's ``window_days`` window from the outcome of an earlier night of the same run (the same
    summaries), when that night ran a window of this length."""
    if previous is None or previous.night is None or window_days not in previous.windows:
        return None
    first = night - dt.timedelta(days=window_days - 1)
    if previous.night < first or previous.night >= night:
        return None
    tests = previous.tests.filter(pl.col("window_days") == window_days) if previous.tests.height else previous.tests
    funnel = (previous.funnel.filter(pl.col("window_days") == window_days) if previous.funnel.height else previous.funnel)
    return Reuse(previous.night, first, tests, funnel, dict(previous.widths.get(window_days, {})))


def _has_basis(con) -> bool:
    """Whether the database holds the basis table in this shape (an earlier shape is derived data: replaced)."""
    cols = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                                      [BASIS_TABLE]).fetchall()}
    return "widths" in cols


def _ensure_basis(con) -> None:
    """The basis table in this shape (the writer's transaction); one of an earlier shape is dropped: no window of it is
    carried over, and the next night's are written anew."""
    if not _has_basis(con):
        con.execute(f"DROP TABLE IF EXISTS {BASIS_TABLE}")
    con.execute(BASIS_DDL)


def stored_basis(con, night: dt.date, window_days: int, basis: str, summarised: set[dt.date]) -> Reuse | None:
    """The basis of tonight's ``window_days`` window from the database: the latest earlier night whose window of this
    length was written under ``basis`` and still holds (no day of the days the two windows share among ``summarised``,
    the days this run summarises itself). None when there is none."""
    first = night - dt.timedelta(days=window_days - 1)
    if not _has_basis(con):
        return None
    found = con.execute(f"SELECT night, widths FROM {BASIS_TABLE} WHERE window_days = ? AND basis = ? AND night BETWEEN ? AND ? "
                        "ORDER BY night DESC LIMIT 1", [window_days, basis, first, night - dt.timedelta(days=1)]).fetchall()
    if not found:
        return None
    after, widths = found[0]
    if any(first <= d <= after for d in summarised):
        return None
    tests = con.sql("SELECT * EXCLUDE (night) FROM out_stat_tests WHERE night = ? AND window_days = ?",
                    params=[after, window_days]).pl()
    has_funnel = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'out_stat_funnel'").fetchall()[0][0]
    funnel = (con.sql("SELECT * EXCLUDE (night) FROM out_stat_funnel WHERE night = ? AND window_days = ?",
                      params=[after, window_days]).pl() if has_funnel else pl.DataFrame())
    return Reuse(after, first, tests, funnel, json.loads(widths) if widths else {})


def forget_windows(con, days: list[dt.date]) -> None:
    """Drop the basis of every stored window holding one of ``days`` (their summaries are being written again: the
    writer's transaction)."""
    if not days:
        return
    _ensure_basis(con)
    con.execute(f"DELETE FROM {BASIS_TABLE} b WHERE EXISTS (SELECT 1 FROM (SELECT unnest($1::DATE[]) AS d) t "
                "WHERE t.d BETWEEN b.first_day AND b.night)", [sorted(days)])


def write_basis(con, rows: list[tuple[dt.date, int, dt.date, str, dict]], nights: list[dt.date]) -> None:
    """Replace the nights' basis rows by ``rows`` (night, window length, first day, basis, the games' hold padding
    widths by grouping) of the windows written now."""
    _ensure_basis(con)
    if nights:
        con.execute(f"DELETE FROM {BASIS_TABLE} WHERE night IN (SELECT unnest($1::DATE[]))", [sorted(nights)])
    if rows:
        con.execute(f"INSERT INTO {BASIS_TABLE} SELECT unnest($1::DATE[]), unnest($2::BIGINT[]), unnest($3::DATE[]), "
                    "unnest($4::VARCHAR[]), unnest($5::VARCHAR[])",
                    [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
                     [json.dumps(r[4], sort_keys=True) for r in rows]])
