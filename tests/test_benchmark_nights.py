"""``benchmarks.nights``' stage clock: each step of the audit flow timed apart, the flow's own code left as it was."""

from __future__ import annotations

import time

import pipelines.audit.flow as flow
from benchmarks.nights import STAGE_TASKS, StageClock


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_stage_clock_times_each_step_and_restores_the_flow(monkeypatch):
    calls = []

    def ingest(*args, **kwargs):
        calls.append(("ingest", args, kwargs))
        _burn(0.05)
        return "ingested"

    def publish(*args, **kwargs):
        calls.append(("publish", args, kwargs))
        _burn(0.02)
        return {"paths": {}}

    monkeypatch.setattr(flow, "ingest_task", ingest)
    monkeypatch.setattr(flow, "publish_task", publish)
    clock = StageClock()
    with clock.installed():
        assert flow.ingest_task is not ingest  # wrapped
        assert flow.ingest_task(1, db="x") == "ingested"  # arguments and result pass through
        assert flow.publish_task() == {"paths": {}}
    # the flow's names are its own again
    assert flow.ingest_task is ingest and flow.publish_task is publish
    assert calls[0] == ("ingest", (1,), {"db": "x"})
    assert clock.cpu["ingest"][0] >= 0.05 and clock.cpu["publish"][0] >= 0.02
    assert set(clock.cpu) == {"ingest", "publish"}
    # the audit stage is the rest of the flow's CPU; a stage that ran no child process shows none
    line = clock.line(cpu=clock.cpu["ingest"][0] + clock.cpu["publish"][0] + 1.0, kids=0.0)
    assert line.startswith("ingest ") and "audit 1.00" in line and "publish " in line and "(+" not in line


def test_stage_clock_restores_the_flow_after_a_failure(monkeypatch):
    def failing(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(flow, "statistics_task", failing)
    clock = StageClock()
    try:
        with clock.installed():
            flow.statistics_task()
    except RuntimeError:
        pass
    assert flow.statistics_task is failing
    assert "statistics" in clock.cpu  # the failed step's time is kept
    assert all(hasattr(flow, name) for name in STAGE_TASKS)  # every name it wraps is one the flow calls
