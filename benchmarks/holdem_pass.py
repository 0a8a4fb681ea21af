"""Hold'em re-settlement as the audit calls it: the context, wager and action frames to the result frames.

    .venv/bin/python -m benchmarks.holdem_pass --db night.duckdb       # a night an audit or ingest loaded
    .venv/bin/python -m benchmarks.holdem_pass --rounds 200000         # simulate and ingest one first (cached)
    .venv/bin/python -m benchmarks.holdem_pass --db night.duckdb --profile
    .venv/bin/python -m benchmarks.holdem_pass --db night.duckdb --copies 4   # a partition four times the size

The Hold'em partitions of the night are loaded and reconstructed with the audit's own functions, and the
frames ``settle`` hands to ``engine_pass`` are kept. Then, in this process, in CPU seconds (best of
``--repeat``; the machine may be shared, CPU time is the steadier figure), it prints rounds per CPU-second of:

- ``engine_pass`` as the audit runs it (``pipelines/audit/holdem_pass.py``, the column path, and the scalar
  engine for the rounds it hands over);
- the path before it (``engine_pass._scalar`` per rule-set version: a ``RoundInput`` per round, then
  ``rulebook.holdem_bonus.vector.settle_many``);

and how many rounds the scalar engine still settles, and why (what its results say of them).
The goal (issue 13): at least 100,000 rounds a second per core.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

CACHE = Path(tempfile.gettempdir()) / "pitaudit-bench"


def _database(args) -> Path:
    if args.db:
        return Path(args.db)
    night = CACHE / f"night-{args.rounds}-{args.seed}"
    db = CACHE / f"holdem-{args.rounds}-{args.seed}.duckdb"
    if db.exists():
        return db
    cli = str(Path(sys.executable).with_name("pitaudit"))
    if not (night / "ground_truth.csv").exists():
        print(f"simulating {args.rounds:,} rounds into {night} (once; cached) ...", flush=True)
        subprocess.run([cli, "simulate", "--out", str(night), "--rounds", str(args.rounds), "--seed", str(args.seed)],
                       check=True, stdout=subprocess.DEVNULL)
    print(f"ingesting into {db} (once; cached) ...", flush=True)
    subprocess.run([cli, "ingest", "--input", str(night), "--db", str(db)], check=True, stdout=subprocess.DEVNULL)
    return db


def capture(db: Path) -> list[tuple]:
    """The (ctx, wagers, actions, amount column, rulesets, with_rounds) of every engine_pass the audit makes on
    the night's Hold'em partitions."""
    from pipelines.audit import settle as S
    from pipelines.audit.load import contiguous_groups, load_partition, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import reconstruct_partition
    from pipelines.db import open_reader

    params = AuditParams(workers=1)
    con = open_reader(db)
    try:
        keys = partition_keys(con, params)
        games = con.sql("SELECT DISTINCT table_id, game FROM core_rounds").pl()
    finally:
        con.close()
    keys = keys.join(games, on="table_id", how="left").filter(pl.col("game") == "holdem_bonus")
    calls: list[tuple] = []
    real = S.engine_pass

    def keep(ctx, wagers, actions, amount_col, rulesets, params, with_rounds=True):
        calls.append((ctx, wagers, actions, amount_col, rulesets, with_rounds))
        return real(ctx, wagers, actions, amount_col, rulesets, params, with_rounds)

    S.engine_pass = keep
    try:
        for group in contiguous_groups(keys, 1):
            con = open_reader(db)
            try:
                part = load_partition(con, group, params)
            finally:
                con.close()
            S.settle(reconstruct_partition(part, params), part.rounds, part.wagers, part.actions, params)
    finally:
        S.engine_pass = real
    return calls


def _before(ctx, wagers, actions, amount_col, rulesets, with_rounds):
    """The path before the column pass: per version, two joins, a RoundInput per round, settle_many."""
    from pipelines.audit.engine_pass import _scalar
    from pipelines.audit.params import AuditParams

    params = AuditParams(workers=1)
    for (key,), group in ctx.group_by(["ruleset_version"], maintain_order=True):
        keys = group.select("table_id", "round_no")
        w = wagers.join(keys, on=["table_id", "round_no"], how="semi")
        a = actions.join(keys, on=["table_id", "round_no"], how="semi")
        _scalar(group, w, a, amount_col, rulesets[key], params, with_rounds)


def _now(ctx, wagers, actions, amount_col, rulesets, with_rounds):
    from pipelines.audit.engine_pass import engine_pass
    from pipelines.audit.params import AuditParams

    engine_pass(ctx, wagers, actions, amount_col, rulesets, AuditParams(workers=1), with_rounds)


def best_cpu(fn, calls, repeat: int) -> float:
    for call in calls:
        fn(*call)  # warm: the evaluator's tables, the text lookups
    times = []
    for _ in range(repeat):
        t = time.process_time()
        for call in calls:
            fn(*call)
        times.append(time.process_time() - t)
    return min(times)


def handed_over(calls) -> tuple[int, collections.Counter, float]:
    """Rounds the column pass hands to the scalar engine, by what the scalar engine says of them, and the CPU
    seconds the scalar engine spent on them (RoundInputs and result frames included)."""
    from pipelines.audit import engine_pass as EP
    from rulebook.cards import UNREADABLE

    why: collections.Counter = collections.Counter()
    count = 0
    cpu = 0.0
    real = EP._scalar

    def spy(ctx, wagers, actions, *rest):
        nonlocal count, cpu
        t = time.process_time()
        out = real(ctx, wagers, actions, *rest)
        cpu += time.process_time() - t
        count += ctx.height
        irregular = out.irregularities.group_by("table_id", "round_no").agg(pl.col("kind").unique().sort().str.join("+"))
        unsettled = out.wagers.filter(pl.col("unsettled_reason").is_not_null()).group_by("table_id", "round_no").agg(
            pl.col("unsettled_reason").first().str.split(" (").list.first())
        rounds = ctx.select("table_id", "round_no", pl.col("codes").list.contains(UNREADABLE).alias("unread")).join(
            irregular, on=["table_id", "round_no"], how="left").join(unsettled, on=["table_id", "round_no"], how="left")
        for kind, reason, unread in rounds.select("kind", "unsettled_reason", "unread").iter_rows():
            if kind:
                why[f"irregular: {kind}"] += 1
            elif reason:
                why[f"unsettled: {reason}"] += 1
            elif unread:
                why["settled: an unread card no wager depends on (the engine tries every card it can be)"] += 1
            else:
                why["settled, no irregularity (a jackpot round the columns leave to the engine)"] += 1
        return out

    EP._scalar = spy
    try:
        for call in calls:
            _now(*call)
    finally:
        EP._scalar = real
    return count, why, cpu


def _copies(frame: pl.DataFrame, k: int) -> pl.DataFrame:
    """``k`` copies of the frame, the tables renamed, sorted by table and round as the loader gives them."""
    order = [c for c in ("wager_order", "action_order") if c in frame.columns]
    copies = pl.concat([frame.with_columns(pl.col("table_id") + f"~{i}") for i in range(k)])
    return copies.sort(["table_id", "round_no", *order], maintain_order=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="a DuckDB an audit or `pitaudit ingest` loaded; default: simulate and ingest --rounds")
    ap.add_argument("--rounds", type=int, default=200_000, help="rounds of the simulated night (all games; ~8%% Hold'em)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile (CPU time) of the audit's path")
    ap.add_argument("--copies", type=int, default=1,
                    help="the night's Hold'em frames this many times over, under renamed tables (a bigger partition)")
    args = ap.parse_args(argv)

    calls = capture(_database(args))
    if args.copies > 1:
        calls = [tuple(_copies(f, args.copies) for f in call[:3]) + call[3:] for call in calls]
    rounds = sum(c[0].height for c in calls)
    wagers = sum(c[1].height for c in calls)
    print(f"Hold'em: {rounds:,} rounds in {len(calls)} engine pass(es), {wagers:,} wagers in their frames; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (a shared machine inflates CPU time)")
    if args.profile:
        prof = cProfile.Profile(time.process_time)
        prof.runcall(lambda: [_now(*c) for c in calls])
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return
    now = best_cpu(_now, calls, args.repeat)
    before = best_cpu(_before, calls, max(1, args.repeat // 2))
    print(f"  engine_pass (column pass + scalar hand-over): {now:.3f} CPU s = {rounds / now:>9,.0f} rounds per CPU-second")
    print(f"  before (RoundInputs + settle_many):           {before:.3f} CPU s = {rounds / before:>9,.0f} rounds per CPU-second")
    count, why, cpu = handed_over(calls)
    print(f"  settled by the scalar engine: {count:,} rounds ({count / max(rounds, 1):.2%}), {cpu:.3f} CPU s in one "
          f"run ({cpu / now:.0%} of the pass's best):")
    for reason, n in why.most_common():
        print(f"    {n:6,}  {reason}")


if __name__ == "__main__":
    main()
