"""rounds_jsonl.recorded_result_fields: the winner and the points read in one regex pass where a recorded result has
the common baccarat shape equal what the JSON-path reading gives on any text (the shape exactly, near misses, other
games' results, values of every JSON kind, escapes, repeated keys, text that is not an object)."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from pipelines.ingest.rounds_jsonl import recorded_by_path, recorded_result_fields

KEYS = st.sampled_from(["winner", "player_points", "banker_points", "dealer_points", "w\\u0069nner"])
VALUES = st.one_of(
    st.sampled_from(['"banker"', '"player"', '"tie"', '"b\\u0061nker"', '"Banker"', '""', "null", "true", "[1]",
                     '{"a":1}', "1.0", "1e2", '"7"', "-3", "07", "99999", "10"]),
    st.integers(-20, 20).map(str),
)


@st.composite
def results(draw) -> str:
    """A recorded result as text: most in or near the baccarat shape DuckDB writes, some anything."""
    kind = draw(st.integers(0, 3))
    if kind == 0:  # the shape exactly
        return (f'{{"winner":"{draw(st.sampled_from(["banker", "player", "tie"]))}",'
                f'"player_points":{draw(st.integers(0, 9))},"banker_points":{draw(st.integers(0, 9))}}}')
    if kind == 1:  # keys and values drawn, compact or spaced, keys possibly repeated or missing
        pairs = draw(st.lists(st.tuples(KEYS, VALUES), max_size=4))
        sep = draw(st.sampled_from([",", ", "]))
        return "{" + sep.join(f'"{k}":{v}' for k, v in pairs) + "}"
    if kind == 2:  # the shape with one character changed, added or dropped
        text = '{"winner":"banker","player_points":1,"banker_points":6}'
        i = draw(st.integers(0, len(text) - 1))
        c = draw(st.sampled_from(["", " ", "1", "0", '"', "}", "{", ",", ":", "x"]))
        return text[:i] + c + text[i + draw(st.integers(0, 1)):]
    return draw(st.one_of(st.just("[1,2]"), st.just('"banker"'), st.just("5"), st.text(max_size=20)))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.none(), results()), min_size=1, max_size=30))
def test_the_one_pass_reading_equals_the_json_path_reading(texts) -> None:
    rr = pl.Series("recorded_result", texts, dtype=pl.String)
    assert_frame_equal(recorded_result_fields(rr), recorded_by_path(rr))


def test_a_night_of_shapes_reads_each_value() -> None:
    texts = ['{"winner":"tie","player_points":4,"banker_points":4}',
             '{"dealer_cards":["Ah"],"dealer_points":11,"dealer_bust":false}',
             '{"winner":"player","player_points":"8","banker_points":1.0}', None, "[1]"]
    got = recorded_result_fields(pl.Series(texts, dtype=pl.String))
    assert got.rows() == [("tie", 4, 4), (None, None, None), ("player", 8, None), (None, None, None),
                          (None, None, None)]
