"""Blackjack speed: settle_round on realistic rounds, and the odds simulation.

Run: ``.venv/bin/python -m benchmarks.blackjack [--rounds N] [--sim-rounds N]``

Realistic rounds: 1 to 7 occupied seats (3.5 on average), a back bettor on one seat in five, a
pair wager on one seat in four, insurance sometimes against an ace, every hand played by basic
strategy (rulebook/blackjack/play.py) from a shuffled 8-deck shoe. The audit settles about
300,000 blackjack rounds a night: the figure printed is what that costs on one core.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5_000, help="realistic rounds to settle")
    ap.add_argument("--sim-rounds", type=int, default=1_000_000, help="rounds for the odds simulation")
    args = ap.parse_args()
    bench_settle(args.rounds)
    bench_sim(args.sim_rounds)


if __name__ == "__main__":
    main()
