"""Benchmark: writing the evidence packs of a night's finding rounds, as the audit does beside its report.

    .venv/bin/python -m benchmarks.packs --db night.duckdb            # an audited database
    .venv/bin/python -m benchmarks.packs --rounds 40000               # simulate (5 % faults) and audit a night first
    .venv/bin/python -m benchmarks.packs --db night.duckdb --bound 2000 --per-group 50000 --parts   # as the audit, by part

Times :func:`pipelines.evidence.batch.write_packs` over every audited partition of the database, with no
bound (every round with a deterministic finding gets its pack) unless ``--bound N`` (the audit's default is 2,000), in wall and CPU seconds of this process (and of its pack workers, ``--workers``),
per 1,000 packs; the packs' size on disk; then checks every pack with ``verify_pack`` (not timed).
``--parts`` (one process) also prints the CPU seconds of each part (loading, reconstructing and settling the chosen
rounds; assembling each round's evidence and, inside it, its neighbours and source files; the page; the seal and the
files) and the process's user and system CPU apart: writing 8,000 files is system time, which a shared disk moves a
lot from run to run. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def audited_night(rounds: int, work: Path) -> Path:
    """Simulate a night of ``rounds`` with 5 % planted faults and audit it (no packs: they are timed here)."""
    night, db = work / "night", work / "night.duckdb"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PITAUDIT_EVIDENCE_PACKS": "0", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    subprocess.run([str(bin_dir / "pitaudit"), "simulate", "--out", str(night), "--rounds", str(rounds),
                    "--fault-rate", "0.05"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run([str(bin_dir / "pitaudit"), "audit", "--input", str(night), "--db", str(db), "--out",
                    str(work / "out")], check=True, env=env, stdout=subprocess.DEVNULL)
    return db


PARTS = {  # module -> the functions timed, by the name the packs' code calls them through
    "pipelines.evidence.batch": ("_frames_of_group", "load_partition", "reconstruct_partition", "settle", "assemble_round",
                                 "_as_audited", "_as_audited_all", "_by_round", "PrefetchedRecord", "_read_source_lines",
                                 "seal_pack"),
    "pipelines.evidence.gather": ("_neighbours", "source_files", "_settle_one", "card_rows"),
    "pipelines.evidence.pack": ("render_html", "render_json"),
}


def _time_parts() -> dict[str, float]:
    """Wrap the packs' parts (:data:`PARTS`, those the code has) with CPU timers; their totals, filled as they run."""
    import importlib

    spent: dict[str, float] = {}
    for module_name, names in PARTS.items():
        module = importlib.import_module(module_name)
        for name in names:
            if not hasattr(module, name):
                continue
            fn = getattr(module, name)

            @functools.wraps(fn)
            def timed(*a, _fn=fn, _name=name, **k):
                c = time.process_time()
                try:
                    return _fn(*a, **k)
                finally:
                    spent[_name] = spent.get(_name, 0.0) + time.process_time() - c

            setattr(module, name, timed)
    return spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, default=None, help="an audited database (default: simulate and audit one)")
    ap.add_argument("--rounds", type=int, default=40_000, help="without --db: the rounds of the night to simulate")
    ap.add_argument("--bound", type=int, default=10**9,
                    help="write at most this many packs, worst rounds first (the audit's PITAUDIT_EVIDENCE_PACKS: 2000); "
                         "default: every finding round")
    ap.add_argument("--workers", type=int, default=1, help="write the packs on this many worker processes (the audit: "
                    "one per core)")
    ap.add_argument("--per-group", type=int, default=None, help="rounds of the partitions loaded together (the audit: "
                    "PITAUDIT_GROUP_ROUNDS, 50,000; default: write_packs' own)")
    ap.add_argument("--parts", action="store_true", help="print each part's CPU seconds (one process)")
    ap.add_argument("--profile", type=Path, default=None, help="write a cProfile (CPU time) of the packs' writing here")
    ap.add_argument("--keep", type=Path, default=None, help="write the packs here (default: a temporary folder)")
    args = ap.parse_args()

    from pipelines.db import open_reader
    from pipelines.evidence.batch import write_packs
    from pipelines.evidence.manifest import verify_pack

    work = Path(tempfile.mkdtemp(prefix="pitaudit-bench-packs-"))
    db = args.db or audited_night(args.rounds, work)
    out = args.keep or work / "packs"
    shutil.rmtree(out, ignore_errors=True)
    con = open_reader(db)
    try:
        keys = [tuple(r) for r in con.execute("SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()]
        rounds = con.execute("SELECT count(*) FROM core_rounds").fetchall()[0][0]
        import cProfile

        prof = cProfile.Profile(time.process_time) if args.profile else None
        t, c = time.perf_counter(), time.process_time()
        if prof:
            prof.enable()
        from pipelines.evidence.batch import PackPool

        pool = PackPool(db, args.workers, min_packs=1) if args.workers > 1 else None
        parts = _time_parts() if args.parts else {}
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        extra = {} if args.per_group is None else {"per_group": args.per_group}
        index = write_packs(con, keys, out, bound=args.bound, database=str(db), pool=pool, **extra)
        self_after = resource.getrusage(resource.RUSAGE_SELF)
        if prof:
            prof.disable()
            prof.dump_stats(str(args.profile))

        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, cpu = time.perf_counter() - t, time.process_time() - c + kids.ru_utime + kids.ru_stime
    finally:
        con.close()
    n = len(index.written)
    files = [p for p in out.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(f"night: {rounds:,} rounds, {len(keys):,} partitions; {index.rounds:,} rounds with a deterministic finding")
    print(f"packs: {n:,} written ({len(files):,} files, {size / 1e6:.1f} MB, {size / max(n, 1) / 1e3:.1f} kB a pack); "
          f"{len(index.errors)} could not be made")
    print(f"time: {wall:.1f} s wall, {cpu:.1f} s CPU (this process and its workers) -> {1000 * wall / max(n, 1):.1f} s wall, "
          f"{1000 * cpu / max(n, 1):.1f} s CPU per 1,000 packs (the machine may be shared: CPU is the steadier figure)")
    if parts:
        print(f"this process: {self_after.ru_utime - self_before.ru_utime:.2f} user + "
              f"{self_after.ru_stime - self_before.ru_stime:.2f} system CPU s; parts (CPU s, nested parts inside their caller):")
        for name, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
            print(f"  {name:28} {seconds:7.2f}")
    t = time.perf_counter()
    bad = [p for p in sorted(out.glob("evidence/*/*")) if not verify_pack(p).ok]
    print(f"verified: {n - len(bad):,} of {n:,} packs ({time.perf_counter() - t:.1f} s)")
    if not args.keep or args.db:  # with --db, the work folder holds nothing of what --keep keeps
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
