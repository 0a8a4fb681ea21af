"""Test-wide settings: no telemetry, an isolated Prefect home, one Prefect harness per session."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="pitaudit-prefect-"))
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def prefect_harness():
    """One embedded Prefect backend for every flow test of this process (it costs ~7 s to start)."""
    from prefect.testing.utilities import prefect_test_harness

    # the temporary server migrates a fresh database first: under load that takes longer than the 30 s default
    with prefect_test_harness(server_startup_timeout=240):
        yield


@pytest.fixture(scope="session")
def audited_sample(tmp_path_factory, prefect_harness):
    """The committed sample night (data/sample/) audited once per test process: ``root`` with ``pitaudit.duckdb``,
    its read-only snapshot ``pitaudit.readonly.duckdb`` and the report folder ``out/`` (evidence, investigations,
    notebooks read it)."""
    from pathlib import Path

    from pipelines.audit.run import run_audit
    from pipelines.db import publish_snapshot

    root = tmp_path_factory.mktemp("audited-sample")
    run_audit(Path(__file__).parents[1] / "data" / "sample", root / "pitaudit.duckdb", root / "out", "06:00", progress=False)
    publish_snapshot(root / "pitaudit.duckdb")
    return root
