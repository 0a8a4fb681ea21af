"""Throughput of rulebook.poker.evaluate7 beside treys and phevaluator, on the same hands.

Run: ``.venv/bin/python -m benchmarks.poker_eval [--hands 4000000] [--repeats 7]``

Prints: the cold import time of rulebook.poker and the time to build every lookup table (in a
fresh interpreter), then hands per second of evaluate7 with one thread and with all cores, for
uint8 input (read in place) and int64 input (converted chunk by chunk). treys and phevaluator
are timed on a sample of the same hands (they take one hand per Python call) and scaled to
hands per second; their answers on the sample are checked against ours (an error stops the run).
The figure for each of ours is the best of ``--repeats`` runs (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

TEXT = [r + s for r in "A23456789TJQK" for s in "cdhs"]

_COLD = """
import time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import rulebook.poker
t2 = time.perf_counter()
from rulebook.poker import tables
tables.build_all()
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def cold_start() -> tuple[float, float, float]:
    """(numpy import, rulebook.poker import, building every table) in a fresh interpreter, seconds."""
    out = subprocess.run([sys.executable, "-c", _COLD], capture_output=True, text=True, check=True)
    a, b, c = (float(x) for x in out.stdout.split())
    return a, b, c


def random_hands(n: int, seed: int = 2025) -> np.ndarray:
    """n seven-card hands, each seven distinct cards from its own shuffled deck, as uint8."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, 7), dtype=np.uint8)
    for start in range(0, n, 1 << 18):
        m = min(1 << 18, n - start)
        out[start: start + m] = np.argpartition(rng.random((m, 52)), 7, axis=1)[:, :7]
    return out


def best_rate(fn, n: int, repeats: int) -> tuple[float, float]:
    """(hands per wall second, hands per CPU second of this process), each the best of ``repeats``."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return n / wall, n / cpu


def treys_rate(hands: np.ndarray) -> tuple[float, np.ndarray]:
    from treys import Card, Evaluator

    ev = Evaluator()
    card = [Card.new(t) for t in TEXT]
    rows = [[card[c] for c in h] for h in hands.tolist()]
    t = time.perf_counter()
    ranks = [ev.evaluate(r[:2], r[2:]) for r in rows]
    return len(hands) / (time.perf_counter() - t), 7463 - np.array(ranks)


def phevaluator_rates(hands: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(public evaluate_cards with card texts, native evaluate_7cards with ids), hands/s."""
    from phevaluator import _pheval, evaluate_cards
    from phevaluator.card import Card

    texts = [[TEXT[c] for c in h] for h in hands.tolist()]
    t = time.perf_counter()
    ranks = [evaluate_cards(*h) for h in texts]
    public = len(hands) / (time.perf_counter() - t)
    ids = np.array([Card.to_id(t) for t in TEXT])[hands]
    cols = [c.tolist() for c in ids.T]
    t = time.perf_counter()
    native = list(map(_pheval.evaluate_7cards, *cols))
    native_rate = len(hands) / (time.perf_counter() - t)
    assert native == ranks
    return public, native_rate, 7463 - np.array(ranks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sample", type=int, default=50_000, help="hands given to treys/phevaluator")
    args = parser.parse_args()

    load = os.getloadavg()
    t_numpy, t_import, t_build = cold_start()
    from rulebook import poker
    from rulebook.poker import vector

    hands = random_hands(args.hands)
    wide = hands.astype(np.int64)
    n = len(hands)
    cores = len(os.sched_getaffinity(0))
    poker.evaluate7(hands[:1000])  # tables built before timing
    ours = poker.evaluate7(hands)

    sample = hands[: args.sample]
    r_treys, s_treys = treys_rate(sample)
    r_ph_public, r_ph_native, s_ph = phevaluator_rates(sample)
    if not (np.array_equal(s_treys, ours[: args.sample]) and np.array_equal(s_ph, ours[: args.sample])):
        raise SystemExit("evaluate7 disagrees with treys or phevaluator on the sample")

    rows = [
        ("evaluate7 uint8, 1 thread", best_rate(lambda: poker.evaluate7(hands, workers=1), n, args.repeats)),
        (f"evaluate7 uint8, {cores} threads", best_rate(lambda: poker.evaluate7(hands, workers=cores), n, args.repeats)),
        ("evaluate7 int64, 1 thread", best_rate(lambda: poker.evaluate7(wide, workers=1), n, args.repeats)),
        (f"evaluate7 int64, {cores} threads", best_rate(lambda: poker.evaluate7(wide, workers=cores), n, args.repeats)),
        (f"treys Evaluator.evaluate ({len(sample):,} hands)", (r_treys, None)),
        (f"phevaluator evaluate_cards ({len(sample):,} hands)", (r_ph_public, None)),
        (f"phevaluator native _pheval.evaluate_7cards ({len(sample):,} hands)", (r_ph_native, None)),
    ]
    print(f"rulebook.poker benchmark: {n:,} random 7-card hands, {cores} cores, chunk {vector.CHUNK:,} hands")
    print(f"cold start: numpy import {t_numpy * 1e3:.0f} ms, rulebook.poker import {t_import * 1e3:.0f} ms, "
          f"all tables (5/6/7 cards) {t_build * 1e3:.0f} ms")
    print(f"load average at start: {load[0]:.2f} (other processes share the cores: wall figures vary)")
    print(f"{'':58s} {'hands/s':>14s} {'hands/CPU-s':>14s} {'time for all':>13s}")
    for name, (rate, cpu_rate) in rows:
        cpu = f"{cpu_rate:14,.0f}" if cpu_rate else f"{'':14s}"
        print(f"{name:58s} {rate:14,.0f} {cpu} {n / rate:12.2f}s")
    print(f"agreement on the sample: treys and phevaluator equal evaluate7 on all {len(sample):,} hands")


if __name__ == "__main__":
    main()
