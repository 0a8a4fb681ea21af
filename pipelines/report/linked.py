"""The pages the report links to, written with it by the audit: each finding round's evidence pack and each
flagged subject's investigation.

A report opened from a file cannot ask whether a file beside it exists, so the links must be right when the
page is written: the audit writes the pages first, into the same temporary output folder as the report
(:mod:`pipelines.audit.outputs` moves them into place with it), and tells the report which exist.

- **Evidence packs** (:mod:`pipelines.evidence.batch`): every round with a deterministic finding, up to
  ``Settings.evidence_packs``; links ``evidence/<table>/<round>/index.html``.
- **Investigations** (:mod:`pipelines.investigation.command`): each statistical finding's subject (the player
  when it names one, else the dealer, else the table) over the finding's window (its ``window_days`` gaming
  days to its night); links ``investigations/<kind>/<id>/<first>_<last>/index.html``. The pages share one
  ``investigations/plotly.min.js``, which each loads by a relative path. Each writes its tables as Parquet, and as
  CSV only the small ones (``command.AUDIT_CSV_TABLES``), with its results chart thinned to ``figures.MAX_POINTS``
  points per line: a page over 30 days of a busy subject was tens of MB, written for every flagged subject. With
  30 nights of history a night has some 30 such pages of up to 30 days: when the pack workers leave a core free, a
  second thread writes about half their wagers' pages (:func:`worker_share`), started as soon as the publish step
  has read the findings (:func:`start_linked_investigations`), so its work overlaps the report's reads.

The packs are written on worker processes while this process writes the investigations (:class:`PackPool`).

All links are relative, so the output folder can be copied elsewhere and still opens.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from pipelines.db import duckdb_threads
from pipelines.evidence.batch import PackIndex, write_packs
from pipelines.report.links import investigation_href, investigation_relpath


@dataclass
class LinkedPages:
    packs: PackIndex
    investigations: dict[str, str] = field(default_factory=dict)  # finding_id -> href of its subject's page
    investigation_errors: list[str] = field(default_factory=list)
    investigation_seconds: float = 0.0
    investigation_cpu: float = 0.0

    def warnings(self) -> list[str]:
        """Lines for the console: each setting's file that could not be read (rule documents, cameras: what the packs
        were written without, ``packs.notes``), and how many pages could not be written (the report lists them), so
        that an unreadable PITAUDIT_CAMERAS is not said only inside the report."""
        others = len(self.packs.errors)
        return self.packs.notes + ([f"{others:,} evidence pack(s) or investigation page(s) could not be written: the "
                                    "report lists them"] if others > 0 else [])


def detail_document(detail: str | None) -> dict:
    """The JSON document a statistical finding's detail carries after its sentence (``{}`` when there is none, or
    it does not read as one)."""
    start = (detail or "").find('{"sentence"')
    if start < 0:
        return {}
    try:
        document = json.loads(detail[start:])
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def subject_of(finding: dict) -> tuple[str, str, dt.date, dt.date] | None:
    """(kind, id, first day, last day) of a statistical finding's investigation, or None (no subject, no window)."""
    kind, ident = next(((k, finding[c]) for k, c in (("player", "player_id"), ("dealer", "dealer_id"),
                                                     ("table", "table_id")) if finding.get(c)), (None, None))
    night = finding.get("gaming_day")
    if kind is None or night is None:
        return None
    try:
        days = int(detail_document(finding.get("detail")).get("window_days") or 1)
    except (ValueError, TypeError):
        days = 1
    return kind, ident, night - dt.timedelta(days=days - 1), night


# a second thread writes half the pages from this many subjects on, when their windows hold this many wagers of the
# floor (a night with 30 days of history has some 30 pages of up to 30 days each, five CPU seconds; a night into an
# empty database, a few pages of one night, 0.3 s)
PAGES_IN_TWO_FROM = 8
PAGES_IN_TWO_ROWS = 1_000_000
# DuckDB threads of the page reads while the pages are written on two threads (beside the packs' worker process, on
# two cores): one thread each did the same reads in ~9 % less CPU than two at night 31 (4.4-4.5 against 4.8-4.9 CPU s
# for its 31 pages, alternating, on a saturated machine); the rows are the same (their order is set). A database's
# threads are one setting for every connection to it in the process (``pipelines.db.duckdb_threads``)
PAGE_READ_THREADS = 1


@dataclass
class Investigations:
    """The night's investigation pages, started (:func:`start_investigations`) and not yet finished
    (:func:`finish_investigations`): which finding names which subject, and the thread writing some of them."""

    found: list[tuple[str, tuple | None]]  # (finding_id, its subject or None)
    subjects: list[tuple]
    plotly_js: Path | None = None
    theirs: list[tuple] = field(default_factory=list)  # the worker's subjects
    moments_of: dict = field(default_factory=dict)
    pending: tuple | None = None  # (executor, future, stop event) of the worker thread

    def cancel(self) -> None:
        """End the worker, if it still runs (a publish that failed before it finished the pages): it writes no page
        after the one under way, and has ended when this returns (its cursor closed before the caller's connection)."""
        if self.pending is not None:
            executor, future, stop = self.pending
            self.pending = None
            stop.set()
            future.cancel()
            executor.shutdown(wait=True, cancel_futures=True)


def start_investigations(con, folder: Path, findings: pl.DataFrame, db_path: Path | None = None,
                         memory_limit: str | None = None, workers: int = 1, split_from: int = PAGES_IN_TWO_FROM,
                         split_rows: int = PAGES_IN_TWO_ROWS, database: str | None = None) -> Investigations:
    """The subjects of the statistical findings; with ``workers`` > 1, ``db_path`` (the database file), at least
    ``split_from`` subjects and ``split_rows`` rows of ``out_settlements`` in their windows' days, about half their
    wagers go to one worker thread (:func:`worker_share`), started here with a cursor of ``con``: it writes its pages
    while this thread does the rest of the publish step (the audit starts it as soon as the findings are read, so it
    overlaps the report's reads, not only the pages). A thread, not a process: the pages' work is DuckDB's reads,
    polars and the Parquet writer, which leave Python's lock, and a spawned process paid ~0.7 CPU s of imports and
    its own cold reads (5.73-5.97 against 5.00-5.03 CPU s for the 31 pages of night 31 of 30 nights, alternating; the
    same files). ``database``: the path the pages name (default ``db_path``)."""
    from pipelines.investigation.render import write_plotly_js
    from pipelines.report.links import INVESTIGATIONS_DIR

    stat = findings.filter(pl.col("p_value").is_not_null()) if "p_value" in findings.columns else findings.head(0)
    found = [(f["finding_id"], subject_of(f)) for f in stat.iter_rows(named=True)]
    subjects = list(dict.fromkeys(s for _, s in found if s is not None))
    started = Investigations(found, subjects)
    if not subjects:
        return started
    # one plotly.min.js for every page of the folder
    started.plotly_js = write_plotly_js(folder / INVESTIGATIONS_DIR)
    if workers > 1 and db_path is not None and len(subjects) >= split_from and _rows_in(con, subjects) >= split_rows:
        theirs = worker_share(subjects, subject_rows(con, subjects))
        # every window's bets' moments, read here once for both threads (each would compute the exact payout
        # distributions again, a second of CPU)
        try:
            started.moments_of = window_moments(con, subjects)
        except Exception:  # noqa: BLE001 - each thread then reads them itself, and says what fails
            started.moments_of = {}
        started.pending = _start_pages_worker(con, (str(folder), theirs, database or str(db_path),
                                                    str(started.plotly_js), started.moments_of))
        if started.pending is not None:
            started.theirs = theirs
    return started


def finish_investigations(con, folder: Path, started: Investigations, database: str) -> tuple[dict[str, str], list[str]]:
    """The pages :func:`start_investigations` left to this thread, then the worker's: finding_id -> its page's link,
    and what could not be written. A worker that cannot start or fails leaves its subjects to this thread."""
    links: dict[str, str] = {}
    subjects = started.subjects
    if not subjects:
        return links, []
    theirs = set(started.theirs)
    mine = [s for s in subjects if s not in theirs]
    # beside the worker thread and the packs' workers: one DuckDB thread (PAGE_READ_THREADS)
    shared = duckdb_threads(con, PAGE_READ_THREADS) if started.pending is not None else nullcontext()
    try:
        with shared:
            done, why = write_subject_pages(con, folder, mine, database, started.plotly_js, started.moments_of)
        if started.pending is not None:
            got = _finish_pages_worker(*started.pending[:2])
            started.pending = None
            if got is None:  # the worker broke: its subjects here
                got = write_subject_pages(con, folder, started.theirs, database, started.plotly_js, started.moments_of)
            done.update(got[0])
            why.update(got[1])
    finally:
        started.cancel()
    if not any(done.values()):
        started.plotly_js.unlink(missing_ok=True)  # no page loads it
    errors = [f"{s[0]} {s[1]}: {why[s]}" for s in subjects if s in why]
    for finding_id, subject in started.found:
        if subject is not None and done.get(subject):
            links[finding_id] = done[subject]
    return links, errors


def write_investigations(con, folder: Path, findings: pl.DataFrame, database: str, db_path: Path | None = None,
                         memory_limit: str | None = None, workers: int = 1, split_from: int = PAGES_IN_TWO_FROM,
                         split_rows: int = PAGES_IN_TWO_ROWS) -> tuple[dict[str, str], list[str]]:
    """One investigation per (subject, window) of the statistical findings; finding_id -> its page's link.

    :func:`start_investigations` then :func:`finish_investigations`: with ``workers`` > 1 and enough subjects, a
    worker thread writes about half the pages, the same pages, byte for byte (``tests/test_investigate_command.py``)."""
    started = start_investigations(con, folder, findings, db_path, memory_limit, workers, split_from, split_rows,
                                   database)
    return finish_investigations(con, folder, started, database)


def subject_rows(con, subjects: list[tuple]) -> dict[tuple, int]:
    """Each subject's wagers in its window (what its page reads): one query per kind of subject."""
    from pipelines.investigate import SUBJECT_COLUMNS

    rows: dict[tuple, int] = {}
    for kind in dict.fromkeys(s[0] for s in subjects):
        mine = [s for s in subjects if s[0] == kind]
        col = SUBJECT_COLUMNS[kind]  # from the fixed map, never from input
        per_day: dict[tuple, int] = {}
        for ident, day, n in con.execute(
                f"SELECT {col}, gaming_day, count(*) FROM out_settlements WHERE {col} IN (SELECT unnest(?::VARCHAR[])) "
                "AND gaming_day BETWEEN ? AND ? GROUP BY ALL",
                [sorted({s[1] for s in mine}), min(s[2] for s in mine), max(s[3] for s in mine)]).fetchall():
            per_day[(ident, day)] = n
        for s in mine:
            rows[s] = sum(n for (ident, day), n in per_day.items() if ident == s[1] and s[2] <= day <= s[3])
    return rows


def worker_share(subjects: list[tuple], rows: dict[tuple, int]) -> list[tuple]:
    """The subjects the pages' worker thread writes: about half of all the wagers, in whole groups of one kind and
    window where it can (a group's pages are read with one query per table: a group split between two threads is
    read twice). Groups, largest first, each to the side with fewer wagers so far (the worker first); a group larger
    than half of all is dealt subject by subject the same way. In the subjects' order."""
    groups: dict[tuple, list[tuple]] = {}
    for s in subjects:
        groups.setdefault((s[0], s[2], s[3]), []).append(s)
    total = sum(rows.get(s, 0) for s in subjects)
    units: list[list[tuple]] = []
    for group in groups.values():
        if 2 * sum(rows.get(s, 0) for s in group) > total and len(group) > 1:
            units.extend([s] for s in group)
        else:
            units.append(group)
    units.sort(key=lambda u: -sum(rows.get(s, 0) for s in u))  # stable: ties keep the subjects' order
    theirs: set[tuple] = set()
    load = [0, 0]  # the worker's wagers, this thread's
    for unit in units:
        side = 0 if load[0] <= load[1] else 1
        load[side] += sum(rows.get(s, 0) for s in unit)
        if side == 0:
            theirs.update(unit)
    return [s for s in subjects if s in theirs]


def _rows_in(con, subjects: list[tuple]) -> int:
    """Rows of ``out_settlements`` from the subjects' first day to their last (what their pages read, roughly)."""
    return con.execute("SELECT count(*) FROM out_settlements WHERE gaming_day BETWEEN ? AND ?",
                       [min(s[2] for s in subjects), max(s[3] for s in subjects)]).fetchall()[0][0]


def window_moments(con, subjects: list[tuple]) -> dict:
    """(first, last) -> the bets' moments of that window (``gather_many``'s ``moments_of``), for the subjects' windows."""
    from pipelines import investigate as q
    from pipelines.investigation.theory import exact_where_known

    return {(first, last): exact_where_known(q.bet_moments(con, first, last))
            for first, last in dict.fromkeys((s[2], s[3]) for s in subjects)}


def write_subject_pages(con, folder: Path, subjects: list[tuple], database: str, plotly_js: Path,
                        moments_of: dict | None = None, stop=None) -> tuple[dict[tuple, str | None], dict[tuple, str]]:
    """The pages of ``subjects`` ((kind, id, first, last)) read with ``con``: (subject -> its page's link, or None when
    it could not be written; subject -> why not). ``moments_of``: the windows' moments already read (:func:`window_moments`).
    ``stop`` (a ``threading.Event``): once set, no further page is written (a publish that failed)."""
    from pipelines import investigate as q
    from pipelines.investigation.command import AUDIT_CSV_TABLES, InvestigationError, gather_many, write_pages

    done: dict[tuple, str | None] = {}
    why: dict[tuple, str] = {}
    # every subject's rows read together, a query per table for the subjects of one kind and window
    try:
        frames_of = gather_many(con, [q.Subject(*s) for s in subjects], dict(moments_of or {}))
    except Exception as exc:  # noqa: BLE001 - pages that cannot be made must not stop the night's audit
        reason = str(exc) if isinstance(exc, InvestigationError) else \
            f"the investigation could not be written ({type(exc).__name__}: {exc})"
        return dict.fromkeys(subjects), dict.fromkeys(subjects, reason)
    for subject in subjects:
        kind, ident, first, last = subject
        if stop is not None and stop.is_set():
            done[subject], why[subject] = None, "the publish step stopped before this page"
            continue
        try:
            write_pages(frames_of[q.Subject(*subject)], q.Subject(*subject),
                        folder / investigation_relpath(kind, ident, first.isoformat(), last.isoformat()), database, plotly_js,
                        csv_tables=AUDIT_CSV_TABLES)
            done[subject] = investigation_href(kind, ident, first.isoformat(), last.isoformat())
        except InvestigationError as exc:
            why[subject] = str(exc)
            done[subject] = None
        except Exception as exc:  # noqa: BLE001 - a page that cannot be made must not stop the night's audit
            why[subject] = f"the investigation could not be written ({type(exc).__name__}: {exc})"
            done[subject] = None
    return done, why


def _start_pages_worker(con, job):
    """(executor, future, stop event) of one worker thread writing ``job``'s pages with a cursor of ``con`` (its own
    connection to the same database: a connection is one thread's), or None when it cannot start."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    folder, subjects, database, plotly_js, moments_of = job
    stop = threading.Event()
    try:
        cursor = con.cursor()
    except Exception:  # noqa: BLE001 - no worker: this thread writes every page
        return None

    def pages():
        try:
            return write_subject_pages(cursor, Path(folder), subjects, database, Path(plotly_js), moments_of, stop)
        finally:
            cursor.close()

    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="investigation-pages")
    try:
        return executor, executor.submit(pages), stop
    except RuntimeError:
        cursor.close()
        executor.shutdown(wait=False)
        return None


def _finish_pages_worker(executor, future):
    """The worker's (done, why), or None when it failed (its subjects are then written here); the worker ends here."""
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - the pages it could not write are written by the caller
        return None
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def start_linked_investigations(con, folder: Path, keys: list[tuple[dt.date, str]], findings: pl.DataFrame,
                                database: str, settings=None) -> Investigations:
    """:func:`start_investigations` as the audit runs it, as soon as the findings are read: a worker thread for half
    the pages when the pack workers (:func:`pack_workers`, the decision :func:`write_linked_pages` will take) leave a
    core free; ``database``: the database file's path."""
    from pipelines.audit.pool import workers_available
    from pipelines.settings import Settings

    settings = settings or Settings.defaults()
    db_file = Path(database) if Path(database).is_file() else None
    free = workers_available() - (pack_workers(con, keys, settings) if db_file is not None else 0)
    return start_investigations(con, folder, findings, db_file, settings.reader_memory, 1 + max(free, 0),
                                database=database)


def pack_workers(con, keys: list[tuple[dt.date, str]], settings) -> int:
    """How many worker processes the night's packs will take (:class:`PackPool`, as :func:`write_packs` decides it from
    the same rounds and groups): none for a night of few packs, one for one group (a night of 20,000 rounds), more
    for the 1,000,000-round night."""
    from pipelines.audit.pool import workers_available
    from pipelines.evidence.batch import PackPool, _partition_sizes, _round_groups, choose, finding_rounds

    chosen, _ = choose(finding_rounds(con, keys), settings.evidence_packs)
    if chosen.height == 0:
        return 0
    groups = _round_groups(chosen, settings.group_rounds, _partition_sizes(con, chosen))
    pool = PackPool(Path("."), workers_available())
    return min(pool.workers, len(groups)) if pool.worth_it(chosen.height, len(groups)) else 0


def write_linked_pages(con, folder: Path, keys: list[tuple[dt.date, str]], findings: pl.DataFrame, database: str,
                       settings=None, started: Investigations | None = None) -> LinkedPages:
    """Write the night's evidence packs and investigations into ``folder`` (the run's temporary output folder).

    ``started``: the investigations :func:`start_linked_investigations` began (a worker may be writing some of them);
    None: they start here, beside the pack workers."""
    from pipelines.evidence.cameras import load_camera_map
    from pipelines.evidence.rule_text import clause_texts
    from pipelines.settings import Settings

    from pipelines.evidence.cameras import CameraMap, CameraMapError
    from pipelines.evidence.rule_text import no_text
    from pipelines.rule_texts import RuleDocsError

    from pipelines.report.links import EVIDENCE_DIR, INVESTIGATIONS_DIR

    settings = settings or Settings.defaults()
    problems = []
    # both folders always, even empty: each replaces the previous run's whole (pipelines.audit.outputs), so no
    # pack or investigation of another night stays beside tonight's report
    for name in (EVIDENCE_DIR, INVESTIGATIONS_DIR):
        (folder / name).mkdir(parents=True, exist_ok=True)
    # a bad rule-document folder or camera map must not stop the night's audit: the packs say what is missing
    try:
        clause_text, clause_note = clause_texts(settings.rule_docs)
    except RuleDocsError as exc:
        clause_text, clause_note = no_text, f"the rule documents could not be read ({exc}): clauses are shown by id"
        problems.append(clause_note)
    try:
        cameras = load_camera_map(settings.cameras)
    except CameraMapError as exc:
        cameras = CameraMap()
        problems.append(f"the camera map could not be read ({exc}): video windows without camera ids")
    from pipelines.evidence.batch import PackPool
    from pipelines.audit.pool import workers_available

    pool = PackPool(Path(database), workers_available(), settings.rule_docs if clause_text is not no_text else None,
                    settings.reader_memory) if Path(database).is_file() else None
    investigated: dict = {}

    def investigations() -> None:  # in this process while the pool's workers write the packs
        t, c = time.perf_counter(), time.process_time()
        if started is not None:
            investigated["links"], investigated["errors"] = finish_investigations(con, folder, started, database)
        else:  # a core the pack workers leave free may take half the pages
            free = workers_available() - (pool.started if pool is not None else 0)
            investigated["links"], investigated["errors"] = write_investigations(
                con, folder, findings, database, Path(database) if Path(database).is_file() else None,
                settings.reader_memory, 1 + max(free, 0))
        investigated["seconds"], investigated["cpu"] = time.perf_counter() - t, time.process_time() - c

    packs = write_packs(con, keys, folder, bound=settings.evidence_packs, database=database, cameras=cameras,
                        clause_text=clause_text, clause_note=clause_note, per_group=settings.group_rounds, pool=pool,
                        meanwhile=investigations)
    packs.notes = problems  # the packs were written, without these: not among those "not written"
    links, errors = investigated["links"], investigated["errors"]
    packs.errors.extend(f"the investigation of {e}" for e in errors)  # the report lists what it could not link
    return LinkedPages(packs, links, errors, investigated["seconds"], investigated["cpu"])
