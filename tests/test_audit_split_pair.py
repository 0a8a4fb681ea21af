"""BJ-4.10.1.2, the Pair wager placed when splitting, through the audit: the round log's ``hand`` on the
wager, settled on that hand's second card, never a late wager (BJ-4.5 excepts splitting).

Cards are in device order (seat 1, the dealer's card, seat 1 again, then the cards the decisions call
for, then the dealer's draws). Split-time pair wagers are placed 25 s after bets close (20 s after the
first card): a pair wager placed before the deal with that timing would be a late wager.
"""

from __future__ import annotations

import polars as pl

from test_audit_support import NightBuilder

BJ = "hoiana-blackjack"
AT_SPLIT = 25.0  # seconds after bets closed: after the first card (cards start at +5 s)

# 8s/8d split: hand 1 draws 3h (11), hand 2 draws 8c (16); the dealer's 6 draws T, 7: bust
SPLIT_8S = "8s 6c 8d 3h 8c Tc 7d"
SPLIT_8S_ACTIONS = [(1, 1, "split", None), (1, 1, "stand", None), (1, 2, "stand", None)]
# 8s/8d split, hand 1 draws 8h and is split again: hand 1 8s Tc, hand 3 8h 3d, hand 2 8d Kd; dealer 6 T 9 bust
RESPLIT = "8s 6c 8d 8h Tc 3d Kd Td 9s"
RESPLIT_ACTIONS = [(1, 1, "split", None), (1, 1, "split", None), (1, 1, "stand", None), (1, 3, "stand", None),
                   (1, 2, "stand", None)]


def split_pair(wager_id: str, hand: int, net: int, amount: int = 1000) -> tuple:
    return (wager_id, "pair", amount, net, 1, f"P-{wager_id}", AT_SPLIT, hand)


def night() -> NightBuilder:
    nb = NightBuilder()
    # round 1, recorded as the rules settle it: the split-time pair wager on hand 1 loses (8s 3h), the one on
    # hand 2 wins (8d 8c), the pair wager placed before the deal wins on the seat's first two cards (8s 8d)
    nb.round("BJ-01", 1, SPLIT_8S, [("W1", "main", 10000, 20000), ("P0", "pair", 1000, 11000),
                                    split_pair("P1", 1, -1000), split_pair("P2", 2, 11000)],
             ruleset=BJ, actions=SPLIT_8S_ACTIONS)
    # round 2, the same cards: the table paid the split-time wager on hand 1 as if it were on 8s 8d
    nb.round("BJ-01", 2, SPLIT_8S, [("W2", "main", 10000, 20000), split_pair("P3", 1, 11000)],
             ruleset=BJ, actions=SPLIT_8S_ACTIONS)
    # round 3, a resplit recorded right: hand 1's wager was decided by 8h (wins) before hand 1 was split again
    nb.round("BJ-01", 3, RESPLIT, [("W3", "main", 10000, 30000), split_pair("PA", 1, 11000),
                                   split_pair("PB", 3, -1000), split_pair("PC", 2, -1000)],
             ruleset=BJ, actions=RESPLIT_ACTIONS)
    # round 4: a pair wager naming hand 2 on a seat that never split
    nb.round("BJ-01", 4, "Tc 7d 9h Kc", [("W4", "main", 10000, 10000), split_pair("PX", 2, -1000)],
             ruleset=BJ, actions=[(1, 1, "stand", None)])
    return nb


EXPECTED_FINDINGS = {("payout_mismatch", 2, "P3"), ("illegal_action", 4, None)}


def _findings(f: pl.DataFrame) -> set[tuple]:
    return {(r["kind"], r["round_no"], r["wager_id"]) for r in f.iter_rows(named=True)}


def _expected(s: pl.DataFrame) -> dict[str, tuple]:
    return {r["wager_id"]: (r["expected_net"], r["clause"]) for r in s.iter_rows(named=True)}


def check(settlements: pl.DataFrame, findings: pl.DataFrame) -> None:
    assert _findings(findings) == EXPECTED_FINDINGS, findings.select("kind", "round_no", "wager_id", "detail").rows()
    e = _expected(settlements)
    assert e["P0"] == (11000, "BJ-6.3.1")  # placed before the deal: the seat's first two cards, a pair
    assert e["P1"] == (-1000, "BJ-4.10.1.2")  # 8s then 3h: not identical
    assert e["P2"] == (11000, "BJ-4.10.1.2, BJ-5.1")  # 8d then 8c: 11 to 1
    assert e["P3"][0] == -1000
    assert (e["PA"][0], e["PB"][0], e["PC"][0]) == (11000, -1000, -1000)
    assert e["W3"][0] == 30000
    assert e["PX"][0] is None
    px = settlements.filter(pl.col("wager_id") == "PX").row(0, named=True)
    assert "no split formed" in px["unsettled_reason"]

    paid = findings.filter(pl.col("kind") == "payout_mismatch").row(0, named=True)
    assert (paid["expected_net"], paid["recorded_net"], paid["difference"]) == (-1000, 11000, 12000)
    assert paid["rule_ref"] == "BJ-4.10.1.2" and paid["severity"] == "high"
    assert "8s 3h" in paid["detail"] and "overpaid 120.00 USD" in paid["detail"]  # 12,000 cents
    illegal = findings.filter(pl.col("kind") == "illegal_action").row(0, named=True)
    assert illegal["rule_ref"] == "BJ-4.10.1.2" and "PX" in illegal["detail"]


def test_split_time_pair_wagers_are_settled_on_their_own_hands_BJ_4_10_1_2():
    settlements, findings = night().audit()
    check(settlements, findings)


def test_the_same_night_from_the_files_through_the_ingest_BJ_4_10_1_2(tmp_path):
    settlements, findings, summary = night().audit_files(tmp_path)
    assert sum(summary.quarantined_by_reason.values()) == 0
    check(settlements, findings)


def test_a_pair_wager_placed_at_the_split_is_not_late_but_one_without_a_hand_is_BJ_4_5():
    nb = NightBuilder()
    # the near miss: the same pair wager placed at the same moment without a hand is a late wager
    nb.round("BJ-01", 1, SPLIT_8S, [("W1", "main", 10000, 20000), split_pair("P1", 1, -1000),
                                    ("P2", "pair", 1000, 11000, 1, "P-P2", AT_SPLIT)],
             ruleset=BJ, actions=SPLIT_8S_ACTIONS)
    _, f = nb.audit()
    assert _findings(f) == {("late_wager", 1, "P2")}, f.rows()
    assert f.row(0, named=True)["rule_ref"] == "BJ-4.5"


def test_the_ingest_keeps_the_hand_and_quarantines_a_hand_that_is_not_a_hand_number(tmp_path):
    import json

    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder

    nb = NightBuilder()
    nb.round("BJ-01", 1, SPLIT_8S, [("W1", "main", 10000, 20000), split_pair("P1", 1, -1000)], ruleset=BJ,
             actions=SPLIT_8S_ACTIONS)
    inp = nb.write_input(tmp_path / "night")
    line = json.loads((inp / "rounds_night.jsonl").read_text().splitlines()[0])
    bad = []
    for n, hand in ((2, 0), (3, "1"), (4, 1.0)):
        copy = json.loads(json.dumps(line))
        copy["round_no"] = n
        copy["wagers"][1]["hand"] = hand
        bad.append(json.dumps(copy))
    with open(inp / "rounds_night.jsonl", "a", encoding="utf-8") as fh:
        fh.write("".join(b + "\n" for b in bad))
    con = open_writer(tmp_path / "db.duckdb")
    try:
        summary = ingest_folder(con, inp, "06:00")
        hands = con.execute("SELECT wager_id, hand FROM core_wagers ORDER BY wager_order").fetchall()
        reasons = con.execute("SELECT source_line, reason_code FROM core_quarantine ORDER BY source_line").fetchall()
    finally:
        con.close()
    assert hands == [("W1", None), ("P1", 1)]
    assert [r[0] for r in reasons] == [2, 3, 4] and sum(summary.quarantined_by_reason.values()) == 3
    assert dict(reasons)[2] == "out_of_range" and dict(reasons)[3] == "wrong_type"
