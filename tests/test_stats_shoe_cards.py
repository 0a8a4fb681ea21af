"""A chunk's card events read by its tables' range (``load._shoe_cards``): the same frames as without the range, a shoe
started days before the chunk's rounds read whole, and no other table's events.

The events table is stored in table order, so the chunk's least and greatest table let DuckDB skip the other tables'
row groups; the range only narrows what the join with the chunk's shoes (``_stat_shoes``) keeps, so the frames must
be those of the read without it.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
from polars.testing import assert_frame_equal

from pipelines.db import open_writer
from pipelines.stats.load import _shoe_cards

DAY = dt.datetime(2026, 11, 24, 20, 0, tzinfo=dt.timezone.utc)


def _event(table: str, shoe: str, seq: int, ts: dt.datetime, event: str, round_no: int | None = None,
           card: int | None = None, decks: int | None = None) -> dict:
    return {"device_id": f"DEV-{table}", "table_id": table, "shoe_id": shoe, "event_seq": seq, "ts": ts, "event": event,
            "round_no": round_no, "card_code": card, "decks": decks, "source_file": "events.jsonl", "source_line": 1}


def _shoe(table: str, shoe: str, start: dt.datetime, decks: int, rounds: range) -> list[dict]:
    """A shoe's start, then four cards a round, a minute a round from ``start``."""
    rows = [_event(table, shoe, 0, start, "shoe_start", decks=decks)]
    for r in rounds:
        at = start + dt.timedelta(minutes=r)
        rows += [_event(table, shoe, 4 * r + k, at, "card", r, 1 + (r + k) % 52) for k in range(1, 5)]
    return rows


def test_a_chunks_cards_by_its_tables_range_are_the_reads_without_it(tmp_path):
    far_start = DAY - dt.timedelta(days=3)  # older than SHOE_SPAN before the chunk's rounds: read by its shoe alone
    events = (_shoe("BAC-A", "S-A1", DAY, 8, range(1, 40)) + _shoe("BAC-B", "S-B0", far_start, 6, range(1, 30))
              + _shoe("BAC-C", "S-C1", DAY, 8, range(1, 40)) + _shoe("BAC-D", "S-D1", DAY, 8, range(1, 40)))
    # the B shoe's rounds of tonight, dealt three days after its start
    events += [_event("BAC-B", "S-B0", 1000 + 4 * r + k, DAY + dt.timedelta(minutes=r), "card", 1000 + r, 1 + k)
               for r in range(10) for k in range(4)]
    con = open_writer(tmp_path / "a.duckdb")
    try:
        frame = pl.DataFrame(events, schema_overrides={"ts": pl.Datetime("us", "UTC"), "card_code": pl.Int16,
                                                      "decks": pl.Int16}).sort("table_id", "ts", "event_seq")
        path = tmp_path / "events.parquet"
        frame.write_parquet(path)
        con.execute(f"INSERT INTO core_device_events BY NAME SELECT * FROM read_parquet('{path.as_posix()}')")
        # the chunk: tables B and C (tonight's rounds of both; B's shoe began three days ago)
        con.execute("""CREATE OR REPLACE TEMP TABLE _stat_shoes AS SELECT * FROM (VALUES
            ('BAC-B', 'S-B0', ?::TIMESTAMPTZ, ?::TIMESTAMPTZ), ('BAC-C', 'S-C1', ?::TIMESTAMPTZ, ?::TIMESTAMPTZ))
            t(table_id, shoe_id, lo, hi)""", [DAY, DAY + dt.timedelta(minutes=10), DAY, DAY + dt.timedelta(minutes=40)])
        decks, cards = _shoe_cards(con, ("BAC-B", "BAC-C"))
        every_decks, every_cards = _shoe_cards(con)
    finally:
        con.close()
    assert_frame_equal(cards, every_cards)
    assert_frame_equal(decks.sort("shoe_id"), every_decks.sort("shoe_id"))
    assert sorted(set(cards["table_id"].to_list())) == ["BAC-B", "BAC-C"]
    b = cards.filter(pl.col("table_id") == "BAC-B")
    assert b.height == 29 * 4 + 10 * 4  # the far shoe whole: its first rounds three days ago and tonight's
    assert b["event_seq"].is_sorted() and set(b["decks"].to_list()) == {6}
    assert cards.filter(pl.col("table_id") == "BAC-C").height == 39 * 4
    assert dict(decks.sort("shoe_id").iter_rows()) == {"S-B0": 6, "S-C1": 8}
