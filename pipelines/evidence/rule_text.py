"""A clause's text for the pack, when the user has configured the casino's rule documents; else None.

pitaudit ships no copy of the rule texts: the rule sets cite clauses by id. :mod:`pipelines.rule_texts` reads
a folder of the casino's documents the user configures; this is the pack's one seam onto it, so the pack shows
each clause's words where they are available and only the id where they are not (no folder configured, an
unusable folder, or a clause the documents do not hold).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

ClauseText = Callable[[str], "str | None"]


def no_text(clause_id: str) -> str | None:
    return None


def clause_texts(folder: Path | None = None) -> tuple[ClauseText, str | None]:
    """``(clause_text, why_not)``: a function clause id -> its text or None, and a sentence when no text can come."""
    try:
        from pipelines.rule_texts import RuleDocsError, RuleDocuments, catalogue_titles, configured_folder
    except ImportError:  # the reader of rule documents is not installed in this version
        return no_text, "this version of pitaudit cannot read rule documents: clauses are shown by id"
    folder = folder if folder is not None else configured_folder()
    if folder is None:
        return no_text, "no folder of the casino's rule documents is configured: clauses are shown by id"
    try:
        docs = RuleDocuments.open(Path(folder), catalogue_titles())
    except RuleDocsError as exc:
        return no_text, f"the rule documents cannot be used ({exc}): clauses are shown by id"

    def clause_text(clause_id: str) -> str | None:
        try:
            return docs.text(clause_id)
        except Exception:  # noqa: BLE001 - a clause the documents cannot give is shown by id
            return None

    return clause_text, None
