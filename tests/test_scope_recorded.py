"""The gaming days the ingest records as it reads a file equal the days the audit's scope finds reading it itself
(pipelines.ingest.days, pipelines.audit.scope): on hostile files (quarantined lines, lines past the ingest's longest,
CRLF, no line end at the end, ``bets_closed_at`` in odd places), a grown file, a file read in parts, device logs."""

from __future__ import annotations

import datetime as dt
import pickle
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipelines.audit.scope as scope
from pipelines.audit.scope import days_in_files, input_scope
from pipelines.db import parse_connection
from pipelines.ingest.days import DaysScan
from pipelines.ingest.lines import MAX_LINE_BYTES
from pipelines.ingest.parse import parse_big_file, parse_small_batch
from pipelines.ingest.records import InputFile, Kind, ParseOptions
from test_ingest_helpers import ingest, write_table

STARTS = {"06:00": 360, "00:00": 0, "23:30": 23 * 60 + 30}

# stamps as an exporter (or a broken one) writes them: times around the day's starts, dates that are none, the edges of
# the instants the ingest accepts
_dates = st.sampled_from(["2026-11-24", "2026-11-25", "2026-12-31", "2027-01-01", "2026-02-29", "2026-13-01",
                          "0001-01-01", "0002-01-01", "9998-12-31", "9999-12-31", "2026-11-2x"])
_times = st.sampled_from(["00:00", "05:59", "06:00", "06:01", "23:29", "23:30", "23:59", "24:00", "24:01", "99:99"])


@st.composite
def _stamp(draw) -> str:
    sep = draw(st.sampled_from(["T", " ", "t"]))
    return f"{draw(_dates)}{sep}{draw(_times)}:{draw(st.sampled_from(['00', '59.999']))}" + \
        draw(st.sampled_from(["+07:00", "Z", "", "-11:00"]))


@st.composite
def _round_line(draw) -> bytes:
    """A line of a round log: a good one, one the ingest quarantines, or bets_closed_at somewhere odd."""
    stamp = draw(_stamp())
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return b""  # blank
    if shape == 1:
        return b"{garbage " + stamp.encode()
    if shape == 2:  # the key and its value across a line end (the pattern's \s takes it)
        return b'{"table_id": "BAC-01", "bets_closed_at"\n : "' + stamp.encode() + b'"}'
    if shape == 3:  # inside another value, escaped
        return b'{"note": "\\"bets_closed_at\\": \\"' + stamp.encode() + b'\\""}'
    if shape == 4:  # twice in a line, the second somewhere else
        return (b'{"bets_closed_at": "' + stamp.encode() + b'", "x": {"bets_closed_at":"'
                + draw(_stamp()).encode() + b'"}}')
    if shape == 5:  # not UTF-8
        return b'{"bets_closed_at": "' + stamp.encode() + b'", "dealer": "\xff\xfe"}'
    if shape == 6:  # longer than the ingest's longest line
        pad = draw(st.sampled_from([MAX_LINE_BYTES, MAX_LINE_BYTES + 10, MAX_LINE_BYTES - 100]))
        return b'{"bets_closed_at": "' + stamp.encode() + b'", "pad": "' + b"x" * pad + b'"}'
    if shape == 7:
        return b"\xef\xbb\xbf" + b'{"bets_closed_at":"' + stamp.encode() + b'"}'  # a BOM starting a line
    return b'{"table_id": "BAC-01", "round_id": "r", "bets_closed_at": "' + stamp.encode() + b'", "x": 1}'


@st.composite
def _round_log(draw) -> bytes:
    lines = draw(st.lists(_round_line(), min_size=0, max_size=8))
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    text = end.join(lines)
    if lines and draw(st.booleans()):
        text += end  # else the last line has no line end
    return text


@st.composite
def _device_log(draw) -> bytes:
    rows = [b"device_id,table_id,shoe_id,event_seq,ts,event_type,card,round_ref"]
    for i in range(draw(st.integers(0, 6))):
        shape = draw(st.integers(0, 3))
        stamp = draw(_stamp()).encode()
        rows.append([b"D1,BAC-01,S1,%d,%s,card_dealt,AS," % (i, stamp), b"garbage " + stamp, b"",
                     b"x,,,," + stamp][shape])
    return b"\r\n".join(rows) + draw(st.sampled_from([b"", b"\r\n", b"\n"]))


def _recorded(folder: Path, start: str) -> dict[str, frozenset | None]:
    with tempfile.TemporaryDirectory() as tmp:
        con, summary = ingest(folder, Path(tmp) / "db.duckdb", start)
        con.close()
    return {f.source_file: f.gaming_days for f in summary.files if f.status == "loaded"}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_round_log(), min_size=1, max_size=3), st.sampled_from(sorted(STARTS)))
def test_the_ingest_records_the_days_the_scope_reads_in_each_round_log(logs, start) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        paths = {}
        for i, data in enumerate(logs):
            paths[f"rounds_T{i}.jsonl"] = folder / f"rounds_T{i}.jsonl"
            paths[f"rounds_T{i}.jsonl"].write_bytes(data)
        recorded = _recorded(folder, start)
        for rel, path in paths.items():
            if rel in recorded:  # an empty file (or one the same as another) is not loaded
                assert recorded[rel] == days_in_files([("rounds_jsonl", path)], STARTS[start]), rel
        loaded = [("rounds_jsonl", paths[rel]) for rel in recorded]
        assert input_scope(loaded, loaded, STARTS[start], {paths[r]: d for r, d in recorded.items()}) == \
            input_scope(loaded, loaded, STARTS[start])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_device_log(), min_size=1, max_size=2), st.sampled_from(sorted(STARTS)))
def test_without_a_round_log_the_ingest_records_the_device_logs_days(logs, start) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        for i, data in enumerate(logs):
            (folder / f"shoe_D{i}.csv").write_bytes(data)
        recorded = _recorded(folder, start)
        for rel, days in recorded.items():
            assert days is not None
            assert days == days_in_files([("shoe_csv", folder / rel)], STARTS[start]), rel


def test_with_a_round_log_the_device_logs_days_are_not_recorded(tmp_path) -> None:
    """The scope reads a device log's days only when the input holds no round log: the ingest does not scan them."""
    rp, sp, _, _ = write_table(tmp_path / "in", 0, 3)
    recorded = _recorded(tmp_path / "in", "06:00")
    assert recorded[sp.name] is None
    assert recorded[rp.name] == days_in_files([("rounds_jsonl", rp)], 360) != frozenset()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_round_log(), _round_log())
def test_a_grown_file_records_the_days_of_its_whole_text(first, more) -> None:
    """A file that grew loads only its new lines; the scope's days are the whole file's, the old lines' too."""
    with tempfile.TemporaryDirectory() as tmp:
        folder, db = Path(tmp) / "in", Path(tmp) / "db.duckdb"
        folder.mkdir()
        path = folder / "rounds_T.jsonl"
        path.write_bytes(first + (b"\n" if first and not first.endswith(b"\n") else b""))
        con, _ = ingest(folder, db)
        con.close()
        with open(path, "ab") as fh:
            fh.write(more + b"\n" + b'{"bets_closed_at": "2026-11-30T07:00:00+07:00"}\n')
        con, summary = ingest(folder, db)
        con.close()
        (outcome,) = [f for f in summary.files if f.status == "loaded"]
        assert outcome.gaming_days == days_in_files([("rounds_jsonl", path)], 360)
        if first.strip():
            assert outcome.first_line > 1  # read from its new lines only


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_round_log(), st.integers(1, 4096), st.sampled_from([0, 7, 100]))
def test_a_file_read_in_parts_records_the_days_of_its_whole_text(data, chunk_bytes, start_byte) -> None:
    """A big file is parsed chunk by chunk (and a grown one from its last read's end): its days come whole, once."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rounds_T.jsonl"
        path.write_bytes(data)
        cut = data.rfind(b"\n", 0, start_byte) + 1  # a read starts at a line's start
        f = InputFile("rounds_T.jsonl", Kind.ROUNDS_JSONL, path, "sha", len(data), start_byte=cut,
                      first_line=data[:cut].count(b"\n") + 1)
        con = parse_connection("256MB")
        try:
            parts = list(parse_big_file(f, ParseOptions(360, 10**12), con, chunk_bytes))
        finally:
            con.close()
        days = [p.days for p in parts if p.days]
        expected = days_in_files([("rounds_jsonl", path)], 360)
        if parts:
            assert days and all(d == {f.rel: expected} for d in days)
            assert parts[-1].days == {f.rel: expected}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(
    st.binary(max_size=40),
    st.builds(lambda d, t: b'"bets_closed_at": "' + d.encode() + b"T" + t.encode(), _dates, _times)),
    max_size=12), st.integers(8, 64), st.integers(4, 48), st.lists(st.integers(1, 100), max_size=20))
def test_the_scan_cuts_its_blocks_as_the_scope_reads_them_whatever_the_reads(lines, block, longest, reads) -> None:
    """The rule's blocks and its longest line made small, so that lines run past blocks and are skipped: the bytes fed
    in reads of any size give the days of the scope's own reading."""
    data = b"\n".join(lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rounds_T.jsonl"
        path.write_bytes(data)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(scope, "CHUNK_BYTES", block)
            mp.setattr(scope, "MAX_LINE_BYTES", longest)
            expected = days_in_files([("rounds_jsonl", path)], 360)
        scan = DaysScan("rounds_jsonl", len(data), 360, block_bytes=block, max_line=longest)
        at, sizes = 0, iter(reads)
        while at < len(data):
            n = next(sizes, 1000)
            scan.feed(data[at:at + n])
            at += n
        assert scan.days == expected


def test_the_recorded_days_travel_with_a_workers_parse_and_spare_the_scope_its_read(tmp_path, monkeypatch) -> None:
    rp, _, _, _ = write_table(tmp_path / "in", 0, 4)
    f = InputFile(rp.name, Kind.ROUNDS_JSONL, rp, "sha", rp.stat().st_size)
    con = parse_connection("256MB")
    try:
        parsed = parse_small_batch((f,), ParseOptions(360, 10**12), con)
    finally:
        con.close()
    assert parsed.days == {rp.name: days_in_files([("rounds_jsonl", rp)], 360)}
    assert pickle.loads(pickle.dumps(parsed)).days == parsed.days

    def no_read(path, size=None):
        raise AssertionError(f"{path} read again")

    monkeypatch.setattr(scope, "_line_chunks", no_read)
    loaded = [("rounds_jsonl", rp)]
    assert input_scope(loaded, loaded, 360, {rp: parsed.days[rp.name]}).days == tuple(sorted(parsed.days[rp.name]))
    assert all(isinstance(d, dt.date) for d in parsed.days[rp.name])
