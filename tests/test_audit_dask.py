"""The audit on a Dask cluster (``pitaudit audit --dask local``) gives the files of the single-process run.

Issue 13: the partitions' tasks run on a real ``distributed.LocalCluster`` of two worker processes through
prefect-dask's task runner, reading the canonical tables from the Parquet folder the writer publishes
(pipelines.audit.canon), never the database file. Both runs go through the CLI as a user runs it
(Prefect's embedded server, no test harness), on a small simulated night with faults planted, and must
leave byte-identical findings.csv, quarantine.csv and report.html (the report's figures) and equal
settlements.parquet. The Parquet reader is also held to the database reader partition group by
partition group, and the published folder to the hive layout other tools read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

CLI = Path(sys.executable).parent / "pitaudit"


def _report(out: Path, db: Path) -> str:
    """report.html with its packed findings data unpacked and the database's path (which the report's evidence
    commands name, and which differs between the two runs) replaced by ``<db>``: the rest must be byte-equal."""
    from pipelines.report.payload import unpack

    text = (out / "report.html").read_text(encoding="utf-8")
    head, rest = text.split('<script type="application/octet-stream" id="findings-data" data-encoding="gzip+base64">', 1)
    data, tail = rest.split("</script>", 1)
    return (head + json.dumps(unpack(data), sort_keys=True) + tail).replace(str(db), "<db>")


def _audit(night: Path, where: Path, *extra: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PREFECT_HOME=str(where / "prefect"), PITAUDIT_GROUP_ROUNDS="400", **env_extra)
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run([str(CLI), "audit", "--input", str(night), "--db", str(where / "audit.duckdb"),
                           "--out", str(where / "out"), *extra], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    from pipelines.simulate.run import run_simulation

    root = tmp_path_factory.mktemp("dask-night")
    # three games, faults planted (malformed lines, mis-settled wagers, lost events) so that every file has rows
    run_simulation(root / "night", rounds=3000, tables=6, days=2, seed=1313, fault_rate=0.02, quiet=True)
    return root


@pytest.fixture(scope="module")
def single(night):
    where = night / "single"
    _audit(night / "night", where, PITAUDIT_AUDIT_PROCESSES="0")
    return where


def test_a_local_dask_cluster_of_two_workers_gives_the_files_of_the_single_process_run(night, single):
    where = night / "dask"
    done = _audit(night / "night", where, "--dask", "local", PITAUDIT_AUDIT_PROCESSES="2", PREFECT_LOGGING_LEVEL="INFO",
                  PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL="INFO")
    assert "on a Dask cluster" in done.stderr, done.stderr[-2000:]
    # the group tasks ran on the cluster and logged their steps, reported to the flow's server
    assert re.search(r"Task run 'audit [^']*' - group \d+ \(.*re-settle [\d.]+ s", done.stderr), done.stderr[-3000:]
    assert done.stderr.count("Starting temporary server") == 1, done.stderr[-3000:]
    findings = pl.read_csv(single / "out" / "findings.csv")
    assert findings.height > 0 and pl.read_csv(single / "out" / "quarantine.csv").height > 0
    for name in ("findings.csv", "quarantine.csv"):
        assert (where / "out" / name).read_bytes() == (single / "out" / name).read_bytes(), name
    assert _report(where / "out", where / "audit.duckdb") == _report(single / "out", single / "audit.duckdb")
    settlements = pl.read_parquet(where / "out" / "settlements.parquet")
    assert settlements.height > 0
    assert settlements.equals(pl.read_parquet(single / "out" / "settlements.parquet"))
    # the workers read the published Parquet: the hive layout, and the database holds the same rounds
    canon = where / "audit.parquet"
    days = {p.name for p in (canon / "rounds").iterdir()}
    assert days and all(d.startswith("gaming_day=") for d in days)
    # a day's rows in the day's folder (no folder per table: a table's rows lie together in its row groups)
    assert all(f.parent.parent == canon / "rounds" for f in (canon / "rounds").rglob("*.parquet"))
    import duckdb

    con = duckdb.connect()
    parquet_rounds = con.execute(
        f"SELECT count(*) FROM read_parquet('{(canon / 'rounds').as_posix()}/*/*.parquet', hive_partitioning = true)"
    ).fetchone()[0]
    con.close()
    db = duckdb.connect(str(where / "audit.duckdb"), read_only=True)
    assert parquet_rounds == db.execute("SELECT count(*) FROM core_rounds").fetchone()[0] > 0
    db.close()


def test_a_running_cluster_at_a_scheduler_address_gives_the_same_files(night, single):
    """``--dask tcp://HOST:PORT``: a cluster the audit did not start (here a LocalCluster of two worker processes
    started by the test, as ``dask scheduler`` and ``dask worker`` would be), its workers preloading
    pipelines.audit.dask_worker as the README tells."""
    from distributed import LocalCluster

    where = night / "address"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      preload=["pipelines.audit.dask_worker"]) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://")
        done = _audit(night / "night", where, "--dask", address)
        assert "on a Dask cluster" in done.stderr, done.stderr[-2000:]
        # the tasks ran on the cluster's workers: the scheduler saw them
        with cluster.get_client() as client:
            ran = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.transition_log))
        assert ran > 0
    for name in ("findings.csv", "quarantine.csv"):
        assert (where / "out" / name).read_bytes() == (single / "out" / name).read_bytes(), name
    assert _report(where / "out", where / "audit.duckdb") == _report(single / "out", single / "audit.duckdb")
    assert pl.read_parquet(where / "out" / "settlements.parquet").equals(pl.read_parquet(single / "out" / "settlements.parquet"))


def test_a_group_read_from_the_parquet_is_the_group_read_from_the_database(single):
    """pipelines.audit.canon: every frame of every group, the gap evidence and the shoe openings, are the same rows either way, with
    the whole database published and with only one audited gaming day (and its margin) published."""
    from pipelines.audit.canon import open_source_reader, publish_canon
    from pipelines.audit.load import (
        Window, contiguous_groups, load_gap_evidence, load_partition, load_shoe_openings, partition_keys,
    )
    from pipelines.audit.params import AuditParams
    from pipelines.db import open_reader

    params = AuditParams()
    db = single / "audit.duckdb"
    con = open_reader(db)
    all_keys = partition_keys(con, params)
    days = sorted(set(all_keys["gaming_day"].to_list()))
    assert len(days) >= 2
    try:
        for audited in (None, (days[-1],)):
            canon = publish_canon(db, params.day_start_minutes, days=audited)
            window = Window(audited) if audited else None
            keys = partition_keys(con, params, window)
            groups = contiguous_groups(keys, 3)
            assert len(groups) == 3
            for group in groups:
                from_db = load_partition(con, group, params)
                pq = open_source_reader(canon, "1GB", sorted({k[1] for k in group}))
                try:
                    from_parquet = load_partition(pq, group, params)
                finally:
                    pq.close()
                for name in ("rounds", "wagers", "actions", "events"):
                    a, b = getattr(from_db, name), getattr(from_parquet, name)
                    assert a.height > 0 or name == "actions"
                    assert a.equals(b), name
            night = open_source_reader(canon, "1GB")
            try:
                for a, b in zip(load_gap_evidence(con, params, window), load_gap_evidence(night, params, window)):
                    assert a.equals(b)
                # the burn check's shoe openings (TBAC-7.11, BJ-7.13)
                shoes = load_shoe_openings(con, params, window)
                assert shoes.height > 0 and shoes.equals(load_shoe_openings(night, params, window))
            finally:
                night.close()
    finally:
        con.close()


def test_the_local_clusters_workers_run_without_dasks_profiler():
    """``--dask local``'s cluster (runner.dask_task_runner): Dask's statistical profiler, which samples the running
    group's stack 100 times a second for a dashboard this cluster does not serve, is off in its workers; their
    heartbeat and memory monitor run as usual, and the config of the process that started the cluster is untouched."""
    import dask
    from distributed import Client, LocalCluster

    from pipelines.audit.runner import dask_task_runner

    runner = dask_task_runner("local", workers=1)
    assert runner.cluster_class == "distributed.LocalCluster"
    with LocalCluster(**runner.cluster_kwargs) as cluster, Client(cluster) as client:
        callbacks = client.run(lambda dask_worker: sorted(dask_worker.periodic_callbacks))
    assert len(callbacks) == 1
    for names in callbacks.values():
        assert "heartbeat" in names and "memory_monitor" in names
        assert not any(name.startswith("profile") for name in names), names
    assert dask.config.get("distributed.worker.profile.enabled") is True


def test_dask_takes_local_or_a_scheduler_address():
    from pipelines.audit.runner import parse_dask_address

    assert parse_dask_address("local") == "local"
    assert parse_dask_address("tcp://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    for bad in ("", "10.0.0.5:8786", "tcp://", "locl"):
        with pytest.raises(ValueError, match="--dask takes local or a scheduler address"):
            parse_dask_address(bad)


def test_no_scheduler_at_the_address_is_one_line_before_anything_runs():
    from pipelines.audit.runner import check_scheduler

    with pytest.raises(ConnectionError, match=r"^no Dask scheduler answers at tcp://127\.0\.0\.1:1: ") as info:
        check_scheduler("tcp://127.0.0.1:1", timeout_s=2)
    assert "\n" not in str(info.value)
    check_scheduler("local")  # nothing to reach: the audit starts its own cluster
