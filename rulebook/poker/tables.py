"""Lookup tables of the vectorised evaluator, derived from :mod:`.classes` (nothing copied).

Each card carries one additive int64 key: ``rank_key << 16 | 1 << (4 * suit)``. Over a hand,
the high part sums the rank keys and the low 16 bits count the cards of each suit in four
4-bit fields. The rank keys (SKPokerEval's) are chosen so that every multiset of up to seven
ranks, each at most four times, has its own sum: the rank sum therefore identifies the hand's
ranks exactly and indexes a table of non-flush strengths, one per hand width. A suit field
reaches 5 only for a flush; adding 3 to each field sets its top bit exactly then (counts are
at most 7, so no field overflows into the next). Flush hands are then ranked by the 13-bit
mask of the flush suit's values.

Tables are built on first use (functools.cache) and are read-only; building all of them takes
a fraction of a second (``benchmarks/poker_eval.py`` prints the time).
"""

from __future__ import annotations

import functools
import itertools
from typing import Final

import numpy as np

from .classes import STRAIGHT_MASKS, hand_classes

#: Poker value (2 = 0 .. K = 11, A = 12) of each rank index of rulebook.cards (A = 0 .. K = 12).
VALUE_OF_RANK: Final = np.array([12, *range(12)], dtype=np.int64)

#: Additive rank keys by poker value; every multiset of <= 7 values (each <= 4 times) has its own sum.
RANK_KEYS: Final = np.array(
    [0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181], dtype=np.int64
)
RANK_SHIFT: Final = 16
SUIT_ADD: Final = 0x3333  # + 3 in each 4-bit suit field ...
FLUSH_BITS: Final = 0x8888  # ... sets its top bit iff the suit has five or more cards

_CODES: Final = np.arange(52)
_VALUES: Final = VALUE_OF_RANK[_CODES // 4]
_SUITS: Final = _CODES % 4


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


#: Key of each card code.
CARD_KEYS: Final = _frozen((RANK_KEYS[_VALUES] << RANK_SHIFT) | (1 << (4 * _SUITS)))


@functools.cache
def pair_keys() -> np.ndarray:
    """Key sum of two cards read as one little-endian uint16: index ``first + 256 * second``."""
    table = np.zeros(52 * 256, dtype=np.int64)
    first, second = np.meshgrid(_CODES, _CODES, indexing="ij")
    table[first + 256 * second] = CARD_KEYS[first] + CARD_KEYS[second]
    return _frozen(table)


@functools.cache
def single_keys() -> np.ndarray:
    """Key of one card, indexable by any uint8 (codes above 51 are rejected before lookup)."""
    table = np.zeros(256, dtype=np.int64)
    table[:52] = CARD_KEYS
    return _frozen(table)


@functools.cache
def five_card_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted rank-key sums of the non-flush classes, their strengths, flush strength per 13-bit mask)."""
    classes = hand_classes()
    values = np.array([c.values for c in classes], dtype=np.int64)
    flush = np.array([c.flush for c in classes])
    strengths = np.arange(1, len(classes) + 1, dtype=np.int32)
    flush_by_mask = np.zeros(1 << 13, dtype=np.int32)
    flush_by_mask[(1 << values[flush]).sum(axis=1)] = strengths[flush]
    sums = RANK_KEYS[values[~flush]].sum(axis=1)
    order = np.argsort(sums)
    return _frozen(sums[order]), _frozen(strengths[~flush][order]), _frozen(flush_by_mask)


def rank_multisets(width: int) -> np.ndarray:
    """Every multiset of ``width`` poker values (each at most 4 times), as ascending value rows."""
    rows = np.arange(13, dtype=np.int64)[:, None]
    for _ in range(width - 1):
        last = rows[:, -1]
        repeats = 13 - last  # the next value is at least the last one
        grown = np.repeat(rows, repeats, axis=0)
        starts = np.repeat(np.cumsum(repeats) - repeats, repeats)
        nxt = np.repeat(last, repeats) + (np.arange(len(grown)) - starts)
        rows = np.hstack([grown, nxt[:, None]])
    if width > 4:  # drop five equal values in a row (one deck has four of each rank)
        five_same = (rows[:, 4:] == rows[:, : width - 4]).any(axis=1)
        rows = rows[~five_same]
    return rows


@functools.cache
def rank_table(width: int) -> np.ndarray:
    """Non-flush strength (int32) of ``width`` cards indexed by their rank-key sum (0 = impossible)."""
    five_sums, five_strengths, _ = five_card_tables()
    if width == 5:
        table = np.zeros(int(five_sums.max()) + 1, dtype=np.int32)
        table[five_sums] = five_strengths
        return _frozen(table)
    strength_of_five = rank_table(5)
    values = rank_multisets(width)
    keys = RANK_KEYS[values]
    totals = keys.sum(axis=1)
    best = np.zeros(len(values), dtype=np.int32)
    for left_out in itertools.combinations(range(width), width - 5):  # the best five of the width
        np.maximum(best, strength_of_five[totals - keys[:, list(left_out)].sum(axis=1)], out=best)
    if len(np.unique(totals)) != len(totals):  # pragma: no cover - a wrong key set
        raise AssertionError("rank keys do not give distinct sums")
    table = np.zeros(int(totals.max()) + 1, dtype=np.int32)
    table[totals] = best
    return _frozen(table)


@functools.cache
def flush_table() -> np.ndarray:
    """Best five-card flush strength (int32) inside each 13-bit value mask (0 below five bits)."""
    _, _, flush5 = five_card_tables()
    masks = np.arange(1 << 13, dtype=np.int64)
    top5 = masks.copy()
    for _ in range(8):  # clear the lowest set bit while more than five remain
        top5 = np.where(_popcount13(top5) > 5, top5 & (top5 - 1), top5)
    table = np.where(_popcount13(masks) >= 5, flush5[top5], 0).astype(np.int32)
    for straight in reversed(STRAIGHT_MASKS):  # lowest first, so the highest straight flush wins
        table = np.where((masks & straight) == straight, flush5[straight], table).astype(np.int32)
    return _frozen(table)


def _popcount13(x: np.ndarray) -> np.ndarray:
    n = np.zeros_like(x)
    for v in range(13):
        n += (x >> v) & 1
    return n


@functools.cache
def flush_value_bits() -> np.ndarray:
    """``1 << value`` of a card if it is of the given suit, else 0: index ``suit * 64 + code``."""
    table = np.zeros(4 * 64, dtype=np.int64)
    table[_SUITS * 64 + _CODES] = 1 << _VALUES
    return _frozen(table)


def build_all() -> None:
    """Build every table now (what the first evaluations of 5, 6 and 7 cards would do)."""
    pair_keys(), single_keys(), flush_table(), flush_value_bits()
    for width in (5, 6, 7):
        rank_table(width)
