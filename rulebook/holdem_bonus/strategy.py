"""The player's strategies for the Hold'em Bonus main game, and the exact value of the best one.

Why the best one is cheap to state: after the Flop bet the player's only choices are the Turn and
River bets (HTB-4.11.3, 4.11.4; MBS-3.7.2), each one Ante, each settled 1 to 1 on the same final
comparison as the Flop bet (HTB-5.2-5.4), and neither changes what the other pays or what the player
may do next. So each is worth placing exactly when, over every card still unseen, the player's hand
wins more often than it loses: ``P(win) > P(lose)``, counted over the remaining board and the
dealer's two hole cards. That rule *is* optimal after the flop (no look-ahead can improve on it).
Before the flop the published optimal play folds only 2-3 to 2-7 unsuited; :func:`flop_values`
also returns every starting hand's value, so a test checks that list rather than trusting it.

How the value is counted, per flop (:func:`flop_values`): for every board completion (1,176 turn-river
pairs) and every two-card holding of the 49 cards left, the holding's wins, ties and losses against every
disjoint dealer holding (990). A full board's counts depend on its five cards alone, and boards equal but for
suits count alike: each of the 134,459 classes of full board is counted once, the first time a flop meets it
(:mod:`board_counts`: its 1,081 holdings evaluated and ranked, the overlapping holdings subtracted per card), and
every flop reads its boards from those counts. Over the 1,755 classes of flop under suit permutation
(:func:`flop_classes`) the sum is the exact expectation; a random sample of flops gives an estimate with a
standard error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations

import numpy as np

from rulebook.holdem_bonus.board_counts import DEALERS as _DEALERS
from rulebook.holdem_bonus.board_counts import HOLDINGS as _HOLDINGS
from rulebook.holdem_bonus.board_counts import BoardCounts

RANKS = "A23456789TJQK"  # rulebook.cards order: code = rank * 4 + suit


@dataclass(frozen=True, slots=True)
class Strategy:
    """A named way of playing the main game. ``kind``: ``exact_ev`` (decisions counted exactly over
    the unseen cards, :func:`flop_values`) or ``rule`` (decisions from the cards seen, ``odds.py``)."""

    name: str
    kind: str
    description: str
    preflop_fold: frozenset[str] = frozenset()  # starting hands folded, e.g. "32o" (see starting_hand)


#: The published optimal pre-flop play: fold 2-3 to 2-7 unsuited, play everything else.
PREFLOP_FOLD = frozenset({"32o", "42o", "52o", "62o", "72o"})

STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "optimal",
            "exact_ev",
            "fold 2-3 to 2-7 unsuited, play every other hand; bet the Turn, and the River, exactly when the hand wins "
            "more often than it loses against every card still unseen (the rest of the board and the dealer's two "
            "cards, counted exactly): optimal after the flop, since each of these bets is settled on its own",
            PREFLOP_FOLD,
        ),
        Strategy(
            "basic",
            "rule",
            "fold 2-3 to 2-7 unsuited, play every other hand to the flop; bet the Turn with a pocket pair, a hole card "
            "paired on the flop, a straight or better on the hole cards and the flop, or four cards of a hole card's "
            "suit; bet the River with a pocket pair, a hole card paired on the board so far, or a straight or better; "
            "else check",
            PREFLOP_FOLD,
        ),
        Strategy(
            "pair_with_hole",
            "rule",
            "play every hand to the flop; bet the Turn (and the River) when a hole card is paired -- a pocket pair, "
            "or a hole card matching a community card seen so far -- else check",
        ),
        Strategy("check", "rule", "play every hand to the flop, then check the Turn and the River"),
    )
}
DEFAULT_STRATEGY = "optimal"


def starting_hand(a: int, b: int) -> str:
    """The class of two hole cards, higher rank first: ``AA``, ``AKs``, ``72o``."""
    order = "AKQJT98765432"
    ra, rb = RANKS[a // 4], RANKS[b // 4]
    hi, lo = sorted((ra, rb), key=order.index)
    if hi == lo:
        return hi + lo
    return hi + lo + ("s" if a % 4 == b % 4 else "o")


# --------------------------------------------------------------------------------------------
# the exact per-flop count

_N = 49  # cards left after the flop
_IU, _JU = np.triu_indices(_N, 1)  # the 1,176 pairs of them: holdings and turn-river pairs alike
_P = len(_IU)
_PAIR = -np.ones((_N, _N), dtype=np.int64)
_PAIR[_IU, _JU] = np.arange(_P)
_PAIR[_JU, _IU] = np.arange(_P)
_PAIR_OK = _PAIR >= 0
_BITS = (np.int64(1) << _IU) | (np.int64(1) << _JU)
_DISJOINT = (_BITS[:, None] & _BITS[None, :]) == 0  # [board pair, holding]: no card shared
_SHARED = np.flatnonzero(~_DISJOINT)  # [board pair x holding]: the holdings that share a card with the board
_T_NOT_IN_H = ~((_IU[:, None] == np.arange(_N)) | (_JU[:, None] == np.arange(_N)))  # [holding, turn card]
_PAIR_OR_PAST = np.where(_PAIR_OK, _PAIR, _P).ravel()  # [card x other card] -> their pair; a card with itself -> _P


@dataclass(frozen=True, slots=True)
class FlopValues:
    """One flop, every holding of the 49 cards left: the expected net per unit of Ante and the bets made."""

    cards: np.ndarray  # (49,) the cards left, in code order; holding k is cards[_IU[k]], cards[_JU[k]]
    ev: np.ndarray  # (1176,) expected net of Ante + Flop + Turn + River, the fold list applied
    play_ev: np.ndarray  # (1176,) the same if the hand is played (whatever the fold list says)
    folded: np.ndarray  # (1176,) bool
    turn_bet: np.ndarray  # (1176,) bool: the Turn bet is placed
    river_rate: np.ndarray  # (1176,) share of turn cards after which the River bet is placed
    win: np.ndarray  # (1176,) probability the hand beats the dealer's (0 when folded)
    tie: np.ndarray  # (1176,) probability of a stand-off (0 when folded)


@lru_cache(maxsize=1)
def shared_board_counts() -> BoardCounts:
    """The process's board counts: every count of flops in it reads and fills the same (581 MB once all 134,459
    board classes are met, as an exact count meets them)."""
    return BoardCounts()


def flop_values(flop, qualifier: int, preflop_fold: frozenset[str] = PREFLOP_FOLD,
                counts: BoardCounts | None = None) -> FlopValues:
    """Exact values of the ``optimal`` strategy on one flop (three card codes); ``qualifier`` is the
    category a winning hand needs for the Ante to be paid (``poker.STRAIGHT``, HTB-5.2; ``poker.FLUSH``, the guide).

    Each board's wins and losses per holding are read from ``counts`` (:mod:`board_counts`; the process's own by
    default), which counts a board class the first time any flop meets it."""
    flop = np.asarray(flop, dtype=np.uint8)
    rest = np.setdiff1d(np.arange(52, dtype=np.uint8), flop)
    boards = np.empty((_P, 5), dtype=np.int64)
    boards[:, :3] = flop
    boards[:, 3], boards[:, 4] = rest[_IU], rest[_JU]
    wins, losses, category = (shared_board_counts() if counts is None else counts).holdings(
        boards, rest.astype(np.int64), (_IU, _JU), _SHARED)
    # a 1-unit bet's expected net per (board, holding) is net / 990: kept in whole numbers until the
    # last division, so a bet worth exactly nothing is never placed by a rounding
    net = wins - losses  # (int16: at most 990 either way)
    qualified = category >= qualifier  # wins and losses are 0 where no holding is
    won, lost = wins.sum(axis=0), losses.sum(axis=0)
    ante = ((wins * qualified).sum(axis=0) - lost) / (_DEALERS * _HOLDINGS)
    turn = (won - lost) / (_DEALERS * _HOLDINGS)  # the Turn (and Flop) bet's value, over every turn and river
    # the River bet's value after each turn card: over the 46 river cards left, the rows of the turn-river pairs
    # of each turn card summed (a row of 0 for the card with itself)
    by_pair = np.zeros((_P + 1, _P), dtype=np.int32)  # [turn-river pair, holding], then a row of 0
    by_pair[:_P] = net
    river = np.take(by_pair, _PAIR_OR_PAST, axis=0).reshape(_N, _N, _P).sum(axis=1)  # [turn card, holding]
    # per holding in a row of its own, so that its sum over the turn cards below adds as it always has, bit for bit
    river = np.ascontiguousarray(river.T) / (_DEALERS * 46)
    river_bet = (river > 0) & _T_NOT_IN_H
    play = ante + 2 * turn + np.maximum(turn, 0) + (np.maximum(river, 0) * _T_NOT_IN_H).sum(axis=1) / 47
    classes = _classes(rest)
    folded = np.isin(classes, list(preflop_fold)) if preflop_fold else np.zeros(_P, dtype=bool)
    tied = _DEALERS * _HOLDINGS - won - lost  # a holding meets 1,081 boards, each with 990 dealer holdings
    win = np.where(folded, 0.0, won / (_DEALERS * _HOLDINGS))
    tie = np.where(folded, 0.0, tied / (_DEALERS * _HOLDINGS))
    river_rate = np.where(folded, 0.0, river_bet.sum(axis=1) / 47)
    return FlopValues(rest, np.where(folded, -1.0, play), play, folded, (turn > 0) & ~folded, river_rate, win, tie)


@lru_cache(maxsize=1)
def _starting_hands() -> np.ndarray:
    """[card, other card] -> their starting hand (:func:`starting_hand`; a card with itself: ``""``)."""
    return np.array([[starting_hand(a, b) if a != b else "" for b in range(52)] for a in range(52)])


def _classes(rest: np.ndarray) -> np.ndarray:
    """The starting hand of each holding of the cards ``rest`` (a flop counts twice as many as it has holdings: read,
    not named again, they were a tenth of the whole count)."""
    return _starting_hands()[rest[_IU], rest[_JU]]


@lru_cache(maxsize=1)
def flop_classes() -> tuple[np.ndarray, np.ndarray]:
    """The 1,755 flops that differ other than by a permutation of suits, and how many of the 22,100 each stands for."""
    perms = list(permutations(range(4)))
    seen: dict[tuple[int, ...], int] = {}
    for flop in combinations(range(52), 3):
        key = min(tuple(sorted(c - c % 4 + p[c % 4] for c in flop)) for p in perms)
        seen[key] = seen.get(key, 0) + 1
    keys = sorted(seen)
    return np.array(keys, dtype=np.uint8), np.array([seen[k] for k in keys], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class MainGameValue:
    """The main game's value under the ``optimal`` strategy, per unit of Ante."""

    expectation: float  # expected net (negative: the house's edge)
    standard_error: float  # 0.0 when every flop class was counted
    win: float
    push: float
    turn_rate: float  # share of hands (folded ones included) that bet the Turn
    river_rate: float
    flops: int  # flops counted
    exact: bool
    starting_hands: dict[str, float]  # expected net of playing each starting hand (exact runs only)


_CHUNK_FLOPS = 45  # flops a chunk: 39 chunks for the 1,755 classes, each a few CPU-seconds


@dataclass(frozen=True, slots=True)
class FlopChunk:
    """What one run of flops contributes to the main game's value, flop by flop (combined in flop order, so that a
    count split over processes sums its floats in the same order as one that is not)."""

    per_flop: np.ndarray  # (flops, 5): expected net, win, tie, Turn bet share, River bet share, per flop
    # per flop (exact counts only; empty otherwise): its starting hands, each one's summed value of playing, and how
    # many holdings it has on the flop
    classes: tuple[tuple[tuple[str, ...], tuple[float, ...], tuple[int, ...]], ...]


def count_flops(job: tuple[np.ndarray, int, frozenset[str], bool]) -> FlopChunk:
    """One chunk of the count: ``(flops, qualifier, preflop fold list, by starting hand)``. A plain function of plain
    data, so that a caller may run chunks on other processes (``main_game_value``'s ``map_chunks``)."""
    cards, qualifier, preflop_fold, by_hand = job
    per_flop = np.empty((len(cards), 5))
    classes = []
    for k, flop in enumerate(cards):
        fv = flop_values(flop, qualifier, preflop_fold)
        per_flop[k] = (fv.ev.mean(), fv.win.mean(), fv.tie.mean(), fv.turn_bet.mean(), fv.river_rate.mean())
        if by_hand:
            names, of_holding = np.unique(_classes(fv.cards), return_inverse=True)
            sums, counts = np.bincount(of_holding, weights=fv.play_ev), np.bincount(of_holding)
            classes.append((tuple(names.tolist()), tuple(sums.tolist()), tuple(counts.tolist())))
    return FlopChunk(per_flop, tuple(classes))


def main_game_value(qualifier: int, flops: int | None = None, seed: int = 0,
                    preflop_fold: frozenset[str] = PREFLOP_FOLD,
                    progress: Callable[[int, int], None] | None = None,
                    map_chunks: Callable[[Callable, list], Iterable[FlopChunk]] = map) -> MainGameValue:
    """Every flop class counted exactly (``flops`` None: 1,755 flops, about a CPU-minute in one process, which then
    holds 0.7 GB of board counts), or a random sample of ``flops`` flops, each counted exactly, with the standard
    error between flops. ``progress(done, total)`` is called as the flops are counted: the whole count takes a minute
    or more, and whoever asked for it (``pitaudit odds``) can show how far it is. ``map_chunks(count_flops, chunks)``
    yields the chunks' counts in order: the builtin ``map`` here, a process pool's to spread them over cores (the
    same figures to the last bit)."""
    if flops is None:
        cards, weights = flop_classes()
    else:
        if flops < 2:
            raise ValueError(f"flops must be at least 2 for a standard error, got {flops}")
        rng = np.random.default_rng(seed)
        cards = np.array([np.sort(rng.choice(52, 3, replace=False)) for _ in range(flops)], dtype=np.uint8)
        weights = np.ones(flops, dtype=np.int64)
    chunks = [(cards[i:i + _CHUNK_FLOPS], qualifier, preflop_fold, flops is None)
              for i in range(0, len(cards), _CHUNK_FLOPS)]
    per_flop = np.empty((len(cards), 5))
    class_sum: dict[str, float] = {}
    class_n: dict[str, float] = {}
    done = 0
    for chunk in map_chunks(count_flops, chunks):
        per_flop[done:done + len(chunk.per_flop)] = chunk.per_flop
        for k, (names, sums, counts) in enumerate(chunk.classes, start=done):
            w = weights[k]
            for name, total, n in zip(names, sums, counts):
                class_sum[name] = class_sum.get(name, 0.0) + w * total
                class_n[name] = class_n.get(name, 0.0) + w * n
        done += len(chunk.per_flop)
        if progress is not None:
            progress(done, len(cards))
    wsum = weights.sum()
    mean = (per_flop * weights[:, None]).sum(axis=0) / wsum
    se = 0.0 if flops is None else float(per_flop[:, 0].std(ddof=1) / np.sqrt(flops))
    hands = {name: class_sum[name] / class_n[name] for name in class_sum}
    return MainGameValue(float(mean[0]), se, float(mean[1]), float(mean[2]), float(mean[3]), float(mean[4]),
                         len(cards), flops is None, hands)
