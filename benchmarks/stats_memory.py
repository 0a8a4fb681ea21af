"""The statistics step's memory and CPU on an audited database (issue 13's 3 GB goal, the step issue 11 built).

Runs ``pipelines.stats.run.statistics_step`` on a database (read-only: the step only reads) for its nights, and
prints the process's peak resident memory (``getrusage``'s ``ru_maxrss``, and a sampler of ``/proc/self/statm``
every 0.1 s that names the phase it saw the peak in), its CPU seconds, and with ``--frames`` the sizes of the
frames one whole day's read and summaries hold. Nothing is written.

    .venv/bin/python -m benchmarks.stats_memory --db night.duckdb [--chunk-rounds 50000] [--frames] [--write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import threading
import time
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * PAGE


class Sampler:
    """The highest resident memory seen every ``interval`` seconds, and the phase (``self.phase``) it was seen in."""

    def __init__(self, interval: float = 0.1):
        self.interval, self.peak, self.phase, self.peak_phase = interval, 0, "start", "start"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            now = rss()
            if now > self.peak:
                self.peak, self.peak_phase = now, self.phase

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB"


def frame_sizes(db: Path, day: dt.date) -> None:
    """The sizes of one whole day's read (``load_inputs``) and of its summaries."""
    import polars as pl

    from pipelines.db import open_bounded_reader
    from pipelines.stats.config import DEFAULT_PARAMS
    from pipelines.stats.load import load_inputs
    from pipelines.stats.summaries import summarise

    con = open_bounded_reader(db)
    try:
        t = time.process_time()
        inputs = load_inputs(con, day, day)
        print(f"read {day}: {time.process_time() - t:.1f} CPU s, rss {gb(rss())}")
        for name in ("wagers", "dealer_errors", "cards"):
            df: pl.DataFrame = getattr(inputs, name)
            print(f"  {name:14s} {df.height:>10,} rows {gb(df.estimated_size())}")
        t = time.process_time()
        s = summarise(inputs, DEFAULT_PARAMS, (day,))
        print(f"summaries: {time.process_time() - t:.1f} CPU s, rss {gb(rss())}")
        for name, df in s.frames().items():
            print(f"  {name:14s} {df.height:>10,} rows {gb(df.estimated_size())}")
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--night", type=dt.date.fromisoformat, action="append", help="default: every gaming day settled")
    ap.add_argument("--chunk-rounds", type=int, default=None, help="the step's bound on a chunk's rounds")
    ap.add_argument("--frames", action="store_true", help="the sizes of one whole day's frames instead of the step")
    ap.add_argument("--write", action="store_true", help="then write the outcomes (write_statistics: the database is written)")
    args = ap.parse_args()

    from pipelines.db import open_reader
    from pipelines.stats.load import gaming_days

    con = open_reader(args.db)
    try:
        nights = args.night or gaming_days(con)
        rounds = con.execute("SELECT gaming_day, count(*) FROM core_rounds GROUP BY 1 ORDER BY 2 DESC").fetchall()
    finally:
        con.close()
    print(f"{args.db.name}: nights {', '.join(map(str, nights))}; rounds per day {rounds}")
    if args.frames:
        frame_sizes(args.db, max(rounds, key=lambda r: r[1])[0])
        print(f"peak rss (ru_maxrss) {gb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)}")
        return

    import pipelines.stats.run as run

    base = rss()
    with Sampler() as sampler:
        def phased(name, f):  # the sampler names the phase it saw the peak in
            def call(*a, **k):
                sampler.phase = name
                try:
                    return f(*a, **k)
                finally:
                    print(f"  after {name}: resident {gb(rss())}, peak so far {gb(sampler.peak)} ({sampler.peak_phase})")
            return call

        run.summarise_days = phased("summaries", run.summarise_days)
        run.statistical_findings = phased("windows", run.statistical_findings)
        cpu, wall = time.process_time(), time.perf_counter()
        kwargs = {"chunk_rounds": args.chunk_rounds} if args.chunk_rounds else {}
        outcomes = run.statistics_step(args.db, nights, **kwargs)
        if args.write:
            phased("write", run.write_statistics)(args.db, outcomes)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    findings = sum(o.findings.height for o in outcomes)
    tests = sum(o.tests.height for o in outcomes)
    print(f"statistics_step: {cpu:.1f} CPU s, {wall:.1f} s wall (load average {os.getloadavg()[0]:.1f}); "
          f"{tests:,} tests, {findings:,} findings")
    print(f"resident before {gb(base)}; peak sampled {gb(sampler.peak)} (in {sampler.peak_phase}); "
          f"ru_maxrss {gb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)}")


if __name__ == "__main__":
    main()
