"""Benchmark: `pitaudit ingest` (validated, quarantining, de-duplicating) against a bare DuckDB load.

    .venv/bin/python -m benchmarks.ingest                      # writes a 1,000,000-round night first
    .venv/bin/python -m benchmarks.ingest --rounds 100000      # smaller
    .venv/bin/python -m benchmarks.ingest --input DIR          # an existing folder of logs

The bare load is ``CREATE TABLE AS SELECT * FROM read_json(...)`` and ``read_csv(...)`` of the same
files into a fresh DuckDB file: no validation, no line numbers, no quarantine. Each side runs in its
own child process, so its peak memory (ru_maxrss) is its own. Goal (issue 4): ingest within 2x of the
bare load, peak memory under 4 GB. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child_bare(input_dir: Path, db: Path) -> dict:
    import duckdb

    t = time.perf_counter()
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE raw_rounds AS SELECT * FROM read_json('{input_dir.as_posix()}/**/rounds_*.jsonl', "
                "format = 'newline_delimited', ignore_errors = true, union_by_name = true)")
    con.execute(f"CREATE TABLE raw_events AS SELECT * FROM read_csv('{input_dir.as_posix()}/**/shoe_*.csv', "
                "header = true, ignore_errors = true, union_by_name = true)")
    rounds = con.execute("SELECT count(*) FROM raw_rounds").fetchall()[0][0]
    events = con.execute("SELECT count(*) FROM raw_events").fetchall()[0][0]
    con.close()
    return {"seconds": time.perf_counter() - t, "rounds": rounds, "events": events}


def _child_ingest(input_dir: Path, db: Path) -> dict:
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder
    from pipelines.settings import load_settings
    import duckdb

    settings = load_settings()
    t = time.perf_counter()
    writer = open_writer(db, settings.writer_memory)
    s = ingest_folder(writer, input_dir, settings=settings)
    writer.close()
    seconds = time.perf_counter() - t
    con = duckdb.connect(str(db), read_only=True)
    wagers = con.execute("SELECT count(*) FROM core_wagers").fetchall()[0][0]
    con.close()
    return {"seconds": seconds, "lines": s.lines_read, "accepted": s.rows_accepted, "quarantined": s.rows_quarantined,
            "wagers": wagers}


def _worker_count() -> int:
    from pipelines.settings import load_settings

    return load_settings().parse_workers


def _run_child(mode: str, input_dir: Path, db: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.ingest", "--child", mode, "--input", str(input_dir),
                          "--db", str(db)], capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"benchmark: the {mode} run failed: {last}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, help="folder of shoe_*.csv / rounds_*.jsonl (default: write one)")
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--tables", type=int, default=24)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--child", choices=("bare", "ingest"), help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        result = _child_bare(args.input, args.db) if args.child == "bare" else _child_ingest(args.input, args.db)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        workers = resource.getrusage(resource.RUSAGE_CHILDREN)  # the ingest's parse workers (ended by now)
        n_workers = 0 if args.child == "bare" else _worker_count()
        # peak memory: this process plus, at most, every worker at the largest worker's peak (an upper bound)
        result["peak_rss_mb"] = (usage.ru_maxrss + n_workers * workers.ru_maxrss) / 1024
        # all threads and the workers; steadier than wall time on a busy box
        result["cpu_seconds"] = usage.ru_utime + usage.ru_stime + workers.ru_utime + workers.ru_stime
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
        size = sum(p.stat().st_size for p in input_dir.rglob("*") if p.is_file())
        print(f"input: {input_dir} ({size / 1e6:,.0f} MB)")
        bare = _run_child("bare", input_dir, work / "bare.duckdb")
        ingest = _run_child("ingest", input_dir, work / "ingest.duckdb")
        lines = ingest["lines"]
        print(f"{'':24}{'seconds':>10}{'lines/s':>14}{'CPU s':>10}{'peak MB':>10}   (ingest: with its parse workers)")
        for name, r in (("bare DuckDB read", bare), ("pitaudit ingest", ingest)):
            print(f"{name:24}{r['seconds']:>10.1f}{lines / r['seconds']:>14,.0f}{r['cpu_seconds']:>10.1f}"
                  f"{r['peak_rss_mb']:>10,.0f}")
        print(f"lines {lines:,} (rounds {bare['rounds']:,} + device events {bare['events']:,}); wagers {ingest['wagers']:,}; "
              f"accepted {ingest['accepted']:,}, quarantined {ingest['quarantined']:,}")
        ratio = ingest["seconds"] / bare["seconds"]
        cpu_ratio = ingest["cpu_seconds"] / bare["cpu_seconds"]
        print(f"ingest / bare = {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (goal <= 2x); "
              f"peak memory {ingest['peak_rss_mb']:,.0f} MB (goal < 4096 MB); load average now {os.getloadavg()[0]:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


if __name__ == "__main__":
    main()
