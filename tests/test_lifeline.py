"""pipelines.lifeline: the workers of the audit's pools end when the process that made them is killed.

A process (the "run") starts a pool the way the audit does, with the audit's own initializer, gets each worker
busy once, prints the workers' pids and sleeps; the test kills it with SIGKILL and waits for its workers. Without
the lifeline an idle worker waits for work forever (the near-miss: the same pool with no initializer keeps its
worker alive).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

RUN = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from {module} import {initializer} as start

def pid(_):
    time.sleep(0.5)
    return os.getpid()

if __name__ == "__main__":
    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"),
                               initializer=None if {bare} else start)
    print(" ".join(str(p) for p in sorted(set(pool.map(pid, range(4))))), flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its (new) parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _workers_after_kill(module: str, initializer: str, bare: bool, tmp_path: Path, wait_s: float) -> list[int]:
    script = tmp_path / "run.py"
    script.write_text(RUN.format(module=module, initializer=initializer, bare=bare))
    run = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[1], env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    try:
        workers = [int(p) for p in run.stdout.readline().split()]
        assert workers and run.pid not in workers
        run.send_signal(signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + wait_s
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        return [p for p in workers if _alive(p)]
    finally:
        run.kill()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the workers")
@pytest.mark.parametrize("module, initializer", [("pipelines.audit.runner", "start_group_worker"),
                                                 ("pipelines.audit.pool", "_start_worker")])
def test_the_workers_of_a_killed_run_end_with_it(module, initializer, tmp_path):
    assert _workers_after_kill(module, initializer, False, tmp_path, wait_s=60) == []


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the workers")
def test_without_the_lifeline_an_idle_worker_outlives_its_killed_run(tmp_path):
    survivors = _workers_after_kill("pipelines.audit.runner", "start_group_worker", True, tmp_path, wait_s=5)
    try:
        assert survivors, "a bare pool's worker ended with its run: the lifeline test above proves nothing"
    finally:
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
