"""Every quarantine reason (of a line, of a file) is in docs/ingest.md with its code and text, and every finding
kind the audit emits has a section in docs/findings.md (the datasette way: each registry iterated against its
docs, so a reason or a kind nobody can look up is a failing test)."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.audit.findings import DETERMINISTIC_KINDS
from schemas.reasons import FILE_REASONS, REASONS

ROOT = Path(__file__).parents[1]


def _rows(text: str) -> set[tuple[str, str]]:
    """(text, code) of every table row reading ``| text (`code`) | ...``."""
    return set(re.findall(r"^\| ([^|(]+?) \(`([a-z_0-9]+)`\)", text, flags=re.M))


def test_every_quarantine_reason_is_documented_with_its_text() -> None:
    docs = (ROOT / "docs" / "ingest.md").read_text(encoding="utf-8")
    rows = _rows(docs)
    # a row may name several reasons: "unknown game (`unknown_game`), unknown rule set (`unknown_ruleset`), ..."
    for line in docs.splitlines():
        if line.startswith("| "):
            first_cell = line.split(" | ")[0]
            rows |= set(re.findall(r"(?:^\| |, )([a-z][a-z0-9_ -]+?) \(`([a-z_0-9]+)`\)", first_cell))
    for code, text in {**REASONS, **FILE_REASONS}.items():
        assert (text, code) in rows, (code, text)
    documented = {code for _, code in rows}
    assert documented <= set(REASONS) | set(FILE_REASONS), documented - set(REASONS) - set(FILE_REASONS)


def test_every_finding_kind_has_its_section() -> None:
    docs = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^### ([a-z_]+)", docs, flags=re.M))
    assert set(DETERMINISTIC_KINDS) <= sections, set(DETERMINISTIC_KINDS) - sections
