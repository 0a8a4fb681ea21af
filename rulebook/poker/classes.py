"""The 7,462 classes of five-card poker hands, in the order of the rule texts, and their names.

A strength is a class's position in this order, 1 (7-5-4-3-2 of at least two suits) to 7,462
(the royal flush), so that comparing two hands is comparing two integers. The order is derived
here once from the clauses, not copied from another evaluator:

- categories: HTB-4.5 / MBS-3.9 (royal flush .. five odd cards);
- card ranks: HTB-4.4.1 ace high, except the ace counts as one in 5-4-3-2-A (HTB-4.4.2), which is
  the lowest straight and straight flush (HTB-5.4.4);
- ties inside a category: HTB-5.4.1 (two pairs: higher pair, second pair, kicker), 5.4.2 (one
  pair: pair, then kickers high to low), 5.4.3 (full house: trips, then pair); the others by
  the same rule of groups first, then cards high to low; suits never count (HTB-4.4.3).
"""

from __future__ import annotations

import functools
import itertools
from typing import Final, NamedTuple

import numpy as np

HIGH_CARD: Final = 0  # "Five odd cards" (HTB-4.5)
ONE_PAIR: Final = 1
TWO_PAIRS: Final = 2
THREE_OF_A_KIND: Final = 3
STRAIGHT: Final = 4
FLUSH: Final = 5
FULL_HOUSE: Final = 6
FOUR_OF_A_KIND: Final = 7
STRAIGHT_FLUSH: Final = 8

CATEGORY_NAMES: Final = (
    "Five odd cards",
    "One pair",
    "Two pairs",
    "Three of a kind",
    "Straight",
    "Flush",
    "Full house",
    "Four of a kind",
    "Straight flush",
)

#: Number of distinct five-card strengths; the royal flush is the highest.
N_STRENGTHS: Final = 7462
ROYAL_FLUSH: Final = N_STRENGTHS

VALUE_NAMES: Final = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                      "jack", "queen", "king", "ace")
VALUE_PLURALS: Final = ("twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines",
                        "tens", "jacks", "queens", "kings", "aces")

#: Straights as 13-bit masks of poker values (2 = bit 0 .. A = bit 12), highest first; the last
#: is the wheel 5-4-3-2-A, whose top card is the five (HTB-4.4.2, 5.4.4).
STRAIGHT_MASKS: Final = tuple((0b11111 << low) for low in range(8, -1, -1)) + (0b1000000001111,)
STRAIGHT_TOPS: Final = tuple(range(12, 3, -1)) + (3,)

_SHAPES: Final = {
    (4, 1): FOUR_OF_A_KIND,
    (3, 2): FULL_HOUSE,
    (3, 1, 1): THREE_OF_A_KIND,
    (2, 2, 1): TWO_PAIRS,
    (2, 1, 1, 1): ONE_PAIR,
}


class HandClass(NamedTuple):
    """One class of equal five-card hands."""

    category: int
    tiebreak: tuple[int, ...]  # compared left to right after the category (poker values)
    values: tuple[int, ...]  # the five poker values, high to low (2 = 0 .. A = 12)
    flush: bool


def classify(values: tuple[int, ...], flush: bool) -> HandClass:
    """The class of five cards given their poker values and whether they share one suit."""
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = tuple(c for _, c in groups)
    by_group = tuple(v for v, _ in groups)  # bigger groups first, then higher values
    ordered = tuple(sorted(values, reverse=True))
    if shape == (1, 1, 1, 1, 1):
        mask = sum(1 << v for v in values)
        if mask in STRAIGHT_MASKS:
            top = STRAIGHT_TOPS[STRAIGHT_MASKS.index(mask)]
            return HandClass(STRAIGHT_FLUSH if flush else STRAIGHT, (top,), ordered, flush)
        return HandClass(FLUSH if flush else HIGH_CARD, by_group, ordered, flush)
    return HandClass(_SHAPES[shape], by_group, ordered, flush)


def _desc(values) -> list[int]:
    return sorted(values, reverse=True)


def _straight_values(top: int) -> tuple[int, ...]:
    return (12, 3, 2, 1, 0) if top == 3 else tuple(range(top, top - 5, -1))


@functools.cache
def hand_classes() -> tuple[HandClass, ...]:
    """All 7,462 classes, weakest first: ``hand_classes()[strength - 1]``.

    Enumerated category by category (HTB-4.5, lowest first) with each category's tie-break
    (HTB-5.4.1-5.4.4); :func:`classify` derives the same from five cards (tests check both agree).
    """
    values = range(13)
    straight_masks = set(STRAIGHT_MASKS)
    odd = [c for c in itertools.combinations(_desc(values), 5) if sum(1 << v for v in c) not in straight_masks]
    by_category: list[list[HandClass]] = [[] for _ in CATEGORY_NAMES]
    for c in odd:
        by_category[HIGH_CARD].append(HandClass(HIGH_CARD, c, c, False))
        by_category[FLUSH].append(HandClass(FLUSH, c, c, True))
    for top in STRAIGHT_TOPS:
        five = _straight_values(top)
        by_category[STRAIGHT].append(HandClass(STRAIGHT, (top,), five, False))
        by_category[STRAIGHT_FLUSH].append(HandClass(STRAIGHT_FLUSH, (top,), five, True))
    for p in values:
        others = _desc(v for v in values if v != p)
        for kickers in itertools.combinations(others, 3):
            by_category[ONE_PAIR].append(HandClass(ONE_PAIR, (p, *kickers), tuple(_desc((p, p, *kickers))), False))
        for kickers in itertools.combinations(others, 2):
            by_category[THREE_OF_A_KIND].append(
                HandClass(THREE_OF_A_KIND, (p, *kickers), tuple(_desc((p, p, p, *kickers))), False))
        for k in others:
            by_category[FULL_HOUSE].append(HandClass(FULL_HOUSE, (p, k), tuple(_desc((p, p, p, k, k))), False))
            by_category[FOUR_OF_A_KIND].append(HandClass(FOUR_OF_A_KIND, (p, k), tuple(_desc((p, p, p, p, k))), False))
    for high, low in itertools.combinations(_desc(values), 2):
        for k in (v for v in values if v not in (high, low)):
            five = tuple(_desc((high, high, low, low, k)))
            by_category[TWO_PAIRS].append(HandClass(TWO_PAIRS, (high, low, k), five, False))
    out = [c for group in by_category for c in sorted(group, key=lambda c: c.tiebreak)]
    if len(out) != N_STRENGTHS:  # pragma: no cover - a wrong enumeration
        raise AssertionError(f"expected {N_STRENGTHS} classes, made {len(out)}")
    return tuple(out)


def _category_table() -> np.ndarray:
    table = np.full(N_STRENGTHS + 1, -1, dtype=np.int8)  # strength 0 is no hand
    table[1:] = [c.category for c in hand_classes()]
    table.flags.writeable = False
    return table


#: Category of each strength (index 0 is not a strength: -1).
CATEGORY_OF: Final = _category_table()


def describe(strength: int) -> str:
    """The hand in words, e.g. "Straight, six high" or "Two pairs, queens and nines, three kicker"."""
    s = int(strength)
    if not 1 <= s <= N_STRENGTHS:
        raise ValueError(f"strength {s} is not 1..{N_STRENGTHS}")
    cat, tb, values, _ = hand_classes()[s - 1]
    name, plural = VALUE_NAMES, VALUE_PLURALS
    if cat == STRAIGHT_FLUSH:
        return "Royal flush" if s == ROYAL_FLUSH else f"Straight flush, {name[tb[0]]} high"
    if cat == STRAIGHT:
        return f"Straight, {name[tb[0]]} high"
    if cat == FOUR_OF_A_KIND:
        return f"Four of a kind, {plural[tb[0]]}, {name[tb[1]]} kicker"
    if cat == FULL_HOUSE:
        return f"Full house, {plural[tb[0]]} over {plural[tb[1]]}"
    if cat == THREE_OF_A_KIND:
        return f"Three of a kind, {plural[tb[0]]}, kickers {name[tb[1]]}, {name[tb[2]]}"
    if cat == TWO_PAIRS:
        return f"Two pairs, {plural[tb[0]]} and {plural[tb[1]]}, {name[tb[2]]} kicker"
    if cat == ONE_PAIR:
        return f"One pair, {plural[tb[0]]}, kickers " + ", ".join(name[v] for v in tb[1:])
    return f"{CATEGORY_NAMES[cat]}, " + ", ".join(name[v] for v in values)
