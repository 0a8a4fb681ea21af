"""The embedded Prefect server of one ``pitaudit audit``, started so that it dies with the run.

Without a Prefect server to talk to (``PREFECT_API_URL`` unset), Prefect starts a temporary one in a
subprocess and stops it at the interpreter's exit (``atexit``). A run that is killed (SIGKILL, the OOM
killer, a scheduler's timeout) never reaches that exit, and the server goes on running, alone, holding
its port and its database. So pitaudit starts the same server itself (the same uvicorn command as
Prefect's ``SubprocessASGIServer``), with the kernel told to end it when its parent dies
(``PR_SET_PDEATHSIG`` on Linux), points this process and its workers at it (``PREFECT_API_URL``), and
stops it on the way out. Elsewhere than Linux it falls back to Prefect's own temporary server.

"This process" means every thread of it: Prefect's settings live in a context variable, and a thread that
does not carry the flow's context (Prefect's own: the process pool's message forwarder, which sends the
workers' events and logs on to the server) reads Prefect's process-wide settings instead, made when Prefect
was imported, before this server existed. Left so, the first event a worker sends made that thread start
a second temporary server (Prefect's own, which does not die with the run) and send the workers' events
there (:func:`_in_every_thread`).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("prefect.pitaudit")
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(proc: subprocess.Popen, url: str, timeout: float) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the temporary Prefect server exited at start (status {proc.returncode})")
            try:
                if client.get(f"{url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
    raise RuntimeError(f"the temporary Prefect server did not answer within {timeout:.0f} s")


def _flush_logs() -> None:
    """Send the run's last log lines and events to the server while it still runs (as Prefect's test harness does
    before it stops its server): otherwise they are retried at exit, against a server that is gone, for a minute."""
    import inspect

    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.utilities.asyncutils import run_coro_as_sync

    async def drain() -> None:
        try:
            result = APILogWorker.instance().drain()
            if inspect.isawaitable(result):
                await result
        except RuntimeError:
            pass  # the worker never started
        result = EventsWorker.drain_all()
        if inspect.isawaitable(result):
            await result

    try:
        run_coro_as_sync(drain())
    except Exception:  # noqa: BLE001 - logs are a nicety; never fail the run for them
        pass


START_ATTEMPTS = 3


def _launch(settings=None) -> tuple[subprocess.Popen, str]:
    """The server's process, started and not waited for (it takes seconds to answer). ``settings``: this process's
    Prefect settings, passed on; without them (Prefect not imported yet) the server reads the same environment and
    profile itself."""
    import importlib.util

    env = {
        **os.environ,
        "PREFECT_UI_ENABLED": "0",
        "PREFECT__SERVER_EPHEMERAL": "1",
        "PREFECT__SERVER_FINAL": "1",
        **(settings.to_environment_variables(exclude_unset=True) if settings is not None else {}),
    }
    env.pop("PREFECT_API_URL", None)
    prefect_dir = Path(importlib.util.find_spec("prefect").origin).parent  # without importing it (seconds)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect_dir.parent), "--factory",
         "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port), "--log-level",
         "error", "--lifespan", "on"],
        env=env, preexec_fn=_die_with_parent, stdin=subprocess.DEVNULL,
    )
    return proc, f"http://127.0.0.1:{port}/api"


def _start(settings, launched: tuple[subprocess.Popen, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Wait until the server (``launched`` earlier, or started now) answers; try again on a new port when it fails at
    start (two audits starting at once against one Prefect home race to prepare its database: uvicorn's status 3)."""
    for attempt in range(1, START_ATTEMPTS + 1):
        proc, url = launched if launched is not None and attempt == 1 else _launch(settings)
        log.info("Starting temporary server on %s", url.removesuffix("/api"))  # (said once Prefect's logging is set)
        try:
            _wait_healthy(proc, url, float(settings.server.ephemeral.startup_timeout_seconds))
            return proc, url
        except RuntimeError:
            _stop(proc)
            if attempt == START_ATTEMPTS:
                raise
            time.sleep(1.0 + attempt)
    raise AssertionError("unreachable")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _in_every_thread() -> Iterator[None]:
    """Prefect's process-wide settings (those of a thread without a settings context of its own) rebuilt from the
    environment, which now names the server (``PREFECT_API_URL``), for the ``with`` block; the previous ones after."""
    import prefect.context

    before = prefect.context.GLOBAL_SETTINGS_CONTEXT
    prefect.context.refresh_global_settings_context()
    try:
        yield
    finally:
        prefect.context.GLOBAL_SETTINGS_CONTEXT = before


class EarlyServer:
    """The embedded server started ahead of its use (issue 13): :meth:`launch` starts its process and returns at once,
    without importing Prefect (seconds by itself), so that this process ingests while the server prepares
    (pipelines.audit.ahead); :func:`embedded_server` then waits for it, or stops it when Prefect's settings turn out
    to name a server of their own (a profile). Its process dies with this one (``PR_SET_PDEATHSIG``) like any other;
    :meth:`close` stops one that was never used."""

    def __init__(self) -> None:
        self.launched: tuple[subprocess.Popen, str] | None = None

    def launch(self) -> bool:
        """Start the server's process when this run is to have one: Linux, and no server named in the environment
        (or, when Prefect is imported already, in its settings: a test harness). True if it was started."""
        if self.launched is None and sys.platform.startswith("linux") and "PREFECT_API_URL" not in os.environ:
            settings = None
            if "prefect.settings" in sys.modules:
                from prefect.settings import get_current_settings

                settings = get_current_settings()
                if settings.api.url:
                    return False
            self.launched = _launch(settings)
        return self.launched is not None

    def take(self) -> tuple[subprocess.Popen, str] | None:
        launched, self.launched = self.launched, None
        return launched

    def close(self) -> None:
        launched = self.take()
        if launched is not None:
            _stop(launched[0])


@contextlib.contextmanager
def embedded_server(early: EarlyServer | None = None) -> Iterator[str | None]:
    """A temporary Prefect server for the ``with`` block, ended with it or with this process; yields its API URL,
    or None when a server is already configured (``PREFECT_API_URL``, a test harness) or this is not Linux.
    ``early``: the server this run launched ahead (:class:`EarlyServer`), waited for here instead of a new one."""
    from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings

    settings = get_current_settings()
    launched = early.take() if early is not None else None
    if settings.api.url or not sys.platform.startswith("linux"):
        if launched is not None:
            _stop(launched[0])
        yield None
        return
    try:
        proc, url = _start(settings, launched)
    except BaseException:
        if launched is not None and launched[0].poll() is None:
            _stop(launched[0])
        raise
    before = os.environ.get("PREFECT_API_URL")
    try:
        os.environ["PREFECT_API_URL"] = url  # the worker processes this run spawns report here too
        with temporary_settings(updates={PREFECT_API_URL: url}), _in_every_thread():
            try:
                yield url
            finally:
                _flush_logs()
    finally:
        if before is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = before
        _stop(proc)
