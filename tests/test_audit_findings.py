"""Every finding kind of the audit: hand-made rounds that must be flagged, and near misses that must not.

Rounds are written as their device card sequence in dealing order (baccarat: Player, Banker, Player,
Banker, then the third cards). Each test names the clause it checks. The audit runs through its
plain functions (no Prefect): NightBuilder.audit().
"""

from __future__ import annotations

import polars as pl
import pytest

from test_audit_support import NightBuilder

# Baccarat coups used throughout (deal order P B P B P3 B3)
BANKER_6_THREE_CARDS = "2c 3h 3d 2s 5c Ac"  # P 2+3=5 draws 5 -> 0; B 3+2=5 draws on 5 -> A: 6. Banker 6 (3 cards) v 0
BANKER_6_TWO_CARDS = "2c Kc 2d 6h 9s"  # P 4 draws 9 -> 3; B 6 stands on a 9: Banker 6 (2 cards) v 3
PLAYER_NATURAL = "9c 2h Kd 3s"  # P 9 natural, B 5: the Player wins
BANKER_NATURAL_9 = "Kc 9h 2d Ks"  # P 2, B 9 natural: the Banker wins on 9
TIE_7 = "Kc Kh 7d 7s"  # 7 v 7, both stand: a Tie


def audit(nb: NightBuilder):
    settlements, findings = nb.audit()
    return settlements, findings


def keys(findings: pl.DataFrame, kind: str | None = None) -> set[tuple]:
    f = findings if kind is None else findings.filter(pl.col("kind") == kind)
    return {(r["kind"], r["table_id"], r["round_no"], r["wager_id"]) for r in f.iter_rows(named=True)}


def one(findings: pl.DataFrame, kind: str, wager_id: str | None = None, round_no: int | None = None) -> dict:
    f = findings.filter(pl.col("kind") == kind)
    if wager_id is not None:
        f = f.filter(pl.col("wager_id") == wager_id)
    if round_no is not None:
        f = f.filter(pl.col("round_no") == round_no)
    assert f.height == 1, f"expected one {kind} finding, got {f.height}: {f.select('kind', 'round_no', 'wager_id', 'detail').rows()}"
    return f.row(0, named=True)


# ---------------------------------------------------------------------------------------------
# payout_mismatch


def test_tiger_paid_12_to_1_on_a_three_card_six_is_flagged_TBAC_5_1_3():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000)])
    _, f = audit(nb)
    row = one(f, "payout_mismatch", "W1")
    assert (row["expected_net"], row["recorded_net"], row["difference"]) == (200000, 120000, -80000)
    assert row["rule_ref"] == "TBAC-5.1.3"
    assert row["severity"] == "high"
    assert "three cards" in row["detail"] and "20:1" in row["detail"] and "paid 12:1" in row["detail"]
    assert (row["source_file"], row["source_line"]) == ("rounds_night.jsonl", 1)


def test_tiger_paid_20_to_1_on_a_three_card_six_is_not_flagged_TBAC_5_1_3():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 200000), ("W2", "big_tiger", 10000, 500000),
                                                 ("W3", "small_tiger", 10000, -10000), ("W4", "banker", 10000, 9500)],
             recorded={"winner": "banker", "player_points": 0, "banker_points": 6})
    s, f = audit(nb)
    assert f.height == 0, f.rows()
    assert s["expected_net"].to_list() == [200000, 500000, -10000, 9500]


def test_small_tiger_on_a_two_card_six_pays_22_and_tiger_12_TBAC_5_1_3():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_TWO_CARDS, [("W1", "small_tiger", 1000, 22000), ("W2", "tiger", 1000, 20000)])
    _, f = audit(nb)
    assert keys(f) == {("payout_mismatch", "BAC-01", 1, "W2")}
    assert one(f, "payout_mismatch", "W2")["expected_net"] == 12000


def test_commission_banker_paid_even_money_is_an_overpayment_TBAC_5_1_1():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_NATURAL_9, [("W1", "banker", 10000, 10000), ("W2", "banker", 10010, 9509)])
    _, f = audit(nb)
    # 0.95 x 10,010 = 9,509.5: the house keeps the fraction (rounding down), so 9,509 is right
    assert keys(f) == {("payout_mismatch", "BAC-01", 1, "W1")}
    assert one(f, "payout_mismatch", "W1")["difference"] == 500


def test_no_commission_banker_win_on_six_pays_half_TBAC_5_1_2():
    nb = NightBuilder()
    rs = "hoiana-tiger-baccarat/no-commission"
    nb.round("NCB-01", 1, BANKER_6_TWO_CARDS, [("W1", "banker", 10000, 10000)], ruleset=rs)
    nb.round("NCB-01", 2, BANKER_NATURAL_9, [("W2", "banker", 10000, 10000)], ruleset=rs)
    _, f = audit(nb)
    assert keys(f) == {("payout_mismatch", "NCB-01", 1, "W1")}
    assert one(f, "payout_mismatch", "W1")["expected_net"] == 5000


def test_a_tie_returns_banker_and_player_wagers_TBAC_6_1_1_3():
    nb = NightBuilder()
    nb.round("BAC-01", 1, TIE_7, [("W1", "banker", 10000, -10000), ("W2", "player", 10000, 0), ("W3", "tie", 1000, 8000)])
    _, f = audit(nb)
    assert keys(f) == {("payout_mismatch", "BAC-01", 1, "W1")}
    assert one(f, "payout_mismatch", "W1")["expected_net"] == 0


def test_blackjack_paid_3_to_2_on_a_plain_win_is_flagged_BJ_6_2_1():
    nb = NightBuilder()
    rs = "hoiana-blackjack"
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 15000, 1)], ruleset=rs, actions=[(1, 1, "stand", None)])
    nb.round("BJ-01", 2, "Tc 7d 9h Kc", [("B2", "main", 10000, 10000, 1)], ruleset=rs, actions=[(1, 1, "stand", None)])
    _, f = audit(nb)
    assert keys(f) == {("payout_mismatch", "BJ-01", 1, "B1")}
    assert one(f, "payout_mismatch", "B1")["difference"] == 5000


def test_holdem_bonus_ak_suited_pays_25_to_1_HTB_6_1_2():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"
    acts = [(1, 1, "flop", 2000), (1, 1, "check", None), (1, 1, "check", None)]
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500), ("H2", "flop", 5000, 5000), ("H3", "bonus", 500, 10000)],
             ruleset=rs, deal_mode="shoe", actions=acts, decks=1)
    nb.round("HTB-01", 2, cards, [("H4", "ante", 2500, 2500), ("H5", "flop", 5000, 5000), ("H6", "bonus", 500, 12500)],
             ruleset=rs, deal_mode="shoe", actions=acts, decks=1, shoe_id="S-HTB-2")
    _, f = audit(nb)
    assert keys(f) == {("payout_mismatch", "HTB-01", 1, "H3")}
    assert one(f, "payout_mismatch", "H3")["expected_net"] == 12500


# ---------------------------------------------------------------------------------------------
# limit_breach


def test_over_the_maximum_paid_in_full_is_flagged_with_the_capped_settlement_TBAC_7_18():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 600000, 600000)], limits={"max": 500000})
    _, f = audit(nb)
    row = one(f, "limit_breach", "W1")
    assert (row["expected_net"], row["recorded_net"], row["difference"]) == (500000, 600000, 100000)
    assert row["rule_ref"] == "TBAC-7.18" and row["severity"] == "high"
    assert "excess 1,000.00 returned" in row["detail"]  # 100,000 cents, in major units as the report shows money


def test_over_the_maximum_collected_up_to_the_maximum_is_a_procedure_finding_TBAC_7_18():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "banker", 600000, -500000)], limits={"max": 500000})
    _, f = audit(nb)
    row = one(f, "limit_breach", "W1")
    assert (row["expected_net"], row["difference"], row["severity"]) == (-500000, 0, "medium")


def test_a_wager_at_the_maximum_and_at_the_minimum_is_not_a_breach():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 500000, 500000), ("W2", "player", 2500, 2500),
                                           ("W3", "tie", 100000, -100000), ("W4", "tie", 500, -500)],
             limits={"min": 2500, "max": 500000, "side_min": 500, "side_max": 100000})
    _, f = audit(nb)
    assert f.height == 0, f.rows()


def test_side_bet_over_the_side_maximum_is_capped_TBAC_7_18():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "big_tiger", 200000, 10000000)], limits={"side_max": 100000})
    _, f = audit(nb)
    row = one(f, "limit_breach", "W1")
    assert row["expected_net"] == 5000000 and row["difference"] == 5000000


def test_under_the_minimum_settled_once_then_returned_TBAC_7_17():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 1000, 1000, 1, "P-9")])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 1000, 1000, 1, "P-9")])
    nb.round("BAC-01", 3, PLAYER_NATURAL, [("W3", "player", 1000, 0, 1, "P-9")])
    s, f = audit(nb)
    assert s.sort("round_no")["expected_net"].to_list() == [1000, 0, 0]
    first, second, third = (one(f, "limit_breach", w) for w in ("W1", "W2", "W3"))
    assert (first["severity"], first["difference"], first["rule_ref"]) == ("medium", 0, "TBAC-7.17")
    assert (second["severity"], second["expected_net"], second["difference"]) == ("high", 0, 1000)
    assert (third["severity"], third["difference"]) == ("medium", 0)


def test_unrated_under_minimum_wagers_cannot_be_linked_and_are_settled_as_placed_TBAC_7_17():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 1000, 1000, 1, None)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 1000, 1000, 1, None)])
    s, f = audit(nb)
    assert s["expected_net"].to_list() == [1000, 1000]
    assert {r["severity"] for r in f.iter_rows(named=True)} == {"medium"}


def test_holdem_flop_above_twice_the_ante_is_settled_on_twice_the_ante_HTB_7_10_1():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"  # royal flush v a pair of nines: the player wins
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500), ("H2", "flop", 7500, 7500)], ruleset=rs, deal_mode="shoe",
             actions=[(1, 1, "flop", 7500), (1, 1, "check", None), (1, 1, "check", None)], decks=1)
    nb.round("HTB-01", 2, cards, [("H3", "ante", 2500, 2500), ("H4", "flop", 5000, 5000)], ruleset=rs, deal_mode="shoe",
             actions=[(1, 1, "flop", 5000), (1, 1, "check", None), (1, 1, "check", None)], decks=1, shoe_id="S-2")
    _, f = audit(nb)
    assert keys(f) == {("limit_breach", "HTB-01", 1, "H2")}
    row = one(f, "limit_breach", "H2")
    assert (row["expected_net"], row["difference"], row["rule_ref"]) == (5000, 2500, "HTB-7.10.1")


def test_holdem_ante_over_the_maximum_is_settled_at_the_maximum_and_the_flop_at_twice_that_HTB_7_10():
    """HTB-7.10: an Ante over the table maximum is paid up to the maximum, the excess returned; the Flop is then
    measured against the Ante so settled (HTB-7.10.1: the excess over twice the Ante returned, "up to the maximum
    permissible limit"). A table that paid both in full overpaid both."""
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"  # royal flush v a pair of nines: the player wins
    nb.round("HTB-01", 1, cards, [("H1", "ante", 60000, 60000), ("H2", "flop", 120000, 120000)], ruleset=rs,
             deal_mode="shoe", actions=[(1, 1, "flop", 120000), (1, 1, "check", None), (1, 1, "check", None)], decks=1,
             limits={"min": 2500, "max": 50000})
    # the same Ante with a Flop of twice the maximum: on the ratio, no finding of its own
    nb.round("HTB-01", 2, cards, [("H3", "ante", 60000, 50000), ("H4", "flop", 100000, 100000)], ruleset=rs,
             deal_mode="shoe", actions=[(1, 1, "flop", 100000), (1, 1, "check", None), (1, 1, "check", None)], decks=1,
             limits={"min": 2500, "max": 50000}, shoe_id="S-2")
    _, f = audit(nb)
    ante, flop = one(f, "limit_breach", "H1"), one(f, "limit_breach", "H2")
    assert (ante["expected_net"], ante["difference"], ante["rule_ref"]) == (50000, 10000, "HTB-7.10")
    assert (flop["expected_net"], flop["difference"], flop["rule_ref"]) == (100000, 20000, "HTB-7.10.1")
    assert "settled at the table maximum 500.00 by HTB-7.10" in flop["detail"]
    assert keys(f, "limit_breach") == {("limit_breach", "HTB-01", 1, "H1"), ("limit_breach", "HTB-01", 1, "H2"),
                                       ("limit_breach", "HTB-01", 2, "H3")}
    assert keys(f, "payout_mismatch") == set()


def test_holdem_ante_under_the_minimum_is_paid_and_taken_as_placed_HTB_7_10():
    nb = NightBuilder()
    cards = "b:2c 2h 3d b:3c Qh Jh Th b:4c 8d b:5c 6s 9c 9d"  # 2-3 against the dealer's nines: the player loses
    nb.round("HTB-01", 1, cards, [("H1", "ante", 1000, -1000), ("H2", "flop", 2000, -2000)], ruleset="hoiana-holdem-bonus",
             deal_mode="shoe", actions=[(1, 1, "flop", 2000), (1, 1, "check", None), (1, 1, "check", None)], decks=1,
             limits={"min": 2500, "max": 50000})
    s, f = audit(nb)
    assert dict(zip(s["wager_id"], s["expected_net"])) == {"H1": -1000, "H2": -2000}
    row = one(f, "limit_breach", "H1")
    assert (row["expected_net"], row["difference"], row["rule_ref"], row["severity"]) == (-1000, 0, "HTB-7.10", "medium")
    assert keys(f) == {("limit_breach", "HTB-01", 1, "H1")}


GUIDE_SECTIONS = {"ANTE-WAGER", "FLOP-WAGER", "TURN-WAGER", "RIVER-WAGER", "SETTLEMENT", "BONUS", "JACKPOT", "BONUS-JACKPOT",
                  "GLOSSARY", "SUMMARY"}  # the guide's headings as its rule set and docs/interpretations cite them


def test_the_guide_s_procedure_clauses_are_its_cited_sections():
    """The guide has no clause numbers: the audit cites its sections as the rule set does (THB-G-ANTE-WAGER, not a
    shortened THB-G-ANTE), so that dispute review finds one section under one id."""
    import dataclasses

    from pipelines.audit.clauses import CLAUSES

    values = dataclasses.asdict(CLAUSES["THB-G"]).values()
    cited = {v for v in values if isinstance(v, str) and v.startswith("THB-G-")}
    assert cited and {c.removeprefix("THB-G-") for c in cited} <= GUIDE_SECTIONS


def test_guide_flop_and_river_off_the_ratio_are_settled_as_placed_and_cite_the_guide_s_words():
    """The guide states the ratios (FLOP WAGER "twice your Ante Wager"; the glossary: Turn and River "must be equal
    to the value of the Ante Wager") but no correction: settled as placed, flagged; a River is not cited to the
    Turn's section."""
    nb = NightBuilder()
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"  # royal flush v a pair of nines: the player wins
    nb.round("GHB-01", 1, cards, [("G1", "ante", 2500, 2500), ("G2", "flop", 7500, 7500), ("G3", "river", 5000, 5000)],
             ruleset="guide-holdem-bonus-progressive", deal_mode="shoe",
             actions=[(1, 1, "flop", 7500), (1, 1, "check", None), (1, 1, "river", 5000)], decks=1)
    _, f = audit(nb)
    flop, river = one(f, "limit_breach", "G2"), one(f, "limit_breach", "G3")
    assert (flop["expected_net"], flop["rule_ref"]) == (7500, "THB-G-FLOP-WAGER")
    assert (river["expected_net"], river["rule_ref"]) == (5000, "THB-G-GLOSSARY")


def test_blackjack_has_no_limit_clause_the_breach_is_flagged_against_the_limit_sign():
    nb = NightBuilder()
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 300000, 300000, 1)], ruleset="hoiana-blackjack",
             actions=[(1, 1, "stand", None)], limits={"max": 250000})
    _, f = audit(nb)
    row = one(f, "limit_breach", "B1")
    assert (row["rule_ref"], row["expected_net"], row["difference"], row["severity"]) == ("LIMIT-SIGN", 300000, 0, "medium")


# ---------------------------------------------------------------------------------------------
# differential_breach


def _differential_round(nb: NightBuilder, round_no: int, nets: tuple[int, int, int, int]) -> None:
    # Banker 400,000 + 400,000 + 1,000 (under the minimum) v Player 100,000; differential 100,000:
    # the Banker side may carry 200,000: 1,000 as placed (TBAC-7.19.1), 199,000 shared pro rata: 99,500 each
    nb.round("BAC-01", round_no, BANKER_NATURAL_9,
             [("A%d" % round_no, "banker", 400000, nets[0], 1), ("B%d" % round_no, "banker", 400000, nets[1], 2),
              ("C%d" % round_no, "banker", 1000, nets[2], 3, None), ("D%d" % round_no, "player", 100000, nets[3], 4)],
             limits={"differential": 100000})


def test_differential_exceeded_and_paid_in_full_is_a_breach_and_payout_mismatches_at_the_pro_rata_amount_TBAC_7_19():
    nb = NightBuilder()
    _differential_round(nb, 1, (380000, 380000, 950, -100000))
    _, f = audit(nb)
    assert keys(f, "payout_mismatch") == {("payout_mismatch", "BAC-01", 1, "A1"), ("payout_mismatch", "BAC-01", 1, "B1")}
    a = one(f, "payout_mismatch", "A1")
    assert (a["expected_net"], a["difference"], a["rule_ref"]) == (94525, 380000 - 94525, "TBAC-7.19")  # 0.95 x 99,500
    breach = one(f, "differential_breach")
    assert breach["wager_id"] is None and "2 of them were not" in breach["detail"]
    assert "Banker 8,010.00 v Player 1,000.00" in breach["detail"]
    # the under-minimum Banker wager is paid as placed (TBAC-7.19.1) but is a limit breach of its own
    assert one(f, "limit_breach", "C1")["difference"] == 0


def test_differential_settled_pro_rata_is_one_procedure_finding_for_the_round_TBAC_7_19():
    nb = NightBuilder()
    _differential_round(nb, 1, (94525, 94525, 950, -100000))
    _, f = audit(nb)
    row = one(f, "differential_breach")
    assert row["wager_id"] is None and row["severity"] == "medium" and row["difference"] is None
    assert "the table did so" in row["detail"]
    assert keys(f, "payout_mismatch") == set()


def test_totals_within_the_differential_are_not_a_breach():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_NATURAL_9, [("A", "banker", 200000, 190000), ("D", "player", 100000, -100000)],
             limits={"differential": 100000})
    _, f = audit(nb)
    assert f.height == 0, f.rows()


# ---------------------------------------------------------------------------------------------
# card_integrity, drawing_rule_violation, illegal_action (the engine's irregularities)


def test_a_foreign_card_is_a_card_integrity_finding_and_voids_the_round_TBAC_7_1():
    nb = NightBuilder()
    nb.round("BAC-01", 1, "9c 2h Zz 3s", [("W1", "player", 10000, 0)], status="void")
    _, f = audit(nb)
    assert keys(f) == {("card_integrity", "BAC-01", 1, None)}
    row = one(f, "card_integrity")
    assert row["rule_ref"] == "TBAC-7.1" and row["source_file"].startswith("shoe_")


def test_an_unreadable_card_is_a_card_integrity_finding_and_leaves_the_wager_unsettled_TBAC_4_11():
    nb = NightBuilder()
    nb.round("BAC-01", 1, "9c ?? Kd 3s", [("W1", "player", 10000, 10000)])
    s, f = audit(nb)
    assert keys(f) == {("card_integrity", "BAC-01", 1, None)}
    assert s["expected_net"].to_list() == [None] and "not read" in s["unsettled_reason"][0]


def test_a_card_seen_more_often_than_the_shoe_holds_is_a_card_integrity_finding_TBAC_7_1():
    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", decks=1)
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    nb.round("BAC-01", 2, "9c 2d Kh 3h", [("W2", "player", 10000, 10000)], shoe_id="S-1")  # a second 9c in one deck
    s, f = audit(nb)
    # the rules void a round when extra cards are discovered during it; found only by the audit, it stands as dealt
    assert keys(f) == {("card_integrity", "BAC-01", 2, None)}
    row = one(f, "card_integrity")
    assert "9c" in row["detail"] and row["rule_ref"] == "TBAC-7.1"
    assert s.filter(pl.col("wager_id") == "W2")["expected_net"].to_list() == [10000]


def test_eight_copies_of_a_card_in_an_eight_deck_shoe_is_not_an_excess():
    nb = NightBuilder()
    for r in range(1, 9):
        nb.round("BAC-01", r, PLAYER_NATURAL, [(f"W{r}", "player", 10000, 10000)], decks=8)
    _, f = audit(nb)
    assert f.height == 0, f.rows()


def test_a_third_card_beyond_the_drawing_rules_is_a_drawing_rule_violation_TBAC_7_6():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL + " 4c", [("W1", "player", 10000, 10000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 10000)])
    _, f = audit(nb)
    # 4c begins round 2, a Free Hand (TBAC-7.8), which the table settled as an ordinary round: tests/test_audit_free_hand.py
    assert keys(f) == {("drawing_rule_violation", "BAC-01", 1, None), ("free_hand_wager", "BAC-01", 2, "W2")}
    assert one(f, "drawing_rule_violation")["rule_ref"] == "TBAC-7.6"


def test_blackjack_dealer_drawing_on_17_is_a_drawing_rule_violation_BJ_4_14():
    nb = NightBuilder()
    rs = "hoiana-blackjack"
    nb.round("BJ-01", 1, "Tc 7d 9h Kc 5s", [("B1", "main", 10000, 10000, 1)], ruleset=rs, actions=[(1, 1, "stand", None)])
    nb.round("BJ-01", 2, "Tc 7d 9h Kc", [("B2", "main", 10000, 10000, 1)], ruleset=rs, actions=[(1, 1, "stand", None)])
    _, f = audit(nb)
    assert keys(f) == {("drawing_rule_violation", "BJ-01", 1, None)}


def test_an_engine_illegal_action_is_a_finding_of_its_own_kind():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, -2500), ("H2", "turn", 2500, 0)], ruleset=rs, deal_mode="shoe",
             actions=[(1, 1, "fold", None)], decks=1)
    _, f = audit(nb)
    assert ("illegal_action", "HTB-01", 1, None) in keys(f)


# ---------------------------------------------------------------------------------------------
# result_mismatch


def test_an_announced_result_the_cards_do_not_give_is_flagged_TBAC_7_16():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)],
             recorded={"winner": "banker", "player_points": 9, "banker_points": 5})
    _, f = audit(nb)
    row = one(f, "result_mismatch")
    assert row["rule_ref"] == "TBAC-7.16" and "winner banker" in row["detail"] and "winner player" in row["detail"]


def test_a_correct_or_partial_announced_result_is_not_flagged():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)],
             recorded={"winner": "player", "player_points": 9, "banker_points": 5})
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 10000)], recorded={"winner": "player"})
    _, f = audit(nb)
    assert f.height == 0, f.rows()


# ---------------------------------------------------------------------------------------------
# void_not_honoured


def test_a_round_the_rules_make_void_but_settled_anyway_TBAC_7_1_1():
    nb = NightBuilder()
    nb.round("BAC-01", 1, "9c 2h Zz 3s", [("W1", "player", 10000, 10000), ("W2", "banker", 10000, 0)])
    _, f = audit(nb)
    assert keys(f, "void_not_honoured") == {("void_not_honoured", "BAC-01", 1, "W1")}
    assert one(f, "void_not_honoured")["difference"] == 10000


@pytest.mark.parametrize("ruleset, clause", [("hoiana-holdem-bonus", "HTB-7.12"), ("mbs-holdem-bonus-progressive", "MBS-5.1.1")])
def test_a_void_hold_em_round_returns_every_wager_HTB_7_12(ruleset, clause):
    """HTB-7.12: "Where the round of play is voided, all Bets placed by the Players for that round of play shall be
    returned", the Bonus included, whatever the cards say (the player's royal flush here)."""
    nb = NightBuilder()
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d" if ruleset.startswith("hoiana") else "Ah Kh Qh Jh Th 2d 3s 9c 9d"
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500), ("H2", "bonus", 500, 0), ("H3", "flop", 5000, 0)],
             ruleset=ruleset, deal_mode="shoe", status="void", actions=[(1, 1, "flop", 5000)], decks=1)
    s, f = audit(nb)
    assert dict(zip(s["wager_id"], s["expected_net"])) == {"H1": 0, "H2": 0, "H3": 0}
    assert keys(f) == {("void_not_honoured", "HTB-01", 1, "H1")}
    row = one(f, "void_not_honoured", "H1")
    assert (row["difference"], row["rule_ref"]) == (2500, clause)


def test_a_void_status_round_with_a_wager_collected_TBAC_2_2_20():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "banker", 10000, -10000), ("W2", "player", 10000, 0)], status="void")
    _, f = audit(nb)
    assert keys(f) == {("void_not_honoured", "BAC-01", 1, "W1")}
    row = one(f, "void_not_honoured")
    assert (row["expected_net"], row["difference"], row["rule_ref"]) == (0, -10000, "TBAC-2.2.20")


def test_a_void_round_with_every_wager_returned_is_not_flagged():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "banker", 10000, 0)], status="void")
    _, f = audit(nb)
    assert f.height == 0, f.rows()


# ---------------------------------------------------------------------------------------------
# free_hand_wager


def test_a_wager_on_a_free_hand_is_flagged_TBAC_7_8():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], status="free_hand")
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 0)], status="free_hand")
    _, f = audit(nb)
    paid, returned = one(f, "free_hand_wager", "W1"), one(f, "free_hand_wager", "W2")
    assert (paid["severity"], paid["difference"], paid["rule_ref"]) == ("high", 10000, "TBAC-7.8")
    assert (returned["severity"], returned["difference"]) == ("medium", 0)


def test_a_free_hand_without_wagers_is_not_flagged():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [], status="free_hand")
    _, f = audit(nb)
    assert f.height == 0, f.rows()


# ---------------------------------------------------------------------------------------------
# late_wager


def test_a_wager_after_bets_closed_is_late_TBAC_4_2():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 200000, 1, "P-1", 2.5)])
    _, f = audit(nb)
    row = one(f, "late_wager", "W1")
    assert row["severity"] == "high" and row["rule_ref"] == "TBAC-4.2" and row["recorded_net"] == 200000
    assert "2.500 s after bets closed" in row["detail"]


def test_a_wager_after_the_first_card_is_late_even_before_the_close():
    nb = NightBuilder()
    # the first card leaves the shoe 5 s after the close: a wager at +6 s is after both
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000, 1, "P-1", 6.0)])
    _, f = audit(nb)
    assert "after the first card" in one(f, "late_wager", "W1")["detail"]


@pytest.mark.parametrize("ruleset, clause", [("hoiana-holdem-bonus", "HTB-4.9"), ("mbs-holdem-bonus-progressive", "MBS-5.6"),
                                             ("guide-holdem-bonus-progressive", "THB-G-ANTE-WAGER")])
def test_a_hold_em_bonus_placed_after_bets_closed_is_late_and_the_flop_is_not_HTB_4_9(ruleset, clause):
    """HTB-4.9: after "No more Bets" no Bet may be placed; the Flop is a decision after the cards by design."""
    nb = NightBuilder()
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d" if ruleset.startswith("hoiana") else "Ah Kh Qh Jh Th 2d 3s 9c 9d"
    if ruleset.startswith("guide"):
        cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500, 1, "P-1"), ("H2", "bonus", 500, 12500, 1, "P-1", 2.0),
                                  ("H3", "flop", 5000, 5000, 1, "P-1", 40.0)],
             ruleset=ruleset, deal_mode="shoe", actions=[(1, 1, "flop", 5000)], decks=1)
    _, f = audit(nb)
    assert keys(f, "late_wager") == {("late_wager", "HTB-01", 1, "H2")}
    assert one(f, "late_wager", "H2")["rule_ref"] == clause


def test_a_wager_placed_exactly_at_the_close_is_not_late():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000, 1, "P-1", 0.0)])
    _, f = audit(nb)
    assert f.height == 0, f.rows()


def test_decisions_after_the_cards_are_not_late_wagers():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c 9d"
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500), ("H2", "flop", 5000, 5000, 1, "P-H1", 30.0)],
             ruleset=rs, deal_mode="shoe", actions=[(1, 1, "flop", 5000), (1, 1, "check", None), (1, 1, "check", None)],
             decks=1)
    _, f = audit(nb)
    assert f.height == 0, f.rows()


# ---------------------------------------------------------------------------------------------
# sequence_gap, unmatched_round


def test_a_jump_in_a_devices_event_seq_is_a_sequence_gap():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 10000)], skip_seq=3)
    _, f = audit(nb)
    row = one(f, "sequence_gap")
    assert row["round_no"] == 2 and "lost 3 events" in row["detail"] and row["source_file"].startswith("shoe_")


def test_an_event_seq_gap_explained_by_quarantined_lines_is_no_gap_but_leaves_the_round_unsettled():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, -10000)], skip_seq=1,
             recorded={"winner": "banker"})
    # the device's line for the skipped event is in the log but was set aside (a garbled line)
    first = next(e for e in nb.events if e["round_no"] == 2)
    file, line = first["source_file"], first["source_line"]
    for e in nb.events:  # the garbled line sits just before round 2's first card in the device's file
        if e["source_file"] == file and e["source_line"] >= line:
            e["source_line"] += 1
    nb.quarantine.append({"source_file": file, "source_line": line, "kind": "shoe_csv", "reason": "unknown event",
                          "reason_code": "unknown_event", "detail": None, "raw": "AE,crad"})
    s, f = audit(nb)
    assert f.height == 0, f.rows()  # no gap, and no result or payout judged on an incomplete round
    w2 = s.filter(pl.col("wager_id") == "W2").row(0, named=True)
    assert w2["expected_net"] is None and "in quarantine" in w2["unsettled_reason"]
    assert s.filter(pl.col("wager_id") == "W1")["expected_net"].to_list() == [None]  # the lost event may be its last card


def test_a_table_round_number_neither_side_saw_is_a_sequence_gap_but_a_one_sided_round_is_not():
    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)])
    nb.round("BAC-01", 3, PLAYER_NATURAL, [("W3", "player", 10000, 10000)])
    nb.round("BAC-01", 4, PLAYER_NATURAL, [], table_record=False)  # dealt, never recorded
    nb.round("BAC-01", 5, PLAYER_NATURAL, [("W5", "player", 10000, 10000)])
    _, f = audit(nb)
    assert keys(f) == {("sequence_gap", "BAC-01", 3, None), ("unmatched_round", "BAC-01", 4, None)}


def test_a_table_round_without_cards_and_a_device_round_without_a_record_are_unmatched():
    nb = NightBuilder()
    nb.round("BAC-01", 1, None, [("W1", "player", 10000, 10000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [], table_record=False)
    nb.round("BAC-01", 3, PLAYER_NATURAL, [("W3", "player", 10000, 10000)])
    s, f = audit(nb)
    assert keys(f) == {("unmatched_round", "BAC-01", 1, None), ("unmatched_round", "BAC-01", 2, None)}
    assert one(f, "unmatched_round", round_no=2)["source_file"].startswith("shoe_")
    assert s.filter(pl.col("wager_id") == "W1")["unsettled_reason"][0].startswith("the device recorded no cards")


# ---------------------------------------------------------------------------------------------
# the shape of every finding


def test_every_finding_has_an_id_a_severity_a_rule_and_a_source():
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000, 1, "P-1", 3.0)],
             recorded={"winner": "player"})
    nb.round("BAC-01", 3, "9c 2h Zz 3s", [("W2", "player", 700000, 700000)], status="free_hand")
    _, f = audit(nb)
    assert f.height >= 5
    for r in f.iter_rows(named=True):
        assert len(r["finding_id"]) == 16 and r["severity"] in ("high", "medium", "low")
        assert r["rule_ref"] and r["detail"] and r["source_file"] and r["source_line"] >= 1
    assert f["finding_id"].n_unique() == f.height


def test_finding_ids_do_not_depend_on_the_other_rounds_of_the_night():
    a, b = NightBuilder(), NightBuilder()
    a.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000)])
    b.round("BAC-02", 7, PLAYER_NATURAL, [("X", "player", 10000, 0)])
    b.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000)])
    ida = one(audit(a)[1], "payout_mismatch", "W1")["finding_id"]
    idb = one(audit(b)[1], "payout_mismatch", "W1")["finding_id"]
    assert ida == idb


@pytest.mark.parametrize("vectorised", [True, False])
def test_the_vectorised_and_scalar_baccarat_paths_find_the_same(vectorised):
    from pipelines.audit.params import AuditParams

    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000), ("W2", "banker", 600000, 570000)])
    nb.round("BAC-01", 2, "9c 2h Zz 3s", [("W3", "player", 10000, 10000)])
    nb.round("BAC-01", 3, PLAYER_NATURAL + " 4c", [("W4", "player", 10000, 10000)], recorded={"winner": "banker"})
    _, f = nb.audit(AuditParams(vectorised=vectorised))
    assert keys(f) == {
        ("payout_mismatch", "BAC-01", 1, "W1"), ("limit_breach", "BAC-01", 1, "W2"),
        ("card_integrity", "BAC-01", 2, None), ("void_not_honoured", "BAC-01", 2, "W3"),
        ("drawing_rule_violation", "BAC-01", 3, None), ("result_mismatch", "BAC-01", 3, None),
    }


def test_a_foreign_card_after_the_last_card_the_rules_need_still_voids_the_round_TBAC_7_1():
    """The vectorised path sees every card of the round, not only the six the hands can use."""
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS + " Zz", [("W1", "banker", 10000, 9500)])
    _, f = audit(nb)
    assert keys(f) == {("card_integrity", "BAC-01", 1, None), ("void_not_honoured", "BAC-01", 1, "W1")}


def test_a_void_round_settled_with_every_net_zero_is_still_not_honoured_TBAC_7_1_1():
    nb = NightBuilder()
    nb.round("BAC-01", 1, "Kc Kh Zz 7d 7s", [("W1", "banker", 10000, 0)])  # status settled, the net happens to be 0
    _, f = audit(nb)
    row = one(f, "void_not_honoured")
    assert row["wager_id"] is None and row["severity"] == "medium" and row["rule_ref"] == "TBAC-7.1"


def test_a_limit_breach_is_flagged_even_when_the_cards_cannot_settle_the_wager():
    nb = NightBuilder()
    nb.round("BAC-01", 1, "9c ?? Kd 3s", [("W1", "player", 1000, 1000)])
    s, f = audit(nb)
    assert s["expected_net"].to_list() == [None]
    row = one(f, "limit_breach", "W1")
    assert row["severity"] == "medium" and "cannot be checked" in row["detail"]


def test_an_unread_card_the_engine_leaves_to_the_wagers_is_still_a_card_integrity_finding():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    cards = "b:2c Ah Kh b:3c Qh Jh Th b:4c 2d b:5c 3s 9c ??"  # the dealer's second card was not read
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500), ("H2", "flop", 5000, 5000)], ruleset=rs, deal_mode="shoe",
             actions=[(1, 1, "flop", 5000), (1, 1, "check", None), (1, 1, "check", None)], decks=1)
    _, f = audit(nb)
    assert ("card_integrity", "HTB-01", 1, None) in keys(f)


def test_partitions_audited_in_groups_give_the_same_findings_and_settlements_as_one_by_one():
    """The flow hands several (gaming day, table) partitions to one task: every step keys rows by table and round."""
    nb = NightBuilder()
    for t in ("BAC-01", "BAC-02", "BAC-03"):
        nb.round(t, 1, BANKER_6_THREE_CARDS, [(f"{t}-1", "tiger", 10000, 120000, 1, "P-1")])
        nb.round(t, 2, PLAYER_NATURAL, [(f"{t}-2", "player", 1000, 1000, 1, "P-1")])  # under the minimum: P-1 at each table
        nb.round(t, 3, PLAYER_NATURAL, [(f"{t}-3", "player", 1000, 1000, 1, "P-1")])  # returned (TBAC-7.17), paid: overpaid
        nb.round(t, 5, "9c 2h Zz 3s", [(f"{t}-5", "player", 10000, 10000)])
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 15000, 1)], ruleset="hoiana-blackjack",
             actions=[(1, 1, "stand", None)])
    s1, f1 = nb.audit()
    s2, f2 = nb.audit(groups=2)
    assert f1.equals(f2) and s1.sort("wager_id").equals(s2.sort("wager_id"))
    assert keys(f1, "limit_breach") >= {("limit_breach", t, 3, f"{t}-3") for t in ("BAC-01", "BAC-02", "BAC-03")}
    assert one(f1, "limit_breach", "BAC-02-3")["expected_net"] == 0


def test_the_process_pool_settles_blackjack_exactly_as_this_process_does():
    from pipelines.audit.params import AuditParams

    nb = NightBuilder()
    rs = "hoiana-blackjack"
    hands = [("Tc 7d 9h Kc", "stand", 10000), ("Ac 7d Kh", "stand", 15000), ("Tc 7d 9h Kc 5s", "stand", 10000),
             ("Tc 6d 9h Kc", "double", 10000), ("8c 9d 8h 7s", "stand", -10000)]
    for r, (cards, action, net) in enumerate(hands * 3, start=1):
        amount = 20000 if action == "double" else None
        nb.round("BJ-01", r, cards, [(f"B{r}", "main", 10000, net, 1)], ruleset=rs, actions=[(1, 1, action, amount)])
    serial = nb.audit(AuditParams(workers=1))
    pooled = nb.audit(AuditParams(workers=2, pool_min_rounds=1))
    assert serial[0].equals(pooled[0]) and serial[1].equals(pooled[1])
    assert serial[1].height > 0
