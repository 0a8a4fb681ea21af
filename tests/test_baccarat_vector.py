"""The vectorised Tiger Baccarat engine equals the scalar reference, round by round and wager by wager.

Rounds come from real shuffled shoes dealt by ``deal_shoe`` and then damaged the ways a device log
can be (a withheld or an extra card, an unreadable or foreign card, a foreign burn), plus raw fuzz
of arbitrary codes; wagers are random bets (and a few that are not bets) with random amounts,
under both rule sets and under other rounding and deal-order parameters.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulebook.baccarat import rules
from rulebook.baccarat import vector as V
from rulebook.baccarat.engine import settle_round
from rulebook.cards import FOREIGN, NO_CARD, UNREADABLE
from rulebook.catalogue import builtin
from rulebook.money import Rounding
from rulebook.round import DeviceCard, RoundInput, Wager

COMMISSION = builtin().latest("hoiana-tiger-baccarat/commission")
NO_COMMISSION = builtin().latest("hoiana-tiger-baccarat/no-commission")


def _with(rs, **changes):
    return dataclasses.replace(rs, params=dataclasses.replace(rs.params, **changes))


RULESETS = [
    COMMISSION,
    NO_COMMISSION,
    _with(COMMISSION, rounding=Rounding.HALF_UP, rounding_unit=5),
    _with(NO_COMMISSION, rounding=Rounding.UP, rounding_unit=10),
    _with(COMMISSION, deal_order=("banker", "player", "banker", "player")),
]
BET_NAMES = list(V.BET_CODES) + ["dragon"]


def compare(ruleset, rounds):
    """Settle ``rounds`` [(cards, burn codes, [(bet, amount)])] both ways and assert they agree on everything."""
    params = ruleset.params
    width = max([6] + [len(c) for c, _, _ in rounds])
    arr = np.full((len(rounds), width), NO_CARD, dtype=np.int16)
    for i, (cards, _, _) in enumerate(rounds):
        arr[i, : len(cards)] = cards
    n = np.array([len(c) for c, _, _ in rounds])
    foreign_burn = np.array([any(b == FOREIGN for b in burns) for _, burns, _ in rounds])
    coups = V.resolve(arr, n, foreign_burn=foreign_burn, deal_order=params.deal_order)
    found = {}
    for i, kind, clause in V.irregularities(coups):
        found.setdefault(i, set()).add((kind, clause))
    clauses = V.clause_table(params)

    ri, codes, amounts, expected = [], [], [], []
    for i, (cards, burns, bets) in enumerate(rounds):
        events = tuple(DeviceCard(b, is_burn=True) for b in burns) + tuple(DeviceCard(c) for c in cards)
        wagers = tuple(Wager(f"w{j}", 1, bet, amount) for j, (bet, amount) in enumerate(bets))
        r = settle_round(RoundInput(ruleset=ruleset, cards=events, wagers=wagers))
        assert {(x.kind, x.clause) for x in r.irregularities} == found.get(i, set()), cards
        assert r.void == bool(coups.void[i])
        o = r.outcome
        if "winner" in o:
            assert V.WINNER_NAMES[coups.winner[i]] == o["winner"]
            assert (o["player_points"], o["banker_points"], o["banker_cards"]) == (
                coups.player_points[i], coups.banker_points[i], coups.banker_cards[i])
        else:
            assert r.void or coups.winner[i] == V.UNKNOWN
        for name in ("player_pair", "banker_pair"):
            flag = int(getattr(coups, name)[i])
            assert o.get(name) == (None if flag < 0 or r.void else bool(flag))
        required = rules.required_card_count(cards, params.deal_order)
        assert int(coups.required[i]) == (-1 if required is None else required), cards
        for j, (bet, amount) in enumerate(bets):
            ri.append(i)
            codes.append(V.BET_CODES.get(bet, -1))
            amounts.append(amount)
            expected.append(r.settlements.get(f"w{j}") or r.unsettled[f"w{j}"])
    if not ri:
        return
    net, reason = V.settle(coups, np.array(ri), np.array(codes), np.array(amounts), params)
    for j, e in enumerate(expected):
        why = V.Reason(int(reason[j]))
        if isinstance(e, str):
            assert V.UNSETTLED_MASK[why], (rounds[ri[j]], e, why)
            assert e.endswith(f"({clauses[why]})"), (e, why)
        else:
            assert not V.UNSETTLED_MASK[why], (rounds[ri[j]], e, why)
            assert (e.net, e.clause) == (int(net[j]), clauses[why]), (rounds[ri[j]], amounts[j], e, why)


@st.composite
def shoe_rounds(draw, deal_order):
    """Consecutive rounds of a real shuffled shoe, some damaged the ways a device log can be."""
    decks = draw(st.integers(1, 8))
    rnd = draw(st.randoms(use_true_random=False))
    shoe = np.array([c for c in range(52) for _ in range(decks)], dtype=np.int8)
    rnd.shuffle(shoe)
    dealt = V.deal_shoe(shoe, cut_at=len(shoe) - 10, deal_order=deal_order)
    start = draw(st.integers(0, max(0, len(dealt) - 1)))
    out = []
    for k, cards in enumerate(dealt[start : start + draw(st.integers(1, 15))]):
        cards = [int(c) for c in cards]
        fault = draw(st.sampled_from(["none"] * 12 + ["withhold", "extra", "extra2", "unreadable", "foreign",
                                                      "no_card", "foreign_burn", "short"]))
        burns = [int(shoe[-1])] if k == 0 else []
        if fault == "withhold" and len(cards) > 4:
            cards = cards[:-1]
        elif fault in ("extra", "extra2"):
            cards = cards + [int(rnd.randrange(52)) for _ in range(1 if fault == "extra" else 2)]
        elif fault in ("unreadable", "foreign", "no_card"):
            code = {"unreadable": UNREADABLE, "foreign": FOREIGN, "no_card": NO_CARD}[fault]
            cards[draw(st.integers(0, len(cards) - 1))] = code
        elif fault == "foreign_burn":
            burns = [FOREIGN]
        elif fault == "short":
            cards = cards[: draw(st.integers(0, 3))]
        bets = draw(st.lists(st.tuples(st.sampled_from(BET_NAMES), st.integers(-3, 10**9)), max_size=10))
        out.append((cards, burns, bets))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.integers(0, len(RULESETS) - 1))
def test_vector_equals_scalar_on_real_shoes(data, which):
    ruleset = RULESETS[which]
    compare(ruleset, data.draw(shoe_rounds(tuple(ruleset.params.deal_order))))


codes = st.one_of(st.integers(0, 51), st.sampled_from([UNREADABLE, FOREIGN, NO_CARD, 52, 99, -7]))


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(0, len(RULESETS) - 1),
    rounds=st.lists(
        st.tuples(st.lists(codes, max_size=9), st.lists(codes, max_size=2),
                  st.lists(st.tuples(st.sampled_from(BET_NAMES), st.integers(0, 10**12)), max_size=9)),
        min_size=1, max_size=12,
    ),
)
def test_vector_equals_scalar_on_arbitrary_codes(which, rounds):
    ruleset = RULESETS[which]
    # a burn that is not a card of the decks is foreign (FOREIGN or out of range), not an unread burn
    rounds = [(c, [FOREIGN if (b > 51 or b < -3 or b == FOREIGN) else b for b in burns], w) for c, burns, w in rounds]
    compare(ruleset, rounds)


def test_every_reason_is_reached_by_the_random_rounds():
    """Guards the property tests above from testing nothing: a fixed batch reaches every settlement reason."""
    rng = np.random.default_rng(5)
    shoe = rng.permutation(np.repeat(np.arange(52), 8)).astype(np.int8)
    rounds = V.deal_shoe(shoe, 400)
    arr = np.full((len(rounds) + 5, 6), NO_CARD, dtype=np.int8)
    for i, r in enumerate(rounds):
        arr[i, : len(r)] = r
    arr[-5, :3] = [1, 2, 3]  # short
    arr[-4, :5] = [4, 40, 8, 20, UNREADABLE]  # P 2+3=5 draws an unreadable card
    arr[-3, :4] = [4, 40, 8, 20]  # the Player's third card withheld
    arr[-2, :5] = [4, 40, 0, 8, 4]  # P 2+1=3 draws a 2; B 0+3=3 must draw: withheld
    arr[-1, :4] = [8, 40, 12, 8]  # P 3+4=7 stands; B 0+3=3 must draw (4.16): withheld
    coups = V.resolve(arr)
    ri = np.repeat(np.arange(len(arr)), 9)
    bet = np.tile(np.arange(-1, 8), len(arr))
    seen = set()
    for params in (COMMISSION.params, NO_COMMISSION.params):
        _, reason = V.settle(coups, ri, bet, np.full(len(ri), 1000), params)
        seen |= {V.Reason(int(r)) for r in np.unique(reason)}
    expected = set(V.Reason) - {V.Reason.OK, V.Reason.VOID, V.Reason.NEGATIVE_AMOUNT}
    assert expected <= seen


def test_resolve_pads_narrow_arrays_and_infers_card_counts():
    coups = V.resolve(np.array([[0, 40, 4, 20]], dtype=np.int8))  # A K 2 6: P 3 must draw, no card
    assert coups.n_cards[0] == 4 and coups.flags[0] & V.MISSING_DRAW
    with pytest.raises(ValueError, match="2-D"):
        V.resolve(np.zeros(6, dtype=np.int8))


# ---- dealing a shoe ------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), decks=st.integers(1, 8), after=st.integers(0, 2), cut_back=st.integers(1, 60))
def test_deal_shoe_deals_consecutive_rounds_by_the_drawing_rules_until_the_cut_card(seed, decks, after, cut_back):
    rng = np.random.default_rng(seed)
    shoe = rng.permutation(np.repeat(np.arange(52), decks)).astype(np.int8)
    cut_at = max(10, len(shoe) - cut_back)
    start = int(rng.integers(0, 5))
    rounds = V.deal_shoe(shoe, cut_at, start=start, hands_after_cut=after)
    i = start
    for r in rounds:
        assert np.array_equal(r, shoe[i : i + len(r)])  # consecutive, nothing skipped
        assert len(r) == rules.required_card_count([int(c) for c in r])
        i += len(r)
    ends = np.cumsum([start] + [len(r) for r in rounds])  # ends[k]: where round k starts
    # the cut card comes out during or just before exactly one round; then `after` more are dealt
    first_past = next(
        (k for k in range(len(rounds) + 1) if ends[k] >= cut_at or (k < len(rounds) and ends[k + 1] > cut_at)), None
    )
    if first_past is None:
        assert len(shoe) - ends[-1] < 6  # stopped only because the shoe ran out (TBAC-7.2)
    else:
        cut_during = ends[first_past] < cut_at
        expected = first_past + 1 + after if cut_during else first_past + after
        assert len(rounds) == expected or len(shoe) - ends[-1] < 6


def test_deal_shoe_refuses_a_shoe_with_non_card_codes():
    with pytest.raises(ValueError, match="card codes"):
        V.deal_shoe(np.array([1, 2, -1, 4, 5, 6, 7], dtype=np.int8), 5)
