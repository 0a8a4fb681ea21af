"""A run killed in the middle (SIGKILL, no clean-up) and re-run ends in the same database as one clean run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from pipelines.db import DatabaseError, open_reader
from pipelines.ingest.synthetic import write_night
from test_ingest_helpers import snapshot


def _ingest_cmd(folder: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(folder), "--db", str(db)]


def _night(folder: Path) -> None:
    write_night(folder, rounds=16_000, tables=12, seed=11, wagers=4, cards=6)
    # evidence for every path of the loader: a bad line, and the same round twice with different content (a new version)
    p = folder / "rounds_BAC-03.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines()
    lines[10] = lines[10][:50]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    late = json.loads(lines[20])
    late["status"] = "void"
    (folder / "rounds_zz_late.jsonl").write_text(lines[21] + "\n" + json.dumps(late) + "\n", encoding="utf-8")


def test_killed_run_then_rerun_equals_one_clean_run(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    _night(folder)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    t0 = time.perf_counter()
    subprocess.run(_ingest_cmd(folder, tmp_path / "clean.duckdb"), check=True, capture_output=True, env=env)
    clean_seconds = time.perf_counter() - t0

    killed_db = tmp_path / "killed.duckdb"
    total_files = len(list(folder.iterdir()))
    partial = []
    # the load on the machine changes between runs: kill at several points so that some kill lands mid-run
    for fraction in (0.5, 0.3, 0.15):
        proc = subprocess.Popen(_ingest_cmd(folder, killed_db), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env)
        time.sleep(clean_seconds * fraction)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not killed_db.exists():  # a loaded machine: killed before it made the database (nothing loaded)
            partial.append(0)
            continue
        try:
            con = open_reader(killed_db)
        except DatabaseError:  # killed while it made the file
            partial.append(0)
            continue
        try:
            partial.append(con.execute("SELECT count(*) FROM core_source_files").fetchall()[0][0])
        except duckdb.CatalogException:  # killed before it made its tables
            partial.append(0)
        con.close()
    assert min(partial) < total_files, "the runs finished before they could be killed; make the input larger"

    subprocess.run(_ingest_cmd(folder, killed_db), check=True, capture_output=True, env=env)
    clean, killed = open_reader(tmp_path / "clean.duckdb"), open_reader(killed_db)
    a, b = snapshot(clean), snapshot(killed)
    assert a.keys() == b.keys()
    for table in a:
        assert a[table] == b[table], table
    assert len(a["core_quarantine"]) == 1 and len(a["core_source_changes"]) == 1
    assert len(a["core_source_files"]) == total_files
