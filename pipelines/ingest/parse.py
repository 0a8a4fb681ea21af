"""Stage 4: a batch's lines parsed and judged, ready to load; touches no database but an in-memory one of its own.

Each part of a batch (``batch``: many small files as one chunk, or one chunk of a big file) goes through its
format's parser (``shoe_csv``, ``rounds_jsonl``); the rows come back under each file's own ``source_file`` and
``source_line``, with every failing line as a quarantine row. This runs in a parse worker (``parallel``) or in
the writer's process; either way it sees only the files and its own DuckDB connection, which holds no evidence.
The files' gaming days, by the audit scope's rule, are recorded from the bytes as they are read (``days``): the scope
then reads no loaded file again.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator

import duckdb
import polars as pl

from pipelines.ingest.batch import Part, read_big_file, read_small_files
from pipelines.ingest.days import DaysScan
from pipelines.ingest.quarantine import to_quarantine
from pipelines.ingest.records import InputFile, Kind, ParseOptions, Parsed
from pipelines.ingest.rounds_jsonl import RoundsParser
from pipelines.ingest.shoe_csv import ShoeParser


def _parsed_parts(parts, files: tuple[InputFile, ...], options: ParseOptions, con: duckdb.DuckDBPyConnection,
                  streamed: bool) -> Iterator[tuple[Part, list[tuple[str, pl.DataFrame]], Counter]]:
    """Parse each part; yield it with its frames (relabelled to each file's own lines) and its reasons."""
    kind = files[0].kind
    shoe: dict[tuple[str, ...], ShoeParser] = {}
    # the parsers name the rows after the first file (the core checks want a name); relabel corrects it
    rounds = RoundsParser(con, files[0].rel, options.day_start_minutes, options.max_amount) \
        if kind == Kind.ROUNDS_JSONL else None
    for part in parts:
        if kind == Kind.SHOE_CSV:
            key = tuple(part.header)
            if key not in shoe or not streamed:  # one file's chunks share a parser (it carries event_seq)
                shoe[key] = ShoeParser(files[0].rel, part.header, file_starts=None if streamed else part.starts, con=con)
            events, failures, raw = shoe[key].parse(part.chunk)
            frames = [("events", part.relabel(events))]
        else:
            r, w, a, failures, raw = rounds.parse(part.chunk)
            frames = [("rounds", part.relabel(r)), ("wagers", part.relabel(w)), ("actions", part.relabel(a))]
        q = part.relabel(to_quarantine(failures, raw, files[0].rel, kind))
        yield part, frames + [("quarantine", q)], Counter(q["reason"].to_list())


def _scans(options: ParseOptions):
    """How a file's days are scanned: for the kinds ``options.days_of`` names (see ``ParseOptions``)."""
    def scan(f: InputFile) -> DaysScan | None:
        return DaysScan(f.kind, f.size, options.day_start_minutes) if f.kind in options.days_of else None
    return scan


def parse_small_batch(files: tuple[InputFile, ...], options: ParseOptions, con: duckdb.DuckDBPyConnection) -> Parsed:
    """A batch of small files, read and parsed whole."""
    parts, unreadable = read_small_files(files, _scans(options))
    frames: list[tuple[str, pl.DataFrame]] = []
    reasons: Counter = Counter()
    lines_read: Counter = Counter()
    days: dict = {}
    for part, found, why in _parsed_parts(parts, files, options, con, False):
        frames += found
        reasons.update(why)
        lines_read.update(part.lines_read)
        days.update(part.days)
    return Parsed(tuple(frames), unreadable, reasons, lines_read, sum(f.bytes_to_read for f in files), days)


def parse_big_file(f: InputFile, options: ParseOptions, con: duckdb.DuckDBPyConnection,
                   chunk_bytes: int | None = None) -> Iterator[Parsed]:
    """A file too big for a batch, chunk by chunk (memory bounded by the chunk): one :class:`Parsed` each.
    Raises ``UnreadableFile`` when it is not lines of its format at all."""
    for part, found, why in _parsed_parts(read_big_file(f, chunk_bytes, _scans(options)), (f,), options, con, True):
        read = int(part.chunk.lines.str.len_bytes().sum() or 0) + len(part.chunk)  # bytes, as the bar counts
        yield Parsed(tuple(found), {}, why, Counter(part.lines_read), read, part.days)
