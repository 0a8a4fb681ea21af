"""Batches of files (pipelines.ingest.batch) load exactly as the same files loaded one by one.

Batching exists for speed only: every table, count and quarantine row must be what a file-by-file
load writes, including the cases where files of one batch interact (a round or a device event in
two files, identical or not, a CSV with its columns in another order, a file that cannot be read).
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

import pipelines.ingest.run as ingest_run
from pipelines.ingest.batch import Part
from pipelines.ingest.plan import plan_batches
from pipelines.ingest.records import InputFile
from pipelines.ingest.lines import LineChunk
from pipelines.ingest.synthetic import CSV_HEADER
from pipelines.settings import Settings
from test_ingest_helpers import ingest, snapshot, write_table

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _messy_folder(folder: Path) -> None:
    """The sample night plus files that interact within one batch."""
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("README.md", "ground_truth.csv"))
    rp, sp, rounds, events = write_table(folder, 0, 8)
    # identical copies of some rounds (keys reordered) and a changed copy of another (a new version)
    again = [json.dumps(dict(reversed(list(json.loads(x).items())))) for x in rounds[2:4]]
    changed = json.loads(rounds[5]); changed["wagers"][0]["net"] += 100
    (folder / "rounds_BAC-00_late.jsonl").write_text("\n".join(again + [json.dumps(changed)]) + "\n", encoding="utf-8")
    (folder / "rounds_BAC-00_zempty.jsonl").write_text("", encoding="utf-8")
    # the device's CSV again: columns in another order, one event identical, one changed
    cols = CSV_HEADER.split(",")
    order = list(reversed(cols))
    def reorder(line: str) -> str:
        d = dict(zip(cols, line.split(",")))
        return ",".join(d[c] for c in order)
    ev = events[4].split(","); ev[7] = "Kh" if ev[7] != "Kh" else "Qh"
    (sp.parent / (sp.stem + "_again.csv")).write_text(
        ",".join(order) + "\n" + reorder(events[3]) + "\n" + reorder(",".join(ev)) + "\n", encoding="utf-8")
    # and in the usual column order (parsed with the device's first file: its sequence is its own)
    ev6 = events[6].split(","); ev6[7] = "Kh" if ev6[7] != "Kh" else "Qh"
    (sp.parent / (sp.stem + "_copy.csv")).write_text(
        CSV_HEADER + "\n" + events[5] + "\n" + ",".join(ev6) + "\n", encoding="utf-8")
    # a long log of two devices whose last line repeats the first device's first event: event_seq
    # going back, seen only by carrying the device's highest event_seq from chunk to chunk when streamed
    _, long_sp, _, long_events = write_table(folder / "long", 5, 150)
    _, _, _, other_events = write_table(folder / "other", 6, 200)
    shutil.rmtree(folder / "other")
    long_sp.write_text(CSV_HEADER + "\n" + "\n".join(long_events + other_events + [long_events[0]]) + "\n",
                       encoding="utf-8")
    assert len("\n".join(other_events)) > 2 * 32_768  # the repeat's chunk holds no other line of its device
    (sp.parent / (sp.stem + "_header_only.csv")).write_text(CSV_HEADER + "\n", encoding="utf-8")
    (sp.parent / (sp.stem + "_not_a_log.csv")).write_text("hello,world\n1,2\n", encoding="utf-8")


def test_a_batched_load_equals_a_file_by_file_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Also: two worker processes parse the batches (the workers receive the settings, not the environment)."""
    folder = tmp_path / "in"
    _messy_folder(folder)
    con, batched = ingest(folder, tmp_path / "batched.duckdb")
    got = snapshot(con)
    con.close()
    monkeypatch.setattr(ingest_run, "plan_batches", functools.partial(plan_batches, max_files=1))
    con, one_by_one = ingest(folder, tmp_path / "one.duckdb")
    want = snapshot(con)
    con.close()
    assert got == want
    assert [(f.source_file, f.status, f.lines_read, f.rows_accepted, f.rows_quarantined, f.rows_duplicate)
            for f in batched.files] == \
           [(f.source_file, f.status, f.lines_read, f.rows_accepted, f.rows_quarantined, f.rows_duplicate)
            for f in one_by_one.files]
    assert batched.quarantined_by_reason == one_by_one.quarantined_by_reason
    # parsed by two worker processes, in batches of 4 files, as a big night is
    monkeypatch.setattr(ingest_run, "plan_batches", functools.partial(plan_batches, max_files=4))
    monkeypatch.setattr(ingest_run, "POOL_MIN_BYTES", 0)
    con, in_workers = ingest(folder, tmp_path / "workers.duckdb", settings=Settings.defaults().model_copy(
        update={"ingest_workers": 2}))
    assert snapshot(con) == want
    con.close()
    assert [(f.source_file, f.status, f.lines_read, f.rows_accepted, f.rows_quarantined, f.rows_duplicate)
            for f in in_workers.files] == \
           [(f.source_file, f.status, f.lines_read, f.rows_accepted, f.rows_quarantined, f.rows_duplicate)
            for f in one_by_one.files]
    # and the batch really did interact: duplicates and conflicts were found
    status = {f.source_file: f for f in batched.files}
    assert status["rounds_BAC-00_late.jsonl"].rows_duplicate == 2
    assert (status["shoe_AE-0000_copy.csv"].rows_duplicate, status["shoe_AE-0000_copy.csv"].rows_quarantined) == (1, 0)
    assert batched.source_changes == one_by_one.source_changes == in_workers.source_changes == 3
    assert status["shoe_AE-0000_not_a_log.csv"].status == "unreadable"
    assert status["shoe_AE-0000_header_only.csv"].lines_read == 0
    assert batched.quarantined_by_reason["event_seq goes backwards"] >= 1


def test_files_streamed_in_small_chunks_load_as_one_batch_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path of a file too big for a batch: read, parsed and staged chunk by chunk (here 32 KiB
    chunks, so every file of the sample spans many), event_seq carried from chunk to chunk."""
    folder = tmp_path / "in"
    _messy_folder(folder)
    con, batched = ingest(folder, tmp_path / "batched.duckdb")
    want = snapshot(con)
    con.close()
    import pipelines.ingest.batch as batch

    monkeypatch.setattr(ingest_run, "BIG_FILE_BYTES", 0)  # every file is "too big": streamed on its own
    monkeypatch.setattr(ingest_run, "plan_batches", functools.partial(plan_batches, max_files=1))
    monkeypatch.setattr(batch, "iter_lines", functools.partial(batch.iter_lines, chunk_bytes=32_768))
    con, streamed = ingest(folder, tmp_path / "streamed.duckdb")
    got = snapshot(con)
    con.close()
    assert got == want
    assert [(f.source_file, f.status, f.lines_read, f.rows_quarantined) for f in streamed.files] == \
           [(f.source_file, f.status, f.lines_read, f.rows_quarantined) for f in batched.files]


def test_batches_keep_the_path_order_of_each_kind_and_their_size_bound() -> None:
    files = [InputFile(f"{k}_{i:02d}", kind, Path("."), "", size)
             for i, (k, kind, size) in enumerate([("rounds", "rounds_jsonl", 40), ("shoe", "shoe_csv", 10),
                                                   ("rounds", "rounds_jsonl", 70), ("rounds", "rounds_jsonl", 30),
                                                   ("shoe", "shoe_csv", 500), ("shoe", "shoe_csv", 5)])]
    batches = plan_batches(files, max_bytes=100)
    assert [[f.rel for f in b] for b in batches] == [
        ["rounds_00"], ["rounds_02", "rounds_03"], ["shoe_01"], ["shoe_04"], ["shoe_05"]]
    assert [[f.rel for f in b] for b in plan_batches(files, max_bytes=1000, max_files=2)] == [
        ["rounds_00", "rounds_02"], ["rounds_03"], ["shoe_01", "shoe_04"], ["shoe_05"]]


def test_batch_line_numbers_map_back_to_each_file() -> None:
    """File k's physical line L is base_k + L; relabel gives back (file, L)."""
    names = pl.Series(["a.jsonl", "b.jsonl", "c.jsonl"])
    bases = pl.Series([0, 3, 4], dtype=pl.Int64)  # a has 3 lines, b 1, c 2
    part = Part(LineChunk(1, pl.Series([], dtype=pl.String)), None, names, bases, bases + 1)
    frame = pl.DataFrame({"source_file": ["?"] * 6, "source_line": [1, 2, 3, 4, 5, 6]})
    assert part.relabel(frame).rows() == [("a.jsonl", 1), ("a.jsonl", 2), ("a.jsonl", 3), ("b.jsonl", 1),
                                          ("c.jsonl", 1), ("c.jsonl", 2)]


def test_batches_are_bounded_by_lines_too_and_a_file_of_many_lines_is_streamed() -> None:
    """What a parse holds grows with the lines that fail, whatever their bytes (docs/ingest.md): a batch takes files
    up to a number of lines as well, and a file of more lines than that is read chunk by chunk as a big one is."""
    from pipelines.ingest.plan import is_big

    def f(name: str, lines: int, size: int = 100) -> InputFile:
        return InputFile(name, "rounds_jsonl", Path("."), "", size, prefix_bytes=size, prefix_lines=lines)

    files = [f("a", 40), f("b", 50), f("c", 20), f("d", 500, size=600), f("e", 5)]
    bound = {"rounds_jsonl": 100, "shoe_csv": 1_000}
    assert [[x.rel for x in b] for b in plan_batches(files, max_bytes=10_000, max_lines=bound)] == [
        ["a", "b"], ["c"], ["d"], ["e"]]
    assert is_big((files[3],), max_bytes=10_000, max_lines=bound)
    assert not is_big((files[0],), max_bytes=10_000, max_lines=bound)
    # each kind has its own bound: a device line that fails costs less than a round line that does
    assert not is_big((InputFile("d.csv", "shoe_csv", Path("."), "", 600, prefix_bytes=600, prefix_lines=500),),
                      max_bytes=10_000, max_lines=bound)
    # lines to read: those of a grown file from where its last read ended, and a last line without its end
    grown = InputFile("g", "shoe_csv", Path("."), "", 130, start_byte=100, first_line=8, prefix_bytes=120,
                      prefix_lines=12)
    assert grown.lines_to_read == 12 - 7 + 1


def test_files_streamed_in_chunks_of_a_few_lines_load_as_one_batch_does(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of more lines than a batch holds streams in chunks of that many lines, whatever its bytes; event_seq is
    carried across each cut (the long log's repeated first event is found going backwards)."""
    folder = tmp_path / "in"
    _messy_folder(folder)
    con, batched = ingest(folder, tmp_path / "batched.duckdb")
    want = snapshot(con)
    con.close()
    import pipelines.ingest.batch as batch

    monkeypatch.setattr(ingest_run, "BATCH_LINES", {"rounds_jsonl": 25, "shoe_csv": 25})
    monkeypatch.setattr(batch, "CHUNK_LINES", {"rounds_jsonl": 25, "shoe_csv": 25})
    seen: list[int] = []
    real = batch.read_big_file

    def spy(*a, **k):
        for part in real(*a, **k):
            seen.append(len(part.chunk))
            yield part
    monkeypatch.setattr("pipelines.ingest.parse.read_big_file", spy)
    con, streamed = ingest(folder, tmp_path / "streamed.duckdb")
    got = snapshot(con)
    con.close()
    assert got == want
    # the gaming days the audit's scope reads are recorded from a streamed file's bytes as from a whole one's
    assert [(f.source_file, f.status, f.lines_read, f.rows_quarantined, f.gaming_days) for f in streamed.files] == \
           [(f.source_file, f.status, f.lines_read, f.rows_quarantined, f.gaming_days) for f in batched.files]
    assert any(f.gaming_days for f in streamed.files)
    assert len(seen) > 20 and max(seen) <= 25
    assert streamed.quarantined_by_reason["event_seq goes backwards"] == batched.quarantined_by_reason[
        "event_seq goes backwards"] >= 1
