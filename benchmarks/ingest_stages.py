"""Benchmark: the ingest's parse stage by stage, as a parse worker runs it (one process, one thread, every batch, the
worker's allocator setting: ``pipelines.ingest.worker_env``), and each batch's parsed frames handed over as a worker
hands them to the writer (pickled and read back here).

    .venv/bin/python -m benchmarks.ingest_stages DIR

Each stage's function is wrapped with a CPU timer (``time.process_time``) for the run; a stage called inside
another is counted in both (the totals are the parse of each format). Nothing touches a database file: the parse
writes nothing. Prints CPU seconds per stage; asserts nothing. ``benchmarks.ingest`` measures the whole ingest
against the bare load.
"""

from __future__ import annotations

import argparse
import functools
import os
import pickle
import time
from collections import Counter
from pathlib import Path

from pipelines.ingest.worker_env import WORKER_ENV

os.environ.update(WORKER_ENV)  # before polars is imported: a worker's one thread, and its allocator keeping its pages

SPENT: Counter = Counter()

STAGES = {  # (module, owner attribute or None, function) -> label
    ("pipelines.ingest.parse", None, "read_small_files"): "read the lines",
    ("pipelines.ingest.rounds_jsonl", "RoundsParser", "parse"): "rounds: all",
    ("pipelines.ingest.rounds_jsonl", "RoundsParser", "_duck_parse"): "rounds: DuckDB's JSON parse",
    ("pipelines.ingest.rounds_jsonl", None, "strict_json_failures"): "rounds: strict JSON (duplicate keys)",
    ("pipelines.ingest.rounds_jsonl", "RoundsParser", "_rounds_as_read"): "rounds: as read (rounds)",
    ("pipelines.ingest.rounds_jsonl", "RoundsParser", "_elements_as_read"): "rounds: as read (wagers, actions)",
    ("pipelines.ingest.rounds_jsonl", None, "with_utc_instants"): "rounds: timestamps (within as read)",
    ("pipelines.ingest.rounds_jsonl", None, "checked"): "rounds: the models' checks",
    ("pipelines.ingest.rounds_jsonl", "RoundsParser", "_canonical"): "rounds: canonical rows",
    ("pipelines.ingest.shoe_csv", "ShoeParser", "parse"): "shoe CSV: all",
    ("pipelines.ingest.shoe_csv", None, "checked"): "shoe CSV: the models' checks",
    ("pipelines.ingest.shoe_csv", "ShoeParser", "_with_prev_max"): "shoe CSV: the sequence",
    ("pipelines.ingest.shoe_csv", None, "with_utc_instants"): "shoe CSV: timestamps",
    ("pipelines.ingest.parse", None, "to_quarantine"): "quarantine rows",
}


def _wrap(module: str, owner: str | None, name: str, label: str) -> None:
    import importlib

    holder = importlib.import_module(module)
    if owner is not None:
        holder = getattr(holder, owner)
    inner = getattr(holder, name)

    @functools.wraps(inner)
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - start

    setattr(holder, name, timed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, metavar="DIR", help="folder of shoe_*.csv / rounds_*.jsonl")
    folder = ap.parse_args().folder
    if not folder.is_dir():
        ap.error(f"{folder} is not a folder")
    for (module, owner, name), label in STAGES.items():
        _wrap(module, owner, name, label)
    from pipelines.db import parse_connection
    from pipelines.ingest import parse
    from pipelines.ingest.discover import discover
    from pipelines.ingest.plan import plan_batches
    from pipelines.ingest.records import Loaded, ParseOptions
    from pipelines.ingest.screen import screen

    batches = plan_batches(screen(discover(folder), Loaded()).to_load)
    con = parse_connection()
    con.execute("SET threads = 1")
    start = time.process_time()
    for batch in batches:
        parsed = parse.parse_small_batch(batch, ParseOptions(360, 10**12), con)
        handed = time.process_time()  # what a worker's handing over costs, and the writer's taking it (records.Parsed)
        sent = pickle.dumps(parsed)
        SPENT["handing over (worker's side)"] += time.process_time() - handed
        taken = time.process_time()
        pickle.loads(sent)
        SPENT["taking it (writer's side)"] += time.process_time() - taken
        start += time.process_time() - handed
    total = time.process_time() - start
    con.close()
    print(f"{'stage':40}{'CPU s':>8}")
    for label in [*STAGES.values(), "handing over (worker's side)", "taking it (writer's side)"]:
        print(f"{label:40}{SPENT[label]:>8.2f}")
    print(f"{'the whole parse (' + str(len(batches)) + ' batches)':40}{total:>8.2f}")


if __name__ == "__main__":
    main()
