"""What a parse worker's environment holds from its first instruction (set by pipelines.ingest.parallel for the
workers' start). A module of its own that imports nothing, so that ``benchmarks.ingest_stages`` can set it before
polars is imported and measure the parse as a worker runs it."""

from __future__ import annotations

#: what polars' allocator (jemalloc) keeps in a parse worker: by polars' default it gives freed pages back within a
#: second, and the next batch faults them in again, zeroed (a 200,000-round night's parse in one process: 741,000
#: page faults, 1.6 of 9.8 CPU s in the kernel). Kept for the worker's life, the next batch reuses them (353,000
#: faults, 0.9 s; ~12 % less CPU) for about 0.1 GB more resident per worker, which ends with the run. (DuckDB's
#: jemalloc and glibc's heap kept too saved another 120,000-350,000 faults but cost 0.15 GB more per worker and no
#: CPU that could be told from the noise.)
KEEP_PAGES = "dirty_decay_ms:-1,muzzy_decay_ms:-1"
#: set for the workers' start; polars writes its allocator's settings into the environment when it is imported, and
#: the worker's polars appends what it finds there to its own (a later setting wins)
WORKER_ENV = {"POLARS_MAX_THREADS": "1", "_RJEM_MALLOC_CONF": KEEP_PAGES}
