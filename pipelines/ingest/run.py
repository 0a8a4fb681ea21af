"""``pitaudit ingest``: every shoe_*.csv and rounds_*.jsonl under a folder into the DuckDB file.

Files are taken in the order of their relative paths, one transaction each (``store``), so a run
that is killed leaves every file either fully loaded or not at all, and the next run loads what is
missing. A file already loaded with the same SHA-256 is skipped. The run never stops on bad input:
a file that cannot be read is recorded as unreadable with its reason; only a broken line
accounting (a defect of the loader, ``InvariantError``) stops it.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
import polars as pl

from pipelines.db import DatabaseError, get_meta, open_writer, set_meta
from pipelines.ingest import store
from pipelines.ingest.lines import LineChunk, UnreadableFile, iter_lines, sha256_of, sniff
from pipelines.ingest.quarantine import to_quarantine
from pipelines.ingest.rounds_jsonl import RoundsParser
from pipelines.ingest.shoe_csv import ShoeParser, read_header
from schemas.reasons import REASONS

PATTERNS = {"shoe_csv": re.compile(r"^shoe_.*\.csv$"), "rounds_jsonl": re.compile(r"^rounds_.*\.jsonl$")}


class IngestError(RuntimeError):
    """The run cannot start or go on (bad option, database locked, ...); one-line message."""


@dataclass
class FileOutcome:
    source_file: str
    kind: str
    status: str  # loaded | already loaded | changed | unreadable
    lines_read: int = 0
    rows_accepted: int = 0
    rows_quarantined: int = 0
    rows_duplicate: int = 0
    error: str | None = None


@dataclass
class IngestSummary:
    files: list[FileOutcome] = field(default_factory=list)
    quarantined_by_reason: Counter = field(default_factory=Counter)
    earlier_lines_quarantined: int = 0  # copies accepted by earlier files, moved by a conflict

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


def parse_day_start(text: str) -> int:
    """``HH:MM`` -> minutes after midnight."""
    m = re.fullmatch(r"([01]?[0-9]|2[0-3]):([0-5][0-9])", text.strip())
    if not m:
        raise IngestError(f"--gaming-day-start must be HH:MM (00:00 to 23:59), got {text!r}")
    return int(m.group(1)) * 60 + int(m.group(2))


def discover(input_dir: Path) -> list[tuple[str, str, Path]]:
    """(relative path with '/', kind, path) of every input file under the folder, sorted."""
    found = []
    for p in input_dir.rglob("*"):
        for kind, pattern in PATTERNS.items():
            if pattern.match(p.name) and p.is_file():
                found.append((p.relative_to(input_dir).as_posix(), kind, p))
    return sorted(found)


def _without_header(chunk: LineChunk) -> LineChunk:
    return LineChunk(
        chunk.first_line + 1, chunk.lines.slice(1),
        [i - 1 for i in chunk.not_utf8 if i > 0], {i - 1: v for i, v in chunk.too_long.items() if i > 0},
    )


def _load(con: duckdb.DuckDBPyConnection, rel: str, kind: str, path: Path, day_start: int,
          advance: Callable[[int], None]) -> tuple[int, Counter]:
    """Stage every line of one file (inside the open transaction); returns lines read and reasons."""
    lines_read = 0
    reasons: Counter = Counter()
    shoe: ShoeParser | None = None
    rounds = RoundsParser(con, rel, day_start) if kind == "rounds_jsonl" else None
    for chunk in iter_lines(path):
        advance(int(chunk.lines.str.len_bytes().sum() or 0) + len(chunk))
        if kind == "shoe_csv":
            if shoe is None:
                if 0 in chunk.not_utf8 or 0 in chunk.too_long:
                    raise UnreadableFile("first line (the header) is not readable UTF-8 text")
                shoe = ShoeParser(rel, read_header(chunk.lines[0]))
                chunk = _without_header(chunk)
                if len(chunk) == 0:
                    continue
            events, failures, raw = shoe.parse(chunk)
            store.stage(con, "events", events)
        else:
            r, w, a, failures, raw = rounds.parse(chunk)
            store.stage(con, "rounds", r)
            store.stage(con, "wagers", w)
            store.stage(con, "actions", a)
        q = to_quarantine(failures, raw, rel, kind)
        store.stage(con, "quarantine", q)
        reasons.update(q["reason"].to_list())
        lines_read += len(chunk)
    if kind == "shoe_csv" and shoe is None:
        raise UnreadableFile("empty file: no header line")
    if kind == "shoe_csv":
        store.resolve_events(con, rel, path)
    else:
        store.resolve_rounds(con, rel, path)
    return lines_read, reasons


def ingest_file(con: duckdb.DuckDBPyConnection, rel: str, kind: str, path: Path, input_root: Path,
                day_start: int, summary: IngestSummary, advance: Callable[[int], None] = lambda n: None) -> FileOutcome:
    """Load one file in one transaction; record it whatever happens (but a broken invariant)."""
    try:
        sha, size = sha256_of(path)
    except OSError as exc:
        sha, size = "", 0
        error = f"cannot read the file: {exc.strerror or exc}"
        return _unreadable(con, rel, kind, sha, size, error, input_root)
    rows = con.execute("SELECT sha256 FROM core_source_files WHERE source_file = ?", [rel]).fetchall()
    known = rows[0] if rows else None
    if known is not None:
        if known[0] == sha:
            return FileOutcome(rel, kind, "already loaded")
        return FileOutcome(rel, kind, "changed",
                           error=f"changed since it was loaded (sha256 {known[0][:12]}… -> {sha[:12]}…); not re-read: "
                                 "give the new export a new name")
    try:
        sniff(path)
    except UnreadableFile as exc:
        return _unreadable(con, rel, kind, sha, size, str(exc), input_root)
    except OSError as exc:
        return _unreadable(con, rel, kind, sha, size, f"cannot read the file: {exc.strerror or exc}", input_root)
    store.begin_file(con)
    try:
        lines_read, reasons = _load(con, rel, kind, path, day_start, advance)
        moved_before = con.execute(
            "SELECT count(*) FROM core_quarantine WHERE reason_code = 'conflicting_duplicate' AND source_file <> ?",
            [rel]).fetchall()[0][0]
        counts = store.finish_file(con, source_file=rel, kind=kind, sha256=sha, size=size,
                                   lines_read=lines_read, input_root=str(input_root))
    except store.InvariantError:
        con.execute("ROLLBACK")
        raise
    except (UnreadableFile, OSError, UnicodeError, duckdb.Error, pl.exceptions.PolarsError, ValueError) as exc:
        con.execute("ROLLBACK")
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if not isinstance(exc, UnreadableFile):
            msg = f"could not be loaded ({type(exc).__name__}): {msg}"
        return _unreadable(con, rel, kind, sha, size, msg, input_root)
    conflicts_here = con.execute(
        "SELECT count(*) FROM core_quarantine WHERE reason_code = 'conflicting_duplicate' AND source_file = ?",
        [rel]).fetchall()[0][0]
    moved_after = con.execute(
        "SELECT count(*) FROM core_quarantine WHERE reason_code = 'conflicting_duplicate' AND source_file <> ?",
        [rel]).fetchall()[0][0]
    summary.earlier_lines_quarantined += moved_after - moved_before
    if conflicts_here + moved_after - moved_before:
        reasons[REASONS["conflicting_duplicate"]] += conflicts_here + (moved_after - moved_before)
    summary.quarantined_by_reason.update(reasons)
    return FileOutcome(rel, kind, "loaded", counts.lines_read, counts.rows_accepted, counts.rows_quarantined,
                       counts.rows_duplicate)


def _unreadable(con, rel, kind, sha, size, error, input_root) -> FileOutcome:
    store.record_unreadable(con, source_file=rel, kind=kind, sha256=sha, size=size, error=error,
                            input_root=str(input_root))
    return FileOutcome(rel, kind, "unreadable", error=error)


def ingest_folder(con: duckdb.DuckDBPyConnection, input_dir: Path, gaming_day_start: str = "06:00",
                  progress: bool = False) -> IngestSummary:
    """Ingest every input file under ``input_dir`` with an open writer connection (audit's first stage)."""
    input_dir = Path(input_dir)
    if not input_dir.is_dir():
        raise IngestError(f"input folder {input_dir} does not exist or is not a folder")
    day_start = parse_day_start(gaming_day_start)
    recorded = get_meta(con, "gaming_day_start")
    if recorded is not None and int(recorded) != day_start:
        raise IngestError(
            f"this database was loaded with gaming days starting at {int(recorded) // 60:02d}:{int(recorded) % 60:02d}; "
            f"use the same --gaming-day-start or a new database")
    if recorded is None:
        set_meta(con, "gaming_day_start", str(day_start))
    files = discover(input_dir)
    summary = IngestSummary()
    root = input_dir.resolve()
    if not progress:
        for rel, kind, path in files:
            summary.files.append(ingest_file(con, rel, kind, path, root, day_start, summary))
        return summary
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    total = sum(p.stat().st_size for _, _, p in files)
    with Progress(TextColumn("ingest {task.fields[file]}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("ingest", total=total, file="")
        done = 0
        for rel, kind, path in files:
            bar.update(task, file=rel)
            summary.files.append(ingest_file(con, rel, kind, path, root, day_start, summary,
                                             lambda n: bar.advance(task, n)))
            done += path.stat().st_size
            bar.update(task, completed=done)
    return summary


def print_summary(summary: IngestSummary, out=None) -> None:
    """Files, rows accepted, rows quarantined by reason; every unreadable or changed file by name."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out or sys.stdout, highlight=False, soft_wrap=True)
    console.print(
        f"files: {len(summary.files)} seen, {summary.count('loaded')} loaded, "
        f"{summary.count('already loaded')} already loaded, {summary.count('unreadable')} unreadable, "
        f"{summary.count('changed')} changed since loaded"
    )
    console.print(
        f"lines read: {summary.lines_read:,}  accepted: {summary.rows_accepted:,} "
        f"(of which identical duplicates kept once: {summary.rows_duplicate:,})  quarantined: {summary.rows_quarantined:,}"
    )
    if summary.earlier_lines_quarantined:
        console.print(f"lines of earlier files moved to quarantine by a conflicting duplicate: "
                      f"{summary.earlier_lines_quarantined:,}")
    if summary.quarantined_by_reason:
        t = Table("reason", "lines", title="quarantined by reason", title_justify="left")
        for reason, n in summary.quarantined_by_reason.most_common():
            t.add_row(reason, f"{n:,}")
        console.print(t)
    for f in summary.files:
        if f.status in ("unreadable", "changed"):
            console.print(f"{f.status}: {f.source_file}: {f.error}")


def run_ingest(input_dir: Path, db_path: Path, gaming_day_start: str = "06:00",
               progress: bool | None = None) -> IngestSummary:
    """The ``pitaudit ingest`` command: open the writer, ingest, print the summary."""
    if progress is None:
        progress = sys.stderr.isatty()
    try:
        con = open_writer(db_path)
    except DatabaseError as exc:
        raise IngestError(str(exc)) from exc
    try:
        summary = ingest_folder(con, Path(input_dir), gaming_day_start, progress=progress)
    finally:
        con.close()
    print_summary(summary)
    return summary
