"""Baccarat as the audit runs it, frames in to frames out, in CPU seconds: is it 100,000 rounds a second per core?

    .venv/bin/python -m benchmarks.baccarat_pass --db night.duckdb     # a night an audit or ingest loaded
    .venv/bin/python -m benchmarks.baccarat_pass --db night.duckdb --profile

The night's baccarat partitions are loaded with the audit's own query (``load_partition``, in groups of about
25,000 rounds, as ``benchmarks.audit --stages-of`` does) and kept in memory. Then, in this process, best of
``--repeat`` passes, in CPU seconds of the whole process (polars' and DuckDB's threads included; the machine
may be shared, CPU time is the steadier figure), it prints rounds per CPU-second of:

- ``engine_pass`` alone (``rulebook.baccarat.vector`` and its frames, ``engine_pass._baccarat_vector``);
- reconstruct + re-settle (``reconstruct_partition`` + ``settle_partition``: the cards from the device events,
  the rule set per round, both engine passes, limits and the differential, the published columns), the
  re-settlement the issue's goal names;
- and with the checks (``detect_in_partition`` + ``summarise``).

The load from DuckDB is printed apart (it is the group's read, not the game's arithmetic).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a DuckDB file an audit or `pitaudit ingest` loaded")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="then print the 30 costliest calls of one pass")
    args = ap.parse_args(argv)

    import polars as pl

    from pipelines.audit import settle as S
    from pipelines.audit.collector import tune_gc
    from pipelines.audit.load import contiguous_groups, load_partition, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import detect_in_partition, reconstruct_partition, settle_partition, summarise
    from pipelines.db import open_reader

    tune_gc()  # as the audit's run does
    params = AuditParams(workers=1)
    con = open_reader(Path(args.db))
    try:
        keys = partition_keys(con, params)
        games = con.sql("SELECT DISTINCT table_id, game FROM core_rounds").pl()
        keys = keys.join(games, on="table_id").filter(pl.col("game") == "baccarat")
        plan = contiguous_groups(keys, max(1, -(-int(keys["rounds"].sum()) // 25_000)))
        t = time.process_time()
        parts = [load_partition(con, group, params) for group in plan]
        load_s = time.process_time() - t
    finally:
        con.close()
    rounds = sum(p.rounds.height for p in parts)
    wagers = sum(p.wagers.height for p in parts)
    engine_calls: list[float] = []
    real_pass = S.engine_pass

    def timed_pass(*a, **k):
        t0 = time.process_time()
        try:
            return real_pass(*a, **k)
        finally:
            engine_calls.append(time.process_time() - t0)

    def one_pass() -> tuple[float, float, float, float]:
        engine_calls.clear()
        recon_s = settle_s = detect_s = 0.0
        for part in parts:
            t0 = time.process_time()
            recon = reconstruct_partition(part, params)
            t1 = time.process_time()
            settled = settle_partition(part, recon, params)
            t2 = time.process_time()
            summarise(part, recon, settled, detect_in_partition(recon, settled, params))
            t3 = time.process_time()
            recon_s, settle_s, detect_s = recon_s + t1 - t0, settle_s + t2 - t1, detect_s + t3 - t2
        return sum(engine_calls), recon_s, settle_s, detect_s

    S.engine_pass = timed_pass
    try:
        one_pass()  # warm (rule sets, lookup tables)
        best = min((one_pass() for _ in range(args.repeat)), key=lambda r: r[1] + r[2])
        if args.profile:
            prof = cProfile.Profile(time.process_time)
            prof.enable()
            one_pass()
            prof.disable()
    finally:
        S.engine_pass = real_pass
    engine_s, recon_s, settle_s, detect_s = best
    print(f"baccarat: {rounds:,} rounds, {wagers:,} wagers in {len(parts)} group(s); CPU seconds, best of {args.repeat}")
    print(f"  load (DuckDB, apart)              {load_s:6.2f} CPU s  {rounds / load_s:>10,.0f} rounds/CPU-s")
    print(f"  engine_pass (both passes)         {engine_s:6.2f} CPU s  {rounds / engine_s:>10,.0f} rounds/CPU-s")
    print(f"  reconstruct + re-settle           {recon_s + settle_s:6.2f} CPU s  "
          f"{rounds / (recon_s + settle_s):>10,.0f} rounds/CPU-s  (goal: 100,000)")
    print(f"  ... and detect                    {recon_s + settle_s + detect_s:6.2f} CPU s  "
          f"{rounds / (recon_s + settle_s + detect_s):>10,.0f} rounds/CPU-s")
    if args.profile:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
