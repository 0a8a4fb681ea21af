"""What the CLI shows on a terminal: the ingest's progress bar while it runs and its summary after; a long count's bar.

Values from the input (file names, reasons quoting a line) are printed as text, never read as console markup:
a file named ``rounds_[/].jsonl`` is shown as it is, and cannot stop the run. Their control and invisible characters
(formats.md, Conventions, Text) are shown escaped (:func:`shown`): a file name holding a terminal escape or a
carriage return could otherwise recolour, rewrite or erase the operator's console and log lines (hide that a file
was not read), and one with a line end broke a one-line entry in two.
"""

from __future__ import annotations

import functools
import re
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from pipelines.ingest.records import FileStatus, IngestSummary, InputFile, Progress


@functools.cache
def _control() -> re.Pattern:
    """The control and invisible characters the ingest refuses in an id (imported when first needed: ``schemas.rules``
    brings polars, which a console line does not need)."""
    from schemas.rules import CONTROL_TEXT

    return re.compile(CONTROL_TEXT)


def shown(text) -> str:
    """``text`` for a console line: each control or invisible character (as the ingest refuses them in an id) written
    as a Python escape (``\\x1b``, ``\\n``, ``\\u202e``), the rest as it is."""
    return _control().sub(lambda m: repr(m.group())[1:-1], str(text))


class Bar(Progress):
    """The ingest's progress on stderr: bytes read, and the batch being loaded."""

    def __init__(self, bar, task) -> None:
        self.bar, self.task = bar, task

    def planned(self, total_bytes: int) -> None:
        self.bar.update(self.task, total=total_bytes)

    def started(self, batch: tuple[InputFile, ...]) -> None:
        self.bar.update(self.task, file=shown(batch[0].rel) + (f" (+{len(batch) - 1} files)" if len(batch) > 1 else ""))

    def advanced(self, n_bytes: int) -> None:
        self.bar.advance(self.task, n_bytes)


@contextmanager
def ingest_progress(show: bool | None = None, console=None) -> Iterator[Progress]:
    """A :class:`Bar` on a terminal (or when ``show``; on ``console``, a rich Console, else stderr's), else a
    progress that shows nothing."""
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        yield Progress()
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("ingest {task.fields[file]}", markup=False), BarColumn(), DownloadColumn(),
               TimeRemainingColumn())
    with RichProgress(*columns, console=console or Console(stderr=True), transient=True) as bar:
        yield Bar(bar, bar.add_task("ingest", total=None, file=""))


@contextmanager
def count_progress(what: str, show: bool | None = None, console=None) -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` for a long count (the Hold'em main game's 1,755 flop classes, minutes of CPU):
    on a terminal (or when ``show``; on ``console``, a rich Console, else stderr's) a bar labelled ``what`` with the
    time left, drawn from the first call (a figure that needs no count shows nothing) and gone when the count ends;
    elsewhere a callable that does nothing. stdout stays the figures' alone (``--json``)."""
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn

    bar = RichProgress(TextColumn(what, markup=False), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                       console=console or Console(stderr=True), transient=True)
    task = None

    def progress(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(what, total=total)
        bar.update(task, completed=done, total=total)

    try:
        yield progress
    finally:
        if task is not None:
            bar.stop()


def print_ingest_summary(summary: IngestSummary, out: TextIO | None = None) -> None:
    """Files, rows accepted, rows quarantined by reason, source changes; every file not loaded, by name."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out or sys.stdout, highlight=False, soft_wrap=True, markup=False, emoji=False)
    grown = sum(1 for f in summary.files if f.status == FileStatus.LOADED and f.first_line > 1)
    console.print(
        f"files: {len(summary.files)} seen, {summary.count(FileStatus.LOADED)} loaded"
        + (f" (of which {grown} grown since an earlier read: their new lines)" if grown else "")
        + f", {summary.count(FileStatus.ALREADY_LOADED)} already loaded, {summary.count(FileStatus.UNREADABLE)} "
          f"unreadable, {summary.count(FileStatus.REFUSED)} refused"
    )
    console.print(
        f"lines read: {summary.lines_read:,}  accepted: {summary.rows_accepted:,} "
        f"(of which identical duplicates kept once: {summary.rows_duplicate:,})  quarantined: {summary.rows_quarantined:,}"
    )
    if summary.source_changes:
        console.print(f"rounds or device events that arrived again with different content: {summary.source_changes:,} "
                      "(both versions kept; the audit reports each as source_changed)")
    if summary.quarantined_by_reason:
        t = Table("reason", "lines", title="quarantined by reason", title_justify="left")
        for reason, n in summary.quarantined_by_reason.most_common():
            t.add_row(reason, f"{n:,}")
        console.print(t)
    for f in summary.files:
        if f.status in (FileStatus.UNREADABLE, FileStatus.REFUSED):
            console.print(f"{f.status}: {shown(f.source_file)}: {shown(f.error)}")
