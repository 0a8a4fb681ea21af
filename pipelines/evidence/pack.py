"""``pitaudit evidence``: write one round's evidence pack, or verify one.

The database is opened read-only: its published snapshot (``<db>.readonly.duckdb``, :func:`pipelines.db.snapshot_path`)
when there is one, so a pack never holds up the nightly run, else the file itself with a read-only connection.
The pack's bytes depend only on the database, the source files and the configuration (no clock), so the same
round written twice gives the same seal. The format is in ``docs/evidence.md``.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from importlib.metadata import PackageNotFoundError, version as package_version
from pathlib import Path

from pipelines.db import DatabaseError, open_reader, snapshot_path
from pipelines.evidence.cameras import CameraMap, load_camera_map, video_window
from pipelines.evidence.gather import EvidenceError, RoundEvidence, gather_round
from pipelines.evidence.manifest import FORMAT, MANIFEST, SUMS, Verdict, seal, verify_pack
from pipelines.evidence.render import render_html, render_json
from pipelines.evidence.rule_text import ClauseText, clause_texts, no_text
from pipelines.out_folder import prepare_folder

PACK_FILES = ("index.html", "round.json")


@cache
def pitaudit_version() -> str:
    try:
        return package_version("pitaudit")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def database_for_readers(db: Path) -> Path:
    """The file a reader should open for ``db``: its published snapshot if there is one, else ``db`` itself."""
    db = Path(db)
    snap = snapshot_path(db)
    if not db.name.endswith(".readonly.duckdb") and snap.is_file():
        return snap
    if not db.is_file():
        raise EvidenceError(f"no database at {db}")
    return db


def read_lines(path: Path, numbers: set[int]) -> dict[int, str]:
    """The lines ``numbers`` (1-based) of the file at ``path``, read once up to the last one wanted."""
    out: dict[int, str] = {}
    last = max(numbers)
    with path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if n in numbers:
                out[n] = raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
            if n >= last:
                break
    return out


def _source_text(evidence: RoundEvidence, read: dict[tuple[str, int], str] | None = None) -> list[dict]:
    """The round's lines as they read now, from the source files still on disk and unchanged since the ingest
    (``read``: those lines already read, by (file, line); the audit's packs read each file once for all)."""
    usable = {s["source_file"]: Path(s["path_on_disk"]) for s in evidence.sources if s["status"] == "unchanged"}
    wanted: dict[str, set[int]] = {}
    for line in evidence.source_lines:
        if line["source_file"] in usable and (read is None or (line["source_file"], int(line["source_line"])) not in read):
            wanted.setdefault(line["source_file"], set()).add(int(line["source_line"]))
    texts: dict[tuple[str, int], str] = read if read is not None else {}
    for name, numbers in wanted.items():
        texts.update({(name, n): text for n, text in read_lines(usable[name], numbers).items()})
    out = []
    for line in evidence.source_lines:
        key = (line["source_file"], int(line["source_line"]))
        why = None if key in texts else ("the file is not on disk, or changed since the ingest" if line["source_file"] not in usable
                                         else "no such line")
        out.append({**line, "text": texts.get(key), "why": why})
    return out


def _clauses_of(data: dict) -> set[str]:
    ids = {c["clause"] for c in data["cards"]} | {s["clause"] for s in data["steps"]}
    for w in data["wagers"]:
        ids |= {w["clause"], w["pay_clause"], w["amount_clause"], w["limit_clause"], w["audited_clause"]}
    ids |= {x["clause"] for x in data["irregularities"]} | {f["rule_ref"] for f in data["findings"]}
    return {i for i in ids if i}


def pack_document(evidence: RoundEvidence, cameras: CameraMap, clause_text: ClauseText = no_text,
                  clause_note: str | None = None, database: str | None = None,
                  source_text: dict[tuple[str, int], str] | None = None) -> dict:
    """The pack's JSON document (``round.json``): the gathered evidence, the video window, the clauses' texts."""
    data = {
        "format": FORMAT, "pitaudit_version": pitaudit_version(), "database": database,
        "round": evidence.round, "outcome": evidence.outcome, "cards": evidence.cards, "steps": evidence.steps,
        "wagers": evidence.wagers, "irregularities": evidence.irregularities, "findings": evidence.findings,
        "findings_now": evidence.findings_now, "neighbours": evidence.neighbours, "sources": evidence.sources,
        "source_lines": _source_text(evidence, source_text), "notes": list(evidence.notes),
        "video": video_window(evidence.round, evidence.cards, cameras), "clause_note": clause_note,
    }
    data["clause_texts"] = {cid: clause_text(cid) for cid in sorted(_clauses_of(data))}
    return data


def write_pack(db: Path, table_id: str, round_no: int, out: Path, gaming_day: dt.date | None = None,
               cameras: Path | None = None, rule_docs: Path | None = None) -> tuple[Path, str]:
    """Write the pack of one round into ``out``; returns the folder and the seal (SHA-256 of SHA256SUMS).

    ``cameras`` and ``rule_docs`` are the files the caller chose (the CLI: the option, else the setting)."""
    from pipelines.rule_texts import RuleDocsError

    camera_map = load_camera_map(cameras)
    try:
        clause_text, clause_note = clause_texts(rule_docs)
    except RuleDocsError as exc:
        raise EvidenceError(str(exc)) from None
    source = database_for_readers(db)
    try:
        con = open_reader(source)
    except DatabaseError as exc:
        raise EvidenceError(str(exc)) from None
    try:
        evidence = gather_round(con, table_id, round_no, gaming_day)
    finally:
        con.close()
    files, _ = build_pack_files(evidence, camera_map, clause_text, clause_note, str(source))
    prepare_folder(out, set(PACK_FILES) | {MANIFEST, SUMS}, "pack", EvidenceError)
    key = {"table_id": table_id, "round_no": round_no, "gaming_day": evidence.round["gaming_day"]}
    return out, seal_pack(out, files, key, evidence.sources)


def build_pack_files(evidence: RoundEvidence, cameras: CameraMap, clause_text: ClauseText = no_text,
                     clause_note: str | None = None, database: str | None = None,
                     source_text: dict[tuple[str, int], str] | None = None) -> tuple[dict[str, bytes], dict]:
    """The pack's files (name -> bytes, before the manifest and the sums) and its JSON document."""
    data = pack_document(evidence, cameras, clause_text, clause_note, database, source_text)
    files = {"index.html": render_html(data, clause_text).encode("utf-8"), "round.json": render_json(data).encode("utf-8")}
    return files, data


def seal_pack(out: Path, files: dict[str, bytes], key: dict, sources: list[dict]) -> str:
    """Write ``files`` with their manifest and SHA256SUMS into ``out``; the seal."""
    return seal(out, files, key, sources, pitaudit_version())


def verify(folder: Path, expected_seal: str | None = None) -> Verdict:
    return verify_pack(folder, expected_seal)
