"""The pay tables read on concrete cards: the Bonus on the hole cards, the jackpot lines on a hand.

Scalar and explicit (an if-chain per rule), because this is the reference the vectorised
settlement is tested against; ``vector.py`` has its own lookup-table form of the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulebook import poker
from rulebook.cards import rank_of, suit_of
from rulebook.holdem_bonus.params import BonusLine, ProgressiveLine, ProgressiveParams
from rulebook.money import round_amount

ACE, JACK, QUEEN, KING = 0, 10, 11, 12  # rank indices of rulebook.cards

#: category of each strength (index 0 unused), as a plain tuple: the scalar engine reads one strength
#: at a time, and a tuple lookup costs a fraction of a numpy call
CATEGORY_OF: tuple[int, ...] = (-1, *poker.category(np.arange(1, poker.N_STRENGTHS + 1)).tolist())

BONUS_LABELS = {
    "aa_vs_dealer_aa": "A-A against the dealer's A-A",
    "aa": "A-A",
    "ak_suited": "A-K suited",
    "aq_aj_suited": "A-Q/A-J suited",
    "ak_offsuit": "A-K unsuited",
    "kk_qq_jj": "K-K/Q-Q/J-J",
    "aq_aj_offsuit": "A-Q/A-J unsuited",
    "pair_2_to_10": "a pair 2-2 to 10-10",
}


def bonus_candidates(c1: int, c2: int, dealer_aa: bool) -> tuple[str, ...]:
    """The Bonus hands two hole cards make, best first (HTB-6.1.2): A-A may also be A-A vs A-A."""
    r1, r2 = rank_of(c1), rank_of(c2)
    if r1 == r2:
        if r1 == ACE:
            return ("aa_vs_dealer_aa", "aa") if dealer_aa else ("aa",)
        if r1 in (JACK, QUEEN, KING):
            return ("kk_qq_jj",)
        return ("pair_2_to_10",)
    if ACE not in (r1, r2):
        return ()
    other = r2 if r1 == ACE else r1
    suited = suit_of(c1) == suit_of(c2)
    if other == KING:
        return ("ak_suited",) if suited else ("ak_offsuit",)
    if other in (QUEEN, JACK):
        return ("aq_aj_suited",) if suited else ("aq_aj_offsuit",)
    return ()


def bonus_line(table: tuple[BonusLine, ...], hole: tuple[int, int], dealer: tuple[int, int] | None) -> BonusLine | None:
    """The pay-table line the hole cards win, or None. ``dealer`` matters only for A-A vs A-A."""
    dealer_aa = dealer is not None and rank_of(dealer[0]) == ACE and rank_of(dealer[1]) == ACE
    by_hand = {line.hand: line for line in table}
    for name in bonus_candidates(hole[0], hole[1], dealer_aa):
        if name in by_hand:
            return by_hand[name]
    return None


def needs_dealer_for_bonus(table: tuple[BonusLine, ...], hole: tuple[int, int]) -> bool:
    """A-A on a table with the A-A vs A-A line: the dealer's cards decide the Bonus too."""
    return rank_of(hole[0]) == ACE and rank_of(hole[1]) == ACE and any(l.hand == "aa_vs_dealer_aa" for l in table)


@dataclass(frozen=True, slots=True)
class JackpotStrengths:
    """Strengths (rulebook.poker) of the card sets the jackpot lines look at, for one seat."""

    hole_and_flop: int
    hole_and_turn: int
    seven: int
    community: int


def _is_kind(strength: int, hand: str) -> bool:
    if hand == "royal_flush":
        return strength == poker.ROYAL_FLUSH
    cat = CATEGORY_OF[strength]
    if hand == "straight_flush":
        return cat == poker.STRAIGHT_FLUSH and strength != poker.ROYAL_FLUSH
    return cat == {"four_of_a_kind": poker.FOUR_OF_A_KIND, "full_house": poker.FULL_HOUSE, "flush": poker.FLUSH}[hand]


def line_met(line: ProgressiveLine, s: JackpotStrengths) -> bool:
    """Does the hand meet this line (the cards it names make the hand it names)?"""
    if line.cards == "hole_and_flop":
        return _is_kind(s.hole_and_flop, line.hand)
    if line.cards == "hole_and_turn":
        return _is_kind(s.hole_and_turn, line.hand)
    if line.cards == "best_of_seven":
        return _is_kind(s.seven, line.hand)
    if line.cards == "best_of_seven_with_hole":
        # the best five use a hole card: strictly better than the community cards alone
        return _is_kind(s.seven, line.hand) and s.seven > s.community
    return _is_kind(s.community, line.hand)


def lines_met(prog: ProgressiveParams, s: JackpotStrengths, folded: bool) -> tuple[ProgressiveLine, ...]:
    """Every line the hand meets; a folded hand only those paid after a fold (MBS-3.7.1)."""
    return tuple(l for l in prog.lines if (l.pays_after_fold or not folded) and line_met(l, s))


class MissingEvidence(ValueError):
    """A jackpot amount that the round's record cannot give (no meter, another currency)."""


def line_amount(prog: ProgressiveParams, line: ProgressiveLine, meter: int | None, currency: str | None) -> int:
    """What one line pays: a percentage of the meter (rounded per the rule set), a fixed amount, or both combined."""
    parts = []
    if line.percent_of_meter:
        if meter is None:
            raise MissingEvidence(f"{line.percent_of_meter}% of the jackpot meter is due and the round records no meter ({line.clause})")
        if meter < 0:
            raise MissingEvidence(f"the recorded jackpot meter is negative ({meter}) ({line.clause})")
        parts.append(round_amount(meter * line.percent_of_meter, 100, prog.percent_rounding))
    if line.fixed:
        if currency != prog.currency:
            raise MissingEvidence(
                f"the fixed jackpot amount is in {prog.currency} and the round is in {currency or 'no stated currency'} ({line.clause})"
            )
        parts.append(line.fixed)
    return max(parts) if prog.percent_and_fixed == "greater" else sum(parts)


def jackpot_payout(
    prog: ProgressiveParams, met: tuple[ProgressiveLine, ...], meter: int | None, currency: str | None
) -> tuple[int, ProgressiveLine | None]:
    """The payout for the lines met, combined per the rule set, and the line that decides it."""
    if not met:
        return 0, None
    amounts = [(line_amount(prog, l, meter, currency), l) for l in met]
    if prog.combine == "sum":
        return sum(a for a, _ in amounts), max(amounts, key=lambda t: t[0])[1]
    best = max(a for a, _ in amounts)
    return best, next(l for a, l in amounts if a == best)  # the first listed of equal lines


def is_royal_or_straight_flush_line(line: ProgressiveLine) -> bool:
    return line.hand in ("royal_flush", "straight_flush")
