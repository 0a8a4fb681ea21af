"""Night after night into one database (docs/formats.md, "Night after night"), through ``pitaudit audit`` as a user runs it.

Three consecutive simulated nights (one simulation, so the tables' round and event counters run on from one night
to the next, as a casino's do), each exported into a folder of its own under the same file names; audited one after
the other into one database. Each night's files must show that night only, the report the nights before it as a
trend; a re-run re-settles nothing and publishes the same bytes; a backfill re-audits a range, idempotently; the
days chosen with --gaming-day; an empty folder's exit status.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from pipelines.cli import EXIT_NOTHING_TO_AUDIT, app

FIRST = dt.date(2026, 11, 24)
DAYS = [FIRST + dt.timedelta(days=i) for i in range(3)]


def split_nights(simulated: Path, root: Path) -> list[Path]:
    """One folder per gaming day, each file under its name without the day: the same names every night."""
    folders = []
    for day in DAYS:
        folder = root / f"export-{day.isoformat()}"
        folder.mkdir()
        for path in simulated.glob(f"*_{day.isoformat()}.*"):
            shutil.copyfile(path, folder / path.name.replace(f"_{day.isoformat()}", ""))
        folders.append(folder)
    names = [sorted(p.name for p in f.iterdir()) for f in folders]
    assert names[0] == names[1] == names[2] and names[0]
    return folders


def audit(*args: str) -> "CliRunner.invoke":
    return CliRunner().invoke(app, ["audit", *args])


def db_rows(db: Path) -> dict[str, list[tuple]]:
    """Every row of the audit's tables, the statistical findings included: a re-run of the same input changes none."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in ("out_findings", "out_settlements", "out_partitions")}
    finally:
        con.close()


@pytest.fixture(scope="module")
def nights(tmp_path_factory, prefect_harness):
    from pipelines.simulate.run import run_simulation

    root = tmp_path_factory.mktemp("nights")
    run_simulation(root / "sim", tables=6, rounds=400, days=3, seed=20261124, fault_rate=0.03, start_day=FIRST,
                   quiet=True)
    folders = split_nights(root / "sim", root)
    db = root / "audit.duckdb"
    results = []
    for i, folder in enumerate(folders):
        result = audit("--input", str(folder), "--db", str(db), "--out", str(root / f"out{i + 1}"))
        results.append(result)
        if i == 1:
            rows_after_two = db_rows(db)
    return {"root": root, "folders": folders, "db": db, "results": results, "rows_after_two": rows_after_two}


def test_each_night_is_audited_and_exits_0(nights):
    for result in nights["results"]:
        assert result.exit_code == 0, result.output


def test_each_nights_files_hold_that_night_only(nights):
    root = nights["root"]
    for i, day in enumerate(DAYS):
        out = root / f"out{i + 1}"
        findings = pl.read_csv(out / "findings.csv", infer_schema_length=0)
        assert findings.height > 0, f"night {day}: the planted faults should give findings"
        assert set(findings["gaming_day"]) == {day.isoformat()}
        settlements = pl.read_parquet(out / "settlements.parquet")
        assert set(settlements["gaming_day"]) == {day}
        expected_rounds = sum(1 for p in nights["folders"][i].glob("rounds_*.jsonl")
                              for line in p.read_text().splitlines() if f'"bets_closed_at"' in line)
        assert settlements.select("table_id", "round_no").n_unique() <= expected_rounds
        assert settlements.select("table_id", "round_no").n_unique() > 0.9 * expected_rounds


def test_the_third_nights_report_lists_its_input_files_once_each_not_the_earlier_nights_reads(nights):
    """The three nights' files have the same names: the report's list of input files (``load_source_files_of``) is
    the last night's reads, one per file, with that night's counts."""
    from pipelines.audit.load import load_source_files_of

    folder = nights["folders"][-1]
    names = sorted(p.name for p in folder.iterdir())
    con = duckdb.connect(str(nights["db"]), read_only=True)
    try:
        files = load_source_files_of(con, names)
        reads = con.execute("SELECT count(*) FROM core_source_files WHERE source_file IN (SELECT unnest(?::VARCHAR[]))",
                            [names]).fetchall()[0][0]
    finally:
        con.close()
    assert reads == 3 * len(names)  # every name read on each of the three nights
    assert sorted(files["source_file"].to_list()) == names
    for r in files.filter(pl.col("source_file").str.starts_with("rounds_")).iter_rows(named=True):
        assert r["lines_read"] == len((folder / r["source_file"]).read_text(encoding="utf-8").splitlines())


def test_each_nights_quarantine_lists_that_nights_lines_only(nights):
    root, seen = nights["root"], 0
    for i, folder in enumerate(nights["folders"]):
        rows = pl.read_csv(root / f"out{i + 1}" / "quarantine.csv", infer_schema_length=0)
        for r in rows.iter_rows(named=True):
            lines = (folder / r["source_file"]).read_text(encoding="utf-8", errors="replace").split("\n")
            assert lines[int(r["source_line"]) - 1].rstrip("\r") == r["raw"].removeprefix("'") or \
                lines[int(r["source_line"]) - 1].rstrip("\r") == r["raw"]
            seen += 1
    con = duckdb.connect(str(nights["db"]), read_only=True)
    try:
        stored = con.execute("SELECT count(*) FROM core_quarantine").fetchall()[0][0]
    finally:
        con.close()
    assert seen == stored > 0  # every quarantined line is in exactly one night's file


def test_the_database_keeps_every_night(nights):
    con = duckdb.connect(str(nights["db"]), read_only=True)
    try:
        days = [r[0] for r in con.execute("SELECT DISTINCT gaming_day FROM out_settlements ORDER BY 1").fetchall()]
        parts = con.execute("SELECT count(*), count(DISTINCT gaming_day) FROM out_partitions").fetchall()[0]
    finally:
        con.close()
    assert days == DAYS
    assert parts[1] == 3 and parts[0] >= 3 * 6


def test_the_third_report_shows_the_trend_of_the_nights_before(nights):
    html = (nights["root"] / "out3" / "report.html").read_text(encoding="utf-8")
    assert "Night after night" in html
    for day in DAYS:
        assert day.isoformat() in html
    assert f"tonight {DAYS[2].isoformat()}" in html
    assert f"tonight {DAYS[0].isoformat()}" not in html
    first = (nights["root"] / "out1" / "report.html").read_text(encoding="utf-8")
    assert DAYS[1].isoformat() not in first and DAYS[2].isoformat() not in first


def test_the_trend_frame_has_one_row_per_night_and_the_nights_findings(nights):
    from pipelines.audit.trend import night_totals

    con = duckdb.connect(str(nights["db"]), read_only=True)
    try:
        trend = night_totals(con, (DAYS[2],))
        found = con.execute("SELECT gaming_day, count(*) FROM out_findings GROUP BY 1").fetchall()
        handle = con.execute("SELECT gaming_day, sum(amount) FROM out_settlements GROUP BY 1").fetchall()
    finally:
        con.close()
    per_night = trend.group_by("gaming_day").agg(pl.col("tonight").all(), pl.col("findings").sum(),
                                                 pl.col("handle").sum()).sort("gaming_day")
    assert per_night["gaming_day"].to_list() == DAYS
    assert per_night["tonight"].to_list() == [False, False, True]
    assert dict(zip(per_night["gaming_day"], per_night["findings"])) == dict(found)
    assert dict(zip(per_night["gaming_day"], per_night["handle"])) == {d: int(v) for d, v in handle}
    assert trend.schema["handle"] == pl.Int128


def test_rerunning_a_night_resettles_nothing_and_publishes_the_same_bytes(nights, tmp_path):
    root = nights["root"]
    before = db_rows(nights["db"])
    result = audit("--input", str(nights["folders"][2]), "--db", str(nights["db"]), "--out", str(tmp_path / "again"))
    assert result.exit_code == 0, result.output
    assert re.search(r"in \d+ partition\(s\), 0 re-settled", result.output), result.output
    for name in ("findings.csv", "quarantine.csv"):
        assert (tmp_path / "again" / name).read_bytes() == (root / "out3" / name).read_bytes(), name
    assert pl.read_parquet(tmp_path / "again" / "settlements.parquet").equals(pl.read_parquet(root / "out3" / "settlements.parquet"))
    assert db_rows(nights["db"]) == before


def test_a_backfill_reaudits_a_range_idempotently(nights, tmp_path):
    root = nights["root"]
    args = ["--input", str(nights["folders"][0]), "--db", str(nights["db"]), "--from", DAYS[0].isoformat(),
            "--to", DAYS[1].isoformat()]
    first = audit(*args, "--out", str(tmp_path / "b1"))
    assert first.exit_code == 0, first.output
    findings = pl.read_csv(tmp_path / "b1" / "findings.csv", infer_schema_length=0)
    assert set(findings["gaming_day"]) == {DAYS[0].isoformat(), DAYS[1].isoformat()}
    nightly = pl.concat([pl.read_csv(root / f"out{i}" / "findings.csv", infer_schema_length=0) for i in (1, 2)])
    # the statistical findings too: a night's windows hold the nights up to it, whatever was loaded later
    assert sorted(findings["finding_id"]) == sorted(nightly["finding_id"])
    settlements = pl.read_parquet(tmp_path / "b1" / "settlements.parquet")
    assert settlements.equals(pl.concat([pl.read_parquet(root / f"out{i}" / "settlements.parquet") for i in (1, 2)]))
    before = db_rows(nights["db"])
    second = audit(*args, "--out", str(tmp_path / "b2"))
    assert second.exit_code == 0, second.output
    assert (tmp_path / "b2" / "findings.csv").read_bytes() == (tmp_path / "b1" / "findings.csv").read_bytes()
    assert db_rows(nights["db"]) == before


def test_gaming_day_chooses_one_night_from_the_database(nights, tmp_path):
    result = audit("--input", str(nights["folders"][2]), "--db", str(nights["db"]), "--out", str(tmp_path / "d"),
                   "--gaming-day", DAYS[1].isoformat())
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d" / "findings.csv").read_bytes() == (nights["root"] / "out2" / "findings.csv").read_bytes()


FILE_LIST = re.compile(r"[\d,]+ input file\(s\), [\d,]+ line\(s\) read: [\d,]+ accepted, [\d,]+ quarantined")


def test_an_earlier_export_audited_again_lists_its_own_files_not_the_later_nights(nights, tmp_path):
    """Night 2's folder audited again after night 3 (the same file names): its report's file list is night 2's, as
    its quarantine.csv is. Before, the list took each name's latest read, night 3's: its lines and quarantine counts
    beside night 2's findings and quarantine."""
    root = nights["root"]
    result = audit("--input", str(nights["folders"][1]), "--db", str(nights["db"]), "--out", str(tmp_path / "again2"),
                   "--gaming-day", DAYS[1].isoformat())
    assert result.exit_code == 0, result.output
    again = FILE_LIST.findall((tmp_path / "again2" / "report.html").read_text(encoding="utf-8"))
    night2, night3 = (FILE_LIST.findall((root / f"out{i}" / "report.html").read_text(encoding="utf-8")) for i in (2, 3))
    assert again and again == night2 and night2 != night3, (again, night2, night3)
    assert (tmp_path / "again2" / "quarantine.csv").read_bytes() == (root / "out2" / "quarantine.csv").read_bytes()


def test_a_day_with_no_round_is_nothing_to_audit(nights, tmp_path):
    result = audit("--input", str(nights["folders"][2]), "--db", str(nights["db"]), "--out", str(tmp_path / "none"),
                   "--gaming-day", "2020-01-01")
    assert result.exit_code == EXIT_NOTHING_TO_AUDIT, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["pitaudit: nothing to audit: no round in the chosen gaming day(s) 2020-01-01"]
    assert not (tmp_path / "none" / "findings.csv").exists()


def test_an_empty_folder_is_nothing_to_audit_not_a_clean_night(tmp_path, prefect_harness):
    (tmp_path / "empty").mkdir()
    result = audit("--input", str(tmp_path / "empty"), "--db", str(tmp_path / "a.duckdb"), "--out", str(tmp_path / "out"))
    assert result.exit_code == EXIT_NOTHING_TO_AUDIT == 4, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pitaudit: nothing to audit: no round to audit in "), result.output
    assert not list((tmp_path / "out").glob("*.csv")) and not (tmp_path / "out" / "report.html").exists()


def test_a_folder_of_quarantined_lines_is_nothing_to_audit_and_says_what_it_held(tmp_path, prefect_harness):
    """Every line quarantined (an exporter that changed its format overnight): status 4 as for an empty folder, and the
    one line says what the input held. Before, it said only "(no round log with a gaming day)", which a folder of
    10,000 refused lines is not, and the quarantine was nowhere in sight."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "rounds_BAC-01.jsonl").write_text('garbage\n{"table_id": "BAC-01"}\n{"table_id": "BAC-01", "a": 1}\n')
    (folder / "shoe_ADD-01.csv").write_text("device_id,table_id\n")
    result = audit("--input", str(folder), "--db", str(tmp_path / "a.duckdb"), "--out", str(tmp_path / "out"))
    assert result.exit_code == EXIT_NOTHING_TO_AUDIT, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"pitaudit: nothing to audit: no round to audit in {folder}: "), lines
    assert "3 new line(s) read, 3 quarantined (missing required field 2, unparseable JSON 1)" in lines[0]
    assert "1 not read (shoe_ADD-01.csv: first line is not the shoe CSV header" in lines[0]
    assert not (tmp_path / "out" / "findings.csv").exists()
    # what the ingest wrote is in the readers' snapshot too (investigators read the snapshot, not the database)
    from pipelines.db import open_snapshot

    con = open_snapshot(tmp_path / "a.duckdb")
    try:
        assert con.execute("SELECT count(*) FROM core_quarantine").fetchone() == (3,)
    finally:
        con.close()
    again = audit("--input", str(folder), "--db", str(tmp_path / "a.duckdb"), "--out", str(tmp_path / "out"))
    assert again.exit_code == EXIT_NOTHING_TO_AUDIT and "2 file(s); 1 already loaded; 1 not read" in again.output


@pytest.mark.parametrize("options, words", [
    (["--gaming-day", "24/11/2026"], "--gaming-day must be a date like 2026-11-24"),
    (["--from", "2026-11-24"], "a backfill needs both --from and --to"),
    (["--from", "2026-11-25", "--to", "2026-11-24"], "is before --from"),
    (["--gaming-day", "2026-11-24", "--from", "2026-11-24", "--to", "2026-11-25"], "either --gaming-day or --from/--to"),
])
def test_bad_days_stop_with_one_line_and_status_2(tmp_path, prefect_harness, options, words):
    (tmp_path / "in").mkdir()
    result = audit("--input", str(tmp_path / "in"), "--db", str(tmp_path / "a.duckdb"), "--out", str(tmp_path / "o"), *options)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in result.output


def test_a_backfill_of_the_folder_holding_every_nights_export_lists_their_quarantined_lines_and_files(nights, tmp_path):
    """The README's backfill, ``--input exports/`` over the nights' own folders: every file is already loaded, under
    its name in its night's folder. Its quarantine.csv and its report's file list are the lines and reads those files
    hold, under their paths in this input. Before, both were empty ("0 input file(s), 0 line(s) read"): the reads
    were looked up by the name each file was loaded under, which no file of this input has."""
    root, exports = nights["root"], tmp_path / "exports"
    for folder in nights["folders"]:
        shutil.copytree(folder, exports / folder.name)
    result = audit("--input", str(exports), "--db", str(nights["db"]), "--out", str(tmp_path / "all"),
                   "--from", DAYS[0].isoformat(), "--to", DAYS[2].isoformat())
    assert result.exit_code == 0, result.output
    got = pl.read_csv(tmp_path / "all" / "quarantine.csv", infer_schema_length=0)
    nightly = pl.concat([pl.read_csv(root / f"out{i + 1}" / "quarantine.csv", infer_schema_length=0)
                         .with_columns((pl.lit(f"{folder.name}/") + pl.col("source_file")).alias("source_file"))
                         for i, folder in enumerate(nights["folders"])])
    assert nightly.height > 0 and got.sort(got.columns).equals(nightly.sort(nightly.columns))
    html = (tmp_path / "all" / "report.html").read_text(encoding="utf-8")
    files, lines = (sum(int(m.group(k).replace(",", "")) for i in (1, 2, 3) for m in re.finditer(
        r"([\d,]+) input file\(s\), ([\d,]+) line\(s\) read", (root / f"out{i}" / "report.html").read_text(encoding="utf-8")))
        for k in (1, 2))
    assert f"{files:,} input file(s), {lines:,} line(s) read: " in html
