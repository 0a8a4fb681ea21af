"""Reconstruct + re-settle of each game's groups, part by part, in CPU seconds: where the audit's re-settlement goes.

    .venv/bin/python -m benchmarks.resettle_parts --db night.duckdb              # an audited or ingested night
    .venv/bin/python -m benchmarks.resettle_parts --db night.duckdb --games holdem_bonus,blackjack --repeat 9

The night's partitions of each game are cut into groups of about ``--group-rounds`` rounds as the audit's
throughput section cuts them (``benchmarks.audit.throughput``) and loaded once, read-only. Then, in this process
and on one polars thread (as the audit's group workers run), each group is reconstructed and re-settled with the
audit's own functions ``--repeat`` times; the best run's parts are printed, per group and per 10,000 rounds:

- ``reconstruct`` (``pipelines.audit.reconstruct``);
- the engine passes ``settle`` makes (``pipelines.audit.engine_pass``: the first at the amounts placed, the second at
  the amounts the rules settle at);
- the Free Hand pass (``pipelines.audit.free_hand``, its own engine passes included);
- ``adjust.prescribe`` (limits, ratios, the differential, the overrides);
- the rest of ``settle``: the rule sets, the context joins, the result columns;

and the number of polars queries (collects) the group made. CPU time is the figure to compare on a shared machine.
Issue 13's goal for the whole of it: 100,000 rounds per CPU-second for every game.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")  # before polars is imported: the audit's group workers run so

import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import polars as pl  # noqa: E402

PARTS = ("reconstruct", "engine passes", "free hands", "prescribe", "the rest of settle")


def _groups(db: Path, games: list[str], group_rounds: int):
    from pipelines.audit.load import contiguous_groups, load_partition, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.db import open_reader

    params = AuditParams(workers=1)
    con = open_reader(db)
    try:
        keys = partition_keys(con, params)
        of = con.sql("SELECT DISTINCT table_id, game FROM core_rounds").pl()
        keys = keys.join(of, on="table_id", how="left")
        for game in games:
            mine = keys.filter(pl.col("game") == game)
            if mine.height == 0:
                continue
            for group in contiguous_groups(mine, max(1, -(-int(mine["rounds"].sum()) // group_rounds))):
                yield game, load_partition(con, group, params)
    finally:
        con.close()


def measure(part, repeat: int) -> tuple[dict[str, float], int]:
    """The best of ``repeat`` runs (by their total): CPU s per part, and the polars collects of one run."""
    import pipelines.audit.settle as S
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import reconstruct_partition, settle_partition

    params = AuditParams(workers=1)
    acc: dict[str, float] = defaultdict(float)
    collects = [0]
    originals = {"engine_pass": S.engine_pass, "free_hand_pass": S.free_hand_pass, "prescribe": S.prescribe}
    real_collect = pl.LazyFrame._collect_eager
    real_lazy_collect = pl.LazyFrame.collect

    def timed(name: str, fn):
        def run(*args, **kwargs):
            c = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                acc[name] += time.process_time() - c
        return run

    def counted(fn):
        def run(self, *args, **kwargs):
            collects[0] += 1
            return fn(self, *args, **kwargs)
        return run

    S.engine_pass = timed("engine passes", originals["engine_pass"])
    S.free_hand_pass = timed("free hands", originals["free_hand_pass"])
    S.prescribe = timed("prescribe", originals["prescribe"])
    pl.LazyFrame._collect_eager = counted(real_collect)
    pl.LazyFrame.collect = counted(real_lazy_collect)
    best: tuple[float, dict[str, float], int] | None = None
    try:
        for _ in range(repeat):
            acc.clear()
            collects[0] = 0
            c = time.process_time()
            recon = reconstruct_partition(part, params)
            acc["reconstruct"] = time.process_time() - c
            c = time.process_time()
            settle_partition(part, recon, params)
            settle_s = time.process_time() - c
            # the Free Hand pass's engine passes are counted in its own part, not twice
            acc["the rest of settle"] = settle_s - acc["engine passes"] - acc["free hands"] - acc["prescribe"]
            total = acc["reconstruct"] + settle_s
            if best is None or total < best[0]:
                best = (total, dict(acc), collects[0])
    finally:
        S.engine_pass, S.free_hand_pass, S.prescribe = originals.values()
        pl.LazyFrame._collect_eager = real_collect
        pl.LazyFrame.collect = real_lazy_collect
    assert best is not None
    return best[1], best[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="an audited or ingested night (opened read-only)")
    ap.add_argument("--games", default="baccarat,blackjack,holdem_bonus")
    ap.add_argument("--group-rounds", type=int, default=62_500)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not args.db.is_file():
        ap.error(f"--db {args.db}: no such database file")
    print(f"POLARS_MAX_THREADS={os.environ['POLARS_MAX_THREADS']}; load average {os.getloadavg()[0]:.1f}; "
          f"CPU s of this process, best of {args.repeat}")
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    rounds: dict[str, int] = defaultdict(int)
    for game, part in _groups(args.db, args.games.split(","), args.group_rounds):
        parts, collects = measure(part, args.repeat)
        n = part.rounds.height
        rounds[game] += n
        for k, v in parts.items():
            totals[game][k] += v
        total = sum(parts[k] for k in PARTS)
        print(f"  {game:13} group of {n:>7,} rounds: " + ", ".join(f"{k} {parts[k]:.3f}" for k in PARTS)
              + f"; {collects} collects; {n / total:>9,.0f} rounds per CPU-second")
    print("per 10,000 rounds (CPU s):")
    print(f"  {'game':13} " + " ".join(f"{k:>18}" for k in PARTS) + f" {'all':>8} {'rounds/CPU-s':>13}")
    for game, parts in totals.items():
        n = rounds[game]
        total = sum(parts[k] for k in PARTS)
        print(f"  {game:13} " + " ".join(f"{1e4 * parts[k] / n:>18.4f}" for k in PARTS)
              + f" {1e4 * total / n:>8.4f} {n / total:>13,.0f}")


if __name__ == "__main__":
    main()
