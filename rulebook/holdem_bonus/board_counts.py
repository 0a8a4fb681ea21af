"""Per full board of five cards: how each two-card holding fares against every dealer holding, counted once.

Why: the exact count of the main game (``strategy.flop_values``) needs, for every flop, every turn-river pair and
every holding, the holding's wins and ties against the 990 dealer holdings that share no card with it. A board of
five cards is the turn-river completion of 10 flops, and boards that differ only by a permutation of suits rank
their holdings alike: of the 2,598,960 boards, 134,459 differ otherwise. Counting each of those once, and reading
every flop's boards from them, ranks 134,459 boards for the 1,755 flop classes instead of their 2,063,880 board rows
(1,286,792 when each flop's own suit symmetries were used, as they were before: 360 -> 68 CPU s for the whole
count). The counts are whole numbers, so a flop's figures are the same to the last bit.

:class:`BoardCounts` keeps them as it meets them: per board class, per holding of the 47 cards left (in code order,
``rest[_I47[k]], rest[_J47[k]]``), in one int16 the wins and the hand's category (the Ante's qualifier, HTB-5.2, is a
category), in another the losses; the ties are the rest of the 990. All 134,459 classes take 581 MB; a count of a few
flops fills a few rows. A memo of a pure function: what it returns never depends on what it met before.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from rulebook import poker

#: five-card boards up to a permutation of suits (counted: tests/test_holdem_odds.py); x 1,081 holdings, 145 million
#: flat indices, well within an int32
BOARD_CLASSES = 134_459
_M = 47  # cards left on a full board
_I47, _J47 = np.triu_indices(_M, 1)
HOLDINGS = len(_I47)  # 1,081
#: [position, position] -> their holding among the 47 cards left (either order); a position with itself -> 0
_PAIR47 = np.zeros((_M, _M), dtype=np.int64)
_PAIR47[_I47, _J47] = _PAIR47[_J47, _I47] = np.arange(HOLDINGS)
_PAIR47_32 = _PAIR47.astype(np.int32).ravel()  # the same, flattened: [position x 47 + position]
_IJ47, _JI47 = _I47 * _M + _J47, _J47 * _M + _I47  # holding k's place in a flattened [card, other card] square
_DIAGONAL47 = np.arange(_M) * (_M + 1)
_NONE = 8191  # above every strength (1..7462): a card with itself never counts as lower or equal
_WIN_BITS = 10  # wins are at most 990: the category sits above them
DEALERS = 990  # dealer holdings that share no card with a holding on a full board
_SUIT_MOVES = np.array([np.arange(52) - np.arange(52) % 4 + np.array(p)[np.arange(52) % 4]
                        for p in permutations(range(4))], dtype=np.int64)  # [permutation, card] -> card moved


def less_and_equal(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the last axis: for every element, how many of the row are strictly less, and equal.

    Each element is sorted with its position packed under its value (one int32 key, all keys of a row
    distinct), which numpy's vectorised sort orders several times faster than an ``argsort`` of the values.
    ``x``: int16 (strengths), rows of at most 32,767, so that a key fits in 32 bits."""
    n = x.shape[-1]
    if x.dtype != np.int16 or n > np.iinfo(np.int16).max:
        raise ValueError(f"expected int16 rows of at most 32,767, got {x.dtype} rows of {n}")
    shift = max(int(n - 1).bit_length(), 1)
    key = (x.astype(np.int32, order="C") << shift) | np.arange(n, dtype=np.int32)
    key.sort(axis=-1)
    sv, order = key >> shift, key & ((1 << shift) - 1)
    new = np.empty(sv.shape, dtype=bool)  # the first of a run of equal values
    new[..., 0] = True
    np.not_equal(sv[..., 1:], sv[..., :-1], out=new[..., 1:])
    idx = np.broadcast_to(np.arange(n, dtype=np.int16), sv.shape)
    first = np.maximum.accumulate(np.where(new, idx, 0), axis=-1)
    end = np.empty(sv.shape, dtype=bool)
    end[..., -1] = True
    end[..., :-1] = new[..., 1:]
    last = np.minimum.accumulate(np.where(end, idx, n)[..., ::-1], axis=-1)[..., ::-1]
    rows = np.arange(x.size // n, dtype=np.int64).reshape(x.shape[:-1] + (1,)) * n
    at = (order + rows).ravel()  # where each sorted element sits in x, flattened
    less, equal = np.empty(x.size, dtype=first.dtype), np.empty(x.size, dtype=first.dtype)
    less[at] = first.ravel()
    equal[at] = (last - first + 1).astype(first.dtype).ravel()
    return less.reshape(x.shape), equal.reshape(x.shape)


def count_boards(boards: np.ndarray, rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(wins and category, losses) of every holding of the 47 cards left on each board of ``boards`` ((n, 5) codes;
    ``rest``: those cards, :func:`_cards_left`): int16 (n, 1,081) each; the first is ``wins | category << 10``.
    Against every dealer holding that shares no card with the player's: its rank among all 1,081, less the holdings
    that share one of its two cards."""
    n = len(boards)
    hands = np.empty((n, HOLDINGS, 7), dtype=np.uint8)
    hands[:, :, :5] = boards[:, None, :]
    hands[:, :, 5], hands[:, :, 6] = rest[:, _I47], rest[:, _J47]
    strength = poker.evaluate7(hands.reshape(-1, 7)).reshape(n, HOLDINGS).astype(np.int16)
    all_less, all_equal = less_and_equal(strength)
    by_card = np.take(strength, _PAIR47.ravel(), axis=1)  # [board, card x other card], flattened
    by_card[:, _DIAGONAL47] = _NONE
    card_less, card_equal = (a.reshape(n, _M * _M) for a in less_and_equal(by_card.reshape(n, _M, _M)))
    wins = all_less - np.take(card_less, _IJ47, axis=1) - np.take(card_less, _JI47, axis=1)
    # the holding itself is in both of its cards' rows
    ties = all_equal - np.take(card_equal, _IJ47, axis=1) - np.take(card_equal, _JI47, axis=1) + 1
    category = poker.category(strength.ravel()).reshape(n, HOLDINGS).astype(np.int16)
    return (wins.astype(np.int16) | (category << _WIN_BITS)).astype(np.int16), (DEALERS - wins - ties).astype(np.int16)


def _cards_left(boards: np.ndarray) -> np.ndarray:
    """(n, 47) uint8: the cards not on each board, in code order."""
    on = np.zeros((len(boards), 52), dtype=bool)
    on[np.arange(len(boards))[:, None], boards] = True
    return np.nonzero(~on)[1].reshape(len(boards), _M).astype(np.uint8)


class BoardCounts:
    """The counts of the board classes met so far, and the way from any board to its class's row. One thread at a
    time: a new class takes the next row (the count spreads its chunks over processes, each with its own)."""

    def __init__(self) -> None:
        self._row: dict[int, int] = {}  # a class's least bit mask of cards -> its row
        # rows are committed as they are written (untouched pages of a large zeroed array take no memory); the row
        # after the last class stays 0: a holding that shares a card with its board reads it (no win, no loss)
        self._wins_category = np.zeros((BOARD_CLASSES + 1, HOLDINGS), dtype=np.int16)
        self._losses = np.zeros((BOARD_CLASSES + 1, HOLDINGS), dtype=np.int16)
        self._position = np.zeros((BOARD_CLASSES, 52), dtype=np.int8)  # a card's place among the 47 left; -1 on it

    def __len__(self) -> int:
        return len(self._row)

    def holdings(self, boards: np.ndarray, cards: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                 blank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(wins, losses, category), int16 (len(boards), len(pairs[0])) each: per board of ``boards`` ((n, 5) codes)
        and holding ``cards[pairs[0][k]], cards[pairs[1][k]]`` of ``cards`` (codes). ``blank``: the flat places of
        the (board, holding) entries whose holding shares a card with the board, read as no win and no loss (any
        other such entry reads a meaningless count: the caller leaves it out)."""
        moved = _SUIT_MOVES[:, boards]  # [permutation, board, card]
        masks = np.bitwise_or.reduce(np.int64(1) << moved, axis=2)
        how = masks.argmin(axis=0)  # a permutation that moves each board onto its class's least mask
        least = masks[how, np.arange(len(boards))]
        rows = self._rows(least, np.sort(moved[how, np.arange(len(boards))], axis=1))
        # each holding moved as its board was, then found among the class's 47 cards left (in int32: the flat
        # index of a class's holding fits, and the index arrays of a flop, 1,176 x 1,176, are half as long to write)
        where = np.maximum(self._position[rows[:, None], _SUIT_MOVES[how][:, cards]], 0).astype(np.int32)
        at = where[:, pairs[0]] * _M
        at += where[:, pairs[1]]
        at = _PAIR47_32.take(at)
        at += (rows * HOLDINGS).astype(np.int32)[:, None]
        if blank is not None:
            at.ravel()[blank] = BOARD_CLASSES * HOLDINGS
        wins_category = self._wins_category.take(at)
        return wins_category & ((1 << _WIN_BITS) - 1), self._losses.take(at), wins_category >> _WIN_BITS

    def _rows(self, least: np.ndarray, canonical: np.ndarray) -> np.ndarray:
        """Each board class's row, its counts made first when it is new (``canonical``: its cards, the class's own)."""
        known = self._row
        rows = np.fromiter((known.get(m, -1) for m in least.tolist()), dtype=np.int64, count=len(least))
        new = np.flatnonzero(rows < 0)
        if len(new):
            firsts = {}
            for i in new.tolist():  # a class met twice among these boards is counted once
                firsts.setdefault(int(least[i]), i)
            first = np.array(list(firsts.values()), dtype=np.int64)
            start = len(known)
            if start + len(first) > BOARD_CLASSES:
                raise AssertionError(f"more than {BOARD_CLASSES} classes of five-card boards")
            at = np.arange(start, start + len(first))
            boards = canonical[first].astype(np.uint8)
            rest = _cards_left(boards)
            self._wins_category[at], self._losses[at] = count_boards(boards, rest)
            position = np.full((len(first), 52), -1, dtype=np.int8)
            position[np.arange(len(first))[:, None], rest] = np.arange(_M, dtype=np.int8)
            self._position[at] = position
            for m, r in zip(firsts, at.tolist()):
                known[m] = r
            rows[new] = [known[m] for m in least[new].tolist()]  # the new ones' rows, the others' as found
        return rows
