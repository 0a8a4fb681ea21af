"""rounds_jsonl.strict_json_failures: the screen that clears most lines before the exact check never clears a line
that spells a key twice, however the repeat is written (spacing, an escape, deep in a nested object, a value that
looks like a key), and says the same as the exact check (``json.loads`` with a hook) on every line."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest.rounds_jsonl import _DuplicateKey, _no_duplicates, _surely_unique, strict_json_failures

KEYS = st.sampled_from(["a", "b", "seat", "net", "a b", ":", '"', "\\", "é", "a:"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from(["", " :", '":', "x\\y", "ü"]))


def _encode_key(key: str, escaped: bool) -> str:
    """A key as JSON text: plainly, or with its first letter written as a \\u escape (the same key once decoded)."""
    if escaped and key:
        return '"\\u%04x' % ord(key[0]) + json.dumps(key[1:])[1:]
    return json.dumps(key)


@st.composite
def objects(draw, depth: int = 0) -> str:
    """A JSON object as text, its pairs drawn with keys that may repeat, separators with or without spaces."""
    pairs = []
    for _ in range(draw(st.integers(0, 4))):
        key = _encode_key(draw(KEYS), draw(st.booleans()))
        colon = draw(st.sampled_from([":", " :", ": ", "\t:", ":\n"]))
        if depth < 2 and draw(st.integers(0, 3)) == 0:
            value = draw(objects(depth + 1))
        elif depth < 2 and draw(st.integers(0, 4)) == 0:
            value = "[" + ", ".join(draw(st.lists(objects(depth + 1), max_size=2))) + "]"
        else:
            value = json.dumps(draw(SCALARS))
        pairs.append(f"{key}{colon}{value}")
    return "{" + draw(st.sampled_from([",", ", "])).join(pairs) + "}"


def _exact(raw: str) -> bool:
    try:
        json.loads(raw, object_pairs_hook=_no_duplicates)
    except _DuplicateKey:
        return True
    return False


@settings(max_examples=400, deadline=None)
@given(st.lists(objects(), min_size=1, max_size=20))
def test_the_screened_check_finds_exactly_the_lines_with_a_repeated_key(lines) -> None:
    frame = pl.DataFrame({"source_line": list(range(1, len(lines) + 1)), "raw": lines})
    found = set(strict_json_failures(frame)["source_line"].to_list())
    assert found == {i for i, raw in enumerate(lines, 1) if _exact(raw)}


def test_a_repeat_in_each_place_the_contract_knows_is_found_and_a_clean_line_is_not() -> None:
    clean = ('{"table_id": "BAC-01", "round_no": 7, "limits": {"min": 100, "max": 5000}, "recorded_result": '
             '{"winner": "banker"}, "wagers": [{"wager_id": "W1", "net": 5}, {"wager_id": "W2", "net": -5}], '
             '"actions": [{"seat": 1, "hand": 1}]}')
    repeats = [
        clean.replace('"round_no": 7', '"round_no": 7, "round_no" : 8'),
        clean.replace('"max": 5000', '"max": 5000, "min": null'),
        clean.replace('"winner": "banker"', '"winner": "banker", "w\\u0069nner": "player"'),
        clean.replace('"net": -5', '"net": -5,"net":5'),
        clean.replace('"hand": 1', '"hand": 1, "seat"\t:2'),
    ]
    frame = pl.DataFrame({"source_line": list(range(1, 7)), "raw": [clean, *repeats]})
    got = strict_json_failures(frame).sort("source_line")
    assert got["source_line"].to_list() == [2, 3, 4, 5, 6]
    assert got["detail"].to_list() == [f"key {k!r} appears twice in one object"
                                       for k in ("round_no", "min", "winner", "net", "seat")]


@settings(max_examples=500, deadline=None)
@given(objects())
def test_the_screen_clears_a_plain_line_exactly_when_no_key_repeats(raw) -> None:
    """Colons counted, not key tokens: a line without a backslash is cleared when, and only when, no object repeats
    a key (a colon in a key or a value, a value that looks like a key, spacing around the colon); never one with a
    repeat, and not one without (else every clean line would pay for the exact check)."""
    if "\\" in raw:
        return
    assert _surely_unique(raw) is not _exact(raw)


def test_a_line_nested_deeper_than_orjson_writes_is_judged_by_the_exact_check() -> None:
    """DuckDB reads a round line with a 300-deep value in a field the contract does not name; orjson reads it but
    refuses to write it back. The screen must hand it to the exact check, not fail the batch."""
    deep = "[" * 300 + "]" * 300
    clean = '{"round_no": 7, "extra": ' + deep + "}"
    repeated = '{"round_no": 7, "extra": ' + deep + ', "round_no": 8}'
    frame = pl.DataFrame({"source_line": [1, 2], "raw": [clean, repeated]})
    got = strict_json_failures(frame)
    assert got["source_line"].to_list() == [2]


def test_a_line_only_a_lenient_parser_reads_is_not_strict_json_and_its_twin_passes() -> None:
    """RFC 8259 has no trailing comma, NaN or Infinity (DuckDB's parser takes them): json_unparseable, with why."""
    lines = ['{"a": 1, "b": [1, 2],}', '{"a": [1, 2,]}', '{"a": NaN}', '{"a": Infinity}', '{"a": 1, "b": [1, 2]}',
             '{"a": "NaN,}"}']
    frame = pl.DataFrame({"source_line": list(range(1, len(lines) + 1)), "raw": lines})
    got = strict_json_failures(frame).sort("source_line")
    assert got["source_line"].to_list() == [1, 2, 3, 4]
    assert set(got["code"].to_list()) == {"json_unparseable"}
    assert got["detail"].to_list()[2:] == ["not strict JSON: NaN is not a JSON value",
                                           "not strict JSON: Infinity is not a JSON value"]
