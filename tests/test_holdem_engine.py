"""Texas Hold'em Bonus engine: golden rounds from the rule texts, each naming its clause.

Card events are written out by hand in the order they leave the shoe or device, ``b:Xx`` for a
burn, so that every test also pins the deal procedure (HTB-4.11, 4.12.1, MBS-3.6, 3.6.1).
"""

from __future__ import annotations

import dataclasses

import pytest

from rulebook.cards import parse_card
from rulebook.catalogue import builtin
from rulebook.engine import settle_round as settle_any
from rulebook.holdem_bonus.engine import settle_round
from rulebook.round import Action, DeviceCard, RoundInput, Wager

HOIANA = builtin().latest("hoiana-holdem-bonus")
MBS = builtin().latest("mbs-holdem-bonus-progressive")
GUIDE = builtin().latest("guide-holdem-bonus-progressive")


def events(text: str) -> tuple[DeviceCard, ...]:
    out = []
    for tok in text.split():
        if tok.startswith("b:"):
            out.append(DeviceCard(parse_card(tok[2:]), True))
        else:
            out.append(DeviceCard(parse_card(tok)))
    return tuple(out)


def shoe(seats: list[str], flop: str, turn: str, river: str, dealer: str, burns: str | None = None) -> str:
    """HTB-4.11 order: burn, first card to each seat, second card to each seat, burn, flop, burn, turn, burn, river, dealer.

    The burns are the first four cards of the deck not used by the hands, unless given."""
    used = " ".join([*seats, flop, turn, river, dealer]).split()
    b = burns.split() if burns else [c for c in (r + u for r in "23456789TJQKA" for u in "cdhs") if c not in used][:4]
    first = " ".join(s.split()[0] for s in seats)
    second = " ".join(s.split()[1] for s in seats)
    return f"b:{b[0]} {first} {second} b:{b[1]} {flop} b:{b[2]} {turn} b:{b[3]} {river} {dealer}"


def device(seats: list[str], flop: str, turn: str, river: str, dealer: str) -> str:
    """HTB-4.12.1 / MBS-3.6.1 order: five community cards, two to each seat, two to the dealer."""
    return f"{flop} {turn} {river} {' '.join(seats)} {dealer}"


def play(seat: int, *names: str) -> list[Action]:
    return [Action(seat, 1, n) for n in names]


def rnd(ruleset, cards: str, wagers, actions=(), mode="shoe", **kw) -> RoundInput:
    ws = tuple(Wager(f"{bet}{seat}", seat, bet, amount) for seat, bet, amount in wagers)
    return RoundInput(ruleset, events(cards), ws, tuple(actions), deal_mode=mode, **kw)


def nets(result) -> dict[str, int]:
    return {k: s.net for k, s in result.settlements.items()}


def clauses(result) -> dict[str, str]:
    return {k: s.clause for k, s in result.settlements.items()}


# --- folds -----------------------------------------------------------------------------------


def test_folded_aces_lose_ante_and_bonus_HTB_4_11_2_i():
    cards = shoe(["As Ad", "7c 8c"], "Kd 9s 4h", "3c", "Jd", "Qh Qs")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "bonus", 50), (2, "ante", 100)], play(1, "fold") + play(2, "fold")))
    assert nets(r)["ante1"] == -100 and nets(r)["bonus1"] == -50
    assert clauses(r)["bonus1"] == "HTB-4.11.2.i"
    assert not r.irregularities and not r.void


def test_mbs_folded_hand_still_collects_community_four_of_a_kind_MBS_3_7_1_and_4_1_3():
    # the community holds four nines: the folded seat's jackpot wager is paid the community line (MBS-4.1.3)
    cards = "As 7c Ad 8c 9c 9d 9h 9s Kd Qh Qs"  # MBS-3.6: no burns
    r = settle_round(
        rnd(MBS, cards, [(1, "ante", 100), (1, "bonus", 50), (1, "progressive", 500), (2, "ante", 100)],
            play(1, "fold") + play(2, "flop", "check", "check"), currency="SGD", jackpot_meter=50_000_00)
    )
    assert nets(r)["ante1"] == -100 and nets(r)["bonus1"] == -50  # the fold loses the A-A Bonus (MBS-3.7.1)
    assert nets(r)["progressive1"] == 30_000 - 500  # $300 community four of a kind, wager collected
    assert clauses(r)["progressive1"] == "MBS-4.1.3"


def test_mbs_folded_hand_is_not_paid_a_hole_card_jackpot_MBS_3_7_1():
    # seat 1 holds four nines with its hole cards but folded: only community hands pay after a fold
    cards = "9s 7c 9d 8c 9c 9h Kd 2s 3s Qh Qs"
    r = settle_round(rnd(MBS, cards, [(1, "ante", 100), (1, "progressive", 500), (2, "ante", 100)],
                         play(1, "fold") + play(2, "flop"), currency="SGD", jackpot_meter=50_000_00))
    assert nets(r)["progressive1"] == -500 and clauses(r)["progressive1"] == "MBS-4.1.2"


# --- the comparison ----------------------------------------------------------------------------


def test_six_high_straight_beats_the_wheel_HTB_5_4_4():
    # community 2 3 4 5 K; the player holds 6 (six-high straight), the dealer an ace (the wheel)
    cards = shoe(["6c 9d"], "2h 3d 4s", "5c", "Kh", "Ad Jc")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop", "check", "check")))
    assert nets(r) == {"ante1": 100, "flop1": 200}  # a winning straight also pays the Ante (HTB-5.2)
    assert r.outcome["seats"]["1"]["result"] == "win"
    assert r.outcome["dealer_hand"].startswith("Straight, five high")
    # and the other way round: the wheel loses to the dealer's six-high straight
    cards = shoe(["Ad Jc"], "2h 3d 4s", "5c", "Kh", "6c 9d")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop", "check", "check")))
    assert nets(r) == {"ante1": -100, "flop1": -200}
    assert clauses(r)["ante1"] == "HTB-5.3"


def test_ante_stands_off_on_a_winning_two_pair_HTB_5_2():
    cards = shoe(["Kc Qd"], "Ks Qh 7d", "3c", "2s", "Jh 9h")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200), (1, "turn", 100), (1, "river", 100)],
                         play(1, "flop", "turn", "river")))
    assert nets(r) == {"ante1": 0, "flop1": 200, "turn1": 100, "river1": 100}
    assert clauses(r)["ante1"] == "HTB-5.2"
    assert clauses(r)["flop1"] == "HTB-6.1.1"


def test_ante_pays_on_a_winning_straight_HTB_5_2_and_6_1_1():
    cards = shoe(["9c Td"], "Js Qh 8d", "3c", "7s", "Kh Kd")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop", "check", "check")))
    assert nets(r) == {"ante1": 100, "flop1": 200}
    assert clauses(r)["ante1"] == "HTB-6.1.1"


def test_guide_pays_the_ante_only_on_a_flush_or_better_THB_G_SETTLEMENT():
    straight = shoe(["9c Td"], "Js Qh 8d", "3c", "7s", "Kh Kd")
    r = settle_round(rnd(GUIDE, straight, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop", "check", "check")))
    assert nets(r) == {"ante1": 0, "flop1": 200}  # a winning straight: Ante stands off under the guide
    assert clauses(r)["ante1"] == "THB-G-SETTLEMENT"
    assert "below a Flush" in r.settlements["ante1"].detail
    flush = shoe(["9h Th"], "Jh 2h 4d", "3c", "7h", "Kc Kd")
    r = settle_round(rnd(GUIDE, flush, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop", "check", "check")))
    assert nets(r) == {"ante1": 100, "flop1": 200}
    # the same straight under Hoiana pays the Ante (HTB-5.2)
    r = settle_round(rnd(HOIANA, straight, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop", "check", "check")))
    assert nets(r)["ante1"] == 100


def test_stand_off_returns_ante_flop_turn_river_but_settles_the_bonus_HTB_5_4():
    # both play the board's straight 5-9: equal hands
    cards = shoe(["2c 2d", "Kc 3d"], "5h 6s 7d", "8c", "9h", "Ah 3s")
    wagers = [(1, "ante", 100), (1, "bonus", 10), (1, "flop", 200), (1, "turn", 100), (1, "river", 100), (2, "ante", 100)]
    r = settle_round(rnd(HOIANA, cards, wagers, play(1, "flop", "turn", "river") + play(2, "fold")))
    assert nets(r) == {"ante1": 0, "bonus1": 30, "flop1": 0, "turn1": 0, "river1": 0, "ante2": -100}
    assert {clauses(r)[k] for k in ("ante1", "flop1", "turn1", "river1")} == {"HTB-5.4"}
    assert clauses(r)["bonus1"] == "HTB-6.1.2"  # the Bonus is not returned on a stand-off: it has won 3 to 1


def test_concede_loses_every_wager_HTB_5_6():
    cards = shoe(["As Ks"], "2h 3d 4s", "5c", "9h", "7d 7c")
    wagers = [(1, "ante", 100), (1, "bonus", 10), (1, "flop", 200), (1, "turn", 100)]
    r = settle_round(rnd(HOIANA, cards, wagers, play(1, "flop", "turn", "check", "concede")))
    assert nets(r) == {"ante1": -100, "bonus1": -10, "flop1": -200, "turn1": -100}
    assert set(clauses(r).values()) == {"HTB-5.6"}


def test_mbs_has_no_concession_so_a_concede_is_an_illegal_action_MBS_3_8():
    cards = "As 7c Ks 8c 2h 3d 4s 5c 9h 7d Jc"
    r = settle_round(rnd(MBS, cards, [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100)],
                         play(1, "flop", "check", "check", "concede") + play(2, "fold")))
    assert [(i.kind, i.clause) for i in r.irregularities] == [("illegal_action", "MBS-3.8")]
    assert nets(r)["ante1"] == 100  # the hand is compared (MBS-3.8): the wheel beats the dealer's sevens


# --- the Bonus -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ruleset, net, clause",
    [(HOIANA, 1000 * 10, "HTB-6.1.2"), (MBS, 1000 * 10, "MBS-4.1.1"), (GUIDE, 30 * 10, "THB-G-BONUS")],
)
def test_aces_against_the_dealers_aces_pay_1000_to_1_where_the_table_has_it(ruleset, net, clause):
    # HTB-6.1.2 / MBS-4.1.1: 1000 to 1; the guide's table has no such line: A-A pays 30 to 1
    if ruleset is MBS:
        cards = "As 7c Ad 8c Kd 9s 4h 3c Jd Ah Ac"
    else:
        cards = shoe(["As Ad", "7c 8c"], "Kd 9s 4h", "3c", "Jd", "Ah Ac")
    r = settle_round(rnd(ruleset, cards, [(1, "ante", 100), (1, "bonus", 10), (2, "ante", 100)],
                         play(1, "flop") + play(2, "fold"), currency="SGD"))
    assert nets(r)["bonus1"] == net
    assert clauses(r)["bonus1"] == clause


@pytest.mark.parametrize(
    "hole, odds",
    [("As Ks", 25), ("Ah Qh", 20), ("Jd Ad", 20), ("As Kd", 15), ("Qc Qd", 10), ("Ac Jd", 5), ("Th Tc", 3), ("2s 2d", 3), ("Ks Qs", None)],
)
def test_bonus_pay_table_HTB_6_1_2(hole, odds):
    cards = shoe([hole], "5h 6s 7d", "8c", "9h", "3h 4c")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "bonus", 10)], play(1, "flop")))
    assert nets(r)["bonus1"] == (odds * 10 if odds else -10)
    assert clauses(r)["bonus1"] == ("HTB-6.1.2" if odds else "HTB-5.5")


# --- the deal procedures ---------------------------------------------------------------------


def test_the_steps_of_a_shoe_deal_put_each_decision_on_its_street_HTB_4_11_2_to_4_11_4():
    """HTB-4.11.2: "After examining the Hole Cards, the Player may decide to" fold or bet the Flop; 4.11.3: the Dealer
    deals the flop, and "Before the Turn Card is dealt" the player bets the Turn or checks; 4.11.4 the same for the
    River after the turn. The steps read in that order, each under its clause, as a dispute reviewer replays the
    round: they listed every card, the dealer's included, before the first decision."""
    wagers = [(1, "ante", 100), (1, "flop", 200), (1, "river", 100), (3, "ante", 100), (4, "ante", 100), (4, "flop", 200),
              (4, "turn", 100)]
    actions = play(1, "flop", "check", "river") + play(3, "fold") + play(4, "flop", "turn", "check")
    cards = shoe(["Ah Ad", "7c 2d", "Kc Kd"], "5h 6s 7d", "8c", "9h", "3h 4c", burns="2c 2h 2s 3c")
    r = settle_round(rnd(HOIANA, cards, wagers, actions))
    assert [s.what for s in r.steps] == [
        "burn: 2c", "seat 1 hole card 1: Ah", "seat 3 hole card 1: 7c", "seat 4 hole card 1: Kc",
        "seat 1 hole card 2: Ad", "seat 3 hole card 2: 2d", "seat 4 hole card 2: Kd",
        "seat 1 bets the Flop", "seat 3 folds: Ante and Bonus lose", "seat 4 bets the Flop",
        "burn: 2h", "flop card 1: 5h", "flop card 2: 6s", "flop card 3: 7d",
        "seat 1 checks the Turn", "seat 4 bets the Turn",
        "burn: 2s", "turn card: 8c",
        "seat 1 bets the River", "seat 4 checks the River",
        "burn: 3c", "river card: 9h", "dealer hole card 1: 3h", "dealer hole card 2: 4c",
    ]
    clause = {s.what: s.clause for s in r.steps}
    assert (clause["seat 1 bets the Flop"], clause["seat 4 bets the Turn"], clause["seat 1 bets the River"]) == (
        "HTB-4.11.2.ii", "HTB-4.11.3", "HTB-4.11.4")
    # a device deals the board before the hands (HTB-4.12.1): every card is out before anyone decides
    device = "5h 6s 7d 8c 9h Ah Ad 7c 2d Kc Kd 3h 4c"
    d = settle_round(rnd(HOIANA, device, wagers, actions, mode="device"))
    assert [s.what for s in d.steps][13:] == ["seat 1 bets the Flop", "seat 3 folds: Ante and Bonus lose",
                                              "seat 4 bets the Flop", "seat 1 checks the Turn", "seat 4 bets the Turn",
                                              "seat 1 bets the River", "seat 4 checks the River"]
    assert nets(r) == nets(d)


def test_shoe_and_device_procedures_give_the_same_hands_from_their_own_positions_HTB_4_11_and_4_12_1():
    wagers = [(1, "ante", 100), (1, "flop", 200), (4, "ante", 100), (4, "flop", 200)]
    actions = play(1, "flop", "check", "check") + play(4, "flop", "check", "check")
    # HTB-4.11: burn, seat 1 first, seat 4 first, seat 1 second, seat 4 second, burn, flop, burn, turn, burn, river, dealer
    by_shoe = "b:2c Ah Kc Ad Kd b:2d Qs Js 3h b:2h 4d b:2s 9c Tc Th"
    # HTB-4.12.1: flop, turn, river, seat 1's two, seat 4's two, dealer's two; no burns
    by_device = "Qs Js 3h 4d 9c Ah Ad Kc Kd Tc Th"
    a = settle_round(rnd(HOIANA, by_shoe, wagers, actions, mode="shoe"))
    b = settle_round(rnd(HOIANA, by_device, wagers, actions, mode="device"))
    assert a.outcome == b.outcome
    assert a.outcome["seats"]["1"]["hand"].startswith("One pair, aces")
    assert a.outcome["seats"]["4"]["hand"].startswith("One pair, kings")
    assert a.outcome["dealer_hand"].startswith("One pair, tens")
    assert nets(a) == nets(b) == {"ante1": 0, "flop1": 200, "ante4": 0, "flop4": 200}
    assert [s.what for s in a.steps[:5]] == ["burn: 2c", "seat 1 hole card 1: Ah", "seat 4 hole card 1: Kc", "seat 1 hole card 2: Ad", "seat 4 hole card 2: Kd"]
    assert a.steps[1].clause == "HTB-4.11.1" and b.steps[0].clause == "HTB-4.12.1"
    assert not a.irregularities and not b.irregularities
    # the device order read as a shoe deal puts other cards in the hands (and misses the burns)
    c = settle_round(rnd(HOIANA, by_device, wagers, actions, mode="shoe"))
    assert any(i.clause == "HTB-7.8" for i in c.irregularities)


def test_seats_without_an_ante_are_not_dealt_HTB_4_11_1():
    # a Bonus on seat 3 with no Ante: the seat receives no cards, the wager cannot be settled
    cards = shoe(["Ah Ad"], "Qs Js 3h", "4d", "9c", "Tc Th")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200), (3, "bonus", 10)], play(1, "flop")))
    assert "no Ante" in r.unsettled["bonus3"] and "HTB-4.7" in r.unsettled["bonus3"]
    assert not r.irregularities


def test_a_missing_burn_is_flagged_and_the_round_reconstructed_HTB_7_8():
    # the dealer did not burn before the turn: the turn card follows the flop directly
    cards = "b:2c Ah Kc Ad Kd b:2d Qs Js 3h 4d b:2s 9c Tc Th"
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200), (4, "ante", 100)], play(1, "flop") + play(4, "fold")))
    assert [(i.kind, i.clause, i.voids_round) for i in r.irregularities] == [("card_integrity", "HTB-7.8", False)]
    assert not r.void
    assert r.outcome["community"] == ["Qs", "Js", "3h", "4d", "9c"]
    assert nets(r) == {"ante1": 0, "flop1": 200, "ante4": -100}


def test_mbs_shoe_mode_has_no_burns_MBS_3_6():
    # one card to each seat, a second to each, five community cards, the dealer's two: no burns
    cards = "Ah Kc Ad Kd Qs Js 3h 4d 9c Tc Th"
    r = settle_round(rnd(MBS, cards, [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100)], play(1, "flop") + play(2, "fold")))
    assert not r.irregularities
    assert r.outcome["community"] == ["Qs", "Js", "3h", "4d", "9c"]
    assert r.steps[0].clause == "MBS-3.6"
    # a burn in an MBS shoe round is a burn the procedure does not have
    burned = "b:2c " + cards
    r = settle_round(rnd(MBS, burned, [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100)], play(1, "flop") + play(2, "fold")))
    assert [(i.kind, i.clause, i.voids_round) for i in r.irregularities] == [("card_integrity", "MBS-3.6", False)]
    assert r.outcome["community"] == ["Qs", "Js", "3h", "4d", "9c"]


def test_all_seats_fold_and_the_deal_stops_after_the_hole_cards_HTB_4_11_2_i():
    cards = "b:2c Ah Kc Ad Kd"
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "bonus", 10), (4, "ante", 100)], play(1, "fold") + play(4, "fold")))
    assert nets(r) == {"ante1": -100, "bonus1": -10, "ante4": -100}
    assert not r.irregularities and not r.void


# --- irregularities --------------------------------------------------------------------------


def test_foreign_card_voids_the_round_HTB_7_1_1_and_MBS_5_1():
    cards = shoe(["Ah Kc"], "Qs Js 3h", "4d", "9c", "Tc Th").replace("Js", "Zz")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "bonus", 10)], play(1, "fold")))
    assert r.void and nets(r) == {"ante1": 0, "bonus1": 0}
    assert clauses(r)["ante1"] == "HTB-7.1.1"
    assert r.irregularities[0].voids_round
    r = settle_round(rnd(MBS, "Ah Kc Qs Zz 3h 4d 9c Tc Th", [(1, "ante", 100)], play(1, "flop")))
    assert r.void and clauses(r)["ante1"] == "MBS-5.1"


def test_guide_states_no_rule_for_a_foreign_card_so_the_wagers_are_unsettled():
    cards = shoe(["Ah Kc"], "Qs Js 3h", "4d", "9c", "Tc Th").replace("Js", "Zz")
    r = settle_round(rnd(GUIDE, cards, [(1, "ante", 100)], play(1, "flop")))
    assert not r.void and "THB-G-SUMMARY" in r.unsettled["ante1"]


def test_excess_or_shortage_of_cards_voids_the_round_HTB_7_7_and_MBS_5_2():
    full = shoe(["Ah Kc"], "Qs Js 3h", "4d", "9c", "Tc Th")
    r = settle_round(rnd(HOIANA, full + " 8h", [(1, "ante", 100)], play(1, "flop")))
    assert r.void and clauses(r)["ante1"] == "HTB-7.7"
    r = settle_round(rnd(HOIANA, full.rsplit(" ", 1)[0], [(1, "ante", 100)], play(1, "flop")))
    assert r.void and "short" in r.irregularities[-1].detail
    r = settle_round(rnd(MBS, "Ah Kc Qs Js 3h 4d 9c Tc", [(1, "ante", 100)], play(1, "flop")))
    assert r.void and clauses(r)["ante1"] == "MBS-5.2"


def test_a_card_seen_twice_in_one_deck_is_an_excess_HTB_7_7():
    cards = shoe(["Ah Kc"], "Qs Js 3h", "4d", "9c", "Tc Ah")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100)], play(1, "fold")))
    assert r.void and "Ah" in r.irregularities[0].detail


def test_unread_card_is_settled_where_it_does_not_matter():
    # the dealer's second card is unread. Seat 1 folded: its wagers do not depend on it.
    # Seat 4 holds a royal flush: it beats any dealer hand, so it is settled too.
    cards = "b:2c 7h As 2d Ks b:3c Qs Js Ts b:3d 4d b:3h 9c Tc ??"
    wagers = [(1, "ante", 100), (1, "bonus", 10), (4, "ante", 100), (4, "flop", 200), (4, "bonus", 10)]
    r = settle_round(rnd(HOIANA, cards, wagers, play(1, "fold") + play(4, "flop")))
    assert nets(r) == {"ante1": -100, "bonus1": -10, "ante4": 100, "flop4": 200, "bonus4": 250}
    assert not r.unsettled


def test_unread_card_leaves_unsettled_the_wagers_it_decides():
    # seat 1 holds a pair of kings; the dealer's unread card could give him aces or not
    cards = "b:5c Kh 9d Kd 8s b:6c Qs Js 3h b:6d 4d b:6h 2s Ac ??"
    wagers = [(1, "ante", 100), (1, "flop", 200), (1, "bonus", 10), (4, "ante", 100)]
    r = settle_round(rnd(HOIANA, cards, wagers, play(1, "flop") + play(4, "fold")))
    assert set(r.unsettled) == {"ante1", "flop1"}
    assert "dealer hole card 2" in r.unsettled["flop1"]
    assert nets(r) == {"bonus1": 100, "ante4": -100}  # K-K pays 10 to 1 whatever the dealer holds


def test_unread_card_decides_the_aces_against_aces_line_HTB_6_1_2():
    cards = "b:5c As 9d Ad 8s b:6c Qs Js 3h b:6d 4d b:6h 2s Ac ??"
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "bonus", 10), (4, "ante", 100)], play(1, "fold") + play(4, "flop")))
    assert nets(r)["bonus1"] == -10  # folded: lost whatever the dealer holds
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "bonus", 10), (4, "ante", 100)], play(1, "flop") + play(4, "fold")))
    assert "bonus1" in r.unsettled  # 1000 to 1 if the unread card is the last ace, else 30 to 1
    r = settle_round(rnd(GUIDE, cards, [(1, "ante", 100), (1, "bonus", 10), (4, "ante", 100)], play(1, "flop") + play(4, "fold")))
    assert nets(r)["bonus1"] == 300  # the guide pays 30 to 1 either way


def test_the_device_loaded_more_decks_than_the_rule_set_plays_HTB_4_1():
    cards = shoe(["Ah Kc"], "Qs Js 3h", "4d", "9c", "Tc Th")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop"), decks=2))
    assert [(i.kind, i.clause, i.voids_round) for i in r.irregularities] == [("card_integrity", "HTB-4.1", False)]
    assert "ante1" in r.settlements


# --- decisions -------------------------------------------------------------------------------

BASE = shoe(["Ah Kc", "7d 2c"], "Qs Js 3h", "4d", "9c", "Tc Th")


def test_turn_bet_after_folding_is_an_illegal_action_HTB_4_11_2_i():
    wagers = [(1, "ante", 100), (1, "turn", 100), (2, "ante", 100)]
    r = settle_round(rnd(HOIANA, BASE, wagers, play(1, "fold", "turn") + play(2, "fold")))
    kinds = [(i.kind, i.clause) for i in r.irregularities]
    assert ("illegal_action", "HTB-4.11.2.i") in kinds
    assert nets(r) == {"ante1": -100, "ante2": -100}  # the fold stands
    assert "folded" in r.unsettled["turn1"]


def test_flop_bet_after_a_check_is_an_illegal_action_HTB_4_11_2():
    wagers = [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100)]
    r = settle_round(rnd(HOIANA, BASE, wagers, play(1, "check", "flop") + play(2, "fold")))
    assert [(i.kind, i.clause) for i in r.irregularities][0] == ("illegal_action", "HTB-4.11.2.ii")
    # the decisions are read no further; the Flop wager still tells that the seat played
    assert "ante1" in r.settlements


def test_turn_wager_after_checking_the_turn_is_refused_HTB_4_11_3():
    wagers = [(1, "ante", 100), (1, "flop", 200), (1, "turn", 100), (2, "ante", 100)]
    r = settle_round(rnd(HOIANA, BASE, wagers, play(1, "flop", "check", "turn") + play(2, "fold")))
    assert ("illegal_action", "HTB-4.11.3") in [(i.kind, i.clause) for i in r.irregularities]
    assert "turn1" in r.unsettled and "ante1" in r.settlements and "flop1" in r.settlements


def test_decisions_are_read_from_the_wagers_when_the_log_has_none():
    r = settle_round(rnd(HOIANA, BASE, [(1, "ante", 100), (1, "flop", 200), (1, "river", 100), (2, "ante", 100)]))
    # seat 1 played (its Flop wager) and bet the river; seat 2 has no decision and no Flop wager:
    # an absent player, whose Ante is returned (HTB-7.11; docs/interpretations/holdem_bonus.md)
    assert {"ante1", "flop1", "river1"} <= set(r.settlements)
    assert (r.settlements["ante2"].net, r.settlements["ante2"].clause) == (0, "HTB-7.11")


def test_absent_player_ante_and_bonus_are_returned_HTB_7_11():
    wagers = [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100), (2, "bonus", 50)]
    r = settle_round(rnd(HOIANA, BASE, wagers, play(1, "flop")))
    assert {k: (s.net, s.clause) for k, s in r.settlements.items() if k.endswith("2")} == {
        "ante2": (0, "HTB-7.11"), "bonus2": (0, "HTB-7.11")}
    assert not r.irregularities
    # near miss: a recorded fold is a decision, not an absence: Ante and Bonus lose (HTB-4.11.2.i)
    r = settle_round(rnd(HOIANA, BASE, wagers, play(1, "flop") + play(2, "fold")))
    assert (r.settlements["ante2"].net, r.settlements["bonus2"].net) == (-100, -50)


def test_mbs_has_no_absent_player_rule_so_an_undecided_seat_is_unsettled():
    cards = "Ah 7d Kc 2c Qs Js 3h 4d 9c Tc Th"  # MBS-3.6: no burns
    r = settle_round(rnd(MBS, cards, [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100)]))
    assert "ante2" not in r.settlements and "MBS-3.7" in r.unsettled["ante2"]


def test_device_mode_cites_the_device_decisions_HTB_4_12_2_i():
    cards = device(["Ah Kc", "7d 2c"], "Qs Js 3h", "4d", "9c", "Tc Th")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (2, "ante", 100)], play(1, "flop") + play(2, "fold"), mode="device"))
    assert clauses(r)["ante2"] == "HTB-4.12.2.i"


def test_unknown_deal_mode_leaves_the_round_unsettled():
    r = settle_round(rnd(HOIANA, BASE, [(1, "ante", 100)], play(1, "flop"), mode=None))
    assert "deal_mode" in r.unsettled["ante1"]


# --- the progressive jackpot -------------------------------------------------------------------

ROYAL_ON_FLOP = "As 7c Ks 8c Qs Js Ts 2d 3h 4d 5d"  # MBS shoe: seat 1 As Ks, seat 2 7c 8c, flop Qs Js Ts


def test_royal_on_hole_and_flop_pays_the_whole_meter_MBS_4_1_2():
    r = settle_round(rnd(MBS, ROYAL_ON_FLOP, [(1, "ante", 100), (1, "flop", 200), (1, "progressive", 500), (2, "ante", 100)],
                         play(1, "flop") + play(2, "fold"), currency="SGD", jackpot_meter=12_345_678))
    s = r.settlements["progressive1"]
    assert s.net == 12_345_678 - 500 and s.clause == "MBS-4.1.2"
    assert "100% of the meter" in s.detail


def test_royal_on_the_turn_pays_a_quarter_and_on_the_river_a_twentieth_MBS_4_1_2():
    turn = "As 7c Ks 8c Qs Js 2d Ts 3h 4d 5d"
    r = settle_round(rnd(MBS, turn, [(1, "ante", 100), (1, "progressive", 500), (2, "ante", 100)],
                         play(1, "flop") + play(2, "fold"), currency="SGD", jackpot_meter=10_000_001))
    assert r.settlements["progressive1"].net == 2_500_000 - 500  # 25 % rounded down to the cent
    river = "As 7c 2d 8c Qs Js Ks 3h Ts 4d 5d"
    r = settle_round(rnd(MBS, river, [(1, "ante", 100), (1, "progressive", 500), (2, "ante", 100)],
                         play(1, "flop") + play(2, "fold"), currency="SGD", jackpot_meter=10_000_000))
    assert r.settlements["progressive1"].net == 500_000 - 500


def test_community_royal_pays_the_fixed_amount_not_the_percentage_MBS_4_1_3():
    cards = "2d 7c 3d 8c As Ks Qs Js Ts 4d 5d"
    r = settle_round(rnd(MBS, cards, [(1, "ante", 100), (1, "progressive", 500), (2, "ante", 100), (2, "progressive", 500)],
                         play(1, "fold") + play(2, "flop"), currency="SGD", jackpot_meter=50_000_000))
    assert r.settlements["progressive1"].net == 1_000_000 - 500  # paid to the folded seat too (MBS-3.7.1)
    assert r.settlements["progressive2"].net == 1_000_000 - 500
    assert r.settlements["progressive2"].clause == "MBS-4.1.3"


def test_jackpot_in_another_currency_or_without_a_meter_cannot_be_settled():
    wagers = [(1, "ante", 100), (1, "progressive", 500), (2, "ante", 100), (2, "progressive", 500)]
    r = settle_round(rnd(MBS, ROYAL_ON_FLOP, wagers, play(1, "flop") + play(2, "fold"), currency="USD"))
    assert "no meter" in r.unsettled["progressive1"]
    assert r.settlements["progressive2"].net == -500  # a losing jackpot wager needs neither
    four = "9s 7c 9d 8c 9c 9h 2d 3h 4d 5d 6d"
    r = settle_round(rnd(MBS, four, wagers, play(1, "flop") + play(2, "fold"), currency="USD", jackpot_meter=1))
    assert "SGD" in r.unsettled["progressive1"] and "USD" in r.unsettled["progressive1"]


def test_guide_pays_the_greater_of_fixed_and_percentage_even_after_a_fold_THB_G_JACKPOT():
    cards = shoe(["As Ks", "7c 8c"], "Qs Js Ts", "2d", "3h", "4d 5d")
    wagers = [(1, "ante", 100), (1, "progressive", 100), (2, "ante", 100)]
    low = settle_round(rnd(GUIDE, cards, wagers, play(1, "fold") + play(2, "fold"), currency="AUD", jackpot_meter=1_000_000))
    assert low.settlements["progressive1"].net == 5_000_000 - 100  # $50,000 exceeds 100 % of a $10,000 meter
    high = settle_round(rnd(GUIDE, cards, wagers, play(1, "fold") + play(2, "fold"), currency="AUD", jackpot_meter=9_000_000))
    assert high.settlements["progressive1"].net == 9_000_000 - 100
    assert high.settlements["progressive1"].clause == "THB-G-JACKPOT"
    # a flush on the hole cards and the flop: $100
    flush = shoe(["2s 9s", "7c 8c"], "Qs Js 4s", "2d", "3h", "4d 5d")
    r = settle_round(rnd(GUIDE, flush, wagers, play(1, "flop") + play(2, "fold"), currency="AUD", jackpot_meter=1))
    assert r.settlements["progressive1"].net == 10_000 - 100


def test_guide_envy_bonus_goes_to_the_other_jackpot_wagers_not_the_winner_THB_G_BONUS_JACKPOT():
    prog = dataclasses.replace(GUIDE.params.progressive, envy_royal_flush=25_000, envy_straight_flush=5_000)
    guide = dataclasses.replace(GUIDE, params=dataclasses.replace(GUIDE.params, progressive=prog))
    cards = shoe(["As Ks", "7c 8c", "2h 3c"], "Qs Js Ts", "2d", "3h", "4d 5d")
    wagers = [(1, "ante", 100), (1, "progressive", 100), (2, "ante", 100), (2, "progressive", 100), (3, "ante", 100)]
    r = settle_round(rnd(guide, cards, wagers, play(1, "flop") + play(2, "fold") + play(3, "fold"), currency="AUD", jackpot_meter=1))
    assert r.settlements["progressive1"].net == 5_000_000 - 100  # the winner: no envy for himself
    assert r.settlements["progressive2"].net == 25_000 - 100
    assert r.settlements["progressive2"].clause == "THB-G-BONUS-JACKPOT"


def test_hoiana_has_no_progressive_wager():
    cards = shoe(["Ah Kc"], "Qs Js 3h", "4d", "9c", "Tc Th")
    r = settle_round(rnd(HOIANA, cards, [(1, "ante", 100), (1, "progressive", 100)], play(1, "flop")))
    assert "no Progressive" in r.unsettled["progressive1"]


def test_the_engine_dispatches_hold_em_rounds():
    cards = shoe(["9c Td"], "Js Qh 2d", "3c", "7s", "Kh Kd")
    ri = rnd(HOIANA, cards, [(1, "ante", 100), (1, "flop", 200)], play(1, "flop"))
    assert settle_any(ri) == settle_round(ri)


def test_a_hand_holding_the_same_card_twice_from_a_two_deck_shoe_is_unsettled_never_raised_HTB_4_1():
    """HTB-4.1: one deck. A device that loaded two is a finding whose effect is a flag, so the round goes on, and a card
    may then come twice: here the 9h on the river is also seat 1's hole card. The hand ranks (HTB-4.4) have no place for
    a seven-card hand holding one card twice: its Ante and Flop are unsettled with that reason (the engine raised a
    ValueError from the hand evaluator). Its Bonus (hole cards only, HTB-6.1.2) and seat 2, whose cards are distinct,
    settle. The near miss: the same round with another river settles every wager."""
    wagers = [(1, "ante", 100), (1, "bonus", 10), (1, "flop", 200), (2, "ante", 100), (2, "flop", 200)]
    actions = play(1, "flop", "check", "check") + play(2, "flop", "check", "check")
    twice = shoe(["9h 9d", "Kc Qd"], "2h 3s 7d", "8c", "9h", "4h 5s")
    r = settle_round(rnd(HOIANA, twice, wagers, actions, decks=2))
    assert [(i.kind, i.clause) for i in r.irregularities] == [("card_integrity", "HTB-4.1")]
    for wid in ("ante1", "flop1"):
        assert r.unsettled[wid] == ("seat 1's seven cards or the dealer's hold the same card twice: the hand ranks of a "
                                    "1-deck game have no place for it (HTB-4.1)")
    # seat 1's Bonus: a low pair, 3 to 1 (HTB-6.1.2); seat 2: K-Q-9-8-7 beats the dealer's 9-8-7-5-4, below a Straight
    assert nets(r) == {"bonus1": 30, "ante2": 0, "flop2": 200}
    assert "hand" not in r.outcome["seats"]["1"] and r.outcome["seats"]["2"]["result"] == "win"
    near = shoe(["9h 9d", "Kc Qd"], "2h 3s 7d", "8c", "Jc", "4h 5s")
    r = settle_round(rnd(HOIANA, near, wagers, actions, decks=2))
    assert r.unsettled == {} and nets(r) == {"ante1": 0, "bonus1": 30, "flop1": 200, "ante2": 0, "flop2": 200}


@pytest.mark.parametrize("decks", [0, -1])
def test_a_deck_count_below_one_says_nothing_HTB_4_1(decks):
    """A device's count below one is read as no count (as unlogged): no finding, the rule set's one deck holds. A -1
    read as the count voided the round, every card "more often than -1 deck(s) hold" (HTB-7.7), while the audit's
    column path read -1 as unlogged. The near miss: two decks is a count, and a finding (HTB-4.1)."""
    cards = shoe(["As Ks", "2c 7d"], "Ah Kd 4s", "9c", "Jh", "3h 5s")
    wagers = [(1, "ante", 100), (1, "flop", 200), (2, "ante", 100)]
    actions = play(1, "flop", "check", "check") + play(2, "fold")
    plain = settle_round(rnd(HOIANA, cards, wagers, actions))
    r = settle_round(rnd(HOIANA, cards, wagers, actions, decks=decks))
    assert r.irregularities == () and not r.void
    assert nets(r) == nets(plain) == {"ante1": 0, "flop1": 200, "ante2": -100}  # two pair beats A-high, below a Straight
    two = settle_round(rnd(HOIANA, cards, wagers, actions, decks=2))
    assert [(i.kind, i.clause) for i in two.irregularities] == [("card_integrity", "HTB-4.1")] and nets(two) == nets(plain)
