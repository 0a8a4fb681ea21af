"""The far entities' hold rows of a window: equal outcome vectors numbered once, equal rows merged with their counts
added (``windows.vector_ids``, ``windows.FarRows``, ``windows._money_sums``), whichever reader they came from."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.stats.windows import FarRows, _money_sums, vector_ids


def _rows_as_set(ms) -> dict[tuple, float]:
    """A MoneySums as {(entity, stake, outcome values, probabilities): count} (rows in any order)."""
    out: dict[tuple, float] = {}
    for e, a, c, x, p in zip(ms.ent.tolist(), ms.a.tolist(), ms.c.tolist(), ms.x.tolist(), ms.p.tolist()):
        key = (e, a, tuple(x), tuple(p))
        out[key] = out.get(key, 0.0) + c
    return out


def test_a_vector_and_its_negation_get_two_numbers_and_equal_vectors_one():
    """Outcome vectors that differ only in the sign of an even number of entries (a stake of 200 won or lost on twelve
    outcomes) are different vectors; -0.0 is 0.0; the first index names each number's first row."""
    lost = [-1000.0] * 4 + [0.0] * 4 + [200.0] * 12
    won = [-1000.0] * 4 + [-0.0] * 4 + [-200.0] * 12
    m = np.array([lost, won, lost, [-1000.0] * 4 + [0.0] * 4 + [-200.0] * 12, won])
    first, ids = vector_ids(m)
    assert ids[0] == ids[2] and ids[1] == ids[3] == ids[4] and ids[0] != ids[1]
    assert sorted(first.tolist()) == [0, 1]
    assert np.array_equal(m[first[ids]] + 0.0, m + 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 200.0, -200.0, 0.95, 11.0]), min_size=3, max_size=3),
                min_size=1, max_size=40))
def test_vector_ids_are_equal_exactly_for_equal_rows(rows):
    m = np.array(rows)
    first, ids = vector_ids(m)
    for i in range(len(m)):
        for j in range(len(m)):
            assert (ids[i] == ids[j]) == bool(np.all(m[i] == m[j]))
    assert np.all(m[first[ids]] == m)


def _frame(rows: list[tuple]) -> pl.DataFrame:
    """Stored-like hold rows: (day, key, stake, count, x, p) of the dealer grouping in USD on all bets."""
    return pl.DataFrame({
        "gaming_day": [r[0] for r in rows], "grouping": ["dealer_id"] * len(rows), "key": [r[1] for r in rows],
        "currency": ["USD"] * len(rows), "level": ["all"] * len(rows), "a": [float(r[2]) for r in rows],
        "c": [r[3] for r in rows], "x": [list(r[4]) for r in rows], "p": [list(r[5]) for r in rows]},
        schema_overrides={"x": pl.List(pl.Float64), "p": pl.List(pl.Float64)})


def test_the_same_draw_on_several_days_is_one_row_whichever_reader_gave_it():
    """A dealer's round with the same stakes on three days (read as keyed frames, or numbered with each stored vector
    kept once) is one row of count 3; another stake, another vector or another dealer stays apart."""
    d1, d2, d3 = dt.date(2026, 11, 1), dt.date(2026, 11, 2), dt.date(2026, 11, 3)
    p = (0.5, 0.25, 0.25)
    x1, x2 = (-100.0, 95.0, 0.0), (100.0, -95.0, -0.0)
    rows = [(d1, "D1", 1.0, 1, x1, p), (d2, "D1", 1.0, 1, x1, p), (d3, "D1", 1.0, 1, x1, p),
            (d1, "D1", 1.0, 2, x2, p), (d2, "D1", 2.0, 1, x1, p), (d1, "D2", 1.0, 1, x1, p), (d3, "D2", 1.0, 4, x1, p)]
    wanted = pl.DataFrame({"grouping": ["dealer_id"] * 2, "key": ["D1", "D2"], "currency": ["USD"] * 2,
                           "level": ["all"] * 2, "ent": [0, 1]})
    from_frame = _money_sums(_frame(rows), wanted, 2)
    expected = {(0, 1.0, x1, p): 3.0, (0, 1.0, (100.0, -95.0, 0.0), p): 2.0, (0, 2.0, x1, p): 1.0, (1, 1.0, x1, p): 5.0}
    assert _rows_as_set(from_frame) == expected
    # numbered: the first two days' rows in memory (one vector per row), the third day's as a reader of stored rows
    # gives them (each vector once, named by its index)
    memory = FarRows.of_frame(_frame(rows[:2] + rows[3:6]).join(wanted, on=["grouping", "key", "currency", "level"]))
    stored = FarRows(np.array([0, 1]), np.array([1.0, 1.0]), np.array([1.0, 4.0]), np.array([0, 0]), np.array([0, 0]),
                     np.array([x1]), np.array([p]))
    assert _rows_as_set(_money_sums(FarRows.concat([memory, stored]), wanted, 2)) == expected
    assert len(from_frame.ent) == 4


def test_vectors_of_different_widths_are_padded_with_atoms_of_probability_zero():
    narrow = FarRows(np.array([0]), np.array([1.0]), np.array([1.0]), np.array([0]), np.array([0]),
                     np.array([[-1.0, 1.0]]), np.array([[0.5, 0.5]]))
    wide = FarRows(np.array([0]), np.array([1.0]), np.array([2.0]), np.array([0]), np.array([0]),
                   np.array([[-1.0, 1.0, 0.0]]), np.array([[0.5, 0.5, 0.0]]))
    ms = _money_sums(FarRows.concat([narrow, wide]), pl.DataFrame(), 1)
    assert ms.x.tolist() == [[-1.0, 1.0, 0.0]] and ms.p.tolist() == [[0.5, 0.5, 0.0]] and ms.c.tolist() == [3.0]


def test_tonights_far_rows_as_numbered_rows_are_the_frame_readers_rows_to_the_bit():
    """``summaries.far_rows_reader`` (each day's vectors gathered from its matrix by id) gives the rows the frame reader
    gives (``hold_rows_reader``, every row with its vectors as lists, joined to the far entities' numbers): the same
    entities, stakes, counts and vectors in the same order, so the same ``MoneySums`` bit for bit; over two days of a
    synthetic floor, for a window of one day and of both, and for no far entity at all."""
    from pipelines.stats.config import StatsParams
    from pipelines.stats.load import StatsInputs
    from pipelines.stats.summaries import HOLD_KEYS, far_rows_reader, hold_rows_reader, summarise
    from pipelines.stats.synthetic import Floor, nights

    first = dt.date(2026, 11, 1)
    floor = Floor(baccarat_tables=3, baccarat_rounds=120, blackjack_tables=0, players=20, luck_multiple=5, luck_bets=20)
    w, c, e = nights(floor, first, 2, seed=11)
    s = summarise(StatsInputs(w, e, c, first, first + dt.timedelta(days=1)), StatsParams())
    ents = s.hold_entities.select(*HOLD_KEYS).unique(maintain_order=True)
    by_frame, by_number = hold_rows_reader(s), far_rows_reader(s)
    for last in (first, first + dt.timedelta(days=1)):
        for far in (ents.filter(pl.int_range(pl.len()) % 3 == 0), ents.head(0)):
            far = far.with_row_index("ent").with_columns(pl.col("ent").cast(pl.Int64))
            frame = by_frame(first, last, far)
            if frame.height:
                frame = frame.join(far, on=list(HOLD_KEYS), how="inner", maintain_order="left")
            old = _money_sums(FarRows.of_frame(frame.select("ent", "a", "c", "x", "p") if frame.height else frame),
                              far, far.height)
            new = _money_sums(by_number(first, last, far), far, far.height)
            assert len(new.ent) == len(old.ent) and (len(new.ent) > 0) == (far.height > 0)
            for name in ("ent", "a", "c", "x", "p"):
                assert np.array_equal(getattr(new, name), getattr(old, name)), name
