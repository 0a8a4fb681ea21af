"""Poker hand strength for Texas Hold'em Bonus (HTB-4.4, 4.5, 5.4.1-5.4.4; MBS-3.9), vectorised.

A strength is an int32 in 1..7462 (the classes of five-card hands, :mod:`.classes`): higher is
better, equal is an exact stand-off, and the number means the same for 5, 6 or 7 cards (seven
cards are worth their best five). Cards are :mod:`rulebook.cards` codes, ``rank * 4 + suit``.

- :func:`evaluate7`, :func:`evaluate5`, :func:`evaluate`: arrays of hands -> strengths;
- :func:`category`, :func:`is_royal`, ``HIGH_CARD`` .. ``STRAIGHT_FLUSH``, ``CATEGORY_NAMES``;
- :func:`evaluate_hand`, :func:`best_five`, :func:`describe`: one hand, for dispute review.

How it is fast: :mod:`.tables` (additive card keys, one table gather per hand) and
:mod:`.vector` (chunked numpy kernel, threads over chunks).
"""

from __future__ import annotations

from .classes import (
    CATEGORY_NAMES,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    HIGH_CARD,
    N_STRENGTHS,
    ONE_PAIR,
    ROYAL_FLUSH,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    TWO_PAIRS,
    describe,
)
from .scalar import best_five, evaluate_hand
from .vector import category, evaluate, evaluate5, evaluate7, is_royal

__all__ = [
    "CATEGORY_NAMES", "FLUSH", "FOUR_OF_A_KIND", "FULL_HOUSE", "HIGH_CARD", "N_STRENGTHS",
    "ONE_PAIR", "ROYAL_FLUSH", "STRAIGHT", "STRAIGHT_FLUSH", "THREE_OF_A_KIND", "TWO_PAIRS",
    "best_five", "category", "describe", "evaluate", "evaluate5", "evaluate7", "evaluate_hand",
    "is_royal",
]
