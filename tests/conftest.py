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
