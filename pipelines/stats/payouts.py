"""The payout distribution of one wager of any bet the detectors test: one registry over the games.

``bet_distribution(ruleset, bet, decks)`` is the one function the luck and hold detectors (and the
investigation pages' bands) call for a bet of Hold'em Bonus or blackjack; baccarat's bets keep their
joint enumeration in ``distributions.baccarat_payouts`` (a round's bets share its cards) and are
given here too, per bet, for one interface. A distribution is a frozen record: the net per unit
staked as exact fractions, each with its probability (exact fractions where the rules engine counts
the bet, the engine's simulation counts over its rounds where the net depends on the player's
decisions), where the figure comes from, and its standard error.

Some bets cannot be given: a jackpot wager's return needs the stake the rule set leaves unstated
(MBS-1.1.12, THB-G-JACKPOT), so ``bet_distribution`` raises ``Untestable`` with the reason and the
detectors skip the bet with that reason (never an invented amount). What *can* be tested of a
jackpot wager without the stake is whether it hits a line: ``jackpot_hit_distribution``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from pipelines.stats.distributions import Payout


class Untestable(ValueError):
    """A bet whose payout distribution the rule set does not determine; the message is the reason."""


@dataclass(frozen=True, slots=True)
class BetDistribution:
    """One wager's net per unit staked: ``values[i]`` with probability ``probs[i]`` (sum 1)."""

    ruleset: str
    version: str
    bet: str
    decks: int
    values: tuple[Fraction, ...]  # net per unit staked, e.g. -1, 3, 1000; 3/2 for a blackjack
    probs: tuple[Fraction, ...]  # exact fractions (for a simulation: counts over its rounds)
    method: str  # "exact" or "simulation"
    source: str  # how it was counted, the clauses and the strategy where decisions matter
    standard_error: float = 0.0  # of the mean per unit (0 for an exact figure)
    one_sided: bool = False  # decisions matter: a player who plays worse than the stated strategy holds more

    @property
    def mean(self) -> float:
        return _exact_mean(self.values, self.probs)

    @property
    def variance(self) -> float:
        m = sum(v * p for v, p in zip(self.values, self.probs))
        return float(sum(v * v * p for v, p in zip(self.values, self.probs)) - m * m)

    @property
    def house_edge(self) -> float:
        return -self.mean

    @property
    def win_probability(self) -> float:
        return float(sum(p for v, p in zip(self.values, self.probs) if v > 0))

    @property
    def payout(self) -> Payout:
        """The detectors' float form: integer values on the 1/grid lattice, float probabilities."""
        grid = math.lcm(*(v.denominator for v in self.values))
        return Payout(self.bet, grid, tuple(int(v * grid) for v in self.values), tuple(float(p) for p in self.probs))


@lru_cache(maxsize=1024)
def _exact_mean(values: tuple[Fraction, ...], probs: tuple[Fraction, ...]) -> float:
    """A distribution's mean, summed in exact fractions once (the luck and hold rows read it per entity)."""
    return float(sum(v * p for v, p in zip(values, probs)))


def from_counts(ruleset: str, version: str, bet: str, decks: int, counts: dict[Fraction, int], method: str,
                source: str, standard_error: float = 0.0, one_sided: bool = False) -> BetDistribution:
    total = sum(counts.values())
    keys = sorted(k for k, c in counts.items() if c > 0)
    return BetDistribution(ruleset, version, bet, decks, tuple(Fraction(k) for k in keys),
                           tuple(Fraction(counts[k], total) for k in keys), method, source, standard_error, one_sided)


def bet_distribution(ruleset, bet: str, decks: int | None = None) -> BetDistribution:
    """The payout distribution of one wager of ``bet`` under ``ruleset`` (a RuleSet) with ``decks`` decks
    (the rule set's default when None). Hold'em Bonus: ``bonus`` (exact), ``main`` (the Ante, Flop, Turn and
    River of one seat together, per unit of Ante); blackjack: ``pair``, ``insurance`` (exact), ``main``;
    baccarat: every bet of the pay table (exact). Raises ``Untestable`` (the reason) for a bet the rule set
    does not determine, ``KeyError`` for a bet the game does not have."""
    game = ruleset.game
    if game == "holdem_bonus":
        from pipelines.stats import payouts_holdem

        return payouts_holdem.distribution(ruleset, bet)
    if game == "blackjack":
        from pipelines.stats import payouts_blackjack

        return payouts_blackjack.distribution(ruleset, bet, ruleset.params.decks if decks is None else decks)
    if game == "baccarat":
        from pipelines.stats.distributions import baccarat_payouts

        d = ruleset.params.decks if decks is None else decks
        pay = baccarat_payouts(ruleset.name, ruleset.version, int(d))[bet]
        counts = {Fraction(v, pay.grid): q for v, q in zip(pay.values, pay.probs)}
        return BetDistribution(ruleset.name, ruleset.version, bet, int(d), tuple(counts),
                               tuple(Fraction(q).limit_denominator(10**15) for q in counts.values()), "exact",
                               "every first six cards of the shoe through the engine's resolver (distributions.baccarat_payouts); "
                               "the probabilities are float sums of the enumeration's integer weights, as fractions")
    raise KeyError(f"no payout distributions for the game {game!r}")


def jackpot_hit_distribution(ruleset) -> tuple[Fraction, str]:
    """The probability that one jackpot wager hits a line, exact, and how it is counted (no stake needed)."""
    from pipelines.stats import payouts_holdem

    return payouts_holdem.jackpot_hit_probability(ruleset)
