"""Test-wide settings: no telemetry, an isolated Prefect home, one Prefect harness per session."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
if "PREFECT_HOME" not in os.environ:
    # a home of this test process's own, removed when it exits (every run used to leave one behind in /tmp)
    _prefect_home = tempfile.mkdtemp(prefix="pitaudit-prefect-")
    os.environ["PREFECT_HOME"] = _prefect_home
    atexit.register(shutil.rmtree, _prefect_home, ignore_errors=True)
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import pytest  # noqa: E402
from hypothesis import settings as _hypothesis_settings  # noqa: E402

# no property test is timed: a speed target lives in a benchmark, never in a test, and hypothesis' default deadline
# (200 ms an example) failed a blackjack test at 601 ms on a loaded machine, 2 ms on its retry
_hypothesis_settings.register_profile("pitaudit", deadline=None)
_hypothesis_settings.load_profile("pitaudit")


def _private_random_for_websocket_pings() -> None:
    """websockets draws each keepalive ping's payload from the global ``random`` (``random.getrandbits(32)``), on
    Prefect's event-loop thread: 3 times in 50 idle seconds of the harness, measured. Hypothesis checks that the
    global state is unchanged across a strategy's draw, and a ping between the two looked like a strategy using
    ``random``: a ``HypothesisDeprecationWarning`` in 0 to 2 property tests per run, never the same one (a
    deprecation: a later Hypothesis may fail the test). The pings take their bits from a generator of their own."""
    import random
    from importlib import import_module

    for name in ("websockets.asyncio.connection", "websockets.sync.connection"):  # Prefect 3 uses the first
        try:
            module = import_module(name)
        except ImportError:
            continue
        if getattr(module, "random", None) is random:
            module.random = random.Random()


_private_random_for_websocket_pings()  # before any flow of any test: the harness's and the CLI's embedded servers


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


@pytest.fixture
def browser_session():
    """A headless Chromium driven by Playwright for one test (tests/browser.py).

    Not shared across tests: Playwright's synchronous API keeps an event loop in the thread while it lives, and
    Prefect then takes a flow called later in that thread for an async call (it returns a coroutine).

    Skips only when there is no Chromium executable; Playwright itself is a pinned dependency.
    """
    from browser import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium executable (chromium, /usr/bin/chromium): install it with "
                    "`apt-get install -y chromium` (.ci/run does)")
    session = Browser(executable)
    yield session
    session.close()


@pytest.fixture
def browser(browser_session, request):
    """The session's Chromium, its screenshots filed under test-output/browser/<this test>/."""
    from browser import OUTPUT, _slug

    browser_session.out_dir = OUTPUT / _slug(request.node.name)
    yield browser_session



def pytest_addoption(parser):
    parser.addoption("--property-examples", type=int, default=None, metavar="N",
                     help="run every hypothesis property test for N examples instead of its own count (a longer hunt "
                          "for rare cases than CI affords; pair it with --hypothesis-seed)")


def pytest_collection_modifyitems(config, items):
    """``--property-examples N``: every property test runs N examples. A hypothesis profile cannot do this: the tests'
    own ``@settings(max_examples=...)`` take precedence over any profile."""
    examples = config.getoption("--property-examples")
    if not examples:
        return
    from hypothesis import settings

    seen = set()
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or id(test) in seen:
            continue
        seen.add(id(test))
        test._hypothesis_internal_use_settings = settings(own, max_examples=examples, database=None)
