"""The detectors' test rows built column by column (``tests_frame.json_value``, ``hold.hold_test_rows``, ...) write the
bytes the row-by-row code wrote with ``json.dumps`` and f-strings; and a night's windows sharing a ``WindowMemo``
give the tests each window gives alone."""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.currency import format_money
from pipelines.stats.config import StatsParams
from pipelines.stats.hold import GROUP_LABEL, dealer_error_rows, hold_test_rows
from pipelines.stats.load import StatsInputs
from pipelines.stats.run import with_fdr
from pipelines.stats.summaries import summarise
from pipelines.stats.synthetic import Floor, nights
from pipelines.stats.tests_frame import BET_LABEL, fmt_p, fmt_ps, json_list, json_value
from pipelines.stats.windows import WindowMemo, window_tests

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**100), max_value=2**100),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12), st.dates(),
    st.floats(allow_nan=False, allow_infinity=False).map(np.float64),  # numpy's floats are floats for json
)


@settings(max_examples=400, deadline=None)
@given(scalars)
def test_json_value_writes_what_json_dumps_writes(v):
    assert json_value(v) == json.dumps(v, default=str)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.lists(st.one_of(st.text(max_size=8), st.none(), st.integers(), st.floats()), max_size=5)))
def test_json_list_writes_what_json_dumps_writes(values):
    assert json_list(values) == json.dumps(values, default=str)


def test_p_values_in_sentences_are_fmt_p_of_each():
    ps = [1.0, 1.0, 0.5, 1e-13, 3.2e-9, 0.00123, 0.000999, 1.0]
    assert fmt_ps(ps) == [fmt_p(p) for p in ps] and fmt_ps(ps)[3] == "< 1e-12"


def _p_is(p: float) -> str:
    """How a sentence states a p-value: "p = 3.2e-9", and "p < 1e-12" at the floor."""
    return f"p {fmt_p(p)}" if fmt_p(p).startswith("<") else f"p = {fmt_p(p)}"


def _hold_rows_one_by_one(summary, s, mean, sd, g, p, handle, band_low, band_high, window_days):
    """The row-by-row hold rows the column-wise builder replaced (kept here as the reference it must equal)."""
    rows = []
    for i, r in enumerate(summary.iter_rows(named=True)):
        kind_label = GROUP_LABEL[r["grouping"]]
        bet = "all bets" if r["level"] == "all" else f"{BET_LABEL.get(r['level'], r['level'])} bets"
        hold, theo_hold = -s[i] / handle[i], -mean[i] / handle[i]
        sentence = (f"{kind_label} {r['key']} held {hold:+.1%} of {format_money(r['handle'], r['currency'])} wagered on {bet} "
                    f"({r['wagers']:,} wagers, {r['rounds']:,} rounds), theory {theo_hold:+.1%}; 95 % band "
                    f"{-band_low[i] / handle[i]:+.1%} to {-band_high[i] / handle[i]:+.1%}; {_p_is(float(p[i]))}")
        evidence = {"handle": r["handle"], "hold": round(hold, 5), "theoretical_hold": round(theo_hold, 5),
                    "sd": round(float(sd[i]), 1), "skew": round(float(g[i]), 3), "tables": r["tables"],
                    "rounds_range": [r["first_round"], r["last_round"]], "tail": "Lugannani-Rice saddle point"}
        rows.append((f"hold_{kind_label}", f"{kind_label} {r['key']} x {bet}",
                     r["key"] if r["grouping"] == "table_id" else (r["tables"][0] if len(r["tables"]) == 1 else None),
                     int(round(float(mean[i]))), float(p[i]), sentence, json.dumps(evidence, default=str)))
    return rows


def test_hold_rows_column_by_column_equal_the_row_by_row_text():
    rng = np.random.default_rng(5)
    n = 400
    handle = [int(v) for v in rng.integers(0, 10**9, n)]
    handle[:3] = [0, 2**70, 1]  # a handle of 0 (NaN and infinite holds) and one beyond 64 bits
    summary = pl.DataFrame({
        "grouping": rng.choice(["table_id", "dealer_id", "shoe_id"], n).tolist(),
        "key": [f"K-{i}\"é" if i % 50 == 0 else f"K-{i}" for i in range(n)],
        "level": rng.choice(["all", "banker", "big_tiger", "odd_level"], n).tolist(),
        "currency": rng.choice(["USD", "VND", "XYZ"], n).tolist(), "handle": pl.Series(handle, dtype=pl.Int128),
        "wagers": rng.integers(1, 10**6, n), "rounds": rng.integers(1, 10**6, n),
        "tables": [["BAC-01"] if i % 3 else ["BAC-01", "NCB-02"] for i in range(n)],
        "first_round": [None if i % 7 == 0 else int(i) for i in range(n)], "last_round": [int(10 * i) for i in range(n)],
        "recorded": rng.integers(-10**6, 10**6, n), "first_day": [dt.date(2026, 11, 24)] * n,
        "last_day": [dt.date(2026, 11, 25)] * n, "ruleset": ["r"] * n,
    })
    s = rng.normal(0, 1e5, n)
    mean, sd, g = rng.normal(0, 1e4, n), np.abs(rng.normal(0, 1e5, n)), rng.normal(0, 2, n)
    p = np.concatenate([[1.0, 1e-13, 0.5], rng.random(n - 3) ** 4])
    hf = summary["handle"].cast(pl.Float64).to_numpy()
    low, high = mean + sd * 1.96, mean - sd * 1.96
    with np.errstate(divide="ignore", invalid="ignore"):
        got = hold_test_rows(summary, s, mean, sd, g, p, hf, low, high, 7)
        want = _hold_rows_one_by_one(summary, s, mean, sd, g, p, hf, low, high, 7)
    assert got.select("test", "entity", "table_id", "expected_net", "p_value", "sentence", "evidence").rows() == want
    assert set(got["window_days"]) == {7} and got["recorded_net"].to_list() == summary["recorded"].to_list()


def test_dealer_error_rows_column_by_column_equal_the_row_by_row_text():
    d = pl.DataFrame({"dealer_id": ["D-1", "D-2", "D-3", "D-4"], "rounds": [1200, 900, 40, 5000],
                      "errors": [3, 12, 0, 0], "first_day": [dt.date(2026, 11, 24)] * 4,
                      "last_day": [dt.date(2026, 11, 24)] * 4})
    got = dealer_error_rows(d, StatsParams(), 1).sort("dealer_id")
    from pipelines.stats.distributions import binom_sf

    total_r, total_e = 7140, 15
    for r in got.iter_rows(named=True):
        mine = d.filter(pl.col("dealer_id") == r["dealer_id"]).row(0, named=True)
        floor = (total_e - mine["errors"] + 1) / (total_r - mine["rounds"] + 2)
        p = binom_sf(mine["errors"], mine["rounds"], floor)
        assert r["p_value"] == p
        assert r["sentence"] == (f"dealer {mine['dealer_id']} made {mine['errors']} errors in {mine['rounds']:,} rounds "
                                 f"({1000 * mine['errors'] / mine['rounds']:.1f} per 1,000), the floor "
                                 f"{1000 * floor:.1f} per 1,000; {_p_is(p)}")
        assert r["evidence"] == json.dumps({"errors": mine["errors"], "rounds": mine["rounds"],
                                            "per_1000": round(1000 * mine["errors"] / mine["rounds"], 2),
                                            "floor_per_1000": round(1000 * floor, 2)})
    assert "D-2" in set(got["dealer_id"]) and math.isclose(got.filter(pl.col("dealer_id") == "D-2")["p_value"][0], 0.0,
                                                           abs_tol=1e-3)


def test_windows_sharing_a_memo_give_the_tests_each_window_gives_alone():
    """The 7-day window after the 1-day one takes the hold figures of the entities that played only on the last day
    (that day's shoes) from the memo; its tests must be those it gives alone, byte for byte after the FDR's rounding."""
    day = dt.date(2026, 11, 24)
    floor = Floor(baccarat_tables=3, baccarat_rounds=200, blackjack_tables=1, blackjack_rounds=120)
    w, c, e = nights(floor, day, 3, seed=11)
    last = day + dt.timedelta(days=2)
    params = StatsParams()
    s = summarise(StatsInputs(w, e, c, day, last), params)

    def tests(window_first, days, memo=None):
        t = window_tests(s, window_first, last, params, days, memo=memo)[0]
        return with_fdr(t, params).drop("q_value", "flagged").sort("test", "entity", "currency", "bet", "game")

    memo = WindowMemo()
    tests(last, 1, memo)
    kept = len(memo._hold)
    shared = tests(day, 3, memo)
    alone = tests(day, 3)
    assert shared.equals(alone)
    new = len(memo._hold) - kept
    window_entities = shared.filter(pl.col("kind") == "hold_anomaly").filter(pl.col("test") != "dealer_error_rate").height
    assert 0 < new < window_entities  # the last day's shoes came from the memo, the tables and dealers did not
