"""The scalar engine on every core: a process pool for the rounds settled one at a time.

Since every game has an array path, those are the irregular rounds and every round under
``vectorised=False`` (the reference run); a pool of fewer than ``pool_min_rounds`` never starts.
A round is a chain of decisions the engine walks in Python; the interpreter runs one
thread at a time, so threads do not help and processes do. The pool is started once per process,
on first use, with the ``spawn`` method (the flow runs threads; forking a threaded process is
unsafe), and rounds travel to it in chunks. Results come back without their steps (the
reconstruction narrative a dispute review asks the engine for, one round at a time).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

from rulebook.round import Irregularity, RoundInput, RoundResult
from rulebook.settlement import RuleViolation, Settlement

_LOCK = threading.Lock()
_POOL: ProcessPoolExecutor | None = None
_WORKERS = 0


def workers_available() -> int:
    return os.cpu_count() or 1


def _pool(workers: int) -> ProcessPoolExecutor:
    global _POOL, _WORKERS
    with _LOCK:
        if _POOL is None or _WORKERS != workers:
            if _POOL is not None:
                _POOL.shutdown(wait=False, cancel_futures=True)
            _POOL = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_start_worker)
            _WORKERS = workers
        return _POOL


def _reset() -> None:
    global _POOL
    with _LOCK:
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
        _POOL = None


@atexit.register
def _shutdown() -> None:
    if _POOL is not None:
        _POOL.shutdown(wait=False, cancel_futures=True)


def _start_worker() -> None:
    """In a new worker: it ends with the process that made the pool, even a killed one (``lifeline``); the engine
    imported once, and the audit's collector thresholds (collector.tune_gc)."""
    from pipelines.lifeline import end_with_parent

    end_with_parent()
    import rulebook.engine  # noqa: F401 - imported before the freeze, not per chunk
    from pipelines.audit.collector import tune_gc
    tune_gc()


def _settle_chunk(inputs: list[RoundInput]) -> list[tuple]:
    """In a worker: settle each round; a compact, picklable result per round (no steps)."""
    from rulebook.engine import settle_round

    out = []
    for ri in inputs:
        try:
            r = settle_round(ri)
            out.append((
                {k: (s.net, s.clause, s.detail) for k, s in r.settlements.items()}, dict(r.unsettled),
                tuple((i.kind, i.clause, i.detail, i.voids_round) for i in r.irregularities), r.void, dict(r.outcome),
                None,
            ))
        except RuleViolation as exc:
            out.append(({}, {w.wager_id: f"{exc.reason} ({exc.clause})" for w in ri.wagers},
                        (("illegal_action", exc.clause, exc.reason, False),), False, {}, None))
        except Exception as exc:  # noqa: BLE001 - reported per round, as in the serial path
            error = f"{type(exc).__name__}: {exc}"
            out.append(({}, {w.wager_id: f"the engine could not settle this round ({error})" for w in ri.wagers},
                        (), False, {}, error))
    return out


def settle_in_processes(inputs: list[RoundInput], workers: int) -> list[tuple[RoundResult, str | None]]:
    """``[(RoundResult, engine error or None)]`` for every round, settled on ``workers`` processes, in order."""
    chunk = max(1, -(-len(inputs) // (workers * 4)))
    pieces = [inputs[i:i + chunk] for i in range(0, len(inputs), chunk)]
    results: list[tuple[RoundResult, str | None]] = []
    try:
        parts = list(_pool(workers).map(_settle_chunk, pieces))
    except Exception as exc:  # noqa: BLE001 - a pool that cannot start (no __main__ guard, no /dev/shm ...): one process
        import warnings

        warnings.warn(f"the engine's process pool failed ({type(exc).__name__}: {exc}); settling in this process",
                      RuntimeWarning, stacklevel=2)
        _reset()
        parts = [_settle_chunk(piece) for piece in pieces]
    for part in parts:
        for settlements, unsettled, irregular, void, outcome, error in part:
            results.append((RoundResult(
                settlements={k: Settlement(*v) for k, v in settlements.items()},
                unsettled=unsettled,
                steps=(),
                irregularities=tuple(Irregularity(*i) for i in irregular),
                void=void,
                outcome=outcome,
            ), error))
    return results
