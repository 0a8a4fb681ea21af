"""Benchmark: `pitaudit ingest` (every check, the quarantine, content identity, the load) against DuckDB's bare load.

    .venv/bin/python -m benchmarks.ingest --input DIR              # a folder of logs (pitaudit simulate --out DIR)
    .venv/bin/python -m benchmarks.ingest --rounds 200000          # writes a synthetic night first
    .venv/bin/python -m benchmarks.ingest --input DIR --runs 3     # best of 3 ingests (the bare load is always best of 3)

The bare load is DuckDB's plainest load of the same bytes: ``CREATE TABLE AS SELECT * FROM read_csv(...)`` and
``read_json(...)`` into a fresh database file, types inferred, no ``union_by_name`` (which samples every file's
schema first and tripled the time), ``ignore_errors`` only so that malformed lines do not stop it; no checks, no
line numbers, no quarantine, no canonical tables. The files are read once before, so both sides find them in the
page cache. Each side runs in a child process of its own: CPU seconds are the child's and its workers'
(``getrusage``: user + system, every thread), the peak memory is the highest sum over the child and its workers
sampled together (``benchmarks.tree_memory``). On a shared machine compare CPU seconds; wall time is the other
work's as much as this code's. Goal (issue 13): the ingest within 1.5x the bare load. Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.tree_memory import TreePeak


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the ingest's parse workers, once they have ended
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _child_bare(input_dir: Path, db: Path) -> dict:
    import duckdb

    t, c = time.perf_counter(), _cpu()
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE raw_events AS SELECT * FROM read_csv('{input_dir.as_posix()}/**/shoe_*.csv', "
                "ignore_errors = true)")
    con.execute(f"CREATE TABLE raw_rounds AS SELECT * FROM read_json('{input_dir.as_posix()}/**/rounds_*.jsonl', "
                "format = 'newline_delimited', ignore_errors = true)")
    rounds = con.execute("SELECT count(*) FROM raw_rounds").fetchall()[0][0]
    events = con.execute("SELECT count(*) FROM raw_events").fetchall()[0][0]
    con.close()
    return {"seconds": time.perf_counter() - t, "cpu_seconds": _cpu() - c, "rounds": rounds, "events": events}


def _child_ingest(input_dir: Path, db: Path) -> dict:
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder
    from pipelines.settings import load_settings
    import duckdb

    settings = load_settings()
    t, c = time.perf_counter(), _cpu()
    writer = open_writer(db, settings.writer_memory)
    s = ingest_folder(writer, input_dir, settings=settings)
    writer.close()
    seconds, cpu = time.perf_counter() - t, _cpu() - c
    con = duckdb.connect(str(db), read_only=True)
    wagers = con.execute("SELECT count(*) FROM core_wagers").fetchall()[0][0]
    con.close()
    return {"seconds": seconds, "cpu_seconds": cpu, "lines": s.lines_read, "accepted": s.rows_accepted,
            "quarantined": s.rows_quarantined, "wagers": wagers, "workers": settings.parse_workers,
            "reasons": dict(s.quarantined_by_reason)}


def _run_child(mode: str, input_dir: Path, db: Path) -> dict:
    db.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.ingest", "--child", mode, "--input", str(input_dir),
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with TreePeak(proc.pid, interval=0.25) as peak:
        out, err = proc.communicate()
    db.unlink(missing_ok=True)
    if proc.returncode != 0:
        last = (err.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"benchmark: the {mode} run failed: {last}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_gb"] = peak.bytes / 2**30
    return result


def _best(runs: list[dict]) -> dict:
    """The run with the least CPU; its wall time is reported beside the least wall time of all runs."""
    best = dict(min(runs, key=lambda r: r["cpu_seconds"]))
    best["best_wall"] = min(r["seconds"] for r in runs)
    best["peak_gb"] = max(r["peak_gb"] for r in runs)
    return best


def warm(folder: Path) -> int:
    """Read every input file once (the page cache); returns their bytes."""
    size = 0
    for path in folder.rglob("*"):
        if path.is_file() and re.match(r"^(shoe_.*\.csv|rounds_.*\.jsonl)$", path.name):
            with path.open("rb") as fh:
                while block := fh.read(1 << 24):
                    size += len(block)
    return size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, help="folder of shoe_*.csv / rounds_*.jsonl (default: write one)")
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--tables", type=int, default=24)
    ap.add_argument("--runs", type=int, default=1, help="ingest runs (best of); the bare load is best of 3")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--child", choices=("bare", "ingest"), help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        result = _child_bare(args.input, args.db) if args.child == "bare" else _child_ingest(args.input, args.db)
        print(json.dumps(result))
        return

    work = Path(tempfile.mkdtemp(prefix="pitaudit-bench-ingest-"))
    try:
        input_dir = args.input
        if input_dir is None:
            from pipelines.ingest.synthetic import write_night

            input_dir = work / "input"
            t = time.perf_counter()
            totals = write_night(input_dir, args.rounds, tables=args.tables)
            print(f"wrote {totals['rounds']:,} rounds, {totals['wagers']:,} wagers, {totals['events']:,} device events "
                  f"in {time.perf_counter() - t:.1f} s (synthetic writer)")
        size = warm(input_dir)
        print(f"input: {input_dir} ({size / 1e6:,.0f} MB of logs); load average {os.getloadavg()[0]:.1f}")
        bare = _best([_run_child("bare", input_dir, work / "bare.duckdb") for _ in range(3)])
        ingest = _best([_run_child("ingest", input_dir, work / "ingest.duckdb") for _ in range(max(1, args.runs))])
        lines = ingest["lines"]
        print(f"{'':28}{'CPU s':>8}{'wall s':>9}{'lines/CPU-s':>14}{'peak GB':>9}")
        for name, r in (("bare DuckDB load (best of 3)", bare),
                        (f"pitaudit ingest ({ingest['workers']} workers)", ingest)):
            print(f"{name:28}{r['cpu_seconds']:>8.2f}{r['best_wall']:>9.2f}{lines / r['cpu_seconds']:>14,.0f}"
                  f"{r['peak_gb']:>9.2f}")
        print(f"lines {lines:,} (rounds {bare['rounds']:,} + device events {bare['events']:,}); wagers "
              f"{ingest['wagers']:,}; accepted {ingest['accepted']:,}, quarantined {ingest['quarantined']:,}")
        print(f"ingest / bare = {ingest['cpu_seconds'] / bare['cpu_seconds']:.2f}x CPU, "
              f"{ingest['best_wall'] / bare['best_wall']:.2f}x wall (goal: within 1.5x); "
              f"load average now {os.getloadavg()[0]:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


if __name__ == "__main__":
    main()
