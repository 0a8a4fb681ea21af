"""The audit's evidence packs written faster and within memory give the same files, byte for byte.

- groups are bounded by the rounds of their partitions (what the loader holds), not by the packs they hold: a
  night's 2,000 packs once made one group of every partition and DuckDB ran out of memory on 1,000,000 rounds;
- only the chosen rounds and their neighbours are loaded, annotated over the devices' whole streams as before;
- a pool of worker processes writes the same folders as one process.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.audit.load import load_partition
from pipelines.db import open_reader
from pipelines.evidence.batch import (
    Neighbourhood, PackPool, _by_round, _in_round_order, _round_groups, _split, _wanted, choose, finding_rounds, write_packs,
)
from pipelines.evidence.gather import _of_round, audit_params


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_group_is_bounded_by_its_partitions_rounds_not_by_its_packs():
    day = dt.date(2026, 11, 24)
    chosen = pl.DataFrame({"gaming_day": [day] * 6, "table_id": ["A", "A", "B", "C", "D", "E"],
                           "round_no": [1, 2, 3, 4, 5, 6]})
    sizes = pl.DataFrame({"gaming_day": [day] * 5, "table_id": ["A", "B", "C", "D", "E"],
                          "rounds": [30_000, 30_000, 10_000, 45_000, 1_000]})
    # six packs in five partitions of 116,000 rounds: cut where the rounds reach 50,000, in key order
    assert _round_groups(chosen, 50_000, sizes) == [[(day, "A"), (day, "B")], [(day, "C"), (day, "D")], [(day, "E")]]
    # counted by packs alone (the old way), all five partitions would be one group
    assert len(_round_groups(chosen, 50_000)) == 1


@pytest.fixture(scope="module")
def sample_db(audited_sample):
    return audited_sample / "pitaudit.duckdb"


def test_loading_only_the_wanted_rounds_gives_their_rows_of_the_whole_load(sample_db):
    con = open_reader(sample_db)
    try:
        params = audit_params(con)
        keys = [tuple(r) for r in con.execute(
            "SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()]
        chosen, _ = choose(finding_rounds(con, keys), 10**9)
        assert chosen.height >= 20
        group = sorted({(d, t) for d, t in chosen.select("gaming_day", "table_id").iter_rows()})
        near = _wanted(chosen).select("table_id", "round_no")
        whole = load_partition(con, tuple(group), params)
        part = load_partition(con, tuple(group), params, only_rounds=near)
    finally:
        con.close()
    assert 0 < part.rounds.height < whole.rounds.height and part.events.height < whole.events.height
    for name in ("rounds", "wagers", "actions", "events"):
        expected = getattr(whole, name).join(near, on=["table_id", "round_no"], how="semi", maintain_order="left")
        got = getattr(part, name)
        assert got.equals(expected), name
    # the device gaps and card copies were annotated over whole streams: some wanted round shows them
    assert part.events.filter(pl.col("lost_before") > 0).height > 0


def test_packs_written_in_many_groups_or_on_a_pool_are_the_same_files(sample_db, tmp_path):
    def write(folder: Path, **kw) -> dict[str, bytes]:
        con = open_reader(sample_db)
        try:
            keys = [tuple(r) for r in con.execute(
                "SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()]
            index = write_packs(con, keys, folder, bound=60, database="db", **kw)
        finally:
            con.close()
        assert len(index.written) == 60 and index.errors == []
        return _files(folder)

    one = write(tmp_path / "one")
    assert len(one) == 4 * 60
    assert write(tmp_path / "small-groups", per_group=2_000) == one
    ran = []
    pooled = write(tmp_path / "pool", per_group=2_000, pool=PackPool(sample_db, 2, min_packs=1),
                   meanwhile=lambda: ran.append(True))
    assert pooled == one and ran == [True]


def test_a_pool_that_cannot_start_leaves_the_packs_to_this_process(sample_db, tmp_path, monkeypatch):
    """A worker that cannot be spawned (or dies) must not cost the night its packs."""
    import concurrent.futures

    class Broken(concurrent.futures.ProcessPoolExecutor):
        def submit(self, *a, **k):
            from concurrent.futures.process import BrokenProcessPool

            raise BrokenProcessPool("no worker")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Broken)
    con = open_reader(sample_db)
    try:
        keys = [tuple(r) for r in con.execute(
            "SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()]
        index = write_packs(con, keys, tmp_path / "p", bound=30, database="db", per_group=2_000,
                            pool=PackPool(sample_db, 2, min_packs=1))
        plain = write_packs(con, keys, tmp_path / "q", bound=30, database="db")
    finally:
        con.close()
    assert len(index.written) == 30 and index.errors == []
    assert _files(tmp_path / "p") == _files(tmp_path / "q")


_ROWS = st.lists(st.tuples(st.sampled_from(["A", "B", None]), st.integers(1, 4) | st.none(), st.integers(0, 5) | st.none(),
                           st.integers(-1000, 1000)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(rows=_ROWS)
def test_a_groups_rows_sorted_once_are_each_rounds_own_sort_when_no_two_share_their_keys(rows):
    df = pl.DataFrame(rows, schema={"table_id": pl.String, "round_no": pl.Int64, "wager_order": pl.Int64, "v": pl.Int64},
                      orient="row")
    ordered, distinct = _in_round_order(df, ["wager_order"])
    keys = [r[:3] for r in rows]
    assert distinct == (len(set(keys)) == len(keys))
    assert sorted(ordered.rows(), key=repr) == sorted(df.rows(), key=repr)  # the same rows
    by_round = _by_round(ordered)
    assert set(by_round) == set(df.select("table_id", "round_no").unique().rows())
    for key, part in by_round.items():
        if distinct:  # what each round's own sort gives (one order only: no two rows share their keys)
            assert part.equals(part.sort("wager_order")), key
        assert part.equals(_split(df, ["table_id", "round_no"])[key].sort("wager_order", maintain_order=True)), key


@settings(max_examples=100, deadline=None)
@given(rows=_ROWS)
def test_a_frame_split_in_order_or_not_is_partition_by(rows):
    df = pl.DataFrame(rows, schema={"table_id": pl.String, "round_no": pl.Int64, "wager_order": pl.Int64, "v": pl.Int64},
                      orient="row")
    for frame in (df, df.sort("table_id", "round_no", maintain_order=True, nulls_last=False)):
        got = _split(frame, ["table_id", "round_no"])
        expected = frame.partition_by(["table_id", "round_no"], as_dict=True, maintain_order=True)
        assert set(got) == set(expected)
        assert all(got[k].equals(expected[k]) for k in expected)


def test_a_rounds_first_rows_looked_up_are_the_ones_filtered_from_its_tables_frames():
    day, other = dt.date(2026, 11, 24), dt.date(2026, 11, 25)
    # round 7 of table A on two gaming days (a group may hold both): the first row is the one shown, as filtered
    rounds = pl.DataFrame({"table_id": ["A", "A", "A", "B"], "round_no": [7, 7, 8, 7], "gaming_day": [other, day, day, day],
                           "dealer_id": ["D2", "D1", "D1", "D3"]})
    recon = pl.DataFrame({"table_id": ["A", "A", "B", "C"], "round_no": [7, 7, 7, 9], "device_shoe_id": ["s2", "s1", "s3", "s4"]})
    hood = Neighbourhood(recon, rounds)
    for table_id, round_no in [("A", 7), ("A", 8), ("B", 7), ("C", 9), ("C", 1), ("Z", 7)]:
        rec, table = _of_round(recon, table_id, round_no), _of_round(rounds, table_id, round_no)
        expected = (rec.row(0, named=True) if rec.height else {}, table.row(0, named=True) if table.height else {})
        assert hood.first_rows(table_id, round_no) == expected, (table_id, round_no)
    assert hood.first_rows("A", 7)[1]["dealer_id"] == "D2"


def test_packs_from_rows_sorted_once_a_group_are_the_files_of_rows_sorted_once_a_round(sample_db, tmp_path, monkeypatch):
    import pipelines.evidence.batch as batch

    def write(folder: Path) -> dict[str, bytes]:
        con = open_reader(sample_db)
        try:
            keys = [tuple(r) for r in con.execute(
                "SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()]
            index = write_packs(con, keys, folder, bound=60, database="db")
        finally:
            con.close()
        assert len(index.written) == 60 and index.errors == []
        return _files(folder)

    once = write(tmp_path / "once")
    flags = []
    sort_once = batch._in_round_order

    def each_round_sorts(df, by):  # the group's rows as they came, each round sorting its own (the code before)
        flags.append(sort_once(df, by)[1])
        return df, False

    monkeypatch.setattr(batch, "_in_round_order", each_round_sorts)
    assert write(tmp_path / "per-round") == once
    assert flags and all(flags)  # the sample's groups took the sorted-once path above
