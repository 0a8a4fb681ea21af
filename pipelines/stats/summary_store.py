"""The per-day summaries in the database (``schemas.derived``): read by the windows, written by the one writer.

``stored_summaries`` reads the summaries of a range of days but the hold rows (``stored_hold_rows`` reads
those of the entities a window needs, by their numbers in each day); ``summarise_days`` makes them from the evidence (the audited night,
or a day a window finds without a summary of the current format: a database upgraded from schema 3, a
day audited before); ``write_summaries`` replaces days' rows inside the writer's transaction.
Every value is bound as a parameter.
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import Executor, Future
from pathlib import Path

import numpy as np
import polars as pl

from pipelines.stats.config import StatsParams
from pipelines.memory import trim
from pipelines.money import money_for_files
from pipelines.settings import Settings
from pipelines.stats.advantage import FAMILIES
from pipelines.stats.load import load_inputs, side_bet_families, table_chunks
from pipelines.stats.read_ahead import read_ahead
from pipelines.stats.reuse import forget_windows
from pipelines.stats.summaries import (
    HOLD_KEYS, SUMMARY_FORMAT, DaySummaries, concat_summaries, empty_summaries, polars_schemas, summarise, summarise_chunk,
)
from pipelines.stats.summary_chunks import merge_chunks
from pipelines.stats.windows import FarRows, HoldRowsReader, _matrix
from schemas.derived import ROUND_EIDS, STAT_DAY_TABLES, table_of


def _has_tables(con) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'stat_days'").fetchall()[0][0] > 0


def summarised_days(con, first: dt.date, last: dt.date) -> set[dt.date]:
    """The days of ``first..last`` whose summaries of the current format are stored."""
    if not _has_tables(con):
        return set()
    rows = con.execute("SELECT gaming_day FROM stat_days WHERE gaming_day BETWEEN ? AND ? AND format = ?",
                       [first, last, SUMMARY_FORMAT]).fetchall()
    return {r[0] for r in rows}


#: the frames a window adds up whatever order their rows come in, read unsorted: their sums are of whole numbers (counts,
#: money) and their first values are taken per day or after a sort of their own (the games' draws: ``hold_games._draws``;
#: luck's parts: ``luck.luck_rows``). The others are read in one order (``ORDER BY ALL``) so that their float sums (theory,
#: cumulants) and first values are the same whatever order the rows were written in. Sorting 30 days of the games'
#: draws (668,000 rows) was a third of the stored summaries' read at night 31.
ORDER_FREE = frozenset({"games_draws", "luck_parts", "dealers", "pairs"})


#: the games' hold entities' identity (``hold_games.ENTITY``) in their two tables (the draws name the level ``bet``)
GAMES_ENTITY = {"games_hold": ("grouping", "key", "currency", "game", "level"),
                "games_draws": ("grouping", "key", "currency", "game", "bet")}


def stored_summaries(con, days: list[dt.date], min_wagers: int | None = None,
                     fresh: DaySummaries | None = None) -> DaySummaries:
    """The stored summaries of ``days`` (every frame but ``hold_rows``, which stays in the database).

    ``min_wagers`` (the hold's ``hold_min_wagers``): the games' hold rows (``games_hold``, ``games_draws``) only of the
    entities that have that many wagers over ``days`` or a row in ``fresh`` (the days summarised now): no window of
    these days can test another one (a window's wagers are at most those of all its days), and a window's blackjack
    shoes, most of them never tested, were most of those rows."""
    if not days or not _has_tables(con):
        return empty_summaries()
    schemas = polars_schemas()
    frames = {}
    params = [list(days), min(days), max(days)]
    # the range first: DuckDB skips the row groups of the other days by their min/max (a list alone is a join, which
    # reads every day the database holds)
    inside = "gaming_day BETWEEN $2 AND $3 AND gaming_day IN (SELECT unnest($1::DATE[]))"
    if min_wagers is not None:
        _tested_games(con, inside, params, min_wagers, fresh)
    for frame, schema in schemas.items():
        if frame in ("hold_rows", "hold_rounds", "hold_nets", "hold_probs"):  # read by the entities that need them
            frames[frame] = pl.DataFrame(schema=schema)
            continue
        cols = ", ".join(schema)
        order = "" if frame in ORDER_FREE else " ORDER BY ALL"
        only = ""
        if min_wagers is not None and frame in GAMES_ENTITY:
            match = " AND ".join(f"t.{a} IS NOT DISTINCT FROM g.{b}" for a, b in zip(GAMES_ENTITY["games_hold"],
                                                                                   GAMES_ENTITY[frame]))
            only = f" AND EXISTS (SELECT 1 FROM _games_tested t WHERE {match})"
        df = con.sql(f"SELECT {cols} FROM {table_of(frame)} g WHERE {inside}{only}{order}", params=params).pl()
        frames[frame] = df.select([pl.col(c).cast(t) for c, t in schema.items()])
    return DaySummaries(tuple(sorted(days)), **frames)


def _tested_games(con, inside: str, params: list, min_wagers: int, fresh: DaySummaries | None) -> None:
    """``_games_tested``: the games' hold entities with ``min_wagers`` wagers over the days, and those of ``fresh``."""
    keys = GAMES_ENTITY["games_hold"]
    recent = (fresh.games_hold.select(keys).unique() if fresh is not None and fresh.games_hold.height
              else pl.DataFrame(schema={k: pl.String for k in keys}))
    con.execute("CREATE OR REPLACE TEMP TABLE _games_fresh AS SELECT " + ", ".join(
        f"unnest(${i + 1}::VARCHAR[]) AS {k}" for i, k in enumerate(keys)), [recent[k].cast(pl.String).to_list() for k in keys])
    cols = ", ".join(keys)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE _games_tested AS
        SELECT {cols} FROM stat_day_games_hold WHERE {inside} GROUP BY ALL HAVING sum(wagers) >= $4
        UNION SELECT {cols} FROM _games_fresh""", [*params, min_wagers])


def stored_hold_rows(con, days: list[dt.date]) -> HoldRowsReader:
    """A ``HoldRowsReader`` over the stored hold rows of ``days``: only the far entities' rows are read, as a
    ``windows.FarRows`` numbered by ``far``'s ``ent`` (a null currency matches nothing, as in a join of frames).

    The rows of an entity with the same stake and vectors on one day are added up here, and each stored vector is
    read once (a row names it by its day and id): a 30-day window's far dealers were 400,000 rows, each read with its
    two vectors of 20 floats as lists and grouped by them. The far entities are found by their keys in ``stat_day_hold``,
    their rows by the number that gives them in each day: in ``stat_day_hold_rows`` and, on all bets, in
    ``stat_day_hold_rounds`` by the grouping's column."""
    days = sorted(days)

    def read(first: dt.date, last: dt.date, far: pl.DataFrame) -> FarRows:
        inside = [d for d in days if first <= d <= last]
        if not inside or far.height == 0:
            return FarRows.empty()
        # a cursor of its own (its temporary tables are its own, and gone when it closes): a window's baccarat hold
        # reads on a thread beside its other tests (``windows.window_tests``)
        cur = con.cursor()
        try:
            return _read_far(cur, inside, far)
        finally:
            cur.close()

    return read


def _read_far(con, inside: list[dt.date], far: pl.DataFrame) -> FarRows:
    """``stored_hold_rows``' read of the days ``inside`` with the connection ``con`` (a cursor)."""
    con.execute("CREATE OR REPLACE TEMP TABLE _far AS SELECT unnest($1::VARCHAR[]) AS grouping, "
                "unnest($2::VARCHAR[]) AS key, unnest($3::VARCHAR[]) AS currency, unnest($4::VARCHAR[]) AS level, "
                "unnest($5::BIGINT[]) AS ent", [far[c].to_list() for c in HOLD_KEYS] + [far["ent"].to_list()])
    params = [inside, min(inside), max(inside)]
    days = "r.gaming_day BETWEEN $2 AND $3 AND r.gaming_day IN (SELECT unnest($1::DATE[]))"
    # the far entities by their number in each day (``stat_day_hold.eid``), then their rows by that number: a single
    # bet's rows and the all-bets rows kept per entity, and the rounds' all-bets rows by the grouping's column
    con.execute(f"""CREATE OR REPLACE TEMP TABLE _far_ids AS
        SELECT r.gaming_day, r.eid, f.ent, f.grouping FROM stat_day_hold r
        JOIN _far f ON r.grouping = f.grouping AND r.key = f.key AND r.currency = f.currency AND r.level = f.level
        WHERE {days}""", params)
    rounds = " ".join(f"""UNION ALL SELECT f.ent, 1.0 AS a, r.gaming_day, r.xid, r.pid, r.c FROM stat_day_hold_rounds r
        JOIN _far_ids f ON r.gaming_day = f.gaming_day AND r.{column} = f.eid WHERE f.grouping = '{grouping}' AND {days}"""
                      for grouping, column in ROUND_EIDS.items() if grouping in set(far["grouping"].to_list()))
    con.execute(f"""CREATE OR REPLACE TEMP TABLE _far_rows AS
        SELECT ent, a, gaming_day, xid, pid, sum(c) AS c FROM (
            SELECT f.ent, r.a, r.gaming_day, r.xid, r.pid, r.c FROM stat_day_hold_rows r
            JOIN _far_ids f ON r.gaming_day = f.gaming_day AND r.eid = f.eid WHERE {days}
            {rounds})
        GROUP BY ALL""", params)
    rows = con.sql("SELECT ent, a, c, gaming_day, xid, pid FROM _far_rows").pl()
    if rows.height == 0:
        return FarRows.empty()
    nets = con.sql("""SELECT x.gaming_day, x.xid, x.x FROM stat_day_hold_nets x
        SEMI JOIN (SELECT DISTINCT gaming_day, xid FROM _far_rows) k ON k.gaming_day = x.gaming_day AND k.xid = x.xid
        WHERE x.gaming_day BETWEEN $2 AND $3 AND x.gaming_day IN (SELECT unnest($1::DATE[]))""",
                   params=params).pl().with_row_index("xi")
    probs = con.sql("""SELECT p.gaming_day, p.pid, p.p FROM stat_day_hold_probs p
        WHERE p.gaming_day BETWEEN $2 AND $3 AND p.gaming_day IN (SELECT unnest($1::DATE[]))""",
                    params=params).pl().with_row_index("pi")
    rows = rows.join(nets.select("gaming_day", "xid", "xi"), on=["gaming_day", "xid"], how="inner", maintain_order="left")
    rows = rows.join(probs.select("gaming_day", "pid", "pi"), on=["gaming_day", "pid"], how="inner", maintain_order="left")
    return FarRows(rows["ent"].to_numpy().astype(np.int64), rows["a"].to_numpy().astype(float),
                   rows["c"].to_numpy().astype(float), rows["xi"].to_numpy().astype(np.int64),
                   rows["pi"].to_numpy().astype(np.int64), _matrix(nets["x"]), _matrix(probs["p"]))


#: at most about this many rounds of a day are read and summarised at once (the default of ``PITAUDIT_GROUP_ROUNDS``,
#: the bound of the audit's groups): a day is summarised a run of tables at a time and the runs merged (``summary_chunks``)
CHUNK_ROUNDS: int = Settings.model_fields["group_rounds"].default


def summarise_days(con, days: list[dt.date], params: StatsParams, chunk_rounds: int | None = CHUNK_ROUNDS) -> DaySummaries:
    """Summaries of ``days`` made from the evidence, one day at a time (a day's wagers, findings, card events), each
    day a chunk of tables of at most ``chunk_rounds`` rounds at a time (None: the whole day at once). The same
    summaries either way (``summary_chunks``); what the process holds is bounded by the chunk, not the night."""
    out = []
    for day in sorted(set(days)):
        chunks = table_chunks(con, day, chunk_rounds) if chunk_rounds else None
        if chunks is None or len(chunks) <= 1:
            out.append(summarise(load_inputs(con, day, day), params, (day,)))
            continue
        families = side_bet_families(con, day, tuple((name, bets) for name, bets, *_ in FAMILIES))
        parts = []
        # the next chunk is read while this one is summarised (``read_ahead``: the same reads, on one thread)
        for inputs in read_ahead(lambda tables: load_inputs(con, day, day, tables=tables), chunks):
            parts.append(summarise_chunk(inputs, params, families))
            del inputs
            trim()  # the chunk's freed arrays back to the system, not kept in the heap for the next chunk
        _let_go_of_reads(con)
        out.append(merge_chunks(parts, (day,), params))
        del parts
        trim()
    return concat_summaries(out)


def _let_go_of_reads(con) -> None:
    """Evict the blocks DuckDB keeps of what the chunks read (its buffer pool holds them up to the reader's memory
    limit: 0.23 GB after the 21 chunks of the 1,000,000-round night, beside the merge's peak): the limit is lowered
    for a moment, then put back as it was."""
    import duckdb

    (limit,), = con.execute("SELECT current_setting('memory_limit')").fetchall()
    try:
        con.execute("SET memory_limit = '16MB'")
    except duckdb.Error:
        pass  # something is still pinned: the blocks stay, nothing else changes
    finally:
        con.execute(f"SET memory_limit = '{limit}'")
    trim()


#: how the writer's scratch Parquet files are written: read once, whole, by the same process, then deleted, so neither
#: zstd's compression nor the row groups' statistics serve anyone (on the 1,000,000-round night's 4,800,000 hold rows:
#: 0.59 s CPU to write with both, 0.42 without; DuckDB's insert reads either in the same time)
SCRATCH_PARQUET = {"compression": "lz4", "statistics": False}


def scratch_file(df: pl.DataFrame, path: Path) -> Path:
    """``df`` as a scratch Parquet file at ``path`` for the writer's ``INSERT ... FROM read_parquet`` (Parquet has no
    128-bit integer DuckDB reads: sums of money travel as DECIMAL(38,0) into HUGEINT)."""
    money_for_files(df).write_parquet(path, **SCRATCH_PARQUET)
    return path


def summary_files(folder: Path, summaries: DaySummaries, pool: Executor) -> dict[str, Future]:
    """Each non-empty frame's scratch file of ``summaries`` in ``folder``, written on ``pool`` in the order
    ``write_summaries`` inserts them: the writer's ``run.write_statistics`` starts them before it opens the database, so
    that polars writes the next file while DuckDB inserts the one before (both leave Python's lock; the files were
    written one after the other between the inserts, about 0.5 CPU s of the 1,000,000-round night's write)."""
    return {frame: pool.submit(scratch_file, df, folder / f"{table_of(frame)}.parquet")
            for frame, df in summaries.frames().items() if df.height}


def write_summaries(con, folder: Path, summaries: DaySummaries, files: dict[str, Future] | None = None) -> None:
    """Replace the summaries of ``summaries.days`` (the caller holds the writer's transaction). The frames reach
    DuckDB as Parquet files in ``folder`` (as ``run.write_statistics`` does); ``files``: those files being written
    already (``summary_files``), each waited for before its insert."""
    days = list(summaries.days)
    if not days:
        return
    for table in STAT_DAY_TABLES:
        con.execute(f"DELETE FROM {table} WHERE gaming_day BETWEEN $2 AND $3 AND gaming_day IN (SELECT unnest($1::DATE[]))",
                    [days, min(days), max(days)])
    for frame, df in summaries.frames().items():
        if df.height == 0:
            continue
        path = files[frame].result() if files is not None else scratch_file(df, folder / f"{table_of(frame)}.parquet")
        source = "read_parquet('" + path.as_posix().replace("'", "''") + "')"
        con.execute(f"INSERT INTO {table_of(frame)} BY NAME SELECT * FROM {source}")
    con.execute("INSERT INTO stat_days SELECT unnest($1::DATE[]), ?", [days, SUMMARY_FORMAT])
    forget_windows(con, days)  # a window holding one of these days is no basis for the next night's (``reuse``)
