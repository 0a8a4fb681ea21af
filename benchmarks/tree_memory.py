"""The resident memory of a process and all its descendants together, sampled while it runs (Linux /proc).

A run that spreads over worker processes (the ingest's parse workers, the audit's group workers) is
not described by any one process's peak: ``ru_maxrss`` of the children is the largest single
process. This samples the sum over the whole tree every ``interval`` seconds and keeps the highest
sum seen (a sample can miss a peak shorter than the interval; it never adds up processes that were
not alive together).
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


def tree_rss_bytes(pid: int) -> int:
    """The resident set of ``pid`` and every descendant, now."""
    kids = _children_map()
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
        todo.extend(kids.get(p, ()))
    return total


class TreePeak:
    """``with TreePeak(pid) as peak: ...`` then ``peak.bytes``: the highest tree total sampled."""

    def __init__(self, pid: int, interval: float = 0.25):
        self.pid, self.interval, self.bytes = pid, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.bytes = max(self.bytes, tree_rss_bytes(self.pid))

    def __enter__(self) -> "TreePeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
