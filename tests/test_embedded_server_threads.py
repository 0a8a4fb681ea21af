"""pipelines.audit.server: every thread of the audit's process reports to the run's one server.

A thread that does not carry the flow's context (Prefect's own: the process pool's message forwarder, which sends
the workers' events on) reads Prefect's process-wide settings. Made at import, before the run's server existed, they
named no server, and that thread started a second one of Prefect's own (one that outlives a killed run).
"""

from __future__ import annotations

import os
import threading


def _url_in_a_new_thread() -> str | None:
    from prefect.settings import get_current_settings

    seen = []
    thread = threading.Thread(target=lambda: seen.append(get_current_settings().api.url))
    thread.start()
    thread.join()
    return seen[0]


def test_a_thread_without_the_flows_context_sees_the_runs_server_and_the_previous_settings_after(monkeypatch):
    from pipelines.audit.server import _in_every_thread

    before = _url_in_a_new_thread()
    url = "http://127.0.0.1:9/api"
    assert before != url
    monkeypatch.setenv("PREFECT_API_URL", url)  # as embedded_server sets it once its server answers
    assert _url_in_a_new_thread() == before  # the near-miss: the environment alone does not reach the thread
    with _in_every_thread():
        assert _url_in_a_new_thread() == url
    assert _url_in_a_new_thread() == before
    assert os.environ["PREFECT_API_URL"] == url  # the environment is embedded_server's to restore, not this helper's
