"""Benchmark: writing the evidence packs of a night's finding rounds, as the audit does beside its report.

    .venv/bin/python -m benchmarks.packs --db night.duckdb            # an audited database
    .venv/bin/python -m benchmarks.packs --rounds 40000               # simulate (5 % faults) and audit a night first

Times :func:`pipelines.evidence.batch.write_packs` over every audited partition of the database, with no
bound (every round with a deterministic finding gets its pack) unless ``--bound N`` (the audit's default is 2,000), in wall and CPU seconds of this process (and of its pack workers, ``--workers``),
per 1,000 packs; the packs' size on disk; then checks every pack with ``verify_pack`` (not timed).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, default=None, help="an audited database (default: simulate and audit one)")
    ap.add_argument("--rounds", type=int, default=40_000, help="without --db: the rounds of the night to simulate")
    ap.add_argument("--bound", type=int, default=10**9,
                    help="write at most this many packs, worst rounds first (the audit's PITAUDIT_EVIDENCE_PACKS: 2000); "
                         "default: every finding round")
    ap.add_argument("--workers", type=int, default=1, help="write the packs on this many worker processes (the audit: "
                    "one per core)")
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
        index = write_packs(con, keys, out, bound=args.bound, database=str(db), pool=pool)
        if prof:
            prof.disable()
            prof.dump_stats(str(args.profile))
        import resource

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
    t = time.perf_counter()
    bad = [p for p in sorted(out.glob("evidence/*/*")) if not verify_pack(p).ok]
    print(f"verified: {n - len(bad):,} of {n:,} packs ({time.perf_counter() - t:.1f} s)")
    if not args.keep or args.db:  # with --db, the work folder holds nothing of what --keep keeps
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
