"""One writer; readers never block it (datasette's rule, pipelines/db.py).

DuckDB locks its file, so a reader process holding the writer's file would stop the next nightly
run. Readers open the published snapshot instead: this test keeps a reader process on it while
the writer writes and publishes again.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipelines.db import DatabaseError, open_snapshot, open_writer, publish_snapshot, snapshot_path

HOLD_SNAPSHOT = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.execute("select count(*) from t").fetchone()[0], flush=True)
time.sleep(30)
"""


def _write(db, rows):
    con = open_writer(db)
    con.execute("create table if not exists t(a int)")
    con.executemany("insert into t values (?)", [(r,) for r in rows])
    con.close()


def test_a_reader_on_the_snapshot_does_not_block_the_writer(tmp_path):
    db = tmp_path / "audit.duckdb"
    _write(db, [1, 2])
    snap = publish_snapshot(db)
    assert snap == snapshot_path(db) and snap.name == "audit.readonly.duckdb"
    reader = subprocess.Popen([sys.executable, "-c", HOLD_SNAPSHOT, str(snap)], stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "2"  # the reader holds the snapshot open from here on
        _write(db, [3])  # the writer opens its own file: not blocked
        publish_snapshot(db)  # and replaces the snapshot under the reader
        con = open_snapshot(db)
        assert con.execute("select count(*) from t").fetchone()[0] == 3
        con.close()
        assert reader.poll() is None, "the reader was disturbed"
    finally:
        reader.kill()
        reader.wait()


def test_the_writers_own_file_is_what_a_reader_would_block(tmp_path):
    """Why the snapshot exists: a reader process on the writer's file does lock the writer out."""
    db = tmp_path / "audit.duckdb"
    _write(db, [1])
    reader = subprocess.Popen([sys.executable, "-c", HOLD_SNAPSHOT, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "1"
        with pytest.raises(Exception):
            _write(db, [2])
    finally:
        reader.kill()
        reader.wait()


def test_no_snapshot_yet_is_a_one_line_reason(tmp_path):
    with pytest.raises(DatabaseError, match="no published snapshot"):
        open_snapshot(tmp_path / "audit.duckdb")


def test_clone_file_copies_every_byte_and_falls_back_where_the_kernel_cannot(tmp_path, monkeypatch):
    """The snapshot's copy (copy_file_range, shutil.copyfile where it is refused) is the source byte for byte."""
    import os

    from pipelines.db import clone_file

    source = tmp_path / "a.duckdb"
    source.write_bytes(os.urandom(3 << 20) + b"tail")
    clone_file(source, tmp_path / "b")
    assert (tmp_path / "b").read_bytes() == source.read_bytes()

    def refused(*args, **kwargs):
        raise OSError(18, "Invalid cross-device link")

    (tmp_path / "c").write_bytes(b"an older, longer snapshot" * 1_000_000)
    monkeypatch.setattr(os, "copy_file_range", refused)
    clone_file(source, tmp_path / "c")
    assert (tmp_path / "c").read_bytes() == source.read_bytes()


def test_a_snapshot_copied_early_is_kept_only_if_the_file_did_not_change(tmp_path, monkeypatch):
    """``start_snapshot_copy`` copies the file beside the publish step; the snapshot keeps that copy when nothing wrote
    the file since (no second copy), and copies again when something did: the snapshot holds the last write."""
    import pipelines.db as db_module
    from pipelines.db import start_snapshot_copy

    db = tmp_path / "a.duckdb"
    _write(db, [1, 2])
    copies = []
    clone = db_module.clone_file
    monkeypatch.setattr(db_module, "clone_file", lambda s, t: (copies.append(t), clone(s, t)))
    start_snapshot_copy(db)
    publish_snapshot(db)
    assert len(copies) == 1  # the early copy, kept
    con = open_snapshot(db)
    assert con.execute("select count(*) from t").fetchone()[0] == 2
    con.close()

    start_snapshot_copy(db)
    _write(db, [3])  # a write after the copy began: the copy is stale
    publish_snapshot(db)
    assert len(copies) == 3  # the early copy, then the snapshot's own
    con = open_snapshot(db)
    assert con.execute("select count(*) from t").fetchone()[0] == 3
    con.close()


def test_a_snapshot_that_does_not_fit_leaves_no_partial_copy_beside_the_database(tmp_path, monkeypatch):
    """The snapshot's copy fails on a full disk: the run stops (one line), but its partial copy, as big as the history,
    stayed beside the database, so on that disk every later night stopped in its ingest ("Could not write file
    a.duckdb.wal: No space left on device") until someone removed it by hand. The last snapshot stays as it was."""
    import errno

    import pipelines.db as db_module

    db = tmp_path / "a.duckdb"
    _write(db, [1, 2])
    publish_snapshot(db)
    before = snapshot_path(db).read_bytes()
    _write(db, [3])

    def full(source, target):
        target.write_bytes(source.read_bytes()[:4096])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(db_module, "clone_file", full)
    with pytest.raises(OSError, match="No space left on device"):
        publish_snapshot(db)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.duckdb", "a.readonly.duckdb"]
    assert snapshot_path(db).read_bytes() == before


def _row_groups(con, table):
    return con.execute(f"SELECT row_group_id, max(count), list(DISTINCT block_id ORDER BY block_id) "
                       f"FROM pragma_storage_info('{table}') GROUP BY ALL ORDER BY 1").fetchall()


def test_a_nights_append_leaves_the_earlier_nights_row_groups_as_they_were(tmp_path):
    """The writer's checkpoints merge no row groups (``db.VACUUM_TASKS``): a night's rows appended to a table whose
    last row group is partly filled are a row group of their own, and the earlier nights' blocks are not rewritten
    (DuckDB's default merged the two nights into one row group at the commit, rewriting the first night's)."""
    db = tmp_path / "audit.duckdb"
    for night in range(3):
        con = open_writer(db)
        try:
            con.execute("CREATE TABLE IF NOT EXISTS t (i BIGINT, s VARCHAR)")
            before = _row_groups(con, "t")
            con.execute("BEGIN TRANSACTION")
            con.execute(f"INSERT INTO t SELECT i, 'night ' || i FROM range({night * 30_000}, {(night + 1) * 30_000}) r(i)")
            con.execute("COMMIT")
            con.execute("CHECKPOINT")
            after = _row_groups(con, "t")
            assert after[:len(before)] == before  # the same row groups, in the same blocks
            assert [r[1] for r in after] == [30_000] * (night + 1)
            assert con.execute("SELECT count(*), sum(i) FROM t").fetchone() == (30_000 * (night + 1),
                                                                                 sum(range(30_000 * (night + 1))))
        finally:
            con.close()
