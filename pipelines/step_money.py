"""The engine's step texts with their amounts in major units, for the page only.

The rules engine narrates a round in integers of the smallest unit (``paid 19:20 = 37525``, ``settle W7:
+14250 (seat 3 hand 1 blackjack pays 3:2: +14250)``): it stays pure and knows no currency, and ``round.json``
keeps its words as it wrote them. The evidence page shows them beside tables in major units, so here each
amount of a step is found by the place the engine's sentences put amounts (never by its value: a total of 19,
a card count or a ratio 3:2 is not money) and written with the currency's ISO 4217 decimals
(:func:`pipelines.currency.format_amount`): ``paid 19:20 = 375.25``; in VND (no decimals) ``= 37,525``.

The places, from the engines' sentences (``rulebook/baccarat/engine.py``, ``rulebook/blackjack/``):

- after ``net``, ``= ``, ``half of``, ``split wager``, ``initial wager``, ``original wager``, ``table minimum``,
  ``wager amount``, ``takes insurance (``; after ``<word> of`` before ``returned``, ``exceeds``, ``is``, ``on wager``
  (``the double of 9000 returned``, ``insurance W of 2500 exceeds``);
- a signed number after ``: ``, ``, `` or ``loses `` (``: -17500``, ``, +350``);
- an unsigned number after ``: `` followed by ``on seat`` (``wager W: 5000 on seat 1``) or ``accepted``;
- a name and a number in a parenthesis or a list (``(banker 5000)``, ``(W1 5000, W2 2500 put up)``,
  ``doubles (W1 5000)``, ``the double before the card: W1 5000``);
- before ``returned`` or ``lost`` after a comma (``, 2500 returned``, ``, 5000 lost``).

A step with no amount in those places is shown as the engine wrote it.
"""

from __future__ import annotations

import re

from pipelines.currency import format_amount

_NUMBER = r"[+-]?\d+"
# each pattern's group "m" is an amount; everything else is context
_PATTERNS = [re.compile(p) for p in (
    r"\bnet (?P<m>[+-]?\d+)\b",
    r"= (?P<m>[+-]?\d+)\b(?![:/])",
    r"\bhalf of (?P<m>\d+)\b",
    r"\bsplit wager (?P<m>\d+)\b",
    r"\binitial wager (?P<m>\d+)\b",
    r"\b(?:double|wager|insurance|[A-Za-z0-9_-]+) of (?P<m>[+-]?\d+)(?= returned\b| exceeds\b| is\b| on wager\b)",
    r"\boriginal wager (?P<m>\d+)\b",
    r"\bwager amount (?P<m>[+-]?\d+)\b",
    r"\btable minimum (?P<m>\d+)\b",
    r"; (?P<m>\d+)(?= put up\b)",
    r"\btakes insurance \((?P<m>\d+)\)",
    r"(?::|,|\bloses) (?P<m>[+-]\d+)\b(?![:/.])",
    r": (?P<m>\d+)(?= on seat\b| accepted\b)",
    r"(?:\(|(?<=\d), )[^\s(),:]+ (?P<m>\d+)(?=,|\)| put up\b)",
    r"(?:the card: |(?<=\d), )[^\s(),:]+ (?P<m>\d+)(?=,|$)",
    r", (?P<m>\d+)(?= returned\b| lost\b)",
)]


def money_spans(text: str) -> list[tuple[int, int]]:
    """Where the amounts of a step text are (start, end), sorted, not overlapping."""
    spans = set()
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            spans.add(m.span("m"))
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            continue
        out.append((start, end))
    return out


def step_in_major_units(text: str | None, currency: str | None) -> str:
    """``text`` with each amount written in the currency's major units (module docstring)."""
    if not text:
        return text or ""
    parts, last = [], 0
    for start, end in money_spans(text):
        raw = text[start:end]
        parts.append(text[last:start])
        parts.append(format_amount(int(raw), currency, signed=raw.startswith("+")))
        last = end
    parts.append(text[last:])
    return "".join(parts)
