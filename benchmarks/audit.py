"""How fast the nightly audit runs on a simulated night: prints figures, asserts nothing.

    .venv/bin/python -m benchmarks.audit                       # a 1,000,000-round night (simulated once, cached)
    .venv/bin/python -m benchmarks.audit --input night/        # an existing night
    .venv/bin/python -m benchmarks.audit --rounds 100000       # a smaller one
    .venv/bin/python -m benchmarks.audit --rounds 300000 --game-shares baccarat=40,holdem_bonus=40,blackjack=20  # a mixed night
    .venv/bin/python -m benchmarks.audit --stages-of audit.duckdb   # the stages after ingest, on a loaded database

Measured in the same run, on the same files:

1. the bare DuckDB load: every shoe_*.csv and rounds_*.jsonl read into two tables with DuckDB's own
   readers and type inference, no ``union_by_name``, no validation, the files warm in the page cache,
   best of three (the floor any loader is compared with);
2. the end-to-end ``pitaudit audit`` (a child process, as a user runs it: ingest with validation,
   reconstruct, re-settle, detect, write, publish; Prefect's embedded server included), its wall time,
   its stages, and its peak memory (the process and its workers together, sampled); then the same on a
   local Dask cluster of two worker processes (``--dask local``; ``--no-dask`` skips it);
3. the re-settlement throughput per game (rounds/s): reconstruct + re-settle, the audit's own
   functions over the partitions of the database step 2 wrote, one game at a time, in this process.

Goals (issue 13): end-to-end within 3x the bare load, peak memory under 3 GB, the Dask run within 1.3x of
the process-pool run, re-settlement at least 100,000 rounds a second per core for every game.

``--stages-of DB`` measures only what follows the ingest, on a database an audit already loaded: the
flow's steps (load, reconstruct, re-settle, detect, stage) one group after another in this process,
per game, in CPU seconds (steadier than wall time on a busy machine; the engines run in this process,
no pool) and wall seconds, then the write and publish steps. The outputs go to a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CACHE = Path(tempfile.gettempdir()) / "pitaudit-bench"


def _night(args) -> Path:
    if args.input:
        return Path(args.input)
    mix = f"-{args.game_shares.replace('=', '').replace(',', '-')}" if args.game_shares else ""
    folder = CACHE / f"night-{args.rounds}-{args.seed}{mix}"
    if (folder / "ground_truth.csv").exists():
        return folder
    # ~1,050 rounds a table-day fit in 18 hours in the usual mix; a mix of slower games sizes its own floor
    tables = args.tables or (0 if args.game_shares else max(24, -(-args.rounds // 1050)))
    print(f"simulating {args.rounds:,} rounds on {tables or 'enough'} tables into {folder} (once; cached) ...", flush=True)
    t = time.perf_counter()
    subprocess.run([*_cli(), "simulate", "--out", str(folder), "--rounds", str(args.rounds), "--tables", str(tables),
                    "--seed", str(args.seed), *(["--game-shares", args.game_shares] if args.game_shares else [])],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"  simulated in {time.perf_counter() - t:.0f} s", flush=True)
    return folder


def _cli() -> list[str]:
    """``pitaudit`` as ``python -m pipelines.cli``: the child imports the code of the tree the benchmark runs from
    (the current folder first on its path). The ``pitaudit`` script would import the editable install's tree
    whatever the folder, so an older commit's ``git archive`` beside the same ``.venv`` would time today's code."""
    return [sys.executable, "-m", "pipelines.cli"]


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file() and re.match(r"^(shoe_.*\.csv|rounds_.*\.jsonl)$", p.name)]
    return len(files), sum(p.stat().st_size for p in files)


def warm(folder: Path) -> None:
    """Read every input file once, so that each measured run finds them in the page cache alike."""
    for path in folder.rglob("*"):
        if path.is_file() and re.match(r"^(shoe_.*\.csv|rounds_.*\.jsonl)$", path.name):
            with path.open("rb") as fh:
                while fh.read(1 << 24):
                    pass


def bare_load(folder: Path, work: Path, runs: int = 3) -> float:
    """DuckDB's plainest load of the same bytes: ``read_csv`` and ``read_json`` into two tables of a database file,
    types inferred by DuckDB, no ``union_by_name`` (which samples every file's schema first and tripled the time),
    no checks, no canonical tables; the best of ``runs`` (the files warm in the page cache). ``ignore_errors`` only
    so that the planted malformed lines do not stop it."""
    import duckdb

    warm(folder)
    best = float("inf")
    for _ in range(runs):
        db = work / "bare.duckdb"
        db.unlink(missing_ok=True)
        t = time.perf_counter()
        con = duckdb.connect(str(db))
        con.execute(f"CREATE TABLE raw_events AS SELECT * FROM read_csv('{folder.as_posix()}/**/shoe_*.csv', "
                    "ignore_errors = true)")
        con.execute(f"CREATE TABLE raw_rounds AS SELECT * FROM read_json('{folder.as_posix()}/**/rounds_*.jsonl', "
                    "format = 'newline_delimited', ignore_errors = true)")
        n = con.execute("SELECT (SELECT count(*) FROM raw_events), (SELECT count(*) FROM raw_rounds)").fetchone()
        con.close()
        best = min(best, time.perf_counter() - t)
        db.unlink(missing_ok=True)
    print(f"bare DuckDB load: {n[0]:,} device lines and {n[1]:,} round lines in {best:.1f} s (best of {runs})")
    return best


def end_to_end(folder: Path, work: Path, extra: tuple[str, ...] = (), name: str = "",
               env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """``pitaudit audit`` as a child process: wall time, peak resident memory (GB), its stage timings.

    The peak is the highest sum over the process and its workers sampled together (benchmarks.tree_memory),
    with the largest single process beside it. ``extra``: more arguments (``--dask local``); ``name``: a sub-folder
    of ``work`` for this run's database and outputs; ``env``: more environment variables for the child."""
    from benchmarks.tree_memory import TreePeak

    env = dict(os.environ, PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1", **(env or {}))
    where = work / name if name else work
    where.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        [*_cli(), "audit", "--input", str(folder), "--db", str(where / "audit.duckdb"), "--out", str(where / "out"),
         *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    with TreePeak(proc.pid) as tree:
        stdout, stderr = proc.communicate()
    elapsed = time.perf_counter() - t
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of the child and of every descendant it waited for (its workers): steadier than wall on a busy machine
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    largest = cpu1.ru_maxrss / 1024 / 1024  # KiB -> GiB
    peak = max(tree.bytes / 2**30, largest)
    if proc.returncode != 0:
        print(stdout[-2000:], stderr[-4000:], sep="\n")
        raise SystemExit(f"pitaudit audit failed with status {proc.returncode}")
    stages = next((line for line in reversed(stderr.splitlines()) if re.match(r"audit: ingest", line)), "")
    print(f"pitaudit audit {' '.join(extra)} end to end: {elapsed:.1f} s ({cpu:.1f} CPU s), peak memory {peak:.2f} GB (the process and its workers "
          f"together, PSS; largest single process {largest:.2f} GB RSS)")
    print(f"  at the peak, GB: {tree.describe()}")
    print("  " + stages.replace("audit: ", "stages: "))
    for line in stdout.strip().splitlines():
        print("  " + line)
    return elapsed, peak, stages


def throughput(db: Path) -> None:
    """Reconstruct + re-settle, per game, in groups of about 62,500 rounds (kept from earlier sessions so that the
    figures compare), with the audit's own functions, in this process (Blackjack on the engine's own pool)."""
    import polars as pl

    from pipelines.audit.load import contiguous_groups, load_partition, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import reconstruct_partition, settle_partition
    from pipelines.db import open_reader

    params = AuditParams(workers=os.cpu_count() or 1)
    con = open_reader(db)
    try:
        keys = partition_keys(con, params)
        games = con.sql("SELECT DISTINCT table_id, game FROM core_rounds").pl()
    finally:
        con.close()
    keys = keys.join(games, on="table_id", how="left")
    print("re-settlement throughput (reconstruct + re-settle, groups of ~62,500 rounds; "
          f"blackjack on {params.workers} processes):")
    total_r = total_s = 0.0
    for game in sorted(keys["game"].drop_nulls().unique().to_list()):
        of_game = keys.filter(pl.col("game") == game)
        plan = contiguous_groups(of_game, max(1, -(-int(of_game["rounds"].sum()) // 62_500)))
        n = wagers = 0
        elapsed = load_s = 0.0
        for group in plan:
            con = open_reader(db)
            t = time.perf_counter()
            try:
                part = load_partition(con, group, params)
            finally:
                con.close()
            load_s += time.perf_counter() - t
            t = time.perf_counter()
            recon = reconstruct_partition(part, params)
            settle_partition(part, recon, params)
            elapsed += time.perf_counter() - t
            n += part.rounds.height
            wagers += part.wagers.height
            del part, recon
        total_r += n
        total_s += elapsed
        print(f"  {game:13} {n:>9,} rounds, {wagers:>9,} wagers: {elapsed:7.1f} s = {n / elapsed:>9,.0f} rounds/s"
              f"  (loading them: {load_s:.1f} s)")
    print(f"  {'all':13} {int(total_r):>9,} rounds: {total_s:7.1f} s = {total_r / total_s:>9,.0f} rounds/s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    print(f"  peak memory of this process: {peak:.2f} GB")


def stages(db: Path, groups_of: int = 25_000) -> None:
    """The post-ingest stages of the flow, one after another (see the module docstring)."""
    import polars as pl

    from pipelines.audit.detectors.gaps import detect_gaps
    from pipelines.audit.load import contiguous_groups, load_gap_evidence, load_partition, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import detect_in_partition, reconstruct_partition, settle_partition, summarise
    from pipelines.audit.publish import clear_stage, export_settlements, stage, write_database
    from pipelines.db import open_reader

    try:  # what the flow does for its run (absent before the collector was tuned)
        from pipelines.audit.collector import tune_gc

        tune_gc()
    except ImportError:
        pass
    params = AuditParams(workers=1)  # every engine in this process: its CPU time counts it all
    cpu: dict[str, float] = {}
    wall: dict[str, float] = {}

    def timed(name: str, fn, *args):
        c, w = time.process_time(), time.perf_counter()
        out = fn(*args)
        cpu[name] = cpu.get(name, 0.0) + time.process_time() - c
        wall[name] = wall.get(name, 0.0) + time.perf_counter() - w
        return out

    def read(fn, *args):
        con = open_reader(db)
        try:
            return fn(con, *args)
        finally:
            con.close()

    keys = read(partition_keys, params)
    games = read(lambda con: con.sql("SELECT DISTINCT table_id, game FROM core_rounds").pl())
    keys = keys.join(games, on="table_id", how="left")
    work = Path(tempfile.mkdtemp(prefix="pitaudit-stages-"))
    try:
        timed("gaps", lambda: detect_gaps(*read(load_gap_evidence, params)))
        index = 0
        all_keys = []
        for game in sorted(keys["game"].drop_nulls().unique().to_list()):
            of_game = keys.filter(pl.col("game") == game)
            for group in contiguous_groups(of_game, max(1, -(-int(of_game["rounds"].sum()) // groups_of))):
                all_keys += list(group)
                part = timed(f"{game} load", read, load_partition, group, params)
                recon = timed(f"{game} reconstruct", reconstruct_partition, part, params)
                settled = timed(f"{game} re-settle", settle_partition, part, recon, params)
                result = timed(f"{game} detect", lambda: summarise(part, recon, settled, detect_in_partition(recon, settled, params)))
                timed(f"{game} stage", stage, work / "stage", index, result.findings, result.settlements)
                index += 1
        # write and publish into a copy of the database (the original is left as it was)
        copy = work / "copy.duckdb"
        shutil.copyfile(db, copy)
        timed("write", write_database, copy, sorted(set(all_keys)), work / "stage")
        partial = timed("export settlements (beside write)", export_settlements, work / "stage", work / "out")
        clear_stage(work / "stage")
        timed("publish", _publish, copy, sorted(set(all_keys)), work / "out", partial)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"post-ingest stages on {db} (one process, no pool, groups of ~{groups_of:,} rounds):")
    for name in cpu:
        print(f"  {name:24} {cpu[name]:7.2f} CPU s {wall[name]:7.2f} s")
    for step in ("load", "reconstruct", "re-settle", "detect", "stage"):
        c = sum(v for k, v in cpu.items() if k.endswith(" " + step))
        w = sum(v for k, v in wall.items() if k.endswith(" " + step))
        print(f"  {'all games ' + step:24} {c:7.2f} CPU s {w:7.2f} s")
    print(f"  {'total':24} {sum(cpu.values()):7.2f} CPU s {sum(wall.values()):7.2f} s")


def _publish(db: Path, keys, out: Path, partial: Path) -> None:
    """The publish step of the flow over the written copy: every gaming day of ``keys``, the input folder the
    database recorded (the report lists its files)."""
    from pipelines.audit.scope import Scope
    from pipelines.audit.tasks import publish_task
    from pipelines.db import open_reader

    con = open_reader(db)
    try:
        roots = con.execute("SELECT min(input_root) FROM core_source_files").fetchone()
    finally:
        con.close()
    input_dir = Path(roots[0]) if roots and roots[0] else out
    out.mkdir(parents=True, exist_ok=True)
    publish_task.fn(out, db, input_dir, keys, Scope(tuple(sorted({k[0] for k in keys}))), partial)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", help="an existing night (shoe_*.csv, rounds_*.jsonl); default: simulate one")
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--tables", type=int, default=0, help="tables for the simulated night (default: sized from the rounds)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--game-shares", metavar="GAME=SHARE,...", default=None,
                    help="simulate a night with these shares of rounds per game (pitaudit simulate --game-shares), "
                         "e.g. baccarat=40,holdem_bonus=40,blackjack=20 (issue 13's mixed night)")
    ap.add_argument("--keep", action="store_true", help="keep the databases and outputs (printed)")
    ap.add_argument("--no-dask", action="store_true", help="skip the run on a local Dask cluster")
    ap.add_argument("--no-throughput", action="store_true", help="skip the per-game re-settlement throughput section")
    ap.add_argument("--stages-of", metavar="DB", help="only the stages after ingest, on a database an audit loaded")
    args = ap.parse_args(argv)
    if args.stages_of:
        stages(Path(args.stages_of))
        return

    folder = _night(args)
    n_files, n_bytes = _size(folder)
    print(f"night: {folder} ({n_files} files, {n_bytes / 1e9:.2f} GB); {os.cpu_count()} cores")
    work = Path(tempfile.mkdtemp(prefix="pitaudit-bench-"))
    try:
        bare = bare_load(folder, work)
        (work / "bare.duckdb").unlink(missing_ok=True)
        e2e, peak, _ = end_to_end(folder, work)
        print(f"end to end / bare load: {e2e / bare:.2f}x (goal: within 3x); end to end {e2e:.1f} s; "
              f"peak {peak:.2f} GB (goal: under 3 GB)")
        if not args.no_dask:
            # the same night on a local Dask cluster of two worker processes (prefect-dask), into a database of its own
            dask_s, dask_peak, _ = end_to_end(folder, work, ("--dask", "local"), name="dask",
                                              env={"PITAUDIT_AUDIT_PROCESSES": "2"})
            print(f"Dask (local cluster, 2 worker processes) / default run: {dask_s / e2e:.2f}x (goal: within 1.3x of "
                  f"the process-pool run); peak {dask_peak:.2f} GB")
            shutil.rmtree(work / "dask", ignore_errors=True)
        if not args.no_throughput:
            throughput(work / "audit.duckdb")
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
