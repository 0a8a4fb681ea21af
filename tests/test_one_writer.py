"""One writer, all or nothing: ``pitaudit audit`` as a user runs it (a process of its own, its own Prefect server).

- two audits started together on one database both end as one clean run would (the second waits for the first);
- an audit that cannot get the database within PITAUDIT_LOCK_WAIT stops with one line and status 2;
- a full output disk (a small tmpfs) leaves the previous run's files whole and no partial file;
- a full disk under the database stops the run and blames no input file: the re-run is one clean run;
- a killed audit leaves no process behind (its Prefect server, its workers), and its re-run ends as one clean run;
- a database path holding a quote works;
- `pitaudit ingest` where nothing can be written stops with one line; an input typo makes no database.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import polars as pl
import pytest

CLI = [sys.executable, "-m", "pipelines.cli"]
FILES = ("findings.csv", "quarantine.csv", "report.html", "settlements.parquet")
FOLDERS = ("evidence", "investigations")  # the audit's evidence packs and investigation pages, moved in whole


def _tree(out: Path) -> dict[str, bytes]:
    """Every output file under ``out`` (folders included) by its relative path, with its bytes."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != "filler"}


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(PREFECT_HOME=str(tmp / "prefect-home"), PYTHONUNBUFFERED="1", **extra)
    return env


def _audit(inp: Path, db: Path, out: Path, env: dict, **kw) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "audit", "--input", str(inp), "--db", str(db), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)


def _rows(db: Path) -> dict[str, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in ("out_findings", "out_settlements", "out_partitions", "core_rounds", "core_wagers")}
    finally:
        con.close()


def _same_files(a: Path, b: Path) -> None:
    for name in ("findings.csv", "quarantine.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert pl.read_parquet(a / "settlements.parquet").equals(pl.read_parquet(b / "settlements.parquet"))


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """A simulated night and one clean audit of it (the reference)."""
    from pipelines.simulate.run import run_simulation

    root = tmp_path_factory.mktemp("writer")
    run_simulation(root / "night", tables=8, rounds=1200, seed=77, fault_rate=0.02, quiet=True)
    proc = _audit(root / "night", root / "clean.duckdb", root / "clean-out", _env(root))
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    return root


def test_two_audits_started_together_end_as_one_clean_run(night, tmp_path):
    """Both audits are started while the database is held, so both are surely waiting on it when it is let go
    (started bare, one could finish before the other reached the lock, and the test would prove nothing): then
    one writes while the other waits for it, and both end with the files and rows of one clean run."""
    from pipelines.writer_lock import writer_lock

    db = tmp_path / "shared.duckdb"
    env = _env(tmp_path, PITAUDIT_LOCK_WAIT="600")
    logs = [tmp_path / "a.err", tmp_path / "b.err"]
    with writer_lock(db):
        procs = []
        for out, log in zip(("a", "b"), logs):
            with open(log, "w") as err:
                procs.append(subprocess.Popen([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out",
                                               str(tmp_path / out)], stdout=subprocess.DEVNULL, stderr=err, text=True,
                                              env=env))
        deadline = time.monotonic() + 300
        while not all("waiting for another pitaudit run" in log.read_text() for log in logs):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [l.read_text()[-2000:] for l in logs]
            time.sleep(0.5)
    assert [p.wait(timeout=900) for p in procs] == [0, 0], [log.read_text()[-2000:] for log in logs]
    _same_files(tmp_path / "a", night / "clean-out")
    _same_files(tmp_path / "b", night / "clean-out")
    assert _rows(db) == _rows(night / "clean.duckdb")


def test_an_audit_that_cannot_get_the_database_stops_with_one_line(night, tmp_path):
    from pipelines.writer_lock import writer_lock

    db = tmp_path / "held.duckdb"
    with writer_lock(db):
        proc = _audit(night / "night", db, tmp_path / "out", _env(tmp_path, PITAUDIT_LOCK_WAIT="0"))
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pitaudit: another pitaudit run is writing "), err
    assert f"pid {os.getpid()}" in lines[0] and "Traceback" not in err
    assert not (tmp_path / "out" / "findings.csv").exists()


def test_an_audit_waits_for_the_writer_then_runs(night, tmp_path):
    from pipelines.writer_lock import writer_lock

    db = tmp_path / "waits.duckdb"
    log = tmp_path / "stderr.txt"
    with writer_lock(db), open(log, "w") as err_file:
        proc = subprocess.Popen([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out",
                                 str(tmp_path / "out")], stdout=subprocess.DEVNULL, stderr=err_file, text=True,
                                env=_env(tmp_path, PITAUDIT_LOCK_WAIT="300"))
        deadline = time.monotonic() + 300
        while "waiting for another pitaudit run" not in log.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.5)
        time.sleep(2)
        assert proc.poll() is None and not (tmp_path / "out" / "findings.csv").exists()
    assert proc.wait(timeout=600) == 0, log.read_text()[-2000:]
    assert "waiting for another pitaudit run to finish writing" in log.read_text()
    _same_files(tmp_path / "out", night / "clean-out")


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def test_a_full_output_disk_leaves_the_previous_files_whole_and_no_partial_file(night, tmp_path):
    out = tmp_path / "small-disk"
    if not _mount_tmpfs(out, "12m"):
        pytest.skip("needs root and tmpfs to make a small disk (test_a_failed_write_... covers the logic)")
    try:
        db = tmp_path / "a.duckdb"
        first = _audit(night / "night", db, out, _env(tmp_path))
        _o, err = first.communicate(timeout=600)
        assert first.returncode == 0, err[-2000:]
        before = _tree(out)
        # fill the disk but a little, then audit again (a changed code version would not matter: the report alone
        # is bigger than what is left)
        free = os.statvfs(out).f_bavail * os.statvfs(out).f_frsize
        with open(out / "filler", "wb") as fh:
            fh.write(b"\0" * max(0, free - 200_000))
        second = subprocess.run([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out", str(out)],
                                capture_output=True, text=True, env=_env(tmp_path), timeout=600)
        assert second.returncode == 2, second.stderr[-2000:]
        lines = [line for line in second.stderr.splitlines() if line.strip() and not line.startswith("audit: ")]
        assert len(lines) == 1 and "No space left on device" in lines[0], second.stderr[-2000:]
        assert str(out) in lines[0], lines[0]  # which disk: the database's may be another
        assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, *FOLDERS, "filler"])  # no partial file or folder
        assert _tree(out) == before
    finally:
        subprocess.run(["umount", str(out)], capture_output=True)


def test_a_full_disk_under_the_database_stops_the_run_and_blames_no_file(night, tmp_path):
    """The database's disk fills during the ingest: the run stops with one line (status 2) and records no input file
    as failed; once there is room, the re-run loads every file and ends as one clean run. Before, the failed COMMIT's
    roll-back raised "no transaction is active", the batch was retried file by file and each file was recorded
    ``file_load_failed`` (a defect of the loader on that file alone, docs/formats.md) for good: every later run audited
    the night without them (hundreds of false ``unmatched_round`` findings, their cards never checked)."""
    disk = tmp_path / "small-disk"
    if not _mount_tmpfs(disk, "40m"):
        pytest.skip("needs root and tmpfs to make a small disk")
    try:
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        with open(disk / "filler", "wb") as fh:
            fh.write(b"\0" * max(0, free - 800_000))  # room for the tables, not for the night's rows
        db, out = disk / "a.duckdb", tmp_path / "out"
        first = subprocess.run([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out", str(out)],
                               capture_output=True, text=True, env=_env(tmp_path), timeout=600)
        assert first.returncode == 2, first.stderr[-2000:]
        lines = [line for line in first.stderr.splitlines() if line.strip() and not line.startswith("audit: ")]
        assert len(lines) == 1 and lines[0].startswith("pitaudit: the database could not be written"), first.stderr[-2000:]
        assert "No space left on device" in lines[0] and "Traceback" not in first.stderr
        (disk / "filler").unlink()
        rerun = subprocess.run([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out", str(out)],
                               capture_output=True, text=True, env=_env(tmp_path), timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        assert "could not be loaded" not in (out / "quarantine.csv").read_text()
        _same_files(out, night / "clean-out")
        assert _rows(db) == _rows(night / "clean.duckdb")
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_a_run_that_fails_while_staging_leaves_no_staging_folder(night, tmp_path):
    """The database's disk fills while the groups stage their rows: the run stops with one line (status 2) and leaves
    no staging folder beside the database. Before, the groups still running on threads after the first failed wrote
    into the folder after its removal and made it again, left on the full disk until the next run."""
    disk = tmp_path / "small-disk"
    if not _mount_tmpfs(disk, "40m"):
        pytest.skip("needs root and tmpfs to make a small disk")
    try:
        db = disk / "a.duckdb"
        loaded = subprocess.run([*CLI, "ingest", "--input", str(night / "night"), "--db", str(db)],
                                capture_output=True, text=True, env=_env(tmp_path), timeout=600)
        assert loaded.returncode == 0, loaded.stderr[-2000:]
        (disk / "a.readonly.duckdb").unlink()
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        with open(disk / "filler", "wb") as fh:
            fh.write(b"\0" * max(0, free - 150_000))  # the ingest is done: too little room for the groups' rows
        env = _env(tmp_path, PITAUDIT_GROUP_ROUNDS="100")  # many groups, so that some still run when one fails
        done = subprocess.run([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out",
                               str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 2, done.stderr[-2000:]
        lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("audit: ")]
        # which write meets the full disk first varies from run to run: an OSError (ENOSPC), or polars' Parquet writer
        # whose "Invalid thrift: transport error" the line follows with the disk that is full
        assert len(lines) == 1, done.stderr[-2000:]
        assert "No space left on device" in lines[0] or f"the disk of {disk} is full" in lines[0], lines[0]
        assert sorted(p.name for p in disk.iterdir()) == ["a.duckdb", "a.duckdb.lock", "filler"]
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_a_database_disk_that_fills_while_the_groups_stage_says_the_disk_is_full(tmp_path):
    """The sample night's ingest fills a 6 MB disk under the database with its write-ahead log, and a group's staged
    findings file is the write that fails: polars' Parquet writer then reports "Invalid thrift: transport error", and
    that was the whole reason the operator read. The line now says which disk is full."""
    disk = tmp_path / "small-disk"
    if not _mount_tmpfs(disk, "6m"):
        pytest.skip("needs root and tmpfs to make a small disk")
    try:
        done = subprocess.run([*CLI, "audit", "--input", str(Path(__file__).parents[1] / "data" / "sample"), "--db",
                               str(disk / "a.duckdb"), "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, env=_env(tmp_path), timeout=600)
        assert done.returncode == 2, done.stderr[-2000:]
        lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("audit: ")]
        assert len(lines) == 1, done.stderr[-2000:]
        assert "No space left on device" in lines[0] or f"the disk of {disk} is full" in lines[0], lines[0]
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_a_failed_write_leaves_the_previous_files_whole(night, tmp_path, monkeypatch, prefect_harness):
    """The same without a small disk: the report's write fails (ENOSPC) after the CSV files were written. The line
    names the output folder: a write's OSError names no file, and "No space left on device" alone left the operator
    to guess between the output's disk and the database's."""
    from pipelines.audit import publish
    from pipelines.audit.run import AuditError, run_audit

    out = tmp_path / "out"
    run_audit(night / "night", tmp_path / "a.duckdb", out, progress=False)
    before = _tree(out)
    assert any(name.startswith("evidence/") for name in before)  # the night has finding rounds: packs to keep whole

    def full(path, inputs):
        Path(path).write_text("<html>half a rep", encoding="utf-8")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("pipelines.report.write_report", full)
    with pytest.raises(AuditError, match="No space left on device") as stopped:
        run_audit(night / "night", tmp_path / "a.duckdb", out, progress=False)
    assert str(out) in str(stopped.value), stopped.value
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, *FOLDERS])
    assert _tree(out) == before
    # the snapshot's early copy (begun before the publish) goes with the failed run; the last snapshot stays
    assert not list(tmp_path.glob("*.partial")) and (tmp_path / "a.readonly.duckdb").exists()
    assert publish  # the module under test


def _marked(mark: str) -> list[int]:
    """Processes whose environment carries ``mark`` (a run's processes inherit it: its server, its workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the run's processes")
def test_a_killed_audit_leaves_no_process_and_its_rerun_is_one_clean_run(night, tmp_path):
    db = tmp_path / "killed.duckdb"
    kills = 0
    # Each run is killed a while after it has started its Prefect server, not at a fixed time from its start: on a
    # loaded machine the imports alone can outlast a fixed time, and the kill then found no child to leave behind.
    for after_server_s in (2, 9, 16):
        mark = f"AUDIT_TEST_MARK_{uuid.uuid4().hex}"  # no PITAUDIT_ name: that is a setting's
        env = _env(tmp_path, **{mark: "1"}, PITAUDIT_AUDIT_PROCESSES="2", PITAUDIT_GROUP_ROUNDS="100")
        proc = subprocess.Popen([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out",
                                 str(tmp_path / "out")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None and len(_marked(mark)) < 2:
            time.sleep(0.2)
        assert proc.poll() is not None or len(_marked(mark)) >= 2, "the run started no child in 180 s"
        deadline = time.monotonic() + after_server_s
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        if proc.poll() is None:
            assert len(_marked(mark)) >= 2  # the run and at least its Prefect server
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        deadline = time.monotonic() + 90  # the server ends on SIGTERM, the workers when their pipe closes
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _marked(mark) == [], "a process of the killed run is still running"
    assert kills >= 1, "every run finished before it could be killed"
    rerun = subprocess.run([*CLI, "audit", "--input", str(night / "night"), "--db", str(db), "--out",
                            str(tmp_path / "out")], capture_output=True, text=True, env=_env(tmp_path), timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    _same_files(tmp_path / "out", night / "clean-out")
    assert _rows(db) == _rows(night / "clean.duckdb")
    assert not list(tmp_path.glob(".killed.duckdb.stage-*")) and not list((tmp_path / "out").glob(".pitaudit-*"))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="a folder no one can create is one under /proc")
def test_ingest_where_nothing_can_be_written_stops_with_one_line_and_a_typo_makes_no_database(night, tmp_path):
    """Before, `pitaudit ingest` with a database in a folder that cannot be written (read-only, or under a path that
    cannot be made) stopped on the writer lock's file with a traceback and status 1; and an input folder that does
    not exist created an empty database first."""
    unwritable = Path("/proc/no-such-process/audit.duckdb")  # /proc refuses a new folder, even to root
    done = subprocess.run([*CLI, "ingest", "--input", str(night / "night"), "--db", str(unwritable)],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert lines[0].startswith(f"pitaudit: cannot write beside the database {unwritable}"), lines
    typo = subprocess.run([*CLI, "ingest", "--input", str(tmp_path / "no-such-export"), "--db", str(tmp_path / "a.duckdb")],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert typo.returncode == 2 and typo.stderr.strip().startswith("pitaudit: input folder "), typo.stderr[-2000:]
    assert not (tmp_path / "a.duckdb").exists() and not (tmp_path / "a.duckdb.lock").exists()
    (tmp_path / "notes.duckdb").write_text("not a database")  # a reason said inside the lock: one line, not two
    other = subprocess.run([*CLI, "ingest", "--input", str(night / "night"), "--db", str(tmp_path / "notes.duckdb")],
                           capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    lines = [line for line in other.stderr.splitlines() if line.strip()]
    assert other.returncode == 2 and len(lines) == 1 and "not a valid DuckDB database file" in lines[0], lines


def test_a_quote_in_the_database_path_works(night, tmp_path, prefect_harness):
    from pipelines.audit.run import run_audit

    folder = tmp_path / "O'Brien's casino"
    outcome = run_audit(night / "night", folder / "aud'it.duckdb", folder / "out'put", progress=False)
    assert outcome.audited and (folder / "aud'it.readonly.duckdb").exists()
    _same_files(folder / "out'put", night / "clean-out")
