"""The resident memory of a process and all its descendants together, sampled while it runs (Linux /proc).

A run that spreads over worker processes (the ingest's parse workers, the audit's group workers) is
not described by any one process's peak: ``ru_maxrss`` of the children is the largest single
process. This samples the sum over the whole tree every ``interval`` seconds and keeps the highest
sum seen (a sample can miss a peak shorter than the interval; it never adds up processes that were
not alive together). Each process counts its proportional set size (PSS: a page shared by n
processes, such as a library's code, counts 1/n in each), so the sum is the memory the tree
occupies; its resident set (RSS) where the kernel has no PSS to give.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def _process_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _name(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [a.decode(errors="replace") for a in argv if a]
    return " ".join(Path(w).name if i == 0 else w for i, w in enumerate(words[:3]))[:60]


def tree_memory(pid: int) -> dict[int, int]:
    """The memory of ``pid`` and every descendant, now: {pid: bytes}."""
    kids = _children_map()
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        out[p] = _process_bytes(p)
        todo.extend(kids.get(p, ()))
    return out


class TreePeak:
    """``with TreePeak(pid) as peak: ...`` then ``peak.bytes`` (the highest tree total sampled) and ``peak.breakdown``
    (the processes at that moment, largest first: ``[(name, bytes)]``)."""

    def __init__(self, pid: int, interval: float = 1.0):
        self.pid, self.interval, self.bytes = pid, interval, 0
        self.breakdown: list[tuple[str, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            sample = tree_memory(self.pid)
            total = sum(sample.values())
            if total > self.bytes:
                self.bytes = total
                self.breakdown = sorted(((_name(p), b) for p, b in sample.items()), key=lambda x: -x[1])

    def describe(self) -> str:
        return ", ".join(f"{n} {b / 2**30:.2f}" for n, b in self.breakdown[:6])

    def __enter__(self) -> "TreePeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
