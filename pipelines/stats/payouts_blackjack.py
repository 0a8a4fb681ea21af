"""Blackjack payout distributions per rule set and deck count: the Pair and Insurance exactly, the main
wager by the engine's simulation.

- ``pair`` (BJ-4.8, 6.3, 5.1): the seat's first two cards are the same face with probability
  (4d-1)/(52d-1) in a d-deck shoe (``rulebook.blackjack.odds.pair_probability``); wins the pay table's
  odds (11:1), else loses 1.
- ``insurance`` (BJ-4.11, 4.14.4, 5.1): placed only over a dealer's ace; the dealer's next card is a
  ten-value with probability 16d/(52d-1) (the engine's "off the top" figure; the seats' own cards are not
  removed); wins 2:1, else loses 1. All insurance wagers of a round are settled on that one card.
- ``main``: the net of the initial wager with its doubles and splits, per unit of the initial wager, on
  the 1/2 grid (3:2 blackjacks, half surrenders). Its value depends on the player's decisions; the engine
  has no exact figure, so the distribution is its simulation (``rulebook.blackjack.simulate``, basic
  strategy, 2,000,000 rounds, seed 20261125: the same rounds as ``pitaudit odds``), frozen per deck
  count in ``payouts_frozen``. Tested one-sided (a player who strays from basic strategy holds more).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from pipelines.stats.payouts import BetDistribution, from_counts

MAIN_SEED, MAIN_ROUNDS, MAIN_BATCH = 20261125, 2_000_000, 250_000


def distribution(ruleset, bet: str, decks: int) -> BetDistribution:
    if bet in ("pair", "insurance"):
        return _side(ruleset.name, ruleset.version, bet, int(decks))
    if bet == "main":
        return _main(ruleset.name, ruleset.version, int(decks))
    raise KeyError(f"{bet!r} is not a blackjack bet")


def _params(name: str, version: str):
    from pipelines.stats.distributions import ruleset_of

    return ruleset_of(name, version).params


@lru_cache(maxsize=64)
def _side(name: str, version: str, bet: str, decks: int) -> BetDistribution:
    params = _params(name, version)
    if bet == "pair":
        same = 4 * decks - 1 if params.pair_by == "rank" else decks - 1
        p_win, line, how = Fraction(same, 52 * decks - 1), params.pay_table.pair, f"the first two cards the same {params.pair_by} (BJ-4.2.3.1)"
    else:
        p_win, line, how = Fraction(16 * decks, 52 * decks - 1), params.pay_table.insurance, "a ten-value under the dealer's ace, off the top"
    odds = Fraction(line.odds.num, line.odds.den)
    return BetDistribution(name, version, bet, decks, (Fraction(-1), odds), (1 - p_win, p_win), "exact",
                           f"{how}: {p_win.numerator}/{p_win.denominator} in {decks} decks; pays {line.odds.num}:{line.odds.den} ({line.clause})")


def main_key(params, decks: int) -> tuple:
    """What the main wager's distribution depends on (the rules the simulation reads) and the deck count."""
    import dataclasses

    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
              if f.name not in ("pay_table", "pair_by", "insurance_max_fraction", "max_wagers_per_seat", "rounding",
                                "rounding_unit", "decks")}
    pt = params.pay_table
    return (decks, str(sorted(fields.items())), str(pt.win.odds), str(pt.blackjack.odds))


@lru_cache(maxsize=64)
def _main(name: str, version: str, decks: int) -> BetDistribution:
    from pipelines.stats.payouts_frozen import BLACKJACK_MAIN

    params = _params(name, version)
    counts = BLACKJACK_MAIN.get((name, version, decks))
    if counts is None:
        counts = simulate_main_counts(params, decks)
    rounds = sum(counts.values())
    mean = Fraction(sum(k * c for k, c in counts.items()), 2 * rounds)
    second = Fraction(sum(k * k * c for k, c in counts.items()), 4 * rounds)
    se = float(second - mean * mean) ** 0.5 / rounds ** 0.5
    return from_counts(name, version, "main", decks, {Fraction(k, 2): c for k, c in counts.items()}, "simulation",
                       f"the engine's simulation of basic strategy (rulebook.blackjack.simulate), {rounds:,} rounds, "
                       f"seed {MAIN_SEED}, {decks} decks; per unit of the initial wager, doubles and splits included", se,
                       one_sided=True)


def simulate_main_counts(params, decks: int, rounds: int = MAIN_ROUNDS, seed: int = MAIN_SEED) -> dict[int, int]:
    """How many simulated rounds end on each net, in half units of the initial wager: the same random stream
    as ``rulebook.blackjack.simulate.simulate_main`` (so its mean is ``pitaudit odds``' figure)."""
    import numpy as np

    from rulebook.blackjack.simulate import _play_batch

    rng = np.random.default_rng(seed)
    counts: dict[int, int] = {}
    done = 0
    while done < rounds:
        n = min(MAIN_BATCH, rounds - done)
        res, _ = _play_batch(params, decks, n, rng, False)
        halves = np.rint(res * 2).astype(np.int64)
        assert np.array_equal(halves, res * 2), "a net off the half-unit grid"
        values, c = np.unique(halves, return_counts=True)
        for v, k in zip(values.tolist(), c.tolist()):
            counts[int(v)] = counts.get(int(v), 0) + int(k)
        done += n
    return dict(sorted(counts.items()))


PAIR_SEED, PAIR_ROUNDS = 20261126, 100_000


def simulate_seat_pairs(params, decks: int, rounds: int = PAIR_ROUNDS, seed: int = PAIR_SEED) -> tuple[int, ...]:
    """Two seats of one round against one dealer, each playing basic strategy, on the engine's state machine
    (``rulebook.blackjack.play.play_round`` and ``settle``, a fresh shuffled shoe each round): (rounds, sum x,
    sum y, sum xy, sum x^2, sum y^2) of their main nets in half units of the initial wager."""
    import numpy as np

    from rulebook.blackjack.play import play_round
    from rulebook.blackjack.settle import settle
    from rulebook.round import Wager

    rng = np.random.default_rng(seed)
    stake = 1000
    wagers = [Wager("A", 1, "main", stake), Wager("B", 2, "main", stake)]
    deck = np.tile(np.arange(52), decks)
    sums = [0, 0, 0, 0, 0, 0]
    for _ in range(rounds):
        shoe = rng.permutation(deck)[:60].tolist()
        nets = settle(play_round(params, shoe, wagers).state)[0]
        x, y = 2 * nets["A"].net // stake, 2 * nets["B"].net // stake
        for k, v in enumerate((1, x, y, x * y, x * x, y * y)):
            sums[k] += v
    return tuple(sums)


@lru_cache(maxsize=64)
def seat_covariance(name: str, version: str, decks: int) -> tuple[float, str] | None:
    """The covariance of two seats' main nets in one round (per unit squared) and its source; None for a rule set
    or deck count the frozen record does not hold (the detectors then take the correlation-1 bound)."""
    from pipelines.stats.payouts_frozen import BLACKJACK_SEAT_PAIRS

    sums = BLACKJACK_SEAT_PAIRS.get((name, version, decks))
    if sums is None:
        return None
    n, sx, sy, sxy, _, _ = sums
    cov = (Fraction(sxy, n) - Fraction(sx, n) * Fraction(sy, n)) / 4
    return float(cov), (f"two seats against one dealer, basic strategy, the engine's state machine, {n:,} rounds, "
                        f"seed {PAIR_SEED}, {decks} decks")
