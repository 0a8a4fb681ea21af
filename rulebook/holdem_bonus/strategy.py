"""The player's strategies for the Hold'em Bonus main game, and the exact value of the best one.

Why the best one is cheap to state: after the Flop bet the player's only choices are the Turn and
River bets (HTB-4.11.3, 4.11.4; MBS-3.7.2), each one Ante, each settled 1 to 1 on the same final
comparison as the Flop bet (HTB-5.2-5.4), and neither changes what the other pays or what the player
may do next. So each is worth placing exactly when, over every card still unseen, the player's hand
wins more often than it loses: ``P(win) > P(lose)``, counted over the remaining board and the
dealer's two hole cards. That rule *is* optimal after the flop (no look-ahead can improve on it).
Before the flop the published optimal play folds only 2-3 to 2-7 unsuited; :func:`flop_values`
also returns every starting hand's value, so a test checks that list rather than trusting it.

How the value is counted, per flop (:func:`flop_values`): every board completion (1,176 turn-river
pairs) and every two-card holding of the 47 cards left (1,081) is evaluated once (1.27 million
7-card hands); for each holding the wins, ties and losses against every disjoint dealer holding
(990) come from ranks, the overlapping holdings subtracted per card. Over the 1,755 classes of flop
under suit permutation (:func:`flop_classes`) the sum is the exact expectation; a random sample of
flops gives an estimate with a standard error. A flop that a suit permutation maps onto itself (1,469
of the 1,755) ranks one board of each set equal but for suits and moves the others' rows from it: 62 %
of the boards are ranked over the whole count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations

import numpy as np

from rulebook import poker

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
_PAIR0, _PAIR_OK = np.maximum(_PAIR, 0), _PAIR >= 0
_BITS = (np.int64(1) << _IU) | (np.int64(1) << _JU)
_DISJOINT = (_BITS[:, None] & _BITS[None, :]) == 0  # [board pair, holding]: no card shared
_BOARD, _HOLD = np.nonzero(_DISJOINT)
_T_NOT_IN_H = ~((_IU[:, None] == np.arange(_N)) | (_JU[:, None] == np.arange(_N)))  # [holding, turn card]
_NONE = 8191  # above every strength (1..7462): an impossible holding never counts as lower or equal
_HOLDINGS, _DEALERS = 1081, 990  # holdings of the 47 cards left on a full board; dealer holdings disjoint from one
_IJ, _JI = _IU * _N + _JU, _JU * _N + _IU  # holding k's place in a flattened [card, other card] square, both ways
_DIAGONAL = np.arange(_N) * (_N + 1)  # a card paired with itself: no holding
_PAIR_OR_PAST = np.where(_PAIR_OK, _PAIR, _P).ravel()  # [card x other card] -> their pair; a card with itself -> _P


@lru_cache(maxsize=1)
def _deal_positions() -> np.ndarray:
    """(1,270,776, 4) uint8: for each turn-river pair and disjoint holding, the four positions in the
    49 cards left. Built once per process (5 MB): a flop's cards come from it by arithmetic."""
    return np.column_stack([_IU[_BOARD], _JU[_BOARD], _IU[_HOLD], _JU[_HOLD]]).astype(np.uint8)


def _less_and_equal(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


@lru_cache(maxsize=None)
def _lowest_strength(category: int) -> int:
    """The weakest strength of ``category`` or better: strengths rise with the category (``poker.category``)."""
    strengths = np.arange(1, poker.ROYAL_FLUSH + 1)
    return int(strengths[np.argmax(poker.category(strengths) >= category)])


def _suit_symmetries(flop: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """(g, 1176): for each suit permutation that maps the flop onto itself, the pair it sends each pair of the
    cards left to (the identity first). A hand's strength depends on its ranks and which suits are equal, so
    such a permutation leaves every comparison on the flop as it is."""
    where = np.full(52, -1, dtype=np.int64)
    where[rest] = np.arange(_N)
    flop_set = set(flop.tolist())
    maps = []
    for p in permutations(range(4)):
        moved = rest - rest % 4 + np.asarray(p, dtype=np.uint8)[rest % 4]
        if {c - c % 4 + p[c % 4] for c in flop_set} == flop_set:
            pos = where[moved]
            maps.append(_PAIR[pos[_IU], pos[_JU]])
    return np.array(maps)  # the identity permutation comes first in ``permutations``


def _board_orbits(pair_maps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the canonical boards, each board's canonical board's row among them, and per board the (1176,) columns of
    that row to read its own row from). Board B is canonical board c moved by one of the flop's symmetries g, and
    for every holding h ``value[B, g(h)] = value[c, h]``: holding h' of B is holding g^-1(h') of c."""
    canon = pair_maps.min(axis=0)  # the least pair each board is moved to: one per orbit
    boards = np.unique(canon)
    row = np.searchsorted(boards, canon)
    inverse = np.argsort(pair_maps, axis=1)  # g^-1, per symmetry
    # per board, a symmetry that moves its orbit's canonical board onto it
    which = np.argmax(pair_maps[:, canon] == np.arange(_P), axis=0)
    return boards, row, inverse[which]


def flop_values(flop, qualifier: int, preflop_fold: frozenset[str] = PREFLOP_FOLD) -> FlopValues:
    """Exact values of the ``optimal`` strategy on one flop (three card codes); ``qualifier`` is the
    category a winning hand needs for the Ante to be paid (``poker.STRAIGHT``, HTB-5.2; ``poker.FLUSH``, the guide).

    A flop that a suit permutation maps onto itself (two suits or more absent from it, or a pair) has boards that
    are the same as others but for suits: only one board of each such set is evaluated and ranked, the others'
    rows are its row with the holdings moved the same way (whole counts, so the same figures)."""
    flop = np.asarray(flop, dtype=np.uint8)
    rest = np.setdiff1d(np.arange(52, dtype=np.uint8), flop)
    boards, row_of, columns = _board_orbits(_suit_symmetries(flop, rest))
    symmetric = len(boards) < _P
    if symmetric:
        keep = np.zeros(_P, dtype=bool)
        keep[boards] = True
        kept = keep[_BOARD]
        board_rows, holdings, dealt = row_of[_BOARD[kept]], _HOLD[kept], _deal_positions()[kept]
    else:
        board_rows, holdings, dealt = _BOARD, _HOLD, _deal_positions().copy()
    hands = np.empty((len(dealt), 7), dtype=np.uint8)
    hands[:, :3] = flop
    # position p among the cards left is card p, moved up past each flop card at or below it
    for card in np.sort(flop):
        dealt += dealt >= card
    hands[:, 3:] = dealt
    strength = np.full((len(boards), _P), _NONE, dtype=np.int16)  # [canonical board, holding]
    strength[board_rows, holdings] = poker.evaluate7(hands)
    # against every holding on the board, then the ones sharing a card with the player's, per card
    all_less, all_equal = _less_and_equal(strength)
    by_card = np.take(strength, _PAIR0.ravel(), axis=1)  # [board, card x other card], flattened
    by_card[:, _DIAGONAL] = _NONE
    card_less, card_equal = _less_and_equal(by_card.reshape(len(boards), _N, _N))
    card_less, card_equal = card_less.reshape(len(boards), _N * _N), card_equal.reshape(len(boards), _N * _N)
    wins = all_less - np.take(card_less, _IJ, axis=1) - np.take(card_less, _JI, axis=1)
    # the holding itself is in both cards' rows
    ties = all_equal - np.take(card_equal, _IJ, axis=1) - np.take(card_equal, _JI, axis=1) + 1
    if symmetric:  # every board's row from its canonical board's
        at = (row_of[:, None] * _P + columns).ravel()
        wins, ties, strength = (np.take(a, at).reshape(_P, _P) for a in (wins, ties, strength))
    losses = _DEALERS - wins - ties
    wins, losses = np.where(_DISJOINT, wins, 0), np.where(_DISJOINT, losses, 0)
    # a 1-unit bet's expected net per (board, holding) is net / 990: kept in whole numbers until the
    # last division, so a bet worth exactly nothing is never placed by a rounding
    net = (wins - losses).astype(np.int32)
    qualified = strength >= _lowest_strength(qualifier)  # wins and losses are 0 where no holding is
    ante = (wins * qualified - losses).sum(axis=0) / (_DEALERS * _HOLDINGS)
    turn = net.sum(axis=0) / (_DEALERS * _HOLDINGS)  # the Turn (and Flop) bet's value, over every turn and river
    # the River bet's value after each turn card: over the 46 river cards left (no BLAS product: its
    # threads spin on after it, a third more CPU for the whole count, measured)
    by_holding = np.zeros((_P, _P + 1), dtype=np.int32)  # [holding, turn-river pair], then a column of 0
    by_holding[:, :_P] = net.T
    river = np.take(by_holding, _PAIR_OR_PAST, axis=1).reshape(_P, _N, _N).sum(axis=2) / (_DEALERS * 46)
    river_bet = (river > 0) & _T_NOT_IN_H
    play = ante + 2 * turn + np.maximum(turn, 0) + (np.maximum(river, 0) * _T_NOT_IN_H).sum(axis=1) / 47
    classes = _classes(rest)
    folded = np.isin(classes, list(preflop_fold)) if preflop_fold else np.zeros(_P, dtype=bool)
    ties_all = np.where(_DISJOINT, ties, 0)
    win = np.where(folded, 0.0, wins.sum(axis=0) / (_DEALERS * _HOLDINGS))
    tie = np.where(folded, 0.0, ties_all.sum(axis=0) / (_DEALERS * _HOLDINGS))
    river_rate = np.where(folded, 0.0, river_bet.sum(axis=1) / 47)
    return FlopValues(rest, np.where(folded, -1.0, play), play, folded, (turn > 0) & ~folded, river_rate, win, tie)


def _classes(rest: np.ndarray) -> np.ndarray:
    return np.array([starting_hand(int(a), int(b)) for a, b in zip(rest[_IU], rest[_JU])])


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
    """Every flop class counted exactly (``flops`` None: 1,755 flops, about 0.17 CPU-seconds each), or a
    random sample of ``flops`` flops, each counted exactly, with the standard error between flops.
    ``progress(done, total)`` is called as the flops are counted: the whole count takes minutes, and whoever asked
    for it (``pitaudit odds``) can show how far it is. ``map_chunks(count_flops, chunks)`` yields the chunks' counts
    in order: the builtin ``map`` here, a process pool's to spread them over cores (the same figures to the last bit)."""
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
