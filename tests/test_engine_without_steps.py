"""``RoundInput.with_steps=False`` (what the nightly audit asks for) changes nothing but the narrative.

The audit never reads ``RoundResult.steps``, so it asks the engine not to write them (the Blackjack
engine spent a fifth of its time on them). These tests hold the engine to the promise: for any round,
legal or not, readable or not, the settlements, the reasons a wager is unsettled, the irregularities,
the void and the outcome are the same with and without steps.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulebook.cards import UNREADABLE
from rulebook.catalogue import builtin
from rulebook.engine import settle_round
from rulebook.round import Action, DeviceCard, Limits, RoundInput, Wager

BLACKJACK = builtin().in_force("hoiana-blackjack", dt.date(2026, 11, 24))
ACTIONS = ("hit", "stand", "double", "split", "surrender", "insurance", "even_money", "hit", "stand", "hit")


def _outcome(ri: RoundInput):
    try:
        r = settle_round(ri)
    except Exception as exc:  # noqa: BLE001 - a refusal must be the same refusal either way
        return ("raised", type(exc).__name__, str(exc)), ()
    return (r.settlements, r.unsettled, r.irregularities, r.void, r.outcome), r.steps


def random_blackjack_round(seed: int) -> RoundInput:
    """A round with 1-3 seats, back bets, pair and insurance wagers, random (often illegal) decisions,
    now and then an unreadable card, a burn, a card the shoe cannot hold or too few cards."""
    rng = random.Random(seed)
    cards = []
    for _ in range(rng.randint(2, 16)):
        code = rng.randrange(52) if rng.random() > 0.04 else UNREADABLE
        cards.append(DeviceCard(code, rng.random() < 0.05))
    if rng.random() < 0.05:  # a ninth ace of spades in an eight-deck shoe voids the round (BJ-7.14.1)
        cards += [DeviceCard(3, False)] * 9
    seats = rng.sample(range(1, 8), rng.randint(1, 3))
    wagers = []
    for k in range(rng.randint(1, 6)):
        bet = rng.choice(("main", "main", "main", "pair", "insurance"))
        wagers.append(Wager(f"W{k}", rng.choice(seats), bet, rng.choice((500, 1000, 2500, 10_000))))
    actions = []
    for _ in range(rng.randint(0, 8)):
        seat = rng.choice(seats)
        act = rng.choice(ACTIONS)
        amount = rng.choice((None, None, 500, 1000)) if act in ("double", "split", "insurance") else None
        ids = tuple(w.wager_id for w in wagers if w.seat == seat and rng.random() < 0.3) or None
        actions.append(Action(seat, rng.choice((1, 1, 1, 2)), act, amount, ids))
    return RoundInput(
        ruleset=BLACKJACK, cards=tuple(cards), wagers=tuple(wagers), actions=tuple(actions), decks=8,
        currency="USD", limits=Limits(min=1000, max=500_000),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_blackjack_without_steps_settles_exactly_as_with_them(seed):
    ri = random_blackjack_round(seed)
    with_steps, _ = _outcome(ri)
    without, no_steps = _outcome(dataclasses.replace(ri, with_steps=False))
    assert without == with_steps
    if with_steps[0] != "raised" and not with_steps[3]:  # a void round keeps its one sentence
        assert no_steps == ()


def test_a_plain_blackjack_round_without_steps_BJ_6_2_2():
    """Seat 1 stands on 19 against a dealer 10-7 (17): the main wager wins 1 to 1 (BJ-6.2.2) either way."""
    from rulebook.cards import parse_card

    cards = tuple(DeviceCard(parse_card(c), False) for c in "Ts Jd 9h 7c".split())
    ri = RoundInput(BLACKJACK, cards, (Wager("W1", 1, "main", 1000),), (Action(1, 1, "stand"),), decks=8)
    full = settle_round(ri)
    lean = settle_round(dataclasses.replace(ri, with_steps=False))
    assert full.settlements["W1"].net == lean.settlements["W1"].net == 1000
    assert full.settlements == lean.settlements and full.outcome == lean.outcome
    assert full.steps and lean.steps == ()
