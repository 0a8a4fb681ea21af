"""Benchmark: memory and time of `pitaudit ingest` on files whose every line fails (a flood of bad lines).

    .venv/bin/python -m benchmarks.failing_lines                       # 200,000 and 2,000,000 lines
    .venv/bin/python -m benchmarks.failing_lines --lines 9200000       # the 70 MB file the kernel once killed
    .venv/bin/python -m benchmarks.failing_lines --kind csv            # a device log of empty fields

Each file is one round log of ``{"x":1}`` lines (8 bytes; each lacks the eight required fields, the most failures a
line of its size can have), or with ``--kind csv`` one device log of ``,,,,,,,,`` lines (nine fields, every one
empty) under its header, ingested by `pitaudit ingest` into a fresh database in a child process. Prints the lines,
the file's size, the CPU seconds (the child and its workers), the wall seconds and the peak memory of the process tree
(``benchmarks.tree_memory``). The ingest's memory is bounded by the lines of a chunk (``CHUNK_LINES``), not by the
file: the peak should not grow with the lines. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.tree_memory import TreePeak
from pipelines.ingest.synthetic import CSV_HEADER

LINES = {"jsonl": ("rounds_T-01.jsonl", b"", b'{"x":1}\n'),
         "csv": ("shoe_D-01.csv", CSV_HEADER.encode() + b"\n", b",,,,,,,,\n")}


def _run(lines: int, work: Path, kind: str) -> tuple[float, float, float, int]:
    folder = work / f"in-{lines}"
    folder.mkdir()
    name, head, line = LINES[kind]
    path = folder / name
    with open(path, "wb") as f:
        f.write(head)
        left = lines
        while left:
            n = min(left, 1_000_000)
            f.write(line * n)
            left -= n
    db = work / f"db-{lines}.duckdb"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(folder), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    with TreePeak(proc.pid, interval=0.25) as peak:
        code = proc.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code != 0:
        print(f"  the ingest of {lines:,} lines exited {code}")
    size = path.stat().st_size
    shutil.rmtree(folder)
    for p in work.glob(f"db-{lines}*"):
        p.unlink() if p.is_file() else shutil.rmtree(p)
    return size / 2**20, cpu, wall, peak.bytes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, nargs="+", default=[200_000, 2_000_000], help="lines of each file")
    parser.add_argument("--kind", choices=sorted(LINES), default="jsonl", help="a round log or a device log")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pitaudit-failing-") as tmp:
        print(f"{'lines':>12} {'MiB':>8} {'CPU s':>8} {'wall s':>8} {'peak GB':>8}")
        for n in args.lines:
            mib, cpu, wall, peak = _run(n, Path(tmp), args.kind)
            print(f"{n:>12,} {mib:>8.1f} {cpu:>8.2f} {wall:>8.2f} {peak / 2**30:>8.2f}", flush=True)
    print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
