"""Tiger Baccarat over arrays of rounds: the audit's and the simulator's hot path.

The same rules as the scalar engine (``rulebook.baccarat.engine``), written as numpy operations over
an ``(n, k)`` array of card codes, one row per round in device order (burns excluded), padded with
``NO_CARD``. Tests prove both agree on every field, wager and clause; the scalar engine stays the
reference a dispute review reads.

- :func:`resolve` reconstructs every round: points, card counts, winner, pairs, naturals, the
  number of cards the rules require, why a result cannot be known, and irregularity flags.
- :func:`settle` settles wagers (round index, bet code, amount) to ``(net, reason code)``; the
  reason code indexes :func:`clause_table` (the clause) and :data:`REASON_TEXT` (a short label).
- :func:`irregularities` lists the irregular rounds as (round, finding kind, clause).
- :func:`deal_shoe` cuts a shuffled shoe into consecutive rounds the way the dealer deals them.

The drawing rules here are lookup tables written independently of ``rules.py`` on purpose: an
equality test between two transcriptions of Table Two catches a slip in either.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

import numpy as np

from rulebook.baccarat import clauses as C
from rulebook.baccarat.params import BaccaratParams, Variant
from rulebook.cards import NO_CARD, UNREADABLE
from rulebook.money import Rounding

# ---- codes ---------------------------------------------------------------------------------

BANKER, PLAYER, TIE, UNKNOWN = 0, 1, 2, -1  # winner codes
WINNER_NAMES: Final = ("banker", "player", "tie")

BET_CODES: Final[dict[str, int]] = {name: i for i, name in enumerate(C.BETS)}
(BET_BANKER, BET_PLAYER, BET_TIE, BET_BANKER_PAIR, BET_PLAYER_PAIR, BET_TIGER, BET_SMALL_TIGER, BET_BIG_TIGER) = range(8)


class Reason(IntEnum):
    """Why a wager nets what it nets (or why it cannot be settled): indexes :func:`clause_table`."""

    OK = 0  # not a settlement: "the result is known" in Coups.cause / pair causes
    BANKER_WINS = 1
    BANKER_WINS_ON_SIX = 2  # no-commission: 1 to 2 (TBAC-5.1.2)
    BANKER_LOSES = 3
    BANKER_STANDOFF = 4
    PLAYER_WINS = 5
    PLAYER_LOSES = 6
    PLAYER_STANDOFF = 7
    TIE_WINS = 8
    TIE_LOSES = 9
    PLAYER_PAIR_WINS = 10
    BANKER_PAIR_WINS = 11
    PAIR_LOSES = 12
    TIGER_WINS_TWO_CARDS = 13
    TIGER_WINS_THREE_CARDS = 14
    TIGER_LOSES = 15
    SMALL_TIGER_WINS = 16
    SMALL_TIGER_LOSES = 17
    BIG_TIGER_WINS = 18
    BIG_TIGER_LOSES = 19
    VOID = 20
    # unsettled: the evidence cannot decide
    UNKNOWN_BET = 21
    NEGATIVE_AMOUNT = 22
    SHORT_DEAL = 23  # fewer than four cards in the record
    UNREADABLE = 24  # a card the result needs could not be read or valued
    MISSING_PLAYER_THIRD = 25  # TBAC-4.14 required a draw the device never saw
    MISSING_BANKER_THIRD = 26  # TBAC-4.15
    MISSING_BANKER_THIRD_PLAYER_STOOD = 27  # TBAC-4.16


UNSETTLED: Final = frozenset(
    {Reason.UNKNOWN_BET, Reason.NEGATIVE_AMOUNT, Reason.SHORT_DEAL, Reason.UNREADABLE,
     Reason.MISSING_PLAYER_THIRD, Reason.MISSING_BANKER_THIRD, Reason.MISSING_BANKER_THIRD_PLAYER_STOOD}
)
UNSETTLED_MASK: Final = np.array([r in UNSETTLED for r in Reason], dtype=bool)

REASON_TEXT: Final[dict[Reason, str]] = {
    Reason.OK: "result known",
    Reason.BANKER_WINS: "the Banker wins",
    Reason.BANKER_WINS_ON_SIX: "the Banker wins on 6",
    Reason.BANKER_LOSES: "the Player wins",
    Reason.BANKER_STANDOFF: "a Tie: stand-off",
    Reason.PLAYER_WINS: "the Player wins",
    Reason.PLAYER_LOSES: "the Banker wins",
    Reason.PLAYER_STANDOFF: "a Tie: stand-off",
    Reason.TIE_WINS: "a Tie",
    Reason.TIE_LOSES: "not a Tie",
    Reason.PLAYER_PAIR_WINS: "Player pair",
    Reason.BANKER_PAIR_WINS: "Banker pair",
    Reason.PAIR_LOSES: "not a pair",
    Reason.TIGER_WINS_TWO_CARDS: "the Banker wins on 6 with two cards",
    Reason.TIGER_WINS_THREE_CARDS: "the Banker wins on 6 with three cards",
    Reason.TIGER_LOSES: "the Banker does not win on 6",
    Reason.SMALL_TIGER_WINS: "the Banker wins on 6 with two cards",
    Reason.SMALL_TIGER_LOSES: "the Banker does not win on 6 with two cards",
    Reason.BIG_TIGER_WINS: "the Banker wins on 6 with three cards",
    Reason.BIG_TIGER_LOSES: "the Banker does not win on 6 with three cards",
    Reason.VOID: "the round is void (a foreign card): returned",
    Reason.UNKNOWN_BET: "not a bet of Tiger Baccarat",
    Reason.NEGATIVE_AMOUNT: "a negative amount",
    Reason.SHORT_DEAL: "fewer than four cards in the device record",
    Reason.UNREADABLE: "a card the result needs was not read",
    Reason.MISSING_PLAYER_THIRD: "the Player's required third card is not in the record",
    Reason.MISSING_BANKER_THIRD: "the Banker's required third card is not in the record",
    Reason.MISSING_BANKER_THIRD_PLAYER_STOOD: "the Banker's required third card is not in the record",
}

# irregularity flags (bits of Coups.flags)
FOREIGN_CARD: Final = 1  # card_integrity, TBAC-7.1: void
UNREADABLE_CARD: Final = 2  # card_integrity, TBAC-4.11
SHORT_DEAL: Final = 4  # card_integrity, TBAC-4.9.1
MISSING_DRAW: Final = 8  # drawing_rule_violation, TBAC-4.14 / 4.15 / 4.16
EXTRA_CARDS: Final = 16  # drawing_rule_violation, TBAC-7.6 / 7.7

# ---- the rules as tables -------------------------------------------------------------------

# TBAC-4.11: point value of each card code 0..51 (rank = code // 4; A..9 face value, T J Q K zero)
_VALUE: Final = np.array([(r + 1) if r < 9 else 0 for r in range(13) for _ in range(4)], dtype=np.int8)

# The same facts indexed by a code's byte (int8 viewed as uint8), so one lookup per column does it:
# value, rank, and what kind of code it is (a card, a failed read, or foreign).
_BYTES: Final = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int16)  # byte -> signed code
_B_VALID: Final = (_BYTES >= 0) & (_BYTES < 52)
_B_VALUE: Final = np.where(_B_VALID, _VALUE[np.clip(_BYTES, 0, 51)], 0).astype(np.int8)
_B_RANK: Final = np.where(_B_VALID, np.clip(_BYTES, 0, 51) // 4, -1).astype(np.int8)
_B_UNREAD: Final = (_BYTES == UNREADABLE) | (_BYTES == NO_CARD)
_B_FOREIGN: Final = ~_B_VALID & ~_B_UNREAD
_NO_CARD_BYTE: Final = np.uint8(NO_CARD & 0xFF)
_MOD10: Final = (np.arange(32) % 10).astype(np.int8)  # TBAC-4.12: the last digit of a total up to 27

# TBAC-4.15 Table Two: _BANKER_DRAWS[banker two-card points, value of the Player's third card]
# (columns 0..9 are card values; a Ten or court card is 0, written "10" in the text).
_BANKER_DRAWS: Final = np.array(
    [
        # 0  1  2  3  4  5  6  7  8  9    <- Player's third card
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # Banker 0: any card
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # Banker 1
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # Banker 2
        [1, 1, 1, 1, 1, 1, 1, 1, 0, 1],  # Banker 3: stands on 8
        [0, 0, 1, 1, 1, 1, 1, 1, 0, 0],  # Banker 4: draws on 2-7
        [0, 0, 0, 0, 1, 1, 1, 1, 0, 0],  # Banker 5: draws on 4-7
        [0, 0, 0, 0, 0, 0, 1, 1, 0, 0],  # Banker 6: draws on 6-7
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # Banker 7: stands
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # 8, 9: naturals, never consulted
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ],
    dtype=bool,
)

# Main-game result class of a round (for the settlement lookup): Player wins, Tie, Banker wins on
# other than 6, Banker wins on 6 with two cards, Banker wins on 6 with three cards.
_CLS_PLAYER, _CLS_TIE, _CLS_BANKER, _CLS_BANKER6_TWO, _CLS_BANKER6_THREE = range(5)


@dataclass(frozen=True, slots=True)
class Coups:
    """Every round of a batch as the drawing rules reconstruct it (one entry per row of the input).

    Unknown values are -1 (points, winner, pairs, player_drew, required) or 0 (card counts).
    ``cause`` is :attr:`Reason.OK` when the main result is known, else why not (an unsettled reason);
    ``player_pair_cause``/``banker_pair_cause`` likewise for the pairs. ``flags`` holds the
    irregularity bits (FOREIGN_CARD, UNREADABLE_CARD, SHORT_DEAL, MISSING_DRAW, EXTRA_CARDS).
    """

    n_cards: np.ndarray  # int16, cards in the record (burns excluded)
    winner: np.ndarray  # int8: BANKER, PLAYER, TIE or UNKNOWN
    player_points: np.ndarray  # int8
    banker_points: np.ndarray  # int8
    player_cards: np.ndarray  # int8: 2 or 3 (0 unknown)
    banker_cards: np.ndarray  # int8
    player_pair: np.ndarray  # int8: 1, 0, or -1 unknown
    banker_pair: np.ndarray  # int8
    player_pair_cause: np.ndarray  # int8 Reason
    banker_pair_cause: np.ndarray  # int8 Reason
    natural: np.ndarray  # bool
    player_drew: np.ndarray  # int8: 1, 0, -1 unknown
    required: np.ndarray  # int8: 4, 5, 6 or -1 unknown
    cause: np.ndarray  # int8 Reason
    flags: np.ndarray  # uint8 bits
    void: np.ndarray  # bool: a foreign card (TBAC-7.1)

    def __len__(self) -> int:
        return len(self.n_cards)


def _positions(deal_order: tuple[str, ...]) -> tuple[int, int, int, int]:
    p = [i for i in range(4) if deal_order[i] == "player"]
    b = [i for i in range(4) if deal_order[i] == "banker"]
    return p[0], p[1], b[0], b[1]


def resolve(
    cards: np.ndarray,
    n_cards: np.ndarray | None = None,
    *,
    foreign_burn: np.ndarray | None = None,
    deal_order: tuple[str, ...] = ("player", "banker", "player", "banker"),
) -> Coups:
    """Reconstruct every round of ``cards`` (n, k) (device order, burns excluded, NO_CARD-padded).

    ``n_cards`` is each round's count of card events (default: up to the last non-NO_CARD code);
    a NO_CARD inside that count is a card the device did not read. It may exceed ``k`` when the
    caller kept only the first six or more columns (the hands never use more than six). ``foreign_burn``
    marks rounds with a foreign card among their burns (voids the round like any foreign card).
    """
    a = np.asarray(cards)
    if a.ndim != 2:
        raise ValueError(f"cards must be a 2-D array (rounds x cards), got shape {a.shape}")
    rows, width = a.shape
    if a.dtype != np.int8:  # codes beyond int8 are foreign whatever their value: clip, keep them foreign
        a = np.clip(a, -128, 127).astype(np.int8)
    # column-major bytes: each column one contiguous array, looked up in 256-entry tables
    cols = np.ascontiguousarray(a.T).view(np.uint8)
    if n_cards is None:
        n = np.zeros(rows, dtype=np.int16)
        for j in range(width):
            n = np.where(cols[j] != _NO_CARD_BYTE, np.int16(j + 1), n)
    else:
        n = np.asarray(n_cards).astype(np.int16)
        if n.shape != (rows,):
            raise ValueError(f"n_cards must have one count per round ({rows}), got shape {n.shape}")
        if (n < 0).any():
            raise ValueError("n_cards must not be negative")

    any_foreign = np.zeros(rows, dtype=bool)
    any_unread = np.zeros(rows, dtype=bool)
    ok, v, rank = [], [], []
    for j in range(max(width, 6)):
        present = n > j
        if j < width:
            col = cols[j]
            any_foreign |= _B_FOREIGN[col] & present
            any_unread |= _B_UNREAD[col] & present
        if j < 6:
            if j < width:
                ok.append(_B_VALID[col] & present)  # a card the rules can value
                v.append(_B_VALUE[col])  # meaningful only where ok
                rank.append(_B_RANK[col])
            else:  # a narrow array: the column is all NO_CARD
                ok.append(np.zeros(rows, dtype=bool))
                v.append(np.zeros(rows, dtype=np.int8))
                rank.append(np.zeros(rows, dtype=np.int8))
    void = any_foreign
    if foreign_burn is not None:
        void = void | np.asarray(foreign_burn, dtype=bool)

    pi0, pi1, bi0, bi1 = _positions(tuple(deal_order))
    short = n < 4
    first4 = ok[0] & ok[1] & ok[2] & ok[3]
    pt = _MOD10[v[pi0] + v[pi1]]  # TBAC-4.12
    bt = _MOD10[v[bi0] + v[bi1]]
    natural = first4 & ((pt >= 8) | (bt >= 8))  # TBAC-4.13
    pdraw = first4 & ~natural & (pt <= 5)  # Table One, TBAC-4.14
    pstand = first4 & ~natural & ~pdraw
    p3ok = ok[4]
    bdraw = (pstand & (bt <= 5)) | (pdraw & ((bt <= 2) | (p3ok & _BANKER_DRAWS[bt, v[4]])))  # TBAC-4.15, 4.16
    decided = natural | pstand | (pdraw & ((bt <= 2) | (bt == 7) | p3ok))
    n_known = first4 & decided
    required = np.where(n_known, 4 + pdraw.view(np.int8) + bdraw.view(np.int8), -1).astype(np.int8)
    lo = np.where(n_known, required, 4 + pdraw.view(np.int8))
    hi = np.where(n_known, required, 6)
    missing = ~short & (n < lo)
    extra = n > hi

    # why the result cannot be known, in the order the scalar engine walks the round
    R = Reason
    p3_bad = pdraw & ~p3ok
    b3ok = np.where(pdraw, ok[5], ok[4])
    b3_bad = bdraw & ~p3_bad & ~b3ok
    b3_missing = n <= 4 + pdraw.view(np.int8)
    cause = np.where(b3_bad, np.where(b3_missing, np.where(pdraw, np.int8(R.MISSING_BANKER_THIRD),
                                                           np.int8(R.MISSING_BANKER_THIRD_PLAYER_STOOD)),
                                      np.int8(R.UNREADABLE)), np.int8(R.OK))
    cause = np.where(p3_bad, np.where(n <= 4, np.int8(R.MISSING_PLAYER_THIRD), np.int8(R.UNREADABLE)), cause)
    cause = np.where(first4, cause, np.int8(R.UNREADABLE))
    cause = np.where(short, np.int8(R.SHORT_DEAL), cause).astype(np.int8)
    known = cause == R.OK
    pf = _MOD10[pt + np.where(pdraw, v[4], 0)]
    bf = _MOD10[bt + np.where(bdraw, np.where(pdraw, v[5], v[4]), 0)]
    winner = np.where(pf > bf, np.int8(PLAYER), np.where(bf > pf, np.int8(BANKER), np.int8(TIE)))
    winner = np.where(known, winner, np.int8(UNKNOWN)).astype(np.int8)

    def pair(i0: int, i1: int) -> tuple[np.ndarray, np.ndarray]:
        both = np.where(ok[i0] & ok[i1], np.int8(R.OK), np.int8(R.UNREADABLE))
        pcause = np.where(n <= max(i0, i1), np.int8(R.SHORT_DEAL), both).astype(np.int8)
        flag = np.where(pcause == R.OK, (rank[i0] == rank[i1]).view(np.int8), np.int8(-1)).astype(np.int8)
        return flag, pcause

    player_pair, player_pair_cause = pair(pi0, pi1)
    banker_pair, banker_pair_cause = pair(bi0, bi1)

    flags = (
        void.view(np.uint8) * np.uint8(FOREIGN_CARD)
        | any_unread.view(np.uint8) * np.uint8(UNREADABLE_CARD)
        | short.view(np.uint8) * np.uint8(SHORT_DEAL)
        | missing.view(np.uint8) * np.uint8(MISSING_DRAW)
        | extra.view(np.uint8) * np.uint8(EXTRA_CARDS)
    ).astype(np.uint8)
    unknown_pts = np.int8(-1)

    return Coups(
        n_cards=n,
        winner=winner,
        player_points=np.where(known, pf, unknown_pts).astype(np.int8),
        banker_points=np.where(known, bf, unknown_pts).astype(np.int8),
        player_cards=np.where(known, 2 + pdraw.view(np.int8), 0).astype(np.int8),
        banker_cards=np.where(known, 2 + bdraw.view(np.int8), 0).astype(np.int8),
        player_pair=player_pair,
        banker_pair=banker_pair,
        player_pair_cause=player_pair_cause,
        banker_pair_cause=banker_pair_cause,
        natural=natural,
        player_drew=np.where(first4, pdraw.view(np.int8), np.int8(-1)).astype(np.int8),
        required=required,
        cause=cause,
        flags=flags,
        void=void,
    )


# ---- settlement ----------------------------------------------------------------------------


def clause_table(params: BaccaratParams) -> tuple[str, ...]:
    """The clause of each :class:`Reason`, pay lines from the rule set's own pay table."""
    pt = params.pay_table
    six = pt.banker_wins_on_six.clause if pt.banker_wins_on_six is not None else pt.banker.clause
    by_reason = {
        Reason.OK: "",
        Reason.BANKER_WINS: pt.banker.clause,
        Reason.BANKER_WINS_ON_SIX: six,
        Reason.BANKER_LOSES: C.BANKER_LOSES,
        Reason.BANKER_STANDOFF: C.BANKER_STANDOFF,
        Reason.PLAYER_WINS: pt.player.clause,
        Reason.PLAYER_LOSES: C.PLAYER_LOSES,
        Reason.PLAYER_STANDOFF: C.PLAYER_STANDOFF,
        Reason.TIE_WINS: pt.tie.clause,
        Reason.TIE_LOSES: C.TIE_LOSES,
        Reason.PLAYER_PAIR_WINS: pt.player_pair.clause,
        Reason.BANKER_PAIR_WINS: pt.banker_pair.clause,
        Reason.PAIR_LOSES: C.PAIR_LOSES,
        Reason.TIGER_WINS_TWO_CARDS: pt.tiger_two_cards.clause,
        Reason.TIGER_WINS_THREE_CARDS: pt.tiger_three_cards.clause,
        Reason.TIGER_LOSES: C.TIGER_LOSES,
        Reason.SMALL_TIGER_WINS: pt.small_tiger.clause,
        Reason.SMALL_TIGER_LOSES: C.SMALL_TIGER_LOSES,
        Reason.BIG_TIGER_WINS: pt.big_tiger.clause,
        Reason.BIG_TIGER_LOSES: C.BIG_TIGER_LOSES,
        Reason.VOID: C.VOID_FOREIGN,
        Reason.UNKNOWN_BET: C.BET_CLAUSE,
        Reason.NEGATIVE_AMOUNT: C.NEGATIVE_AMOUNT,
        Reason.SHORT_DEAL: C.INITIAL_DEAL,
        Reason.UNREADABLE: C.CARD_VALUES,
        Reason.MISSING_PLAYER_THIRD: C.TABLE_ONE,
        Reason.MISSING_BANKER_THIRD: C.TABLE_TWO,
        Reason.MISSING_BANKER_THIRD_PLAYER_STOOD: C.BANKER_AFTER_PLAYER_STANDS,
    }
    return tuple(by_reason[r] for r in Reason)


def payout_table(params: BaccaratParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per :class:`Reason`: effect (+1 paid at odds, -1 loses the amount, 0 nets 0), odds num, odds den."""
    pt = params.pay_table
    six = pt.banker_wins_on_six or pt.banker
    wins = {
        Reason.BANKER_WINS: pt.banker,
        Reason.BANKER_WINS_ON_SIX: six,
        Reason.PLAYER_WINS: pt.player,
        Reason.TIE_WINS: pt.tie,
        Reason.PLAYER_PAIR_WINS: pt.player_pair,
        Reason.BANKER_PAIR_WINS: pt.banker_pair,
        Reason.TIGER_WINS_TWO_CARDS: pt.tiger_two_cards,
        Reason.TIGER_WINS_THREE_CARDS: pt.tiger_three_cards,
        Reason.SMALL_TIGER_WINS: pt.small_tiger,
        Reason.BIG_TIGER_WINS: pt.big_tiger,
    }
    loses = {Reason.BANKER_LOSES, Reason.PLAYER_LOSES, Reason.TIE_LOSES, Reason.PAIR_LOSES,
             Reason.TIGER_LOSES, Reason.SMALL_TIGER_LOSES, Reason.BIG_TIGER_LOSES}
    effect = np.array([1 if r in wins else -1 if r in loses else 0 for r in Reason], dtype=np.int8)
    num = np.array([wins[r].odds.num if r in wins else 0 for r in Reason], dtype=np.int64)
    den = np.array([wins[r].odds.den if r in wins else 1 for r in Reason], dtype=np.int64)
    return effect, num, den


def _main_table(params: BaccaratParams) -> np.ndarray:
    """_MAIN[bet, result class] -> Reason, for the bets decided by the main result."""
    return _main_table_of(params.variant)


def _main_table_of(variant: Variant) -> np.ndarray:
    R = Reason
    on_six = R.BANKER_WINS_ON_SIX if variant is Variant.NO_COMMISSION else R.BANKER_WINS
    t = np.zeros((8, 5), dtype=np.int8)
    #                     Player wins        Tie                Banker (not 6)     Banker 6, 2 cards        Banker 6, 3 cards
    t[BET_BANKER] = [R.BANKER_LOSES, R.BANKER_STANDOFF, R.BANKER_WINS, on_six, on_six]
    t[BET_PLAYER] = [R.PLAYER_WINS, R.PLAYER_STANDOFF, R.PLAYER_LOSES, R.PLAYER_LOSES, R.PLAYER_LOSES]
    t[BET_TIE] = [R.TIE_LOSES, R.TIE_WINS, R.TIE_LOSES, R.TIE_LOSES, R.TIE_LOSES]
    t[BET_TIGER] = [R.TIGER_LOSES, R.TIGER_LOSES, R.TIGER_LOSES, R.TIGER_WINS_TWO_CARDS, R.TIGER_WINS_THREE_CARDS]
    t[BET_SMALL_TIGER] = [R.SMALL_TIGER_LOSES] * 3 + [R.SMALL_TIGER_WINS, R.SMALL_TIGER_LOSES]
    t[BET_BIG_TIGER] = [R.BIG_TIGER_LOSES] * 4 + [R.BIG_TIGER_WINS]
    return t


def result_class(coups: Coups) -> np.ndarray:
    """Per round: the main-game result class (0 Player, 1 Tie, 2 Banker, 3 Banker on 6 with two cards, 4 with three); -1 unknown."""
    w = coups.winner
    banker = np.where(coups.banker_points == 6, np.int8(_CLS_BANKER6_TWO) + (coups.banker_cards == 3).view(np.int8),
                      np.int8(_CLS_BANKER))
    cls = np.where(w == BANKER, banker, np.int8(-1))
    cls = np.where(w == PLAYER, np.int8(_CLS_PLAYER), cls)
    cls = np.where(w == TIE, np.int8(_CLS_TIE), cls)
    return cls.astype(np.int8)


# A round's settlement state, for the lookup: void (2) x main result (5 classes + 5 causes it is
# unknown) x Player pair state (4) x Banker pair state (4). Pair states: no pair, pair, short, unread.
_MAIN_CAUSES: Final = (Reason.SHORT_DEAL, Reason.UNREADABLE, Reason.MISSING_PLAYER_THIRD,
                       Reason.MISSING_BANKER_THIRD, Reason.MISSING_BANKER_THIRD_PLAYER_STOOD)
_STATES: Final = 2 * 10 * 4 * 4
_UNKNOWN_BET_COLUMN: Final = len(C.BETS)


def round_state(coups: Coups) -> np.ndarray:
    """Per round, the index of its settlement state (void, main result or why unknown, pair states)."""
    cls = result_class(coups)
    main = np.where(cls >= 0, cls, coups.cause - np.int8(Reason.SHORT_DEAL - 5)).astype(np.int16)

    def pair_state(flag: np.ndarray, cause: np.ndarray) -> np.ndarray:
        return np.where(flag >= 0, flag, np.where(cause == Reason.SHORT_DEAL, 2, 3)).astype(np.int16)

    pp = pair_state(coups.player_pair, coups.player_pair_cause)
    bp = pair_state(coups.banker_pair, coups.banker_pair_cause)
    return ((coups.void.view(np.int8).astype(np.int16) * 10 + main) * 4 + pp) * 4 + bp


def reason_table(params: BaccaratParams) -> np.ndarray:
    """``table[state, bet]`` -> :class:`Reason`, for every round state and bet (column 8: not a bet).

    Built by plain rules from :func:`_main_table` (the main bets) and the pair rules; settling is
    then one lookup per wager. The table depends on the variant alone, so it is built once per
    variant when the module loads (a constant, read-only; building it costs ~10 ms, more than
    settling a partition's baccarat wagers).
    """
    return _REASON_TABLES[params.variant]


def _build_reason_table(variant: Variant) -> np.ndarray:
    main = _main_table_of(variant)
    R = Reason
    lut = np.empty((2, 10, 4, 4, len(C.BETS) + 1), dtype=np.int8)
    for void in range(2):
        for m in range(10):
            for pp in range(4):
                for bp in range(4):
                    for bet in range(len(C.BETS) + 1):
                        if bet == _UNKNOWN_BET_COLUMN:
                            r = R.UNKNOWN_BET
                        elif void:
                            r = R.VOID
                        elif bet in (BET_PLAYER_PAIR, BET_BANKER_PAIR):
                            state = pp if bet == BET_PLAYER_PAIR else bp
                            win = R.PLAYER_PAIR_WINS if bet == BET_PLAYER_PAIR else R.BANKER_PAIR_WINS
                            r = (R.PAIR_LOSES, win, R.SHORT_DEAL, R.UNREADABLE)[state]
                        elif m < 5:
                            r = R(int(main[bet, m]))
                        else:
                            r = _MAIN_CAUSES[m - 5]
                        lut[void, m, pp, bp, bet] = r
    table = lut.reshape(_STATES, len(C.BETS) + 1)
    table.flags.writeable = False
    return table


_REASON_TABLES: Final = {variant: _build_reason_table(variant) for variant in Variant}


def settle_reasons(coups: Coups, round_index: np.ndarray, bet_code: np.ndarray, params: BaccaratParams) -> np.ndarray:
    """The :class:`Reason` of each wager (which pay line or rule settles it), before amounts."""
    ri = np.asarray(round_index, dtype=np.int64)
    bet = np.asarray(bet_code).astype(np.int64)
    column = np.where((bet >= 0) & (bet < len(C.BETS)), bet, _UNKNOWN_BET_COLUMN)
    flat = reason_table(params).ravel()
    return flat[round_state(coups)[ri].astype(np.int64) * (len(C.BETS) + 1) + column]


def settle(
    coups: Coups,
    round_index: np.ndarray,
    bet_code: np.ndarray,
    amount: np.ndarray,
    params: BaccaratParams,
) -> tuple[np.ndarray, np.ndarray]:
    """Settle wagers: ``(net int64, reason int8)``; ``clause_table(params)[reason]`` is the clause.

    A reason in :data:`UNSETTLED` means the evidence cannot decide the wager (its net is 0 and
    means nothing); see :data:`UNSETTLED_MASK`. Amounts are integers, rounding per the rule set.
    """
    amt = np.asarray(amount, dtype=np.int64)
    reason = settle_reasons(coups, round_index, bet_code, params)
    negative = amt < 0
    if negative.any():  # an unknown bet is reported as such first, then a negative amount (as the scalar engine does)
        reason = np.where(negative & (reason != Reason.UNKNOWN_BET), np.int8(Reason.NEGATIVE_AMOUNT), reason).astype(np.int8)
        amt = np.maximum(amt, 0)
    factor, offset, step, unit = net_coefficients(params)
    net = (amt * factor[reason] + offset[reason]) // step[reason] * unit[reason]
    return net, reason


def net_coefficients(params: BaccaratParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per :class:`Reason`, ``net = (amount * factor + offset) // step * unit``: one formula for every wager.

    A win at ``num:den`` rounded to ``rounding_unit`` (the rule set's mode): factor num, step
    den * unit, offset 0 (down), step - 1 (up) or step // 2 (half up: a remainder of at least half a
    step rounds up), unit the rounding unit; ``rulebook.money.round_amount`` in closed form. A loss:
    factor -1, step 1, unit 1 (the amount, exactly). A stand-off, a void or an unsettled wager: factor 0.
    """
    effect, num, den = payout_table(params)
    win = effect == 1
    u = params.rounding_unit
    step = np.where(win, den * u, 1).astype(np.int64)
    if params.rounding is Rounding.DOWN:
        offset = np.zeros_like(step)
    elif params.rounding is Rounding.UP:
        offset = step - 1
    else:
        offset = step // 2
    factor = np.where(win, num, effect.astype(np.int64)).astype(np.int64)
    unit = np.where(win, u, 1).astype(np.int64)
    return factor, np.where(win, offset, 0).astype(np.int64), step, unit


def bet_codes(names) -> np.ndarray:
    """Bet names (the formats contract's) to codes; an unknown name is -1 (settles as UNKNOWN_BET)."""
    return np.array([BET_CODES.get(str(x), -1) for x in names], dtype=np.int8)


# ---- irregularities ------------------------------------------------------------------------


def irregularities(coups: Coups) -> list[tuple[int, str, str]]:
    """``(round index, finding kind, clause)`` for every irregularity, in round order.

    The same findings the scalar engine lists in ``RoundResult.irregularities`` (kind and clause).
    Irregular rounds are rare, so this loops over them only.
    """
    out: list[tuple[int, str, str]] = []
    for i in np.flatnonzero(coups.flags):
        f = int(coups.flags[i])
        if f & FOREIGN_CARD:
            out.append((int(i), C.CARD_INTEGRITY, C.VOID_FOREIGN))
        if f & UNREADABLE_CARD:
            out.append((int(i), C.CARD_INTEGRITY, C.CARD_VALUES))
        if f & SHORT_DEAL:
            out.append((int(i), C.CARD_INTEGRITY, C.INITIAL_DEAL))
        if f & MISSING_DRAW:
            n, drew = int(coups.n_cards[i]), int(coups.player_drew[i])
            clause = (C.TABLE_ONE if drew == 1 else C.BANKER_AFTER_PLAYER_STANDS) if n == 4 else C.TABLE_TWO
            out.append((int(i), C.DRAWING_RULE_VIOLATION, clause))
        if f & EXTRA_CARDS:
            clause = C.EXTRA_PLAYER_CARD if int(coups.player_drew[i]) == 0 else C.EXTRA_BANKER_CARD
            out.append((int(i), C.DRAWING_RULE_VIOLATION, clause))
    return out


# ---- dealing a shoe ------------------------------------------------------------------------


def required_at_each_card(shoe: np.ndarray, deal_order: tuple[str, ...] = ("player", "banker", "player", "banker")) -> np.ndarray:
    """For every position of ``shoe``: how many cards a round starting there takes (-1: not enough cards left)."""
    s = np.asarray(shoe, dtype=np.int16)
    padded = np.concatenate([s, np.full(6, NO_CARD, dtype=np.int16)])
    windows = np.lib.stride_tricks.sliding_window_view(padded, 6)[: len(s)]
    left = np.minimum(len(s) - np.arange(len(s)), 6)
    coups = resolve(windows, left, deal_order=deal_order)
    need = coups.required.astype(np.int16)
    # a round starting near the end may be decided only by cards that are not there (TBAC-7.2)
    need[(coups.flags & (MISSING_DRAW | SHORT_DEAL)) != 0] = -1
    return need


def deal_shoe(
    shoe: np.ndarray,
    cut_at: int,
    start: int = 0,
    hands_after_cut: int = 1,
    deal_order: tuple[str, ...] = ("player", "banker", "player", "banker"),
) -> list[np.ndarray]:
    """Deal consecutive rounds from a shuffled shoe (card codes) until the cut card, as the dealer does.

    ``start`` is the first card after the burn (TBAC-2.2.2); the cut card lies in front of
    ``shoe[cut_at]``. The round during which the cut card appears is completed, then
    ``hands_after_cut`` more rounds are dealt (the text leaves this to procedure; one is the
    common practice). Dealing stops early if the shoe cannot complete a round (TBAC-7.2).
    Returns one array of card codes per round. A Python loop over rounds (about 80 a shoe), fed
    by one vectorised pass over the shoe: see benchmarks/baccarat.py for its speed.
    """
    s = np.asarray(shoe)
    if s.ndim != 1 or ((s < 0) | (s > 51)).any():
        raise ValueError("a shoe is a 1-D array of card codes 0..51 (rulebook.cards)")
    if not 0 <= start <= len(s):
        raise ValueError(f"start must be within the shoe (0..{len(s)}), got {start}")
    need = required_at_each_card(s, deal_order)
    return [s[i : i + r] for i, r in walk_shoe(need, cut_at, start, hands_after_cut)]


def walk_shoe(need: np.ndarray, cut_at: int, start: int = 0, hands_after_cut: int = 1) -> list[tuple[int, int]]:
    """The dealer's walk through a shoe: ``(first card, card count)`` of each round dealt.

    ``need[i]`` is the number of cards a round starting at card ``i`` takes
    (:func:`required_at_each_card`, negative when the shoe cannot complete it). The cut card rule of
    :func:`deal_shoe` lives here once, for it and for callers that precompute ``need`` for many shoes.
    """
    needs = need.tolist()
    rounds: list[tuple[int, int]] = []
    i, cut_seen, after = start, False, 0
    while i < len(needs):
        if not cut_seen and i >= cut_at:
            cut_seen = True  # the cut card came out before this round
        if cut_seen:
            if after >= hands_after_cut:
                break
            after += 1
        r = int(needs[i])
        if r < 0:
            break
        rounds.append((i, r))
        if not cut_seen and i + r > cut_at:
            cut_seen = True  # the cut card came out during this round: it is completed
        i += r
    return rounds
