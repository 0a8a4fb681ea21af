"""One hand at a time, for dispute review: checked input, the strength, and which five cards."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from rulebook.cards import card_text

from .vector import evaluate_array


def _check_codes(codes: Sequence[int]) -> list[int]:
    cards = [int(c) for c in codes]
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"a poker hand has 5 to 7 cards, got {len(cards)}")
    bad = [c for c in cards if not 0 <= c <= 51]
    if bad:
        raise ValueError(f"card code {bad[0]} is not a card (0..51)")
    if len(set(cards)) != len(cards):
        dup = next(c for c in cards if cards.count(c) > 1)
        raise ValueError(f"card {card_text(dup)} appears twice in one hand")
    return cards


def evaluate_hand(codes: Sequence[int]) -> int:
    """Strength of one hand of 5 to 7 distinct card codes (ValueError with the reason otherwise)."""
    cards = _check_codes(codes)
    return int(evaluate_array(np.array([cards], dtype=np.uint8), workers=1)[0])


def best_five(codes: Sequence[int]) -> tuple[int, ...]:
    """The five cards (in the order given) that make the hand's strength.

    When several five-card subsets are worth the same, the one whose positions come first is
    returned, so a caller that lists the hole cards first gets a hand using a hole card whenever
    any best hand does (MBS-4.1.2: the river royal flush "must include at least 1 Hole Card").
    """
    cards = _check_codes(codes)
    subsets = list(itertools.combinations(cards, 5))
    strengths = evaluate_array(np.array(subsets, dtype=np.uint8), 5, workers=1)
    return subsets[int(np.argmax(strengths))]  # argmax: the first of equal maxima
