"""Poker hand strength for Texas Hold'em Bonus (HTB-4.4, 4.5, 5.4.1-5.4.4; MBS-3.9), vectorised.

Strengths are the 7,462 classes of five-card poker hands numbered 1 (7-5-4-3-2 of mixed suits)
to 7,462 (a royal flush): higher is better, equal is an exact stand-off (HTB-5.4), and the
number means the same thing for 5, 6 and 7 cards (a 7-card hand is worth its best five).

Why this layout: a hand's strength depends only on the multiset of its ranks, unless five or
more cards share a suit. Each card therefore carries one additive key: a per-rank number
(chosen so that every multiset of up to seven ranks has a distinct sum, as in SKPokerEval) in
the high bits and a per-suit counter in the low bits. One gather and six additions give both
sums; the rank sum indexes a table of non-flush strengths, the suit sum says whether (and in
which suit) there is a flush, and the few flush hands go through a table indexed by the
13-bit mask of the flush suit's ranks. No Python loop runs per hand.

Card codes are those of :mod:`rulebook.cards`: ``rank * 4 + suit``, ranks ``A23456789TJQK``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Final

import numpy as np

from rulebook.cards import RANKS, card_text

# --- hand categories (HTB-4.5, MBS-3.9) ---------------------------------------------------

HIGH_CARD: Final = 0  # "Five odd cards"
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

# Poker value of each rank index of rulebook.cards (A=0 .. K=12): 2 -> 0 ... K -> 11, A -> 12
# (HTB-4.4.1, ace high). The wheel's low ace (HTB-4.4.2) is handled where straights are found.
_VALUE_OF_RANK: Final = np.array([12] + list(range(12)), dtype=np.int64)
_VALUE_NAMES: Final = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                       "jack", "queen", "king", "ace")
_VALUE_PLURALS: Final = ("twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines",
                         "tens", "jacks", "queens", "kings", "aces")

# Additive rank keys by poker value (2..A): every multiset of at most seven values, each at
# most four times, has its own sum (checked when the tables are built). SKPokerEval's keys.
_RANK_KEYS: Final = np.array(
    [0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181], dtype=np.int64
)
# Suit counter: clubs counted implicitly (width minus the others), then 1, 8, 64 (3 bits each).
_SUIT_KEYS: Final = np.array([0, 1, 8, 64], dtype=np.int64)
_SUIT_BITS: Final = 9

# Straights as 13-bit value masks, highest first; the last is the wheel 5-4-3-2-A (HTB-5.4.4).
_STRAIGHT_MASKS: Final = tuple((0b11111 << lo) for lo in range(8, -1, -1)) + (0b1000000001111,)


# --- the 7,462 classes, in order -----------------------------------------------------------


def _class_order_key(values: tuple[int, ...], flush: bool) -> tuple[int, tuple[int, ...]]:
    """(category, tie-break values) of a five-card hand given by its poker values (2=0 .. A=12).

    The tie-break follows HTB-5.4.1-5.4.3: groups by size then value (the quads/trips/pairs
    first, then kickers high to low); a straight by its top card, the wheel's being the five.
    """
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = tuple(c for _, c in groups)
    order = tuple(v for v, _ in groups)
    if shape == (1, 1, 1, 1, 1):
        mask = sum(1 << v for v in values)
        straight_top = None
        for i, m in enumerate(_STRAIGHT_MASKS):
            if mask == m:
                straight_top = 12 - i if i < 9 else 3  # the wheel's top card is the five
                break
        if straight_top is not None:
            return (STRAIGHT_FLUSH if flush else STRAIGHT, (straight_top,))
        return (FLUSH if flush else HIGH_CARD, order)
    category = {
        (4, 1): FOUR_OF_A_KIND,
        (3, 2): FULL_HOUSE,
        (3, 1, 1): THREE_OF_A_KIND,
        (2, 2, 1): TWO_PAIRS,
        (2, 1, 1, 1): ONE_PAIR,
    }[shape]
    return (category, order)


@functools.cache
def _classes() -> tuple[tuple[int, tuple[int, ...], tuple[int, ...], bool], ...]:
    """All 7,462 classes sorted weakest first: (category, tie-break, values high to low, flush)."""
    out = []
    for combo in itertools.combinations_with_replacement(range(13), 5):
        if max(combo.count(v) for v in combo) > 4:
            continue
        values = tuple(sorted(combo, reverse=True))
        cat, tb = _class_order_key(values, False)
        out.append((cat, tb, values, False))
        if len(set(combo)) == 5:
            cat, tb = _class_order_key(values, True)
            out.append((cat, tb, values, True))
    out.sort(key=lambda c: (c[0], c[1]))
    assert len(out) == N_STRENGTHS
    return tuple(out)


def _build_category_table() -> np.ndarray:
    table = np.full(N_STRENGTHS + 1, -1, dtype=np.int8)
    for strength, (cat, *_rest) in enumerate(_classes(), start=1):
        table[strength] = cat
    table.flags.writeable = False
    return table


_CATEGORY_OF: Final = _build_category_table()


# --- lookup tables ---------------------------------------------------------------------------


def _card_keys() -> np.ndarray:
    """Additive key per card code: rank key << 9 | suit counter (fits in uint32 for 7 cards)."""
    codes = np.arange(52)
    values = _VALUE_OF_RANK[codes // 4]
    keys = (_RANK_KEYS[values] << _SUIT_BITS) | _SUIT_KEYS[codes % 4]
    out = keys.astype(np.uint32)
    out.flags.writeable = False
    return out


_CARD_KEYS: Final = _card_keys()
# Bit of each card's poker value in a 13-bit mask (for the flush path).
_VALUE_BIT: Final = (np.uint16(1) << _VALUE_OF_RANK[np.arange(52) // 4].astype(np.uint16)).astype(np.uint16)
_SUIT_OF: Final = (np.arange(52) % 4).astype(np.int8)


@functools.cache
def _five_card_strengths() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted non-flush rank-key sums with their strengths, and the flush strength per 13-bit mask."""
    sums, strengths = [], []
    flush_by_mask = np.zeros(1 << 13, dtype=np.uint16)
    for strength, (_cat, _tb, values, flush) in enumerate(_classes(), start=1):
        if flush:
            flush_by_mask[sum(1 << v for v in values)] = strength
        else:
            sums.append(int(_RANK_KEYS[list(values)].sum()))
            strengths.append(strength)
    sums_a = np.array(sums, dtype=np.int64)
    order = np.argsort(sums_a)
    return sums_a[order], np.array(strengths, dtype=np.uint16)[order], flush_by_mask


@functools.cache
def _rank_table(width: int) -> np.ndarray:
    """Non-flush strength indexed by the rank-key sum of ``width`` cards (0 = impossible sum)."""
    five_sums, five_strengths, _ = _five_card_strengths()
    multisets = np.array(
        [c for c in itertools.combinations_with_replacement(range(13), width)
         if max(c.count(v) for v in c) <= 4],
        dtype=np.int64,
    )
    keys = _RANK_KEYS[multisets]
    best = np.zeros(len(multisets), dtype=np.uint16)
    for subset in itertools.combinations(range(width), 5):
        s = keys[:, list(subset)].sum(axis=1)
        pos = np.searchsorted(five_sums, s)
        best = np.maximum(best, five_strengths[pos])
    totals = keys.sum(axis=1)
    if len(np.unique(totals)) != len(totals):  # pragma: no cover - a wrong key set
        raise AssertionError("rank keys do not give distinct sums")
    table = np.zeros(int(totals.max()) + 1, dtype=np.uint16)
    table[totals] = best
    table.flags.writeable = False
    return table


@functools.cache
def _flush_table() -> np.ndarray:
    """Best five-card flush strength inside each 13-bit value mask with at least five bits."""
    _, _, flush5 = _five_card_strengths()
    masks = np.arange(1 << 13, dtype=np.int64)
    bits = np.zeros_like(masks)
    for v in range(13):
        bits += (masks >> v) & 1
    # keep the five highest values: clear the lowest set bit while more than five remain
    top5 = masks.copy()
    for _ in range(8):
        more = _popcount13(top5) > 5
        top5 = np.where(more, top5 & (top5 - 1), top5)
    table = np.where(bits >= 5, flush5[top5], 0).astype(np.uint16)
    for straight in reversed(_STRAIGHT_MASKS):  # lowest first, so the highest wins
        has = (masks & straight) == straight
        table = np.where(has, flush5[straight], table).astype(np.uint16)
    table.flags.writeable = False
    return table


def _popcount13(x: np.ndarray) -> np.ndarray:
    n = np.zeros_like(x)
    for v in range(13):
        n += (x >> v) & 1
    return n


@functools.cache
def _flush_suit_table(width: int) -> np.ndarray:
    """Suit with five or more cards (0..3), or -1, indexed by the suit-counter sum of ``width`` cards."""
    s = np.arange(1 << _SUIT_BITS)
    hearts_d, hearts_h, hearts_s = s & 7, (s >> 3) & 7, (s >> 6) & 7
    clubs = width - hearts_d - hearts_h - hearts_s
    table = np.full(1 << _SUIT_BITS, -1, dtype=np.int8)
    for suit, count in enumerate((clubs, hearts_d, hearts_h, hearts_s)):
        table[count >= 5] = suit
    table.flags.writeable = False
    return table


# --- vectorised evaluation ---------------------------------------------------------------------


def _as_hands(cards: np.ndarray, width: int | None) -> np.ndarray:
    """Check shape and card range; one-line ValueError for bad input (distinctness is the caller's)."""
    arr = np.asarray(cards)
    if arr.ndim != 2:
        raise ValueError(f"hands must be a 2-D array (n, cards), got shape {arr.shape}")
    if width is not None and arr.shape[1] != width:
        raise ValueError(f"expected {width} cards per hand, got {arr.shape[1]}")
    if not 5 <= arr.shape[1] <= 7:
        raise ValueError(f"a poker hand has 5 to 7 cards, got {arr.shape[1]}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"card codes must be integers, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() > 51):
        raise ValueError("card codes must be 0..51 (unreadable, foreign or missing cards cannot be ranked)")
    return arr


def _evaluate_width(arr: np.ndarray) -> np.ndarray:
    n, width = arr.shape
    idx = arr.astype(np.intp, copy=False)
    keys = _CARD_KEYS[idx]
    total = keys[:, 0].copy()
    for j in range(1, width):
        total += keys[:, j]
    strength = _rank_table(width)[total >> _SUIT_BITS].astype(np.int32)
    flush_suit = _flush_suit_table(width)[total & ((1 << _SUIT_BITS) - 1)]
    rows = np.flatnonzero(flush_suit >= 0)
    if rows.size:
        sub = idx[rows]
        in_suit = _SUIT_OF[sub] == flush_suit[rows][:, None]
        mask = np.where(in_suit, _VALUE_BIT[sub], 0).sum(axis=1)
        strength[rows] = _flush_table()[mask]
    return strength


def evaluate7(cards: np.ndarray) -> np.ndarray:
    """Strength (int32, 1..7462, higher is better) of the best five of each row of seven cards."""
    return _evaluate_width(_as_hands(cards, 7))


def evaluate5(cards: np.ndarray) -> np.ndarray:
    """Strength of each row of five cards, on the same scale as :func:`evaluate7`."""
    return _evaluate_width(_as_hands(cards, 5))


def evaluate(cards: np.ndarray) -> np.ndarray:
    """Strength of the best five of each row, for rows of 5, 6 or 7 cards."""
    return _evaluate_width(_as_hands(cards, None))


def category(strengths: np.ndarray) -> np.ndarray:
    """Hand category (HIGH_CARD .. STRAIGHT_FLUSH) of each strength, as int8."""
    return _CATEGORY_OF[np.asarray(strengths)]


def is_royal(strengths: np.ndarray) -> np.ndarray:
    """True where the strength is a straight flush to the ace (MBS-3.9.1)."""
    return np.asarray(strengths) == ROYAL_FLUSH


# --- scalar helpers for dispute review ---------------------------------------------------------


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
    """Strength of one hand of 5 to 7 distinct card codes."""
    cards = _check_codes(codes)
    return int(_evaluate_width(np.array([cards], dtype=np.int64))[0])


def best_five(codes: Sequence[int]) -> tuple[int, ...]:
    """The five cards (in the order given) that make the hand's strength.

    When several five-card subsets are worth the same, the one whose positions come first is
    returned; a caller listing the hole cards first thus gets a hand that uses a hole card
    whenever any best hand does (MBS-4.1.2 "must include at least 1 Hole Card").
    """
    cards = _check_codes(codes)
    subsets = list(itertools.combinations(cards, 5))
    strengths = _evaluate_width(np.array(subsets, dtype=np.int64))
    return tuple(subsets[int(np.argmax(strengths))])  # argmax returns the first maximum


def describe(strength: int) -> str:
    """The hand in words, e.g. "Straight, six high" or "Two pairs, queens and nines, three kicker"."""
    s = int(strength)
    if not 1 <= s <= N_STRENGTHS:
        raise ValueError(f"strength {s} is not 1..{N_STRENGTHS}")
    cat, tb, values, _flush = _classes()[s - 1]
    name, plural = _VALUE_NAMES, _VALUE_PLURALS
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


__all__ = [
    "CATEGORY_NAMES", "FLUSH", "FOUR_OF_A_KIND", "FULL_HOUSE", "HIGH_CARD", "N_STRENGTHS",
    "ONE_PAIR", "RANKS", "ROYAL_FLUSH", "STRAIGHT", "STRAIGHT_FLUSH", "THREE_OF_A_KIND",
    "TWO_PAIRS", "best_five", "category", "describe", "evaluate", "evaluate5", "evaluate7",
    "evaluate_hand", "is_royal",
]
