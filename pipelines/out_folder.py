"""The folder a command writes a set of files of its own into (an investigation's, an evidence pack's).

One guard for both: the folder is missing, empty, or holds only files of that set (a previous run's), which are removed
before the new ones are written; anything else is refused rather than written over or mixed in (``--out report/``
gave an investigation the night's findings.csv to replace). Removing first matters for a link: an earlier
investigation's ``index.html`` made a symbolic link to a file elsewhere had the new page written through it, over
that file.
"""

from __future__ import annotations

from pathlib import Path


def check_folder(out: Path, ours: set[str], what: str, error: type[Exception]) -> list[Path]:
    """Raise ``error`` with a one-line reason when ``out`` is not a folder or holds anything but ``ours`` (names
    relative to it, ``/``-separated); else the paths of ``ours`` it holds. ``what``: the command's output, as the
    reason names it ("investigation", "pack")."""
    if out.exists() and not out.is_dir():
        raise error(f"{out} exists and is not a folder")
    present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) if out.is_dir() else []
    others = [name for name in present if name not in ours]
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise error(f"{out} holds other files ({shown}): give an empty folder or a previous {what}'s")
    return [out / name for name in present]


def prepare_folder(out: Path, ours: set[str], what: str, error: type[Exception]) -> None:
    """:func:`check_folder`, then the previous run's files removed (a link is removed, never followed)."""
    for path in check_folder(out, ours, what, error):
        path.unlink()
