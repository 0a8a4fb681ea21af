"""The packs' fast JSON writes exactly what ``json.dumps(indent=2, ensure_ascii=False, default=str)`` writes.

A pack is sealed by the SHA-256 of its bytes, and the same round written twice must give the same seal, so the
encoder behind ``round.json`` and ``manifest.json`` may not change a byte (pipelines.evidence.exact_json)."""

from __future__ import annotations

import datetime as dt
import json
import math

from hypothesis import given, settings, strategies as st

from pipelines.evidence import exact_json

# text with control characters, quotes, backslashes, non-ASCII, U+2028, astral characters and lone surrogates
TEXT = st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=40) | st.sampled_from(
    ["", "\x00\x1f\x7f", '"\\/', "\u2028\u2029", "é漢🂡", "\ud800", "a\nb\tc\r"])
LEAF = (TEXT | st.integers(min_value=-(2**70), max_value=2**70) | st.booleans() | st.none()
        | st.floats(allow_nan=True, allow_infinity=True) | st.dates() | st.datetimes())
KEY = TEXT | st.integers(-5, 5)
DOC = st.recursive(LEAF, lambda kids: st.lists(kids, max_size=5) | st.dictionaries(TEXT, kids, max_size=5)
                   | st.tuples(kids, kids) | st.dictionaries(KEY, kids, max_size=3), max_leaves=40)


def _standard(data, sort_keys):
    try:
        return json.dumps(data, indent=2, sort_keys=sort_keys, ensure_ascii=False, default=str)
    except TypeError as exc:  # keys of mixed types cannot be sorted: both must refuse
        return exc.__class__


def _fast(data, sort_keys):
    try:
        return exact_json.dumps(data, sort_keys=sort_keys)
    except TypeError as exc:
        return exc.__class__


@settings(max_examples=400, deadline=None)
@given(DOC, st.booleans())
def test_the_fast_encoder_writes_the_standard_librarys_bytes(data, sort_keys):
    assert _fast(data, sort_keys) == _standard(data, sort_keys)


def test_values_orjson_would_write_differently_take_the_standard_path():
    for value in (1e16, 1e-7, math.nan, -math.inf, 2**64, -(2**63) - 1, {1: "a"}, dt.date(2026, 11, 24), ("a", 1)):
        doc = {"v": value, "text": "é\n"}
        assert exact_json.dumps(doc, sort_keys=True) == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False,
                                                                   default=str)
    assert not exact_json._plain({"v": 1.5}) and exact_json._plain({"v": [1, "a", None, True, {"k": 2**64 - 1}]})


def test_a_packs_document_is_written_by_orjson_and_unchanged(audited_sample):
    """A real pack's round.json is plain (so the fast path is the one taken) and reads back to the same bytes."""
    pack = next((audited_sample / "out" / "evidence").glob("*/*/round.json"))
    text = pack.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert exact_json._plain(doc)
    assert exact_json.dumps(doc, sort_keys=True) + "\n" == text
