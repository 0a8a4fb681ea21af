"""Many small files loaded as one: the loader's fixed costs paid per batch, not per file.

A big floor's night is thousands of files of about a megabyte each (one per table and log). Each
parse, validation, staging and commit has a fixed cost of its own (SQL statements, polars passes,
the models' checks), and paid per file it dominated the run: measured on a simulated 1,000,000-
round night (1,976 files), 0.37 CPU s per file, 8.5x the bare DuckDB load. So files of one kind
are taken in path order into batches of up to ``BATCH_BYTES``; a batch is read as one chunk of
lines, parsed once, staged once and committed in one transaction.

Lines are numbered across the batch: physical line ``L`` of the batch's ``k``-th file is
``base_k + L``, where ``base_k`` counts the lines of the files before it. The parsers see one
chunk with those numbers as ``source_line``; ``relabel`` turns them back into each file's own
``source_file`` and ``source_line`` before anything is stored. A file too big for a batch is a
batch of its own, read in chunks, its lines numbered as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import polars as pl

from pipelines.ingest.lines import CHUNK_BYTES, LineChunk, UnreadableFile, iter_lines
from pipelines.ingest.shoe_csv import read_header

BATCH_BYTES = CHUNK_BYTES  # the size of a chunk: the memory a parse is known to need
BATCH_FILES = 1_000


@dataclass(frozen=True)
class InputFile:
    """A file found in the input folder, hashed and screened, to be loaded."""

    rel: str  # path relative to the input folder, '/' separators: the rows' source_file
    kind: str  # shoe_csv | rounds_jsonl
    path: Path
    sha256: str
    size: int


def plan_batches(files: list[InputFile], max_bytes: int = BATCH_BYTES,
                 max_files: int = BATCH_FILES) -> list[list[InputFile]]:
    """Consecutive files of one kind (in the given order) into batches of at most ``max_bytes``.

    The order is kept within a kind, so the first copy of a duplicated round is still the copy
    of the earlier path. Shoe and round files never interact, so each kind is batched on its own.
    """
    batches: list[list[InputFile]] = []
    for kind in ("rounds_jsonl", "shoe_csv"):
        current: list[InputFile] = []
        size = 0
        for f in (f for f in files if f.kind == kind):
            if current and (size + f.size > max_bytes or len(current) >= max_files):
                batches.append(current)
                current, size = [], 0
            current.append(f)
            size += f.size
        if current:
            batches.append(current)
    return batches


@dataclass
class Part:
    """Lines of one or more files, parsed in one call: the numbers map back with ``relabel``."""

    chunk: LineChunk
    header: list[str] | None  # the CSV header shared by the part's files (None for JSONL)
    names: pl.Series  # source_file of each file in the part
    bases: pl.Series  # the number added to each file's physical line numbers
    starts: pl.Series  # the first number of each file (bases + 1): what search_sorted looks up
    lines_read: dict[str, int] = field(default_factory=dict)  # per file, its header not counted

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


def _file_lines(f: InputFile) -> LineChunk | None:
    """Every line of a small file as one chunk (None for an empty file)."""
    chunks = list(iter_lines(f.path))
    if len(chunks) <= 1:
        return chunks[0] if chunks else None
    return LineChunk(1, *_concat(chunks))


def _header_of(chunk: LineChunk | None) -> list[str]:
    if chunk is None:
        raise UnreadableFile("empty file: no header line")
    if 0 in chunk.not_utf8 or 0 in chunk.too_long:
        raise UnreadableFile("first line (the header) is not readable UTF-8 text")
    return read_header(chunk.lines[0])


def _merge(items: list[tuple[InputFile, LineChunk]], header: list[str] | None) -> Part:
    """Files' chunks (headers already removed for CSV) -> one part numbered across the files."""
    numbers, names, bases, lines_read = [], [], [], {}
    base = 0
    skip = 1 if header is not None else 0  # a CSV chunk here starts at physical line 2
    for f, c in items:
        n = len(c)
        names.append(f.rel)
        bases.append(base)
        lines_read[f.rel] = n
        numbers.append(pl.int_range(base + 1 + skip, base + 1 + skip + n, eager=True, dtype=pl.Int64))
        base += n + skip
    chunk = LineChunk(1, *_concat([c for _, c in items]),
                      pl.concat(numbers) if numbers else pl.Series([], dtype=pl.Int64))
    b = pl.Series("bases", bases, dtype=pl.Int64)
    return Part(chunk, header, pl.Series("names", names, dtype=pl.String), b, b + 1, lines_read)


def read_small_files(files: list[InputFile]) -> tuple[list[Part], dict[str, str]]:
    """The lines of a batch of small files as parts (one per CSV header layout; one for JSONL),
    and the files that cannot be read as lines at all, with their one-line reason."""
    unreadable: dict[str, str] = {}
    by_header: dict[tuple[str, ...] | None, list[tuple[InputFile, LineChunk]]] = {}
    for f in files:
        try:
            chunk = _file_lines(f)
            if f.kind == "shoe_csv":
                header = tuple(_header_of(chunk))
                chunk = chunk.without_first()
            else:
                header = None
                if chunk is None:
                    chunk = LineChunk(1, pl.Series("raw", [], dtype=pl.String))
        except UnreadableFile as exc:
            unreadable[f.rel] = str(exc)
            continue
        except OSError as exc:
            unreadable[f.rel] = f"cannot read the file: {exc.strerror or exc}"
            continue
        by_header.setdefault(header, []).append((f, chunk))
    parts = [_merge(items, list(h) if h is not None else None) for h, items in by_header.items()]
    return parts, unreadable


def read_big_file(f: InputFile) -> Iterator[Part]:
    """A file too big for a batch, chunk by chunk, numbered as it is (raises UnreadableFile)."""
    names = pl.Series("names", [f.rel], dtype=pl.String)
    zero = pl.Series("bases", [0], dtype=pl.Int64)
    header: list[str] | None = None
    seen = False
    for chunk in iter_lines(f.path):
        if f.kind == "shoe_csv" and not seen:
            header = _header_of(chunk)
            chunk = chunk.without_first()
        seen = True
        yield Part(chunk, header, names, zero, zero + 1, {f.rel: len(chunk)})
    if f.kind == "shoe_csv" and not seen:
        raise UnreadableFile("empty file: no header line")
