"""TBAC-7.6-7.8 through the audit: a card dealt in error makes the next round of the shoe a Free Hand,
on which every wager nets 0, and the table must record it as ``free_hand``.

Coups in device order (Player, Banker, Player, Banker, then third cards). ``WITH_ERROR`` is a Player
natural 9 v 5 and a fifth card, 4c, that the drawing rules do not give (TBAC-7.6): it is the first card
of the next hand, a Free Hand whose own device record then holds the rest (``FREE_HAND_REST``: with 4c
in front, Player 4c 4h = 8 v Banker 5d Kc = 5, a natural).
"""

from __future__ import annotations

import polars as pl

from test_audit_findings import PLAYER_NATURAL
from test_audit_support import NightBuilder

WITH_ERROR = "9c 2h Kd 3s 4c"
FREE_HAND_REST = "5d 4h Kc"
FREE_HAND_RESULT = {"winner": "player", "player_points": 8, "banker_points": 5}


def _keys(f: pl.DataFrame) -> set[tuple]:
    return {(r["kind"], r["table_id"], r["round_no"], r["wager_id"]) for r in f.iter_rows(named=True)}


def night() -> NightBuilder:
    nb = NightBuilder()
    # the case to flag: the next round of the shoe was dealt and settled as an ordinary round
    nb.round("BAC-01", 1, WITH_ERROR, [("W1", "player", 10000, 10000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 10000), ("W3", "banker", 10000, -10000)])
    # a Free Hand recorded right: no wagers, its first card the one dealt in error; the shoe then goes on
    nb.round("BAC-02", 1, WITH_ERROR, [("W4", "player", 10000, 10000)])
    nb.round("BAC-02", 2, FREE_HAND_REST, [], status="free_hand", recorded=FREE_HAND_RESULT)
    nb.round("BAC-02", 3, PLAYER_NATURAL, [("W5", "player", 10000, 10000)], recorded={"winner": "player"})
    # near miss: the card dealt in error was the shoe's last; the next round comes from a new shoe
    nb.round("BAC-03", 1, WITH_ERROR, [("W6", "player", 10000, 10000)], shoe_id="S-BAC-03-A")
    nb.round("BAC-03", 2, PLAYER_NATURAL, [("W7", "player", 10000, 10000)], shoe_id="S-BAC-03-B")
    # near miss: another table's next round owes nothing to this table's error
    nb.round("BAC-04", 1, WITH_ERROR, [("W8", "player", 10000, 10000)])
    nb.round("BAC-05", 2, PLAYER_NATURAL, [("W9", "player", 10000, 10000)])
    # the next round holds no wagers but is recorded as an ordinary round
    nb.round("BAC-06", 1, WITH_ERROR, [("W10", "player", 10000, 10000)])
    nb.round("BAC-06", 2, PLAYER_NATURAL, [])
    return nb


ERRORS = {("drawing_rule_violation", t, 1, None) for t in ("BAC-01", "BAC-02", "BAC-03", "BAC-04", "BAC-06")}


def test_a_free_hand_after_a_card_dealt_in_error_is_checked_TBAC_7_6_to_7_8():
    s, f = night().audit()
    assert _keys(f) == ERRORS | {
        ("free_hand_wager", "BAC-01", 2, "W2"), ("free_hand_wager", "BAC-01", 2, "W3"),
        ("free_hand_wager", "BAC-06", 2, None),
    }, f.select("kind", "table_id", "round_no", "wager_id", "detail").rows()
    for t in ERRORS:
        row = f.filter((pl.col("table_id") == t[1]) & (pl.col("kind") == t[0])).row(0, named=True)
        assert row["rule_ref"] == "TBAC-7.6" and "Free Hand" in row["detail"]

    w2 = f.filter(pl.col("wager_id") == "W2").row(0, named=True)
    assert (w2["expected_net"], w2["recorded_net"], w2["difference"], w2["severity"], w2["rule_ref"]) == (
        0, 10000, 10000, "high", "TBAC-7.8")
    assert "dealt in error in round 1" in w2["detail"] and "recorded the round as settled" in w2["detail"]
    w3 = f.filter(pl.col("wager_id") == "W3").row(0, named=True)
    assert (w3["expected_net"], w3["difference"]) == (0, -10000)
    empty = f.filter((pl.col("table_id") == "BAC-06") & (pl.col("kind") == "free_hand_wager")).row(0, named=True)
    assert (empty["severity"], empty["rule_ref"], empty["expected_net"]) == ("medium", "TBAC-7.8", None)
    assert "recorded the round as settled with 0 wager(s)" in empty["detail"]

    nets = {r["wager_id"]: r["expected_net"] for r in s.iter_rows(named=True)}
    # the rounds with the error are settled on the cards the rules give them; the near misses as dealt
    assert nets == {"W1": 10000, "W2": 0, "W3": 0, "W4": 10000, "W5": 10000, "W6": 10000, "W7": 10000,
                    "W8": 10000, "W9": 10000, "W10": 10000}


def test_a_recorded_free_hand_is_settled_on_the_card_dealt_in_error_and_its_own_TBAC_7_8():
    nb = NightBuilder()
    nb.round("BAC-02", 1, WITH_ERROR, [("W4", "player", 10000, 10000)])
    # announced as what the cards with 4c in front give: no result_mismatch, no short-deal card finding
    nb.round("BAC-02", 2, FREE_HAND_REST, [("W5", "banker", 10000, 0)], status="free_hand", recorded=FREE_HAND_RESULT)
    _, f = nb.audit()
    assert _keys(f) == {("drawing_rule_violation", "BAC-02", 1, None), ("free_hand_wager", "BAC-02", 2, "W5")}
    w5 = f.filter(pl.col("wager_id") == "W5").row(0, named=True)
    assert w5["severity"] == "medium" and "begun by the card(s) dealt in error in round 1" in w5["detail"]
    # the near miss: the same announcement on the Free Hand's own three cards would be a short deal
    nb = NightBuilder()
    nb.round("BAC-02", 2, FREE_HAND_REST, [], status="free_hand", recorded=FREE_HAND_RESULT)
    _, f = nb.audit()
    assert ("card_integrity", "BAC-02", 2, None) in _keys(f)


def test_a_card_dealt_in_error_in_a_free_hand_begins_the_next_TBAC_7_8():
    nb = NightBuilder()
    nb.round("BAC-02", 1, WITH_ERROR, [])
    # with 4c in front: Player 4c 4h = 8, Banker 5d Kc = 5, a natural; 7d is dealt in error again
    nb.round("BAC-02", 2, FREE_HAND_REST + " 7d", [], status="free_hand", recorded=FREE_HAND_RESULT)
    nb.round("BAC-02", 3, PLAYER_NATURAL, [("W1", "player", 10000, 10000)])
    _, f = nb.audit()
    assert _keys(f) == {("drawing_rule_violation", "BAC-02", 1, None), ("drawing_rule_violation", "BAC-02", 2, None),
                        ("free_hand_wager", "BAC-02", 3, "W1")}, f.rows()
