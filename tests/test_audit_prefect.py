"""The audit under Prefect, read back through Prefect's own client (``prefect_test_harness``).

- ``pitaudit serve``'s deployment: the flow, the cron schedule in its time zone, plain parameters;
- a run: named by its gaming day, its progress in the run's logs, the night's summary and top findings as
  artifacts; a failure notifies through Apprise (a ``json://`` URL to a local HTTP server here).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

SAMPLE = Path(__file__).parents[1] / "data" / "sample"


def test_serve_builds_a_deployment_with_the_schedule_and_plain_parameters(tmp_path, prefect_harness):
    from prefect.client.orchestration import get_client

    from pipelines.audit.schedule import nightly_deployment, register

    deployment = nightly_deployment(tmp_path / "in", tmp_path / "audit.duckdb", tmp_path / "out", "30 6 * * *",
                                    "Asia/Ho_Chi_Minh")
    deployment_id = register(deployment)
    with get_client(sync_client=True) as client:
        stored = client.read_deployment(deployment_id)
        flow = client.read_flow(stored.flow_id)
    assert flow.name == "pitaudit-audit" and stored.name == "nightly"
    assert len(stored.schedules) == 1
    schedule = stored.schedules[0].schedule
    assert (schedule.cron, schedule.timezone) == ("30 6 * * *", "Asia/Ho_Chi_Minh")
    assert stored.parameters == {"input_dir": str((tmp_path / "in").resolve()),
                                 "db_path": str((tmp_path / "audit.duckdb").resolve()),
                                 "out_dir": str((tmp_path / "out").resolve()), "gaming_day_start": "06:00"}
    assert json.loads(json.dumps(stored.parameters)) == stored.parameters  # plain, serialisable
    assert stored.entrypoint == "pipelines.audit.flow.audit_flow"
    limit = getattr(stored, "global_concurrency_limit", None)
    assert limit is not None and limit.limit == 1


@pytest.mark.parametrize("cron, zone, words", [
    ("30 6 * *", "UTC", "five fields"), ("61 6 * * *", "UTC", "not a valid cron"), ("30 6 * * *", "Mars/Base", "time zone"),
    # well formed, but the 31st of February never comes: it was served as a schedule that never ran
    ("30 6 31 2 *", "UTC", "never fires"),
])
def test_serve_refuses_a_bad_schedule_in_one_line(tmp_path, cron, zone, words):
    from typer.testing import CliRunner

    from pipelines.cli import app

    result = CliRunner().invoke(app, ["serve", "--cron", cron, "--timezone", zone, "--input", str(tmp_path),
                                      "--db", str(tmp_path / "a.duckdb"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0]


def test_a_schedule_that_fires_rarely_is_accepted_and_serve_checks_its_folders_first(tmp_path):
    """The near miss of "never fires": the 29th of February comes every four years. And `serve` refuses, in one line
    and before it needs a server, what the first night's audit would (here an input folder that does not exist)."""
    from typer.testing import CliRunner

    from pipelines.audit.schedule import check_schedule
    from pipelines.cli import app

    check_schedule("0 0 29 2 *", "UTC")
    result = CliRunner().invoke(app, ["serve", "--cron", "30 6 * * *", "--input", str(tmp_path / "no-such-folder"),
                                      "--db", str(tmp_path / "a.duckdb"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"pitaudit: input folder {tmp_path / 'no-such-folder'} does not exist"]


class _Catcher(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Catcher.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture()
def catcher():
    _Catcher.received = []
    server = HTTPServer(("127.0.0.1", 0), _Catcher)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"json://127.0.0.1:{server.server_address[1]}/notify", _Catcher.received
    server.shutdown()


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory, prefect_harness):
    """The sample night through the flow, its run logs at INFO (as ``pitaudit audit`` sends them: the tests'
    conftest keeps Prefect's loggers at WARNING)."""
    import logging

    from pipelines.audit.flow import audit_flow
    from pipelines.audit.server import _flush_logs

    root = tmp_path_factory.mktemp("prefect-run")
    loggers = [logging.getLogger("prefect.flow_runs"), logging.getLogger("prefect.task_runs")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.INFO)
    try:
        state = audit_flow(str(SAMPLE), str(root / "audit.duckdb"), str(root / "out"), return_state=True)
        _flush_logs()  # what pitaudit does before its server stops
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
    return root, state


def test_a_run_is_named_by_its_gaming_day_and_logs_its_progress(sample_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    _root, state = sample_run
    assert state.is_completed()
    outcome = state.result()
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(state.state_details.flow_run_id)
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run.id])))
    assert run.name == f"audit {outcome.scope.label()}" and run.name == "audit 2026-11-24"
    text = "\n".join(log.message for log in logs)
    assert "partition(s) (gaming day x table)" in text and "re-settled and checked" in text
    # each group's task run logs what it held and what each of its steps took
    assert re.search(r"group 0 \(2026-11-24 .*\): [\d,]+ rounds, [\d,]+ wagers, [\d,]+ device events; load [\d.]+ s, "
                     r"reconstruct [\d.]+ s, re-settle [\d.]+ s, detect [\d.]+ s, stage [\d.]+ s", text)


def test_a_run_publishes_the_nights_summary_and_top_findings(sample_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    from pipelines.audit.artifacts import SUMMARY_KEY, TOP_FINDINGS_KEY, TOP_N

    _root, state = sample_run
    outcome = state.result()
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])))
    by_key = {a.key: a for a in artifacts}
    assert {SUMMARY_KEY, TOP_FINDINGS_KEY} <= set(by_key)
    summary = by_key[SUMMARY_KEY].data
    assert "2026\\-11\\-24" in summary and f"**{outcome.findings.height:,}**" in summary
    table = json.loads(by_key[TOP_FINDINGS_KEY].data) if isinstance(by_key[TOP_FINDINGS_KEY].data, str) \
        else by_key[TOP_FINDINGS_KEY].data
    assert len(table) == min(TOP_N, outcome.findings.height)
    assert table[0]["severity"] == "high"


def test_high_findings_notify_through_apprise(sample_run, catcher, tmp_path):
    from pipelines.audit.notify import notify_high_findings
    from pipelines.settings import Settings

    url, received = catcher
    _root, state = sample_run
    assert notify_high_findings(state.result(), Settings.model_validate({"notify_url": url}))
    assert len(received) == 1 and "high-severity finding(s)" in received[0]["title"]
    assert not notify_high_findings(state.result(), Settings.defaults())  # unset: nothing sent


def test_a_failed_run_notifies_with_its_reason(tmp_path, catcher, monkeypatch, prefect_harness):
    from pipelines.audit.flow import audit_flow

    url, received = catcher
    monkeypatch.setenv("PITAUDIT_NOTIFY_URL", url)
    (tmp_path / "in").mkdir()
    (tmp_path / "db").mkdir()  # a folder where the database should be: the audit cannot run
    state = audit_flow(str(tmp_path / "in"), str(tmp_path / "db"), str(tmp_path / "out"), return_state=True)
    assert state.is_failed()
    assert len(received) == 1
    assert received[0]["title"].endswith("failed") and "is a folder, not a DuckDB file" in received[0]["message"]


def test_the_group_workers_start_before_any_task_and_then_run_the_tasks(prefect_harness):
    """Issue 13's serial head: the pool's workers start when the audit stage begins (``start_group_workers``), beside
    the scope, keys and fingerprints the flow's process works out alone, not at the first group's submit. Both are
    running before any task is submitted, with the audit's modules already imported, and then run the tasks as
    before; a runner of threads starts nothing."""
    import multiprocessing

    from prefect import flow, task
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

    from pipelines.audit.runner import end_group_workers, start_group_worker, start_group_workers

    @task(name="where")
    def where(n: int) -> tuple:
        import os
        import sys

        return n, os.getpid(), "pipelines.audit.tasks" in sys.modules

    others = {p.pid for p in multiprocessing.active_children()}  # this test process's children of other tests

    def pool_workers() -> set[int]:
        return {p.pid for p in multiprocessing.active_children()} - others

    @flow(task_runner=ProcessPoolTaskRunner(max_workers=2, initializer=start_group_worker), persist_result=False)
    def pooled() -> tuple:
        asked = start_group_workers()
        started = pool_workers()
        done = sorted(f.result() for f in [where.submit(n) for n in range(4)])
        end_group_workers()
        return asked, started, done

    asked, started, done = pooled()
    assert asked == 2 and len(started) == 2
    assert [n for n, _, _ in done] == [0, 1, 2, 3]
    assert {pid for _, pid, _ in done} <= started  # the tasks ran on the workers started before them
    assert all(imported for _, _, imported in done)

    @flow(task_runner=ThreadPoolTaskRunner(max_workers=2), persist_result=False)
    def threaded() -> tuple:
        before = pool_workers()
        return start_group_workers(), pool_workers() - before

    assert threaded() == (0, set())


def test_the_group_workers_end_before_the_statistics_and_their_logs_reach_the_run(prefect_harness):
    """Issue 13's memory: the flow's worker processes sit idle after the write, holding what the groups left, through
    the statistics step and publish; ``end_group_workers`` ends them there. The logs their tasks wrote still reach
    the flow run (they are forwarded before the pool stops), and a runner of threads is left alone."""
    import multiprocessing
    import time

    from prefect import flow, task
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.context import get_run_context
    from prefect.logging import get_run_logger
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

    from pipelines.audit.runner import end_group_workers

    @task(name="worker says")
    def says(n: int) -> int:
        get_run_logger().warning(f"worker task {n} was here")  # the tests log warnings and above
        return n

    others = {p.pid for p in multiprocessing.active_children()}  # this test process's children of other tests

    def pool_workers() -> int:
        return len({p.pid for p in multiprocessing.active_children()} - others)

    @flow(task_runner=ProcessPoolTaskRunner(max_workers=2), persist_result=False)
    def pooled() -> tuple:
        futures = [says.submit(n) for n in range(3)]
        values = sorted(f.result() for f in futures)
        before = pool_workers()
        ended = end_group_workers()
        return values, before, ended, pool_workers(), get_run_context().flow_run.id

    values, before, ended, after, run_id = pooled()
    assert values == [0, 1, 2]
    assert before >= 1 and ended and after == 0
    seen: set[int] = set()
    for _ in range(40):  # the run's logs reach the server in batches
        with get_client(sync_client=True) as client:
            logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))
        seen = {n for n in range(3) if any(f"worker task {n} was here" in log.message for log in logs)}
        if seen == {0, 1, 2}:
            break
        time.sleep(0.25)
    assert seen == {0, 1, 2}

    @flow(task_runner=ThreadPoolTaskRunner(max_workers=2), persist_result=False)
    def threaded() -> bool:
        return end_group_workers()

    assert threaded() is False
