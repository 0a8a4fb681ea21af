"""A line of a pay table: the odds and the clause that sets them."""

from __future__ import annotations

from dataclasses import dataclass

from rulebook.money import Odds


@dataclass(frozen=True, slots=True)
class Payout:
    odds: Odds
    clause: str
