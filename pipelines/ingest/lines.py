"""Read a file as numbered lines, in bounded chunks, whatever its bytes are.

Why not a CSV/JSON reader: those skip blank lines, stop at the first undecodable byte or lose the
line numbers, and an auditor needs every physical line accounted for with its number. Here a
line is what lies between two ``\\n`` (a trailing ``\\r`` is a CRLF line end and is removed; a
final line without ``\\n`` is still a line). The file's UTF-8 BOM is dropped, and one starting any line (files
joined together). A line that is not
valid UTF-8 is decoded with replacement characters and marked; a line longer than
``MAX_LINE_BYTES`` is marked and only its first ``RAW_KEEP_BYTES`` are kept, so a file with no line
ends at all cannot exhaust memory. A chunk is decoded and split by ``str.split`` in C (measured
faster here than polars' ``str.split().explode()``); no Python loop per line unless the chunk has
an undecodable byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import polars as pl

from pipelines.ingest.quarantine import empty_failures, failures_at

MAX_LINE_BYTES = 1 << 20  # 1 MiB: a round with a thousand wagers is ~150 KB
RAW_KEEP_BYTES = 1 << 16  # what the quarantine keeps of a line that is too long
CHUNK_BYTES = 64 << 20
#: a chunk of a file of each kind holds at most this many lines, whatever their bytes. A line that fails its checks costs
#: ~5-8 KB at the parse's peak (its failures, one per field, and their details): 64 MiB of 8-byte round lines, each
#: lacking eight required fields, took a parse to 21.7 GB before the kernel killed it. 150,000 such round lines peak at
#: ~1.2 GB, 450,000 device lines of empty fields at ~1.4 GB (benchmarks.failing_lines). A 32 MiB batch of the
#: simulator's device logs holds ~410,000 lines, and its round logs ~23,000: neither is cut (150,000 device lines a
#: batch cost the 1,000,000-round night's ingest 4 % more CPU: docs/ingest.md, "Hostile input and unlucky runs")
CHUNK_LINES = {"rounds_jsonl": 150_000, "shoe_csv": 450_000}
BOM = b"\xef\xbb\xbf"
_PLAIN_BYTES = bytes(range(0x20, 0x7F)) + b"\n\r"  # an ASCII text of these alone holds no control character


class UnreadableFile(Exception):
    """The file cannot be read as lines of its format at all; the message is the one-line reason, ``code`` its
    ``schemas.reasons.FILE_REASONS`` code."""

    def __init__(self, message: str, code: str = "csv_no_header") -> None:
        super().__init__(message)
        self.code = code


@dataclass
class LineChunk:
    """Lines of a file. ``lines[i]`` is physical line ``first_line + i``, unless ``numbers`` says
    otherwise (a batch of several files numbers its lines itself: ``pipelines.ingest.batch``)."""

    first_line: int
    lines: pl.Series  # String, without line ends
    not_utf8: list[int] = field(default_factory=list)  # offsets in this chunk
    too_long: dict[int, int] = field(default_factory=dict)  # offset -> length in bytes
    numbers: pl.Series | None = None  # Int64, one per line, when not first_line + i
    # whether a line may hold a control or invisible character (``schemas.rules.CONTROL_TEXT``): False only when the
    # decoded bytes are ASCII with no control byte but the line end (then no field needs the check: the device CSV
    # skips it, 0.09 CPU s a 200,000-round night, for a 0.03 s look at the bytes)
    controls: bool = True

    def __len__(self) -> int:
        return len(self.lines)

    def line_numbers(self) -> pl.Series:
        if self.numbers is not None:
            return self.numbers.alias("source_line")
        return pl.int_range(self.first_line, self.first_line + len(self), eager=True, dtype=pl.Int64).alias("source_line")

    def without_first(self) -> "LineChunk":
        """The chunk without its first line (a CSV header)."""
        return LineChunk(
            self.first_line + 1, self.lines.slice(1),
            [i - 1 for i in self.not_utf8 if i > 0], {i - 1: v for i, v in self.too_long.items() if i > 0},
            None if self.numbers is None else self.numbers.slice(1), self.controls,
        )


def screen(chunk: LineChunk) -> tuple[pl.DataFrame, list[pl.DataFrame], pl.DataFrame]:
    """The judgement every line gets before its format is parsed, the same for CSV and JSONL.

    Returns ``raw`` (source_line, raw: every line, for the quarantine), the failures found here
    (not UTF-8, too long, blank) and the lines left to parse (source_line, raw).
    """
    n = len(chunk)
    raw = pl.DataFrame({"source_line": chunk.line_numbers(), "raw": chunk.lines})
    failures = [empty_failures()]
    bad = pl.Series("bad", [False] * n, dtype=pl.Boolean)
    if chunk.not_utf8:
        idx = pl.Series(chunk.not_utf8, dtype=pl.UInt32)
        failures.append(failures_at(raw["source_line"].gather(idx), "not_utf8"))
        bad = bad.scatter(idx, True)
    if chunk.too_long:
        idx = pl.Series(list(chunk.too_long), dtype=pl.UInt32)
        failures.append(failures_at(raw["source_line"].gather(idx), "line_too_long",
                                    pl.Series([f"{v} bytes" for v in chunk.too_long.values()])))
        bad = bad.scatter(idx, True)
    # the lines' text stripped once, and the chunk copied by a filter only when some line is set aside here
    blank = (raw["raw"].str.strip_chars() == "") & ~bad
    failures.append(failures_at(raw["source_line"].filter(blank), "blank_line"))
    keep = ~(bad | blank)
    todo = raw if keep.all() else raw.filter(keep)
    return raw, failures, todo


def _decode(block: bytes, first_line: int, look_for_controls: bool = True) -> LineChunk:
    """Decode a block of complete lines (no final ``\\n``) and split it into lines. ``look_for_controls``: tell
    whether a line may hold a control or invisible character (``LineChunk.controls``; else it says "may")."""
    not_utf8: list[int] = []
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        parts = block.split(b"\n")
        decoded = []
        for i, part in enumerate(parts):
            try:
                decoded.append(part.decode("utf-8"))
            except UnicodeDecodeError:
                decoded.append(part.decode("utf-8", "replace"))
                not_utf8.append(i)
        text = "\n".join(decoded)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):
            text = text[:-1]
    if "\ufeff" in text:  # a BOM starting a line: files joined together; dropped as at the file's start (elsewhere in
        text = text.replace("\n\ufeff", "\n").removeprefix("\ufeff")  # a line it is an invisible character, refused)
    lines = pl.Series("raw", text.split("\n"), dtype=pl.String)
    too_long: dict[int, int] = {}
    lengths = lines.str.len_bytes()
    if len(lengths) and lengths.max() > MAX_LINE_BYTES:
        idx = (lengths > MAX_LINE_BYTES).arg_true().to_list()
        for i in idx:
            too_long[i] = int(lengths[i])
        lines = lines.scatter(idx, [lines[i][: RAW_KEEP_BYTES] for i in idx])
    controls = not (look_for_controls and text.isascii() and not block.translate(None, _PLAIN_BYTES))
    return LineChunk(first_line, lines, not_utf8, too_long, controls=controls)


def _long_line(prefix: bytes, length: int, first_line: int) -> LineChunk:
    text = prefix[:RAW_KEEP_BYTES].decode("utf-8", "replace")
    return LineChunk(first_line, pl.Series("raw", [text], dtype=pl.String), [], {0: length})


def _skip_to_newline(read, data: bytes) -> tuple[int, bytes, bool]:
    """Consume a line that is too long. Returns (its length, the bytes after its newline, found)."""
    length = len(data)
    while True:
        block = read(CHUNK_BYTES)
        if not block:
            return length, b"", False
        cut = block.find(b"\n")
        if cut >= 0:
            return length + cut, block[cut + 1:], True
        length += len(block)


def _blocks(read, chunk_bytes: int, at_file_start: bool) -> Iterator[bytes]:
    """The blocks ``read(n)`` gives, the file's BOM dropped from the first when reading from the file's start: that
    block is read whole enough to hold a BOM, and one that was only the BOM is not taken for the file's end. Each
    block is read only when asked for (a reader may read between blocks); an empty block is the end."""
    block = read(max(chunk_bytes, len(BOM)) if at_file_start else chunk_bytes)
    if at_file_start and block.startswith(BOM):
        block = block[len(BOM):] or read(chunk_bytes)
    while True:
        yield block
        if not block:
            return
        block = read(chunk_bytes)


def iter_lines(path: Path, chunk_bytes: int = CHUNK_BYTES, start: int = 0, end: int | None = None,
               first_line: int = 1, look_for_controls: bool = False,
               seen: Callable[[bytes], None] | None = None, chunk_lines: int | None = None) -> Iterator[LineChunk]:
    """Every physical line of the file between the byte offsets ``start`` (a line's start; ``first_line`` is its
    number) and ``end`` (the size the file had when it was screened: bytes written since are left for the next
    run), in chunks of about ``chunk_bytes`` and, when ``chunk_lines`` is given, of at most that many lines (a chunk
    read is yielded in slices). ``look_for_controls``: see :func:`_decode` (the device CSV asks; the
    round log's control characters come as escapes, which only its fields show). ``seen``: called with every block
    of bytes as read, in order (the parse records the file's gaming days from them: ``pipelines.ingest.days``)."""
    with open(path, "rb") as f:
        f.seek(start)
        left = [None if end is None else max(0, end - start)]

        def read(n: int) -> bytes:
            if left[0] is None:
                block = f.read(n)
            else:
                block = f.read(min(n, left[0]))
                left[0] -= len(block)
            if seen is not None:
                seen(block)
            return block

        carry = b""
        line_no = first_line
        blocks = _blocks(read, chunk_bytes, start == 0)
        while True:
            block = next(blocks)
            if not block:
                break
            data = carry + block if carry else block
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) > MAX_LINE_BYTES:
                    length, rest, found = _skip_to_newline(read, data)
                    yield _long_line(data, length, line_no)
                    line_no += 1
                    carry = rest
                    if not found:
                        carry = b""
                        break
                    continue
                carry = data
                continue
            complete, carry = data[:cut], data[cut + 1:]
            chunk = _decode(complete, line_no, look_for_controls)
            line_no += len(chunk)
            yield from _sliced(chunk, chunk_lines)
        if carry:
            yield from _sliced(_decode(carry, line_no, look_for_controls), chunk_lines)


def _sliced(chunk: LineChunk, most: int | None) -> Iterator[LineChunk]:
    """``chunk`` in consecutive slices of at most ``most`` lines (itself when it holds no more)."""
    if most is None or len(chunk) <= most:
        yield chunk
        return
    for at in range(0, len(chunk), most):
        end = min(at + most, len(chunk))
        yield LineChunk(
            chunk.first_line + at, chunk.lines.slice(at, end - at),
            [i - at for i in chunk.not_utf8 if at <= i < end],
            {i - at: v for i, v in chunk.too_long.items() if at <= i < end},
            None if chunk.numbers is None else chunk.numbers.slice(at, end - at), chunk.controls,
        )


def _one_line(raw: bytes) -> str:
    """One line's bytes (without its ``\\n``) as :func:`_decode` gives it: UTF-8, else with replacement characters;
    a CRLF line end's ``\\r`` removed; a BOM starting it dropped; cut to ``RAW_KEEP_BYTES`` characters when longer
    than ``MAX_LINE_BYTES`` bytes."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
    if text.endswith("\r"):
        text = text[:-1]
    text = text.removeprefix("\ufeff")
    if len(text) * 4 > MAX_LINE_BYTES and len(text.encode("utf-8")) > MAX_LINE_BYTES:
        text = text[:RAW_KEEP_BYTES]
    return text


def lines_at(path: Path, numbers: set[int], chunk_bytes: int = 1 << 20) -> dict[int, str]:
    """The physical lines ``numbers`` (1-based) of the file, as :func:`iter_lines` reads them (the same text), read up
    to the last one wanted: each block is split into lines only as far as it must be, and only the wanted lines are
    decoded. (``iter_lines`` decodes and splits every line of each block: re-reading a night's quarantined lines from
    their 900 files, 1,300 lines in all, took ~2 CPU s.) A file holding a line too long to be a line
    (``MAX_LINE_BYTES`` with no line end within a block) is read by :func:`iter_lines` itself."""
    if not numbers:
        return {}
    wanted = sorted(n for n in numbers if n >= 1)
    out: dict[int, str] = {}
    if not wanted:
        return out
    last = wanted[-1]
    at = 0  # index into wanted
    with open(path, "rb") as f:
        carry = b""
        line_no = 1
        blocks = _blocks(f.read, chunk_bytes, True)
        while at < len(wanted):
            block = next(blocks)
            if not block:
                if carry and wanted[at] == line_no:
                    out[line_no] = _one_line(carry)
                break
            data = carry + block if carry else block
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) > MAX_LINE_BYTES:
                    return _lines_by_chunks(path, set(wanted))
                carry = data
                continue
            complete, carry = data[:cut], data[cut + 1:]
            # the block's lines line_no ... line_no + count; split only as far as the last one wanted of them
            count = complete.count(b"\n") + 1
            upto = min(last, line_no + count - 1)
            if wanted[at] <= upto:
                parts = complete.split(b"\n", upto - line_no + 1)
                while at < len(wanted) and wanted[at] <= upto:
                    raw = parts[wanted[at] - line_no]
                    if len(raw) > MAX_LINE_BYTES:
                        return _lines_by_chunks(path, set(wanted))
                    out[wanted[at]] = _one_line(raw)
                    at += 1
            line_no += count
    return out


def _lines_by_chunks(path: Path, numbers: set[int]) -> dict[int, str]:
    """:func:`lines_at` through :func:`iter_lines` (the reference, and the way for a file with an over-long line)."""
    out: dict[int, str] = {}
    last = max(numbers)
    for chunk in iter_lines(path):
        for n, text in zip(chunk.line_numbers().to_list(), chunk.lines.to_list()):
            if n in numbers:
                out[n] = text
        if len(chunk) and chunk.line_numbers().max() >= last:
            break
    return out
