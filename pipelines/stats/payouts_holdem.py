"""Hold'em Bonus payout distributions per rule set: the Bonus exactly, the main game by the engine's
simulation, the jackpot's hit probability exactly.

- ``bonus``: every one of the 1,624,350 holdings of two player and two dealer hole cards from one deck
  (``rulebook.holdem_bonus.odds.bonus_line_counts``, the engine's own count), read on the rule set's pay
  table (HTB-6.1.2, MBS-4.1.1, THB-G-BONUS); a wager loses 1 unit on no line. A folded Bonus loses too,
  but no sensible play folds a Bonus-winning hand, so the distribution is the cards'.
- ``main``: the Ante, Flop, Turn and River of one seat are one bet per unit of Ante (the Flop is twice
  the Ante, the Turn and River one Ante each, and whether they are placed is the player's decision:
  a Turn bet alone is a selected, favourable bet, so its own hold means nothing). The engine has the
  ``optimal`` strategy's mean exactly but not its distribution, so the distribution is the engine's
  simulation (``simulate_main_game``) under its ``basic`` rule strategy, 2,000,000 rounds, seed
  20261125, frozen in ``payouts_frozen`` (a slow test reproduces it). Players who play worse hold more:
  the detectors test this bet one-sided (players winning more than the stated strategy allows).
- ``progressive``: untestable in money while the rule set leaves the stake unstated (MBS-1.1.12,
  THB-G-JACKPOT); its hit probability needs no stake: ``jackpot_hit_probability``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb

from pipelines.stats.payouts import BetDistribution, Untestable, from_counts

MAIN_SEED, MAIN_ROUNDS, MAIN_STRATEGY = 20261125, 2_000_000, "basic"
MAIN_PARTS = ("ante", "flop", "turn", "river")


def distribution(ruleset, bet: str) -> BetDistribution:
    if bet == "bonus":
        return _bonus(ruleset.name, ruleset.version)
    if bet == "main":
        return _main(ruleset.name, ruleset.version)
    if bet in MAIN_PARTS:
        raise Untestable(f"the {bet} is tested with the seat's other main-game wagers as one bet 'main' (per unit of Ante): "
                         "whether the Flop, Turn and River are placed is the player's decision on the cards seen")
    if bet == "progressive":
        prog = ruleset.params.progressive
        if prog is None:
            raise KeyError(f"{ruleset.name} has no jackpot")
        from rulebook.holdem_bonus.params import stated

        if not stated(prog.stake):
            raise Untestable(f"the jackpot stake is not stated in the rule set ({prog.stake_clause}): a jackpot line's "
                             "payout per unit staked cannot be formed; its hit rate is tested instead")
        raise Untestable("the jackpot lines pay shares of the meter, which the wagers do not carry; its hit rate is tested instead")
    raise KeyError(f"{bet!r} is not a Hold'em Bonus bet")


def _ruleset(name: str, version: str):
    from pipelines.stats.distributions import ruleset_of

    return ruleset_of(name, version)


@lru_cache(maxsize=16)
def _bonus(name: str, version: str) -> BetDistribution:
    from rulebook.holdem_bonus.odds import bonus_line_counts

    params = _ruleset(name, version).params
    counts, total = bonus_line_counts(params)
    nets: dict[Fraction, int] = {}
    clauses = []
    for line in params.bonus_pay_table:
        num, den = map(int, line.odds.split(":"))
        nets[Fraction(num, den)] = nets.get(Fraction(num, den), 0) + counts[line.hand]
        clauses.append(line.clause)
    nets[Fraction(-1)] = total - sum(counts.values())
    # a fold loses the Bonus (``folded_bonus_loses``: HTB-4.11.2.i, MBS-3.7.1, the guide) and no stated strategy folds a
    # hand the pay table pays (pairs, A-K, A-Q, A-J): the count is the return of a player who never folds one, and a
    # player who does gives the house more, which is no anomaly (the hold test is one-sided, as for the main game)
    folds = bool(params.folded_bonus_loses)
    return from_counts(name, version, "bonus", 1, nets, "exact",
                       f"all {total:,} player and dealer hole-card holdings from one deck on the pay table "
                       f"({', '.join(sorted(set(clauses)))})"
                       + ("; a fold loses it, so a player who folds a paying hand holds more" if folds else ""),
                       one_sided=folds)


def main_key(params) -> tuple:
    """What the main game's distribution depends on: the Ante's qualifier and the four bets' odds."""
    return (params.ante_qualifier, *(str(getattr(params, b).odds) for b in MAIN_PARTS), params.folded_bonus_loses)


@lru_cache(maxsize=16)
def _main(name: str, version: str) -> BetDistribution:
    from pipelines.stats.payouts_frozen import HOLDEM_MAIN

    params = _ruleset(name, version).params
    key = main_key(params)
    counts = HOLDEM_MAIN.get(key)
    if counts is None:  # a rule set the frozen record does not cover: the same simulation, now
        counts = simulate_main_counts(params)
    rounds = sum(counts.values())
    mean = Fraction(sum(k * c for k, c in counts.items()), rounds)
    second = Fraction(sum(k * k * c for k, c in counts.items()), rounds)
    se = float(second - mean * mean) ** 0.5 / rounds ** 0.5
    return from_counts(name, version, "main", 1, {Fraction(k): c for k, c in counts.items()}, "simulation",
                       f"the engine's simulation of the main game (Ante, Flop, Turn, River per unit of Ante) under its "
                       f"'{MAIN_STRATEGY}' strategy, {rounds:,} rounds, seed {MAIN_SEED}", se, one_sided=True)


def simulate_main_counts(params, rounds: int = MAIN_ROUNDS, seed: int = MAIN_SEED) -> dict[int, int]:
    """How many of the engine's simulated rounds end on each net per unit of Ante (``rulebook.holdem_bonus.odds``)."""
    import numpy as np

    from rulebook.holdem_bonus.odds import simulate_main_game

    counts: dict[int, int] = {}
    for net, _, _ in simulate_main_game(params, rounds, seed, MAIN_STRATEGY):
        values, n = np.unique(net, return_counts=True)
        for v, c in zip(values.tolist(), n.tolist()):
            counts[int(v)] = counts.get(int(v), 0) + int(c)
    return dict(sorted(counts.items()))


@lru_cache(maxsize=16)
def _hit(name: str, version: str) -> tuple[Fraction, str]:
    from rulebook.holdem_bonus.odds import (
        SEVEN_CARD, SEVEN_CARD_QUADS, SEVEN_CARD_ROYAL, SEVEN_CARD_STRAIGHT_FLUSH, _five_card_counts, _is_mbs_structure,
    )

    prog = _ruleset(name, version).params.progressive
    if prog is None:
        raise KeyError(f"{name} has no jackpot")
    if all(line.cards == "hole_and_flop" for line in prog.lines):
        five = _five_card_counts()
        hands = sorted({line.hand for line in prog.lines})
        hits = sum(five[h] for h in hands)
        return Fraction(hits, comb(52, 5)), (f"the hole cards and the flop make one of {', '.join(hands)}: {hits:,} of the "
                                             f"{comb(52, 5):,} five-card hands; paid after a fold too ({prog.lose_clause})")
    if _is_mbs_structure(prog):
        hits = SEVEN_CARD_ROYAL + SEVEN_CARD_STRAIGHT_FLUSH + SEVEN_CARD_QUADS
        return Fraction(hits, SEVEN_CARD), (f"four of a kind or better in the seven cards: {hits:,} of the {SEVEN_CARD:,} "
                                            f"seven-card hands, the hand never folded (a fold keeps only the community lines, "
                                            f"{prog.lose_clause}: fewer hits, so the test stays conservative)")
    raise Untestable("the rule set's jackpot lines have a structure whose hit probability is not counted here")


def jackpot_hit_probability(ruleset) -> tuple[Fraction, str]:
    """P(a jackpot wager wins a line), exact, and how it is counted. The stake and the meter are not needed."""
    return _hit(ruleset.name, ruleset.version)


COV_SEED, COV_ROUNDS = 20261126, 1_000_000


def simulate_seat_pairs(params, rounds: int = COV_ROUNDS, seed: int = COV_SEED, chunk: int = 250_000) -> tuple[int, int, int, int, int, int]:
    """Two seats of one round (the same board and dealer's cards, their own hole cards from the same deck), each
    playing the ``basic`` strategy, settled by the engine's kernels: (rounds, sum x, sum y, sum xy, sum x^2, sum y^2)
    of their main-game nets per unit of Ante, for the covariance a round's seats have."""
    import numpy as np

    from rulebook import poker
    from rulebook.holdem_bonus.odds import deal_cards, strategy_decisions
    from rulebook.holdem_bonus.vector import BET_CODES, main_game

    rng = np.random.default_rng(seed)
    sums = [0, 0, 0, 0, 0, 0]
    done = 0
    while done < rounds:
        n = min(chunk, rounds - done)
        cards = deal_cards(rng, n, 11)  # seat A 0-1, community 2-6, dealer 7-8, seat B 9-10
        community, dealer = cards[:, 2:7], cards[:, 7:9]
        nets = []
        for hole in (cards[:, 0:2], cards[:, 9:11]):
            seat = np.concatenate([hole, community, dealer], axis=1)
            turn, river, folded = strategy_decisions(seat, MAIN_STRATEGY)
            strength = poker.evaluate7(np.concatenate([np.concatenate([hole, community], axis=1),
                                                       np.concatenate([dealer, community], axis=1)]))
            pl_, dl_ = strength[:n], strength[n:]
            played = (~folded).astype(np.int64)
            status = folded.astype(np.int64)
            net = np.zeros(n, dtype=np.int64)
            for bet, amount in (("ante", np.ones(n, dtype=np.int64)), ("flop", 2 * played),
                                ("turn", turn.astype(np.int64) * played), ("river", river.astype(np.int64) * played)):
                net += main_game(params, np.full(n, BET_CODES[bet]), status, pl_, dl_, amount)[0]
            nets.append(net)
        x, y = nets
        for k, v in enumerate((n, x.sum(), y.sum(), (x * y).sum(), (x * x).sum(), (y * y).sum())):
            sums[k] += int(v)
        done += n
    return tuple(sums)


@lru_cache(maxsize=16)
def seat_covariance(name: str, version: str) -> tuple[float, str]:
    """The covariance of two seats' main-game nets in one round, per unit of Ante squared, and its source."""
    from pipelines.stats.payouts_frozen import HOLDEM_SEAT_PAIRS

    params = _ruleset(name, version).params
    sums = HOLDEM_SEAT_PAIRS.get(main_key(params)) or simulate_seat_pairs(params)
    n, sx, sy, sxy, _, _ = sums
    cov = Fraction(sxy, n) - Fraction(sx, n) * Fraction(sy, n)
    return float(cov), (f"two seats of one round sharing the board and the dealer's cards, the engine's '{MAIN_STRATEGY}' "
                        f"strategy, {n:,} simulated rounds, seed {COV_SEED}")
