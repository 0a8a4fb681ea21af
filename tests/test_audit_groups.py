"""How the flow deals the night's partitions into groups (pipelines.audit.load.contiguous_groups).

The groups must be runs of the partitions in key order (settlements.parquet is their staged files end to end,
with no sort), cover every partition once, number at most what was asked, and carry about equal work, so
that the workers finish together."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.audit.load import contiguous_groups


def _keys(works: list[int]) -> pl.DataFrame:
    day = dt.date(2026, 11, 1)
    return pl.DataFrame({
        "gaming_day": [day + dt.timedelta(days=i // 50) for i in range(len(works))],
        "table_id": [f"T-{i % 50:03d}" for i in range(len(works))],
        "rounds": works,
        "work": works,
    })


@settings(max_examples=200, deadline=None)
@given(works=st.lists(st.integers(min_value=0, max_value=5000), min_size=0, max_size=120),
       n=st.integers(min_value=1, max_value=40))
def test_groups_are_runs_in_key_order_covering_every_partition_with_about_equal_work(works, n):
    keys = _keys(works)
    plan = contiguous_groups(keys, n)
    flat = [k for g in plan for k in g]
    assert flat == list(keys.select("gaming_day", "table_id").iter_rows())  # every partition once, in key order
    assert len(plan) <= n and all(plan)
    if works:
        weight = dict(zip(flat, (max(1, w) for w in works)))
        share = sum(weight.values()) / min(n, len(works))
        biggest = max(weight.values())
        done = 0
        for i, group in enumerate(plan):
            ws = [weight[k] for k in group]
            if i < len(plan) - 1:  # a group closes as soon as the work so far reaches its share, not before
                assert done + sum(ws) >= share * (i + 1)
                assert len(ws) == 1 or done + sum(ws[:-1]) < share * (i + 1)
            assert sum(ws) <= share + biggest  # about equal: never more than one partition over its share
            done += sum(ws)

def test_an_even_night_is_cut_into_the_groups_asked_for():
    plan = contiguous_groups(_keys([100] * 40), 8)
    assert [len(g) for g in plan] == [5] * 8
