"""``pitaudit clause ID``: the text of one rule clause, from the casino's own rule documents.

The command is the smallest use of :mod:`pipelines.rule_texts`: a person reading a finding's
``rule_ref`` can read the clause itself. It answers in one line when it cannot (no folder of rule
documents configured, an unusable folder, a clause the documents do not hold), never with a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipelines.rule_texts import RULE_DOCS_ENV, RuleDocsError, open_configured

NOT_FOUND = 1  # the documents do not hold the clause
CANNOT_RUN = 2  # no folder, or a folder that cannot be used


@dataclass(frozen=True)
class Answer:
    """What the command prints, and its exit status: the clause's text (status 0) or a one-line reason."""

    status: int
    text: str


def _not_a_rule_text(clause_id: str) -> str | None:
    """The references findings cite that are pitaudit's own, not a clause of a casino's document."""
    ref = clause_id.strip().upper()
    if ref.startswith("FORMATS-"):
        return (f"{clause_id} is not a clause of a rule text: it cites pitaudit's input/output contract, "
                f"docs/formats.md")
    if ref == "LIMIT-SIGN":
        return f"{clause_id} is not a clause of a rule text: it cites the table's posted limit sign (docs/findings.md)"
    return None


def clause_answer(clause_id: str, folder: Path | None) -> Answer:
    """The clause's text from ``folder`` (``--rule-docs``, else the settings' ``rule_docs``; None: none configured)."""
    own = _not_a_rule_text(clause_id)
    if own:
        return Answer(NOT_FOUND, own)
    if folder is None:
        return Answer(CANNOT_RUN, f"no folder of rule documents is configured (set {RULE_DOCS_ENV} or pass "
                                  f"--rule-docs DIR): only the clause id {clause_id} can be shown")
    try:
        docs = open_configured(folder)
    except RuleDocsError as exc:
        return Answer(CANNOT_RUN, str(exc))
    assert docs is not None
    found = docs.document_for(clause_id)
    if found is None:
        known = ", ".join(sorted(docs.documents)) or "none"
        return Answer(NOT_FOUND, f"no rule document in {folder} for the clause {clause_id} "
                                 f"(prefixes found: {known}; name its document in {folder}/index.toml)")
    clause = docs.clause(clause_id)
    if clause is None:
        return Answer(NOT_FOUND, f"clause {clause_id} is not in {found[0].path.name}")
    return Answer(0, clause.text)
