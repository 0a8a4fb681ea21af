"""pipelines.audit.ahead: the ingest ``pitaudit audit`` runs while Prefect's server starts, handed to the flow.

The quick way must change nothing but the time: the writer lock is held from that ingest to the flow's end,
a database another run holds is left to the flow (which waits or stops with its own message), and the flow
handed the ingest goes on with it rather than loading the files again.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import duckdb

from pipelines.audit.ahead import Ingested, hand_over, ingest_ahead, take
from pipelines.settings import Settings
from pipelines.writer_lock import writer_lock

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
ROOT = Path(__file__).parents[1]


def _someone_else_can_lock(db: Path) -> bool:
    code = ("import sys; from pipelines.writer_lock import writer_lock, WriterBusy\n"
            "try:\n    with writer_lock(sys.argv[1], 0): print('free')\n"
            "except WriterBusy: print('held')")
    done = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, cwd=ROOT, check=True)
    return done.stdout.strip() == "free"


def test_the_ingest_ahead_loads_the_night_and_keeps_the_lock_until_the_run_ends(tmp_path):
    db = tmp_path / "audit.duckdb"
    with ExitStack() as held:
        key = ingest_ahead(held, SAMPLE, db, "06:00", Settings.defaults())
        assert key is not None
        assert not _someone_else_can_lock(db)  # held for the flow that follows
        done = take(key, db)
        assert done is not None and take(key, db) is None  # handed over once
        assert done.summary.lines_read == 18_677 and sum(done.summary.quarantined_by_reason.values()) == 16
        con = duckdb.connect(str(db), read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM core_rounds").fetchone()[0] == 1_996
        finally:
            con.close()
    assert _someone_else_can_lock(db)  # let go with the run


def test_a_database_another_run_holds_is_left_to_the_flow(tmp_path):
    db = tmp_path / "audit.duckdb"
    code = ("import sys, time; from pipelines.writer_lock import writer_lock\n"
            "with writer_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert other.stdout.readline().strip() == "held"
        with ExitStack() as held:
            assert ingest_ahead(held, SAMPLE, db, "06:00", Settings.defaults()) is None  # no wait, nothing loaded
        assert not db.exists()
    finally:
        other.kill()
        other.wait()


def test_a_folder_the_ingest_refuses_is_left_to_the_flow_and_the_lock_is_let_go(tmp_path):
    db = tmp_path / "audit.duckdb"
    with ExitStack() as held:
        assert ingest_ahead(held, tmp_path / "no-such-folder", db, "06:00", Settings.defaults()) is None
        assert _someone_else_can_lock(db)


def test_a_key_is_for_its_own_database_only(tmp_path):
    key = hand_over(Ingested(summary=object(), seconds=1.0, db_path=tmp_path / "a.duckdb"))
    assert take(key, tmp_path / "b.duckdb") is None
    assert take("not-a-key", tmp_path / "a.duckdb") is None and take(None, tmp_path / "a.duckdb") is None


def test_the_flow_handed_an_ingest_does_not_load_again(tmp_path, prefect_harness, monkeypatch):
    from pipelines.audit import flow as flow_module

    db = tmp_path / "audit.duckdb"
    calls = []
    real = flow_module.ingest_task
    monkeypatch.setattr(flow_module, "ingest_task", lambda *a, **k: calls.append(a) or real(*a, **k))
    with ExitStack() as held:
        key = ingest_ahead(held, SAMPLE, db, "06:00", Settings.defaults())
        outcome = flow_module.audit_flow(str(SAMPLE), str(db), str(tmp_path / "out"), ingested=key)
    assert calls == [] and outcome.audited and outcome.ingest.lines_read == 18_677
    assert outcome.findings.height == 216
