"""Reading a batch's lines: many small files as one chunk, a big file chunk by chunk.

Lines are numbered across the batch: physical line ``L`` of the batch's ``k``-th file is ``base_k + L``,
where ``base_k`` is the highest number given to the files before it. The parsers see one chunk with those
numbers as ``source_line``; ``relabel`` turns them back into each file's own ``source_file`` and
``source_line`` before anything is stored. A grown file is read from the line after the part read before
(its CSV header is read from its first line), numbered as it is in the file.

As its bytes are read, a file's gaming days are recorded by the audit scope's rule (``days``): the bytes a grown
file's earlier reads loaded are read for it too (the scope's days are the whole file's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import polars as pl

from pipelines.ingest.days import DaysScan
from pipelines.ingest.lines import BOM, CHUNK_LINES, MAX_LINE_BYTES, LineChunk, UnreadableFile, iter_lines
from pipelines.ingest.records import InputFile, Kind
from pipelines.ingest.shoe_csv import read_header


@dataclass
class Part:
    """Lines of one or more files, parsed in one call: the numbers map back with ``relabel``."""

    chunk: LineChunk
    header: list[str] | None  # the CSV header shared by the part's files (None for JSONL)
    names: pl.Series  # source_file of each file in the part
    bases: pl.Series  # the number added to each file's physical line numbers
    starts: pl.Series  # the first number of each file (bases + 1): what search_sorted looks up
    lines_read: dict[str, int] = field(default_factory=dict)  # per file, its header not counted
    # per file whose every byte was read by now, the gaming days its text holds (``pipelines.ingest.days``)
    days: dict = field(default_factory=dict)

    def relabel(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Batch line numbers -> the file's own source_file and source_line (columns kept in place)."""
        if frame.is_empty() or len(self.names) == 1 and self.bases[0] == 0:
            return frame.with_columns(pl.lit(self.names[0], dtype=pl.String).alias("source_file")) \
                if "source_file" in frame.columns else frame
        idx = self.starts.search_sorted(frame["source_line"], side="right") - 1
        return frame.with_columns(
            self.names.gather(idx).alias("source_file"),
            (frame["source_line"] - self.bases.gather(idx)).alias("source_line"),
        )


def _concat(chunks: list[LineChunk]) -> tuple[pl.Series, list[int], dict[int, int]]:
    """Chunks' lines one after the other, with their not-UTF-8 and too-long offsets shifted to match."""
    offset, not_utf8, too_long = 0, [], {}
    for c in chunks:
        not_utf8 += [i + offset for i in c.not_utf8]
        too_long.update({i + offset: v for i, v in c.too_long.items()})
        offset += len(c)
    lines = pl.concat([c.lines for c in chunks]) if chunks else pl.Series("raw", [], dtype=pl.String)
    return lines, not_utf8, too_long


#: what makes a file's scan of its gaming days (None: its days are not recorded)
Scans = Callable[[InputFile], DaysScan | None]


def _scan_of(f: InputFile, scans: Scans | None) -> DaysScan | None:
    """The scan of ``f``'s days, fed already with the bytes an earlier run loaded when it grew (read here, once)."""
    scan = scans(f) if scans is not None else None
    if scan is not None and f.start_byte > 0:
        scan.feed_file(f.path, f.start_byte)
    return scan


def _lines_of(f: InputFile, chunk_bytes: int | None = None, scan: DaysScan | None = None,
              chunk_lines: int | None = None) -> Iterator[LineChunk]:
    extra = {} if chunk_bytes is None else {"chunk_bytes": chunk_bytes}
    return iter_lines(f.path, start=f.start_byte, end=f.size, first_line=f.first_line,
                      look_for_controls=f.kind == "shoe_csv", seen=None if scan is None else scan.feed,
                      chunk_lines=chunk_lines, **extra)


def _file_lines(f: InputFile, scan: DaysScan | None = None) -> LineChunk | None:
    """Every line of a small file (from where it is to be read) as one chunk (None when there is none)."""
    chunks = list(_lines_of(f, scan=scan))
    if len(chunks) <= 1:
        return chunks[0] if chunks else None
    return LineChunk(chunks[0].first_line, *_concat(chunks), controls=any(c.controls for c in chunks))


def _first_line(path: Path) -> LineChunk | None:
    """The first line of a file alone (the CSV header of a grown file read from further on)."""
    with open(path, "rb") as f:
        head = f.readline(MAX_LINE_BYTES + 1)
    if not head:
        return None
    head = head.removeprefix(BOM).removesuffix(b"\n").removesuffix(b"\r")
    try:
        return LineChunk(1, pl.Series("raw", [head.decode("utf-8")], dtype=pl.String))
    except UnicodeDecodeError:
        return LineChunk(1, pl.Series("raw", [""], dtype=pl.String), [0])


def _header_of(chunk: LineChunk | None) -> list[str]:
    if chunk is None or chunk.first_line != 1:
        raise UnreadableFile("empty file: no header line")
    if 0 in chunk.not_utf8 or 0 in chunk.too_long:
        raise UnreadableFile("first line (the header) is not readable UTF-8 text")
    return read_header(chunk.lines[0])


def _merge(items: list[tuple[InputFile, LineChunk]], header: list[str] | None) -> Part:
    """Files' chunks (headers already removed for CSV) -> one part numbered across the files."""
    numbers, names, bases, lines_read = [], [], [], {}
    base = 0
    for f, c in items:
        n = len(c)
        names.append(f.rel)
        bases.append(base)
        lines_read[f.rel] = n
        numbers.append(pl.int_range(base + c.first_line, base + c.first_line + n, eager=True, dtype=pl.Int64))
        base += c.first_line + n - 1  # the highest number this file's lines were given
    chunk = LineChunk(1, *_concat([c for _, c in items]),
                      pl.concat(numbers) if numbers else pl.Series([], dtype=pl.Int64),
                      controls=any(c.controls for _, c in items))
    b = pl.Series("bases", bases, dtype=pl.Int64)
    return Part(chunk, header, pl.Series("names", names, dtype=pl.String), b, b + 1, lines_read)


def _empty(first_line: int) -> LineChunk:
    return LineChunk(first_line, pl.Series("raw", [], dtype=pl.String))


def read_small_files(files: tuple[InputFile, ...], scans: Scans | None = None,
                     ) -> tuple[list[Part], dict[str, tuple[str, str]]]:
    """The lines of a batch of small files as parts (one per CSV header layout; one for JSONL),
    and the files that cannot be read as lines at all, with their reason (code, one line). ``scans``: whose days
    to record, and how (``Part.days``)."""
    unreadable: dict[str, tuple[str, str]] = {}
    by_header: dict[tuple[str, ...] | None, list[tuple[InputFile, LineChunk]]] = {}
    days: dict = {}
    for f in files:
        try:
            scan = _scan_of(f, scans)
            chunk = _file_lines(f, scan)
            if scan is not None and scan.days is not None:
                days[f.rel] = scan.days
            if f.kind == Kind.SHOE_CSV:
                if f.start_byte == 0:
                    header = tuple(_header_of(chunk))
                    chunk = chunk.without_first()
                else:
                    header = tuple(_header_of(_first_line(f.path)))
                    chunk = chunk if chunk is not None else _empty(f.first_line)
            else:
                header = None
                if chunk is None:
                    chunk = _empty(f.first_line)
        except UnreadableFile as exc:
            unreadable[f.rel] = (exc.code, str(exc))
            continue
        except OSError as exc:
            unreadable[f.rel] = ("file_unreadable", f"cannot read the file: {exc.strerror or exc}")
            continue
        by_header.setdefault(header, []).append((f, chunk))
    parts = [_merge(items, list(h) if h is not None else None) for h, items in by_header.items()]
    for part in parts:
        part.days = {rel: days[rel] for rel in part.lines_read if rel in days}
    return parts, unreadable


def read_big_file(f: InputFile, chunk_bytes: int | None = None, scans: Scans | None = None,
                  chunk_lines: int | None = None) -> Iterator[Part]:
    """A file too big for a batch (its bytes or its lines), chunk by chunk of at most ``chunk_lines`` lines
    (``CHUNK_LINES`` of its kind), numbered as it is (raises UnreadableFile). Its days (``scans``) come with the first
    part read after its last byte (the last part)."""
    chunk_lines = CHUNK_LINES[f.kind] if chunk_lines is None else chunk_lines
    names = pl.Series("names", [f.rel], dtype=pl.String)
    zero = pl.Series("bases", [0], dtype=pl.Int64)
    header: list[str] | None = None
    if f.kind == Kind.SHOE_CSV and f.start_byte > 0:
        header = _header_of(_first_line(f.path))
    seen = False
    scan = _scan_of(f, scans)
    for chunk in _lines_of(f, chunk_bytes, scan, chunk_lines):
        if f.kind == Kind.SHOE_CSV and not seen and header is None:
            header = _header_of(chunk)
            chunk = chunk.without_first()
        seen = True
        days = {f.rel: scan.days} if scan is not None and scan.days is not None else {}
        yield Part(chunk, header, names, zero, zero + 1, {f.rel: len(chunk)}, days)
    if f.kind == Kind.SHOE_CSV and not seen and header is None:
        raise UnreadableFile("empty file: no header line")
