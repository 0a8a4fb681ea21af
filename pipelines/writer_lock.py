"""One writer per database, for the whole run: an advisory lock on ``<db>.lock`` held from ingest to publish.

DuckDB's own file lock is taken and released with each connection, and the audit opens and closes
its writer several times (ingest, write, snapshot) with read-only readers in between: a second audit
started meanwhile could slip into one of those gaps and interleave its rows with the first's. So the
run takes this lock first and keeps it to the end. ``fcntl.flock`` belongs to the open file
description: the kernel drops it when the process dies, however it dies (a killed run leaves no stale
lock behind, and no lock file has to be cleaned up by hand). The file holds the holder's process id
and start time, only to name it in the message of the one who has to wait.

A second run waits up to ``wait_seconds`` (polling, so that it can say once that it waits) and then
stops with :class:`WriterBusy`, a one-line reason; a folder where the lock file cannot be made is :class:`CannotLock`.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

POLL_SECONDS = 0.5


class LockError(RuntimeError):
    """The database's writer lock cannot be had; the message is one line."""


class WriterBusy(LockError):
    """Another pitaudit process writes this database; the message is one line."""


class CannotLock(LockError):
    """The lock file cannot be created beside the database (a read-only or missing folder): nothing could be written
    there anyway. Before, ``pitaudit ingest`` stopped on it with a traceback and status 1."""


def lock_path(db_path: Path | str) -> Path:
    """``night/audit.duckdb`` -> ``night/audit.duckdb.lock``."""
    path = Path(db_path)
    return path.with_name(path.name + ".lock")


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return f" ({text})" if text else ""


@contextmanager
def writer_lock(db_path: Path | str, wait_seconds: float = 0.0,
                say: Callable[[str], None] = lambda text: None) -> Iterator[Path]:
    """Hold the database's writer lock for the ``with`` block; wait at most ``wait_seconds`` for it.

    Raises :class:`WriterBusy` when another process still holds it after the wait.
    """
    path = lock_path(db_path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise CannotLock(f"cannot write beside the database {db_path} (its lock file {path.name}): "
                         f"{exc.strerror or exc}") from None
    try:
        deadline = time.monotonic() + max(0.0, wait_seconds)
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    waited = f" after waiting {wait_seconds:g} s" if wait_seconds > 0 else ""
                    raise WriterBusy(
                        f"another pitaudit run is writing {db_path}{_holder(fd)}; stopped{waited} "
                        f"(PITAUDIT_LOCK_WAIT sets how long to wait)") from None
                if not told:
                    say(f"waiting for another pitaudit run to finish writing {db_path}{_holder(fd)}")
                    told = True
                time.sleep(POLL_SECONDS)
        stamp = f"pid {os.getpid()} since {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
        os.ftruncate(fd, 0)
        os.pwrite(fd, stamp.encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
