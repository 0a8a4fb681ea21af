"""What the ingest's stages hand one another: frozen records and the vocabularies of their statuses.

The stages (``discover`` -> ``screen`` -> ``plan`` -> ``parse`` -> ``load``, called in order by ``run``) share
nothing but these records, so each can be tested with hand-made ones and none reaches back into another.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import polars as pl


class Kind(StrEnum):
    SHOE_CSV = "shoe_csv"
    ROUNDS_JSONL = "rounds_jsonl"


class FileStatus(StrEnum):
    """What became of a file this run (``core_source_files.status`` holds the first, third and fourth)."""

    LOADED = "loaded"  # read now (a grown file: only its new lines)
    ALREADY_LOADED = "already loaded"  # its content (SHA-256) was loaded before, under whatever name
    UNREADABLE = "unreadable"  # could not be read: recorded with its reason, read again when it can be
    REFUSED = "refused"  # a symbolic link leading outside the input folder: not followed


@dataclass(frozen=True)
class FoundFile:
    """A file under the input folder whose name is an input format's (``discover``)."""

    rel: str  # path relative to the input folder, '/' separators: the rows' source_file
    kind: Kind | None  # None only for a folder (a refused link to one, or one that cannot be read)
    path: Path
    problem: tuple[str, str] | None = None  # (reason code, one-line reason): why it is not read at all


@dataclass(frozen=True)
class Fingerprint:
    """A file's content, as hashed once by ``screen``."""

    sha256: str
    size: int
    prefix_sha256: str  # of the bytes up to the last line end
    prefix_bytes: int
    prefix_lines: int
    at: tuple[tuple[int, str], ...] = ()  # (length, SHA-256 of the first length bytes), for lengths asked for


@dataclass(frozen=True)
class InputFile:
    """A file screened, to be read: from ``start_byte`` (0, or where an earlier read of it ended) to ``size``."""

    rel: str
    kind: Kind
    path: Path
    sha256: str
    size: int
    start_byte: int = 0
    first_line: int = 1  # the physical line at start_byte
    prefix_sha256: str = ""
    prefix_bytes: int = 0
    prefix_lines: int = 0

    @property
    def bytes_to_read(self) -> int:
        return self.size - self.start_byte


@dataclass(frozen=True)
class Loaded:
    """What is known before a run (``load.known_sources``, queried once): the contents already loaded, the
    prefixes of earlier reads by name (to recognise a file that grew), the unreadable files already recorded."""

    contents: frozenset[tuple[str, str]] = frozenset()  # (kind, sha256): a CSV and a JSONL of equal bytes differ
    prefixes: dict[str, tuple[tuple[int, int, str], ...]] = field(default_factory=dict)  # rel -> (bytes, lines, sha)
    # (rel, sha256) -> (reason code, error) of the files recorded unreadable or refused (sha256 '' when unhashed)
    unreadable: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class FileOutcome:
    source_file: str
    kind: str | None
    status: FileStatus
    lines_read: int = 0
    rows_accepted: int = 0
    rows_quarantined: int = 0
    rows_duplicate: int = 0
    error: str | None = None  # why not loaded (unreadable, refused); for an already loaded file, the copy it repeats
    reason_code: str | None = None
    first_line: int = 1  # > 1: a grown file, read from this line on
    recorded: bool = True  # False: an unreadable file already recorded with the same reason (a re-run)
    sha256: str = ""  # of the content not loaded ('' when it could not be hashed)


@dataclass(frozen=True)
class Screened:
    """``screen``'s answer: the files to read, in order, and what became of the others."""

    to_load: tuple[InputFile, ...]
    skipped: tuple[FileOutcome, ...]


@dataclass(frozen=True)
class ParseOptions:
    """What a parse needs besides the lines (picklable: it travels to the parse workers)."""

    day_start_minutes: int
    max_amount: int


@dataclass(frozen=True)
class Parsed:
    """A part of a batch read and parsed: (staging table, rows) in order, and what was found.

    ``bytes_read`` is what the progress bar advances by."""

    frames: tuple[tuple[str, pl.DataFrame], ...]
    unreadable: dict[str, tuple[str, str]]  # file -> (reason code, one-line reason): not readable as lines
    reasons: Counter  # quarantine reason -> lines
    lines_read: Counter  # file -> lines
    bytes_read: int = 0

    def __getstate__(self) -> dict:
        """A parse worker hands its frames to the writer as Arrow IPC in shared memory (``_to_shared``): written once,
        by pyarrow, into an anonymous memory file whose descriptor crosses to the writer; the writer maps it and
        reads the frames in place. Through the pipe, the frames' bytes were copied six times (polars' IPC writer,
        the bytes taken from it, the pickle, the pipe's two ends, the bytes unpickled): 0.46 -> 0.32 CPU s for the
        200,000-round night's 432 MB of parsed frames without the pipe, and the pipe's copies on top. Where the
        system has no memory files, the IPC bytes go through the pipe as before."""
        state = dict(self.__dict__)
        state["frames"] = _to_shared(self.frames)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        state["frames"] = _from_shared(state["frames"])
        for key, value in state.items():
            object.__setattr__(self, key, value)


def _arrow_tables(frames) -> list:
    import pyarrow as pa

    tables = [frame.to_arrow(compat_level=pl.CompatLevel.newest()) for _, frame in frames]
    sizes = []
    for table in tables:  # the IPC file's size, without writing it (a mock stream only counts)
        mock = pa.MockOutputStream()
        with pa.ipc.new_file(mock, table.schema) as writer:
            writer.write_table(table)
        sizes.append(mock.size())
    return tables, sizes


def _to_shared(frames) -> tuple:
    """(names, where the bytes are, the (offset, size) of each frame's IPC file in them): the bytes are a
    ``multiprocessing`` handle to a memory file (``os.memfd_create``; it ends with its last descriptor and mapping,
    so a killed run leaves nothing behind), or the bytes themselves where there is no such file."""
    import mmap
    import os

    import pyarrow as pa

    names = tuple(name for name, _ in frames)
    tables, sizes = _arrow_tables(frames)
    spans, at = [], 0
    for size in sizes:
        spans.append((at, size))
        at += size
    if not hasattr(os, "memfd_create") or at == 0:
        sink = pa.BufferOutputStream()
        for table in tables:
            with pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        return names, sink.getvalue().to_pybytes(), tuple(spans)
    from multiprocessing.reduction import DupFd

    fd = os.memfd_create("pitaudit-parsed", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, at)
        _write_ipc(mmap.mmap(fd, at), tables, spans)  # unmapped when the function's views of it are gone
        return names, DupFd(fd), tuple(spans)
    finally:
        os.close(fd)


def _write_ipc(view, tables: list, spans: list) -> None:
    import pyarrow as pa

    whole = memoryview(view)
    for table, (offset, size) in zip(tables, spans):  # a slice of a memoryview stays writable (pyarrow's does not)
        with pa.ipc.new_file(pa.FixedSizeBufferWriter(pa.py_buffer(whole[offset:offset + size])), table.schema) as w:
            w.write_table(table)


def _from_shared(state: tuple) -> tuple:
    """The frames ``_to_shared`` sent, read in place: Arrow's reader over the mapped bytes and polars over its
    arrays copy nothing (the mapping lives as long as a frame holds it)."""
    import mmap
    import os

    import pyarrow as pa

    names, where, spans = state
    if isinstance(where, bytes):
        data = pa.py_buffer(where)
    else:
        fd = where.detach()
        try:
            data = pa.py_buffer(mmap.mmap(fd, sum(size for _, size in spans), prot=mmap.PROT_READ))
        finally:
            os.close(fd)
    return tuple((name, pl.from_arrow(pa.ipc.open_file(data.slice(offset, size)).read_all(), rechunk=False))
                 for name, (offset, size) in zip(names, spans))


@dataclass(frozen=True)
class IngestSummary:
    files: tuple[FileOutcome, ...] = ()
    quarantined_by_reason: Counter = field(default_factory=Counter)
    source_changes: int = 0  # rounds and device events that arrived again with different content
    # (gaming_day, table_id) of the rounds read this run and of the versions they replaced (a round re-exported
    # with another bets_closed_at may leave a gaming day), sorted; the partitions of device events read without
    # their rounds are not known here (their day needs the round)
    partitions: tuple = ()

    @property
    def gaming_days(self) -> tuple:
        return tuple(sorted({day for day, _ in self.partitions}))

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def lines_read(self) -> int:
        return sum(f.lines_read for f in self.files)

    @property
    def rows_accepted(self) -> int:
        return sum(f.rows_accepted for f in self.files)

    @property
    def rows_quarantined(self) -> int:
        return sum(f.rows_quarantined for f in self.files)

    @property
    def rows_duplicate(self) -> int:
        return sum(f.rows_duplicate for f in self.files)


class Progress:
    """What the run tells whoever watches it (the CLI draws a bar); every method does nothing here."""

    def planned(self, total_bytes: int) -> None:
        pass

    def started(self, batch: tuple[InputFile, ...]) -> None:
        pass

    def advanced(self, n_bytes: int) -> None:
        pass
