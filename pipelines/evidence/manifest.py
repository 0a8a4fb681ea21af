"""The pack's seal: SHA-256 of every file, of every source file the round came from, and ``--verify``.

A pack folder holds its files (``index.html``, ``round.json``), ``manifest.json`` (each file's SHA-256 and
size, and each source file's SHA-256 as the ingest recorded it and as found on disk when the pack was made)
and ``SHA256SUMS`` (the ``sha256sum`` format: one ``<hex>  <name>`` line per file, ``manifest.json``
included), so the pack can also be checked in an air-gapped room with nothing but ``sha256sum -c SHA256SUMS``.
The SHA-256 of ``SHA256SUMS`` itself is the pack's *seal*: printed when the pack is written, to be written
down or logged elsewhere; ``--verify DIR --seal HEX`` then also proves that no one rewrote the pack and its
sums together.

:func:`verify_pack` fails on one changed byte anywhere in the pack, on a file removed or added, and names
the file: it compares each file with both records of its hash, so it can tell a changed file from a changed
``SHA256SUMS`` line or a changed ``manifest.json`` entry. A file of the pack replaced by a symbolic link fails
too, whatever the link points at: what it points at can change after the check.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.evidence import exact_json

MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"
FORMAT = "pitaudit-evidence/1"
_SUM_LINE = re.compile(r"^([0-9a-f]{64})  (\S(?:.*\S)?)$")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sums_text(hashes: dict[str, str]) -> str:
    """``SHA256SUMS`` for ``{file name: sha256}``: sorted by name, two spaces, a newline after each line."""
    return "".join(f"{hashes[name]}  {name}\n" for name in sorted(hashes))


def manifest_document(files: dict[str, bytes], round_key: dict, sources: list[dict], version: str,
                      hashes: dict[str, str] | None = None) -> dict:
    """The manifest of a pack whose files (name -> bytes, manifest and sums excluded) are ``files`` (``hashes``: their
    SHA-256 already computed, by name)."""
    hashes = hashes or {}
    return {
        "format": FORMAT,
        "pitaudit_version": version,
        "round": round_key,
        "files": {name: {"sha256": hashes.get(name) or sha256_bytes(data), "bytes": len(data)}
                  for name, data in sorted(files.items())},
        "sources": [
            {k: s.get(k) for k in ("source_file", "recorded_sha256", "recorded_size_bytes", "path_on_disk", "disk_sha256", "status")}
            for s in sources
        ],
    }


def seal(folder: Path, files: dict[str, bytes], round_key: dict, sources: list[dict], version: str) -> str:
    """Write ``files``, ``manifest.json`` and ``SHA256SUMS`` into ``folder``; return the seal (SHA-256 of SHA256SUMS)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    hashes = {name: sha256_bytes(data) for name, data in files.items()}  # once, for the manifest and the sums
    manifest = (exact_json.dumps(manifest_document(files, round_key, sources, version, hashes)) + "\n").encode("utf-8")
    (folder / MANIFEST).write_bytes(manifest)
    hashes[MANIFEST] = sha256_bytes(manifest)
    text = sums_text(hashes).encode("utf-8")
    (folder / SUMS).write_bytes(text)
    return sha256_bytes(text)


@dataclass
class Verdict:
    ok: bool
    problems: list[str] = field(default_factory=list)  # each names the file
    notes: list[str] = field(default_factory=list)  # what was checked, and sources that could not be
    seal: str | None = None


def _parse_sums(text: str, problems: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), start=1):
        m = _SUM_LINE.match(line)
        if not m:
            problems.append(f"{SUMS} changed: line {n} is not '<sha256>  <file>'")
            continue
        out[m.group(2)] = m.group(1)
    if out and sums_text(out) != text:
        problems.append(f"{SUMS} changed: it is not as the pack wrote it (order, spacing or line ends)")
    return out


def _linked(folder: Path, name: str) -> bool:
    """Whether the pack's file ``name``, or a folder on the way to it inside the pack, is a symbolic link."""
    path = folder
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def verify_pack(folder: Path, expected_seal: str | None = None, check_sources: bool = True) -> Verdict:
    """Check a pack folder (see the module docstring). Never raises for a tampered pack: the verdict says why."""
    folder = Path(folder)
    problems: list[str] = []
    notes: list[str] = []
    if not folder.is_dir():
        return Verdict(False, [f"{folder} is not a folder"])
    sums_path = folder / SUMS
    if not sums_path.is_file():
        return Verdict(False, [f"{SUMS}: missing (this is not an evidence pack, or it was removed)"])
    if _linked(folder, SUMS):
        problems.append(f"{SUMS}: a symbolic link, not the sealed file (it points at {sums_path.resolve()})")
    sums_bytes = sums_path.read_bytes()
    the_seal = sha256_bytes(sums_bytes)
    if expected_seal is not None and expected_seal.strip().lower() != the_seal:
        problems.append(f"{SUMS}: its SHA-256 {the_seal} is not the seal given ({expected_seal.strip().lower()})")
    try:
        sums = _parse_sums(sums_bytes.decode("utf-8"), problems)
    except UnicodeDecodeError:
        sums = {}
        problems.append(f"{SUMS} changed: it is not UTF-8 text")

    manifest: dict = {}
    if not (folder / MANIFEST).is_file():
        problems.append(f"{MANIFEST}: missing")
    else:
        try:
            manifest = json.loads((folder / MANIFEST).read_bytes().decode("utf-8"))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                problems.append(f"{MANIFEST} changed: it is not a {FORMAT} manifest")
                manifest = {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            problems.append(f"{MANIFEST} changed: it is not valid JSON")
    listed = {name: (entry or {}).get("sha256") for name, entry in (manifest.get("files") or {}).items()}

    names = set(sums) | set(listed) | {MANIFEST}
    for name in sorted(names):
        path = folder / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            problems.append(f"{name}: a path outside the pack is listed")
            continue
        actual = sha256_file(path) if path.is_file() else None
        s, m = sums.get(name), listed.get(name)
        if _linked(folder, name):
            # a link's target can change after the check; the pack seals files, not what a link points at today
            problems.append(f"{name}: a symbolic link, not the sealed file (it points at {path.resolve()})")
        elif actual is None:
            problems.append(f"{name}: missing (removed from the pack)")
        elif name == MANIFEST:
            if s is None:
                problems.append(f"{SUMS} changed: it does not list {MANIFEST}")
            elif s != actual:
                problems.append(f"{MANIFEST} changed (its SHA-256 is not the one {SUMS} records)")
        elif s is None:
            problems.append(f"{SUMS} changed: it does not list {name}")
        elif m is None:
            problems.append(f"{MANIFEST} changed: it does not list {name}")
        elif actual == s == m:
            continue
        elif s == m:
            problems.append(f"{name} changed (SHA-256 {actual}, sealed as {s})")
        elif actual == m:
            problems.append(f"{SUMS} changed: its line for {name} matches neither the file nor {MANIFEST}")
        elif actual == s:
            problems.append(f"{MANIFEST} changed: its entry for {name} matches neither the file nor {SUMS}")
        else:
            problems.append(f"{name} changed, and so did its records in {SUMS} and {MANIFEST}")

    for path in sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(folder).as_posix()
        if rel != SUMS and rel not in names:
            problems.append(f"{rel}: not part of the pack (added after it was sealed)")

    if check_sources:
        for src in manifest.get("sources") or []:
            name, recorded, where = src.get("source_file"), src.get("recorded_sha256"), src.get("path_on_disk")
            if not where or not Path(where).is_file():
                notes.append(f"source {name}: not found at {where} (not checked here)")
                continue
            now = sha256_file(Path(where))
            if recorded and now != recorded:
                problems.append(f"source {name} at {where} changed since the ingest (SHA-256 {now}, recorded {recorded})")
            else:
                notes.append(f"source {name}: unchanged since the ingest")
    return Verdict(not problems, problems, notes, the_seal)
