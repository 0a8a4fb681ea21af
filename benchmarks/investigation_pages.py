"""The audit's investigation pages of one night, alone: how long they take and how much they weigh.

Reads a database an audit has written (e.g. ``benchmarks.nights --keep DIR``'s ``DIR/history.duckdb``), takes the
statistical findings of one gaming day (the latest by default) as the audit's publish step does, and writes their
investigation pages with :func:`pipelines.report.linked.write_investigations` into a fresh folder, ``--repeat``
times. Prints this process's CPU seconds (the machine may be shared: the steadier figure), the page count, the
folder's megabytes, and the biggest files and pages.

    .venv/bin/python -m benchmarks.nights --nights 10 --rounds 5000 --repeat 1 --keep /tmp/nights
    .venv/bin/python -m benchmarks.investigation_pages /tmp/nights/history.duckdb
    .venv/bin/python -m benchmarks.investigation_pages /tmp/nights/history.duckdb --workers 2   # split as the audit does
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path


def _children_cpu() -> float:
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path, help="a database an audit has written")
    ap.add_argument("--day", type=dt.date.fromisoformat, default=None, help="the gaming day (default: the latest)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="write the pages here and keep them")
    ap.add_argument("--workers", type=int, default=1,
                    help="2: half the pages' wagers on a worker thread, as the audit splits them (its CPU is in this "
                         "process's; any child process's is printed apart)")
    args = ap.parse_args()

    from pipelines.db import open_bounded_reader
    from pipelines.evidence.pack import database_for_readers
    from pipelines.report.linked import write_investigations
    from pipelines.settings import READER_MEMORY

    source = database_for_readers(args.db)
    con = open_bounded_reader(source, READER_MEMORY)
    try:
        day = args.day or con.execute("SELECT max(gaming_day) FROM out_findings WHERE p_value IS NOT NULL").fetchall()[0][0]
        findings = con.sql("SELECT * FROM out_findings WHERE p_value IS NOT NULL AND gaming_day = ?",
                           params=[day]).pl()
        cpu, wall, kids = [], [], []
        for _ in range(args.repeat):
            folder = Path(tempfile.mkdtemp(prefix="pitaudit-pages-")) if args.keep is None else args.keep
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            t, c, k = time.perf_counter(), time.process_time(), _children_cpu()
            _, errors = write_investigations(con, folder, findings, str(source), db_path=source, workers=args.workers)
            cpu.append(time.process_time() - c)
            kids.append(_children_cpu() - k)
            wall.append(time.perf_counter() - t)
            sizes = [(p.relative_to(folder), p.stat().st_size) for p in folder.rglob("*") if p.is_file()]
            if args.keep is None:
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        con.close()
    pages = [p for p, _ in sizes if p.name == "index.html"]
    total = sum(s for _, s in sizes)
    by_name = collections.Counter()
    for p, s in sizes:
        by_name[p.name] += s
    print(f"gaming day {day}: {findings.height} statistical findings, {len(pages)} pages, {len(errors)} errors")
    print(f"CPU s per run: {', '.join(f'{c:.2f}' for c in cpu)} (wall s: {', '.join(f'{w:.2f}' for w in wall)})"
          + (f"; child processes' CPU s: {', '.join(f'{k:.2f}' for k in kids)}" if args.workers > 1 else ""))
    print(f"{total / 1e6:.1f} MB in {len(sizes)} files; {total / max(len(pages), 1) / 1e6:.1f} MB per page folder")
    print("by file name (MB, all pages):", ", ".join(f"{n} {s / 1e6:.1f}" for n, s in by_name.most_common(10)))
    biggest = sorted(((s, p) for p, s in sizes if p.name == "index.html"), reverse=True)[:3]
    print("biggest pages (MB):", ", ".join(f"{p.parent} {s / 1e6:.1f}" for s, p in biggest))


if __name__ == "__main__":
    main()
