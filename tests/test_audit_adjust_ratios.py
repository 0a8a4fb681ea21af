"""The Hold'em ratio check's Ante of each seat (HTB-4.11.2-4.11.4) read over arrays equals the grouping it replaces."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import pipelines.audit.adjust as adjust

WAGER = st.tuples(
    st.sampled_from(["T-1", "T-2", "T-10"]),  # table
    st.integers(0, 3),  # round
    st.integers(0, 3) | st.none(),  # seat
    st.sampled_from(["holdem_bonus", "holdem_bonus", "baccarat"]),
    st.sampled_from(["ante", "ante", "flop", "turn", "river", "bonus"]),
    st.integers(0, 5_000) | st.none(),  # amount
)


def _frame(rows: list[tuple], in_load_order: bool) -> pl.DataFrame:
    df = pl.DataFrame(
        rows, schema={"table_id": pl.String, "round_no": pl.Int64, "seat": pl.Int16, "game": pl.String, "bet": pl.String,
                      "amount": pl.Int64}, orient="row",
    )
    # the wager order numbers each round's wagers as the rows list them
    df = df.with_columns(pl.int_range(pl.len()).over("table_id", "round_no").cast(pl.Int32).alias("wager_order"))
    df = df.with_columns(pl.col("game").first().over("table_id").alias("game"))  # a table plays one game
    df = df.with_columns(pl.lit("HTB").alias("clause_prefix"), pl.lit(0, dtype=pl.UInt32).alias(adjust._PREFIX))
    return df.sort("table_id", "round_no", "wager_order") if in_load_order else df


def _grouped(w: pl.DataFrame) -> pl.DataFrame:
    """The ratio columns by the grouping and join (the array path switched off)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(adjust, "_first_antes", lambda w: None)
        return adjust._holdem_ratios(w)


@settings(max_examples=200, deadline=None)
@given(st.lists(WAGER, max_size=30), st.booleans())
def test_ratio_check_over_arrays_is_the_grouping(rows, in_load_order):
    """Two Antes on a seat (the first by wager order counts), a seat with none, a null seat or amount, rounds of
    other games, frames out of the load's order (the grouping runs): the same ratio columns."""
    w = _frame(rows, in_load_order)
    assert_frame_equal(adjust._holdem_ratios(w), _grouped(w))
    if in_load_order and w.height > 1:
        assert adjust._first_antes(w) is not None  # the array path ran


def test_the_first_ante_by_wager_order_sets_the_flop_HTB_4_11_2():
    """A seat's second Ante (refused by HTB-4.7.2) does not move the Flop's target: twice the first Ante."""
    w = _frame([("T-1", 1, 2, "holdem_bonus", "ante", 100), ("T-1", 1, 2, "holdem_bonus", "ante", 300),
                ("T-1", 1, 2, "holdem_bonus", "flop", 200), ("T-1", 1, 3, "holdem_bonus", "flop", 500)], True)
    out = adjust._holdem_ratios(w)
    assert out["_ratio_target"].to_list() == [None, None, 200, None]
    assert out["_ratio_off"].to_list() == [False, False, False, False]
    w2 = w.with_columns(pl.when(pl.col("bet") == "flop").then(250).otherwise(pl.col("amount")).alias("amount"))
    assert adjust._holdem_ratios(w2)["_ratio_off"].to_list() == [False, False, True, False]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*adjust._PREFIXES, "XYZ", None]), max_size=60), st.integers(1, 8))
def test_rule_text_rows_by_runs_are_the_expression(prefixes, repeat):
    """Each wager's rule-text row read once per run of equal prefixes (a round's wagers share one) equals the
    expression's, a null or unknown prefix included (the row for no known text)."""
    s = pl.Series("clause_prefix", [p for p in prefixes for _ in range(repeat)], dtype=pl.String)
    expected = s.to_frame().select(adjust._prefix_row()).to_series()
    got = adjust._prefix_rows(s)
    assert got.name == expected.name and got.dtype == expected.dtype
    assert got.to_list() == expected.to_list()
