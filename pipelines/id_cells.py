"""How an id from the logs sits in a table cell, the same in the report, the investigation pages and the packs.

A short id (a table, a dealer, a player, a wager) keeps to one line: a narrow column broke ``P-615419`` after its
hyphen, and a reader copying the first line got ``P-``. A longer one may break anywhere (``td.ident`` in the pages'
CSS), so that a hostile id of hundreds of characters cannot widen the page or push the other columns aside.
"""

from __future__ import annotations

SHORT_ID = 24  # characters; the report's script (pipelines/report/assets/report.js) keeps the same bound


def id_class(value) -> str:
    """The CSS class of a cell (or span) showing ``value``: ``ident short`` keeps to one line, ``ident`` may break."""
    return "ident short" if len("" if value is None else str(value)) <= SHORT_ID else "ident"
