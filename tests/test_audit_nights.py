"""Two nights audited into one database through `pitaudit audit`, as a user runs it: the second night's export
reuses the first's file names and re-exports one of its rounds with a changed net.

- night 1 holds a wager of 2^63-1 (quarantined with its reason: the night's totals are unaffected), a UTF-16
  file and a symbolic link leading outside the input (each a row of quarantine.csv with its reason);
- night 2 loads (same names, new content), and the changed round is a ``source_changed`` finding naming both
  sources, with both versions in the database and the later one settled.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.currency import format_money


def _export(sim: Path, night: Path) -> None:
    """The simulator's logs under the names an exporter that reuses them every night would give (no date)."""
    night.mkdir()
    for p in sim.glob("*_*"):
        if p.suffix in (".csv", ".jsonl") and p.name != "ground_truth.csv":
            shutil.copyfile(p, night / (p.name.rsplit("_", 1)[0] + p.suffix))


def _audit(folder: Path, db: Path, out: Path) -> str:
    result = CliRunner().invoke(app, ["audit", "--input", str(folder), "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory, prefect_harness):
    from pipelines.simulate.config import Behaviours
    from pipelines.simulate.run import run_simulation

    root = tmp_path_factory.mktemp("nights")
    for night in range(2):
        run_simulation(root / f"sim{night}", rounds=300, seed=90 + night, fault_rate=0.0, behaviours=Behaviours.off(),
                       quiet=True, start_day=dt.date(2026, 11, 24) + dt.timedelta(days=night))
    night1, night2 = root / "night1", root / "night2"
    _export(root / "sim0", night1)
    # night 1: one wager of 2^63-1, a file in the wrong encoding, a link to a file outside the input
    rounds_file = sorted(night1.glob("rounds_BAC-*.jsonl"))[0]
    lines = rounds_file.read_text(encoding="utf-8").splitlines()
    huge = json.loads(lines[5])
    huge["wagers"][0]["amount"] = 2**63 - 1
    lines[5] = json.dumps(huge)
    rounds_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (night1 / "rounds_wrong_encoding.jsonl").write_bytes(lines[7].encode("utf-16") + b"\n")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "rounds_outside.jsonl").write_text(lines[8] + "\n", encoding="utf-8")
    (night1 / "rounds_link.jsonl").symlink_to(root / "elsewhere" / "rounds_outside.jsonl")
    out1 = _audit(night1, root / "audit.duckdb", root / "out1")
    # night 2: its own logs under the same names, and night 1's round 10 of that table re-exported, net changed
    _export(root / "sim1", night2)
    changed = json.loads(lines[10])
    old_net = changed["wagers"][0]["net"]
    changed["wagers"][0]["net"] = old_net + 1000
    (night2 / "rounds_reexport.jsonl").write_text(json.dumps(changed) + "\n", encoding="utf-8")
    # the file night 1 could not read comes back readable (night 2), then as night 1's bytes again (night 3)
    (night2 / "rounds_wrong_encoding.jsonl").write_text(lines[7] + "\n", encoding="utf-8")
    out2 = _audit(night2, root / "audit.duckdb", root / "out2")
    night3 = root / "night3"
    shutil.copytree(night2, night3)
    (night3 / "rounds_wrong_encoding.jsonl").write_bytes(lines[7].encode("utf-16") + b"\n")
    _audit(night3, root / "audit.duckdb", root / "out3")
    return root, rounds_file.name, huge, changed, old_net, out1, out2


def test_unreadable_files_and_refused_links_are_rows_of_quarantine_csv(two_nights):
    root, rounds_name, huge, *_ = two_nights
    q = pl.read_csv(root / "out1" / "quarantine.csv", infer_schema_length=0)
    rows = {r["source_file"]: r for r in q.iter_rows(named=True)}
    assert rows["rounds_wrong_encoding.jsonl"]["source_line"] is None
    assert "UTF-16" in rows["rounds_wrong_encoding.jsonl"]["reason"]
    assert rows["rounds_link.jsonl"]["reason"].startswith("symbolic link leading outside the input folder")
    assert rows[rounds_name]["reason"] == "amount beyond the bound" and rows[rounds_name]["source_line"] == "6"


def test_a_file_unreadable_once_is_in_the_quarantine_only_of_the_nights_it_is_unreadable(two_nights):
    root, *_ = two_nights
    unreadable = {night: pl.read_csv(root / night / "quarantine.csv", infer_schema_length=0)
                  .filter(pl.col("source_file") == "rounds_wrong_encoding.jsonl")["reason"].to_list()
                  for night in ("out1", "out2", "out3")}
    assert unreadable["out2"] == []  # read on night 2: night 1's failure is not this input's
    for night in ("out1", "out3"):  # night 3 holds night 1's bytes again: unreadable again, with its reason
        assert len(unreadable[night]) == 1 and "UTF-16" in unreadable[night][0], unreadable


def test_an_amount_of_2_63_minus_1_breaks_neither_night(two_nights):
    root, rounds_name, huge, *_ = two_nights
    for out in ("out1", "out2"):
        assert (root / out / "report.html").exists()
        settlements = pl.read_parquet(root / out / "settlements.parquet")
        assert settlements["amount"].max() < 10**12
    con = duckdb.connect(str(root / "audit.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM core_rounds WHERE table_id = ? AND round_no = ?",
                           [huge["table_id"], huge["round_no"]]).fetchall()[0][0] == 0
        assert con.execute("SELECT max(abs(amount)) FROM core_wagers").fetchall()[0][0] < 10**12
    finally:
        con.close()


def test_the_next_night_with_the_same_names_loads(two_nights):
    root, *_, out1, out2 = two_nights
    con = duckdb.connect(str(root / "audit.duckdb"), read_only=True)
    try:
        days = [r[0] for r in con.execute("SELECT DISTINCT gaming_day FROM core_rounds ORDER BY 1").fetchall()]
        reused = con.execute("""SELECT count(*) FROM (SELECT source_file FROM core_source_files WHERE status = 'loaded'
                                GROUP BY source_file HAVING count(*) = 2)""").fetchall()[0][0]
    finally:
        con.close()
    assert dt.date(2026, 11, 25) in days and dt.date(2026, 11, 24) in days
    assert reused > 10  # the shoe and rounds files of every table, loaded once a night under one name
    assert "already loaded" in out2


def test_a_round_reexported_with_a_changed_net_is_source_changed_both_versions_kept(two_nights):
    root, rounds_name, _, changed, old_net, _, out2 = two_nights
    findings = pl.read_csv(root / "out2" / "findings.csv", infer_schema_length=0)
    sc = findings.filter(pl.col("kind") == "source_changed")
    assert sc.height == 1, findings.group_by("kind").len()
    f = sc.row(0, named=True)
    assert (f["table_id"], f["round_no"], f["severity"], f["source_file"], f["source_line"]) == \
           (changed["table_id"], str(changed["round_no"]), "high", "rounds_reexport.jsonl", "1")
    assert f"{rounds_name}:11 then rounds_reexport.jsonl:1" in f["detail"]
    assert f"wagers[1].net {format_money(old_net, changed['currency'])} -> " \
           f"{format_money(old_net + 1000, changed['currency'])}" in f["detail"]  # major units, as every detail's
    con = duckdb.connect(str(root / "audit.duckdb"), read_only=True)
    try:
        earlier, later = con.execute("SELECT earlier_content, later_content FROM core_source_changes").fetchall()[0]
        net = con.execute("SELECT net FROM core_wagers WHERE table_id = ? AND round_no = ? AND wager_order = 1",
                          [changed["table_id"], changed["round_no"]]).fetchall()
        settled = con.execute("SELECT recorded_net FROM out_settlements WHERE table_id = ? AND round_no = ? "
                              "AND wager_order = 1", [changed["table_id"], changed["round_no"]]).fetchall()
    finally:
        con.close()
    assert json.loads(earlier)["w"][0]["net"] == old_net and json.loads(later)["w"][0]["net"] == old_net + 1000
    assert net == [(old_net + 1000,)] and settled == [(old_net + 1000,)]  # the later version is the one audited
    # the clean simulated nights give no other money finding for that round but the change itself
    others = findings.filter((pl.col("table_id") == changed["table_id"])
                             & (pl.col("round_no") == str(changed["round_no"])) & (pl.col("kind") != "source_changed"))
    assert others.filter(pl.col("kind") == "payout_mismatch").height == 1  # the changed net no longer matches the cards
