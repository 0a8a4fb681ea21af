"""One night's scope: which gaming days a run audits and reports.

One database holds every night audited into it; a run's outputs cover the gaming days it audits,
never the whole history (docs/formats.md, "Night after night"):

- ``--gaming-day D`` audits D; ``--from D1 --to D2`` audits every day of the range (a backfill: it
  re-audits those days, and a second backfill of the same range changes nothing);
- by default, the gaming days of the input: of the files this run loaded (new content: tonight's
  export, a file that grew), or, when it loaded nothing new (the same input again), of every input
  file, so that a re-run publishes the same outputs as the first run. A folder that accumulates every
  night's files therefore reports tonight's days, not all of them.

The days of a file are read from its text, not from the database (the database cannot tell which of
its rows came from a file whose name an earlier night used too): the local date and time written in
each round's ``bets_closed_at``, shifted back by the gaming day's start, exactly as the ingest files
the round (docs/formats.md: "A round belongs to the gaming day of its ``bets_closed_at``"). Device logs
give days only when the input holds no round log at all (rounds the table system never recorded):
a card's time decides no round's day otherwise, and a card dealt just after 06:00 for a round closed
just before it would add a day the input does not hold.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from schemas.rules import TS_MAX, TS_MIN

# the local date and time of bets_closed_at as written (the offset that follows does not change the local time)
_CLOSED_AT = re.compile(rb'"bets_closed_at"\s*:\s*"(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})')
# the first timestamp of a device-log line is its ``ts``
_TS = re.compile(rb"^[^\n]*?,(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})", re.MULTILINE)
# the longest range one run audits (a decade of nights): a typo in --from must not start a ten-thousand-year loop
MAX_DAYS = 3660
CHUNK_BYTES = 32 * 2**20
# the ingest's longest line (pipelines.ingest.lines): a longer one is quarantined there, so it is no round's
MAX_LINE_BYTES = 1 << 20
# the gaming days an accepted instant can fall on (its offset and the day's start move it by under two days); a day
# outside them is no round's (the ingest quarantines the line) and would take the audit's margins and windows past the
# years a date holds
FIRST_DAY, LAST_DAY = TS_MIN.date() - dt.timedelta(days=2), TS_MAX.date() + dt.timedelta(days=1)


class ScopeError(ValueError):
    """The days asked for cannot be audited; one line."""


@dataclass(frozen=True)
class Scope:
    """The gaming days a run audits; ``chosen``: ``"input"`` (the default), ``"day"`` or ``"range"``."""

    days: tuple[dt.date, ...]
    chosen: str = "input"

    @property
    def first(self) -> dt.date:
        return self.days[0]

    @property
    def last(self) -> dt.date:
        return self.days[-1]

    def label(self) -> str:
        """``2026-11-24``, ``2026-11-24..2026-11-26`` or ``no gaming day``: for run names and messages."""
        if not self.days:
            return "no gaming day"
        if len(self.days) == 1:
            return self.first.isoformat()
        return f"{self.first.isoformat()}..{self.last.isoformat()}"


def parse_gaming_day(text: str, option: str) -> dt.date:
    """The gaming day ``option`` names (``--gaming-day``, ``--from``...), or :class:`ScopeError` with one line: not a
    date, or outside the days a round can have (the days around it are read, and would overflow)."""
    try:
        day = dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ScopeError(f"{option} must be a date like 2026-11-24, got {text!r}") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ScopeError(f"{option} {day} is outside the gaming days a round can have ({FIRST_DAY} to {LAST_DAY})")
    return day


def chosen_days(gaming_day: str | None = None, from_day: str | None = None,
                to_day: str | None = None) -> Scope | None:
    """The scope the options ask for, or None when they ask for none (the input's days then)."""
    if gaming_day and (from_day or to_day):
        raise ScopeError("give either --gaming-day or --from/--to, not both")
    if gaming_day:
        return Scope((parse_gaming_day(gaming_day, "--gaming-day"),), "day")
    if not from_day and not to_day:
        return None
    if not (from_day and to_day):
        raise ScopeError("a backfill needs both --from and --to (the first and the last gaming day)")
    first, last = parse_gaming_day(from_day, "--from"), parse_gaming_day(to_day, "--to")
    if last < first:
        raise ScopeError(f"--to {last} is before --from {first}")
    n = (last - first).days + 1
    if n > MAX_DAYS:
        raise ScopeError(f"--from {first} --to {last} spans {n:,} days; audit at most {MAX_DAYS:,} at a time")
    return Scope(tuple(first + dt.timedelta(days=i) for i in range(n)), "range")


def _days_of(pattern: re.Pattern, data: bytes, day_start_minutes: int) -> set[dt.date]:
    stamps = {(m.group(1), int(m.group(2)) * 60 + int(m.group(3))) for m in pattern.finditer(data)}
    days = set()
    for date_text, minute in stamps:
        try:
            day = dt.date.fromisoformat(date_text.decode("ascii"))
        except ValueError:
            continue  # not a date (the ingest quarantines the line)
        if minute > 24 * 60 or not FIRST_DAY < day <= LAST_DAY:
            continue  # not a time, or beyond the instants the ingest accepts (it quarantines the line)
        days.add(day - dt.timedelta(days=1) if minute < day_start_minutes else day)
    return days


def days_in_files(paths: list[tuple[str, Path]], day_start_minutes: int) -> set[dt.date]:
    """The gaming days the round logs among ``paths`` ((kind, path) pairs) hold; the device logs' days when
    there is no round log (see the module docstring). A file that cannot be read gives no day (the ingest
    reports it)."""
    rounds = [p for kind, p in paths if kind == "rounds_jsonl"]
    pattern, chosen = (_CLOSED_AT, rounds) if rounds else (_TS, [p for kind, p in paths if kind == "shoe_csv"])
    days: set[dt.date] = set()
    for path in chosen:
        for chunk in _line_chunks(path):
            days |= _days_of(pattern, chunk, day_start_minutes)
    return days


def _line_chunks(path: Path, size: int = CHUNK_BYTES):
    """The file in pieces of about ``size`` bytes, each ending at a line end (a big night is never held whole). A line
    longer than the ingest's longest (quarantined there) that runs past a block is skipped to its end: a file with no
    line end at all (a 2 GB sparse file) was gathered whole, each block copied again onto the ones before it."""
    try:
        with open(path, "rb") as fh:
            rest, skipping = b"", False
            while True:
                block = fh.read(size)
                if not block:
                    break
                if skipping:
                    end = block.find(b"\n")
                    if end < 0:
                        continue
                    block, skipping = block[end + 1:], False
                block = rest + block
                cut = block.rfind(b"\n") + 1
                rest = block[cut:]
                if len(rest) > MAX_LINE_BYTES:
                    rest, skipping = b"", True
                if cut:
                    yield block[:cut]
            if rest:
                yield rest
    except OSError:
        return  # the ingest reports a file it cannot read


def input_scope(loaded: list[tuple[str, Path]], every: list[tuple[str, Path]], day_start_minutes: int) -> Scope:
    """The default scope: the days of the files this run loaded, else of every input file (module docstring)."""
    days = days_in_files(loaded, day_start_minutes) if loaded else set()
    if not days:
        days = days_in_files(every, day_start_minutes)
    return Scope(tuple(sorted(days)), "input")


def _other_files(input_dir: Path, most: int = 10_000) -> str:
    """What a folder with no input file holds instead, for the "nothing to audit" line: an export compressed
    (``rounds_x.jsonl.gz``) or renamed (``Rounds_X.JSONL``) was reported only as "no round log with a gaming day".
    Counts up to ``most`` files; empty when the folder holds none (or cannot be listed: the ingest says so)."""
    import os

    from pipelines.console import shown

    count, first = 0, None
    try:
        for dirpath, _, names in os.walk(input_dir):
            for name in sorted(names):
                count += 1
                first = first or Path(dirpath, name).relative_to(input_dir).as_posix()
            if count >= most:
                break
    except OSError:
        return ""
    if not count:
        return ""
    return (f"; {count:,}{'+' if count >= most else ''} other file(s), e.g. {shown(first)}: only shoe_*.csv and "
            "rounds_*.jsonl are read (uncompressed, names as written)")


def nothing_reason(input_dir: Path, ingest, has_days: bool) -> str:
    """Why a run on the input's days found nothing to audit, in one line that says what the input held: the files,
    the lines read and quarantined (the commonest reasons), the files not read. A folder whose every line was
    quarantined (an exporter that changed its format overnight) said only "no round log with a gaming day" before,
    with no output and no hint of the quarantine: the lines are in the database (``core_quarantine``), and the
    run's status is 4 (not a clean night)."""
    what = f"no round to audit in {input_dir}"
    files = getattr(ingest, "files", None)
    if not files:
        return what + ("" if has_days else " (no round log with a gaming day)") + _other_files(Path(input_dir))
    loaded = [f for f in files if str(f.status) == "loaded"]
    read = sum(f.lines_read for f in loaded)
    quarantined = sum(f.rows_quarantined for f in loaded)
    parts = [f"{len(files):,} file(s)"]
    if loaded:
        parts.append(f"{read:,} new line(s) read, {quarantined:,} quarantined")
        reasons = getattr(ingest, "quarantined_by_reason", None) or {}
        top = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        if top:
            parts[-1] += " (" + ", ".join(f"{code} {n:,}" for code, n in top) + ("" if len(reasons) <= 3 else ", ...") + ")"
    already = sum(1 for f in files if str(f.status) == "already loaded")
    if already:
        parts.append(f"{already:,} already loaded")
    not_read = [f for f in files if str(f.status) in ("unreadable", "refused")]
    if not_read:
        from pipelines.console import shown

        first = not_read[0]
        parts.append(f"{len(not_read):,} not read ({shown(first.source_file)}: {shown(first.error or first.reason_code)}"
                     + (", ..." if len(not_read) > 1 else "") + ")")
    return f"{what}: " + "; ".join(parts) + ("" if has_days else "; no round log with a gaming day")
