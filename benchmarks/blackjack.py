"""Blackjack speed: settle_round on realistic rounds, and the odds simulation.

Run: ``.venv/bin/python -m benchmarks.blackjack [--rounds N] [--sim-rounds N] [--db AUDIT.duckdb [--profile]]``

Realistic rounds: 1 to 7 occupied seats (3.5 on average), a back bettor on one seat in five, a
pair wager on one seat in four, insurance sometimes against an ace, every hand played by basic
strategy (rulebook/blackjack/play.py) from a shuffled 8-deck shoe. The audit settles about
300,000 blackjack rounds a night: the figure printed is what that costs on one core.

``--db``: the audit's own blackjack path on a database ``pitaudit audit`` wrote, e.g. a simulated night
(``pitaudit simulate --out night --rounds 100000 && pitaudit audit --input night --db night.duckdb --out out``):
every blackjack round of it through ``pipelines.audit.engine_pass`` in this process, once on the scalar
engine and once over arrays (``rulebook/blackjack/vector.py``), in CPU seconds (the machine may be shared),
with the share of rounds the array path handed to the scalar engine. ``--profile`` prints where the time goes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import time

from rulebook.blackjack.odds import DEFAULT_ROUNDS, house_edges
from rulebook.blackjack.play import play_round
from rulebook.blackjack.simulate import simulate_main
from rulebook.catalogue import builtin
from rulebook.engine import settle_round
from rulebook.round import Action, DeviceCard, RoundInput, Wager

NIGHT = 300_000


def realistic_rounds(n: int, seed: int = 1) -> list[RoundInput]:
    rs = builtin().in_force("hoiana-blackjack", dt.date(2026, 11, 24))
    rng = random.Random(seed)
    shoe = [c for c in range(52) for _ in range(8)]
    out = []
    for i in range(n):
        rng.shuffle(shoe)
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 6)))
        wagers = []
        for s in seats:
            wagers.append(Wager(f"{i}-{s}-m", s, "main", rng.choice((1000, 2500, 5000, 10000)), f"P{s}"))
            if rng.random() < 0.2:
                wagers.append(Wager(f"{i}-{s}-b", s, "main", 1000, f"B{s}"))
            if rng.random() < 0.25:
                wagers.append(Wager(f"{i}-{s}-p", s, "pair", 500, f"P{s}"))

        def before(state, wagers=wagers):
            ins = []
            if state.up_card is not None and state.up_card < 4:
                for w in wagers:
                    if w.bet == "main" and rng.random() < 0.1 and not state.hand(w.seat, 1).is_blackjack:
                        ins.append(Wager(w.wager_id + "-i", w.seat, "insurance", w.amount // 2, w.player_id))
            return ins, []

        played = play_round(rs.params, shoe[:80], wagers, before_play=before)
        out.append(
            RoundInput(
                ruleset=rs,
                cards=tuple(DeviceCard(c) for c in played.cards),
                wagers=played.wagers,
                actions=tuple(Action(a.seat, a.hand, a.action, a.amount, a.wager_ids) for a in played.actions),
            )
        )
    return out


def bench_settle(n: int) -> float:
    rounds = realistic_rounds(n)
    t0, c0 = time.perf_counter(), time.process_time()
    for r in rounds:
        settle_round(r)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rate = n / cpu
    seats = sum(len({w.seat for w in r.wagers}) for r in rounds) / n
    print(f"settle_round: {n:,} realistic rounds ({seats:.1f} seats each): {rate:,.0f} rounds per CPU-second "
          f"({cpu:.2f} s CPU, {wall:.2f} s wall)")
    print(f"  a night of {NIGHT:,} blackjack rounds: {NIGHT / rate:,.0f} CPU-seconds on one core ({NIGHT / rate / 2:,.0f} s on two)")
    return rate


def bench_sim(n: int) -> float:
    rs = builtin().in_force("hoiana-blackjack", dt.date(2026, 11, 24))
    simulate_main(rs.params, 8, 50_000)  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    sim = simulate_main(rs.params, 8, n, seed=3)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"odds simulation: {n:,} rounds: {n / cpu:,.0f} rounds per CPU-second ({cpu:.2f} s CPU, {wall:.2f} s wall); "
          f"house edge {100 * sim.house_edge:.3f} % (95 % CI {100 * sim.ci95[0]:.3f} .. {100 * sim.ci95[1]:.3f} %)")
    t0, c0 = time.perf_counter(), time.process_time()
    house_edges(rs, 8)
    print(f"house_edges(hoiana-blackjack, 8 decks) with the default {DEFAULT_ROUNDS:,} rounds: "
          f"{time.process_time() - c0:.2f} s CPU, {time.perf_counter() - t0:.2f} s wall")
    return n / cpu


def bench_audit_path(db: str, profile: bool = False) -> None:
    """Every blackjack round of ``db`` through the audit's engine pass, scalar and over arrays (CPU seconds)."""
    import cProfile
    import dataclasses
    import pstats

    import polars as pl

    from pipelines.audit.engine_pass import engine_pass
    from pipelines.audit.load import load_partition, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import reconstruct_partition
    from pipelines.audit.settle import resolve_rulesets
    from pipelines.db import open_reader

    params = AuditParams(workers=1)
    con = open_reader(db)
    try:
        keys = partition_keys(con, params)
        tables = con.sql("SELECT DISTINCT table_id FROM core_rounds WHERE game = 'blackjack'").pl()
        keys = keys.join(tables, on="table_id", how="semi")
        part = load_partition(con, tuple(keys.select("gaming_day", "table_id").iter_rows()), params)
    finally:
        con.close()
    recon = reconstruct_partition(part, params)
    rounds, rulesets = resolve_rulesets(part.rounds, params)
    ctx = rounds.join(recon.select("table_id", "round_no", "complete", "codes", "burns", "dealt", "foreign_burn", "decks"),
                      on=["table_id", "round_no"], how="left")
    ctx = ctx.filter(pl.col("complete").fill_null(False) & pl.col("ruleset_key").is_not_null()).with_columns(
        pl.col("ruleset_key").alias("ruleset_version"))
    n = ctx.height
    print(f"the audit's blackjack path on {db}: {n:,} rounds, {part.wagers.height:,} wagers, {part.actions.height:,} actions")
    outs = {}
    for label, vectorised, runs in (("scalar", False, 1), ("arrays", True, 5)):
        p = dataclasses.replace(params, vectorised=vectorised)
        if runs > 1:  # a first call pays for imports and polars' first plans: not the night's cost
            engine_pass(ctx, part.wagers, part.actions, "amount", rulesets, p, with_rounds=True)
        prof = cProfile.Profile() if profile else None
        cpus = []
        for _ in range(runs):
            c0 = time.process_time()
            if prof:
                prof.enable()
            outs[label] = engine_pass(ctx, part.wagers, part.actions, "amount", rulesets, p, with_rounds=True)
            if prof:
                prof.disable()
            cpus.append(time.process_time() - c0)
        cpu = sorted(cpus)[len(cpus) // 2]
        print(f"  {label:7}: {cpu:6.2f} CPU s = {n / cpu:>9,.0f} rounds per CPU-second"
              + (f" (median of {runs}; best {n / min(cpus):,.0f})" if runs > 1 else ""))
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    from rulebook.blackjack import vector

    rs = rulesets[ctx["ruleset_version"][0]]
    handed = vector.scalar_share(ctx, part.wagers, part.actions, "amount", rs)
    print(f"  rounds the array path hands to the scalar engine: {handed.height:,} of {n:,} ({100 * handed.height / max(1, n):.2f} %)")
    for why, count in handed.group_by("why").len().sort("len", descending=True).iter_rows():
        print(f"    {count:>7,}  {why}")
    a, b = outs["scalar"], outs["arrays"]
    key = ["table_id", "round_no", "wager_id"]
    same = a.wagers.sort(key).equals(b.wagers.sort(key))
    same_rounds = a.rounds.sort(key[:2]).equals(b.rounds.sort(key[:2]))
    same_irr = a.irregularities.sort(key[:2] + ["idx"]).equals(b.irregularities.sort(key[:2] + ["idx"]))
    print(f"  identical to the scalar engine's: wager results {same}, round results {same_rounds}, irregularities {same_irr}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5_000, help="realistic rounds to settle")
    ap.add_argument("--sim-rounds", type=int, default=1_000_000, help="rounds for the odds simulation")
    ap.add_argument("--db", default=None, help="the audit's blackjack path on this audited database instead")
    ap.add_argument("--profile", action="store_true", help="with --db: print cProfile's top functions")
    args = ap.parse_args()
    if args.db:
        bench_audit_path(args.db, args.profile)
        return
    bench_settle(args.rounds)
    bench_sim(args.sim_rounds)


if __name__ == "__main__":
    main()
