"""Simulator speed: a 1,000,000-round night (the workhorse of every other benchmark).

Prints wall time, rounds per second, the CPU cost per round of each game (measured on the tables
that deal it), the planning time, and the size of the files written. Run:

    .venv/bin/python -m benchmarks.simulate                    # 1,000,000 rounds, all cores
    .venv/bin/python -m benchmarks.simulate --rounds 200000 --workers 2 --keep out/night

The target (issue 3) is under two minutes for 1,000,000 rounds on two cores. Nothing here is
asserted: the figures are printed, for the report and for comparison between commits.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from pipelines.simulate.config import SimConfig
from pipelines.simulate.plan import make_plan
from pipelines.simulate.run import run_simulation


def _sizes(folder: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for p in folder.iterdir():
        kind = "shoe_*.csv" if p.name.startswith("shoe_") else "rounds_*.jsonl" if p.name.startswith("rounds_") else p.name
        n, b = out.get(kind, (0, 0))
        out[kind] = (n + 1, b + p.stat().st_size)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fault-rate", type=float, default=0.01)
    ap.add_argument("--workers", type=int, default=0, help="0 = one per core")
    ap.add_argument("--keep", type=Path, default=None, help="write here and keep the night (default: a temp dir, removed)")
    args = ap.parse_args()

    t = time.perf_counter()
    plan = make_plan(SimConfig(out="-", rounds=args.rounds, seed=args.seed, fault_rate=args.fault_rate))
    plan_s = time.perf_counter() - t
    del plan

    out = args.keep or Path(tempfile.mkdtemp(prefix="pitaudit-bench-sim-"))
    try:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        s = run_simulation(out, rounds=args.rounds, seed=args.seed, fault_rate=args.fault_rate, workers=args.workers,
                           overwrite=True, quiet=True)
        sizes = _sizes(out)
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)
    workers = args.workers or os.cpu_count()
    print(f"simulate: {s.rounds:,} rounds on {s.tables} tables, {workers} worker(s), load average {load:.1f} at start")
    print(f"  wall {s.seconds:.1f} s  ->  {s.rounds / s.seconds:,.0f} rounds/s (plan alone {plan_s:.1f} s)")
    total_cpu = 0.0
    for game, (n, cpu) in sorted(s.by_game.items()):
        total_cpu += cpu
        print(f"  {game:13s} {n:>9,} rounds ({n / s.rounds:5.1%})  {cpu:7.1f} s CPU  {cpu / max(n, 1) * 1e6:6.0f} us/round")
    print(f"  tables' CPU {total_cpu:.1f} s over {s.seconds:.1f} s wall")
    print(f"  {s.events:,} device events; ground truth {s.truth_rows:,} rows")
    total = 0
    for kind, (n, b) in sorted(sizes.items()):
        total += b
        print(f"  {kind:16s} {n:>5} file(s) {b / 1e6:9.1f} MB")
    print(f"  total {total / 1e6:.1f} MB ({total / max(s.rounds, 1):.0f} bytes/round)")


if __name__ == "__main__":
    main()
