"""Speed paths that must give what the plain code gives: the result check's JSON reader, and the packs' audited
settlements joined once a group instead of once a round.

- ``detectors.results._read`` reads the recorded results and the engine's outcomes through orjson: with the standard
  library's reading wherever a float is held, it must return what ``json.loads`` returns (the same values, the same
  key order, duplicate keys resolved alike) and refuse what it refuses, since a finding's text lists the keys in the
  recorded order. ``detect_result_mismatch``, which checks only the compared values for a float and skips the rounds
  whose compared values are equal, must give the findings of the plain comparison over ``json.loads``.
- ``evidence.batch._as_audited_all`` must give, round by round, the rows ``_as_audited`` gives (the packs are sealed
  by their bytes)."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

from pipelines.audit.detectors.results import _has_float, _read, detect_result_mismatch
from pipelines.evidence.batch import AUDITED_COLUMNS, _as_audited, _as_audited_all, _by_round

TEXT = st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=12) | st.sampled_from(
    ["", "??", "Qd", "é漢🂡", "\ud800", "a\nb"])
LEAF = (TEXT | st.integers(min_value=-(2**70), max_value=2**70) | st.booleans() | st.none()
        | st.floats(allow_nan=True, allow_infinity=True))
DOC = st.recursive(LEAF, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TEXT, kids, max_size=4), max_leaves=20)


def _outcome(text):
    try:
        return ("ok", json.dumps(json.loads(text)), list(json.loads(text)) if isinstance(json.loads(text), dict) else None)
    except (TypeError, ValueError) as exc:
        return ("refused", type(exc).__name__, None)


def _loads(text):
    """The detector's reading of a whole document: :func:`_read`, the standard library's where a float is held."""
    value = _read(text)
    return json.loads(text) if _has_float(value) else value


def _fast(text):
    try:
        value = _loads(text)
        return ("ok", json.dumps(value), list(value) if isinstance(value, dict) else None)
    except (TypeError, ValueError) as exc:
        return ("refused", type(exc).__name__, None)


@settings(max_examples=300, deadline=None)
@given(DOC, st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]), st.booleans())
def test_the_result_readers_json_equals_the_standard_library(doc, separators, sort_keys):
    text = json.dumps(doc, separators=separators, sort_keys=sort_keys, ensure_ascii=False)
    assert _fast(text) == _outcome(text)


@pytest.mark.parametrize("text", [
    '{"dealer_points": 17, "dealer_points": 18, "a": 1}',  # a repeated key: the last value, the first place
    '{"x": NaN}', '{"x": Infinity}', '{"x": 123456789012345678901234567890}', '{"x": 1e400}', '"\\ud800"',
    '{"x": 1.0000000000000002}', '{"x": 0.1}', '{"x": -0}', "[1, 2", "", "nul", None, 12,
])
def test_hostile_texts_read_alike(text):
    assert _fast(text) == _outcome(text)
    if isinstance(text, str) and text.startswith('{"x": 1e4'):
        assert math.isinf(_loads(text)["x"])


ROUNDS = st.lists(st.tuples(st.sampled_from(["T1", "T2"]), st.integers(1, 4), st.integers(1, 4)), max_size=14)


@settings(max_examples=200, deadline=None)
@given(ROUNDS, st.lists(st.tuples(st.integers(0, 13), st.integers(-500, 500), st.booleans()), max_size=20),
       st.sets(st.tuples(st.sampled_from(["T1", "T2"]), st.integers(1, 4)), max_size=6))
def test_the_audited_settlements_joined_once_equal_round_by_round(wagers, recorded, empty_rounds):
    """Random settled wagers of several rounds and recorded rows for some of them (with unknown wager ids, repeats and
    rounds that have none): each round's rows from the group join are the per-round join's rows."""
    settled = pl.DataFrame(
        {"table_id": [t for t, _, _ in wagers], "round_no": [r for _, r, _ in wagers],
         "wager_order": list(range(len(wagers))), "wager_id": [f"w{w}" for _, _, w in wagers],
         **{c: [None] * len(wagers) for c in AUDITED_COLUMNS}},
        schema={"table_id": pl.String, "round_no": pl.Int64, "wager_order": pl.Int64, "wager_id": pl.String,
                **{c: (pl.Int64 if c in ("settled_amount", "cards_net", "recorded_net", "expected_net", "difference")
                       else pl.String) for c in AUDITED_COLUMNS}},
    ).with_columns(pl.col("settled_amount").fill_null(7), pl.col("detail").fill_null("this pass"))
    rows = []
    for i, (n, amount, flag) in enumerate(recorded):
        if not wagers:
            break
        t, r, w = wagers[n % len(wagers)]
        if (t, r) in empty_rounds:
            continue
        rows.append({"table_id": t, "round_no": r, "wager_id": f"w{w if flag else w + 10}",
                     **{c: (amount + i if c in ("settled_amount", "cards_net", "recorded_net", "expected_net", "difference")
                            else f"{c} {i}") for c in AUDITED_COLUMNS}})
    schema = {"table_id": pl.String, "round_no": pl.Int32, "wager_id": pl.String,
              **{c: (pl.Int32 if c in ("settled_amount", "cards_net", "recorded_net", "expected_net", "difference")
                     else pl.String) for c in AUDITED_COLUMNS}}
    rec = pl.DataFrame(rows, schema=schema)
    together = _by_round(_as_audited_all(settled, rec))
    for key, frame in _by_round(settled).items():
        of_round = rec.filter((pl.col("table_id") == key[0]) & (pl.col("round_no") == key[1]))
        one = _as_audited(frame, of_round if of_round.height else None)
        assert together[key].equals(one), key


def test_the_pages_environment_renders_what_jinjas_own_renders(audited_sample, monkeypatch):
    """``render._PageEnvironment`` (a dict's item before its attribute) and the remembered step filter give the page
    plain Jinja2 and the plain filter give, byte for byte, for every pack of the audited sample night (damaged rounds
    included), also with the clause texts of a fake rule document."""
    import jinja2

    from pipelines.evidence import render

    packs = sorted((audited_sample / "out" / "evidence").glob("*/*/round.json"))
    assert len(packs) > 20

    def texts(clause_id):
        return f"the text of {clause_id} <b>&</b>" if clause_id.endswith("1") else None

    for clause_text in (render.no_text, texts):
        documents = [json.loads(p.read_text(encoding="utf-8")) for p in packs]
        pages = [render.render_html(d, clause_text) for d in documents]
        with monkeypatch.context() as m:
            m.setattr(render, "_PageEnvironment", jinja2.Environment)
            m.setattr(render, "_step_in_major_units", render.step_in_major_units)
            plain = render.environment.__wrapped__(clause_text)
            assert type(plain) is jinja2.Environment
            m.setattr(render, "environment", lambda _c, plain=plain: plain)
            assert [render.render_html(d, clause_text) for d in documents] == pages
        assert type(render.environment(clause_text)) is render._PageEnvironment


def _plain_result_mismatch(rounds: pl.DataFrame) -> list[tuple]:
    """The result check as it read before its fast path: every document through ``json.loads``, every stated key
    compared (the reference for :func:`detect_result_mismatch`)."""
    from pipelines.audit.detectors.results import _COLUMN_PAIRS, _describe, _norm, _unknown

    found = []
    for row in rounds.iter_rows(named=True):
        if row["outcome"] is None or row["status"] == "void" or row["rules_void"]:
            continue
        outcome = json.loads(row["outcome"])
        if row["out_winner"] is not None:
            recorded = {k: row[rec] for rec, _, k in _COLUMN_PAIRS if row[rec] is not None}
            if not any(row[rec] is not None and row[out] is not None and str(row[rec]) != str(row[out])
                       for rec, out, _ in _COLUMN_PAIRS):
                continue
        else:
            if row["recorded_result"] is None:
                continue
            try:
                recorded = json.loads(row["recorded_result"])
            except (TypeError, ValueError):
                continue
            if not isinstance(recorded, dict):
                continue
        common = [k for k in recorded if k in outcome and recorded[k] is not None and outcome[k] is not None
                  and not _unknown(outcome[k])]
        if [k for k in common if _norm(recorded[k]) != _norm(outcome[k])]:
            found.append((row["round_no"], f"the table announced {_describe({k: recorded[k] for k in common})}; "
                                           f"the cards give {_describe({k: outcome[k] for k in common})}"))
    return found


KEYS = st.sampled_from(["dealer_points", "dealer_cards", "community", "dealer_hand", "seats", "x"])
# text a frame can hold (a lone surrogate cannot be a polars string; the reader's own test above has them)
FRAME_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8) | st.sampled_from(["", "??", "Qd", "é漢🂡"])
VALUE = st.recursive(FRAME_TEXT | st.integers(min_value=-(2**70), max_value=2**70) | st.booleans() | st.none()
                     | st.floats(allow_nan=True, allow_infinity=True),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(FRAME_TEXT, kids, max_size=3), max_leaves=6)


@st.composite
def _result_pair(draw):
    """An engine outcome and a table's announced result: mostly the same values (some re-cased, some unread), some
    differing; sometimes the announced text is no object, or no JSON at all."""
    outcome = draw(st.dictionaries(KEYS, VALUE | st.sampled_from(["Qd", "??", ["Ah", "??"], 17]), max_size=5))
    recorded = {}
    for k in draw(st.lists(KEYS, max_size=5, unique=True)):
        how = draw(st.sampled_from(["same", "same", "same", "cased", "other"]))
        if how == "same" and k in outcome:
            recorded[k] = outcome[k]
        elif how == "cased" and isinstance(outcome.get(k), str):
            recorded[k] = f" {outcome[k].upper()} "
        else:
            recorded[k] = draw(VALUE)
    seps = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    text = json.dumps(recorded, separators=seps, ensure_ascii=draw(st.booleans()))
    text = draw(st.sampled_from([text, text, text, "[1, 2]", "{broken", '{"x": 123456789012345678901234567890}', None]))
    return json.dumps(outcome), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_result_pair(), st.sampled_from(["settled", "settled", "void"]), st.booleans(),
                          st.sampled_from([None, None, ("Player", 6, 7), ("Banker", 6, 7)]),
                          st.sampled_from([None, ("Player", 6, 7), ("Banker", 5, 7)])), max_size=12))
def test_the_result_check_equals_the_plain_comparison(rows):
    """Random engine outcomes and announced results (floats, integers beyond 64 bits, repeated values, unread cards,
    texts that are no object): the findings of the fast path are those of every key compared over ``json.loads``."""
    n = len(rows)
    out = [r[3] for r in rows]
    rec = [r[4] if r[3] is not None else None for r in rows]
    rounds = pl.DataFrame({
        "gaming_day": [None] * n, "table_id": ["T1"] * n, "round_no": list(range(n)), "dealer_id": ["D"] * n,
        "game": ["g"] * n, "ruleset": ["r"] * n, "ruleset_version": ["1"] * n, "currency": ["EUR"] * n,
        "source_file": ["f"] * n, "source_line": list(range(n)), "clause_prefix": [None] * n,
        "status": [r[1] for r in rows], "rules_void": [r[2] and i % 3 == 0 for i, r in enumerate(rows)],
        "outcome": [r[0][0] for r in rows], "recorded_result": [r[0][1] for r in rows],
        "out_winner": [o[0] if o else None for o in out], "out_player_points": [o[1] if o else None for o in out],
        "out_banker_points": [o[2] if o else None for o in out],
        "recorded_winner": [x[0] if x else None for x in rec], "recorded_player_points": [x[1] if x else None for x in rec],
        "recorded_banker_points": [x[2] if x else None for x in rec],
    }, schema_overrides={"gaming_day": pl.Date, "clause_prefix": pl.String, "out_winner": pl.String,
                         "recorded_winner": pl.String, "out_player_points": pl.Int64, "out_banker_points": pl.Int64,
                         "recorded_player_points": pl.Int64, "recorded_banker_points": pl.Int64,
                         "recorded_result": pl.String})
    found = detect_result_mismatch(rounds)
    tail = " (: the cards stand)"  # no clause prefix: no clause named
    got = [(r, d.removesuffix(tail)) for r, d in (found.select("round_no", "detail").iter_rows() if found.height else [])]
    assert all(d.endswith(tail) for d in (found["detail"] if found.height else []))
    want = _plain_result_mismatch(rounds)
    assert sorted(got) == sorted(want)
