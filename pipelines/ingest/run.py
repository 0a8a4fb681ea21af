"""``pitaudit ingest``: every shoe_*.csv and rounds_*.jsonl under a folder into the DuckDB file.

Files are taken in the order of their relative paths, in batches of one kind (``batch``: the fixed
costs of a load are paid per batch, not per file), one transaction per batch (``store``), so a run
that is killed leaves every file either fully loaded or not at all, and the next run loads what is
missing. A file already loaded with the same SHA-256 is skipped. The run never stops on bad input:
a file that cannot be read is recorded as unreadable with its reason; only a broken line
accounting (a defect of the loader, ``InvariantError``) stops it.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import duckdb
import polars as pl

from pipelines.db import DatabaseError, get_meta, open_writer, set_meta
from pipelines.ingest import store
from pipelines.ingest.batch import BATCH_BYTES, InputFile, Part, plan_batches, read_big_file, read_small_files
from pipelines.ingest.lines import UnreadableFile, sha256_of, sniff
from pipelines.ingest.quarantine import to_quarantine
from pipelines.ingest.rounds_jsonl import RoundsParser
from pipelines.ingest.shoe_csv import ShoeParser
from pipelines.ingest.workers import parse_batch, parse_pool
from pipelines.settings import Settings
from schemas.reasons import REASONS

POOL_MIN_BYTES = 2 * BATCH_BYTES  # less than this is parsed in the writer's process

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


@dataclass
class Parsed:
    """A batch read and parsed, ready to stage: (staging table, rows) in order, and what was found."""

    frames: list[tuple[str, pl.DataFrame]] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # file -> why it cannot be read as lines
    reasons: Counter = field(default_factory=Counter)  # quarantine reason -> lines
    lines_read: Counter = field(default_factory=Counter)  # file -> lines


def _parsed_parts(parts, files: list[InputFile], day_start: int, parse_con: duckdb.DuckDBPyConnection,
                  streamed: bool, found: Parsed) -> Iterator[tuple[Part, list[tuple[str, pl.DataFrame]]]]:
    """Parse each part; yield it with its frames (relabelled to each file's own lines) for staging."""
    kind = files[0].kind
    shoe: dict[tuple[str, ...], ShoeParser] = {}
    # the parsers name the rows after the first file (the core checks want a name); relabel corrects it
    rounds = RoundsParser(parse_con, files[0].rel, day_start) if kind == "rounds_jsonl" else None
    for part in parts:
        if kind == "shoe_csv":
            key = tuple(part.header)
            if key not in shoe or not streamed:  # one file's chunks share a parser (it carries event_seq)
                shoe[key] = ShoeParser(files[0].rel, part.header, file_starts=None if streamed else part.starts)
            events, failures, raw = shoe[key].parse(part.chunk)
            frames = [("events", part.relabel(events))]
        else:
            r, w, a, failures, raw = rounds.parse(part.chunk)
            frames = [("rounds", part.relabel(r)), ("wagers", part.relabel(w)), ("actions", part.relabel(a))]
        q = part.relabel(to_quarantine(failures, raw, files[0].rel, kind))
        found.reasons.update(q["reason"].to_list())
        found.lines_read.update(part.lines_read)
        yield part, frames + [("quarantine", q)]


def parse_small_batch(files: list[InputFile], day_start: int, parse_con: duckdb.DuckDBPyConnection) -> Parsed:
    """Read and parse a batch of small files, touching no database but ``parse_con`` (so a worker
    process can do it while the writer stages and commits the batch before it)."""
    parts, unreadable = read_small_files(files)
    found = Parsed(unreadable=unreadable)
    for _, frames in _parsed_parts(parts, files, day_start, parse_con, False, found):
        found.frames += frames
    return found


def _stage_batch(con: duckdb.DuckDBPyConnection, files: list[InputFile], input_root: Path, day_start: int,
                 advance: Callable[[int], None], parsed: Parsed | None) -> tuple[list[store.StagedFile], Parsed]:
    """Stage every line of a batch (inside the open transaction), parsing it here unless ``parsed``.

    A file too big for a batch is read, parsed and staged chunk by chunk, so that memory stays
    bounded by the chunk whatever the file's size."""
    if len(files) == 1 and files[0].size > BATCH_BYTES:
        found = Parsed()
        for part, frames in _parsed_parts(read_big_file(files[0]), files, day_start, con, True, found):
            advance(int(part.chunk.lines.str.len_bytes().sum() or 0) + len(part.chunk))  # bytes read, as the bar counts
            for name, frame in frames:
                store.stage(con, name, frame)
    else:
        found = parsed if parsed is not None else parse_small_batch(files, day_start, con)
        for name, frame in found.frames:
            store.stage(con, name, frame)
        advance(sum(f.size for f in files))
    staged = [store.StagedFile(f.rel, f.kind, f.sha256, f.size, found.lines_read.get(f.rel, 0), str(input_root), f.path)
              for f in files if f.rel not in found.unreadable]
    return staged, found


def _conflict_rows(con: duckdb.DuckDBPyConnection, names: list[str]) -> tuple[int, int]:
    """Conflicting-duplicate quarantine rows: (of these files, of every other file)."""
    return con.execute("""
        SELECT count(*) FILTER (WHERE list_contains(?, source_file)), count(*) FILTER (WHERE NOT list_contains(?, source_file))
        FROM core_quarantine WHERE reason_code = 'conflicting_duplicate'""", [names, names]).fetchall()[0]


def screen_file(con: duckdb.DuckDBPyConnection, rel: str, kind: str, path: Path,
                input_root: Path) -> InputFile | FileOutcome:
    """Hash and sniff a file: the file to load, or its outcome when it is not to be loaded."""
    try:
        sha, size = sha256_of(path)
    except OSError as exc:
        return _unreadable(con, rel, kind, "", 0, f"cannot read the file: {exc.strerror or exc}", input_root)
    rows = con.execute("SELECT sha256 FROM core_source_files WHERE source_file = ?", [rel]).fetchall()
    if rows:
        if rows[0][0] == sha:
            return FileOutcome(rel, kind, "already loaded")
        return FileOutcome(rel, kind, "changed",
                           error=f"changed since it was loaded (sha256 {rows[0][0][:12]}… -> {sha[:12]}…); not re-read: "
                                 "give the new export a new name")
    try:
        sniff(path)
    except UnreadableFile as exc:
        return _unreadable(con, rel, kind, sha, size, str(exc), input_root)
    except OSError as exc:
        return _unreadable(con, rel, kind, sha, size, f"cannot read the file: {exc.strerror or exc}", input_root)
    return InputFile(rel, kind, path, sha, size)


def ingest_batch(con: duckdb.DuckDBPyConnection, files: list[InputFile], input_root: Path, day_start: int,
                 summary: IngestSummary, advance: Callable[[int], None] = lambda n: None,
                 parsed: Future | None = None) -> list[FileOutcome]:
    """Load a batch of files of one kind in one transaction; record each file whatever happens
    (but a broken invariant). ``parsed`` is the batch already being parsed by a worker process
    (``parse_small_batch``). A batch that fails as a whole is retried file by file, so that only
    the file at fault is recorded as unreadable."""
    names = [f.rel for f in files]
    store.begin_batch(con)
    try:
        here_before, others_before = _conflict_rows(con, names)
        staged, found = _stage_batch(con, files, input_root, day_start, advance,
                                     parsed.result() if parsed is not None else None)
        unreadable, reasons = found.unreadable, found.reasons
        for f in files:
            if f.rel in unreadable:
                store.record_unreadable(con, source_file=f.rel, kind=f.kind, sha256=f.sha256, size=f.size,
                                        error=unreadable[f.rel], input_root=str(input_root))
        counts = store.finish_batch(con, files[0].kind, staged)
    except store.InvariantError:
        con.execute("ROLLBACK")
        raise
    except (UnreadableFile, OSError, UnicodeError, duckdb.Error, pl.exceptions.PolarsError, ValueError,
            BrokenExecutor) as exc:
        con.execute("ROLLBACK")
        if len(files) > 1 or isinstance(exc, BrokenExecutor):  # a worker died: parse here
            return [o for f in files for o in ingest_batch(con, [f], input_root, day_start, summary)]
        f = files[0]
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, OSError):
            msg = f"cannot read the file: {exc.strerror or exc}"
        elif not isinstance(exc, UnreadableFile):
            msg = f"could not be loaded ({type(exc).__name__}): {msg}"
        return [_unreadable(con, f.rel, f.kind, f.sha256, f.size, msg, input_root)]
    here, others = _conflict_rows(con, names)
    moved = others - others_before
    summary.earlier_lines_quarantined += moved
    if here - here_before + moved:
        reasons[REASONS["conflicting_duplicate"]] += here - here_before + moved
    summary.quarantined_by_reason.update(reasons)
    out = []
    for f in files:
        if f.rel in unreadable:
            out.append(FileOutcome(f.rel, f.kind, "unreadable", error=unreadable[f.rel]))
        else:
            c = counts[f.rel]
            out.append(FileOutcome(f.rel, f.kind, "loaded", c.lines_read, c.rows_accepted, c.rows_quarantined,
                                   c.rows_duplicate))
    return out


def _unreadable(con, rel, kind, sha, size, error, input_root) -> FileOutcome:
    store.record_unreadable(con, source_file=rel, kind=kind, sha256=sha, size=size, error=error,
                            input_root=str(input_root))
    return FileOutcome(rel, kind, "unreadable", error=error)


def ingest_folder(con: duckdb.DuckDBPyConnection, input_dir: Path, gaming_day_start: str = "06:00",
                  progress: bool = False, settings: Settings | None = None) -> IngestSummary:
    """Ingest every input file under ``input_dir`` with an open writer connection (audit's first stage)."""
    input_dir = Path(input_dir)
    settings = settings or Settings.defaults()
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
    outcomes: dict[str, FileOutcome] = {}
    ready: list[InputFile] = []
    for rel, kind, path in files:
        screened = screen_file(con, rel, kind, path, root)
        if isinstance(screened, InputFile):
            ready.append(screened)
        else:
            outcomes[rel] = screened
    batches = plan_batches(ready)

    def run(advance: Callable[[int], None], started: Callable[[list[InputFile]], None] = lambda b: None) -> None:
        small = [i for i, b in enumerate(batches) if not (len(b) == 1 and b[0].size > BATCH_BYTES)]
        workers = settings.parse_workers
        if workers < 2 or len(small) < 2 or sum(f.size for i in small for f in batches[i]) < POOL_MIN_BYTES:
            # too little to parse to be worth starting processes (~1 s each): parse here
            for batch in batches:
                started(batch)
                for o in ingest_batch(con, batch, root, day_start, summary, advance):
                    outcomes[o.source_file] = o
            return
        # Worker processes parse the batches ahead (a few at a time, to bound memory) while this
        # process stages and commits them in order. Big files stream here, chunk by chunk.
        with parse_pool(workers) as pool:
            pending: dict[int, Future] = {}
            queue = iter(small)

            def top_up() -> None:
                while len(pending) < workers + 1:
                    i = next(queue, None)
                    if i is None:
                        return
                    pending[i] = pool.submit(parse_batch, batches[i], day_start)

            for i, batch in enumerate(batches):
                top_up()
                started(batch)
                for o in ingest_batch(con, batch, root, day_start, summary, advance, pending.pop(i, None)):
                    outcomes[o.source_file] = o

    if not progress:
        run(lambda n: None)
    else:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        total = sum(f.size for f in ready)
        with Progress(TextColumn("ingest {task.fields[file]}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                      console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("ingest", total=total, file="")
            run(lambda n: bar.advance(task, n),
                lambda b: bar.update(task, file=b[0].rel + (f" (+{len(b) - 1} files)" if len(b) > 1 else "")))
    summary.files = [outcomes[rel] for rel, _, _ in files]
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
               progress: bool | None = None, settings: Settings | None = None) -> IngestSummary:
    """The ``pitaudit ingest`` command: open the writer, ingest, print the summary."""
    if progress is None:
        progress = sys.stderr.isatty()
    try:
        con = open_writer(db_path, (settings or Settings.defaults()).writer_memory)
    except DatabaseError as exc:
        raise IngestError(str(exc)) from exc
    try:
        summary = ingest_folder(con, Path(input_dir), gaming_day_start, progress=progress, settings=settings)
    finally:
        con.close()
    print_summary(summary)
    return summary
