"""The round log's parse, a line that looks whole parsed without DuckDB's validator (``rounds_jsonl.FAST_PARSED``)
and any other with it in front (``rounds_jsonl.PARSED``), says exactly what the plain ``try(from_json(...))`` said, on hostile lines: every frame (rounds, wagers, actions as read and canonical), every
failure and reason, every raw line kept for the quarantine.

The lines are real round lines broken the ways an export breaks: cut mid-way, NUL bytes, replacement characters
(bad UTF-8 as the reader decodes it), numbers past 64 bits or not integers, keys repeated at each nesting level,
``[/]`` (markup to a console), CR before the line end, NaN, trailing commas, other JSON kinds.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.ingest import rounds_jsonl
from pipelines.ingest.lines import LineChunk
from pipelines.ingest.quarantine import to_quarantine

BACCARAT = (
    '{"table_id": "BAC-01", "game": "baccarat", "ruleset": "hoiana-tiger-baccarat/commission", "round_no": 52167, '
    '"shoe_id": "S-BAC01-0001", "dealer_id": "D1001", "currency": "USD", "deal_mode": null, "limits": {"min": 5000, '
    '"max": 1000000, "differential": 2000000, "side_min": 500, "side_max": 200000}, "bets_open_at": '
    '"2026-11-24T06:11:30+07:00", "bets_closed_at": "2026-11-24T06:11:57+07:00", "settled_at": '
    '"2026-11-24T06:12:17+07:00", "status": "settled", "recorded_result": {"winner": "banker", "player_points": 1, '
    '"banker_points": 6}, "jackpot_meter": null, "wagers": [{"wager_id": "W-1", "seat": 5, "player_id": null, '
    '"bet": "player", "amount": 41500, "placed_at": "2026-11-24T06:11:32+07:00", "net": -41500}, {"wager_id": '
    '"W-2", "seat": 6, "player_id": "P-256163", "bet": "banker", "amount": 30500, "placed_at": '
    '"2026-11-24T06:11:34+07:00", "net": 28975}], "actions": []}')
BLACKJACK = (
    '{"table_id": "BJ-01", "game": "blackjack", "ruleset": "hoiana-blackjack", "round_no": 7, "shoe_id": '
    '"S-BJ01-0001", "dealer_id": "D2001", "currency": "USD", "deal_mode": null, "limits": {"min": 1000, "max": '
    '500000, "side_min": 500, "side_max": 10000}, "bets_open_at": "2026-11-24T06:11:30+07:00", "bets_closed_at": '
    '"2026-11-24T06:11:57+07:00", "settled_at": "2026-11-24T06:12:17+07:00", "status": "settled", '
    '"recorded_result": {"dealer_cards": ["6s", "Qd"], "dealer_points": 16, "dealer_bust": false}, '
    '"jackpot_meter": null, "wagers": [{"wager_id": "W-9", "seat": 2, "player_id": null, "bet": "main", "amount": '
    '5000, "placed_at": "2026-11-24T06:11:32+07:00", "net": 5000, "hand": 1}], "actions": [{"seat": 2, "hand": 1, '
    '"action": "hit", "amount": null, "ts": "2026-11-24T06:11:59+07:00", "wager_ids": ["W-9"]}, {"seat": 2, '
    '"hand": 1, "action": "stand", "ts": "2026-11-24T06:12:03+07:00"}]}')
BASES = [BACCARAT, BLACKJACK]
NESTED_REPEATS = ['"round_no": 52167', '"max": 1000000', '"winner": "banker"', '"seat": 6', '"hand": 1',
                  '"dealer_cards": ["6s", "Qd"]', '"amount": 5000']
NUMBERS = ["18446744073709551616", "-9223372036854775809", "1e999", "5000.0", "-0", "1E3", "NaN", "Infinity", "00"]


@st.composite
def hostile(draw) -> str:
    line = draw(st.sampled_from(BASES))
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.integers(0, 10))
        at = draw(st.integers(0, len(line)))
        if how == 0:  # cut mid-way
            line = line[:at]
        elif how == 1:
            line = line[:at] + "\x00" + line[at:]
        elif how == 2:  # bad UTF-8, as the reader hands it on
            line = line[:at] + "\ufffd" + line[at:]
        elif how == 3:
            line = line.replace("41500", draw(st.sampled_from(NUMBERS)), 1).replace("5000,", draw(
                st.sampled_from(NUMBERS)) + ",", 1)
        elif how == 4:  # a key repeated where the contract nests it
            pair = draw(st.sampled_from([p for p in NESTED_REPEATS if p in line] or ['"status": "settled"']))
            line = line.replace(pair, pair + ", " + pair.split(":")[0] + ": " + draw(st.sampled_from(["0", "null", '"x"'])), 1)
        elif how == 5:
            line = line[:at] + draw(st.sampled_from(["[/]", '"[/]"', "[bold]"])) + line[at:]
        elif how == 6:
            line = line + "\r"
        elif how == 7:  # a trailing comma, a comment
            line = line.replace("]}", "],}", 1) if draw(st.booleans()) else line.replace("{", "{/*c*/", 1)
        elif how == 8:
            line = draw(st.sampled_from(["[" + line + "]", '"text"', "12", "null", "true", line + line]))
        elif how == 9:
            line = line.replace('"player_id": null', '"player_id": {"a": 1, "a": 2}', 1)
        else:
            line = draw(st.text(max_size=40))
    return line


def _parse(lines: list[str]):
    con = duckdb.connect()
    try:
        parser = rounds_jsonl.RoundsParser(con, "rounds_x.jsonl", 360, 10**12)
        r, w, a, failures, raw = parser.parse(LineChunk(1, pl.Series("raw", lines, dtype=pl.String)))
    finally:
        con.close()
    q = to_quarantine(failures, raw, "rounds_x.jsonl", "rounds_jsonl")
    return [f.to_dicts() for f in (r, w, a, failures.sort(pl.all()), raw, q)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile(), min_size=1, max_size=25))
def test_the_validator_in_front_changes_no_verdict(lines) -> None:
    new = _parse(lines)
    kept = rounds_jsonl.PARSED, rounds_jsonl.FAST_PARSED
    rounds_jsonl.PARSED = f"try(from_json(raw, '{rounds_jsonl.STRUCTURE}'))"  # the parse before the validator
    rounds_jsonl.FAST_PARSED = None
    try:
        old = _parse(lines)
    finally:
        rounds_jsonl.PARSED, rounds_jsonl.FAST_PARSED = kept
    assert new == old


def test_the_hostile_lines_are_hostile() -> None:
    """The bases parse clean, and each kind of break is quarantined (so the comparison above compares verdicts)."""
    r, w, a, failures, raw, q = _parse(BASES + [BACCARAT[:200], BACCARAT.replace('"status"', '"status": 1, "status"'),
                                                 BLACKJACK.replace("5000,", "5000.0,", 1), "[/]"])
    assert [x["source_line"] for x in r] == [1, 2]
    assert [(x["source_line"], x["reason_code"]) for x in q] == [
        (3, "json_unparseable"), (4, "duplicate_key"), (5, "non_integer_amount"), (6, "json_unparseable")]


def test_a_line_that_looks_whole_but_is_not_json_is_judged_as_before() -> None:
    """A comma missing between ``{`` and ``}``: the statement without the validator fails, and the chunk is parsed
    again with it; the good lines are kept and the bad one is unparseable, as the validator alone would say."""
    whole_but_bad = BACCARAT.replace('"BAC-01", "game"', '"BAC-01" "game"', 1)
    with duckdb.connect() as con:  # the case this test is about: the statement without the validator fails
        with pytest.raises(duckdb.Error):
            con.execute(f"SELECT from_json(?, '{rounds_jsonl.STRUCTURE}')", [whole_but_bad]).fetchall()
    assert whole_but_bad.startswith("{") and whole_but_bad.endswith("}")
    r, w, a, failures, raw, q = _parse([BACCARAT, whole_but_bad, BLACKJACK])
    assert [x["source_line"] for x in r] == [1, 3]
    assert [(x["source_line"], x["reason_code"]) for x in q] == [(2, "json_unparseable")]
    assert len(w) == 3 and len(a) == 2
