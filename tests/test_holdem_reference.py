"""The main game and the Bonus cross-checked against an independent settlement built on a public
evaluator (treys): random clean rounds, every wager's net compared (HTB-5.2-5.4, 6.1.1, 6.1.2;
the guide's Flush qualifier)."""

from __future__ import annotations

import random

import pytest
from treys import Card, Evaluator

from rulebook.cards import card_text
from rulebook.catalogue import builtin
from rulebook.holdem_bonus.deal import deal_events
from rulebook.holdem_bonus.engine import settle_round
from rulebook.round import Action, RoundInput, Wager

EVALUATOR = Evaluator()
BONUS_ODDS = {"AA": 30, "AKs": 25, "AQs": 20, "AJs": 20, "AKo": 15, "KK": 10, "QQ": 10, "JJ": 10, "AQo": 5, "AJo": 5}


def treys_rank(cards: list[int]) -> int:
    """treys: 1 is the best hand (a royal flush), 7462 the worst."""
    t = [Card.new(card_text(c)) for c in cards]
    return EVALUATOR.evaluate(t[2:], t[:2])


def bonus_multiple(hole: list[int], dealer: list[int], with_1000: bool) -> int | None:
    """Written from the pay table's words, by the rank letters: the odds won, or None."""
    r = sorted((card_text(c)[0] for c in hole), key="AKQJT98765432".index)
    suited = card_text(hole[0])[1] == card_text(hole[1])[1]
    if r[0] == r[1]:
        if r[0] == "A" and with_1000 and all(card_text(c)[0] == "A" for c in dealer):
            return 1000
        return BONUS_ODDS.get(r[0] * 2, 3)
    return BONUS_ODDS.get(r[0] + r[1] + ("s" if suited else "o"))


@pytest.mark.parametrize("name", ["hoiana-holdem-bonus", "guide-holdem-bonus-progressive"])
def test_engine_agrees_with_an_independent_settlement_on_treys(name):
    rs = builtin().latest(name)
    qualifier_class = 5 if rs.params.ante_qualifier == "straight" else 4  # treys classes: 0 royal .. 5 straight, 4 flush
    rng = random.Random(2026)
    checked = 0
    for _ in range(400):
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 4)))
        deck = rng.sample(range(52), 2 * len(seats) + 13)
        hole = [deck[2 * k: 2 * k + 2] for k in range(len(seats))]
        rest = deck[2 * len(seats):]
        community, dealer, burns = rest[:5], rest[5:7], rest[7:11]
        events = deal_events(rs.params.shoe_deal, [tuple(h) for h in hole], tuple(community), tuple(dealer), tuple(burns))
        wagers, actions, expected = [], [], {}
        d_rank = treys_rank(dealer + community)
        for s, h in zip(seats, hole):
            ante = rng.choice([100, 300])
            ids = {b: f"{s}{b}" for b in ("ante", "bonus", "flop", "turn", "river")}
            wagers += [Wager(ids["ante"], s, "ante", ante), Wager(ids["bonus"], s, "bonus", 10)]
            fold = rng.random() < 0.2
            mult = bonus_multiple(h, dealer, with_1000=name.startswith("hoiana"))
            if fold:
                actions.append(Action(s, 1, "fold"))
                expected[ids["ante"]], expected[ids["bonus"]] = -ante, -10
                continue
            expected[ids["bonus"]] = 10 * mult if mult else -10
            actions.append(Action(s, 1, "flop"))
            wagers.append(Wager(ids["flop"], s, "flop", 2 * ante))
            bets = {"flop": 2 * ante}
            for street in ("turn", "river"):
                if rng.random() < 0.5:
                    actions.append(Action(s, 1, street))
                    wagers.append(Wager(ids[street], s, street, ante))
                    bets[street] = ante
                else:
                    actions.append(Action(s, 1, "check"))
            p_rank = treys_rank(h + community)
            if p_rank < d_rank:  # the player's hand is higher
                qualifies = EVALUATOR.get_rank_class(p_rank) <= qualifier_class
                expected[ids["ante"]] = ante if qualifies else 0
                expected.update({ids[b]: a for b, a in bets.items()})
            elif p_rank > d_rank:
                expected[ids["ante"]] = -ante
                expected.update({ids[b]: -a for b, a in bets.items()})
            else:
                expected[ids["ante"]] = 0
                expected.update({ids[b]: 0 for b in bets})
        r = settle_round(RoundInput(rs, events, tuple(wagers), tuple(actions), deal_mode="shoe"))
        assert not r.unsettled and not r.irregularities
        assert {k: s.net for k, s in r.settlements.items()} == expected
        checked += len(expected)
    assert checked > 1500
