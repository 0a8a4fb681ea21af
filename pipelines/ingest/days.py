"""The gaming days a file's text holds: the audit's default scope (``pipelines.audit.scope``), read from the bytes.

One rule, used twice: by the scope, which reads a file it has no record of, and by the parse (stage 4), which sees
every byte of the files it loads and records their days as it reads them, so that the scope need not read the night's
round logs a second time (on the 1,000,000-round night, 1.4 GB and 2.4-2.8 CPU s on one core at the audit's start).
The rule is the text's, not the parse's: every ``bets_closed_at`` as written, quarantined lines too; for a device log,
the first timestamp of each line. A file is taken in blocks of ``BLOCK_BYTES`` from its first byte, each cut at its
last line end; a line longer than the ingest's longest that runs past a block is skipped to its end (a file with no
line end at all is never gathered whole). :class:`LineBlocks` is that cutting, :class:`DaysScan` the rule over bytes
fed in the file's order, whatever the sizes of the reads that give them.
"""

from __future__ import annotations

import datetime as dt
import re

from pipelines.ingest.lines import MAX_LINE_BYTES  # the ingest's longest line: a longer one is quarantined, so no round's
from schemas.rules import TS_MAX, TS_MIN

# the local date and time of bets_closed_at as written (the offset that follows does not change the local time)
# (one group, the date, its separator, the hour and the minute: one bytes object a match, then cut by position)
CLOSED_AT = re.compile(rb'"bets_closed_at"\s*:\s*"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2})')
# the first timestamp of a device-log line is its ``ts``: a field of its own, first or after a comma, quoted or not (the
# header may name the columns in any order, and the CSV reader unquotes a field: a log with ``ts`` first, or quoted, was
# loaded and gave no day, so a night of device logs alone was "nothing to audit")
DEVICE_TS = re.compile(rb'^(?:[^\n]*?,)?"?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2})', re.MULTILINE)
BLOCK_BYTES = 32 * 2**20
# the gaming days an accepted instant can fall on (its offset and the day's start move it by under two days); a day
# outside them is no round's (the ingest quarantines the line) and would take the audit's margins and windows past the
# years a date holds
FIRST_DAY, LAST_DAY = TS_MIN.date() - dt.timedelta(days=2), TS_MAX.date() + dt.timedelta(days=1)


def pattern_of(kind: str) -> re.Pattern:
    """The stamps that give a file of ``kind`` its days: a round log's ``bets_closed_at``, a device log's ``ts``."""
    return CLOSED_AT if kind == "rounds_jsonl" else DEVICE_TS


def stamps_in(pattern: re.Pattern, data: bytes) -> set[bytes]:
    """The distinct ``YYYY-MM-DDTHH:MM`` texts of ``pattern`` in ``data`` (``findall`` of one group keeps the matches
    in C, one bytes object each: a night's million stamps collapse to a few thousand before any is converted; the
    scope's ``finditer`` with a tuple a match took 1.2 CPU s for the 1,000,000-round night's round logs, this ~0.7).
    A round log's lines holding a backslash are read as JSON too (:func:`escaped_stamps`)."""
    found = set(pattern.findall(data))
    if pattern is CLOSED_AT and b"\\" in data:
        found |= escaped_stamps(data)
    return found


# a line of a round log that holds a backslash (a JSON escape), and the stamp at the start of a decoded value
_ESCAPED_LINE = re.compile(rb"^[^\n\\]*\\[^\n]*", re.MULTILINE)
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}")


def escaped_stamps(data: bytes) -> set[bytes]:
    """The stamps of the round lines of ``data`` that hold a backslash, their ``bets_closed_at`` read as a JSON parser
    reads it: a key or a value written with escapes (``"bets_closed\\u005fat"``, ``"\\u0032026-11-20T..."``) is
    the same JSON, which the ingest's parser (DuckDB's) decodes and accepts, while the pattern over the text does not
    see it. Such a round was loaded and never audited: its gaming day was in no run's default scope, without a word.
    Lines that are not a JSON object are left to the ingest (it quarantines them); the first value of a key written
    twice is DuckDB's and the last Python's, and such a line is quarantined (``duplicate_key``), so either adds at
    most a day with no round. Exports write no escape in these places: the cost is one search for a backslash a
    block."""
    import json

    stamps: set[bytes] = set()
    for line in _ESCAPED_LINE.findall(data):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        closed = value.get("bets_closed_at") if isinstance(value, dict) else None
        if isinstance(closed, str) and _STAMP.match(closed):
            stamps.add(closed[:16].encode("ascii"))
    return stamps


def day_of_stamp(stamp: bytes, day_start_minutes: int) -> dt.date | None:
    """The gaming day of a ``YYYY-MM-DDTHH:MM`` text: the date, or the day before when the time is before the day's
    start; None for a text that is no date or time, or beyond the instants the ingest accepts (it quarantines the
    line)."""
    minute = int(stamp[11:13]) * 60 + int(stamp[14:16])
    try:
        day = dt.date.fromisoformat(stamp[:10].decode("ascii"))
    except ValueError:
        return None  # not a date
    if minute > 24 * 60 or not FIRST_DAY < day <= LAST_DAY:
        return None  # not a time, or beyond the instants the ingest accepts
    return day - dt.timedelta(days=1) if minute < day_start_minutes else day


# stamp -> its day (or None), per gaming-day start: the files of a night share their minutes (each of the
# 1,000,000-round night's round logs holds ~1,000 distinct stamps, the night ~1,500), so a parse worker converts each
# once (converting every file's stamps took ~0.4 of its 1.1 CPU s); emptied when it grows past _MEMO_MOST
_MEMO: dict[int, dict[bytes, dt.date | None]] = {}
_MEMO_MOST = 1 << 16


def days_of_stamps(stamps, day_start_minutes: int) -> set[dt.date]:
    """The gaming days of ``YYYY-MM-DDTHH:MM`` texts (:func:`day_of_stamp`), each text converted once a process."""
    memo = _MEMO.setdefault(day_start_minutes, {})
    new = set(stamps).difference(memo)
    if len(memo) + len(new) > _MEMO_MOST:
        memo.clear()
        new = set(stamps)
    for stamp in new:
        memo[stamp] = day_of_stamp(stamp, day_start_minutes)
    days = set(map(memo.__getitem__, stamps))
    days.discard(None)
    return days


class LineBlocks:
    """A file's blocks (each ``block_bytes`` long but the last) -> the pieces the rule reads: each block cut at its last
    line end, what follows carried onto the next; a carried line longer than ``max_line`` is dropped and the next
    blocks skipped to its end. ``push`` each block in order, then ``end`` for the last piece (the file's last line when
    it has no line end)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self.rest, self.skipping = b"", False

    def push(self, block: bytes) -> bytes:
        """The piece of complete lines this block ends (b"" when none)."""
        if self.skipping:
            end = block.find(b"\n")
            if end < 0:
                return b""
            block, self.skipping = block[end + 1:], False
        block = self.rest + block if self.rest else block
        cut = block.rfind(b"\n") + 1
        self.rest = block[cut:]
        if len(self.rest) > self.max_line:
            self.rest, self.skipping = b"", True
        return block[:cut]

    def end(self) -> bytes:
        rest, self.rest = self.rest, b""
        return rest


class DaysScan:
    """The days of one file of ``kind``, from its bytes fed in order from its first (``feed``), by the rule of the
    module docstring: the bytes are re-cut into the rule's blocks whatever the reads were, so the days are those
    the scope finds reading the file itself. ``size``: the file's length; the scan ends when that many bytes were fed
    (``done``), and a scan that did not end (the file shrank while it was read) gives no days (``days`` is None: the
    scope reads the file)."""

    def __init__(self, kind: str, size: int, day_start_minutes: int, block_bytes: int = BLOCK_BYTES,
                 max_line: int = MAX_LINE_BYTES) -> None:
        self.pattern, self.size, self.day_start_minutes = pattern_of(kind), size, day_start_minutes
        self.block_bytes = block_bytes
        self.blocks = LineBlocks(max_line)
        self.pending: list[bytes] = []  # bytes fed and not yet a whole block
        self.pending_bytes = 0
        self.fed = 0
        self.stamps: set = set()
        self.done = False
        if size == 0:
            self._finish()

    def feed(self, data: bytes) -> None:
        if self.done or not data:
            return
        data = data[: self.size - self.fed]
        self.fed += len(data)
        self.pending.append(data)
        self.pending_bytes += len(data)
        while self.pending_bytes >= self.block_bytes:
            whole = b"".join(self.pending) if len(self.pending) > 1 else self.pending[0]
            self._block(whole[: self.block_bytes])
            left = whole[self.block_bytes:]
            self.pending, self.pending_bytes = ([left] if left else []), len(left)
        if self.fed >= self.size:
            self._finish()

    def feed_file(self, path, upto: int, read_bytes: int = BLOCK_BYTES) -> None:
        """Feed the file's first ``upto`` bytes, read from ``path`` (the part of a grown file an earlier run loaded)."""
        with open(path, "rb") as fh:
            while upto > 0:
                block = fh.read(min(read_bytes, upto))
                if not block:
                    return
                upto -= len(block)
                self.feed(block)

    def _block(self, block: bytes) -> None:
        piece = self.blocks.push(block)
        if piece:
            self.stamps |= stamps_in(self.pattern, piece)

    def _finish(self) -> None:
        if self.pending:
            self._block(b"".join(self.pending))
            self.pending, self.pending_bytes = [], 0
        rest = self.blocks.end()
        if rest:
            self.stamps |= stamps_in(self.pattern, rest)
        self.done = True

    @property
    def days(self) -> frozenset[dt.date] | None:
        return frozenset(days_of_stamps(self.stamps, self.day_start_minutes)) if self.done else None
