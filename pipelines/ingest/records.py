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

    @property
    def lines_to_read(self) -> int:
        """The physical lines from ``first_line`` on, counted by the screen's pass over the bytes (``prefix_lines``:
        the line ends; a last line without one counts too)."""
        return max(0, self.prefix_lines - (self.first_line - 1) + (1 if self.size > self.prefix_bytes else 0))


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
    sha256: str = ""  # of the file's content as this run found it ('' when it could not be hashed)
    # a loaded file's gaming days, by the audit scope's rule over its whole text (pipelines.ingest.days), or None when
    # they were not recorded (a device log when the run loads a round log, a file that changed while it was read)
    gaming_days: frozenset | None = None


@dataclass(frozen=True)
class Screened:
    """``screen``'s answer: the files to read, in order, and what became of the others."""

    to_load: tuple[InputFile, ...]
    skipped: tuple[FileOutcome, ...]


@dataclass(frozen=True)
class ParseOptions:
    """What a parse needs besides the lines (picklable: it travels to the parse workers). ``days_of``: the kinds of
    file whose gaming days the parse records for the audit's scope (``pipelines.ingest.days``): the round logs, or
    the device logs when the run loads no round log (the scope reads a device log's days only then)."""

    day_start_minutes: int
    max_amount: int
    days_of: tuple[str, ...] = ("rounds_jsonl",)


@dataclass(frozen=True)
class Parsed:
    """A part of a batch read and parsed: (staging table, rows) in order, and what was found.

    ``bytes_read`` is what the progress bar advances by."""

    frames: tuple[tuple[str, pl.DataFrame], ...]
    unreadable: dict[str, tuple[str, str]]  # file -> (reason code, one-line reason): not readable as lines
    reasons: Counter  # quarantine reason -> lines
    lines_read: Counter  # file -> lines
    bytes_read: int = 0
    days: dict = field(default_factory=dict)  # file -> its gaming days (a frozenset), for the files wholly read by now

    def __getstate__(self) -> dict:
        """A parse worker hands its frames to the writer as Arrow IPC in shared memory (``_to_shared``): written once,
        by pyarrow, into an anonymous memory file whose descriptor crosses to the writer; the writer maps it and
        reads the frames in place. Through the pipe, the frames' bytes were copied six times (polars' IPC writer,
        the bytes taken from it, the pickle, the pipe's two ends, the bytes unpickled): for the 200,000-round
        night's 432 MB of frames 0.50 + 0.16 -> 0.20 + 0.09 CPU s (worker + writer; the pipe's copies not counted,
        ``benchmarks.ingest_stages``). Where the system has no memory files, the IPC bytes go through the pipe."""
        state = dict(self.__dict__)
        state["frames"] = _to_shared(self.frames)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        state["frames"] = _from_shared(state["frames"])
        for key, value in state.items():
            object.__setattr__(self, key, value)


def _write_ipc(frames, sink) -> tuple[tuple[int, int], ...]:
    """Each frame as an Arrow IPC file, one after the other into ``sink`` (pyarrow's writer: 0.05 against polars'
    0.13 CPU s for a 200,000-round night's frames); the (offset, size) of each."""
    import pyarrow as pa

    spans = []
    for _, frame in frames:
        table = frame.to_arrow(compat_level=pl.CompatLevel.newest())
        start = sink.tell()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        spans.append((start, sink.tell() - start))
    return tuple(spans)


def _to_shared(frames) -> tuple:
    """(names, where the bytes are, the (offset, size) of each frame's IPC file in them): the bytes are a
    ``multiprocessing`` handle to a memory file (``os.memfd_create``; it ends with its last descriptor and mapping,
    so a killed run leaves no memory behind), or the bytes themselves where there is no such file. The file is
    written with ``write`` (the kernel copies into its pages: 0.23 CPU s for those frames, against 0.38-0.41
    written through a mapping, whose every fresh page faults)."""
    import os

    import pyarrow as pa

    names = tuple(name for name, _ in frames)
    if not hasattr(os, "memfd_create"):
        sink = pa.BufferOutputStream()
        spans = _write_ipc(frames, sink)
        return names, sink.getvalue().to_pybytes(), spans
    from multiprocessing.reduction import DupFd

    fd = os.memfd_create("pitaudit-parsed", os.MFD_CLOEXEC)
    try:
        with open(fd, "wb", buffering=0, closefd=False) as file:
            spans = _write_ipc(frames, pa.PythonFile(file, mode="w"))
        return names, DupFd(fd) if sum(size for _, size in spans) else b"", spans
    finally:
        os.close(fd)


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
    # a file's blocks are placed by their offsets in the whole (its writer shared the sink): read through its end
    return tuple((name, pl.from_arrow(pa.ipc.open_file(data, footer_offset=offset + size).read_all(), rechunk=False))
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
