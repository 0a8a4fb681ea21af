"""The audit's publish step alone, again and again, on a database an audit has written: where its time goes.

The audit flow's publish (:func:`pipelines.audit.publish.publish_night`: findings, totals, trend, funnel, report,
evidence packs, investigation pages, the quarantined lines of the input) reads the database and writes files; it
never writes the database, so it can be repeated on one audited database. Audit a night into a copy first, then:

    .venv/bin/python -m benchmarks.publish --db /tmp/x/history.duckdb --input export-2026-12-01 --repeat 3
    .venv/bin/python -m benchmarks.publish --db night.duckdb --input night-1m --profile /tmp/publish.prof

The scope is the input's gaming days (as the flow's default) unless ``--day``; the partitions are every
(gaming day, table) of those days, as the flow publishes them. Prints, per run: wall seconds, this process's CPU
seconds and its children's (the pack workers), then each part's wall and CPU seconds, the packs' and the
investigation pages' own figures, and the output folder's size. The machine may be shared: CPU is the steadier
figure. ``--keep DIR`` keeps the last run's folder (to compare outputs before and after a change).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _user_system() -> tuple[float, float]:
    """User and system CPU seconds of this process and its children so far (the packs' 8,000 files are system time,
    which a shared disk moves by several seconds from run to run)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + kids.ru_utime, me.ru_stime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="a database an audit has written (only read)")
    ap.add_argument("--input", type=Path, required=True, help="the input folder the audit read")
    ap.add_argument("--day", type=dt.date.fromisoformat, action="append", default=None,
                    help="a gaming day to publish (repeatable; default: the input's days)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", type=Path, default=None, help="write a cProfile (CPU time) of the last run here")
    ap.add_argument("--keep", type=Path, default=None, help="keep the last run's folder here")
    args = ap.parse_args()

    from pipelines.audit.load import Window, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.publish import export_settlements_of, publish_night
    from pipelines.audit.scope import Scope, input_scope
    from pipelines.db import open_bounded_reader
    from pipelines.ingest.discover import discover
    from pipelines.settings import Settings

    settings = Settings.defaults()
    params = AuditParams(settings=settings)
    if args.day:
        scope = Scope(tuple(sorted(args.day)), "day")
    else:
        found = [(str(f.kind), f.path) for f in discover(args.input) if f.kind is not None and f.problem is None]
        scope = input_scope(found, found, params.day_start_minutes)
    work = Path(tempfile.mkdtemp(prefix="pitaudit-publish-"))
    settlements = work / "settlements.parquet"
    con = open_bounded_reader(args.db, settings.reader_memory)
    try:
        keys = list(partition_keys(con, params, Window(scope.days)).select("gaming_day", "table_id").iter_rows())
        # the flow's first audit of a night exports settlements.parquet while it writes the database (before
        # publish): made once here, outside the timings, and handed to each run as the flow hands it
        export_settlements_of(con, keys, settlements)
    finally:
        con.close()
    print(f"{args.db}: gaming day(s) {scope.label()}, {len(keys)} partitions; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for run in range(args.repeat):
        folder = work / f"run-{run + 1}"
        folder.mkdir()
        partial = folder / ".settlements.parquet.partial"
        shutil.copyfile(settlements, partial)
        prof = None
        if args.profile and run == args.repeat - 1:
            import cProfile

            prof = cProfile.Profile(time.process_time)
            prof.enable()
        t, c, k, us = time.perf_counter(), time.process_time(), _children_cpu(), _user_system()
        out = publish_night(folder, args.db, args.input, keys, scope, partial, settings.reader_memory, settings)
        wall, cpu, kids = time.perf_counter() - t, time.process_time() - c, _children_cpu() - k
        user, system = (after - before for after, before in zip(_user_system(), us))
        if prof is not None:
            prof.disable()
            prof.dump_stats(str(args.profile))
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        linked = out["linked"]
        pages = sum(1 for _ in (folder / "investigations").rglob("index.html"))
        print(f"run {run + 1}: {wall:.2f} s wall, {cpu:.2f} CPU s here + {kids:.2f} CPU s in children "
              f"({out['findings'].height:,} findings, {len(linked.packs.written):,} packs, {pages} investigation pages, "
              f"{size / 1e6:.1f} MB; load average {os.getloadavg()[0]:.1f}); all together {user:.2f} user + "
              f"{system:.2f} system CPU s", flush=True)
        print("  parts (wall / CPU s): " + ", ".join(f"{name} {w:.2f}/{cp:.2f}" for name, (w, cp) in out.get("parts", {}).items()))
        print(f"  packs {linked.packs.seconds:.2f} s wall, {linked.packs.cpu_seconds:.2f} CPU s here; "
              f"investigation pages {linked.investigation_seconds:.2f} s wall, {getattr(linked, 'investigation_cpu', float('nan')):.2f} CPU s",
              flush=True)
        if args.keep and run == args.repeat - 1:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.move(str(folder), str(args.keep))
        else:
            shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
