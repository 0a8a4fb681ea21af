"""The loader's device-event annotation over frames equals the SQL it replaced, row for row.

``load.annotate_events`` (polars over the devices' sorted streams) took over from ``load.annotated_events_sql``
(one DuckDB query, kept as the reference) because the query cost three quarters of a group's load. Here both run
on random device streams built to hit every annotation: numbering jumps (some of their numbers quarantined in the
same file or between two files), a shoe's decks from its first ``shoe_start`` that names them (or none), cards seen
more often than the shoe holds (their copies numbered across devices), events of rounds the table system never
recorded (their gaming day from their time at the table's UTC offset), devices serving two tables, and events
either side of the window's margin.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.audit.load import EVENT_COLUMNS, Window, _annotated_events, _frame, annotated_events_sql, load_gap_evidence
from pipelines.audit.params import AuditParams
from pipelines.db import open_memory_writer

DAY = dt.date(2026, 11, 24)
START = dt.datetime(2026, 11, 19, 20, 0, tzinfo=dt.timezone.utc)  # before the window's margin of DAY
TABLES = ("BAC-01", "BAC-02", "BJ-01")
FILES = ("shoe_a.csv", "shoe_b.csv")

event = st.fixed_dictionaries({
    "jump": st.sampled_from([0, 0, 0, 0, 1, 3]),  # numbers skipped before this event
    "table": st.sampled_from(TABLES),
    "shoe": st.sampled_from(["S1", "S2"]),
    "event": st.sampled_from(["card", "card", "card", "burn", "shoe_start", "shoe_end"]),
    "round_no": st.one_of(st.none(), st.integers(1, 6)),
    "code": st.one_of(st.none(), st.integers(-3, 3)),  # few codes: a one-deck shoe soon holds a card too often
    "decks": st.one_of(st.none(), st.integers(1, 2)),
    "hours": st.integers(0, 40),  # hours after the previous event: streams cross days and the margin
    "file": st.sampled_from(FILES),
    "lines": st.integers(1, 3),  # lines after the previous event's (the ones between may be quarantined)
})
round_row = st.fixed_dictionaries({
    "table": st.sampled_from(TABLES),
    "round_no": st.integers(1, 6),
    "day": st.integers(-3, 3),
    "offset": st.sampled_from([-300, 0, 600]),
})


def _night(streams, rounds, quarantined) -> object:
    con = open_memory_writer()
    lines: dict[str, int] = {f: 0 for f in FILES}
    seen_rounds: set[tuple[str, int]] = set()
    for r in rounds:
        if (r["table"], r["round_no"]) in seen_rounds:
            continue
        seen_rounds.add((r["table"], r["round_no"]))
        con.execute("""INSERT INTO core_rounds BY NAME SELECT ? AS table_id, ? AS round_no, 'baccarat' AS game,
                       'x' AS ruleset, 'USD' AS currency, TIMESTAMPTZ '2026-11-24 12:00:00+00' AS bets_closed_at,
                       'settled' AS status, ? AS gaming_day, ? AS utc_offset_minutes, 0 AS wager_count,
                       0 AS action_count, 'rounds.jsonl' AS source_file, ? AS source_line""",
                    [r["table"], r["round_no"], DAY + dt.timedelta(days=r["day"]), r["offset"], len(seen_rounds)])
    rows: list[list] = []
    for d, stream in enumerate(streams):
        seq, ts = 100, START
        for e in stream:
            seq += 1 + e["jump"]
            ts += dt.timedelta(hours=e["hours"], minutes=7)
            lines[e["file"]] += e["lines"]
            card = None if e["code"] is None else ("??" if e["code"] == -1 else "XX" if e["code"] == -2 else
                                                   "" if e["code"] == -3 else f"c{e['code']}")
            rows.append([f"DEV-{d}", e["table"], e["shoe"], seq, ts, e["event"], e["round_no"], card, e["code"],
                         e["decks"], e["file"], lines[e["file"]]])
    if rows:  # one statement for the whole stream (a statement per event made the test slow)
        columns = list(zip(*rows))
        con.execute("""INSERT INTO core_device_events BY NAME SELECT unnest($1::VARCHAR[]) AS device_id,
                       unnest($2::VARCHAR[]) AS table_id, unnest($3::VARCHAR[]) AS shoe_id,
                       unnest($4::BIGINT[]) AS event_seq, unnest($5::TIMESTAMPTZ[]) AS ts, unnest($6::VARCHAR[]) AS event,
                       unnest($7::BIGINT[]) AS round_no, unnest($8::VARCHAR[]) AS card,
                       unnest($9::SMALLINT[]) AS card_code, unnest($10::SMALLINT[]) AS decks,
                       unnest($11::VARCHAR[]) AS source_file, unnest($12::BIGINT[]) AS source_line""",
                    [list(c) for c in columns])
    for file, line in quarantined:
        con.execute("""INSERT INTO core_quarantine BY NAME SELECT ? AS source_file, ? AS source_line,
                       'shoe_csv' AS kind, 'bad line' AS reason, 'bad' AS reason_code, '' AS raw""", [file, line])
    return con


def _both(con, window: Window | None, tables) -> tuple[pl.DataFrame, pl.DataFrame]:
    listed = ", ".join(f"'{t}'" for t in tables)
    devices = f"SELECT DISTINCT device_id FROM core_device_events WHERE table_id IN ({listed})"
    reference = _frame(con, f"SELECT {', '.join(EVENT_COLUMNS)} FROM ({annotated_events_sql(360, devices, window)}) "
                            "ORDER BY device_id, event_seq")
    return reference, _annotated_events(con.cursor(), 360, devices, window)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams=st.lists(st.lists(event, max_size=40), min_size=1, max_size=3),
       rounds=st.lists(round_row, max_size=14),
       quarantined=st.lists(st.tuples(st.sampled_from(FILES), st.integers(1, 90)), max_size=25, unique=True),
       days=st.sampled_from([(DAY,), (DAY, DAY + dt.timedelta(days=1)), None]),
       tables=st.sets(st.sampled_from(TABLES), min_size=1))
def test_the_annotation_over_frames_equals_the_reference_sql(streams, rounds, quarantined, days, tables):
    con = _night(streams, rounds, quarantined)
    try:
        reference, fast = _both(con, Window(days) if days else None, sorted(tables))
    finally:
        con.close()
    assert fast.schema == reference.schema
    assert fast.equals(reference)


def test_the_random_nights_reach_every_annotation():
    """The generator above is not idle: one fixed night of it shows each annotation the test compares."""
    streams = [[{"jump": j, "table": t, "shoe": "S1", "event": ev, "round_no": r, "code": c, "decks": dk, "hours": h,
                 "file": f, "lines": ln}
                for j, t, ev, r, c, dk, h, f, ln in [
                    (0, "BAC-01", "shoe_start", None, None, None, 60, "shoe_a.csv", 1),  # inside the margin
                    (0, "BAC-01", "shoe_start", None, None, 1, 1, "shoe_a.csv", 1),
                    (0, "BAC-01", "card", 1, 2, None, 1, "shoe_a.csv", 1),
                    (2, "BAC-01", "card", 1, 2, None, 30, "shoe_a.csv", 3),
                    (0, "BAC-01", "card", 4, 3, None, 25, "shoe_b.csv", 1),
                    (1, "BJ-01", "card", 2, 2, None, 1, "shoe_b.csv", 2),
                ]]]
    rounds = [{"table": "BAC-01", "round_no": 1, "day": 0, "offset": 600}]
    con = _night(streams, rounds, [("shoe_a.csv", 4), ("shoe_b.csv", 2)])
    try:
        reference, fast = _both(con, Window((DAY, DAY + dt.timedelta(days=1))), ["BAC-01"])
        jumps, _numbers = load_gap_evidence(con, AuditParams(), Window((DAY, DAY + dt.timedelta(days=1))))
    finally:
        con.close()
    assert fast.equals(reference)
    assert jumps["lost_before"].to_list() == [2, 1] and jumps["quarantined_before"].cast(pl.Int64).to_list() == [1, 1]
    assert fast["lost_before"].max() > 0 and fast["quarantined_before"].cast(pl.Int64).max() > 0
    assert fast["copy_no"].drop_nulls().to_list() == [1, 2]  # a one-deck shoe showed the same card twice
    assert fast["shoe_decks"].drop_nulls().unique().to_list() == [1]  # from the shoe_start that names decks
    assert fast.filter(pl.col("round_no") == 4)["gaming_day"].is_not_null().all()  # no recorded round: from its time


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams=st.lists(st.lists(event, max_size=40), min_size=1, max_size=3),
       rounds=st.lists(round_row, max_size=14),
       quarantined=st.lists(st.tuples(st.sampled_from(FILES), st.integers(1, 90)), max_size=25, unique=True),
       days=st.sampled_from([(DAY,), (DAY, DAY + dt.timedelta(days=1)), None]))
def test_the_gap_evidence_is_the_annotated_events_after_a_jump(streams, rounds, quarantined, days):
    """``load_gap_evidence`` (one window over the night's events, for the sequence_gap findings) and the loader's
    annotation of every device's stream agree on each event after a jump and the quarantined lines inside it."""
    window = Window(days) if days else None
    con = _night(streams, rounds, quarantined)
    try:
        jumps, _numbers = load_gap_evidence(con, AuditParams(gaming_day_start="06:00"), window)
        annotated = _annotated_events(con.cursor(), 360, "SELECT device_id FROM core_device_events", window)
    finally:
        con.close()
    expected = annotated.filter(pl.col("lost_before") > 0).select(jumps.columns)
    assert jumps.cast(expected.schema).equals(expected)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams=st.lists(st.lists(event, max_size=40), min_size=1, max_size=3),
       rounds=st.lists(round_row, max_size=14),
       quarantined=st.lists(st.tuples(st.sampled_from(FILES), st.integers(1, 90)), max_size=25, unique=True),
       days=st.sampled_from([(DAY,), (DAY, DAY + dt.timedelta(days=1)), None]),
       tables=st.sets(st.sampled_from(TABLES), min_size=1),
       wanted=st.lists(st.tuples(st.sampled_from(TABLES), st.integers(1, 6)), max_size=5))
def test_annotating_only_the_wanted_rounds_shoes_gives_their_rows_of_the_whole_annotation(
        streams, rounds, quarantined, days, tables, wanted):
    """The evidence packs annotate only the shoes of the rounds they want and the events either side
    (``load.shoes_of_rounds``): those rounds' rows are the rows the whole streams' annotation gives them."""
    con = _night(streams, rounds, quarantined)
    window = Window(days) if days else None
    listed = ", ".join(f"'{t}'" for t in sorted(tables))
    devices = f"SELECT DISTINCT device_id FROM core_device_events WHERE table_id IN ({listed})"
    only = pl.DataFrame({"table_id": [t for t, _ in wanted], "round_no": [r for _, r in wanted]},
                        schema={"table_id": pl.String, "round_no": pl.Int64})
    try:
        whole = _annotated_events(con.cursor(), 360, devices, window)
        part = _annotated_events(con.cursor(), 360, devices, window, only)
    finally:
        con.close()
    of_wanted = lambda df: df.join(only.unique(), on=["table_id", "round_no"], how="semi", maintain_order="left")  # noqa: E731
    assert part.schema == whole.schema
    assert of_wanted(part).equals(of_wanted(whole))
    assert part.height <= whole.height
