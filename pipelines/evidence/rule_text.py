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
    """``(clause_text, why_not)``: a function clause id -> its text or None, and a sentence when no text can come.

    ``folder`` is ``--rule-docs``, else the ``rule_docs`` setting (``PITAUDIT_RULE_DOCS``); an unusable folder
    raises :class:`pipelines.rule_texts.RuleDocsError` (a person asked for the texts and should know)."""
    from pipelines.rule_texts import open_configured

    docs = open_configured(Path(folder) if folder is not None else None)
    if docs is None:
        return no_text, "no folder of the casino's rule documents is configured (--rule-docs or PITAUDIT_RULE_DOCS): clauses are shown by id"

    def clause_text(clause_id: str) -> str | None:
        try:
            return docs.text(clause_id)
        except Exception:  # noqa: BLE001 - a clause the documents cannot give is shown by id
            return None

    return clause_text, None
