"""Hold'em Bonus odds speed: the exact per-flop count behind the ``optimal`` strategy's figure.

Run: ``.venv/bin/python -m benchmarks.holdem_odds [--flops N] [--all]``

Prints the CPU-seconds one flop costs when sampled (each of its 1,176 full boards read from the board counts,
most of them counted first: a sample meets few boards twice), the sampled figure with its standard error, and with
``--all`` the exact figure over all 1,755 flop classes (about a CPU-minute, every class of full board counted once).
"""

from __future__ import annotations

import argparse
import time

from rulebook import poker
from rulebook.holdem_bonus.strategy import main_game_value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flops", type=int, default=20)
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    t = time.process_time()
    v = main_game_value(poker.STRAIGHT, flops=args.flops, seed=1)
    cpu = time.process_time() - t
    print(f"{args.flops} random flops: {cpu / args.flops:.3f} CPU-s a flop; house edge {100 * -v.expectation:.3f} % "
          f"+- {100 * v.standard_error:.3f} % (standard error)")
    if args.all:
        t = time.process_time()
        v = main_game_value(poker.STRAIGHT)
        print(f"all {v.flops} flop classes: {time.process_time() - t:.0f} CPU-s; house edge {100 * -v.expectation:.4f} % (exact); "
              f"Turn bet on {100 * v.turn_rate:.1f} % of hands, River on {100 * v.river_rate:.1f} %")


if __name__ == "__main__":
    main()
