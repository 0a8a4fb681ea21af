"""pipelines.ingest.timestamps: DuckDB's cast reads the common shape, polars every other; the instants are what
polars' parse alone gives (``schemas.rules.parse_timestamp``, the reference), on any text."""

from __future__ import annotations

import duckdb
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest.timestamps import with_utc_instants
from schemas.rules import parse_timestamp

# every field drawn from its valid range and just beyond it: the edges where DuckDB is more lenient than polars
FIELDS = {
    "year": st.sampled_from(["0001", "1969", "1970", "2024", "2026", "9999", "0000"]),
    "month": st.sampled_from(["00", "01", "02", "09", "10", "12", "13", "1"]),
    "day": st.sampled_from(["00", "01", "28", "29", "30", "31", "32", "7"]),
    "hour": st.sampled_from(["00", "05", "19", "20", "23", "24", "25", "99", "6"]),
    "minute": st.sampled_from(["00", "30", "59", "60", "99"]),
    "second": st.sampled_from(["00", "30", "59", "60", "61"]),
    "fraction": st.sampled_from(["", ".", ".5", ".123", ".123456", ".1234567", ".000000001", ",5"]),
    "offset": st.sampled_from(["Z", "z", "", "+00:00", "+07:00", "-03:30", "+14:00", "+23:59", "+24:00", "-99:99",
                               "+00:60", "+0700", "+07", "-0330", " +07:00", "+7:00", "UTC"]),
    "sep": st.sampled_from(["T", "T", "T", " ", "t"]),
}


@st.composite
def stamps(draw) -> str | None:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(st.none(), st.text(max_size=30)))
    f = {k: draw(v) for k, v in FIELDS.items()}
    return f"{f['year']}-{f['month']}-{f['day']}{f['sep']}{f['hour']}:{f['minute']}:{f['second']}{f['fraction']}{f['offset']}"


@settings(max_examples=300, deadline=None)
@given(st.lists(stamps(), min_size=1, max_size=40), st.lists(stamps(), min_size=1, max_size=40))
def test_the_instants_are_polars_own_on_any_text(first, second) -> None:
    n = min(len(first), len(second))
    frame = pl.DataFrame({"a": first[:n], "b": second[:n]}, schema={"a": pl.String, "b": pl.String})
    con = duckdb.connect()
    got = with_utc_instants(con, frame, ["a", "b"])
    want = frame.with_columns(parse_timestamp(pl.col("a")).alias("a__utc"), parse_timestamp(pl.col("b")).alias("b__utc"))
    assert got.equals(want)
    assert got.schema == want.schema


def test_the_common_shapes_are_read_by_duckdb_and_equal_polars() -> None:
    """The shapes the simulator and the contract's examples write, and a date DuckDB refuses (polars decides)."""
    texts = ["2026-11-24T06:11:30+07:00", "2026-11-24T06:06:37.733+07:00", "2026-11-23T23:59:59.999999Z",
             "2026-02-30T06:00:00Z", "2026-11-24T24:00:00Z", "2026-11-24T06:00:00+24:00", "2026-11-24T06:00:00",
             "2026-11-24T06:11:30+0700", None]
    frame = pl.DataFrame({"ts": texts}, schema={"ts": pl.String})
    got = with_utc_instants(duckdb.connect(), frame, ["ts"])["ts__utc"]
    assert got.equals(frame.select(parse_timestamp(pl.col("ts"))).to_series().alias("ts__utc"))
    assert got.null_count() == 5  # 30 February, hour 24, offset 24, no offset, null: not instants for either reader


def test_an_empty_frame_and_no_names() -> None:
    frame = pl.DataFrame({"ts": []}, schema={"ts": pl.String})
    assert with_utc_instants(duckdb.connect(), frame, ["ts"]).columns == ["ts", "ts__utc"]
    assert with_utc_instants(duckdb.connect(), frame.with_columns(pl.lit("x").alias("ts")), []).columns == ["ts"]
