"""Evaluation over arrays of hands: numpy only, no Python loop per hand.

Per chunk of hands (sized to stay in the CPU caches) the work is: four gathers of card-pair
keys (two adjacent cards of a uint8 row read in place as one uint16: no transposed copy and
half the gathers of one per card), three additions, one gather into the rank table, and a two-operation flush test.
The ~3% of hands with five or more cards of a suit are re-ranked through the flush table.
Large inputs are split across threads (numpy releases the GIL in these loops); each call makes
its own short-lived pool, so the module keeps no state.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import tables
from .classes import CATEGORY_OF, ROYAL_FLUSH

CHUNK = 1 << 16  # hands per kernel call: measured best on a 1 MiB-L2 machine (benchmarks/poker_eval.py)
MIN_HANDS_PER_THREAD = 1 << 17  # below this a second thread costs more than it saves


def _kernel(hands: np.ndarray, out: np.ndarray) -> None:
    """Strengths of ``hands`` (C-contiguous uint8, shape (m, w), codes 0..51) into ``out`` (int32)."""
    m, width = hands.shape
    flat = hands.reshape(-1)
    pairs = tables.pair_keys()
    total = None
    for j in range(0, width - 1, 2):
        two = np.ndarray((m,), dtype="<u2", buffer=flat, offset=j, strides=(width,))
        keys = np.take(pairs, two, mode="clip")
        if total is None:
            total = keys
        else:
            total += keys
    if width % 2:
        total += np.take(tables.single_keys(), flat[width - 1 :: width], mode="clip")
    np.take(tables.rank_table(width), total >> tables.RANK_SHIFT, out=out, mode="clip")
    total += tables.SUIT_ADD
    total &= tables.FLUSH_BITS
    rows = np.flatnonzero(total != 0)  # nonzero on a bool mask: ~5x faster than on int64 (measured)
    if rows.size:
        out[rows] = _flush_strengths(np.take(hands, rows, axis=0), np.take(total, rows))


def _flush_strengths(hands: np.ndarray, flush_bits: np.ndarray) -> np.ndarray:
    """Strengths of hands holding a flush; ``flush_bits`` has the top bit of the flush suit's field."""
    suit = (flush_bits >= 0x80).astype(np.intp) + (flush_bits >= 0x800) + (flush_bits >= 0x8000)
    index = np.add(hands.T, suit * 64, order="C")  # (cards, hands): the sum runs along rows
    bits = np.take(tables.flush_value_bits(), index, mode="clip")
    return np.take(tables.flush_table(), bits.sum(axis=0), mode="clip")


def _check_width(arr: np.ndarray, width: int | None) -> None:
    if arr.ndim != 2:
        raise ValueError(f"hands must be a 2-D array (hands, cards), got shape {arr.shape}")
    if width is not None and arr.shape[1] != width:
        raise ValueError(f"expected {width} cards per hand, got {arr.shape[1]}")
    if not 5 <= arr.shape[1] <= 7:
        raise ValueError(f"a poker hand has 5 to 7 cards, got {arr.shape[1]}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"card codes must be integers, got dtype {arr.dtype}")


def _bad_card(arr: np.ndarray, offset: int) -> ValueError:
    row, col = np.argwhere((arr < 0) | (arr > 51))[0]
    return ValueError(
        f"hand {offset + row} has card code {arr[row, col]}, not a card 0..51 "
        "(unreadable, foreign or missing cards cannot be ranked)"
    )


def _evaluate_span(arr: np.ndarray, out: np.ndarray, lo: int, hi: int) -> None:
    """Evaluate rows lo..hi of ``arr`` chunk by chunk, checking the card range as it goes."""
    direct = arr.dtype.itemsize == 1 and arr.flags.c_contiguous
    scratch = None if direct else np.empty((min(CHUNK, hi - lo), arr.shape[1]), dtype=np.uint8)
    for start in range(lo, hi, CHUNK):
        stop = min(start + CHUNK, hi)
        part = arr[start:stop]
        if direct:
            hands = part.view(np.uint8)  # int8 negatives become >= 128: caught below
        else:
            if arr.dtype.itemsize > 1 and np.bitwise_or.reduce(part, axis=None) >> 6:
                raise _bad_card(part, start)  # a negative or a code >= 64 sets a bit above 63
            hands = scratch[: stop - start]
            np.copyto(hands, part, casting="unsafe")
        if hands.max() > 51:
            raise _bad_card(part.astype(np.int64), start)
        _kernel(hands, out[start:stop])


def _workers(n: int, workers: int | None) -> int:
    if workers is not None:
        return max(1, int(workers))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, n // MIN_HANDS_PER_THREAD))


def evaluate_array(cards: np.ndarray, width: int | None = None, workers: int | None = None) -> np.ndarray:
    """Strengths of the rows of ``cards`` (see :func:`evaluate7`); ``width`` None accepts 5..7."""
    arr = np.asarray(cards)
    _check_width(arr, width)
    n = arr.shape[0]
    out = np.empty(n, dtype=np.int32)
    tables.rank_table(arr.shape[1]), tables.flush_table()  # built once, before any thread needs them
    threads = _workers(n, workers)
    if threads == 1:
        _evaluate_span(arr, out, 0, n)
        return out
    bounds = np.linspace(0, n, threads + 1).astype(int)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [pool.submit(_evaluate_span, arr, out, lo, hi) for lo, hi in zip(bounds, bounds[1:])]
        for f in futures:
            f.result()  # re-raises a bad card found by any thread
    return out


def evaluate7(cards: np.ndarray, *, workers: int | None = None) -> np.ndarray:
    """Strength of each row of seven cards (shape (n, 7), codes 0..51, distinct in a row).

    Returns int32 in 1..7462: higher is better, equal is a stand-off (HTB-5.4), comparable
    across rows and with :func:`evaluate5`. uint8/int8 C-contiguous input is read in place
    (fastest); other integer arrays are converted chunk by chunk. Codes outside 0..51 raise a
    one-line ValueError; repeated cards in a row are not detected (the caller deals them).
    ``workers``: threads to use (default: the available cores for large inputs, else 1).
    """
    return evaluate_array(cards, 7, workers)


def evaluate5(cards: np.ndarray, *, workers: int | None = None) -> np.ndarray:
    """Strength of each row of five cards, on the same scale as :func:`evaluate7`."""
    return evaluate_array(cards, 5, workers)


def evaluate(cards: np.ndarray, *, workers: int | None = None) -> np.ndarray:
    """Strength of the best five of each row, for rows of 5, 6 or 7 cards (one width per call)."""
    return evaluate_array(cards, None, workers)


def category(strengths: np.ndarray) -> np.ndarray:
    """Hand category (HIGH_CARD .. STRAIGHT_FLUSH) of each strength, as int8."""
    s = np.asarray(strengths)
    if s.size and (s.min() < 1 or s.max() > ROYAL_FLUSH):
        raise ValueError(f"strengths must be 1..{ROYAL_FLUSH}")
    return CATEGORY_OF[s]


def is_royal(strengths: np.ndarray) -> np.ndarray:
    """True where the strength is a straight flush to the ace (HTB-4.5, MBS-3.9.1)."""
    return np.asarray(strengths) == ROYAL_FLUSH
