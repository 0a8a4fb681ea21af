"""The output files appear all together or not at all.

Every file of a run (findings.csv, settlements.parquet, quarantine.csv, report.html) is written into
a temporary folder inside ``--out`` (``.pitaudit-partial-<pid>``: inside, not beside, so that it is on
the same file system and the final moves are renames, which need no space and cannot be cut half-way).
Only when every file is complete are they moved into place, one rename each, one after the other with
nothing in between that could fail for want of space. A run that fails (a full disk, an error, a kill)
leaves the previous run's files as they were and no partial file among them; its temporary folder is
removed, or, after a kill, by the next run (:func:`clear_leftovers`, under the writer lock).

A folder of the run (``evidence/``, ``investigations/``: the pages the report links to) replaces the previous
run's folder of that name whole: the old one is first renamed into the temporary folder (removed with it),
then the new one takes its name; two renames, before report.html is moved, so a report never links to a page
of another run. The folders' files are not fsynced one by one (thousands of packs): a pack cut short by a
power cut fails ``pitaudit evidence --verify``, naming the file.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PARTIAL_PREFIX = ".pitaudit-partial-"
OLD_PREFIX = ".previous-"  # inside the temporary folder: the previous run's folder it replaced


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_leftovers(out_dir: Path) -> None:
    """Remove the temporary folders of runs that are no longer running (a killed run's)."""
    if not out_dir.is_dir():
        return
    for folder in out_dir.glob(PARTIAL_PREFIX + "*"):
        pid = folder.name.removeprefix(PARTIAL_PREFIX)
        if folder.is_dir() and (not pid.isdigit() or not _alive(int(pid)) or int(pid) == os.getpid()):
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def output_folder(out_dir: Path) -> Iterator[Path]:
    """A temporary folder for the run's files; on leaving the block without an error, each of its files is moved
    into ``out_dir`` (replacing the previous run's); on an error, it is removed and ``out_dir`` is untouched."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    clear_leftovers(out_dir)
    partial = out_dir / f"{PARTIAL_PREFIX}{os.getpid()}"
    partial.mkdir()
    try:
        yield partial
        for path in partial.iterdir():  # every file is complete: flush them before they take their names
            if path.is_file():
                with open(path, "rb") as fh:
                    os.fsync(fh.fileno())
        # the folders first (the pages the report links to), then the files, report.html among them
        for path in sorted(partial.iterdir(), key=lambda p: (not p.is_dir(), p.name)):
            if path.name.startswith(OLD_PREFIX):
                continue
            target = out_dir / path.name
            # a link of that name (to a bigger disk, or to nothing) goes the old folder's way: a folder cannot be renamed
            # onto a link ("Not a directory" stopped every night); the link is moved, never what it leads to
            if path.is_dir() and (target.is_dir() or target.is_symlink()):
                os.replace(target, partial / f"{OLD_PREFIX}{path.name}")
            os.replace(path, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
