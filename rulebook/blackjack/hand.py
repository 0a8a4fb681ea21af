"""Card values and hand totals as BJ-4.2 defines them; the one place the engine counts points.

Card codes follow rulebook.cards (``rank * 4 + suit``, A = rank 0 .. K = rank 12). A negative code
is a card the evidence does not show (unreadable ``??``, or missing from the device log): a hand
holding one has no known total, and every function here says so rather than guessing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

# BJ-4.2.1-4.2.3: ace 1 (or 11, see hand_total), 2-9 face value, ten and pictures 10. By rank index A..K.
POINTS: Final = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
ACE_RANK: Final = 0


def known(cards: Sequence[int]) -> bool:
    """True when every card of the hand was read (no ``??``, no card missing from the log)."""
    return not cards or min(cards) >= 0


def points(code: int) -> int:
    """The point value of one card, an ace counted 1 (BJ-4.2)."""
    return POINTS[code >> 2]


def is_ace(code: int) -> bool:
    return 0 <= code < 4


def is_ten_value(code: int) -> bool:
    """Ten, jack, queen or king (BJ-4.2.2, 4.2.3): what a dealer ace needs for blackjack (BJ-4.11.1)."""
    return code >= 36  # ranks T (9), J, Q, K


def hand_total(cards: Sequence[int]) -> tuple[int, bool]:
    """``(total, soft)`` of a hand of known cards: an ace counts 11 unless that passes 21 (BJ-4.2.1, 2.12, 2.13)."""
    hard = 0
    ace = False
    for c in cards:
        r = c >> 2
        hard += POINTS[r]
        ace = ace or r == ACE_RANK
    if ace and hard <= 11:
        return hard + 10, True
    return hard, False


def min_total(cards: Sequence[int]) -> int:
    """The lowest total of the readable cards (aces as 1): above 21 the hand is bust whatever the unread cards are."""
    total = 0
    for c in cards:  # a loop, not sum() over a generator: called on every card of every hand
        if c >= 0:
            total += POINTS[c >> 2]
    return total


def is_two_card_21(cards: Sequence[int]) -> bool:
    """An ace and a ten-value card as the first two cards (BJ-2.1); whether it counts as a blackjack
    also depends on how the hand was formed (not after a split, BJ-4.10.5)."""
    if len(cards) != 2 or not known(cards):
        return False
    a, b = cards
    return (is_ace(a) and is_ten_value(b)) or (is_ace(b) and is_ten_value(a))


def same_point_value(a: int, b: int) -> bool:
    """Cards 'identical in point value' may be split (BJ-4.10.1): a ten and a jack are."""
    return POINTS[a >> 2] == POINTS[b >> 2]


def same_face(a: int, b: int) -> bool:
    """A pair for the Pair wager: the same face (BJ-4.2.3.1, 6.3): J-J is a pair, J-Q is not."""
    return (a >> 2) == (b >> 2)


def same_card(a: int, b: int) -> bool:
    """Same face and same suit (for a rule set whose pair wager compares suits too)."""
    return a == b


def identical_for_pair(a: int, b: int, pair_by: str) -> bool:
    """Two cards a Pair wager counts as a pair (BJ-4.2.3.1, 6.3, 4.10.1.2), by the rule set's ``pair_by``;
    an unread card (negative code) is never identical."""
    if a < 0 or b < 0:
        return False
    return same_face(a, b) if pair_by == "rank" else same_card(a, b)
