"""The whole pipeline on simulated nights: simulate -> pitaudit audit -> findings vs the ground truth.

Two nights, one audit flow each (flows cost seconds): a clean night must produce no finding at all
("a correctly settled night re-settles with no finding"), and the committed sample night, where
every deterministic fault kind is planted, must show each planted fault as a finding of its kind
on its round (recall 1 for the deterministic kinds), with its malformed lines in quarantine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
STATISTICAL = {"advantage_play", "player_luck_anomaly", "collusion_pattern", "hold_anomaly"}


@pytest.fixture(scope="module")
def clean_night(tmp_path_factory, prefect_harness):
    from pipelines.audit.run import run_audit
    from pipelines.simulate.config import Behaviours
    from pipelines.simulate.run import run_simulation

    root = tmp_path_factory.mktemp("clean")
    run_simulation(root / "night", rounds=1500, seed=424242, fault_rate=0.0, behaviours=Behaviours.off(), quiet=True)
    outcome = run_audit(root / "night", root / "audit.duckdb", root / "out", "06:00", progress=False)
    return root, outcome


@pytest.fixture(scope="module")
def sample_night(tmp_path_factory, prefect_harness):
    from pipelines.audit.run import run_audit

    root = tmp_path_factory.mktemp("sample")
    run_audit(SAMPLE, root / "audit.duckdb", root / "out", "06:00", progress=False)
    return root


def test_a_clean_night_is_all_settled_and_has_no_finding(clean_night):
    root, _ = clean_night
    truth = pl.read_csv(root / "night" / "ground_truth.csv")
    assert truth.height == 0
    findings = pl.read_csv(root / "out" / "findings.csv", infer_schema_length=0)
    assert findings.height == 0, findings.select("kind", "table_id", "round_no", "detail").head(10)
    settlements = pl.read_parquet(root / "out" / "settlements.parquet")
    assert settlements.height > 1500
    assert settlements["expected_net"].null_count() == 0
    assert (settlements["expected_net"] == settlements["recorded_net"]).all()
    assert pl.read_csv(root / "out" / "quarantine.csv").height == 0


def test_every_planted_deterministic_fault_is_found_on_its_round(sample_night):
    truth = pl.read_csv(SAMPLE / "ground_truth.csv", infer_schema_length=0)
    findings = pl.read_csv(sample_night / "out" / "findings.csv", infer_schema_length=0)
    planted = truth.filter(~pl.col("kind").is_in(list(STATISTICAL | {"quarantine"})))
    assert planted.height > 50
    missed = []
    for row in planted.iter_rows(named=True):
        same = findings.filter((pl.col("kind") == row["kind"]) & (pl.col("table_id") == row["table_id"]))
        if row["round_no"]:
            on_round = same.filter(pl.col("round_no") == row["round_no"])
            if row["wager_id"] and row["kind"] == "payout_mismatch":
                on_round = on_round.filter(pl.col("wager_id") == row["wager_id"])
            same = on_round
        if same.height == 0:
            missed.append((row["kind"], row["table_id"], row["round_no"], row["wager_id"], row["detail"]))
    assert not missed, f"{len(missed)} planted faults not found: {missed[:10]}"


def test_every_planted_malformed_line_is_in_quarantine(sample_night):
    truth = pl.read_csv(SAMPLE / "ground_truth.csv", infer_schema_length=0).filter(pl.col("kind") == "quarantine")
    quarantine = pl.read_csv(sample_night / "out" / "quarantine.csv", infer_schema_length=0)
    assert quarantine.height == truth.height > 0


def test_groups_on_worker_processes_give_the_same_files_with_one_prefect_server(sample_night, tmp_path):
    """pipelines.audit.runner: a big night's groups run in spawned worker processes. Forced here on the sample
    night (``PITAUDIT_AUDIT_PROCESSES=2``), through the CLI as a user runs it (Prefect's embedded server, no test
    harness): the files must be those of the run on threads, and the workers must report to the flow's own
    server rather than start one each (Prefect logs each start of a temporary server)."""
    import os
    import re
    import subprocess
    import sys

    # groups of ~150 rounds: a dozen groups, so that settlements.parquet is put together from many staged files
    env = dict(os.environ, PITAUDIT_AUDIT_PROCESSES="2", PITAUDIT_GROUP_ROUNDS="150", PREFECT_HOME=str(tmp_path / "prefect"),
               PREFECT_LOGGING_LEVEL="INFO", PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL="INFO")
    env.pop("PREFECT_API_URL", None)
    cli = Path(sys.executable).parent / "pitaudit"
    out = tmp_path / "out"
    done = subprocess.run([str(cli), "audit", "--input", str(SAMPLE), "--db", str(tmp_path / "audit.duckdb"), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("Starting temporary server") == 1, done.stderr[-3000:]
    # the group tasks ran in the workers, reported to the flow's server, each logging its steps
    assert re.search(r"Task run 'audit [^']*' - group \d+ \(.*re-settle [\d.]+ s", done.stderr), done.stderr[-3000:]
    for name in ("findings.csv", "quarantine.csv"):
        assert (out / name).read_bytes() == (sample_night / "out" / name).read_bytes(), name
    settlements = pl.read_parquet(out / "settlements.parquet")
    assert settlements.equals(pl.read_parquet(sample_night / "out" / "settlements.parquet"))
    keys = ["gaming_day", "table_id", "round_no", "wager_order", "wager_id"]
    assert settlements.select(keys).equals(settlements.select(keys).sort(keys))  # in key order without a sort
    groups = re.search(r"(\d+) group\(s\)", done.stderr)
    assert groups and int(groups.group(1)) >= 10, done.stderr[-2000:]


def test_no_deterministic_finding_falls_on_a_round_where_nothing_was_planted(sample_night):
    """The converse of recall: a finding on a round the simulator left alone is a false alarm."""
    truth = pl.read_csv(SAMPLE / "ground_truth.csv", infer_schema_length=0)
    findings = pl.read_csv(sample_night / "out" / "findings.csv", infer_schema_length=0)
    planted_rounds = set(truth.filter(pl.col("round_no").is_not_null()).select("table_id", "round_no").iter_rows())
    # kinds the ground truth places on a table, not a round (a gap in a device's event numbers)
    planted_tables = set(truth.filter(pl.col("round_no").is_null()).select("kind", "table_id").iter_rows())
    deterministic = findings.filter(~pl.col("kind").is_in(list(STATISTICAL)))
    assert deterministic.height > 50
    stray = [
        (r["kind"], r["table_id"], r["round_no"], r["detail"])
        for r in deterministic.iter_rows(named=True)
        if (r["table_id"], r["round_no"]) not in planted_rounds and (r["kind"], r["table_id"]) not in planted_tables
    ]
    assert not stray, f"{len(stray)} findings on rounds with nothing planted: {stray[:10]}"


def test_the_sample_nights_planted_behaviours_are_its_only_statistical_findings(sample_night):
    """Issue 11: each planted behaviour of the sample night is a statistical finding of its kind naming its
    player (the colluding dealer too) or table, with p and q under the FDR level; and every statistical finding
    names a planted entity (the colluding dealer's error rate is his overpayments seen from the other side)."""
    truth = pl.read_csv(SAMPLE / "ground_truth.csv", infer_schema_length=0).filter(pl.col("kind").is_in(list(STATISTICAL)))
    findings = pl.read_csv(sample_night / "out" / "findings.csv", infer_schema_length=0)
    stats = findings.filter(pl.col("p_value").is_not_null() & (pl.col("p_value") != ""))
    assert set(stats["kind"]) <= STATISTICAL
    assert (findings.filter(pl.col("kind").is_in(list(STATISTICAL)))["p_value"].null_count() == 0)
    assert truth.height == 4
    players, dealers, tables = set(), set(), set()
    for row in truth.iter_rows(named=True):
        same = stats.filter(pl.col("kind") == row["kind"])
        for column in ("player_id", "dealer_id", "table_id"):
            if row[column]:
                same = same.filter(pl.col(column) == row[column])
        assert same.height >= 1, row
        assert (same["q_value"].cast(pl.Float64) <= 0.01).all()
        players |= {row["player_id"]} - {None}
        dealers |= {row["dealer_id"]} - {None}
        tables |= {row["table_id"]} - {None}
    for row in stats.iter_rows(named=True):
        assert row["player_id"] in players or row["dealer_id"] in dealers or row["table_id"] in tables, row["detail"][:200]
