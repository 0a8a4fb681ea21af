"""Publish the audit: the ``out_`` tables in DuckDB (the flow's one writer) and the files of the output contract.

Each group of partitions leaves its settlements and findings in a staging folder (one Parquet file
each, :func:`stage`) as soon as it is done, so a night of five million wagers is never held whole.
Then, in one transaction, the audited partitions' rows of ``out_findings`` and ``out_settlements``
are replaced by the staged ones (:func:`write_database`): a re-run over the same input leaves the
same rows. The files (:func:`write_files`):

- ``findings.csv``: the contract's columns first, then ``game, ruleset, ruleset_version, currency,
  device_id``; sorted by gaming day, table, round, kind, wager, id; nothing depends on the clock, so
  the same input yields the same bytes; exported from ``out_findings``;
- ``settlements.parquet``: one row per wager, sorted by gaming day, table, round, wager order;
  exported from the same staged files the write step loads into ``out_settlements``, while it loads
  them (:func:`export_settlements`): the groups are runs of partitions in key order and each stages
  its rows sorted, so the files read in order are the night in order, and millions of rows need no
  sort (sorting them inside DuckDB's memory limit spilled to disk: 14 s of a 1,000,000-round night);
  it takes its name only once the database holds the same rows;
- ``quarantine.csv``: every input line set aside, with its reason.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import sort_findings
from pipelines.audit.frames import FINDINGS_SCHEMA, SETTLEMENTS_SCHEMA, conform
from pipelines.audit.load import Window
from pipelines.csv_safe import write_csv
from pipelines.db import create_keys_table, open_bounded_reader, open_writer, rollback
from pipelines.money import SUM, wide_money
from pipelines.settings import READER_MEMORY, WRITER_MEMORY

_DUCK_TYPES = {
    pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Int16: "SMALLINT", pl.Int32: "INTEGER", pl.Date: "DATE",
    pl.Boolean: "BOOLEAN", pl.Float64: "DOUBLE",
}

OUT_TABLES: dict[str, dict[str, pl.DataType]] = {
    "out_findings": FINDINGS_SCHEMA,
    "out_settlements": SETTLEMENTS_SCHEMA,
}
STAGE_PREFIX = {"out_findings": "findings", "out_settlements": "settlements"}
SETTLEMENT_KEYS = ["gaming_day", "table_id", "round_no", "wager_order", "wager_id"]


def _ddl(name: str, schema: dict[str, pl.DataType]) -> str:
    cols = ",\n    ".join(f"{c} {_DUCK_TYPES[t if isinstance(t, type) else type(t)]}" for c, t in schema.items())
    return f"CREATE TABLE {name} (\n    {cols}\n)"


def _ensure(con, name: str, schema: dict[str, pl.DataType]) -> None:
    """Create the table, or rebuild it when its columns are not this version's (out_ tables are derived data)."""
    existing = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [name]
    ).fetchall()
    if [r[0] for r in existing] == list(schema):
        return
    if existing:
        con.execute(f"DROP TABLE {name}")
    con.execute(_ddl(name, schema))


def stage(stage_dir: Path, index: int, findings: pl.DataFrame, settlements: pl.DataFrame) -> None:
    """One group's results into the staging folder, in the published schemas.

    LZ4, not zstd: the files live for one run and are read once, and LZ4 writes a quarter faster. No column
    statistics: their only readers (the write and the export) read every row unfiltered, and computing them was a
    quarter of the writing (0.37 -> 0.27 CPU s for three groups of 590,000 settlements).
    """
    stage_dir.mkdir(parents=True, exist_ok=True)
    conform(findings, FINDINGS_SCHEMA).write_parquet(stage_dir / f"findings-{index:05d}.parquet", compression="lz4",
                                                     statistics=False)
    conform(settlements, SETTLEMENTS_SCHEMA).sort(SETTLEMENT_KEYS).write_parquet(
        stage_dir / f"settlements-{index:05d}.parquet", compression="lz4", statistics=False)


def export_settlements(stage_dir: Path, out_dir: Path) -> Path:
    """The staged settlements, files in name (group) order, into ``out_dir/.settlements.parquet.partial``.

    ``preserve_insertion_order`` (DuckDB's default, set here all the same) keeps the files' and rows' order; the
    groups' order is the key order (:func:`pipelines.audit.load.contiguous_groups`). :func:`write_files` gives
    the file its name.
    """
    import duckdb

    out_dir.mkdir(parents=True, exist_ok=True)
    partial = out_dir / ".settlements.parquet.partial"
    files = sorted(stage_dir.glob("settlements-*.parquet"))
    if not files:
        empty_frame = pl.DataFrame(schema=SETTLEMENTS_SCHEMA)
        empty_frame.write_parquet(partial, compression="zstd")
        return partial
    listing = ", ".join("'" + f.as_posix().replace("'", "''") + "'" for f in files)
    target = partial.as_posix().replace("'", "''")
    con = duckdb.connect()
    try:
        con.execute("SET preserve_insertion_order = true")
        con.execute("SET threads = 1")  # 3.8 CPU s for a 1,000,000-round night's 4.5 M rows, 5.2 on two threads
        con.execute(f"""COPY (SELECT {', '.join(SETTLEMENTS_SCHEMA)} FROM read_parquet([{listing}]))
                        TO '{target}' (FORMAT parquet, COMPRESSION zstd)""")
    finally:
        con.close()
    return partial


def _in_keys(window: Window, alias: str = "") -> str:
    """SQL: rows of the temporary key table ``_keys``, with the days' range first so that DuckDB skips the row
    groups of other nights by their min/max."""
    cols = "(gaming_day, table_id)" if not alias else f"({alias}.gaming_day, {alias}.table_id)"
    return f"{window.rounds(alias)} AND {cols} IN (SELECT (gaming_day, table_id) FROM _keys)"


def _window(keys) -> Window:
    return Window(tuple(sorted({k[0] for k in keys})))


def ensure_out_tables(con) -> None:
    for name, schema in OUT_TABLES.items():
        _ensure(con, name, schema)


# the kinds of finding the night-wide step (pipelines.audit.tasks.gaps_task) files under partitions: they depend on
# more than a partition's own evidence (a gap's neighbours may lie in another night's export)
NIGHT_WIDE_KINDS = ("sequence_gap", "source_changed")
# and the card_integrity findings of a shoe dealt without its burn (pipelines.audit.detectors.burns), by their clause:
# the shoe_start and burns have no round, so the partition's fingerprint does not cover them (a shoe_start in a late
# export of the night before changes the verdict on a partition whose own rows did not change)
NIGHT_WIDE_CLAUSES = tuple(sorted({c.missing_shoe_burn for c in CLAUSES.values() if c.missing_shoe_burn}))
NIGHT_WIDE_STAGE = "night-wide-unchanged.parquet"


def night_wide_sql() -> str:
    """SQL true for a finding of the night-wide step (kinds, and the card_integrity of its clauses)."""
    kinds = ", ".join(f"'{k}'" for k in NIGHT_WIDE_KINDS)
    clauses = ", ".join(f"'{c}'" for c in NIGHT_WIDE_CLAUSES)
    return f"(kind IN ({kinds}) OR (kind = 'card_integrity' AND rule_ref IN ({clauses})))"


def stage_night_wide(stage_dir: Path, findings: pl.DataFrame) -> None:
    """The night-wide findings of the partitions that are not re-settled, for :func:`write_database`."""
    stage_dir.mkdir(parents=True, exist_ok=True)
    conform(findings, FINDINGS_SCHEMA).write_parquet(stage_dir / NIGHT_WIDE_STAGE, compression="lz4", statistics=False)


def write_database(db_path: Path, keys: list[tuple[dt.date, str]], stage_dir: Path,
                   memory_limit: str = WRITER_MEMORY, fingerprints: dict | None = None,
                   rounds: dict | None = None, unchanged: list[tuple[dt.date, str]] | None = None) -> None:
    """Replace the re-settled partitions' rows of out_findings and out_settlements by the staged ones, and record
    their fingerprints (pipelines.audit.fingerprint), in one transaction.

    ``unchanged``: the audited partitions not re-settled. Their night-wide findings (:func:`night_wide_sql`) are
    replaced by tonight's (staged by :func:`stage_night_wide`) when they differ: a gap is judged from the rounds and
    events around a partition, not only its own, so a late export of the night before (night 3 loaded, then night 2)
    fills a gap of a partition whose own evidence did not change. Its stale ``sequence_gap`` findings ("137 rounds
    missing from both logs") were published again by every re-run and backfill, its fingerprint being the same."""
    from pipelines.audit.fingerprint import OUT_PARTITIONS_DDL, record_fingerprints

    con = open_writer(db_path, memory_limit)
    try:
        for name, schema in OUT_TABLES.items():
            _ensure(con, name, schema)
        con.execute(OUT_PARTITIONS_DDL)
        if unchanged:
            _replace_night_wide(con, unchanged, Path(stage_dir) / NIGHT_WIDE_STAGE)
        if not keys:
            return
        create_keys_table(con, "_keys", keys)
        window = _window(keys)
        # one thread: DuckDB's parallel insert of the staged files cost twice the CPU (11.5 against 5.6 s for the
        # 4.5 M settlements of a 1,000,000-round night: its threads' row groups were compressed again at the
        # checkpoint) and left the file 130 MB larger; the rows and their order are the same
        con.execute("SET threads = 1")
        con.execute("BEGIN TRANSACTION")
        try:
            for name, schema in OUT_TABLES.items():
                con.execute(f"DELETE FROM {name} WHERE {_in_keys(window)}")
                files = sorted(Path(stage_dir).glob(f"{STAGE_PREFIX[name]}-*.parquet"))
                if files:
                    con.execute(f"INSERT INTO {name} SELECT {', '.join(schema)} FROM read_parquet($1::VARCHAR[])",
                                [[f.as_posix() for f in files]])
            record_fingerprints(con, fingerprints or {}, rounds or {})
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
        con.execute("DROP TABLE _keys")
    finally:
        con.close()


def _replace_night_wide(con, unchanged: list[tuple[dt.date, str]], staged: Path) -> None:
    """The night-wide findings of the ``unchanged`` partitions replaced by the staged ones, in one transaction, when
    they differ (a re-run over an unchanged night writes nothing)."""
    fresh = pl.read_parquet(staged) if staged.exists() else pl.DataFrame(schema=FINDINGS_SCHEMA)
    fresh = sort_findings(conform(fresh, FINDINGS_SCHEMA))
    create_keys_table(con, "_keys", unchanged)
    where = f"{_in_keys(_window(unchanged))} AND {night_wide_sql()}"
    stored = sort_findings(conform(con.sql(f"SELECT * FROM out_findings WHERE {where}").pl(), FINDINGS_SCHEMA))
    if stored.equals(fresh):
        con.execute("DROP TABLE _keys")
        return
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"DELETE FROM out_findings WHERE {where}")
        if fresh.height:
            con.register("_night_wide", fresh)
            con.execute(f"INSERT INTO out_findings SELECT {', '.join(FINDINGS_SCHEMA)} FROM _night_wide")
            con.unregister("_night_wide")
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    con.execute("DROP TABLE _keys")


def read_findings(db_path: Path, keys: list[tuple[dt.date, str]], memory_limit: str = READER_MEMORY) -> pl.DataFrame:
    """The audited partitions' findings, sorted (a night has thousands, not millions)."""
    con = open_bounded_reader(db_path, memory_limit)
    try:
        return _read_findings(con, keys)
    finally:
        con.close()


def _read_findings(con, keys) -> pl.DataFrame:
    create_keys_table(con, "_keys", keys)
    # and the statistical findings of the audited nights (a dealer's or a player's has no table)
    days = ", ".join(f"DATE '{d.isoformat()}'" for d in sorted({k[0] for k in keys})) or "NULL"
    df = con.sql(f"SELECT * FROM out_findings WHERE {_in_keys(_window(keys))} "
                 f"OR (p_value IS NOT NULL AND gaming_day IN ({days}))").pl()
    return sort_findings(conform(df, FINDINGS_SCHEMA))


def settlement_totals(db_path: Path, keys: list[tuple[dt.date, str]], memory_limit: str = READER_MEMORY) -> pl.DataFrame:
    """Per currency: rounds, wagers, amounts wagered, nets recorded and expected, wagers not settleable."""
    con = open_bounded_reader(db_path, memory_limit)
    try:
        return _settlement_totals(con, keys)
    finally:
        con.close()


def _settlement_totals(con, keys) -> pl.DataFrame:
    create_keys_table(con, "_keys", keys)
    df = con.sql(f"""
        SELECT {TOTALS_SQL} FROM out_settlements WHERE {_in_keys(_window(keys))}
        GROUP BY currency ORDER BY currency""").pl()
    return wide_money(df, MONEY_TOTALS)


# sums of money as DECIMAL(38,0), read as Int128 (pipelines.money): a night of large legal amounts cannot overflow them
MONEY_TOTALS = ("wagered", "recorded", "expected")
TOTALS_SQL = f"""currency, count(DISTINCT (table_id, round_no)) AS rounds, count(*) AS wagers,
    {SUM.format("amount")} AS wagered, {SUM.format("recorded_net")} AS recorded,
    {SUM.format("expected_net")} AS expected, count(*) FILTER (WHERE expected_net IS NULL) AS unsettled"""


def totals_of(settlements: pl.DataFrame) -> pl.DataFrame:
    """:func:`settlement_totals` of a settlements frame (the same shape; for reports built without a database)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("s", conform(settlements, SETTLEMENTS_SCHEMA).to_arrow())
        return wide_money(con.sql(f"SELECT {TOTALS_SQL} FROM s GROUP BY currency ORDER BY currency").pl(), MONEY_TOTALS)
    finally:
        con.close()


def export_settlements_of(con, keys: list[tuple[dt.date, str]], target: Path) -> Path:
    """The audited partitions' rows of out_settlements into ``target``, in key order (when some partitions were not
    re-settled tonight, their rows come from the database, not from the staging folder)."""
    create_keys_table(con, "_keys", keys)
    con.execute("SET preserve_insertion_order = true")
    literal = "'" + target.as_posix().replace("'", "''") + "'"  # COPY takes no parameter for its file
    con.execute(f"""COPY (SELECT {', '.join(SETTLEMENTS_SCHEMA)} FROM out_settlements WHERE {_in_keys(_window(keys))}
                          ORDER BY {', '.join(SETTLEMENT_KEYS)}) TO {literal} (FORMAT parquet, COMPRESSION zstd)""")
    return target


def write_files(out_dir: Path, findings: pl.DataFrame, quarantine: pl.DataFrame, settlements_partial: Path) -> dict[str, Path]:
    """findings.csv, quarantine.csv (text values that a spreadsheet would run as a formula neutralised,
    pipelines.csv_safe), and settlements.parquet (the file :func:`export_settlements` wrote, renamed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "findings": out_dir / "findings.csv",
        "settlements": out_dir / "settlements.parquet",
        "quarantine": out_dir / "quarantine.csv",
    }
    write_csv(sort_findings(conform(findings, FINDINGS_SCHEMA)), paths["findings"])
    write_csv(quarantine.select("source_file", "source_line", "reason", "raw").sort(
        ["source_file", "source_line", "reason"]), paths["quarantine"])
    os.replace(settlements_partial, paths["settlements"])
    return paths


class PartClock:
    """Wall and CPU seconds of this process per part of :func:`publish_night` (``seconds``: name -> (wall, cpu)), for
    ``benchmarks.publish`` and the docs' table of where publish's time goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, tuple[float, float]] = {}

    @contextmanager
    def __call__(self, name: str):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            w, c = self.seconds.get(name, (0.0, 0.0))
            self.seconds[name] = (w + time.perf_counter() - wall, c + time.process_time() - cpu)


def _input_reads(con, found, contents: dict[str, str] | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The quarantined lines and the reads of the input's files (``found``), under their paths in this input. A file
    whose content was loaded under another name only (the nights' own folders, then their parent folder as the input)
    has that name's rows (:func:`pipelines.audit.load.names_loaded_as`), looked up in batches that name each earlier
    name once (the same names every night: a batch a night), then renamed to the file's path here."""
    from pipelines.audit.load import load_quarantine_of, load_source_files_of, names_loaded_as

    contents = contents or {}
    rels = [f.rel for f in found]
    quarantine, source_files = [load_quarantine_of(con, rels, contents)], [load_source_files_of(con, rels, contents)]
    batches: list[dict[str, str]] = []  # each: earlier name -> the path here
    for rel, name in names_loaded_as(con, {f.rel: (str(f.kind), contents.get(f.rel, ""))
                                           for f in found if f.kind is not None}).items():
        batch = next((b for b in batches if name not in b), None)
        if batch is None:
            batches.append(batch := {})
        batch[name] = rel
    for batch in batches:
        shas = {name: contents[rel] for name, rel in batch.items()}
        renamed = pl.col("source_file").replace_strict(batch, return_dtype=pl.String)
        quarantine.append(load_quarantine_of(con, list(batch), shas).with_columns(renamed))
        source_files.append(load_source_files_of(con, list(batch), shas).with_columns(renamed))
    if not batches:
        return quarantine[0], source_files[0]
    return (pl.concat(quarantine).sort(["source_file", "source_line", "reason"], nulls_last=False, maintain_order=True),
            pl.concat(source_files).sort("source_file", maintain_order=True))


def publish_night(folder: Path, db_path: Path, input_dir: Path, keys: list[tuple[dt.date, str]], scope,
                  settlements_partial: Path | None, memory_limit: str | None = None, settings=None,
                  contents: dict[str, str] | None = None) -> dict:
    """Every file of the output contract for the audited partitions ``keys`` into ``folder``, from the database:
    the findings and settlements of those partitions, the quarantined lines and file list of this run's input, the
    report with the trend of the nights before (pipelines.audit.trend), and the pages it links to: the finding
    rounds' evidence packs and the flagged subjects' investigations (pipelines.report.linked). ``contents``: each input
    file's SHA-256 as the ingest found it, so that the file list is of the reads of that content."""
    from pipelines.audit.load import quarantine_as_in_files
    from pipelines.audit.trend import night_totals
    from pipelines.ingest.discover import discover
    from pipelines.report import ReportInputs, write_report
    from pipelines.report.gather import gather_from
    from pipelines.report.detector_hold import read_funnel
    from pipelines.report.linked import start_linked_investigations, write_linked_pages
    from pipelines.report.where import hold_sources

    parts = PartClock()
    with parts("input files"):
        found = discover(input_dir)
    con = open_bounded_reader(db_path, memory_limit or READER_MEMORY)
    started = None
    try:
        with parts("findings and totals"):
            findings = _read_findings(con, keys)
            totals = _settlement_totals(con, keys)
        with parts("investigations started"):  # a worker may write half the pages while the rest runs here
            started = start_linked_investigations(con, folder, keys, findings, str(Path(db_path).resolve()), settings)
        with parts("quarantine and files"):
            quarantine, source_files = _input_reads(con, found, contents)
        with parts("trend"):
            trend = night_totals(con, scope.days)
        with parts("report aggregates"):
            report_frames = gather_from(con, keys)  # per-bet handle for hold against theory, the findings' hours
        with parts("funnel"):
            funnel, funnel_curves = read_funnel(con, scope.days)  # the hold detector's rows: the report's funnel
        with parts("settlements export"):
            if settlements_partial is None:
                settlements_partial = export_settlements_of(con, keys, folder / ".settlements.parquet.partial")
            create_keys_table(con, "_keys", keys)
            rounds = con.execute(f"SELECT count(*) FROM core_rounds WHERE {_in_keys(_window(keys))}").fetchall()[0][0]
            con.execute("DROP TABLE _keys")
        with parts("packs and investigations"):
            linked = write_linked_pages(con, folder, keys, findings, str(Path(db_path).resolve()), settings, started)
    finally:
        if started is not None:
            started.cancel()
        con.close()
    with parts("quarantined lines re-read"):
        quarantine = quarantine_as_in_files(quarantine, {f.rel: f.path for f in found if f.kind is not None})
    with parts("csv files"):
        paths = write_files(folder, findings, quarantine, settlements_partial)
    files = tuple(
        (r["source_file"], r["kind"], r["lines_read"], r["rows_accepted"], r["rows_quarantined"])
        for r in source_files.iter_rows(named=True)
    )
    report = ReportInputs(
        findings=findings, totals=totals, days=tuple(scope.days), tables=len({k[1] for k in keys}),
        quarantined=quarantine.height, input_files=files, trend=trend, bets=report_frames["bets"],
        quarantine=quarantine, source_files=source_files, finding_times=report_frames["times"],
        database=str(Path(db_path).resolve()), packs=linked.packs, investigations=linked.investigations,
        funnel=funnel, funnel_curves=funnel_curves, where=hold_sources(folder, findings, linked.investigations),
    )
    with parts("report"):
        paths["report"] = write_report(folder / "report.html", report)
    return {"paths": paths, "findings": findings, "totals": totals, "trend": trend, "quarantined": quarantine.height,
            "rounds": int(rounds), "linked": linked, "parts": parts.seconds}


def clear_stage(stage_dir: Path) -> None:
    shutil.rmtree(stage_dir, ignore_errors=True)
