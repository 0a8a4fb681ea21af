"""``pitaudit audit`` end to end through the Prefect flow: the files of the contract, the database, re-runs, exit status.

Flows are costly (an embedded Prefect server per process), so one module fixture runs the audit
twice over the same input into the same database and every test reads what those two runs left.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from pipelines.audit.frames import FINDING_CONTRACT_COLUMNS
from pipelines.cli import app
from test_audit_findings import BANKER_6_THREE_CARDS, PLAYER_NATURAL
from test_audit_support import NightBuilder
from test_report import assert_offline

ROOT = Path(__file__).resolve().parents[1]

GARBAGE = '{"table_id": "BAC-01", "round_no": '


def _night() -> NightBuilder:
    nb = NightBuilder()
    nb.round("BAC-01", 1, BANKER_6_THREE_CARDS, [("W1", "tiger", 10000, 120000), ("W2", "banker", 10000, 9500)],
             recorded={"winner": "banker", "player_points": 0, "banker_points": 6})
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W3", "player", 600000, 600000)], recorded={"winner": "banker"})
    nb.round("BAC-01", 4, "9c 2h Zz 3s", [("W4", "player", 10000, 10000)])
    nb.round("BAC-02", 1, None, [("W5", "player", 10000, 10000)], dealer_id="D2")
    nb.round("BAC-02", 2, PLAYER_NATURAL, [("W6", "tie", 1000, -1000, 2, "P-6", 4.0)], dealer_id="D2")
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 15000, 1)], ruleset="hoiana-blackjack",
             actions=[(1, 1, "stand", None)])
    return nb


def _db_rows(db) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in ("out_findings", "out_settlements")}
    finally:
        con.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory, prefect_harness):
    from pipelines.audit.run import run_audit

    root = tmp_path_factory.mktemp("audit")
    inp = _night().write_input(root / "night")
    with open(inp / "rounds_night.jsonl", "a", encoding="utf-8") as fh:
        fh.write(GARBAGE + "\n")
    db = root / "audit.duckdb"
    first = run_audit(inp, db, root / "out1", progress=False)
    rows_after_first = _db_rows(db)
    second = run_audit(inp, db, root / "out2", progress=False)
    return {"root": root, "input": inp, "db": db, "first": first, "second": second, "rows1": rows_after_first}


def test_findings_csv_has_the_contract_columns_first(runs):
    header = (runs["root"] / "out1" / "findings.csv").read_text().splitlines()[0].split(",")
    assert tuple(header[: len(FINDING_CONTRACT_COLUMNS)]) == FINDING_CONTRACT_COLUMNS


def test_findings_csv_holds_the_nights_findings(runs):
    f = pl.read_csv(runs["root"] / "out1" / "findings.csv", infer_schema_length=0)
    got = {(r["kind"], r["table_id"], r["round_no"], r["wager_id"]) for r in f.iter_rows(named=True)}
    assert got == {
        ("payout_mismatch", "BAC-01", "1", "W1"),
        ("limit_breach", "BAC-01", "2", "W3"),
        ("result_mismatch", "BAC-01", "2", None),
        ("sequence_gap", "BAC-01", "4", None),
        ("card_integrity", "BAC-01", "4", None),
        ("void_not_honoured", "BAC-01", "4", "W4"),
        ("unmatched_round", "BAC-02", "1", None),
        ("late_wager", "BAC-02", "2", "W6"),
        ("payout_mismatch", "BJ-01", "1", "B1"),
    }
    tiger = f.filter(pl.col("wager_id") == "W1").row(0, named=True)
    assert (tiger["expected_net"], tiger["recorded_net"], tiger["difference"]) == ("200000", "120000", "-80000")


def test_rerunning_the_same_input_gives_byte_identical_files_and_the_same_rows(runs):
    for name in ("findings.csv", "quarantine.csv"):
        assert (runs["root"] / "out1" / name).read_bytes() == (runs["root"] / "out2" / name).read_bytes(), name
    a = pl.read_parquet(runs["root"] / "out1" / "settlements.parquet")
    b = pl.read_parquet(runs["root"] / "out2" / "settlements.parquet")
    assert a.equals(b)
    assert _db_rows(runs["db"]) == runs["rows1"]
    assert len(runs["rows1"]["out_findings"]) == runs["first"].findings.height


def test_settlements_parquet_has_one_row_per_wager_with_expected_recorded_and_clause(runs):
    s = pl.read_parquet(runs["root"] / "out1" / "settlements.parquet")
    assert sorted(s["wager_id"]) == ["B1", "W1", "W2", "W3", "W4", "W5", "W6"]
    for col in ("gaming_day", "table_id", "round_no", "wager_id", "game", "ruleset_version", "expected_net",
                "recorded_net", "clause", "source_file", "source_line"):
        assert col in s.columns
    w1 = s.filter(pl.col("wager_id") == "W1").row(0, named=True)
    assert (w1["expected_net"], w1["recorded_net"], w1["clause"]) == (200000, 120000, "TBAC-5.1.3")
    assert w1["ruleset_version"] == "01/01.10.2024"
    w5 = s.filter(pl.col("wager_id") == "W5").row(0, named=True)
    assert w5["expected_net"] is None and "no cards" in w5["unsettled_reason"]


def test_quarantine_csv_lists_the_malformed_line_with_a_reason(runs):
    rows = list(csv.DictReader(io.StringIO((runs["root"] / "out1" / "quarantine.csv").read_text())))
    assert [list(r) for r in rows[:1]] == [["source_file", "source_line", "reason", "raw"]]
    bad = [r for r in rows if r["raw"] == GARBAGE]
    assert len(bad) == 1 and bad[0]["source_file"] == "rounds_night.jsonl" and bad[0]["source_line"] == "7"
    assert bad[0]["reason"]


def test_the_report_is_written_and_offline(runs):
    html = (runs["root"] / "out1" / "report.html").read_text()
    assert_offline(html)
    assert "BAC-01" in html and "payout_mismatch" in html


def test_the_summary_counts_what_was_audited(runs):
    o = runs["first"]
    assert (o.rounds, o.partitions, o.quarantined, o.engine_errors) == (6, 3, 1, 0)
    assert o.paths["report"].name == "report.html"


def test_cli_audit_exits_0_and_prints_where_the_report_is(runs):
    result = CliRunner().invoke(app, ["audit", "--input", str(runs["input"]), "--db", str(runs["db"]),
                                      "--out", str(runs["root"] / "out3")])
    assert result.exit_code == 0, result.output
    assert "report:" in result.output and "findings: 9" in result.output
    assert (runs["root"] / "out3" / "findings.csv").read_bytes() == (runs["root"] / "out1" / "findings.csv").read_bytes()


@pytest.mark.parametrize("case", ["missing input", "bad day start", "out is a file", "db is a folder"])
def test_cli_audit_exits_non_zero_with_a_one_line_reason(tmp_path, case):
    inp = tmp_path / "in"
    inp.mkdir()
    db, out, start = tmp_path / "a.duckdb", tmp_path / "out", "06:00"
    if case == "missing input":
        inp = tmp_path / "nowhere"
    elif case == "bad day start":
        start = "6 o'clock"
    elif case == "out is a file":
        out.write_text("x")
    else:
        db.mkdir()
    result = CliRunner().invoke(app, ["audit", "--input", str(inp), "--db", str(db), "--out", str(out),
                                      "--gaming-day-start", start])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pitaudit: "), result.output
    assert "Traceback" not in result.output


def test_demo_audits_the_sample_night_and_says_where_the_report_is(runs, tmp_path, capsys):
    from pipelines.demo import run_demo

    outcome = run_demo(tmp_path / "demo", sample=runs["input"], progress=False)
    printed = capsys.readouterr().out
    report = tmp_path / "demo" / "report.html"
    assert report.exists() and (tmp_path / "demo" / "pitaudit.duckdb").exists()
    assert str(report.resolve()) in printed and "findings: 9" in printed
    assert outcome.findings.height == 9


def test_demo_without_a_sample_night_fails_with_one_line(tmp_path):
    from pipelines.audit.run import AuditError
    from pipelines.demo import run_demo

    with pytest.raises(AuditError, match="no sample night"):
        run_demo(tmp_path / "demo", sample=tmp_path / "nothing-here")


@pytest.mark.parametrize(("command", "which"), [
    ("audit", "input"), ("audit", "db"), ("audit", "out"), ("ingest", "input"), ("ingest", "db"),  # ingest has no --out
])
def test_a_path_that_is_not_utf8_stops_the_command_with_one_line_naming_it(tmp_path, command, which):
    """A folder named in Latin-1 (``café`` as the byte 0xe9) reached DuckDB ("cannot encode str as UTF-8") or Prefect's
    parameters (UnicodeEncodeError) mid-run; it is refused before anything is written, named with its byte escaped."""
    latin = os.fsdecode(b"caf\xe9")
    paths = {"input": tmp_path / "in", "db": tmp_path / "a.duckdb", "out": tmp_path / "out"}
    paths[which] = tmp_path / latin / paths[which].name
    paths["input"].mkdir(parents=True)
    sample = ROOT / "data" / "sample"
    for name in ("rounds_BAC-01_2026-11-24.jsonl", "shoe_AE-0101_2026-11-24.csv"):
        shutil.copy(sample / name, paths["input"] / name)
    args = [command, "--input", str(paths["input"]), "--db", str(paths["db"])]
    result = CliRunner().invoke(app, args + (["--out", str(paths["out"])] if command == "audit" else []))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "not UTF-8" in lines[0] and "caf\\xe9" in lines[0], result.output
    assert not paths["db"].exists()


def test_an_unreadable_camera_map_is_said_on_the_console_as_well_as_in_the_report(runs, tmp_path):
    """``PITAUDIT_CAMERAS`` naming a file that is not a camera map: the night is audited, the packs name no camera and
    the report says why, but the console said nothing of it (an operator reads the console, or the cron log)."""
    from pipelines.audit.run import run_audit, summary_text
    from pipelines.settings import Settings

    bad = tmp_path / "cameras.toml"
    bad.write_text("tables = [", encoding="utf-8")
    settings = Settings.defaults().model_copy(update={"cameras": bad})
    outcome = run_audit(runs["input"], tmp_path / "audit.duckdb", tmp_path / "out", progress=False, settings=settings)
    warnings = [line for line in summary_text(outcome).splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "the camera map could not be read" in warnings[0] and str(bad) in warnings[0]
    # the report said it among the packs "not written", though every pack was written (without camera ids)
    note = re.search(r'<p class="note" id="packs-note">(.*?)</p>', (tmp_path / "out" / "report.html").read_text(
        encoding="utf-8")).group(1)
    assert "not written" not in note and re.search(r"pack\(s\), one for each round with a finding; the camera map "
                                                   r"could not be read \(.*\): video windows without camera ids\.$", note)
