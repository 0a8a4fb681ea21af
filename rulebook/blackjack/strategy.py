"""Basic strategy for Hoiana Blackjack, as data: what a careful player does on each hand.

The rules it is for: no hole card (BJ-4.7.2) and a dealer blackjack takes only the original wager
(BJ-4.9.5, 4.10.8), the dealer stands on all 17s (BJ-4.14.3), double on any first two cards and
after splits (BJ-4.9.1), split to four hands, aces once with one card each (BJ-4.10.4), surrender
half before the subsequent deal, not against an ace (BJ-4.12.1). Insurance and even money are
declined (their value is negative off the top of the shoe, see ``odds.py``).

The tables are the expected-value maximising decisions of ``ev.derive_tables`` for an infinite
shoe (tests/test_blackjack_strategy.py proves they match). Because no hole card is checked,
surrender here is "early" against a ten (the half is lost even if the dealer then makes a
blackjack), which is why 14-16 and 7-7, 8-8 surrender against a ten.

Each cell is a preference code read left to right, taking the first decision allowed:
H hit, S stand, D double, P split, R surrender. ``DH`` = double if allowed, else hit.
Columns: the dealer's card 2, 3, 4, 5, 6, 7, 8, 9, ten, ace.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from rulebook.blackjack.hand import hand_total, points

UP_COLUMNS: Final = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)  # point value of the dealer's card per column

# hard totals (no ace counted as 11)
HARD: Final = {
    4: "H   H   H   H   H   H   H   H   H   H",
    5: "H   H   H   H   H   H   H   H   H   H",
    6: "H   H   H   H   H   H   H   H   H   H",
    7: "H   H   H   H   H   H   H   H   H   H",
    8: "H   H   H   H   H   H   H   H   H   H",
    9: "H   DH  DH  DH  DH  H   H   H   H   H",
    10: "DH  DH  DH  DH  DH  DH  DH  DH  H   H",
    11: "DH  DH  DH  DH  DH  DH  DH  DH  DH  H",
    12: "H   H   S   S   S   H   H   H   H   H",
    13: "S   S   S   S   S   H   H   H   H   H",
    14: "S   S   S   S   S   H   H   H   RH  H",
    15: "S   S   S   S   S   H   H   H   RH  H",
    16: "S   S   S   S   S   H   H   RH  RH  H",
    17: "S   S   S   S   S   S   S   S   S   S",
    18: "S   S   S   S   S   S   S   S   S   S",
    19: "S   S   S   S   S   S   S   S   S   S",
    20: "S   S   S   S   S   S   S   S   S   S",
    21: "S   S   S   S   S   S   S   S   S   S",
}

# soft totals (an ace counted as 11)
SOFT: Final = {
    12: "H   H   H   H   H   H   H   H   H   H",
    13: "H   H   H   H   DH  H   H   H   H   H",
    14: "H   H   H   DH  DH  H   H   H   H   H",
    15: "H   H   H   DH  DH  H   H   H   H   H",
    16: "H   H   DH  DH  DH  H   H   H   H   H",
    17: "H   DH  DH  DH  DH  H   H   H   H   H",
    18: "S   DS  DS  DS  DS  S   S   H   H   H",
    19: "S   S   S   S   S   S   S   S   S   S",
    20: "S   S   S   S   S   S   S   S   S   S",
    21: "S   S   S   S   S   S   S   S   S   S",
}

# two cards of the same point value (1 = aces, 10 = any two ten-value cards)
PAIR: Final = {
    1: "PH  PH  PH  PH  PH  PH  PH  PH  PH  PH",
    2: "PH  PH  PH  PH  PH  PH  H   H   H   H",
    3: "PH  PH  PH  PH  PH  PH  H   H   H   H",
    4: "H   H   H   PH  PH  H   H   H   H   H",
    5: "DH  DH  DH  DH  DH  DH  DH  DH  H   H",
    6: "PH  PH  PS  PS  PS  H   H   H   H   H",
    7: "PS  PS  PS  PS  PS  PH  H   H   RH  H",
    8: "PS  PS  PS  PS  PS  PH  PH  PRH RPH PH",
    9: "PS  PS  PS  PS  PS  S   PS  PS  S   S",
    10: "S   S   S   S   S   S   S   S   S   S",
}

DECISION: Final = {"H": "hit", "S": "stand", "D": "double", "P": "split", "R": "surrender"}

# the true count from which a counter takes insurance (the classic index, 8 decks); None = never
INSURANCE_INDEX: Final = 3.0


def _column(up_value: int) -> int:
    return UP_COLUMNS.index(up_value)


def table(kind: str) -> dict[int, tuple[str, ...]]:
    """A table as ``{row: (code per dealer column)}`` (kind: hard, soft, pair)."""
    src = {"hard": HARD, "soft": SOFT, "pair": PAIR}[kind]
    return {row: tuple(text.split()) for row, text in src.items()}


_TABLES: Final = {k: table(k) for k in ("hard", "soft", "pair")}


def code_for(hand_cards: Iterable[int], dealer_up: int) -> str:
    """The preference code for a hand (card codes, all readable) against the dealer's card."""
    cards = tuple(hand_cards)
    col = _column(points(dealer_up))
    if len(cards) == 2 and points(cards[0]) == points(cards[1]):
        return _TABLES["pair"][points(cards[0])][col]
    total, soft = hand_total(cards)
    if total > 21:
        return "S"
    if soft:
        return _TABLES["soft"][total][col]
    return _TABLES["hard"][max(total, 4)][col]


def basic_action(hand_cards: Iterable[int], dealer_up: int, allowed: set[str]) -> str:
    """The basic-strategy decision among ``allowed`` (names of decisions.DECISIONS)."""
    for letter in code_for(hand_cards, dealer_up):
        d = DECISION[letter]
        if d in allowed:
            return d
    for d in ("stand", "hit"):
        if d in allowed:
            return d
    raise ValueError(f"no decision allowed for this hand ({sorted(allowed)})")


def takes_insurance(true_count: float | None = None) -> bool:
    """Basic strategy never insures; a counter does at a true count of +3 or more (the optional hook)."""
    return true_count is not None and INSURANCE_INDEX is not None and true_count >= INSURANCE_INDEX
