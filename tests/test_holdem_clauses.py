"""Texas Hold'em Bonus, clause by clause: golden rounds for the amount-deciding clauses of the three texts
(Hoiana ``HTB-``, MBS ``MBS-``, the player's guide ``THB-G-``) that ``test_holdem_engine.py`` does not already
name, each settled through the public engine (``rulebook.engine.settle_round``) and through the array path
(``vector.settle_many``) and through the nightly audit's column pass (``pipelines/audit/holdem_pass.py``), which
must all agree, against a hand calculation from the text written beside it.

Also here: properties over random rounds that no golden case covers (no wager nets more than its pay
table's largest line allows, or loses more than its amount).
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_holdem_engine import GUIDE, HOIANA, MBS, device, play, rnd, shoe
from test_holdem_pass import frames
from test_holdem_vector import random_round

from pipelines.audit import engine_pass as EP
from pipelines.audit.params import AuditParams

from rulebook.engine import settle_round
from rulebook.holdem_bonus import vector
from rulebook.money import Odds


def settle(ri):
    """The scalar engine's result, after checking that the array path and the audit's column pass give the same
    nets, clauses and reasons."""
    r = settle_round(ri)
    expected = {k: (s.net, s.clause) for k, s in r.settlements.items()}
    v = vector.settle_many([ri])[0]
    assert {k: (s.net, s.clause) for k, s in v.settlements.items()} == expected
    assert v.unsettled == r.unsettled
    ctx, wagers, actions, rulesets = frames([ri], random.Random(0))
    out = EP.engine_pass(ctx, wagers, actions, "amount", rulesets, AuditParams()).wagers
    by_id = {row["wager_id"].removesuffix("-0"): row for row in out.iter_rows(named=True)}
    assert {k: (row["net"], row["pay_clause"]) for k, row in by_id.items() if row["unsettled_reason"] is None} == expected
    assert {k: row["unsettled_reason"] for k, row in by_id.items() if row["unsettled_reason"] is not None} == r.unsettled
    return r


def nets(r) -> dict[str, int]:
    return {k: s.net for k, s in r.settlements.items()}


def clauses(r) -> dict[str, str]:
    return {k: s.clause for k, s in r.settlements.items()}


def main4(seat: int, ante: int = 100) -> list[tuple[int, str, int]]:
    """Ante, Flop (twice the Ante, HTB-4.11.2.ii), Turn and River (the Ante, HTB-4.11.3-4)."""
    return [(seat, "ante", ante), (seat, "flop", 2 * ante), (seat, "turn", ante), (seat, "river", ante)]


BETS_ALL = play(1, "flop", "turn", "river")


# --- the comparison: ties and kickers (HTB-5.4.1-5.4.3; the evaluator's own tests rank the hands) ----------


def test_two_pairs_on_the_board_the_kicker_decides_else_a_stand_off_HTB_5_4_1():
    # board K K 7 7 2: the player's ace plays (K-K-7-7-A) against the dealer's queen (K-K-7-7-Q)
    r = settle(rnd(HOIANA, shoe(["Ac 3d"], "Kh Kd 7s", "7c", "2h", "Qs 4d"), main4(1), BETS_ALL))
    # a win below a Straight: Ante neither paid nor collected (HTB-5.2), the others 1 to 1 (HTB-6.1.1)
    assert nets(r) == {"ante1": 0, "flop1": 200, "turn1": 100, "river1": 100}
    assert clauses(r) == {"ante1": "HTB-5.2", "flop1": "HTB-6.1.1", "turn1": "HTB-6.1.1", "river1": "HTB-6.1.1"}
    # both hold an ace: K-K-7-7-A each, "a fifth card of the same ranking": a stand-off, every bet returned
    r = settle(rnd(HOIANA, shoe(["Ac 3d"], "Kh Kd 7s", "7c", "2h", "As 4d"), main4(1), BETS_ALL))
    assert nets(r) == {"ante1": 0, "flop1": 0, "turn1": 0, "river1": 0}
    assert set(clauses(r).values()) == {"HTB-5.4"}
    assert r.outcome["seats"]["1"]["result"] == "stand_off"


def test_one_pair_the_unpaired_cards_compared_from_the_highest_down_HTB_5_4_2():
    # board 9 9 K 5 2: the player's 9-9-A-K-7 against the dealer's 9-9-A-K-6: the third unpaired card decides
    r = settle(rnd(HOIANA, shoe(["Ac 7d"], "9h 9d Ks", "5c", "2h", "Ad 6c"), main4(1), BETS_ALL))
    assert nets(r) == {"ante1": 0, "flop1": 200, "turn1": 100, "river1": 100}
    # the player's 3 and the dealer's 4 do not play (9-9-A-K-5 each): a stand-off
    r = settle(rnd(HOIANA, shoe(["Ac 3d"], "9h 9d Ks", "5c", "2h", "Ad 4c"), main4(1), BETS_ALL))
    assert nets(r) == {"ante1": 0, "flop1": 0, "turn1": 0, "river1": 0}
    assert set(clauses(r).values()) == {"HTB-5.4"}


def test_full_houses_with_the_trips_on_the_board_are_decided_by_the_pair_HTB_5_4_3():
    # board 9 9 9 5 2: 9-9-9-A-A against 9-9-9-K-K; a Full House wins the Ante too (a Straight or better, HTB-5.2)
    r = settle(rnd(HOIANA, shoe(["Ac Ad"], "9h 9d 9s", "5c", "2h", "Ks Kd"), main4(1), BETS_ALL))
    assert nets(r) == {"ante1": 100, "flop1": 200, "turn1": 100, "river1": 100}
    assert set(clauses(r).values()) == {"HTB-6.1.1"}
    # the other way round, every bet is collected (HTB-5.3)
    r = settle(rnd(HOIANA, shoe(["Ks Kd"], "9h 9d 9s", "5c", "2h", "Ac Ad"), main4(1), BETS_ALL))
    assert nets(r) == {"ante1": -100, "flop1": -200, "turn1": -100, "river1": -100}
    assert set(clauses(r).values()) == {"HTB-5.3"}


def test_a_flush_on_the_board_beaten_by_a_higher_hole_card_of_the_suit_HTB_5_2():
    # board K 9 7 5 2 of hearts: the player's Ah makes A-K-9-7-5, the dealer plays the board K-9-7-5-2
    cards = shoe(["Ah 3c"], "Kh 9h 7h", "5h", "2h", "4c 3d")
    r = settle(rnd(HOIANA, cards, main4(1), BETS_ALL))
    assert nets(r) == {"ante1": 100, "flop1": 200, "turn1": 100, "river1": 100}  # a Flush is above a Straight
    r = settle(rnd(GUIDE, cards, main4(1), BETS_ALL))
    assert nets(r)["ante1"] == 100 and clauses(r)["ante1"] == "THB-G-SETTLEMENT"  # "flush or higher"
    # neither hole card of the suit beats the board: both play it, a stand-off (HTB-5.4)
    r = settle(rnd(HOIANA, shoe(["Qc 3c"], "Kh 9h 7h", "5h", "2h", "4c 3d"), main4(1), BETS_ALL))
    assert nets(r) == {"ante1": 0, "flop1": 0, "turn1": 0, "river1": 0}


def test_a_royal_flush_on_the_board_is_a_stand_off_and_the_bonus_reads_the_hole_cards_only_HTB_5_4_and_6_1_2():
    # both play the board's royal (HTB-4.3: the hand may use no hole card); the Bonus is on the hole cards:
    # 2-3 is no Bonus hand, though the player's five-card hand is a royal flush
    r = settle(rnd(HOIANA, shoe(["2c 3d"], "Ah Kh Qh", "Jh", "Th", "9s 9d"), main4(1) + [(1, "bonus", 10)], BETS_ALL))
    assert nets(r) == {"ante1": 0, "flop1": 0, "turn1": 0, "river1": 0, "bonus1": -10}
    assert clauses(r)["bonus1"] == "HTB-5.5"


def test_a_royal_flush_made_with_both_hole_cards_wins_every_bet_and_the_bonus_pays_a_k_suited_HTB_5_2_and_6_1_2():
    # Ah Kh with Qh Jh Th on the board: a royal flush against the dealer's kings; the Bonus pays A-K suited
    # 25 to 1 (its table has no royal line: it reads the two hole cards only)
    r = settle(rnd(HOIANA, shoe(["Ah Kh"], "Qh Jh 2c", "Th", "3d", "Ks Kd"), main4(1) + [(1, "bonus", 10)], BETS_ALL))
    assert nets(r) == {"ante1": 100, "flop1": 200, "turn1": 100, "river1": 100, "bonus1": 250}
    assert r.outcome["seats"]["1"]["hand"] == "Royal flush"


def test_a_lost_hand_collects_ante_flop_turn_river_while_the_bonus_still_pays_HTB_5_3_and_5_5():
    # the player's 2-2 loses to the dealer's aces: all four main bets collected; the Bonus is settled on its own
    # table (HTB-5.5): a low pair wins 3 to 1 whatever the showdown
    r = settle(rnd(HOIANA, shoe(["2c 2d"], "Ah Kd 9s", "7c", "4h", "As Qd"), main4(1) + [(1, "bonus", 10)], BETS_ALL))
    assert nets(r) == {"ante1": -100, "flop1": -200, "turn1": -100, "river1": -100, "bonus1": 30}
    assert clauses(r) == {"ante1": "HTB-5.3", "flop1": "HTB-5.3", "turn1": "HTB-5.3", "river1": "HTB-5.3", "bonus1": "HTB-6.1.2"}


def test_checked_streets_bet_nothing_and_only_the_bets_placed_are_settled_HTB_4_11_3_and_4_11_4():
    # Flop bet, Turn checked, River bet: a winning straight pays the Ante, the Flop and the River 1 to 1
    wagers = [(1, "ante", 100), (1, "flop", 200), (1, "river", 100)]
    r = settle(rnd(HOIANA, shoe(["9c Td"], "Js Qh 8d", "3c", "7s", "Kh Kd"), wagers, play(1, "flop", "check", "river")))
    assert nets(r) == {"ante1": 100, "flop1": 200, "river1": 100}
    assert clauses(r)["river1"] == "HTB-6.1.1"


# --- MBS: the same game under its own clauses (MBS-3.8.1-3.8.3, 4.1.1) -----------------------------------


def test_mbs_main_game_win_ante_stand_off_loss_and_stand_off_MBS_3_8():
    bets = main4(1)
    # a winning straight 8-Q: every bet 1 to 1, the Ante included (MBS-3.8.1, paid per MBS-4.1.1)
    r = settle(rnd(MBS, device(["9c Td"], "Js Qh 8d", "3c", "7s", "Kh Kd"), bets, BETS_ALL, mode="device"))
    assert nets(r) == {"ante1": 100, "flop1": 200, "turn1": 100, "river1": 100}
    assert set(clauses(r).values()) == {"MBS-4.1.1"}
    # a winning pair of queens: "a stand-off occurs on the Ante" (MBS-3.8.1)
    r = settle(rnd(MBS, device(["Qc 4d"], "Js Qh 8d", "3c", "7s", "Kh 2d"), bets, BETS_ALL, mode="device"))
    assert nets(r) == {"ante1": 0, "flop1": 200, "turn1": 100, "river1": 100}
    assert clauses(r)["ante1"] == "MBS-3.8.1"
    # lower: "the Player loses all wagers" (MBS-3.8.2)
    r = settle(rnd(MBS, device(["Kh 2d"], "Js Qh 8d", "3c", "7s", "Qc 4d"), bets, BETS_ALL, mode="device"))
    assert nets(r) == {"ante1": -100, "flop1": -200, "turn1": -100, "river1": -100}
    assert set(clauses(r).values()) == {"MBS-3.8.2"}
    # the same: "a Stand-off is declared" (MBS-3.8.3)
    r = settle(rnd(MBS, device(["2c 3d"], "As Ks Qs", "Js", "Ts", "4h 5h"), bets, BETS_ALL, mode="device"))
    assert nets(r) == {"ante1": 0, "flop1": 0, "turn1": 0, "river1": 0}
    assert set(clauses(r).values()) == {"MBS-3.8.3"}


def test_mbs_loss_of_all_wagers_leaves_the_bonus_to_its_own_table_MBS_3_8_2_and_4_1_1():
    # MBS-3.8.2 "loses all wagers" is read as the wagers of the comparison: the Bonus pays on the hole cards
    # (MBS-1.1.11 "a Bonus payout if the Player's Hole cards qualify"): 10-10 wins 3 to 1 against the dealer's kings
    wagers = main4(1) + [(1, "bonus", 10)]
    r = settle(rnd(MBS, device(["Tc Td"], "Ks 9h 4d", "3c", "2s", "Kh Kd"), wagers, BETS_ALL, mode="device"))
    assert nets(r) == {"ante1": -100, "flop1": -200, "turn1": -100, "river1": -100, "bonus1": 30}
    assert clauses(r)["bonus1"] == "MBS-4.1.1"


# --- the Bonus pay tables, line by line, in the three texts ------------------------------------------------

BONUS_LINES = [  # hole cards, odds in Hoiana's and MBS's tables (HTB-6.1.2, MBS-4.1.1), odds in the guide's
    ("As Ad", 30, 30),
    ("As Ks", 25, 25),
    ("Qh Ah", 20, 20),
    ("Ad Jd", 20, 20),
    ("As Kd", 15, 15),
    ("Kc Kd", 10, 10),
    ("Qc Qd", 10, 10),
    ("Jc Jh", 10, 10),
    ("Ac Qd", 5, 5),
    ("Jh As", 5, 5),
    ("Tc Th", 3, 3),
    ("2s 2d", 3, 3),
    ("As Ts", None, None),  # A-10 suited: on no table
    ("Ks Qs", None, None),
    ("7c 2d", None, None),
]


@pytest.mark.parametrize("hole, table_odds, guide_odds", BONUS_LINES)
@pytest.mark.parametrize(
    "ruleset, win_clause, lose_clause",
    [(HOIANA, "HTB-6.1.2", "HTB-5.5"), (MBS, "MBS-4.1.1", "MBS-4.1.1"), (GUIDE, "THB-G-BONUS", "THB-G-BONUS")],
    ids=["hoiana", "mbs", "guide"],
)
def test_bonus_pay_table_every_line(ruleset, win_clause, lose_clause, hole, table_odds, guide_odds):
    odds = guide_odds if ruleset is GUIDE else table_odds
    # the dealer's 3-4 and a board no Bonus hand uses; the player plays every street
    r = settle(rnd(ruleset, device([hole], "5h 6s 8d", "9c", "2h", "3h 4c"), [(1, "ante", 100), (1, "bonus", 10)],
                   play(1, "flop"), mode="device"))
    assert nets(r)["bonus1"] == (odds * 10 if odds else -10)
    assert clauses(r)["bonus1"] == (win_clause if odds else lose_clause)


def test_guide_fold_forfeits_the_ante_and_the_ante_bonus_THB_G_FLOP_WAGER():
    # "Fold ... and forfeit your Ante Wager and any optional Ante Bonus Wager": A-A folded loses the 30 to 1
    r = settle(rnd(GUIDE, device(["As Ad", "7c 8c"], "Kd 9s 4h", "3c", "Jd", "Qh Qs"),
                   [(1, "ante", 100), (1, "bonus", 10), (2, "ante", 100), (2, "flop", 200)],
                   play(1, "fold") + play(2, "flop"), mode="device"))
    assert nets(r) == {"ante1": -100, "bonus1": -10, "ante2": -100, "flop2": -200}
    assert clauses(r)["ante1"] == clauses(r)["bonus1"] == "THB-G-FLOP-WAGER"


# --- the jackpots: several winners at once, the lines of one hand, rounding ---------------------------------

METER = 100_000_00  # S$/A$ 100,000.00 on the meter, in cents
STAKE = 100


def test_mbs_several_jackpot_winners_in_one_round_MBS_4_1_2_and_3_7_1():
    # flop Qh Jh Th: seat 1's Ah Kh is a royal flush on the flop (hole cards + 3: 100 % of the meter); seat 2's
    # 9h 8h a straight flush (best of 7: S$1,500); seat 3 folded its 2-2: only the community lines could pay it
    # (MBS-3.7.1) and the community holds none. Each winner is paid from the same recorded meter; the jackpot
    # wager is collected on a win (net = payout - wager)
    cards = device(["Ah Kh", "9h 8h", "2c 2d"], "Qh Jh Th", "3s", "4s", "5d 6d")
    wagers = main4(1) + main4(2) + [(3, "ante", 100)] + [(s, "progressive", STAKE) for s in (1, 2, 3)]
    r = settle(rnd(MBS, cards, wagers, BETS_ALL + play(2, "flop", "turn", "river") + play(3, "fold"),
                   mode="device", currency="SGD", jackpot_meter=METER))
    assert nets(r)["progressive1"] == METER - STAKE
    assert nets(r)["progressive2"] == 1_500_00 - STAKE
    assert nets(r)["progressive3"] == -STAKE
    assert (clauses(r)["progressive1"], clauses(r)["progressive2"], clauses(r)["progressive3"]) == ("MBS-4.1.2",) * 3


def test_guide_several_jackpot_winners_each_paid_the_greater_amount_and_the_others_the_bonus_jackpot_THB_G_JACKPOT():
    # the same cards under the guide (hole cards + flop): the royal pays the greater of A$50,000 and 100 % of the
    # meter, the straight flush the greater of A$5,000 and 10 %; the folded seat's jackpot wager is still checked
    # ("When you fold, you forfeit all bets except the progressive jackpot wager") and, not itself a winner of a
    # royal or straight flush, is due the Bonus Jackpot: the larger of the two, once stated (THB-G-BONUS-JACKPOT)
    guide = dataclasses.replace(GUIDE, params=dataclasses.replace(
        GUIDE.params, progressive=dataclasses.replace(GUIDE.params.progressive, envy_royal_flush=500_00, envy_straight_flush=50_00)))
    cards = device(["Ah Kh", "9h 8h", "2c 2d"], "Qh Jh Th", "3s", "4s", "5d 6d")
    wagers = main4(1) + main4(2) + [(3, "ante", 100)] + [(s, "progressive", STAKE) for s in (1, 2, 3)]
    actions = BETS_ALL + play(2, "flop", "turn", "river") + play(3, "fold")
    r = settle(rnd(guide, cards, wagers, actions, mode="device", currency="AUD", jackpot_meter=METER))
    assert nets(r)["progressive1"] == max(50_000_00, METER) - STAKE
    assert nets(r)["progressive2"] == max(5_000_00, METER // 10) - STAKE
    assert nets(r)["progressive3"] == 500_00 - STAKE
    assert clauses(r)["progressive3"] == "THB-G-BONUS-JACKPOT"
    # a small meter: the fixed amounts are the greater
    r = settle(rnd(guide, cards, wagers, actions, mode="device", currency="AUD", jackpot_meter=20_000_00))
    assert nets(r)["progressive1"] == 50_000_00 - STAKE and nets(r)["progressive2"] == 5_000_00 - STAKE


def test_mbs_royal_on_the_river_with_a_hole_card_is_five_percent_rounded_down_MBS_4_1_2():
    # community 9h Kh Qh Jh (turn) Th (river) is a king-high straight flush; the player's Ah makes a royal flush
    # only with the river (after 7 cards) and with a hole card: 5 % of the meter, against the community straight
    # flush's S$1,500 (MBS-4.1.3): one hand is paid its single largest line (docs/interpretations/holdem_bonus.md)
    cards = device(["Ah 2d"], "Kh Qh Jh", "9h", "Th", "9s 9d")
    bets = main4(1) + [(1, "progressive", STAKE)]
    meter = 123_456_78  # 5 % = 617,283.9 cents: rounded down to the cent
    r = settle(rnd(MBS, cards, bets, BETS_ALL, mode="device", currency="SGD", jackpot_meter=meter))
    assert nets(r)["progressive1"] == 617_283 - STAKE and clauses(r)["progressive1"] == "MBS-4.1.2"
    # with S$20,000 on the meter, 5 % (S$1,000) is less than the community straight flush's S$1,500
    r = settle(rnd(MBS, cards, bets, BETS_ALL, mode="device", currency="SGD", jackpot_meter=20_000_00))
    assert nets(r)["progressive1"] == 1_500_00 - STAKE and clauses(r)["progressive1"] == "MBS-4.1.3"
    # the royal completed on the turn instead: a quarter of the meter (after 6 cards)
    cards = device(["Ah 2d"], "Kh Qh Jh", "Th", "9h", "9s 9d")
    r = settle(rnd(MBS, cards, bets, BETS_ALL, mode="device", currency="SGD", jackpot_meter=meter))
    assert nets(r)["progressive1"] == meter // 4 - STAKE


def test_mbs_community_four_of_a_kind_is_paid_once_to_a_hand_in_play_MBS_4_1_2_and_4_1_3():
    # the four nines on the board are the seat's best of 7 (S$300, MBS-4.1.2) and the community's (S$300,
    # MBS-4.1.3): one wager, one payout
    r = settle(rnd(MBS, device(["Ah 2d"], "9c 9d 9h", "9s", "Kd", "Qh Qs"), main4(1) + [(1, "progressive", STAKE)],
                   BETS_ALL, mode="device", currency="SGD", jackpot_meter=METER))
    assert nets(r)["progressive1"] == 300_00 - STAKE


# --- properties --------------------------------------------------------------------------------------------


def _largest_net(ri, bet: str, amount: int) -> int:
    """The most the text lets a wager of ``amount`` net: 1 to 1 on the main bets; the Bonus table's top line;
    a jackpot's largest line (the meter where a line pays a share of it) plus the guide's Bonus Jackpot."""
    p = ri.ruleset.params
    if bet in ("ante", "flop", "turn", "river"):
        return getattr(p, bet).odds.win(amount)
    if bet == "bonus":
        return max(Odds.parse(line.odds).win(amount) for line in p.bonus_pay_table)
    prog = p.progressive
    meter = ri.jackpot_meter or 0
    top = max(max(line.fixed or 0, meter * (line.percent_of_meter or 0) // 100) for line in prog.lines)
    envy = max(e for e in (prog.envy_royal_flush, prog.envy_straight_flush, 0) if isinstance(e, int))
    return top + envy


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1, max_value=20))
def test_no_wager_nets_more_than_its_pay_table_allows_or_loses_more_than_its_amount(seed, n):
    rng = random.Random(seed)
    rounds = [random_round(rng, plant=0.5) for _ in range(n)]
    for ri, r in zip(rounds, vector.settle_many(rounds)):
        amounts = {w.wager_id: w for w in ri.wagers}
        for wid, s in r.settlements.items():
            w = amounts[wid]
            assert -w.amount <= s.net, (wid, w, s)
            if w.bet in ("ante", "bonus", "flop", "turn", "river", "progressive"):
                assert s.net <= _largest_net(ri, w.bet, w.amount), (wid, w, s)
