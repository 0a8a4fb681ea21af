"""Stage 3: the files to read, in batches of one kind: the loader's fixed costs paid per batch, not per file.

A big floor's night is thousands of files of about a megabyte each (one per table and log). Each parse,
validation, staging and commit has a fixed cost of its own (SQL statements, polars passes, the models'
checks), and paid per file it dominated the run: measured on a simulated 1,000,000-round night (1,976
files), 0.37 CPU s per file, 8.5x the bare DuckDB load. So files of one kind are taken in path order into
batches of up to ``BATCH_BYTES``; a batch is read as one chunk of lines, parsed once, staged once and
committed in one transaction. A file bigger than that is a batch of its own, and one bigger than ``BIG_FILE_BYTES``
is read in chunks.

A batch is bounded by its lines too (``BATCH_LINES``, per kind, counted by the screen's pass over the bytes): what a
parse holds grows with the lines that fail, whatever their bytes, so a file of more lines than that is read, parsed and
staged in chunks of at most that many lines, as a big file is. The simulator's device logs (about 80 bytes a line) fill
a batch of 32 MiB with about 410,000 lines, its round logs (1.4 KB a line) with about 23,000: neither reaches its bound.
"""

from __future__ import annotations

from collections.abc import Mapping

from pipelines.ingest.lines import CHUNK_BYTES, CHUNK_LINES
from pipelines.ingest.records import InputFile, Kind

#: small files are put together up to this: a parse worker holds about 15-17 times its batch at its peak (the
#: 1,000,000-round night's ingest peaked at 2.93 GB for the process tree with batches of 64 MiB, the two workers 1.0-1.1
#: GB each; at 2.07-2.11 GB with 32 MiB, for 2-4 % more CPU and the same wall time: docs/sizing.md)
BATCH_BYTES = 32 << 20
BIG_FILE_BYTES = CHUNK_BYTES  # a file bigger than a chunk is read, parsed and loaded chunk by chunk
BATCH_FILES = 1_000
BATCH_LINES = CHUNK_LINES  # so is a file of more lines than a chunk of its kind holds


def is_big(batch: tuple[InputFile, ...], max_bytes: int = BIG_FILE_BYTES,
           max_lines: Mapping[str, int] = BATCH_LINES) -> bool:
    """A batch of one file too big to read at once (its bytes or its lines): read, parsed and loaded chunk by chunk."""
    return len(batch) == 1 and (batch[0].bytes_to_read > max_bytes or batch[0].lines_to_read > max_lines[batch[0].kind])


def plan_batches(files: tuple[InputFile, ...] | list[InputFile], max_bytes: int = BATCH_BYTES,
                 max_files: int = BATCH_FILES, max_lines: Mapping[str, int] = BATCH_LINES,
                 ) -> list[tuple[InputFile, ...]]:
    """Consecutive files of one kind (in the given order) into batches of at most ``max_bytes`` and ``max_lines`` (of
    that kind).

    The order is kept within a kind, so of two versions of a round the later path's is the later one.
    Shoe and round files never interact, so each kind is batched on its own.
    """
    batches: list[tuple[InputFile, ...]] = []
    for kind in (Kind.ROUNDS_JSONL, Kind.SHOE_CSV):
        current: list[InputFile] = []
        size = lines = 0
        for f in (f for f in files if f.kind == kind):
            if current and (size + f.bytes_to_read > max_bytes or lines + f.lines_to_read > max_lines[kind]
                            or len(current) >= max_files):
                batches.append(tuple(current))
                current, size, lines = [], 0, 0
            current.append(f)
            size += f.bytes_to_read
            lines += f.lines_to_read
        if current:
            batches.append(tuple(current))
    return batches
