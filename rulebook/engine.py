"""One entry point for every game: settle a round from its cards and decisions."""

from __future__ import annotations

import importlib

from rulebook.round import RoundInput, RoundResult


def settle_round(round_input: RoundInput) -> RoundResult:
    """Reconstruct and settle one round under its rule set (``rulebook.<game>.engine.settle_round``)."""
    module = importlib.import_module(f"rulebook.{round_input.ruleset.game}.engine")
    return module.settle_round(round_input)
