"""A worker process ends when the process that started it dies, however it dies.

The pools of spawned workers (the audit's groups, the engine's pool, the ingest's parsers) wait on a pipe
from their parent; when the parent is killed (SIGKILL, the OOM killer) some of them went on waiting, alone.
Each worker calls :func:`exit_with_parent` when it starts: a daemon thread that looks at the parent's
process id every second and ends the worker once it has changed (the worker was re-parented: its parent
is gone). Only the standard library, so a worker starts light.
"""

from __future__ import annotations

import os
import threading
import time

POLL_SECONDS = 1.0


def exit_with_parent() -> None:
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
