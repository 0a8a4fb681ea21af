"""A chunk's ids and labels coded as sorted Enums while it is summarised (``pipelines/stats/entity_codes.py``) give the
summaries the strings gave, and the hold's packed sort (``hold_sums.lex_order``) is numpy's lexsort.

The summaries are compared with the same functions run on the strings (``coded`` replaced by the identity): every
count, id, list, order-dependent "first" value and cumulant equal, a float summed over wagers to 1e-12 relative
(polars adds a group's rows in no fixed order, so two runs on the strings differ in those last bits too).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from pipelines.stats import summaries
from pipelines.stats.config import StatsParams
from pipelines.stats.entity_codes import coded, decoded, sorted_enum
from pipelines.stats.hold_sums import lex_order
from pipelines.stats.load import StatsInputs
from pipelines.stats.summaries import summarise_chunk
from pipelines.stats.synthetic import Floor, nights

DAY = dt.date(2026, 11, 1)
PARAMS = StatsParams(pair_count_min_bets=5)


@pytest.fixture(scope="module")
def inputs() -> StatsInputs:
    floor = Floor(baccarat_tables=4, baccarat_rounds=120, blackjack_tables=2, blackjack_rounds=80, players=30,
                  counter_units=8, counter_hands=40, luck_multiple=5, luck_bets=30, colluder=True, collusion_rate=0.05,
                  holdem_tables=2, holdem_rounds=40, holdem_luck_multiple=5, holdem_luck_bets=20, blackjack_side=True)
    w, c, e = nights(floor, DAY, 2, seed=7)
    # ids whose sorted order is not the order they first appear in, and a wager with no player and no dealer
    w = w.with_columns(pl.when(pl.col("table_id") == "BAC-01").then(pl.lit("ZZ-BAC")).otherwise("table_id").alias("table_id"))
    c = c.with_columns(pl.when(pl.col("table_id") == "BAC-01").then(pl.lit("ZZ-BAC")).otherwise("table_id").alias("table_id"))
    w = w.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise("player_id").alias("player_id"),
                       pl.when(pl.int_range(pl.len()) == 5).then(None).otherwise("dealer_id").alias("dealer_id"))
    # jackpot wagers beside the Bonus wagers of the Hold'em tables (a hit on every 40th)
    bonus = w.filter((pl.col("game") == "holdem_bonus") & (pl.col("bet") == "bonus")).with_row_index("i")
    jackpot = bonus.with_columns(
        pl.lit("progressive").alias("bet"), pl.lit("guide-holdem-bonus-progressive").alias("ruleset"),
        pl.lit("guide").alias("ruleset_version"), pl.lit(100, dtype=pl.Int64).alias("amount"),
        pl.when(pl.col("i") % 40 == 0).then(pl.lit(5000)).otherwise(pl.lit(-100)).cast(pl.Int64).alias("cards_net"),
    ).drop("i").with_columns(pl.col("cards_net").alias("expected_net"), pl.col("cards_net").alias("recorded_net"))
    w = pl.concat([w, jackpot.select(w.columns)], how="vertical_relaxed")
    return StatsInputs(w, e, c, DAY, DAY + dt.timedelta(days=1))


def _same(a: pl.DataFrame, b: pl.DataFrame, name: str) -> None:
    assert a.schema == b.schema, name
    keys = [c for c, t in a.schema.items() if not t.is_float() and not isinstance(t, pl.List)]
    floats = [c for c, t in a.schema.items() if t.is_float()]
    a, b = a.sort(keys + floats, nulls_last=True), b.sort(keys + floats, nulls_last=True)
    assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12, abs_tol=0.0), name


def test_the_summaries_of_coded_ids_are_those_of_the_strings(inputs, monkeypatch):
    with_codes = summarise_chunk(inputs, PARAMS)
    monkeypatch.setattr(summaries, "coded", lambda i: i)
    with_strings = summarise_chunk(inputs, PARAMS)
    assert set(with_codes.frames) == set(with_strings.frames)
    for name, df in with_codes.frames.items():
        assert df.height, name  # every summary has rows on this floor: the comparison is not of empty frames
        assert not any(isinstance(t, pl.Enum) for t in df.schema.values()), name
        _same(df, with_strings.frames[name], name)
    assert with_codes.hold.keys() == with_strings.hold.keys()
    for day, h in with_codes.hold.items():
        s = with_strings.hold[day]
        assert np.array_equal(h.x, s.x) and np.array_equal(h.p, s.p)
        assert_frame_equal(h.pays, s.pays)
        for g, r in zip(h.groupings, s.groupings, strict=True):
            # entities are numbered by key, level and currency: the same numbers, rows and order as the strings'
            assert g.grouping == r.grouping
            assert_frame_equal(g.summary, r.summary, check_exact=False, rel_tol=1e-12, abs_tol=0.0)
            assert_frame_equal(g.rows, r.rows)


def test_a_chunk_is_coded_once_for_all_its_frames(inputs):
    c = coded(inputs)
    ids = c.wagers.schema["table_id"]
    assert isinstance(ids, pl.Enum) and list(ids.categories) == sorted(ids.categories.to_list())
    for df in (c.wagers, c.cards, c.dealer_errors):
        assert all(df.schema[col] == ids for col in ("table_id", "player_id", "dealer_id", "shoe_id") if col in df.columns)
    assert isinstance(c.wagers.schema["bet"], pl.Enum) and "all" in c.wagers.schema["bet"].categories.to_list()
    assert_frame_equal(decoded(c.wagers), inputs.wagers)
    assert_frame_equal(decoded(c.cards), inputs.cards)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet="abAB-_09é", max_size=4)), min_size=1, max_size=40))
def test_a_sorted_enum_orders_groups_and_ranks_as_its_strings(values):
    df = pl.DataFrame({"k": pl.Series(values, dtype=pl.String), "i": list(range(len(values)))})
    e = df.with_columns(pl.col("k").cast(sorted_enum([df], ("k",))))

    def views(f: pl.DataFrame) -> list[pl.DataFrame]:
        return [f.sort("k", "i"), f.select(pl.col("k").rank("dense").alias("r"), "i"),
                f.group_by("k", maintain_order=True).agg(pl.col("i").first()),
                f.select(pl.col("k").min().alias("lo"), pl.col("k").max().alias("hi")),
                f.select(pl.col("k").unique().sort().implode())]

    for a, b in zip(views(e), views(df), strict=True):
        assert_frame_equal(decoded(a), b)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 400), st.lists(st.integers(1, 62), min_size=1, max_size=5), st.integers(0, 2**32 - 1),
       st.sampled_from(["int", "whole float", "float", "negative"]))
def test_the_packed_sort_is_numpys_lexsort(n, widths, seed, kind):
    rng = np.random.default_rng(seed)
    keys = [rng.integers(0, 2 ** rng.integers(1, w + 1), n, dtype=np.int64) for w in widths]
    if kind == "whole float":
        keys[-1] = keys[-1].astype(np.float64)
    elif kind == "float" and n:
        keys[-1] = keys[-1] + rng.random(n)
    elif kind == "negative" and n:
        keys[0] = keys[0] - 2
    assert np.array_equal(lex_order(*keys), np.lexsort(keys[::-1]))
