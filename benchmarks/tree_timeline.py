"""Run a command and sample its whole process tree's memory every second: the peak with the processes behind it,
and a timeline beside the command's last line of progress (where in a run the memory goes; issue 13's 3 GB goal).

    .venv/bin/python -m benchmarks.tree_timeline pitaudit audit --input night-1m --db n.duckdb --out out

Each process counts its proportional set size (``benchmarks.tree_memory``).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from benchmarks.tree_memory import _name, tree_memory


def main(cmd: list[str]) -> int:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, bufsize=1)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append((time.perf_counter() - start, line.rstrip()))

    threading.Thread(target=read, daemon=True).start()
    peak, peak_at, peak_of, timeline = 0, 0.0, [], []
    while proc.poll() is None:
        sample = tree_memory(proc.pid)
        total, now = sum(sample.values()), time.perf_counter() - start
        named = sorted(((_name(p), b) for p, b in sample.items()), key=lambda x: -x[1])
        timeline.append((now, total, named[:4]))
        if total > peak:
            peak, peak_at, peak_of = total, now, named
        time.sleep(1.0)
    print(f"exit {proc.returncode}, {time.perf_counter() - start:.0f} s")
    print(f"peak {peak / 1e9:.2f} GB at {peak_at:.0f} s: " + ", ".join(f"{n} {b / 1e9:.2f}" for n, b in peak_of[:8]))
    last = None
    for now, total, top in timeline:
        said = [text for t, text in lines if t <= now]
        if last is None or abs(total - last) > 0.15e9:
            print(f"{now:6.0f} s {total / 1e9:5.2f} GB  " + ", ".join(f"{n[:28]} {b / 1e9:.2f}" for n, b in top)
                  + f" | {said[-1][:70] if said else ''}")
            last = total
    return proc.returncode


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    sys.exit(main(sys.argv[1:]))
