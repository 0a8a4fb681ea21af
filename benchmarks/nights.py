"""Night after night: does tonight's audit slow down as the database's history grows?

Simulates ``--nights + 1`` consecutive nights (one simulation: the tables' counters run on from night to night),
exports each into a folder of its own under the same file names, audits nights 1..N one after the other into
one database (printing each night's time: the curve should be flat), then audits night N+1 into a copy of that
database and into an empty one, alternately, ``--repeat`` times, and prints the two side by side (the goal:
within 1.2x). Each timing is the audit flow only (ingest to published files and snapshot), in this process,
with one embedded Prefect server started before the timings; wall seconds, this process's CPU seconds, and those
with the CPU of the worker processes the audit started and ended (its groups' and packs' workers; the pages'
second half is a thread of this process; the embedded server, alive throughout, is in neither), and the load
average after each run (the machine may be shared: CPU seconds are the steadier figure); then each stage's CPU seconds
(``StageClock``: ingest; scope, partition keys and fingerprints; the audit's groups and gaps; write; statistics;
publish, with the packs' workers' beside it; snapshot), to say what grows with the history and what does not.

    .venv/bin/python -m benchmarks.nights                       # 30 nights of 20,000 rounds, then night 31
    .venv/bin/python -m benchmarks.nights --nights 10 --rounds 5000
    .venv/bin/python -m benchmarks.nights --exports DIR   # the export-<day> folders of an earlier --keep run
    .venv/bin/python -m benchmarks.nights --exports DIR --history DIR/history.duckdb   # night N+1 only, against
                                                          # that run's audited nights 1..N (copied, never written)

The statistics step's own time is printed beside each night (``stats s``, wall; it is in the audit's time).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

FIRST = dt.date(2026, 11, 1)


def split_nights(simulated: Path, root: Path, days: list[dt.date]) -> list[Path]:
    folders = []
    for day in days:
        folder = root / f"export-{day.isoformat()}"
        folder.mkdir()
        for path in simulated.glob(f"*_{day.isoformat()}.*"):
            os.replace(path, folder / path.name.replace(f"_{day.isoformat()}", ""))
        folders.append(folder)
    return folders


def restate_last_night(db: Path) -> None:
    """Run the statistics task of the database's last night (and the day still in play after it) again, so that its
    windows' rows and basis are this code's (``pipelines.stats.reuse``: a history written by other code holds none)."""
    from pipelines.stats.load import gaming_days, open_days
    from pipelines.stats.run import statistics_step, write_statistics
    from pipelines.db import open_reader

    con = open_reader(db)
    try:
        days = gaming_days(con)
        nights = days[-2:] if len(days) > 1 and open_days(con, days[-1:]) else days[-1:]
    finally:
        con.close()
    write_statistics(db, statistics_step(db, nights))


def _children_cpu() -> float:
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


#: the flow's steps timed apart (``pipelines.audit.flow`` calls each by this name), under the names printed; the audit
#: stage (its groups and the gaps, on the task runner) is the rest of the flow's CPU
STAGE_TASKS = {"ingest_task": "ingest", "scope_task": "scope", "keys_task": "scope", "fingerprints_task": "scope",
               "write_database_task": "write", "statistics_task": "statistics", "publish_task": "publish",
               "snapshot_task": "snapshot"}


class StageClock:
    """CPU seconds of each step of the flow: this process's (every thread's: the pages' worker, the window hold's, the
    snapshot's copy run inside the step that starts them) and its child processes' that ended during it (the packs'
    workers in publish; the audit's group workers end after the write). Installed by wrapping the flow module's task
    names, so the flow runs as it does without it."""

    def __init__(self) -> None:
        self.cpu: dict[str, list[float]] = {}

    @contextmanager
    def installed(self):
        import pipelines.audit.flow as flow

        originals = {name: getattr(flow, name) for name in STAGE_TASKS}
        for name, task in originals.items():
            setattr(flow, name, self._timed(STAGE_TASKS[name], task))
        try:
            yield self
        finally:
            for name, task in originals.items():
                setattr(flow, name, task)

    def _timed(self, stage: str, task):
        def timed(*args, **kwargs):
            c, k = time.process_time(), _children_cpu()
            try:
                return task(*args, **kwargs)
            finally:
                mine = self.cpu.setdefault(stage, [0.0, 0.0])
                mine[0] += time.process_time() - c
                mine[1] += _children_cpu() - k
        return timed

    def line(self, cpu: float, kids: float) -> str:
        """Each stage's CPU s (+ its children's), the audit stage the flow's rest."""
        parts = dict(self.cpu)
        parts["audit"] = [cpu - sum(v[0] for v in parts.values()), kids - sum(v[1] for v in parts.values())]
        order = ["ingest", "scope", "audit", "write", "statistics", "publish", "snapshot"]
        return ", ".join(f"{name} {parts[name][0]:.2f}" + (f" (+{parts[name][1]:.2f})" if parts[name][1] >= 0.005 else "")
                         for name in order if name in parts)


def timed_audit(folder: Path, db: Path, out: Path) -> tuple[float, float, object, float, str]:
    """(wall s, this process's CPU s, the outcome, CPU s of the child processes that ended meanwhile, each stage's CPU s
    as a line: :class:`StageClock`)."""
    from pipelines.audit.flow import audit_flow

    clock = StageClock()
    with clock.installed():
        t, c, k = time.perf_counter(), time.process_time(), _children_cpu()
        outcome = audit_flow(str(folder), str(db), str(out))
        wall, cpu, kids = time.perf_counter() - t, time.process_time() - c, _children_cpu() - k
    return wall, cpu, outcome, kids, clock.line(cpu, kids)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=30, help="nights of history before the measured night")
    ap.add_argument("--rounds", type=int, default=20_000, help="rounds per night")
    ap.add_argument("--repeat", type=int, default=3, help="timings of the measured night, each way")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--keep", type=Path, default=None, help="work here and keep it (default: a temporary folder)")
    ap.add_argument("--exports", type=Path, default=None,
                    help="audit the export-<day> folders of an earlier --keep run instead of simulating (the same input)")
    ap.add_argument("--history", type=Path, default=None,
                    help="with --exports: the database of nights 1..N of that --keep run; time night N+1 against a copy "
                         "of it without auditing nights 1..N again (night N's statistics task is run again on the copy "
                         "first, untimed, so that it holds this code's windows)")
    args = ap.parse_args()
    if args.history is not None and (args.exports is None or not args.history.is_file()):
        raise SystemExit("--history needs --exports and an existing database of nights 1..N")

    from pipelines.audit.run import prefect_defaults

    prefect_defaults()
    from pipelines.audit.server import embedded_server
    from pipelines.simulate.run import run_simulation

    root = args.keep or Path(tempfile.mkdtemp(prefix="pitaudit-nights-"))
    root.mkdir(parents=True, exist_ok=True)
    days = [FIRST + dt.timedelta(days=i) for i in range(args.nights + 1)]
    t = time.perf_counter()
    if args.exports:
        folders = [args.exports / f"export-{day.isoformat()}" for day in days]
        missing = [f for f in folders if not f.is_dir()]
        if missing:
            raise SystemExit(f"no {missing[0]}: --exports needs the folders of a run with as many nights")
        print(f"auditing {'night ' + str(len(days)) if args.history else f'the {len(days)} nights'} exported in "
              f"{args.exports} ({root})", flush=True)
    else:
        run_simulation(root / "sim", rounds=args.rounds, days=len(days), seed=args.seed, start_day=FIRST, quiet=True)
        folders = split_nights(root / "sim", root, days)
        print(f"simulated {len(days)} nights of {args.rounds:,} rounds in {time.perf_counter() - t:.0f} s ({root})", flush=True)

    history = args.history or root / "history.duckdb"
    if args.history is not None:  # its last night's windows as this code writes them (untimed): a database audited
        history = root / "history.duckdb"  # night after night by this code holds them, and tonight carries rows over
        shutil.copyfile(args.history, history)
        restate_last_night(history)
    with embedded_server():
        if args.history is None:
            print(f"{'night':>5} {'gaming day':>10} {'wall s':>7} {'cpu s':>7} {'stats s':>7} {'db MB':>7}", flush=True)
        for i, folder in enumerate(folders[:-1] if args.history is None else [], start=1):
            wall, cpu, outcome, _, _ = timed_audit(folder, history, root / "out-history")
            print(f"{i:>5} {days[i - 1].isoformat():>10} {wall:>7.1f} {cpu:>7.1f} "
                  f"{outcome.timings.get('statistics', float('nan')):>7.1f} {history.stat().st_size / 2**20:>7.0f}", flush=True)
        tonight = folders[-1]
        grown, empty = [], []
        for r in range(args.repeat):
            for label in (("history", "empty") if r % 2 == 0 else ("empty", "history")):
                db = root / f"night-{label}.duckdb"
                for old in root.glob(f"night-{label}.*"):
                    (shutil.rmtree if old.is_dir() else os.remove)(old)
                if label == "history":
                    shutil.copyfile(history, db)
                wall, cpu, outcome, kids, stage_cpu = timed_audit(tonight, db, root / f"out-{label}")
                (grown if label == "history" else empty).append((wall, cpu, cpu + kids))
                stages = ", ".join(f"{k} {v:.1f}" for k, v in outcome.timings.items())
                print(f"night {len(days)} into the {label} database: {wall:.1f} s wall, {cpu:.1f} s CPU, {cpu + kids:.1f} "
                      f"with its workers ({outcome.rounds:,} rounds, {outcome.resettled} partitions re-settled; wall s: "
                      f"{stages}; load average {os.getloadavg()[0]:.1f})", flush=True)
                print(f"  CPU s by stage (+ its child processes'): {stage_cpu}", flush=True)
    gw, gc, gt = (statistics.median(r[i] for r in grown) for i in range(3))
    ew, ec, et = (statistics.median(r[i] for r in empty) for i in range(3))
    print()
    print(f"night {len(days)} ({args.rounds:,} rounds), median of {args.repeat}:")
    print(f"  into a database holding {args.nights} nights: {gw:6.1f} s wall {gc:6.1f} s CPU {gt:6.1f} s CPU with workers")
    print(f"  into an empty database:              {ew:6.1f} s wall {ec:6.1f} s CPU {et:6.1f} s CPU with workers")
    print(f"  ratio: {gw / ew:.2f}x wall, {gc / ec:.2f}x CPU, {gt / et:.2f}x CPU with workers (goal: within 1.2x)")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
