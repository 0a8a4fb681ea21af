"""Golden rounds of Hoiana Tiger Baccarat (rule set hoiana-tiger-baccarat, TBAC-), each naming the clause it checks.

Cards are written in device order (Player, Banker, Player, Banker, then third cards, TBAC-4.9.1).
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from rulebook.baccarat import rules
from rulebook.baccarat.engine import settle_round
from rulebook.cards import parse_card
from rulebook.catalogue import builtin
from rulebook.engine import settle_round as settle_any
from rulebook.money import Rounding
from rulebook.round import DeviceCard, RoundInput, Wager

COMMISSION = builtin().latest("hoiana-tiger-baccarat/commission")
NO_COMMISSION = builtin().latest("hoiana-tiger-baccarat/no-commission")
ALL_BETS = ("banker", "player", "tie", "banker_pair", "player_pair", "tiger", "small_tiger", "big_tiger")


def play(cards, bets=ALL_BETS, amount=1000, ruleset=COMMISSION, burns=()):
    """Settle one round: ``cards`` as two-character codes in device order; one wager per bet."""
    events = tuple(DeviceCard(parse_card(c), is_burn=True) for c in burns) + tuple(DeviceCard(parse_card(c)) for c in cards)
    wagers = tuple(Wager(bet, 1, bet, amount) for bet in bets)
    return settle_round(RoundInput(ruleset=ruleset, cards=events, wagers=wagers))


def nets(result):
    return {k: (s.net, s.clause) for k, s in result.settlements.items()}


# ---- Tiger family, TBAC-5.1.3, 6.3-6.5 --------------------------------------------------------

TWO_CARD_SIX_OVER_FIVE = ["2c", "Kh", "3d", "6s", "Td"]  # P 2+3=5 draws T -> 5; B K6=6, Player third 0: stands
THREE_CARD_SIX_OVER_FIVE = ["Ac", "Kh", "2d", "3s", "2h", "3c"]  # P A2=3 draws 2 -> 5; B 3 draws on 2 -> 6


def test_tiger_pays_12_to_1_when_banker_wins_with_two_card_six_TBAC_5_1_3():
    r = play(TWO_CARD_SIX_OVER_FIVE)
    assert r.outcome == {"winner": "banker", "player_points": 5, "banker_points": 6, "banker_cards": 2,
                         "player_pair": False, "banker_pair": False}
    assert r.settlements["tiger"].net == 12_000 and r.settlements["tiger"].clause == "TBAC-5.1.3"
    assert r.settlements["small_tiger"].net == 22_000  # 22 to 1 (TBAC-5.1.3, 6.4)
    assert nets(r)["big_tiger"] == (-1000, "TBAC-6.5.1.1")  # needs three cards
    assert nets(r)["banker"] == (950, "TBAC-5.1.1")
    assert nets(r)["player"] == (-1000, "TBAC-6.1.1.2")
    assert nets(r)["tie"] == (-1000, "TBAC-6.1.3")


def test_tiger_pays_20_to_1_when_banker_wins_with_three_card_six_TBAC_5_1_3():
    r = play(THREE_CARD_SIX_OVER_FIVE)
    assert r.outcome["banker_cards"] == 3 and r.outcome["banker_points"] == 6 and r.outcome["player_points"] == 5
    assert nets(r)["tiger"] == (20_000, "TBAC-5.1.3")
    assert nets(r)["big_tiger"] == (50_000, "TBAC-5.1.3")  # 50 to 1 (TBAC-6.5)
    assert nets(r)["small_tiger"] == (-1000, "TBAC-6.4.1.1")
    assert not r.irregularities


def test_six_six_tie_tiger_loses_banker_and_player_push_tie_pays_8_to_1_TBAC_6_1_3():
    r = play(["3c", "Kh", "3d", "6s"])  # P 6 stands (4.14), B 6 stands when the Player stood (4.16)
    assert r.outcome["winner"] == "tie" and r.outcome["banker_points"] == 6
    assert nets(r)["tiger"] == (-1000, "TBAC-6.3.1.1")  # the Banker does not *win* on 6
    assert nets(r)["small_tiger"] == (-1000, "TBAC-6.4.1.1")
    assert nets(r)["banker"] == (0, "TBAC-6.1.2.3")
    assert nets(r)["player"] == (0, "TBAC-6.1.1.3")
    assert nets(r)["tie"] == (8000, "TBAC-5.1.3")


def test_banker_six_losing_is_no_tiger_TBAC_6_3_1_1():
    r = play(["3c", "Kh", "4d", "6s"])  # P 7 v B 6
    assert r.outcome["winner"] == "player"
    assert nets(r)["tiger"] == (-1000, "TBAC-6.3.1.1")


# ---- naturals, TBAC-4.13 ------------------------------------------------------------------------


def test_a_natural_stops_all_draws_and_player_natural_8_beats_banker_7_TBAC_4_13():
    r = play(["5c", "4h", "3d", "3s"])  # P 8 natural, B 7
    assert r.outcome["winner"] == "player" and r.outcome["banker_cards"] == 2
    assert any(s.clause == "TBAC-4.13" for s in r.steps)
    assert nets(r)["player"] == (1000, "TBAC-5.1.1")


def test_player_natural_8_against_banker_2_who_would_otherwise_draw_TBAC_4_13():
    r = play(["5c", "Kh", "3d", "2s"])  # B 2 would draw on any card (Table Two), but the natural stops it
    assert r.outcome == {"winner": "player", "player_points": 8, "banker_points": 2, "banker_cards": 2,
                         "player_pair": False, "banker_pair": False}
    assert not r.irregularities
    assert rules.required_card_count([parse_card(c) for c in ["5c", "Kh", "3d", "2s"]]) == 4


def test_natural_8_against_banker_6_no_tiger_TBAC_4_13():
    r = play(["4c", "Kh", "4d", "6s"])  # P 8 natural v B 6: no draws, the Player wins
    assert r.outcome["winner"] == "player" and r.outcome["banker_points"] == 6
    assert nets(r)["tiger"] == (-1000, "TBAC-6.3.1.1")


def test_banker_natural_stops_the_player_from_drawing_on_5_TBAC_4_13():
    r = play(["2c", "4h", "3d", "4s"])  # P 5 would draw; B 8 natural
    assert r.outcome["winner"] == "banker" and r.outcome["banker_points"] == 8
    assert not r.irregularities


def test_a_card_after_a_natural_is_an_extra_card_that_begins_a_free_hand_TBAC_7_6():
    r = play(["5c", "Kh", "3d", "2s", "7h"])
    assert r.outcome["winner"] == "player" and r.outcome["banker_points"] == 2  # the 7 is not the Banker's
    [irr] = r.irregularities
    assert (irr.kind, irr.clause, irr.voids_round) == ("drawing_rule_violation", "TBAC-7.6", False)
    assert "Free Hand" in irr.detail
    assert nets(r)["player"] == (1000, "TBAC-5.1.1")


# ---- Table One (TBAC-4.14) and Table Two (TBAC-4.15), 4.16 ---------------------------------------

_VALUE_CARD = {0: "T", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}

# Table Two exactly as printed in the text: Banker total -> (draws if Player's third card is, stands if)
TABLE_TWO_TEXT = {
    0: ("Any Card", ""),
    1: ("Any Card", ""),
    2: ("Any Card", ""),
    3: ("1 - 2 - 3 - 4 - 5 - 6 - 7 - 9 - 10", "8"),
    4: ("2 - 3 - 4 - 5 - 6 - 7", "1 - 8 - 9 - 10"),
    5: ("4 - 5 - 6 - 7", "1 - 2 - 3 - 8 - 9 - 10"),
    6: ("6 - 7", "1 - 2 - 3 - 4 - 5 - 8 - 9 - 10"),
    7: ("", "Stands"),
}


def _table_two_says_draw(banker: int, third_value: int) -> bool:
    draws, stands = TABLE_TWO_TEXT[banker]
    label = "10" if third_value == 0 else str(third_value)
    if draws == "Any Card":
        return True
    in_draws = label in re.split(r"\s*-\s*", draws) if draws else False
    in_stands = label in re.split(r"\s*-\s*", stands) if stands not in ("", "Stands") else stands == "Stands"
    assert in_draws != in_stands, f"Table Two cell {banker}/{label} must be exactly one of draw/stand"
    return in_draws


@pytest.mark.parametrize("banker", range(8))
@pytest.mark.parametrize("third", range(10))
def test_every_cell_of_table_two_TBAC_4_15(banker, third):
    """The Player draws (5); the Banker with ``banker`` points draws or stands on the third card's value."""
    banker_cards = ["Kh", _VALUE_CARD[banker] + "s"] if banker else ["Kh", "Qs"]
    face = _VALUE_CARD[third] if third else "J"  # a court card counts 0, like the "10" of the table
    cards = ["Kc", banker_cards[0], "5d", banker_cards[1], face + "h", "Ac"]
    r = play(cards, bets=("banker",))
    draws = _table_two_says_draw(banker, third)
    assert r.outcome["banker_cards"] == (3 if draws else 2)
    assert rules.banker_draws_after_player_draw(banker, third) is draws
    if draws:
        assert not r.irregularities  # the Ace is the Banker's third card
        assert any(s.clause == "TBAC-4.15" and "draws" in s.what for s in r.steps)
    else:  # the Ace was dealt in error after the Banker stood: it begins a Free Hand (TBAC-7.7)
        assert [(i.kind, i.clause) for i in r.irregularities] == [("drawing_rule_violation", "TBAC-7.7")]


def test_banker_3_stands_on_a_player_third_8_and_banker_6_draws_on_6_and_7_TBAC_4_15():
    assert play(["Kc", "Kh", "5d", "3s", "8h", "Ac"]).outcome["banker_cards"] == 2
    assert play(["Kc", "Kh", "5d", "6s", "6h", "Ac"]).outcome["banker_cards"] == 3
    assert play(["Kc", "Kh", "5d", "6s", "7h", "Ac"]).outcome["banker_cards"] == 3
    assert play(["Kc", "Kh", "5d", "6s", "5h", "Ac"]).outcome["banker_cards"] == 2


@pytest.mark.parametrize("player", range(8))
def test_table_one_player_draws_on_0_to_5_and_stands_on_6_7_TBAC_4_14(player):
    player_cards = ["Kc", _VALUE_CARD[player] + "d"] if player else ["Kc", "Qd"]
    # the Banker holds 7: it stands either way (4.15 row 7, 4.16), so the round is 4 or 5 cards
    cards = [player_cards[0], "Kh", player_cards[1], "7s", "2h"]
    r = play(cards, bets=("player",))
    drew = player <= 5
    assert rules.player_draws(player) is drew
    assert rules.required_card_count([parse_card(c) for c in cards]) == (5 if drew else 4)
    assert bool(r.irregularities) is (not drew)  # the 2 is extra when the Player stood


@pytest.mark.parametrize("banker,draws", [(0, True), (3, True), (5, True), (6, False), (7, False)])
def test_banker_after_player_stands_draws_on_0_to_5_TBAC_4_16(banker, draws):
    banker_cards = ["Kh", _VALUE_CARD[banker] + "s"] if banker else ["Kh", "Qs"]
    r = play(["3c", banker_cards[0], "4d", banker_cards[1], "2h"], bets=("banker",))  # P 7 stands
    assert r.outcome["banker_cards"] == (3 if draws else 2)
    clause = "TBAC-4.16"
    assert any(s.clause == clause for s in r.steps)


# ---- money: commission and no-commission, TBAC-5.1.1, 5.1.2 ---------------------------------------


def test_commission_on_an_odd_amount_is_rounded_down_TBAC_5_1_1():
    r = play(TWO_CARD_SIX_OVER_FIVE, bets=("banker",), amount=1001)  # 0.95 x 1001 = 950.95
    assert nets(r)["banker"] == (950, "TBAC-5.1.1")
    r = play(["6c", "Kh", "Qd", "7s"], bets=("banker",), amount=25)  # B 7 v P 6, no draws: 23.75
    assert r.settlements["banker"].net == 23


def test_commission_rounding_follows_the_rule_set_unit_and_mode():
    hundreds = dataclasses.replace(COMMISSION, params=dataclasses.replace(COMMISSION.params, rounding_unit=100))
    assert play(TWO_CARD_SIX_OVER_FIVE, bets=("banker",), amount=2500, ruleset=hundreds).settlements["banker"].net == 2300
    half_up = dataclasses.replace(hundreds, params=dataclasses.replace(hundreds.params, rounding=Rounding.HALF_UP))
    assert play(TWO_CARD_SIX_OVER_FIVE, bets=("banker",), amount=2500, ruleset=half_up).settlements["banker"].net == 2400


def test_no_commission_banker_winning_on_6_is_paid_1_to_2_TBAC_5_1_2():
    r = play(TWO_CARD_SIX_OVER_FIVE, bets=("banker", "tiger"), amount=1001, ruleset=NO_COMMISSION)
    assert nets(r)["banker"] == (500, "TBAC-5.1.2")  # half of 1001, the fraction kept
    assert nets(r)["tiger"] == (12_012, "TBAC-5.1.3")
    r = play(THREE_CARD_SIX_OVER_FIVE, bets=("banker",), amount=1000, ruleset=NO_COMMISSION)
    assert nets(r)["banker"] == (500, "TBAC-5.1.2")  # on 6 with three cards too


def test_no_commission_banker_winning_on_other_points_is_paid_1_to_1_TBAC_5_1_2():
    r = play(["6c", "Kh", "Qd", "7s"], bets=("banker", "player"), amount=1001, ruleset=NO_COMMISSION)
    assert nets(r) == {"banker": (1001, "TBAC-5.1.2"), "player": (-1001, "TBAC-6.1.1.2")}


def test_player_wins_1_to_1_and_banker_loses_TBAC_6_1_1_1():
    r = play(["4c", "Kh", "5d", "7s"], bets=("banker", "player"))  # P 9 natural v B 7
    assert nets(r) == {"banker": (-1000, "TBAC-6.1.2.2"), "player": (1000, "TBAC-5.1.1")}


# ---- pairs by face value, TBAC-4.11.2.1, 6.2 -------------------------------------------------------


def test_king_king_is_a_pair_and_king_queen_is_not_TBAC_6_2_1_1():
    r = play(["Kc", "Kh", "Kd", "Qs"], bets=("player_pair", "banker_pair"))  # P K K, B K Q; 0 v 0 ...
    assert r.outcome["player_pair"] is True and r.outcome["banker_pair"] is False
    assert nets(r) == {"player_pair": (11_000, "TBAC-5.1.3"), "banker_pair": (-1000, "TBAC-6.2.1.2")}


def test_ten_ten_is_a_pair_and_pairs_use_only_the_first_two_cards_TBAC_4_9_1_3():
    r = play(["Tc", "2h", "Td", "Ks", "2d", "2s"], bets=("player_pair", "banker_pair"))
    assert r.outcome["player_pair"] is True  # T T
    assert r.outcome["banker_pair"] is False  # 2 K, then a 2 as the third card does not count
    assert r.outcome["banker_cards"] == 3


# ---- irregularities, TBAC-7 ----------------------------------------------------------------------


def test_a_foreign_card_voids_the_round_and_every_wager_nets_0_TBAC_7_1():
    r = play(["2c", "Kh", "Zz", "6s", "Td"])
    assert r.void
    assert {s.net for s in r.settlements.values()} == {0}
    assert {s.clause for s in r.settlements.values()} == {"TBAC-7.1"}
    assert r.outcome == {}
    assert [(i.kind, i.clause, i.voids_round) for i in r.irregularities] == [("card_integrity", "TBAC-7.1", True)]


def test_a_foreign_card_the_hands_never_use_still_voids_TBAC_7_1():
    r = play(["3c", "Kh", "3d", "6s", "Zz"])  # a tie on four cards, then something not of the decks
    assert r.void and set(r.settlements) == set(ALL_BETS) and not r.unsettled


def test_a_foreign_burn_card_voids_the_round_TBAC_7_1():
    r = play(["3c", "Kh", "3d", "6s"], burns=["Xx"])
    assert r.void and r.settlements["tie"].net == 0


def test_an_extra_card_after_the_banker_stood_is_a_drawing_rule_violation_TBAC_7_7():
    cards = TWO_CARD_SIX_OVER_FIVE + ["9c"]
    r = play(cards)
    assert [(i.kind, i.clause) for i in r.irregularities] == [("drawing_rule_violation", "TBAC-7.7")]
    assert r.outcome["banker_cards"] == 2  # settled on the cards the rules give this round
    assert nets(r)["small_tiger"] == (22_000, "TBAC-5.1.3")
    assert any(s.clause == "TBAC-7.7" and "Free Hand" in s.what for s in r.steps)


def test_an_extra_card_when_the_player_stood_is_an_unauthorised_player_third_card_TBAC_7_6():
    r = play(["3c", "Kh", "3d", "6s", "5h"])  # 6-6: nobody draws; the 5 begins the next hand
    assert [(i.kind, i.clause) for i in r.irregularities] == [("drawing_rule_violation", "TBAC-7.6")]
    assert nets(r)["tie"] == (8000, "TBAC-5.1.3")


def test_a_withheld_player_third_card_leaves_the_result_unsettled_but_pairs_settled_TBAC_4_14():
    r = play(["2c", "Kh", "3d", "6s"])  # P 5 must draw
    assert [(i.kind, i.clause) for i in r.irregularities] == [("drawing_rule_violation", "TBAC-4.14")]
    assert set(r.unsettled) == {"banker", "player", "tie", "tiger", "small_tiger", "big_tiger"}
    assert r.unsettled["banker"].endswith("(TBAC-4.14)")
    assert nets(r)["player_pair"] == (-1000, "TBAC-6.2.1.2")
    assert "winner" not in r.outcome and r.outcome["player_pair"] is False


def test_a_withheld_banker_third_card_cites_the_rule_that_required_it_TBAC_4_15_and_4_16():
    r = play(["Ac", "Kh", "2d", "3s", "2h"])  # P 3 draws a 2; B 3 must draw (Table Two)
    assert [(i.kind, i.clause) for i in r.irregularities] == [("drawing_rule_violation", "TBAC-4.15")]
    r = play(["3c", "Kh", "4d", "3s"])  # P 7 stands; B 3 must draw (4.16)
    assert [(i.kind, i.clause) for i in r.irregularities] == [("drawing_rule_violation", "TBAC-4.16")]
    assert r.unsettled["tie"].endswith("(TBAC-4.16)")


def test_fewer_than_four_cards_is_card_integrity_TBAC_4_9_1():
    r = play(["2c", "Kh", "3d"])
    assert [(i.kind, i.clause) for i in r.irregularities] == [("card_integrity", "TBAC-4.9.1")]
    assert "banker_pair" in r.unsettled and "player_pair" in r.settlements  # the Player's two cards are there


def test_an_unreadable_card_the_hands_use_leaves_wagers_unsettled_TBAC_4_11():
    r = play(["2c", "Kh", "??", "6s", "Td"])
    assert [(i.kind, i.clause) for i in r.irregularities] == [("card_integrity", "TBAC-4.11")]
    assert set(r.unsettled) == set(ALL_BETS) - {"banker_pair"}
    assert nets(r)["banker_pair"] == (-1000, "TBAC-6.2.1.2")


def test_an_unreadable_card_the_hands_never_use_does_not_stop_settlement_TBAC_4_11():
    r = play(["3c", "Kh", "3d", "6s", "??"])
    assert {(i.kind, i.clause) for i in r.irregularities} == {("card_integrity", "TBAC-4.11"), ("drawing_rule_violation", "TBAC-7.6")}
    assert not r.unsettled and nets(r)["tie"] == (8000, "TBAC-5.1.3")


def test_an_unknown_bet_or_a_negative_amount_is_unsettled_with_a_reason():
    r = play(TWO_CARD_SIX_OVER_FIVE, bets=("dragon", "banker"), amount=-5)
    assert r.unsettled["dragon"].endswith("(TBAC-4.5)")
    assert r.unsettled["banker"].endswith("(TBAC-4.2)")


# ---- the record --------------------------------------------------------------------------------


def test_every_step_names_its_clause_and_the_draw_reads_like_the_rule():
    r = play(TWO_CARD_SIX_OVER_FIVE, burns=["9h"])
    assert all(re.fullmatch(r"TBAC-\d+(\.\d+)*", s.clause) for s in r.steps)
    whats = [f"{s.what} ({s.clause})" for s in r.steps]
    assert "Player 2 cards 5 points: draws (TBAC-4.14)" in whats
    assert whats[0].startswith("Burn 9h") and "Card 1 2c to the Player (TBAC-4.9.1.1)" in whats


def test_the_generic_entry_point_dispatches_to_baccarat():
    events = tuple(DeviceCard(parse_card(c)) for c in THREE_CARD_SIX_OVER_FIVE)
    r = settle_any(RoundInput(ruleset=COMMISSION, cards=events, wagers=(Wager("w", 1, "big_tiger", 100),)))
    assert r.settlements["w"].net == 5000


def test_banker_first_deal_order_is_a_rule_set_parameter_TBAC_4_9_1():
    swapped = dataclasses.replace(
        COMMISSION, params=dataclasses.replace(COMMISSION.params, deal_order=("banker", "player", "banker", "player"))
    )
    # the same cards now give the Banker 2+3=5 and the Player K+6=6: the Player stands, the Banker draws a T
    r = play(TWO_CARD_SIX_OVER_FIVE, ruleset=swapped)
    assert r.outcome["player_points"] == 6 and r.outcome["banker_points"] == 5 and r.outcome["banker_cards"] == 3


def test_a_three_card_banker_6_that_ties_wins_no_tiger_of_any_kind_TBAC_6_3_to_6_5():
    # P A 2 = 3 draws a 3: 6; B 3 K = 3 draws on the Player's 3 (Table Two) a 3: 6 with three cards; a 6-6 Tie
    r = play(["Ac", "3c", "2d", "Kh", "3h", "3s"])
    assert r.outcome == {"winner": "tie", "player_points": 6, "banker_points": 6, "banker_cards": 3,
                         "player_pair": False, "banker_pair": False}
    assert not r.irregularities
    assert nets(r)["tiger"] == (-1000, "TBAC-6.3.1.1")
    assert nets(r)["big_tiger"] == (-1000, "TBAC-6.5.1.1")
    assert nets(r)["small_tiger"] == (-1000, "TBAC-6.4.1.1")
    assert nets(r)["tie"] == (8000, "TBAC-5.1.3")
    assert nets(r)["banker"] == (0, "TBAC-6.1.2.3") and nets(r)["player"] == (0, "TBAC-6.1.1.3")
    r = play(["Ac", "3c", "2d", "Kh", "3h", "3s"], ruleset=NO_COMMISSION)  # no Banker win, so no 1 to 2 either
    assert nets(r)["banker"] == (0, "TBAC-6.1.2.3")


def test_commission_at_the_smallest_unit_keeps_the_fraction_and_a_tie_stands_off_whole_TBAC_5_1_1():
    # 0.95 to 1 on 1, 19, 20 and 21 units: 0.95, 18.05, 19, 19.95 -> 0, 18, 19, 19 (the house keeps the fraction)
    for amount, paid in ((1, 0), (19, 18), (20, 19), (21, 19)):
        assert nets(play(TWO_CARD_SIX_OVER_FIVE, bets=("banker",), amount=amount))["banker"] == (paid, "TBAC-5.1.1")
    # no-commission: half of 1 unit on a Banker 6 is 0; 1 to 1 on other points is whole
    assert nets(play(TWO_CARD_SIX_OVER_FIVE, bets=("banker",), amount=1, ruleset=NO_COMMISSION))["banker"] == (0, "TBAC-5.1.2")
    # a Tie: Banker and Player stand off whatever the amount, the Tie pays exactly 8 to 1
    r = play(["3c", "Kh", "3d", "6s"], bets=("banker", "player", "tie"), amount=1)
    assert nets(r) == {"banker": (0, "TBAC-6.1.2.3"), "player": (0, "TBAC-6.1.1.3"), "tie": (8, "TBAC-5.1.3")}
