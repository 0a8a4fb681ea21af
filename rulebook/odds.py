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
class Strategy:
    """The player's decisions a figure assumes: a name (``basic``, ``optimal``) and what it does, in words."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class BetOdds:
    house_edge: float  # expected loss as a positive fraction of the wager
    win_probability: float | None = None
    push_probability: float | None = None
    method: str = "exact"  # "exact", "simulation", or "sampled flops" (an exact count over a random sample)
    ci95: tuple[float, float] | None = None  # for simulations: the house edge's 95 % interval
    notes: str = ""
    # the strategy the figure assumes, for every figure that depends on the player's decisions
    strategy: Strategy | None = None
    # the house edge's standard error: 0.0 for an exact figure under a strategy, None where not stated
    standard_error: float | None = None


@dataclass(frozen=True, slots=True)
class OddsReport:
    ruleset: str
    decks: int
    bets: dict[str, BetOdds] = field(default_factory=dict)
    strategy: str = ""  # the stated strategy, for simulated figures
    # bets of the rule set with no figure, and why (e.g. an amount the rule set leaves unstated)
    omitted: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict:
        """The contract of ``pitaudit odds --json``: ruleset, decks, bets keyed by bet name (each with its
        ``house_edge``, and ``strategy`` {name, description} and ``standard_error`` where decisions matter),
        and ``omitted`` {bet: reason} when a bet has no figure."""
        out = {
            "ruleset": self.ruleset,
            "decks": self.decks,
            "bets": {
                name: {k: v for k, v in _bet_dict(b).items() if v is not None and v != ""}
                for name, b in self.bets.items()
            },
        }
        if self.omitted:
            out["omitted"] = dict(self.omitted)
        return out


def _bet_dict(b: BetOdds) -> dict:
    return {
        "house_edge": b.house_edge,
        "standard_error": b.standard_error,
        "win_probability": b.win_probability,
        "push_probability": b.push_probability,
        "method": b.method,
        "ci95": list(b.ci95) if b.ci95 else None,
        "strategy": {"name": b.strategy.name, "description": b.strategy.description} if b.strategy else None,
        "notes": b.notes,
    }


def house_edges(ruleset: RuleSet, decks: int | None = None, **options) -> OddsReport:
    """Dispatch to ``rulebook.<game>.odds.house_edges(ruleset, decks, **options)``."""
    module = importlib.import_module(f"rulebook.{ruleset.game}.odds")
    return module.house_edges(ruleset, decks, **options)
