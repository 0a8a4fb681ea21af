"""Amounts the Hold'em texts leave open, and one wager per betting area: golden rounds from the clauses.

- The guide's Bonus Jackpot (envy, THB-G-BONUS-JACKPOT) names no amount: unstated, the other jackpot
  wagers of a round in which a Royal or Straight Flush is won are unsettled; stated, they are paid it.
- The jackpot stake (MBS-1.1.12, THB-G-JACKPOT) is never stated: unstated, nothing is checked; stated,
  a jackpot wager of another amount is a limit_breach citing the clause.
- HTB-4.7.2: only one Ante (Bonus, Flop, Turn, River) is accepted on a betting area: a second one is an
  illegal_action citing it, and is returned.

Each case runs through the scalar engine, the batch path (settle_many) and, where the issue asks for
it, an audit of a small night (NightBuilder), which must raise exactly the right findings.
"""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from rulebook.catalogue import Catalogue, builtin
from rulebook.holdem_bonus.engine import settle_round
from rulebook.holdem_bonus.params import UNSTATED
from rulebook.holdem_bonus.vector import settle_many
from rulebook.round import RoundInput, Wager
from rulebook.strict import RuleSetError
from test_audit_support import NightBuilder
from test_holdem_engine import events, play, shoe

HOIANA = builtin().latest("hoiana-holdem-bonus")
MBS = builtin().latest("mbs-holdem-bonus-progressive")
GUIDE = builtin().latest("guide-holdem-bonus-progressive")


def with_progressive(rs, **changes):
    prog = dataclasses.replace(rs.params.progressive, **changes)
    return dataclasses.replace(rs, params=dataclasses.replace(rs.params, progressive=prog))


def catalogue_with(*replaced) -> Catalogue:
    names = {r.name for r in replaced}
    return Catalogue(tuple(r for r in builtin().rulesets if r.name not in names) + tuple(replaced))


def round_input(rs, cards: str, wagers: list[tuple], actions, **kw) -> RoundInput:
    """``wagers``: (wager_id, seat, bet, amount[, player_id])."""
    ws = tuple(Wager(w[0], w[1], w[2], w[3], w[4] if len(w) > 4 else None) for w in wagers)
    return RoundInput(rs, events(cards), ws, tuple(actions), deal_mode="shoe", **kw)


def both_paths(ri: RoundInput):
    """The scalar engine's result, checked equal to the batch path's."""
    scalar = settle_round(ri)
    batch = settle_many([ri])[0]
    assert (batch.settlements, batch.unsettled, batch.irregularities) == (scalar.settlements, scalar.unsettled, scalar.irregularities)
    return scalar


def audit_findings(nb: NightBuilder, catalogue: Catalogue | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    from pipelines.audit.params import AuditParams

    return nb.audit(AuditParams(catalogue=catalogue) if catalogue else None)


def kinds(findings: pl.DataFrame) -> set[tuple]:
    return {(r["kind"], r["wager_id"], r["rule_ref"]) for r in findings.iter_rows(named=True)}


# --- the guide's Bonus Jackpot (envy) ------------------------------------------------------------

# seat 1 As Ks makes a Royal Flush on the hole cards and the flop Qs Js Ts; seat 2 (7c 8c) has a jackpot
# wager and folds; seat 3 has none
ROYAL = shoe(["As Ks", "7c 8c", "2h 3c"], "Qs Js Ts", "2d", "3h", "4d 5d")
# the same seats with a flush for seat 1 (2s 9s on Qs Js 4s): a jackpot hand, but no Royal or Straight Flush
FLUSH = shoe(["2s 9s", "7c 8c", "2h 3c"], "Qs Js 4s", "2d", "3h", "4d 5d")
JACKPOT_SEATS = [("A1", 1, "ante", 2500), ("P1", 1, "progressive", 100), ("F1", 1, "flop", 5000),
                 ("A2", 2, "ante", 2500), ("P2", 2, "progressive", 100), ("A3", 3, "ante", 2500)]
JACKPOT_PLAY = play(1, "flop") + play(2, "fold") + play(3, "fold")


def test_the_guide_leaves_the_envy_amounts_unstated_and_they_have_no_default():
    prog = GUIDE.params.progressive
    assert (prog.envy_royal_flush, prog.envy_straight_flush) == (UNSTATED, UNSTATED)
    # a rule set cannot leave the field out: it must state an amount or write "unstated"
    from rulebook.holdem_bonus.params import ProgressiveParams
    from rulebook.strict import build

    raw = {"currency": "AUD", "lines": [{"hand": "flush", "cards": "hole_and_flop", "fixed": 100, "clause": "X"}],
           "lose_clause": "X", "percent_and_fixed": "greater", "combine": "best", "wager_on_win": "collected",
           "percent_rounding": "down", "stake": UNSTATED, "stake_clause": "X", "envy_straight_flush": 0}
    with pytest.raises(RuleSetError, match="missing required key envy_royal_flush"):
        build(ProgressiveParams, raw, "test")
    with pytest.raises(RuleSetError, match="unstated"):
        build(ProgressiveParams, {**raw, "envy_royal_flush": "tbd"}, "test")


def test_envy_unstated_leaves_the_other_jackpot_wagers_unsettled_THB_G_BONUS_JACKPOT():
    r = both_paths(round_input(GUIDE, ROYAL, JACKPOT_SEATS, JACKPOT_PLAY, currency="AUD", jackpot_meter=1))
    assert r.settlements["P1"].net == 5_000_000 - 100  # the winner's own prize is stated (THB-G-JACKPOT)
    assert "P2" not in r.settlements
    assert "unstated" in r.unsettled["P2"] and "THB-G-BONUS-JACKPOT" in r.unsettled["P2"] and "royal flush" in r.unsettled["P2"]
    assert r.settlements["A2"].net == -2500  # the fold stands: only the envy is open


def test_envy_stated_is_paid_exactly_to_the_other_jackpot_wagers_THB_G_BONUS_JACKPOT():
    guide = with_progressive(GUIDE, envy_royal_flush=25_000, envy_straight_flush=5_000)
    r = both_paths(round_input(guide, ROYAL, JACKPOT_SEATS, JACKPOT_PLAY, currency="AUD", jackpot_meter=1))
    assert (r.settlements["P2"].net, r.settlements["P2"].clause) == (25_000 - 100, "THB-G-BONUS-JACKPOT")
    assert r.settlements["P1"].net == 5_000_000 - 100  # not eligible in the round he wins it
    # a straight flush (Ks Qs on Js Ts 9s) pays the straight-flush envy
    sf = shoe(["Ks Qs", "7c 8c", "2h 3c"], "Js Ts 9s", "2d", "3h", "4d 5d")
    r = both_paths(round_input(guide, sf, JACKPOT_SEATS, JACKPOT_PLAY, currency="AUD", jackpot_meter=1))
    assert r.settlements["P2"].net == 5_000 - 100 and r.settlements["P1"].clause == "THB-G-JACKPOT"


def test_no_royal_or_straight_flush_won_no_envy_even_unstated_THB_G_BONUS_JACKPOT():
    r = both_paths(round_input(GUIDE, FLUSH, JACKPOT_SEATS, JACKPOT_PLAY, currency="AUD", jackpot_meter=1))
    assert r.settlements["P1"].net == 10_000 - 100  # a flush on the hole cards and the flop: $100
    assert (r.settlements["P2"].net, r.settlements["P2"].clause) == (-100, "THB-G-JACKPOT")
    assert not r.unsettled


def test_a_simulated_guide_table_offers_no_bonus_jackpot_it_does_not_state():
    from pipelines.simulate.holdem import _as_the_table_plays

    table = _as_the_table_plays(GUIDE)
    r = both_paths(round_input(table, ROYAL, JACKPOT_SEATS, JACKPOT_PLAY, currency="AUD", jackpot_meter=1))
    assert not r.unsettled and r.settlements["P2"].net == -100
    assert _as_the_table_plays(MBS) is MBS and GUIDE.params.progressive.envy_royal_flush == UNSTATED


def night_with_envy(paid_to_p2: int) -> NightBuilder:
    nb = NightBuilder()
    wagers = [("A1", "ante", 2500, 2500, 1), ("P1", "progressive", 100, 5_000_000 - 100, 1), ("F1", "flop", 5000, 5000, 1),
              ("A2", "ante", 2500, -2500, 2), ("P2", "progressive", 100, paid_to_p2, 2), ("A3", "ante", 2500, -2500, 3)]
    acts = [(1, 1, "flop", 5000), (1, 1, "check", None), (1, 1, "check", None), (2, 1, "fold", None), (3, 1, "fold", None)]
    nb.round("GHB-01", 1, ROYAL, wagers, ruleset="guide-holdem-bonus-progressive", deal_mode="shoe", actions=acts,
             decks=1, currency="AUD", jackpot_meter=1, limits={"side_min": 100})
    return nb


def test_audit_raises_no_false_overpaid_for_an_unstated_envy_the_table_paid():
    settlements, f = audit_findings(night_with_envy(25_000 - 100))
    assert f.height == 0, f.select("kind", "wager_id", "detail").rows()
    p2 = settlements.filter(pl.col("wager_id") == "P2").row(0, named=True)
    assert p2["expected_net"] is None and "unstated" in p2["unsettled_reason"]


def test_audit_checks_a_stated_envy_to_the_unit():
    stated = catalogue_with(with_progressive(GUIDE, envy_royal_flush=25_000, envy_straight_flush=5_000))
    _, f = audit_findings(night_with_envy(25_000 - 100), stated)
    assert f.height == 0
    _, f = audit_findings(night_with_envy(-100), stated)  # the table did not pay it
    assert kinds(f) == {("payout_mismatch", "P2", "THB-G-BONUS-JACKPOT")}
    assert f.row(0, named=True)["difference"] == -25_000


# --- the jackpot stake -----------------------------------------------------------------------------

ROYAL_MBS = "As 7c Ks 8c Qs Js Ts 2d 3h 4d 5d"  # MBS-3.6: seat 1 As Ks, seat 2 7c 8c, flop Qs Js Ts


def stake_round(rs, amount: int) -> RoundInput:
    wagers = [("A1", 1, "ante", 2500), ("P1", 1, "progressive", amount), ("A2", 2, "ante", 2500), ("P2", 2, "progressive", 500)]
    return round_input(rs, ROYAL_MBS, wagers, play(1, "fold") + play(2, "fold"), currency="SGD", jackpot_meter=10_000_000)


def test_the_mbs_stake_is_unstated_so_no_amount_is_flagged_MBS_1_1_12():
    assert MBS.params.progressive.stake == UNSTATED and GUIDE.params.progressive.stake == UNSTATED
    r = both_paths(stake_round(MBS, 1_000_000))
    assert not r.irregularities and r.settlements["P1"].net == -1_000_000  # a folded hand: no hole-card royal (MBS-3.7.1)


def test_a_jackpot_wager_off_the_stated_stake_is_a_limit_breach_MBS_1_1_12():
    mbs = with_progressive(MBS, stake=500)
    r = both_paths(stake_round(mbs, 1_000_000))
    assert [(i.kind, i.clause) for i in r.irregularities] == [("limit_breach", "MBS-1.1.12")]
    assert "1,000,000" in r.irregularities[0].detail and "500" in r.irregularities[0].detail
    assert r.settlements["P1"].net == -1_000_000  # settled as placed: the prizes are amounts, not odds
    # near miss: the stake itself
    assert not both_paths(stake_round(mbs, 500)).irregularities


def test_audit_flags_the_wager_off_the_stake_and_nothing_else():
    mbs = with_progressive(MBS, stake=500)
    nb = NightBuilder()
    acts = [(1, 1, "fold", None), (2, 1, "fold", None)]
    for round_no, amount in ((1, 10_000), (2, 500)):
        nb.round("MBS-01", round_no, ROYAL_MBS, [("A1", "ante", 2500, -2500, 1), (f"P{round_no}", "progressive", amount, -amount, 1),
                 ("A2", "ante", 2500, -2500, 2)], ruleset="mbs-holdem-bonus-progressive", deal_mode="shoe", actions=acts,
                 decks=1, currency="SGD", jackpot_meter=10_000_000, shoe_id=f"S-{round_no}", limits={"side_max": 1_000_000})
    _, f = audit_findings(nb, catalogue_with(mbs))
    assert {(r["kind"], r["round_no"], r["rule_ref"], r["severity"]) for r in f.iter_rows(named=True)} == {
        ("limit_breach", 1, "MBS-1.1.12", "medium")}
    _, f = audit_findings(nb)  # the shipped rule set: the stake unstated, nothing to compare with
    assert f.height == 0


# --- HTB-4.7.2: one Ante per betting area ------------------------------------------------------------

# seat 1 Ah Kh makes a Royal Flush (Qh Jh Th): the Ante pays 1 to 1 (HTB-5.2); seat 2 folds
TWO_SEATS = shoe(["Ah Kh", "7d 2c"], "Qh Jh Th", "2d", "3s", "9c 9d")
ACTIONS = play(1, "flop", "check", "check") + play(2, "fold")


def test_a_second_ante_on_one_area_is_refused_and_returned_HTB_4_7_2():
    wagers = [("A1", 1, "ante", 2500, "P-1"), ("A1b", 1, "ante", 5000, "P-1"), ("F1", 1, "flop", 5000, "P-1"), ("A2", 2, "ante", 2500, "P-2")]
    r = both_paths(round_input(HOIANA, TWO_SEATS, wagers, ACTIONS))
    assert (r.settlements["A1"].net, r.settlements["A1"].clause) == (2500, "HTB-6.1.1")  # the first stands
    assert (r.settlements["A1b"].net, r.settlements["A1b"].clause) == (0, "HTB-4.7.2")
    assert [(i.kind, i.clause) for i in r.irregularities] == [("illegal_action", "HTB-4.7.2")]
    assert "A1b" in r.irregularities[0].detail and "5,000" in r.irregularities[0].detail
    # a second Bonus likewise
    wagers = [("A1", 1, "ante", 2500), ("B1", 1, "bonus", 500), ("B1b", 1, "bonus", 500), ("F1", 1, "flop", 5000), ("A2", 2, "ante", 2500)]
    r = both_paths(round_input(HOIANA, TWO_SEATS, wagers, ACTIONS))
    assert r.settlements["B1"].net == 500 * 25 and r.settlements["B1b"].net == 0  # A-K suited 25 to 1 (HTB-6.1.2)


def test_a_back_bettors_ante_on_a_bet_area_is_refused_HTB_4_7_2_and_4_7_1():
    wagers = [("A1", 1, "ante", 2500, "P-1"), ("F1", 1, "flop", 5000, "P-1"), ("X1", 1, "ante", 2500, "P-9"), ("A2", 2, "ante", 2500, "P-2")]
    r = both_paths(round_input(HOIANA, TWO_SEATS, wagers, ACTIONS))
    assert r.settlements["X1"].net == 0 and "player P-9" in r.irregularities[0].detail


def test_one_ante_on_each_of_two_areas_is_not_flagged_HTB_4_7_1():
    # one player on two hands is allowed (HTB-4.7.1): nothing to flag
    wagers = [("A1", 1, "ante", 2500, "P-1"), ("F1", 1, "flop", 5000, "P-1"), ("A2", 2, "ante", 2500, "P-1")]
    r = both_paths(round_input(HOIANA, TWO_SEATS, wagers, ACTIONS))
    assert not r.irregularities and r.settlements["A1"].net == 2500 and r.settlements["A2"].net == -2500


def test_mbs_has_no_rule_for_a_second_ante_so_it_is_flagged_and_unsettled():
    cards = "Ah 7d Kh 2c Qh Jh Th 2d 3s 9c 9d"  # MBS-3.6 order
    wagers = [("A1", 1, "ante", 2500), ("A1b", 1, "ante", 2500), ("F1", 1, "flop", 5000), ("A2", 2, "ante", 2500)]
    r = both_paths(round_input(MBS, cards, wagers, ACTIONS))
    assert [(i.kind, i.clause) for i in r.irregularities] == [("illegal_action", "MBS-2.2.2")]
    assert "A1b" not in r.settlements and "MBS-2.2.2" in r.unsettled["A1b"] and r.settlements["A1"].net == 2500


def test_audit_of_two_antes_on_a_seat_raises_the_finding_and_the_overpayment():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    acts = [(1, 1, "flop", 5000), (1, 1, "check", None), (1, 1, "check", None), (2, 1, "fold", None)]
    nb.round("HTB-01", 1, TWO_SEATS, [("A1", "ante", 2500, 2500, 1), ("A1b", "ante", 2500, 2500, 1), ("F1", "flop", 5000, 5000, 1),
             ("A2", "ante", 2500, -2500, 2)], ruleset=rs, deal_mode="shoe", actions=acts, decks=1)
    # near miss: one Ante on each seat, settled right
    nb.round("HTB-01", 2, TWO_SEATS, [("A3", "ante", 2500, 2500, 1), ("F3", "flop", 5000, 5000, 1), ("A4", "ante", 2500, -2500, 2)],
             ruleset=rs, deal_mode="shoe", actions=acts, decks=1, shoe_id="S-2")
    _, f = audit_findings(nb)
    assert kinds(f) == {("illegal_action", None, "HTB-4.7.2"), ("payout_mismatch", "A1b", "HTB-4.7.2")}
    money = f.filter(pl.col("kind") == "payout_mismatch").row(0, named=True)
    assert (money["expected_net"], money["recorded_net"], money["difference"], money["round_no"]) == (0, 2500, 2500, 1)


# --- HTB-7.11: an absent player ------------------------------------------------------------------------


def test_audit_of_an_absent_players_ante_collected_as_a_fold_HTB_7_11():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    acts = [(1, 1, "flop", 5000), (1, 1, "check", None), (1, 1, "check", None)]  # seat 2: no decision at all
    nb.round("HTB-01", 1, TWO_SEATS, [("A1", "ante", 2500, 2500, 1), ("F1", "flop", 5000, 5000, 1), ("A2", "ante", 2500, -2500, 2)],
             ruleset=rs, deal_mode="shoe", actions=acts, decks=1)
    # near miss: the same absence, the Ante returned as HTB-7.11 prescribes
    nb.round("HTB-01", 2, TWO_SEATS, [("A3", "ante", 2500, 2500, 1), ("F3", "flop", 5000, 5000, 1), ("A4", "ante", 2500, 0, 2)],
             ruleset=rs, deal_mode="shoe", actions=acts, decks=1, shoe_id="S-2")
    _, f = audit_findings(nb)
    assert kinds(f) == {("payout_mismatch", "A2", "HTB-7.11")}
    row = f.row(0, named=True)
    assert (row["expected_net"], row["recorded_net"], row["difference"]) == (0, -2500, -2500)


# --- HTB-7.8: a missed burn, a parameter casinos set ----------------------------------------------------


def test_a_missed_burn_voids_the_round_where_the_rule_set_reads_HTB_7_8_strictly():
    cards = "b:2c Ah Kc Ad Kd b:2d Qs Js 3h 4d b:2s 9c Tc Th"  # no burn before the turn
    wagers = [("A1", 1, "ante", 100), ("F1", 1, "flop", 200), ("A4", 4, "ante", 100)]
    actions = play(1, "flop") + play(4, "fold")
    shipped = both_paths(round_input(HOIANA, cards, wagers, actions))
    assert not shipped.void and shipped.settlements["F1"].net == 200  # "flag": settled as dealt, reported
    rules = dataclasses.replace(HOIANA.params.irregularities, missing_burn=dataclasses.replace(
        HOIANA.params.irregularities.missing_burn, effect="void"))
    strict = dataclasses.replace(HOIANA, params=dataclasses.replace(HOIANA.params, irregularities=rules))
    r = both_paths(round_input(strict, cards, wagers, actions))
    assert r.void and {k: (s.net, s.clause) for k, s in r.settlements.items()} == {
        "A1": (0, "HTB-7.8"), "F1": (0, "HTB-7.8"), "A4": (0, "HTB-7.8")}
