"""No file of the project refers to a place outside the repository.

A user who installs pitaudit has the repository and nothing beside it: the input/output contract is
``docs/formats.md``, the rule documents are the casino's own (``docs/rule-documents.md``), and a rule
set names its document by title, issuer and date. So no tracked file may point at a sibling folder of
the clone or at the machine it was developed on, and every relative link of the documentation must
land on a file of the repository.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# built from pieces, so that this file does not match itself
_SIBLING = "shared"
FORBIDDEN = (
    ".." + "/" + _SIBLING,  # the folder beside the clone
    "/" + "work" + "/",  # the development machine's tree
    *(f"{_SIBLING}/{name}" for name in ("rules", "formats", "style", "design", "hooks")),
)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode("utf-8").split("\0") if name]


def test_the_patterns_catch_what_they_are_for():
    for text in ("see ../" + _SIBLING + "/formats.md", "cd /" "work/main", _SIBLING + "/rules/README.md"):
        assert any(p in text for p in FORBIDDEN), text
    for text in ("the machine is shared with other jobs", "docs/formats.md", "rulebook/rulesets/"):
        assert not any(p in text for p in FORBIDDEN), text


def test_no_tracked_file_refers_outside_the_repository():
    offences = []
    for path in _tracked():
        if not path.is_file():
            continue  # deleted in the work tree, not yet in the index
        text = path.read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            hits = [p for p in FORBIDDEN if p in line]
            if hits:
                offences.append(f"{path.relative_to(ROOT)}:{number}: {hits[0]!r} in {line.strip()[:100]!r}")
    assert offences == [], "files that point outside the repository:\n" + "\n".join(offences)


def test_every_relative_link_of_the_documentation_lands_in_the_repository():
    broken = []
    for path in _tracked():
        if path.suffix != ".md" or not path.is_file():
            continue
        for target in _LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL, or an anchor on the same page
            resolved = (path.parent / target.split("#", 1)[0]).resolve()
            if ROOT not in resolved.parents and resolved != ROOT or not resolved.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert broken == [], "links that leave the repository or lead nowhere:\n" + "\n".join(broken)
