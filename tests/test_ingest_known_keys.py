"""The writer's key ranges (``pipelines.ingest.store.KnownKeys``) answer "does a key of this batch repeat?" exactly as
joining the batch's keys with the whole core table does, batch after batch, whatever was loaded before the run.

The ranges exist for speed only (a batch need not scan the core table); a wrong "no" would load a repeated round or
event as new, a wrong "yes" only costs the slower resolution. Both are checked against the full lookup.
"""

from __future__ import annotations

import duckdb
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.db import create_tables
from pipelines.ingest.records import Kind
from pipelines.ingest.store import KnownKeys, _repeats

DEVICES = ("AE-1", "AE-2", "AE-3")
key = st.tuples(st.sampled_from(DEVICES), st.integers(0, 40))
batch = st.lists(key, min_size=1, max_size=12)


def _events(keys: list[tuple[str, int]]) -> pl.DataFrame:
    return pl.DataFrame({"device_id": [d for d, _ in keys], "event_seq": [n for _, n in keys]},
                        schema={"device_id": pl.String, "event_seq": pl.Int64})


def _load(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, int]]) -> None:
    for device, seq in keys:
        con.execute("""INSERT INTO core_device_events (source_file, source_line, device_id, table_id, shoe_id,
                       event_seq, ts, event) VALUES ('f.csv', 2, ?, 'T', 'S', ?, now(), 'burn')""", [device, seq])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.lists(key, max_size=10), batches=st.lists(batch, min_size=1, max_size=5))
def test_the_ranges_find_every_repeated_key_the_full_lookup_finds(before, batches) -> None:
    con = duckdb.connect()
    create_tables(con)
    _load(con, before)  # loaded by an earlier run
    known = KnownKeys()
    for keys in batches:
        frame = _events(keys)
        want = _repeats(con, Kind.SHOE_CSV, frame, None)
        assert _repeats(con, Kind.SHOE_CSV, frame, known) == want
        if want:  # the run resolves such a batch by staging it, and reads the ranges again after
            known.forget(Kind.SHOE_CSV)
        _load(con, keys)  # loaded as the run would (a repeated key resolved: here simply kept twice)
    con.close()


def test_a_batch_whose_devices_stay_apart_from_the_loaded_ranges_is_not_looked_up() -> None:
    con = duckdb.connect()
    create_tables(con)
    _load(con, [("AE-1", 1), ("AE-1", 5)])
    known = KnownKeys()
    assert not _repeats(con, Kind.SHOE_CSV, _events([("AE-1", 6), ("AE-2", 1)]), known)
    _load(con, [("AE-1", 6), ("AE-2", 1)])
    # the table is gone: only the ranges can answer, and they answer for keys outside them
    con.execute("DROP TABLE core_device_events")
    assert not _repeats(con, Kind.SHOE_CSV, _events([("AE-1", 7), ("AE-3", 1)]), known)
    # a key within a range is looked up in the table (here: which no longer exists)
    try:
        _repeats(con, Kind.SHOE_CSV, _events([("AE-1", 3)]), known)
    except duckdb.CatalogException:
        pass
    else:
        raise AssertionError("a key inside a loaded range was not looked up")
    # a key twice within the batch repeats without any lookup
    assert _repeats(con, Kind.SHOE_CSV, _events([("AE-9", 1), ("AE-9", 1)]), known)
    con.close()
