"""The reconstruction's two shortcuts equal the plain forms they replace.

``reconstruct._per_round`` groups the device events by their run of equal (table, round) keys, an integer, when each
round's events come together; any frame where a round's events come in two runs takes the grouping by key. The
groups, their order and every aggregate must be those of ``group_by(["table_id", "round_no"], maintain_order=True)``.
``reconstruct._notes`` writes the note only on the rounds with something to say; it must equal ``_note()`` on every
round.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

from pipelines.audit.reconstruct import _note, _notes, _per_round

AGGS = (
    pl.col("device_id").first(),
    pl.col("device_id").unique(maintain_order=True).alias("_devices"),
    pl.col("card_code").alias("codes"),
    pl.col("card_code").filter(pl.col("event") == "card").alias("dealt"),
    pl.len().cast(pl.Int64).alias("n_events"),
)
REDUCTIONS = (
    ("_seq_lo", "min", "event_seq"),
    ("_seq_hi", "max", "event_seq"),
    ("_lost", "sum", "lost"),  # a null now and then: polars' own sum
    ("_last", "last", "lost"),
    ("_quarantined", "sum", "quarantined"),  # a whole decimal, as the load gives it
)


@st.composite
def events(draw) -> pl.DataFrame:
    """Device events in runs of (table, round); a key may come back in a later run (a round split in two)."""
    lost = draw(st.sampled_from([st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))]))
    keys = draw(st.lists(st.tuples(st.sampled_from(["T-1", "T-2", None]), st.integers(0, 4)), min_size=0, max_size=12))
    rows = []
    seq = 0
    for table, round_no in keys:
        for _ in range(draw(st.integers(1, 4))):
            seq += 1
            rows.append((table, round_no, draw(st.sampled_from(["D1", "D2"])), seq, draw(st.sampled_from(["card", "burn"])),
                         draw(st.one_of(st.none(), st.integers(0, 51))), draw(lost), draw(st.integers(0, 3))))
    return pl.DataFrame(rows, schema={"table_id": pl.String, "round_no": pl.Int64, "device_id": pl.String,
                                      "event_seq": pl.Int64, "event": pl.String, "card_code": pl.Int16, "lost": pl.Int64,
                                      "quarantined": pl.Int64}, orient="row").with_columns(
        pl.col("quarantined").cast(pl.Decimal(38, 0)))


@settings(max_examples=200, deadline=None)
@given(events())
def test_grouping_by_runs_equals_grouping_by_key(frame: pl.DataFrame) -> None:
    expected = frame.group_by(["table_id", "round_no"], maintain_order=True).agg(
        *AGGS, pl.col("event_seq").min().alias("_seq_lo"), pl.col("event_seq").max().alias("_seq_hi"),
        pl.col("lost").sum().alias("_lost"), pl.col("lost").last().alias("_last"),
        pl.col("quarantined").sum().alias("_quarantined"),
    )
    assert_frame_equal(_per_round(frame, *AGGS, reductions=REDUCTIONS), expected, check_column_order=False)


def test_a_round_split_in_two_runs_is_grouped_whole() -> None:
    """The near miss of the runs' shortcut: round 1's events come before and after round 2's."""
    frame = pl.DataFrame({
        "table_id": ["T"] * 5, "round_no": [1, 1, 2, 1, 2], "device_id": ["D"] * 5, "event_seq": [1, 2, 3, 4, 5],
        "event": ["card"] * 5, "card_code": pl.Series([3, 4, 5, 6, 7], dtype=pl.Int16),
    })
    out = _per_round(frame, *AGGS, reductions=REDUCTIONS[:2])
    assert out["round_no"].to_list() == [1, 2]
    assert out["codes"].to_list() == [[3, 4, 6], [5, 7]]
    assert out["_seq_hi"].to_list() == [4, 5]


@st.composite
def rounds(draw) -> pl.DataFrame:
    n = draw(st.integers(0, 30))
    flag = st.lists(st.one_of(st.booleans(), st.none()), min_size=n, max_size=n)
    some = lambda values: st.lists(st.one_of(st.none(), st.sampled_from(values)), min_size=n, max_size=n)  # noqa: E731
    lists = st.lists(st.one_of(st.none(), st.lists(st.sampled_from(["A", "B"]), max_size=2)), min_size=n, max_size=n)
    return pl.DataFrame({
        "table_id": draw(some(["T-1", "T-2"])), "round_no": draw(some([1, 2, 3])),
        "has_cards": draw(flag), "has_table_record": draw(flag), "device_id": draw(some(["D1"])),
        "_shoes": draw(lists), "_devices": draw(lists), "_table_shoe": draw(some(["S1", "S2"])),
        "device_shoe_id": draw(some(["S1", "S2"])), "lost_events": draw(some([0, 0, 0, 2])),
        "_seq_lo": draw(some([1])), "_seq_hi": draw(some([9])), "_quarantined": draw(some([0, 1])),
        "decks": draw(some([8])),
    }, schema_overrides={"_shoes": pl.List(pl.String), "_devices": pl.List(pl.String), "round_no": pl.Int64,
                         "lost_events": pl.Int64, "_seq_lo": pl.Int64, "_seq_hi": pl.Int64, "_quarantined": pl.Int64,
                         "decks": pl.Int64, "has_cards": pl.Boolean, "has_table_record": pl.Boolean})


@settings(max_examples=200, deadline=None)
@given(rounds())
def test_notes_on_the_rounds_that_say_something_equal_the_note_of_every_round(frame: pl.DataFrame) -> None:
    assert_series_equal(_notes(frame), frame.select(_note().alias("note")).to_series())


def test_a_round_with_nothing_to_say_has_no_note() -> None:
    frame = pl.DataFrame({
        "table_id": ["T", "T"], "round_no": [1, 2], "has_cards": [True, False], "has_table_record": [True, True],
        "device_id": ["D", None], "_shoes": [["S"], None], "_devices": [["D"], None], "_table_shoe": ["S", "S"],
        "device_shoe_id": ["S", None], "lost_events": [0, None], "_seq_lo": [1, None], "_seq_hi": [4, None],
        "_quarantined": [0, None], "decks": [8, None],
    })
    notes = _notes(pl.concat([frame] * 4))  # most rounds say nothing: the shortcut's path
    assert notes.to_list() == [None, "the device recorded no cards for round 2 of T"] * 4
