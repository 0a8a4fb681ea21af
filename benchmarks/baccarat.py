"""Speed of the Tiger Baccarat engines and of the exact odds.

Run: ``.venv/bin/python -m benchmarks.baccarat`` (``--rounds N`` to change the vector batch).
Prints rounds/s of ``vector.resolve`` + ``vector.settle`` over a million real rounds (one and eight
wagers each), of the scalar engine on a sample, of ``deal_shoe``, and the time of the exact
enumeration. Times are CPU seconds of this process (numpy here is single-threaded), so a busy
machine does not distort them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rulebook.baccarat import vector as V
from rulebook.baccarat.engine import settle_round
from rulebook.baccarat.odds import house_edges
from rulebook.cards import NO_CARD
from rulebook.catalogue import builtin
from rulebook.round import DeviceCard, RoundInput, Wager


def _best(fn, repeat: int = 3) -> float:
    """Best of ``repeat`` runs, in CPU seconds of this process (other jobs on a shared machine inflate wall time)."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--scalar-rounds", type=int, default=5_000)
    args = ap.parse_args()
    ruleset = builtin().latest("hoiana-tiger-baccarat/commission")
    rng = np.random.default_rng(1)

    # real rounds from real shoes
    t = time.process_time()
    rounds: list[np.ndarray] = []
    shoes = 0
    while len(rounds) < args.rounds:
        shoe = rng.permutation(np.repeat(np.arange(52), 8)).astype(np.int8)
        rounds += V.deal_shoe(shoe, cut_at=400, start=1 + int(shoe[0] // 4))
        shoes += 1
    deal_s = time.process_time() - t
    rounds = rounds[: args.rounds]
    print(f"deal_shoe: {shoes} 8-deck shoes in {deal_s:.2f} s = {1e3 * deal_s / shoes:.2f} ms a shoe ({len(rounds) / deal_s:,.0f} rounds/s)")

    cards = np.full((len(rounds), 6), NO_CARD, dtype=np.int8)
    lengths = np.fromiter((len(r) for r in rounds), dtype=np.int64, count=len(rounds))
    for k in (4, 5, 6):
        sel = np.flatnonzero(lengths == k)
        if len(sel):
            cards[sel, :k] = np.stack([rounds[i] for i in sel])
    n = len(rounds)
    ri = np.repeat(np.arange(n), 8)
    bet = np.tile(np.arange(8, dtype=np.int8), n)
    amount = np.full(len(ri), 10_000, dtype=np.int64)

    holder = {}
    resolve_s = _best(lambda: holder.__setitem__("c", V.resolve(cards)))
    settle_s = _best(lambda: V.settle(holder["c"], ri, bet, amount, ruleset.params))
    one = np.arange(n)
    settle_one_s = _best(lambda: V.settle(holder["c"], one, bet[::8], amount[:n], ruleset.params))
    print(f"vector.resolve: {n:,} rounds in {resolve_s:.3f} s = {n / resolve_s:,.0f} rounds/s")
    print(f"vector.settle:  {len(ri):,} wagers in {settle_s:.3f} s = {len(ri) / settle_s:,.0f} wagers/s")
    for k, s in ((1, settle_one_s), (8, settle_s)):
        both = resolve_s + s
        print(f"vector resolve+settle, {k} wager(s) a round: {both:.3f} s for {n:,} rounds = {n / both:,.0f} rounds/s")

    wagers = tuple(Wager(name, 1, name, 10_000) for name in V.BET_CODES)
    sample = rounds[: args.scalar_rounds]
    inputs = [RoundInput(ruleset=ruleset, cards=tuple(DeviceCard(int(c)) for c in r), wagers=wagers) for r in sample]
    scalar_s = _best(lambda: [settle_round(x) for x in inputs], repeat=1)
    print(f"scalar settle_round (8 wagers a round): {len(sample):,} rounds in {scalar_s:.2f} s = {len(sample) / scalar_s:,.0f} rounds/s")

    for decks in (8, 6, 1):
        t = time.process_time()
        house_edges(ruleset, decks)
        print(f"odds: exact enumeration of 13**6 rank sequences, {decks} deck(s): {time.process_time() - t:.2f} s")


if __name__ == "__main__":
    main()
