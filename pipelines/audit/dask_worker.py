"""Set up a Dask worker for the audit: Dask imports this module in each worker it starts (``preload``).

The local cluster of ``pitaudit audit --dask local`` preloads it; on a cluster of your own, start each
worker with ``dask worker tcp://HOST:8786 --nthreads 1 --preload pipelines.audit.dask_worker``. It does
for a Dask worker what ``runner.start_group_worker`` does for a worker of the process pool: the cycle
collector's thresholds of the audit (``collector``), which keep it from walking a group's objects again
and again. (The one polars thread per worker comes from the worker's environment, set by the cluster.)
"""

from __future__ import annotations


def dask_setup(worker=None) -> None:
    """Dask's preload hook, called once in each worker process as it starts."""
    from pipelines.audit.collector import tune_gc

    tune_gc()
