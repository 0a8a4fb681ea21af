"""Stage 1: the input files under a folder, in the order of their relative paths.

The folder is walked without following symbolic links to folders (a link could lead anywhere, or in a
circle). A symbolic link whose name is an input format's is followed only when it leads to a file inside
the input folder; one that leads outside (or nowhere) is returned as refused, with the reason, so the run
reports it instead of reading what it points to. A linked folder leading outside is refused the same way.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pipelines.ingest.records import FoundFile, Kind

# as the shell globs shoe_*.csv and rounds_*.jsonl match: a name with a line end in it is an input file too (it was
# skipped without a word, its rounds never audited)
PATTERNS = {Kind.SHOE_CSV: re.compile(r"^shoe_.*\.csv\Z", re.DOTALL),
            Kind.ROUNDS_JSONL: re.compile(r"^rounds_.*\.jsonl\Z", re.DOTALL)}


def kind_of(name: str) -> Kind | None:
    for kind, pattern in PATTERNS.items():
        if pattern.match(name):
            return kind
    return None


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


LINK = "symlink_outside_input"


def _link_refusal(path: Path, root: Path) -> tuple[str, str] | None:
    """Why a symbolic link is not followed, or None when it leads to something inside the input folder."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return LINK, f"symbolic link leading nowhere ({os.readlink(path)}); not followed"
    if not _inside(target, root):
        return LINK, f"symbolic link leading outside the input folder (to {target}); not followed"
    return None


NOT_UTF8 = ("file_unreadable", "its name is not UTF-8 text (rename it to read it); not read")


def escaped_if_not_utf8(name: str) -> str | None:
    """``name`` with its bytes that are not UTF-8 escaped (``caf\\xe9``) when it has any, else None. A file system name
    is bytes (an exporter's Latin-1 name); Python holds the bytes it cannot decode as surrogates, which DuckDB and
    Prefect cannot encode."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


def _utf8_named(f: FoundFile) -> FoundFile:
    """``f``, or, when its relative path is not UTF-8, the same file not read, named with those bytes escaped
    (``rounds_caf\\xe9.jsonl``): as a source_file the name stopped the whole night in DuckDB ("cannot encode str as
    UTF-8")."""
    shown = escaped_if_not_utf8(f.rel)
    return f if shown is None else FoundFile(shown, f.kind, f.path, f.problem or NOT_UTF8)


def discover(input_dir: Path) -> list[FoundFile]:
    """Every input file under ``input_dir`` (and every refused link), sorted by relative path."""
    root = Path(input_dir).resolve()
    found: list[FoundFile] = []

    def unreadable_folder(exc: OSError) -> None:
        p = Path(exc.filename) if exc.filename else root
        rel = p.relative_to(root).as_posix() if _inside(p, root) else str(p)
        found.append(FoundFile(rel, None, p, ("file_unreadable", f"folder cannot be read: {exc.strerror or exc}")))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=unreadable_folder):
        here = Path(dirpath)
        for d in dirnames:
            p = here / d
            if p.is_symlink():
                why = _link_refusal(p, root)
                if why is not None:
                    found.append(FoundFile(p.relative_to(root).as_posix(), None, p, why))
        for name in filenames:
            kind = kind_of(name)
            if kind is None:
                continue
            p = here / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                why = _link_refusal(p, root)
                if why is not None:
                    found.append(FoundFile(rel, kind, p, why))
                    continue
            if p.is_file():
                found.append(FoundFile(rel, kind, p))
            elif p.exists():  # a named pipe, socket or device under an input's name: never opened (a pipe would
                # block the run until something wrote to it), never skipped without a word
                found.append(FoundFile(rel, kind, p, ("file_unreadable", "not a regular file (a named pipe, socket or "
                                                                          "device); not read")))
    return sorted((_utf8_named(f) for f in found), key=lambda f: f.rel)
