"""Blackjack odds: exact pair and insurance edges against enumeration, the simulated main game
against the scalar state machine (round by round) and against the independent EV programme."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
from fractions import Fraction

import numpy as np
import pytest

from rulebook.blackjack.ev import Rules, round_value
from rulebook.blackjack.odds import house_edges, insurance_probability, pair_probability
from rulebook.blackjack.play import play_round
from rulebook.blackjack.settle import settle
from rulebook.blackjack.simulate import simulate_main
from rulebook.catalogue import builtin
from rulebook.odds import house_edges as any_house_edges
from rulebook.round import Wager

RS = builtin().in_force("hoiana-blackjack", dt.date(2026, 11, 24))
P = RS.params


def shoe_cards(decks: int) -> list[int]:
    return [c for c in range(52) for _ in range(decks)]


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_pair_probability_by_enumerating_the_first_two_cards(decks):
    shoe = shoe_cards(decks)
    pairs = sum(1 for a, b in itertools.permutations(range(len(shoe)), 2) if shoe[a] // 4 == shoe[b] // 4)
    total = len(shoe) * (len(shoe) - 1)
    assert Fraction(pairs, total) == Fraction(4 * decks - 1, 52 * decks - 1)
    assert pair_probability(decks) == pytest.approx(pairs / total, rel=1e-12)


def test_pair_11_to_1_on_8_decks_has_the_exact_edge():
    p = Fraction(31, 415)  # (4*8-1)/(52*8-1)
    edge = 1 - 12 * p
    assert edge == Fraction(43, 415)
    rep = house_edges(RS, 8, rounds=10_000)
    assert rep.bets["pair"].house_edge == pytest.approx(float(edge), abs=1e-15)
    assert rep.bets["pair"].method == "exact"


@pytest.mark.parametrize("decks", [1, 8])
def test_insurance_edge_by_enumerating_the_dealers_second_card(decks):
    shoe = shoe_cards(decks)
    shoe.remove(0)  # the dealer's ace
    tens = sum(1 for c in shoe if c >= 36)
    p = Fraction(tens, len(shoe))
    edge = -(2 * p - (1 - p))
    assert insurance_probability(decks) == pytest.approx(float(p))
    assert house_edges(RS, decks, rounds=10_000).bets["insurance"].house_edge == pytest.approx(float(edge), abs=1e-15)
    if decks == 8:
        assert edge == Fraction(31, 415)  # 7.47 %


RULE_VARIANTS = {
    "hoiana": P,
    "h17": dataclasses.replace(P, dealer_hits_soft_17=True),
    "no_surrender": dataclasses.replace(P, surrender_allowed=False),
    "no_das_two_hands": dataclasses.replace(P, double_after_split=False, max_hands=2),
    "full_loss_to_blackjack": dataclasses.replace(P, dealer_blackjack_takes_original_only=False),
    "split_aces_play_on": dataclasses.replace(P, split_aces_one_card=False, resplit_aces=True),
    "split_hands_as_formed": dataclasses.replace(P, split_play_order="as_formed", resplit_aces=True),
}


def to_codes(values: np.ndarray) -> list[int]:
    """Point values -> card codes (suits and ten ranks in turn, so no card repeats more than the shoe allows)."""
    out = []
    for k, v in enumerate(values):
        if v == 0:
            break
        rank = 0 if v == 1 else (v - 1 if v < 10 else 9 + (k // 4) % 4)
        out.append(rank * 4 + k % 4)
    return out


@pytest.mark.parametrize("variant", sorted(RULE_VARIANTS))
@pytest.mark.parametrize("decks", [1, 8])
def test_the_vectorised_simulation_plays_every_round_as_the_state_machine_does(variant, decks):
    params = RULE_VARIANTS[variant]
    sim = simulate_main(params, decks, 2_000, seed=decks * 7919 + len(variant), record=True)
    for i in range(sim.rounds):
        codes = to_codes(sim.cards[i])
        played = play_round(params, codes, [Wager("W", 1, "main", 1000)])
        assert list(played.cards) == codes, i  # the same cards, in the same order
        assert settle(played.state)[0]["W"].net == round(sim.results[i] * 1000), (i, codes, [a.action for a in played.actions])


def test_simulated_edge_agrees_with_the_independent_ev_programme():
    """An almost infinite shoe (1000 decks) against the infinite-shoe programme, both under these rules."""
    sim = simulate_main(P, 1000, 1_500_000, seed=11)
    expected = -round_value(Rules.of(P))
    lo, hi = sim.ci95
    assert lo - 0.0005 <= expected <= hi + 0.0005, (expected, sim.ci95)


def test_main_edge_for_these_rules_is_plausible_and_the_report_is_complete():
    rep = any_house_edges(RS, 8)
    main = rep.bets["main"]
    assert main.method == "simulation"
    assert rep.strategy and "basic strategy" in rep.strategy
    lo, hi = main.ci95
    assert lo < main.house_edge < hi and hi - lo < 0.004
    # no hole card with original-wager-only and early surrender against a ten: about 0.2-0.3 %
    assert -0.002 < main.house_edge < 0.006
    assert 0.40 < main.win_probability < 0.45 and 0.07 < main.push_probability < 0.10


def test_without_surrender_the_edge_is_in_the_known_range_for_no_hole_card_S17_DAS_8_decks():
    """ENHC, S17, DAS, 8 decks: roughly 0.4-0.8 % (original-wager-only makes it the US hole-card figure)."""
    rs = dataclasses.replace(RS, params=RULE_VARIANTS["no_surrender"])
    main = house_edges(rs, 8, rounds=1_000_000, seed=5).bets["main"]
    lo, hi = main.ci95
    assert lo < 0.008 and hi > 0.004, main.ci95
    assert 0.004 < -round_value(Rules.of(RULE_VARIANTS["no_surrender"])) < 0.008


def test_bad_deck_count_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="decks"):
        house_edges(RS, 0, rounds=10_000)
