"""Speed of the Texas Hold'em Bonus engines and of the odds.

Run: ``.venv/bin/python -m benchmarks.holdem_bonus`` (``--rounds N`` to change the batch).
Prints rounds/s of ``vector.settle_many`` over a night of rounds (all three rule sets, both deal
modes, one to seven seats, 1 % of rounds with a fault that sends them to the scalar engine), of the
scalar ``engine.settle_round`` on a sample, the time of the exact Bonus enumeration (1,624,350
holdings) and of the default main-game simulation. Times are CPU seconds of this process (best
of two or three), so a busy machine does not distort them. The garbage collector's share is shown
apart: the results are some 15 Python objects a round, and a caller settling a night may pause it.
"""

from __future__ import annotations

import argparse
import gc
import random
import time

from rulebook.cards import UNREADABLE
from rulebook.catalogue import builtin
from rulebook.holdem_bonus import engine, odds, vector
from rulebook.holdem_bonus.deal import deal_events
from rulebook.round import Action, DeviceCard, RoundInput, Wager

NAMES = ("hoiana-holdem-bonus", "mbs-holdem-bonus-progressive", "guide-holdem-bonus-progressive")


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def night(n: int, seed: int = 1, fault_rate: float = 0.01) -> list[RoundInput]:
    """``n`` rounds as a table system would log them: Ante on every seat, Bonus on a third, the jackpot on
    a quarter, a tenth of the seats fold, Turn/River bets on about half the streets."""
    rng = random.Random(seed)
    rulesets = [builtin().latest(name) for name in NAMES]
    out = []
    for k in range(n):
        rs = rulesets[k % 3]
        p = rs.params
        mode = "shoe" if k % 2 else "device"
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
        deck = rng.sample(range(52), 2 * len(seats) + 11)
        hole = [tuple(deck[2 * i: 2 * i + 2]) for i in range(len(seats))]
        rest = deck[2 * len(seats):]
        events = list(deal_events(p.shoe_deal if mode == "shoe" else p.device_deal, hole, tuple(rest[:5]), tuple(rest[5:7]), tuple(rest[7:11])))
        wagers, actions = [], []
        for s in seats:
            ante = rng.choice((500, 1000, 2500, 5000))
            wagers.append(Wager(f"{k}-{s}-a", s, "ante", ante))
            if rng.random() < 0.33:
                wagers.append(Wager(f"{k}-{s}-b", s, "bonus", 500))
            if p.progressive and rng.random() < 0.25:
                wagers.append(Wager(f"{k}-{s}-p", s, "progressive", 100))
            if rng.random() < 0.1:
                actions.append(Action(s, 1, "fold"))
                continue
            actions.append(Action(s, 1, "flop"))
            wagers.append(Wager(f"{k}-{s}-f", s, "flop", 2 * ante))
            for street in ("turn", "river"):
                bet = rng.random() < 0.45
                actions.append(Action(s, 1, street if bet else "check"))
                if bet:
                    wagers.append(Wager(f"{k}-{s}-{street[0]}", s, street, ante))
        if rng.random() < fault_rate:
            events[rng.randrange(len(events))] = DeviceCard(UNREADABLE, False)
        out.append(RoundInput(rs, tuple(events), tuple(wagers), tuple(actions), deal_mode=mode,
                              jackpot_meter=12_345_600, currency=p.progressive.currency if p.progressive else "VND"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--scalar-rounds", type=int, default=3_000)
    args = ap.parse_args()

    rounds = night(args.rounds)
    wagers = sum(len(r.wagers) for r in rounds)
    vector.settle_many(rounds[:1000])  # warm the evaluator's tables
    t = _best(lambda: vector.settle_many(rounds), repeat=2)
    print(f"vector.settle_many: {len(rounds):,} rounds ({wagers:,} wagers) in {t:.2f} s = {len(rounds) / t:,.0f} rounds/s, {wagers / t:,.0f} wagers/s")
    gc.disable()
    try:
        t_nogc = _best(lambda: vector.settle_many(rounds), repeat=2)
    finally:
        gc.enable()
    print(f"  the same with the garbage collector paused (a caller's choice): {len(rounds) / t_nogc:,.0f} rounds/s")
    t_steps = _best(lambda: vector.settle_many(rounds[: args.rounds // 10], with_steps=True), repeat=1)
    print(f"  with the card-by-card steps: {args.rounds // 10 / t_steps:,.0f} rounds/s")
    sample = rounds[: args.scalar_rounds]
    t_s = _best(lambda: [engine.settle_round(r) for r in sample], repeat=1)
    print(f"engine.settle_round (scalar reference): {len(sample) / t_s:,.0f} rounds/s")

    hoiana = builtin().latest("hoiana-holdem-bonus").params
    t_b = _best(lambda: odds.bonus_expectation(hoiana))
    ev, _ = odds.bonus_expectation(hoiana)
    print(f"exact Bonus enumeration (1,624,350 holdings): {t_b:.2f} s; house edge {float(-ev):.6%} ({-ev})")
    t_a = _best(lambda: odds.ante_odds(hoiana, odds.DEFAULT_ROUNDS, 1, "pair_with_hole"), repeat=1)
    print(f"main-game simulation, {odds.DEFAULT_ROUNDS:,} rounds: {t_a:.2f} s")


if __name__ == "__main__":
    main()
