"""The ingest as a straight line: discover -> screen -> plan -> parse (on workers) -> load, in that order.

Every ``shoe_*.csv`` and ``rounds_*.jsonl`` under a folder goes into the DuckDB file: files in the order of
their relative paths, in batches of one kind (``plan``), each batch parsed (``parse``, on worker processes
when the night is big: ``parallel``) and loaded in one transaction (``load``, the only stage that sees the
writer). A file is known by its content (``screen``), so a run on files already loaded does nothing, the
next night's export loads whatever its names, and a file that grew loads its new lines. The run never stops
on bad input: a line is quarantined, a file that cannot be read is recorded with its reason; only a broken
line accounting (a defect of the loader, ``InvariantError``) stops it. The caller watches through a
:class:`~pipelines.ingest.records.Progress` and prints the summary (the CLI's job).
"""

from __future__ import annotations

import errno
from collections import Counter
from concurrent.futures import BrokenExecutor, Future
from pathlib import Path

import duckdb
import polars as pl

from pipelines.db import duckdb_threads, parse_connection
from pipelines.gaming_day import parse_day_start
from pipelines.ingest.discover import discover
from pipelines.ingest.lines import UnreadableFile
from pipelines.ingest.load import BatchLoaded, DayStartMismatch, InvariantError, KnownKeys, check_day_start, \
    known_sources, load_batch, record_failed, record_skipped
from pipelines.ingest.parallel import parse_ahead
from pipelines.ingest.parse import parse_big_file, parse_small_batch
from pipelines.ingest.plan import BATCH_LINES, BIG_FILE_BYTES, is_big, plan_batches
from pipelines.ingest.records import FileOutcome, IngestSummary, InputFile, ParseOptions, Progress
from pipelines.ingest.screen import screen
from pipelines.settings import Settings

POOL_MIN_BYTES = 128 << 20  # less than this is parsed in the writer's process (a worker costs ~1 s to start)

# what a batch's failure may be when it is not bad input the parse already judged: retried file by file
RETRIED = (UnreadableFile, OSError, UnicodeError, duckdb.Error, pl.exceptions.PolarsError, ValueError, BrokenExecutor)


class IngestError(RuntimeError):
    """The run cannot start (no such folder, bad gaming-day start, another one recorded); one-line message."""


class DatabaseFailure(IngestError):
    """The database could not be written (its disk is full, an I/O error): the run stops, nothing of the batch is
    kept, and no file is blamed for it; its files load when the run is repeated. One-line message."""


# what says that the writer's database (its disk, its file), not the file being loaded, failed: a COMMIT that could not
# write (DuckDB's TransactionException "Failed to commit"), an I/O or fatal error of the database, a disk out of space
_DATABASE_ERRORS = (duckdb.TransactionException, duckdb.IOException, duckdb.FatalException)
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}


def _database_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the database's (or the disk's) failure rather than the file's (see :data:`_DATABASE_ERRORS`)."""
    if isinstance(exc, _DATABASE_ERRORS):
        return True
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE


def _failure_reason(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, UnreadableFile):
        return exc.code, str(exc)
    if isinstance(exc, OSError):
        return "file_unreadable", f"cannot read the file: {exc.strerror or exc}"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return "file_load_failed", f"could not be loaded ({type(exc).__name__}): {text}"


class _Run:
    """One run's state: the writer, the options, the outcomes gathered in path order."""

    def __init__(self, con, root: Path, options: ParseOptions, settings: Settings, progress: Progress):
        self.con, self.root, self.options, self.settings, self.progress = con, root, options, settings, progress
        self.parse_con = None
        self.outcomes: dict[str, FileOutcome] = {}
        self.reasons: Counter = Counter()
        self.changes = 0
        self.partitions: set = set()
        self.known = KnownKeys()  # the key ranges loaded, so that a batch need not scan the core tables

    def _here(self):
        if self.parse_con is None:  # an in-memory DuckDB of the writer's process, holding no evidence
            self.parse_con = parse_connection(self.settings.writer_memory)
        return self.parse_con

    def _parts(self, batch: tuple[InputFile, ...], ahead: Future | None):
        if is_big(batch, BIG_FILE_BYTES, BATCH_LINES):
            for part in parse_big_file(batch[0], self.options, self._here()):
                self.progress.advanced(part.bytes_read)
                yield part
            return
        part = ahead.result() if ahead is not None else parse_small_batch(batch, self.options, self._here())
        self.progress.advanced(part.bytes_read)
        yield part

    def load(self, batch: tuple[InputFile, ...], ahead: Future | None = None) -> None:
        """Parse (or take the worker's parse of) a batch and load it; a batch that fails as a whole is loaded
        again file by file, so that only the file at fault is recorded, with its reason."""
        try:
            done: BatchLoaded = load_batch(self.con, batch, self._parts(batch, ahead), self.root, self.known)
        except InvariantError:
            raise
        except RETRIED as exc:
            if _database_failure(exc):  # recorded against the file, it would never be read again
                text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise DatabaseFailure(f"the database could not be written ({text}); nothing of that batch of files "
                                      "was kept: they load when the run is repeated") from exc
            if len(batch) > 1 or isinstance(exc, BrokenExecutor):  # a worker died: parse here
                for f in batch:
                    self.load((f,))
                return
            code, why = _failure_reason(exc)
            o = record_failed(self.con, batch[0], code, why, self.root)
            self.outcomes[o.source_file] = o
            return
        for o in done.outcomes:
            self.outcomes[o.source_file] = o
        self.reasons.update(done.reasons)
        self.changes += done.source_changes
        self.partitions |= done.partitions

    def close(self) -> None:
        if self.parse_con is not None:
            self.parse_con.close()


def ingest_folder(con: duckdb.DuckDBPyConnection, input_dir: Path, gaming_day_start: str = "06:00",
                  settings: Settings | None = None, progress: Progress | None = None) -> IngestSummary:
    """Ingest every input file under ``input_dir`` with the writer connection ``con``; returns the summary."""
    input_dir = Path(input_dir)
    settings = settings or Settings.defaults()
    progress = progress or Progress()
    if not input_dir.is_dir():
        raise IngestError(f"input folder {input_dir} does not exist or is not a folder")
    try:
        day_start = parse_day_start(gaming_day_start)
    except ValueError as exc:
        raise IngestError(f"--gaming-day-start: {exc}") from None
    try:
        check_day_start(con, day_start)
    except DayStartMismatch as exc:
        raise IngestError(str(exc)) from None
    root = input_dir.resolve()
    found = discover(root)                                   # 1. the files
    screened = screen(found, known_sources(con, [f.rel for f in found]))  # 2. against what is known, queried once
    record_skipped(con, screened.skipped, root)
    batches = plan_batches(screened.to_load, max_lines=BATCH_LINES)  # 3. batches
    progress.planned(sum(f.bytes_to_read for f in screened.to_load))
    # the parse records the gaming days the audit's scope reads: of the round logs, or of the device logs when no round
    # log is to be read (pipelines.ingest.days)
    days_of = ("rounds_jsonl",) if any(f.kind == "rounds_jsonl" for f in screened.to_load) else ("shoe_csv",)
    run = _Run(con, root, ParseOptions(day_start, settings.max_amount, days_of), settings, progress)
    try:
        small = [i for i, b in enumerate(batches) if not is_big(b, BIG_FILE_BYTES, BATCH_LINES)]
        workers = settings.parse_workers
        if workers < 2 or len(small) < 2 or sum(f.bytes_to_read for i in small for f in batches[i]) < POOL_MIN_BYTES:
            for batch in batches:                            # 4.-5. parse here, load
                progress.started(batch)
                run.load(batch)
        else:
            # worker processes parse the batches ahead while this process loads them in order; big files stream here
            # the writer's DuckDB on one thread while the workers fill the cores: a second thread only waited for
            # the first (a 200,000-round night's inserts and commits: 2.47 CPU s on two threads, 2.19 on one)
            with duckdb_threads(con, 1), parse_ahead(batches, small, run.options, workers, settings.writer_memory) as ahead:
                for i, batch in enumerate(batches):          # 4.-5. parsed on workers, loaded here
                    progress.started(batch)
                    run.load(batch, ahead.pop(i, None))
    finally:
        run.close()
    for o in screened.skipped:
        run.outcomes[o.source_file] = o
    order = [f.rel for f in found]
    return IngestSummary(
        files=tuple(run.outcomes[rel] for rel in order if rel in run.outcomes),
        quarantined_by_reason=run.reasons,
        source_changes=run.changes,
        partitions=tuple(sorted(run.partitions)),
    )
