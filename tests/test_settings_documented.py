"""Every ``PITAUDIT_*`` environment variable the code reads is documented in the README's settings table
(the datasette way: a setting nobody can find is a defect), and the table names none that the code does not read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
NAME = re.compile(r"\bPITAUDIT_[A-Z][A-Z_]*[A-Z]\b")


def _read_by_code() -> set[str]:
    names: set[str] = set()
    for folder in ("pipelines", "rulebook", "schemas"):
        for path in (ROOT / folder).rglob("*.py"):
            names |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return names


def _documented() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Settings", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `(PITAUDIT_[A-Z_]+)` \|", section, flags=re.M)}


def test_every_setting_the_code_reads_is_in_the_readme_and_no_other():
    code = _read_by_code()
    assert {"PITAUDIT_DUCKDB_MEMORY", "PITAUDIT_AUDIT_PROCESSES"} <= code  # the scan itself finds settings
    assert code == _documented()
