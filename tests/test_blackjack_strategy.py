"""Basic strategy: the data tables are what the expected-value programme says for these rules, the
programme reproduces published dealer probabilities, and basic_action falls back correctly."""

from __future__ import annotations

import datetime as dt

import pytest

from rulebook.blackjack.ev import BJ, BUST, Rules, Values, dealer_outcomes, derive_tables, round_value
from rulebook.blackjack.strategy import basic_action, code_for, table, takes_insurance
from rulebook.cards import parse_card
from rulebook.catalogue import builtin

RS = builtin().in_force("hoiana-blackjack", dt.date(2026, 11, 24))
ALL = {"hit", "stand", "double", "split", "surrender"}


def cards(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def act(hand: str, up: str, allowed=ALL) -> str:
    return basic_action(cards(hand), parse_card(up), set(allowed))


def test_the_tables_are_the_value_maximising_decisions_for_the_hoiana_rules():
    derived = derive_tables(Rules.of(RS.params))
    for kind in ("hard", "soft", "pair"):
        assert table(kind) == derived[kind], kind


def test_rules_of_the_rule_set_are_the_ones_the_tables_assume():
    r = Rules.of(RS.params)
    assert (r.hits_soft_17, r.original_only, r.double_after_split, r.max_hands, r.resplit_aces) == (False, True, True, 4, False)
    assert (r.surrender, r.surrender_against_ace, r.blackjack_pays) == (True, False, 1.5)


@pytest.mark.parametrize(
    "up, bust, p17",
    [(2, 0.3536, 0.1398), (5, 0.4164, 0.1223), (6, 0.4232, 0.1654), (7, 0.2623, 0.3686), (10, 0.2121, 0.1114), (1, 0.1153, 0.1308)],
)
def test_dealer_final_hand_matches_the_published_infinite_deck_table(up, bust, p17):
    """The classic infinite-deck, stand-on-soft-17 dealer table (no peek): e.g. a 6 busts 42.32 %."""
    d = dealer_outcomes(up)
    assert d[BUST] == pytest.approx(bust, abs=5e-5)
    assert d[17] == pytest.approx(p17, abs=5e-5)
    assert sum(d.values()) == pytest.approx(1.0, abs=1e-12)


def test_dealer_blackjack_chance_without_a_hole_card():
    assert dealer_outcomes(1)[BJ] == pytest.approx(4 / 13)
    assert dealer_outcomes(10)[BJ] == pytest.approx(1 / 13)


@pytest.mark.parametrize(
    "hand, up, expected",
    [
        ("6c 5d", "Th", "double"),  # 11 against a ten
        ("6c 5d", "Ah", "hit"),  # 11 against an ace, dealer stands on soft 17
        ("Tc 2d", "2h", "hit"),
        ("Tc 2d", "4h", "stand"),
        ("Ac 7d", "2h", "stand"),
        ("Ac 7d", "6h", "double"),
        ("Ac 7d", "9h", "hit"),
        ("9c 9d", "7h", "stand"),
        ("9c 9d", "8h", "split"),
        ("8c 8d", "7h", "split"),
        ("Ac Ad", "Ah", "split"),
        ("Tc Kd", "6h", "stand"),  # never split tens
        ("5c 5d", "9h", "double"),
        ("4c 4d", "5h", "split"),  # with double after split
        ("Tc 6d", "Th", "surrender"),  # early surrender against a ten (no hole card)
        ("Tc 6d", "Ah", "hit"),  # not against an ace (BJ-4.12.1.1)
        ("8c 8d", "Th", "surrender"),
        ("Tc 7d", "Th", "stand"),
    ],
)
def test_basic_action_on_well_known_cells(hand, up, expected):
    assert act(hand, up) == expected


def test_fallbacks_when_the_preferred_decision_is_not_allowed():
    assert act("6c 5d", "Th", {"hit", "stand"}) == "hit"  # DH
    assert act("Ac 7d", "6h", {"hit", "stand"}) == "stand"  # DS
    assert act("Tc 6d", "Th", {"hit", "stand", "double"}) == "hit"  # RH after a split
    assert act("8c 8d", "Th", {"hit", "stand", "double"}) == "hit"  # RPH with no split left
    assert act("8c 8d", "Th", {"hit", "stand", "double", "split"}) == "split"
    assert act("Tc 3d 3h", "Th", {"hit", "stand"}) == "hit"  # hard 16, three cards


def test_multi_card_hands_use_the_totals_tables():
    assert code_for(cards("Ac 2d 3h"), parse_card("5s")) == table("soft")[16][3]
    assert code_for(cards("2c 2d 3h"), parse_card("5s")) == table("hard")[7][3]


def test_every_decision_has_a_value_and_basic_strategy_beats_never_busting():
    """Playing the tables is worth more than standing on 12+ and hitting below (a crude strategy)."""
    best = round_value(Rules())
    crude = 0.0
    from rulebook.blackjack.ev import P_VALUE

    for up, pu in P_VALUE.items():
        v = Values(up, Rules())
        for a, pa in P_VALUE.items():
            for b, pb in P_VALUE.items():
                if {a, b} == {1, 10}:
                    crude += pu * pa * pb * v.blackjack()
                    continue
                hard, ace = a + b, 1 in (a, b)
                total = hard + 10 if ace and hard <= 11 else hard
                crude += pu * pa * pb * (v.stand(total) if total >= 12 else v.hit(hard, ace))
    assert best > crude + 0.01


def test_insurance_hook():
    assert not takes_insurance()
    assert not takes_insurance(2.0)
    assert takes_insurance(3.5)
