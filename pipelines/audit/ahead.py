"""The ingest ``pitaudit audit`` runs while Prefect's embedded server starts, handed to the flow (issue 13).

The server takes seconds to answer (its own imports and database), and the flow cannot begin before it
does. The ingest needs no Prefect: so the CLI launches the server (``server.EarlyServer``), takes the
writer lock, and ingests meanwhile; the flow it then runs is handed the ingest's summary and the lock
already held (a plain string parameter, the key of :func:`hand_over`, so that the flow's parameters stay
what a Prefect deployment can carry), and goes on from the scope. The lock is held from the ingest to the
flow's end, as when the flow takes it itself.

Only the quick way changes: whatever goes wrong here (another run holds the database, a file to retry, a
defect) is left to the flow, which then takes the lock and runs its ingest task as before, with that task's
retries, messages and exit statuses (an ingest is all or nothing per batch, and loading the same files again
changes nothing). A flow run without a key, or with one this process does not hold, ingests itself.
"""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Ingested:
    """An ingest done before the flow: its summary, its wall seconds, the database it loaded."""

    summary: object  # pipelines.ingest.records.IngestSummary
    seconds: float
    db_path: Path


_ready: dict[str, Ingested] = {}


def hand_over(done: Ingested) -> str:
    """Keep ``done`` for the flow of this process; the key is the flow's parameter."""
    key = uuid.uuid4().hex
    _ready[key] = done
    return key


def take(key: str | None, db_path: Path) -> Ingested | None:
    """The ingest handed over under ``key`` for ``db_path`` (once), or None."""
    done = _ready.pop(key, None) if key else None
    if done is None or Path(done.db_path).resolve() != Path(db_path).resolve():
        return None
    return done


def ingest_ahead(held: ExitStack, input_dir: Path, db_path: Path, gaming_day_start: str, settings) -> str | None:
    """Take the writer lock into ``held`` (without waiting) and ingest ``input_dir``; the key for the flow, or None
    when the flow should do it all itself (the lock is then not held). ``held`` keeps the lock until it closes."""
    from pipelines.audit.run import check_database
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder
    from pipelines.writer_lock import LockError, writer_lock

    attempt = ExitStack()
    try:
        attempt.enter_context(writer_lock(db_path, 0.0))
    except LockError:
        return None  # the flow waits for it (PITAUDIT_LOCK_WAIT) and says so, or says why it cannot have it
    try:
        check_database(db_path)
        t = time.perf_counter()
        con = open_writer(db_path, settings.writer_memory)
        try:
            summary = ingest_folder(con, input_dir, gaming_day_start, settings=settings)
        finally:
            con.close()
        seconds = time.perf_counter() - t
    except Exception:  # noqa: BLE001 - AuditError included: the flow's ingest task runs it again and reports it
        attempt.close()
        return None
    except BaseException:
        attempt.close()
        raise
    held.enter_context(attempt.pop_all())
    return hand_over(Ingested(summary, seconds, Path(db_path)))
