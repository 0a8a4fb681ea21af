"""Where the audit groups' CPU goes, part by part: prints figures, asserts nothing.

    .venv/bin/python -m benchmarks.audit_groups --db audit.duckdb

The groups of ``benchmarks.audit --stages-of`` (~25,000 rounds of one game each, one after another in this process,
the engines in it too), each through the flow's steps (load, reconstruct, re-settle, detect, stage), with the load
and the detectors cut into their parts, in CPU seconds (``time.process_time``: DuckDB's threads included) for the
night and per 10,000 rounds. Each SQL query of ``load._load_partition`` is timed around its call (``load._frame``):
cProfile books DuckDB's own time to whatever Python function is waiting for it. A query's time includes turning its
rows into a polars frame, and for a group's first query the start of a database opened afresh (as each group does in
the flow). The staged files go to a temporary folder.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def _query_name(sql: str) -> str:
    s = " ".join(sql.split())
    if "FROM core_wagers" in s:
        return "query: wagers"
    if "FROM core_actions" in s:
        return "query: actions"
    if "FROM core_device_events" in s:
        return "query: device events"
    if "utc_offset_minutes FROM core_rounds" in s:
        return "query: the tables' rounds (days, offsets)"
    if "FROM core_quarantine" in s:
        return "query: quarantined lines"
    if "FROM core_rounds" in s:
        return "query: rounds"
    return "query: other"


def measure(db: Path, groups_of: int = 25_000) -> tuple[dict[str, float], int]:
    """CPU seconds per part over every group of ``db``, and the rounds audited."""
    import polars as pl

    import pipelines.audit.detectors as detectors
    import pipelines.audit.load as load
    from pipelines.audit.collector import tune_gc
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import detect_in_partition, reconstruct_partition, settle_partition, summarise
    from pipelines.audit.publish import stage
    from pipelines.db import open_bounded_reader, open_reader

    tune_gc()
    params = AuditParams(workers=1)
    cpu: dict[str, float] = defaultdict(float)

    def timed(name_of, fn):
        def wrapper(*args, **kwargs):
            c = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                cpu[name_of(*args)] += time.process_time() - c
        return wrapper

    load._frame = timed(lambda con, sql, *_: _query_name(sql), load._frame)
    load.annotate_events = timed(lambda *_: "annotation (polars)", load.annotate_events)
    for name in ("detect_money", "detect_cards", "detect_result_mismatch", "detect_late_wagers", "detect_unmatched",
                 "finalize"):
        setattr(detectors, name, timed(lambda *_, n=name: f"detect: {n}", getattr(detectors, name)))

    con = open_reader(db)
    try:
        keys = load.partition_keys(con, params).join(
            con.sql("SELECT DISTINCT table_id, game FROM core_rounds").pl(), on="table_id", how="left")
    finally:
        con.close()
    cpu.clear()
    rounds = 0
    with tempfile.TemporaryDirectory(prefix="pitaudit-groups-") as work:
        index = 0
        for game in sorted(keys["game"].drop_nulls().unique().to_list()):
            of_game = keys.filter(pl.col("game") == game)
            for group in load.contiguous_groups(of_game, max(1, -(-int(of_game["rounds"].sum()) // groups_of))):
                c = time.process_time()
                con = open_bounded_reader(db, params.settings.reader_memory)
                try:
                    part = load.load_partition(con, group, params)
                finally:
                    con.close()
                cpu["load"] += time.process_time() - c
                rounds += part.rounds.height
                for step, fn in (("reconstruct", lambda: reconstruct_partition(part, params)),
                                 ("re-settle", lambda: settle_partition(part, recon, params)),
                                 ("detect", lambda: detect_in_partition(recon, settled, params)),
                                 ("summarise", lambda: summarise(part, recon, settled, found)),
                                 ("stage", lambda: stage(Path(work), index, result.findings, result.settlements))):
                    c = time.process_time()
                    out = fn()
                    cpu[step] += time.process_time() - c
                    if step == "reconstruct":
                        recon = out
                    elif step == "re-settle":
                        settled = out
                    elif step == "detect":
                        found = out
                    elif step == "summarise":
                        result = out
                index += 1
    inside = sum(v for k, v in cpu.items() if k.startswith("query: ") or k == "annotation (polars)")
    cpu["load: the rest (opening the database, the events cut to the group's keys, ...)"] = cpu["load"] - inside
    return dict(cpu), rounds


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a database an audit loaded (opened read-only)")
    ap.add_argument("--groups-of", type=int, default=25_000, help="rounds a group (benchmarks.audit --stages-of's)")
    args = ap.parse_args(argv)
    cpu, rounds = measure(Path(args.db), args.groups_of)
    per = 10_000 / max(rounds, 1)
    print(f"the audit groups of {args.db}: {rounds:,} rounds; CPU s for the night, per 10,000 rounds")
    order = ["load"] + sorted(k for k in cpu if k.startswith(("query: ", "annotation", "load: "))) + [
        "reconstruct", "re-settle", "detect"] + sorted(k for k in cpu if k.startswith("detect: ")) + ["summarise", "stage"]
    for name in order:
        indent = "    " if name.startswith(("query: ", "annotation", "load: ", "detect: ")) else "  "
        print(f"{indent}{name:<{82 - len(indent)}} {cpu.get(name, 0.0):6.2f} {cpu.get(name, 0.0) * per:7.4f}")
    total = sum(cpu[k] for k in ("load", "reconstruct", "re-settle", "detect", "summarise", "stage"))
    print(f"  {'total':80} {total:6.2f} {total * per:7.4f}")


if __name__ == "__main__":
    main()
