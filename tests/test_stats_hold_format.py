"""The baccarat hold's stored rows (schema 7, summaries format 4): by entity number, a round's all-bets row once for
its table, dealer and shoe (``stat_day_hold_rows``, ``stat_day_hold_rounds``; ``pipelines/stats/summary_chunks.py``
writes them, ``summaries.far_rows_reader`` and ``summary_store.stored_hold_rows`` read them).

The night is the chunks test's (two gaming days, a second rule set whose bets share outcome vectors, a round dealt by
two dealers: the all-bets rows that differ by grouping). A schema-6 database is made by code as the schema-6 writer
made it: every row of an entity named by its grouping, key, currency and level, a round's all-bets row once per
grouping, in the order of the day's pass (``legacy_hold_rows``; on this night it gives the schema-6 writer's rows, as
checked against that code when the format changed).
"""

from __future__ import annotations

import datetime as dt
import shutil

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_stats_chunks import DAYS, PARAMS, night  # noqa: F401  (the module's fixture)

from schemas.derived import ROUND_EIDS

KEYS = ["grouping", "key", "currency", "level"]
OLD_ROWS = ("CREATE TABLE stat_day_hold_rows (gaming_day DATE, grouping VARCHAR, key VARCHAR, currency VARCHAR, "
            "level VARCHAR, a DOUBLE, c DOUBLE, xid BIGINT, pid BIGINT)")


def legacy_hold_rows(ents: pl.DataFrame, rows: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    """Schema 6's hold rows from schema 7's: day by day, grouping by grouping, an entity's rows named by its four
    strings; the grouping's rows kept by number first, then the rounds' rows of the grouping by entity, each entity's
    in round order."""
    out = []
    for (day,), e in ents.group_by(["gaming_day"], maintain_order=True):
        e = e.sort("eid")
        r = rows.filter(pl.col("gaming_day") == day)
        d = rounds.filter(pl.col("gaming_day") == day)
        for (grouping,), g in e.group_by(["grouping"], maintain_order=True):
            out.append(r.filter(pl.col("eid").is_in(g["eid"].implode())))
            column = ROUND_EIDS.get(grouping)
            if column:
                shared = d.filter(pl.col(column).is_not_null()).with_row_index("at")
                assert (shared["c"] == 1).all()  # one round a row
                out.append(shared.select("gaming_day", pl.col(column).alias("eid"), pl.lit(1.0).alias("a"),
                                         pl.col("c").cast(pl.Float64), "xid", "pid", "at").sort("eid", "at").drop("at"))
    return pl.concat(out).join(ents.select("gaming_day", "eid", *KEYS), on=["gaming_day", "eid"], how="left",
                               maintain_order="left").select("gaming_day", *KEYS, "a", "c", "xid", "pid")


def _as_schema_6(db) -> int:
    """Turn a database written by this code into what the schema-6 writer left: ``stat_day_hold`` without ``eid``, the
    rows in the old table, no ``stat_day_hold_rounds``, the days in summaries format 3. Returns the old rows' count."""
    from pipelines.db import open_writer

    con = open_writer(db)
    try:
        ents = con.sql("SELECT * FROM stat_day_hold ORDER BY gaming_day, eid").pl()
        rows = con.sql("SELECT * FROM stat_day_hold_rows ORDER BY rowid").pl()
        rounds = con.sql("SELECT * FROM stat_day_hold_rounds ORDER BY rowid").pl()
        old = legacy_hold_rows(ents, rows, rounds)
        con.execute("DROP TABLE stat_day_hold_rows")
        con.execute("DROP TABLE stat_day_hold_rounds")
        con.execute("ALTER TABLE stat_day_hold DROP COLUMN eid")
        con.execute(OLD_ROWS)
        path = db.with_name("old_rows.parquet")
        old.write_parquet(path)
        con.execute(f"INSERT INTO stat_day_hold_rows SELECT * FROM read_parquet('{path.as_posix()}')")
        con.execute("UPDATE stat_days SET format = 3")
        con.execute("UPDATE meta_schema SET value = '6' WHERE name = 'schema_version'")
        return old.height
    finally:
        con.close()


def _canonical(ms) -> pl.DataFrame:
    """A ``MoneySums``' rows as a frame in one order (a database reads them in none): entity, stake, count, vectors."""
    return pl.DataFrame({"ent": ms.ent, "a": ms.a, "c": ms.c, "x": [list(v) for v in ms.x], "p": [list(v) for v in ms.p]}
                        ).sort("ent", "a", "x", "p")


def _every_entity(s, grouping: str) -> pl.DataFrame:
    return (s.hold_entities.filter(pl.col("grouping") == grouping).select(KEYS).unique().sort(KEYS)
            .with_row_index("ent").with_columns(pl.col("ent").cast(pl.Int64)).select(*KEYS, "ent"))


def _written(night, tmp_path, name: str):
    """A copy of the night's database with both days' statistics written by this code (the summaries of both)."""
    from pipelines.stats.run import statistics_step, write_statistics

    db = tmp_path / name
    shutil.copyfile(night, db)
    write_statistics(db, statistics_step(db, list(DAYS), PARAMS))
    return db


def test_the_rows_read_back_from_memory_and_from_the_database_are_the_wagers_own_sums(night, tmp_path):
    """Round trip: every entity's rows read back from the summaries in memory (``far_rows_reader``) and from the
    database (``stored_hold_rows``) are, merged as a window merges them, the rows ``hold_sums`` makes from the day's
    settled wagers (an independent path: no summary, no chunk). A round's all-bets row is stored once, and only the
    split round's are stored per grouping."""
    from pipelines.db import open_reader
    from pipelines.stats.hold_sums import hold_sums
    from pipelines.stats.load import load_inputs
    from pipelines.stats.luck import settled_baccarat
    from pipelines.stats.summaries import far_rows_reader
    from pipelines.stats.summary_store import stored_hold_rows, summarise_days
    from pipelines.stats.windows import FarRows, _money_sums

    db = _written(night, tmp_path, "trip.duckdb")
    con = open_reader(db)
    try:
        s = summarise_days(con, list(DAYS), PARAMS)
        stored = stored_hold_rows(con, list(DAYS))
        for day in DAYS:
            sums = hold_sums(settled_baccarat(load_inputs(con, day, day).wagers), PARAMS.hold_groupings)
            for g in sums.groupings:
                far = _every_entity(s.only(day, day), g.grouping)
                assert far.select(KEYS).equals(g.summary.select(KEYS).sort(KEYS))
                ent = far.join(g.summary.select(*KEYS, pl.col("ent").alias("own")), on=KEYS, nulls_equal=True)
                own = sums.money_sums(g)
                renumbered = FarRows(ent.sort("own")["ent"].to_numpy()[own.ent], own.a, own.c, np.arange(len(own.a)),
                                     np.arange(len(own.a)), own.x, own.p)
                want = _canonical(_money_sums(renumbered, far, far.height))
                for reader in (far_rows_reader(s), stored):
                    got = _canonical(_money_sums(reader(day, day, far), far, far.height))
                    assert_frame_equal(got, want, check_exact=True)
        counts = con.execute("SELECT (SELECT count(*) FROM stat_day_hold_rows), (SELECT count(*) FROM stat_day_hold_rounds), "
                         "(SELECT count(*) FROM stat_day_hold_rounds WHERE table_eid IS NULL OR dealer_eid IS NULL "
                         "OR shoe_eid IS NULL)").fetchone()
    finally:
        con.close()
    assert counts[1] > 0 and counts[2] == 0
    split = s.hold_rows.join(s.hold_entities.select("gaming_day", "eid", "grouping", "level"), on=["gaming_day", "eid"])
    alone = split.filter(pl.col("level") == "all")
    # the split round: one row for its table, one per dealer part, one for its shoe (its two parts share the shoe)
    assert alone.group_by("grouping").len().sort("grouping").rows() == [("dealer_id", 2), ("shoe_id", 1), ("table_id", 1)]


def test_a_schema_6_database_is_upgraded_with_its_summaries_and_reads_the_same_rows(night, tmp_path):
    """A database written by the schema-6 code keeps its summaries when the writer opens it: its entities numbered,
    its rows by number (its all-bets rows still one per grouping), its days in format 4; every window reads the rows it
    read before. A reader of the file before the upgrade (read-only) takes its days for unsummarised: never misread."""
    from pipelines.db import get_meta, open_reader, open_writer
    from pipelines.stats.summary_store import stored_hold_rows, summarised_days
    from pipelines.stats.windows import _money_sums

    new = _written(night, tmp_path, "new.duckdb")
    old = _written(night, tmp_path, "old.duckdb")
    n_old = _as_schema_6(old)
    con = open_reader(old)
    try:
        assert summarised_days(con, DAYS[0], DAYS[-1]) == set()
    finally:
        con.close()
    con = open_writer(old)  # the upgrade
    try:
        assert get_meta(con, "schema_version") == "7"
        assert summarised_days(con, DAYS[0], DAYS[-1]) == set(DAYS)
        assert con.execute("SELECT count(*) FROM stat_day_hold_rows").fetchone()[0] == n_old
        assert con.execute("SELECT count(*) FROM stat_day_hold_rounds").fetchone()[0] == 0
        assert con.execute("SELECT count(*), count(DISTINCT (gaming_day, eid)), count(eid) FROM stat_day_hold").fetchone() \
            == (con.execute("SELECT count(*) FROM stat_day_hold").fetchone()[0],) * 3
    finally:
        con.close()
    readers = {}
    for name, db in (("new", new), ("old", old)):
        con = open_reader(db)
        try:
            ents = con.sql("SELECT * FROM stat_day_hold").pl()
            for grouping in PARAMS.hold_groupings:
                far = (ents.filter(pl.col("grouping") == grouping).select(KEYS).unique().sort(KEYS, nulls_last=True)
                       .with_row_index("ent").with_columns(pl.col("ent").cast(pl.Int64)).select(*KEYS, "ent"))
                readers[(name, grouping)] = _canonical(_money_sums(stored_hold_rows(con, list(DAYS))(DAYS[0], DAYS[-1], far),
                                                                   far, far.height))
        finally:
            con.close()
    for grouping in PARAMS.hold_groupings:
        assert readers[("old", grouping)].height > 0
        assert_frame_equal(readers[("old", grouping)], readers[("new", grouping)], check_exact=True)


def test_a_window_over_an_upgraded_day_and_a_day_written_now_finds_what_it_finds_over_new_days(night, tmp_path):
    """The second night's windows over the first day stored by the schema-6 code (upgraded) and the second summarised
    now: the same tests (p, q, flag, sentence, evidence), funnel and dealer-player graph as over both days stored in the
    new format, and as both days summarised from the evidence."""
    from pipelines.db import open_writer
    from pipelines.stats.run import statistics_step, write_statistics

    mixed = tmp_path / "mixed.duckdb"
    shutil.copyfile(night, mixed)
    write_statistics(mixed, statistics_step(mixed, [DAYS[0]], PARAMS))
    _as_schema_6(mixed)
    open_writer(mixed).close()  # the upgrade (the audit's ingest opens the writer before the statistics read)
    fresh = tmp_path / "fresh.duckdb"
    shutil.copyfile(night, fresh)
    write_statistics(fresh, statistics_step(fresh, [DAYS[0]], PARAMS))
    got = statistics_step(mixed, [DAYS[1]], PARAMS)[0]
    want = statistics_step(fresh, [DAYS[1]], PARAMS)[0]
    scratch = statistics_step(night, list(DAYS), PARAMS)[1]  # both days from the evidence, nothing stored read
    assert set(got.summaries.days) == set(want.summaries.days) == {DAYS[1]}  # the upgraded day is read, not made again
    keys = ["test", "entity", "currency", "window_days"]
    assert got.tests.filter(pl.col("window_days") == 7)["test"].str.starts_with("hold_").sum() > 0
    for other in (want, scratch):
        assert_frame_equal(got.tests.sort(keys).drop("evidence"), other.tests.sort(keys).drop("evidence"),
                           check_exact=False, rel_tol=1e-12, abs_tol=0)
        for name in ("funnel", "graph"):
            a, b = getattr(got, name), getattr(other, name)
            assert_frame_equal(a.sort(a.columns[:6]), b.sort(b.columns[:6]), check_exact=False, rel_tol=1e-12, abs_tol=0)
    assert got.tests.sort(keys)["sentence"].to_list() == want.tests.sort(keys)["sentence"].to_list()


@pytest.mark.parametrize("version", [4, 5])
def test_an_earlier_schemas_hold_rows_are_dropped_and_its_days_summarised_again(tmp_path, version):
    """Schemas 4 and 5 (summaries formats 1 and 2, summarised again anyway): their hold rows are not kept, the tables
    take schema 7's columns."""
    from pipelines.db import open_writer
    from pipelines.stats.summary_store import summarised_days

    db = tmp_path / "early.duckdb"
    con = open_writer(db)
    con.execute("DROP TABLE stat_day_hold_rows")
    con.execute("DROP TABLE stat_day_hold_rounds")
    con.execute("ALTER TABLE stat_day_hold DROP COLUMN eid")
    con.execute(OLD_ROWS)
    con.execute("INSERT INTO stat_day_hold_rows VALUES ('2026-11-01', 'table_id', 'BAC-01', 'USD', 'all', 1, 1, 0, 0)")
    con.execute("INSERT INTO stat_days VALUES ('2026-11-01', ?)", [version - 3])
    con.execute("UPDATE meta_schema SET value = ? WHERE name = 'schema_version'", [str(version)])
    con.close()
    con = open_writer(db)
    try:
        cols = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = "
                                          "'stat_day_hold_rows' ORDER BY ordinal_position").fetchall()]
        assert cols == ["gaming_day", "eid", "a", "c", "xid", "pid"]
        assert con.execute("SELECT count(*) FROM stat_day_hold_rows").fetchone()[0] == 0
        assert summarised_days(con, dt.date(2026, 11, 1), dt.date(2026, 11, 1)) == set()
    finally:
        con.close()


@pytest.mark.parametrize("groupings", [("dealer_id",), ("shoe_id", "table_id")])
def test_the_rows_of_any_groupings_read_back_as_the_wagers_own_sums(groupings):
    """Other groupings than the default three, in another order: the entities numbered grouping after grouping as given,
    the rounds naming only those groupings' entities (the others null), and every entity's rows read back from the
    summaries in memory are the rows ``hold_sums`` makes from the wagers."""
    from pipelines.stats.config import StatsParams
    from pipelines.stats.hold_sums import hold_sums
    from pipelines.stats.load import StatsInputs
    from pipelines.stats.luck import settled_baccarat
    from pipelines.stats.summaries import far_rows_reader, summarise
    from pipelines.stats.synthetic import Floor, nights
    from pipelines.stats.windows import FarRows, _money_sums

    first = dt.date(2026, 11, 1)
    floor = Floor(baccarat_tables=3, baccarat_rounds=80, blackjack_tables=0, players=15, luck_multiple=5, luck_bets=20)
    w, c, e = nights(floor, first, 1, seed=7)
    params = StatsParams(hold_groupings=groupings)
    s = summarise(StatsInputs(w, e, c, first, first), params)
    assert s.hold_entities["grouping"].unique(maintain_order=True).to_list() == list(groupings)
    assert s.hold_entities["eid"].to_list() == list(range(s.hold_entities.height))
    for name in ROUND_EIDS.values():
        named = s.hold_rounds[name].is_not_null()
        assert named.all() if any(ROUND_EIDS[g] == name for g in groupings) else not named.any(), name
    sums = hold_sums(settled_baccarat(w), groupings)
    for g in sums.groupings:
        far = _every_entity(s, g.grouping)
        ent = far.join(g.summary.select(*KEYS, pl.col("ent").alias("own")), on=KEYS, nulls_equal=True)
        own = sums.money_sums(g)
        renumbered = FarRows(ent.sort("own")["ent"].to_numpy()[own.ent], own.a, own.c, np.arange(len(own.a)),
                             np.arange(len(own.a)), own.x, own.p)
        want = _canonical(_money_sums(renumbered, far, far.height))
        assert want.height > 0
        assert_frame_equal(_canonical(_money_sums(far_rows_reader(s)(first, first, far), far, far.height)), want,
                           check_exact=True)


def test_the_writes_scratch_files_are_made_on_a_thread_and_a_failed_one_leaves_no_file_and_no_row(night, tmp_path, monkeypatch):
    """``run.write_statistics`` writes its scratch Parquet files on a thread of its own while DuckDB inserts the ones
    before: the tables are the ones the files written in line give, and a file that cannot be written rolls the whole
    write back, leaving no scratch folder and no thread."""
    import threading

    from pipelines.db import open_reader
    from pipelines.stats import run, summary_store
    from schemas.derived import STAT_DAY_TABLES

    def tables(db) -> dict[str, pl.DataFrame]:
        con = open_reader(db)
        try:
            have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            return {t: con.sql(f"SELECT * FROM {t} ORDER BY ALL").pl()
                    for t in (*STAT_DAY_TABLES, "stat_days", run.TESTS_TABLE, run.FUNNEL_TABLE, run.GRAPH_TABLE, "out_findings")
                    if t in have}
        finally:
            con.close()

    inline, threaded, failing = (tmp_path / f"{n}.duckdb" for n in ("inline", "threaded", "failing"))
    for db in (inline, threaded, failing):
        shutil.copyfile(night, db)
    outcomes = run.statistics_step(inline, list(DAYS), PARAMS)
    names, made = [], summary_store.scratch_file

    def recorded(df, path):
        names.append(threading.current_thread().name)
        return made(df, path)

    monkeypatch.setattr(run, "scratch_file", recorded)
    monkeypatch.setattr(summary_store, "scratch_file", recorded)
    run.write_statistics(threaded, outcomes)
    assert len(names) > 10 and all(n.startswith("stats-scratch") for n in names)
    with monkeypatch.context() as m:  # the summaries' files written in line, one before each insert (as before)
        m.setattr(run, "summary_files", lambda folder, summaries, pool: None)
        run.write_statistics(inline, outcomes)
    written, reference = tables(threaded), tables(inline)
    assert set(written) == set(reference)
    assert reference["stat_day_hold_rows"].height and reference[run.TESTS_TABLE].height
    for t, df in reference.items():
        assert_frame_equal(written[t], df, check_exact=True), t

    before = tables(failing)

    def broken(df, path):
        if path.name.startswith("stat_day_hold_rows"):
            raise OSError("disk full")
        return made(df, path)

    monkeypatch.setattr(summary_store, "scratch_file", broken)
    with pytest.raises(OSError, match="disk full"):
        run.write_statistics(failing, outcomes)
    assert not (tmp_path / "failing.duckdb.stats").exists()
    assert not [t for t in threading.enumerate() if t.name.startswith("stats-scratch")]
    after = tables(failing)
    assert set(after) == set(before)
    for t, df in before.items():
        assert_frame_equal(after[t], df, check_exact=True), t
