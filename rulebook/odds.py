"""The house edge of every bet of a rule set: the one odds API the CLI and the detectors use.

Probabilities are floats (they are not money). Baccarat and the Hold'em Bonus side bet are exact
enumerations; games whose value depends on the player's decisions (blackjack, the Hold'em main
game) are simulated under a stated strategy and carry a 95 % confidence interval.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from rulebook.ruleset import RuleSet


@dataclass(frozen=True, slots=True)
class BetOdds:
    house_edge: float  # expected loss as a positive fraction of the wager
    win_probability: float | None = None
    push_probability: float | None = None
    method: str = "exact"  # "exact" or "simulation"
    ci95: tuple[float, float] | None = None  # for simulations: the house edge's 95 % interval
    notes: str = ""


@dataclass(frozen=True, slots=True)
class OddsReport:
    ruleset: str
    decks: int
    bets: dict[str, BetOdds] = field(default_factory=dict)
    strategy: str = ""  # the stated strategy, for simulated figures

    def as_json(self) -> dict:
        """The contract of ``pitaudit odds --json``: ruleset, decks, and bets keyed by bet name."""
        return {
            "ruleset": self.ruleset,
            "decks": self.decks,
            "bets": {
                name: {k: v for k, v in _bet_dict(b).items() if v is not None and v != ""}
                for name, b in self.bets.items()
            },
        }


def _bet_dict(b: BetOdds) -> dict:
    return {
        "house_edge": b.house_edge,
        "win_probability": b.win_probability,
        "push_probability": b.push_probability,
        "method": b.method,
        "ci95": list(b.ci95) if b.ci95 else None,
        "notes": b.notes,
    }


def house_edges(ruleset: RuleSet, decks: int | None = None, **options) -> OddsReport:
    """Dispatch to ``rulebook.<game>.odds.house_edges(ruleset, decks, **options)``."""
    module = importlib.import_module(f"rulebook.{ruleset.game}.odds")
    return module.house_edges(ruleset, decks, **options)
