"""Exact odds of every Tiger Baccarat bet, by enumeration of the shoe, for any number of decks.

A round uses at most six cards, so every round is decided by the first six cards off a freshly
shuffled shoe. We enumerate all 13**6 rank sequences (13 ranks, not 10 values: pairs are by face,
TBAC-4.11.2.1) with their exact without-replacement weights as integers,
``prod_i (4*decks - earlier cards of the same rank) / (52*decks - i)``; sequences the round does not
read to the end are simply summed over, which marginalises the unused cards exactly. Each
sequence goes through the vectorised engine (``vector.resolve``), the same code the audit runs, and
the result classes' weights are turned into each bet's win, push and house edge through the rule
set's own settlement table and pay table, so a change to the rule set changes the figures.

Weights are int64 and exact; probabilities are converted to floats only at the end (they are not
money). The house edge is the expected loss per unit wagered, ties included (a push counts as a
wager that nets 0), with the pay table's exact odds (no rounding of fractional wins).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from rulebook.baccarat import vector as V
from rulebook.baccarat.params import BaccaratParams, Variant
from rulebook.odds import BetOdds, OddsReport
from rulebook.ruleset import RuleSet

_RANKS = 13


@dataclass(frozen=True, slots=True)
class ResultWeights:
    """Exact integer weights of the first-six-card outcomes of a fresh shoe; ``total`` is their sum."""

    decks: int
    total: int
    by_class: tuple[int, ...]  # vector result classes: Player, Tie, Banker, Banker on 6 (2 cards), (3 cards)
    player_pair: int
    banker_pair: int

    def probability(self, weight: int) -> Fraction:
        return Fraction(weight, self.total)


def _sequence_weights(seq: np.ndarray, decks: int) -> np.ndarray:
    """Integer weight of each rank sequence: the product of the cards of that rank still in the shoe."""
    w = np.ones(len(seq), dtype=np.int64)
    per_rank = 4 * decks
    for i in range(seq.shape[1]):
        used = np.zeros(len(seq), dtype=np.int64)
        for j in range(i):
            used += seq[:, j] == seq[:, i]
        w *= np.maximum(per_rank - used, 0)
    return w


def result_weights(decks: int, deal_order: tuple[str, ...] = ("player", "banker", "player", "banker")) -> ResultWeights:
    """Enumerate every 6-card rank sequence of a ``decks``-deck shoe (13 chunks of 13**5, by first rank)."""
    if not 1 <= decks <= 16:
        raise ValueError(f"decks must be 1..16, got {decks}")
    tail = np.indices((_RANKS,) * 5, dtype=np.int8).reshape(5, -1).T
    by_class = [0] * 5
    player_pair = banker_pair = 0
    for first in range(_RANKS):
        seq = np.empty((len(tail), 6), dtype=np.int8)
        seq[:, 0] = first
        seq[:, 1:] = tail
        w = _sequence_weights(seq, decks)
        coups = V.resolve(seq * 4, deal_order=deal_order)  # suit 0: only the rank matters
        cls = V.result_class(coups)
        if (cls < 0).any():
            raise AssertionError("every enumerated sequence must have a result")
        for c in range(5):
            by_class[c] += int(w[cls == c].sum())
        player_pair += int(w[coups.player_pair == 1].sum())
        banker_pair += int(w[coups.banker_pair == 1].sum())
    total = 1
    for i in range(6):
        total *= 52 * decks - i
    if sum(by_class) != total:
        raise AssertionError(f"weights sum to {sum(by_class)}, expected {total}")
    return ResultWeights(decks, total, tuple(by_class), player_pair, banker_pair)


def _bet_odds(reason_prob: dict[V.Reason, Fraction], params: BaccaratParams, can_push: bool, notes: str) -> BetOdds:
    effect, num, den = V.payout_table(params)
    ev = Fraction(0)
    win = push = Fraction(0)
    for reason, p in reason_prob.items():
        e = int(effect[reason])
        if e == 1:
            ev += p * Fraction(int(num[reason]), int(den[reason]))
            win += p
        elif e == -1:
            ev -= p
        else:
            push += p
    return BetOdds(
        house_edge=float(-ev),
        win_probability=float(win),
        push_probability=float(push) if can_push else None,
        method="exact",
        notes=notes,
    )


def house_edges(ruleset: RuleSet, decks: int | None = None, **options) -> OddsReport:
    """House edge, win and push probability of every bet of ``ruleset`` with ``decks`` decks (default: the rule set's).

    ``options`` (``rounds``, ``seed``) are for simulated games and are ignored: these figures are exact.
    """
    params: BaccaratParams = ruleset.params
    decks = decks or params.decks
    weights = result_weights(decks, tuple(params.deal_order))
    p_class = [weights.probability(w) for w in weights.by_class]
    main = V._main_table(params)
    pt = params.pay_table

    def main_bet(code: int) -> dict[V.Reason, Fraction]:
        out: dict[V.Reason, Fraction] = {}
        for c, p in enumerate(p_class):
            r = V.Reason(int(main[code, c]))
            out[r] = out.get(r, Fraction(0)) + p
        return out

    def pair_bet(pair_weight: int, win: V.Reason) -> dict[V.Reason, Fraction]:
        p = weights.probability(pair_weight)
        return {win: p, V.Reason.PAIR_LOSES: 1 - p}

    banker_note = (
        f"pays {pt.banker.odds} ({pt.banker.clause})"
        if params.variant is Variant.COMMISSION
        else f"pays {pt.banker.odds}, {pt.banker_wins_on_six.odds} when the Banker wins on 6 ({pt.banker.clause})"  # type: ignore[union-attr]
    )
    bets = {
        "banker": _bet_odds(main_bet(V.BET_BANKER), params, True, banker_note + "; a Tie stands off"),
        "player": _bet_odds(main_bet(V.BET_PLAYER), params, True, f"pays {pt.player.odds}; a Tie stands off"),
        "tie": _bet_odds(main_bet(V.BET_TIE), params, False, f"pays {pt.tie.odds} ({pt.tie.clause})"),
        "banker_pair": _bet_odds(pair_bet(weights.banker_pair, V.Reason.BANKER_PAIR_WINS), params, False,
                                 f"pays {pt.banker_pair.odds}; pairs by face value (TBAC-4.11.2.1)"),
        "player_pair": _bet_odds(pair_bet(weights.player_pair, V.Reason.PLAYER_PAIR_WINS), params, False,
                                 f"pays {pt.player_pair.odds}; pairs by face value (TBAC-4.11.2.1)"),
        "tiger": _bet_odds(main_bet(V.BET_TIGER), params, False,
                           f"pays {pt.tiger_two_cards.odds} on a two-card 6, {pt.tiger_three_cards.odds} on a three-card 6"),
        "small_tiger": _bet_odds(main_bet(V.BET_SMALL_TIGER), params, False,
                                 f"pays {pt.small_tiger.odds} when the Banker wins on 6 with two cards"),
        "big_tiger": _bet_odds(main_bet(V.BET_BIG_TIGER), params, False,
                               f"pays {pt.big_tiger.odds} when the Banker wins on 6 with three cards"),
    }
    return OddsReport(ruleset=ruleset.name, decks=decks, bets=bets)
