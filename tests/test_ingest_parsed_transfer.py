"""records.Parsed crosses from a parse worker to the writer as Arrow IPC: what arrives is what was sent, every frame
(column names, dtypes, values, row order) and every count, for the frames the parsers really make."""

from __future__ import annotations

import pickle
from collections import Counter

import duckdb
import polars as pl

from pipelines.ingest import rounds_jsonl, shoe_csv
from pipelines.ingest.lines import LineChunk
from pipelines.ingest.quarantine import to_quarantine
from pipelines.ingest.records import Parsed

ROUND = ('{"table_id": "BJ-01", "game": "blackjack", "ruleset": "hoiana-blackjack", "round_no": 7, "currency": "USD", '
         '"bets_closed_at": "2026-11-24T06:11:57.25+07:00", "status": "settled", "recorded_result": {"winner": "x"}, '
         '"wagers": [{"wager_id": "W1", "seat": 2, "player_id": null, "bet": "main", "amount": 1000, '
         '"placed_at": "2026-11-24T06:11:32Z", "net": -1000}], "actions": [{"seat": 2, "hand": 1, "action": '
         '"split", "amount": 1000, "ts": "2026-11-24T06:11:40+07:00", "wager_ids": ["W1"]}]}')
CSV = ["ADD-1,BJ-01,S1,1,2026-11-24T06:06:37.733+07:00,shoe_start,,,8",
       "ADD-1,BJ-01,S1,2,2026-11-24T06:06:38.133+07:00,card,7,??,",
       "ADD-1,BJ-01,S1,1,2026-11-24T06:06:39+07:00,card,7,As,"]  # seq_backwards: a quarantine row


def test_a_parsed_part_arrives_as_it_was_sent() -> None:
    con = duckdb.connect()
    r, w, a, failures, raw = rounds_jsonl.RoundsParser(con, "rounds_x.jsonl", 360).parse(
        LineChunk(1, pl.Series("raw", [ROUND, "{not json"])))
    events, csv_failures, csv_raw = shoe_csv.ShoeParser("shoe_x.csv", list(shoe_csv.SHOE_CSV_COLUMNS), con=con).parse(
        LineChunk(2, pl.Series("raw", CSV)))
    frames = (("rounds", r), ("wagers", w), ("actions", a), ("events", events),
              ("quarantine", to_quarantine(failures, raw, "rounds_x.jsonl", "rounds_jsonl")),
              ("quarantine", to_quarantine(csv_failures, csv_raw, "shoe_x.csv", "shoe_csv")),
              ("empty", w.clear()))
    assert all(len(f) for _, f in frames[:-1])  # every kind of frame holds rows
    sent = Parsed(frames, {"gone.csv": ("file_not_text", "NUL bytes")}, Counter({"unparseable JSON": 1}),
                  Counter({"rounds_x.jsonl": 2, "shoe_x.csv": 3}), 123)
    got = pickle.loads(pickle.dumps(sent))
    assert [n for n, _ in got.frames] == [n for n, _ in sent.frames]
    for (_, mine), (_, theirs) in zip(sent.frames, got.frames):
        assert theirs.schema == mine.schema
        assert theirs.equals(mine)
    assert (got.unreadable, got.reasons, got.lines_read, got.bytes_read) == \
        (sent.unreadable, sent.reasons, sent.lines_read, sent.bytes_read)


def test_a_batch_parsed_on_a_worker_process_arrives_as_parsed_here(tmp_path) -> None:
    """Through the real crossing (a spawned parse worker, its frames in a memory file whose descriptor crosses to
    this process): every frame equal to the same batch parsed here."""
    from pipelines.db import parse_connection
    from pipelines.ingest.discover import discover
    from pipelines.ingest.parallel import parse_ahead
    from pipelines.ingest.parse import parse_small_batch
    from pipelines.ingest.plan import plan_batches
    from pipelines.ingest.records import Loaded, ParseOptions
    from pipelines.ingest.screen import screen

    (tmp_path / "rounds_a.jsonl").write_text(ROUND + "\n{not json\n" + ROUND.replace('"round_no": 7', '"round_no": 8')
                                             + "\n")
    (tmp_path / "shoe_a.csv").write_text(",".join(shoe_csv.SHOE_CSV_COLUMNS) + "\n" + "\n".join(CSV) + "\n")
    batches = plan_batches(screen(discover(tmp_path), Loaded()).to_load)
    options = ParseOptions(360, 10**12)
    con = parse_connection()
    here = [parse_small_batch(b, options, con) for b in batches]
    with parse_ahead(batches, list(range(len(batches))), options, 1, "256MB") as ahead:
        there = [ahead.pop(i).result() for i in range(len(batches))]
    assert len(here) == len(there) == 2
    for mine, theirs in zip(here, there):
        assert [n for n, _ in theirs.frames] == [n for n, _ in mine.frames]
        assert all(not f.is_empty() for _, f in mine.frames)  # rows in every frame: the comparison compares values
        for (_, a), (_, b) in zip(mine.frames, theirs.frames):
            assert b.schema == a.schema and b.equals(a)
        assert (theirs.reasons, theirs.lines_read, theirs.bytes_read) == (mine.reasons, mine.lines_read, mine.bytes_read)
