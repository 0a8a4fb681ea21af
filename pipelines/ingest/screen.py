"""Stage 2: each found file against what is already loaded: read it, read only its new lines, or skip it.

A file is known by its content, never by its name: one whose SHA-256 was loaded before (under any name, in
any folder, or earlier in this very run) is ``already loaded``; tomorrow's export reusing today's names is
new content and is read. A file that grew since it was read (a copy still in progress, then finished)
starts with the bytes an earlier read of the same name ended at: its first ``prefix_bytes`` hash to that
read's ``prefix_sha256`` (the bytes up to its last line end), and only the lines after them are read. A
file that cannot be read now is reported with its reason and read when it can be; one that is not text at
all (UTF-16, binary) is reported once per content. Nothing here touches the database: what is known
arrives as one :class:`Loaded`, queried once before the run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pipelines.ingest.records import FileOutcome, FileStatus, Fingerprint, FoundFile, InputFile, Loaded, Screened

BLOCK = 8 << 20
# the reasons a file's content decides, recorded once per content; any other failure (the OS refused a read, an I/O
# error, the loader failed) may pass, and its file is read again by every run (docs/formats.md)
ONCE_PER_CONTENT = frozenset({"file_not_text", "csv_no_header"})


class NotText(Exception):
    """The content is not UTF-8 text lines at all; the message is the one-line reason."""


def fingerprint(path: Path, lengths: tuple[int, ...] = ()) -> Fingerprint:
    """SHA-256 of the file, of its bytes up to its last line end, and of its first ``length`` bytes for each
    length asked for; one pass over the file.

    Each byte is hashed once: the lengths asked for and each block's last line end are visited in order, a copy of
    the running hash taken at each. (A file whose name was read every night asks for as many lengths as nights;
    hashing each from its block's start hashed the file that many times: a second of the ingest at 30 nights.)"""
    whole = hashlib.sha256()
    prefix_state = hashlib.sha256()
    prefix_bytes = prefix_lines = lines = size = 0
    wanted = sorted(set(n for n in lengths if n > 0))
    at: list[tuple[int, str]] = []
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            start = size
            view = memoryview(block)
            last = block.rfind(b"\n")
            # the places inside this block where a hash is taken: the lengths asked for, then the last line end
            marks: list[tuple[int, int]] = []
            while wanted and wanted[0] <= start + len(block):
                marks.append((wanted.pop(0) - start, 0))
            if last >= 0:
                marks.append((last + 1, 1))
            done = 0
            for cut, what in sorted(marks):
                whole.update(view[done:cut])
                done = cut
                if what == 0:
                    at.append((start + cut, whole.copy().hexdigest()))
                else:
                    prefix_state = whole.copy()
                    lines += block.count(b"\n")
                    prefix_bytes, prefix_lines = start + last + 1, lines
            whole.update(view[done:])
            size += len(block)
    return Fingerprint(whole.hexdigest(), size, prefix_state.hexdigest(), prefix_bytes, prefix_lines, tuple(at))


def sniff(path: Path) -> None:
    """Raise :class:`NotText` for content that is not UTF-8 text lines at all."""
    with open(path, "rb") as f:
        head = f.read(8192)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise NotText("UTF-16 encoded (byte order mark); the format is UTF-8")
    if b"\x00" in head:
        raise NotText("binary content (NUL bytes); the format is UTF-8 text")


def _os_reason(exc: OSError) -> str:
    return f"cannot read the file: {exc.strerror or exc}"


def screen(found: list[FoundFile], loaded: Loaded) -> Screened:
    """The files to read (in the order found) and the outcome of every other one."""
    to_load: list[InputFile] = []
    skipped: list[FileOutcome] = []
    seen: dict[tuple[str, str], str] = {}  # (kind, content) -> the file of this run that has it

    def unreadable(f: FoundFile, sha: str, code: str, error: str, status: FileStatus = FileStatus.UNREADABLE) -> None:
        again = loaded.unreadable.get((f.rel, sha)) == (code, error)
        skipped.append(FileOutcome(f.rel, f.kind, status, error=error, reason_code=code, recorded=not again,
                                   sha256=sha))

    for f in found:
        if f.problem is not None:
            code, why = f.problem
            unreadable(f, "", code, why, FileStatus.REFUSED if code == "symlink_outside_input" else FileStatus.UNREADABLE)
            continue
        reads = loaded.prefixes.get(f.rel, ())
        try:
            fp = fingerprint(f.path, tuple(n for n, _, _ in reads))
        except OSError as exc:
            unreadable(f, "", "file_unreadable", _os_reason(exc))
            continue
        content = (str(f.kind), fp.sha256)
        if content in loaded.contents or content in seen:
            where = seen.get(content)
            skipped.append(FileOutcome(f.rel, f.kind, FileStatus.ALREADY_LOADED,
                                       error=f"the same content as {where}" if where else None, sha256=fp.sha256))
            continue
        known = loaded.unreadable.get((f.rel, fp.sha256))
        if known is not None and known[0] in ONCE_PER_CONTENT:
            # this content, under this name, is not text lines: reading it again would not help
            skipped.append(FileOutcome(f.rel, f.kind, FileStatus.UNREADABLE, error=known[1], reason_code=known[0],
                                       recorded=False))
            continue
        try:
            sniff(f.path)
        except NotText as exc:
            unreadable(f, fp.sha256, "file_not_text", str(exc))
            continue
        except OSError as exc:
            unreadable(f, fp.sha256, "file_unreadable", _os_reason(exc))
            continue
        seen[content] = f.rel
        hashes = dict(fp.at)
        grown = [(n, lines) for n, lines, sha in reads if n < fp.size and hashes.get(n) == sha]
        start, first = max(grown) if grown else (0, 0)
        to_load.append(InputFile(f.rel, f.kind, f.path, fp.sha256, fp.size, start, first + 1,
                                 fp.prefix_sha256, fp.prefix_bytes, fp.prefix_lines))
    return Screened(tuple(to_load), tuple(skipped))
