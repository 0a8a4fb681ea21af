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

The rule is ``pipelines.ingest.days``: the ingest applies it to the bytes it reads and records each loaded file's
days (``FileOutcome.gaming_days``), so the default scope reads a file here only when the run loaded none, or when
the ingest has no record of it (a device log of a run that loaded a round log, a file that changed as it was read).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from pipelines.ingest import days as _rule
from pipelines.ingest.days import FIRST_DAY, LAST_DAY, LineBlocks, days_of_stamps, pattern_of, stamps_in

# the rule's block and longest line (pipelines.ingest.days), named here as the scope's own (tests shrink them)
CHUNK_BYTES = _rule.BLOCK_BYTES
MAX_LINE_BYTES = _rule.MAX_LINE_BYTES
# the longest range one run audits (a decade of nights): a typo in --from must not start a ten-thousand-year loop
MAX_DAYS = 3660


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


def days_in_files(paths: list[tuple[str, Path]], day_start_minutes: int,
                  recorded: dict[Path, frozenset[dt.date]] | None = None) -> set[dt.date]:
    """The gaming days the round logs among ``paths`` ((kind, path) pairs) hold; the device logs' days when
    there is no round log (see the module docstring). A file that cannot be read gives no day (the ingest
    reports it). ``recorded``: the days of files the ingest read this run, by the same rule
    (``pipelines.ingest.days``): such a file is not read again."""
    rounds = [p for kind, p in paths if kind == "rounds_jsonl"]
    kind, chosen = ("rounds_jsonl", rounds) if rounds else ("shoe_csv", [p for kind, p in paths if kind == "shoe_csv"])
    pattern, recorded = pattern_of(kind), recorded or {}
    stamps: set = set()
    days: set[dt.date] = set()
    for path in chosen:
        if path in recorded:
            days |= recorded[path]
            continue
        for chunk in _line_chunks(path):
            stamps |= stamps_in(pattern, chunk)
    return days | days_of_stamps(stamps, day_start_minutes)


def _line_chunks(path: Path, size: int | None = None):
    """The file in pieces of about ``size`` bytes (``CHUNK_BYTES``), each ending at a line end (a big night is never
    held whole). A line longer than the ingest's longest (quarantined there) that runs past a block is skipped to its
    end: a file with no line end at all (a 2 GB sparse file) was gathered whole, each block copied again onto the ones
    before it. The cutting is ``pipelines.ingest.days.LineBlocks``, which the ingest's record of the days uses too."""
    size = size or CHUNK_BYTES
    blocks = LineBlocks(MAX_LINE_BYTES)
    try:
        with open(path, "rb") as fh:
            while True:
                block = fh.read(size)
                if not block:
                    break
                piece = blocks.push(block)
                if piece:
                    yield piece
            rest = blocks.end()
            if rest:
                yield rest
    except OSError:
        return  # the ingest reports a file it cannot read


def input_scope(loaded: list[tuple[str, Path]], every: list[tuple[str, Path]], day_start_minutes: int,
                recorded: dict[Path, frozenset[dt.date]] | None = None) -> Scope:
    """The default scope: the days of the files this run loaded, else of every input file (module docstring).
    ``recorded``: the days the ingest found in the files it loaded (``FileOutcome.gaming_days``), so that the loaded
    files are not read again; every input file is read when the run loaded none (the same input again)."""
    days = days_in_files(loaded, day_start_minutes, recorded) if loaded else set()
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
