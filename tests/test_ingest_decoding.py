"""A round line's values as read: each JSON literal's kind (``schemas.rules.json_kind``) and a string's text
(``pipelines.ingest.rounds_jsonl.decoded``) equal an independent reading of the same literal with Python's ``json``.

Both are vectorised polars passes written for speed; here any JSON value hypothesis makes (escapes, quotes, unicode,
numbers with fractions and exponents, nested values) is read both ways.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest.rounds_jsonl import decoded
from schemas.rules import json_kind

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                      max_leaves=6)


def _kind(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}[type(value)]


@settings(max_examples=200, deadline=None)
@given(st.lists(values, min_size=1, max_size=20), st.booleans())
def test_kinds_and_string_texts_equal_pythons_reading(items, ensure_ascii) -> None:
    # DuckDB hands a JSON null back as SQL NULL, and writes a float as JSON text with a fraction or an exponent
    literals = [None if v is None else json.dumps(v, ensure_ascii=ensure_ascii) for v in items]
    frame = pl.DataFrame({"hand": literals, "bet": literals}, schema={"hand": pl.String, "bet": pl.String})
    out = decoded(frame, ["hand", "bet"])  # hand tells integers from other numbers, bet does not
    for v, text, hand_kind, bet_kind, bet in zip(items, literals, out["hand__json"], out["bet__json"], out["bet"]):
        want = _kind(v)
        if want == "number" or (want == "integer" and text is not None and not text.lstrip("-").isdigit()):
            want = "number"
        assert hand_kind == want, (text, hand_kind)
        assert bet_kind == (None if want is None else "number" if want == "integer" else want), (text, bet_kind)
        if want == "string":
            assert bet == v
        else:
            assert bet == text
    assert frame.select(json_kind(pl.col("hand"))).to_series().to_list() == out["hand__json"].to_list()
