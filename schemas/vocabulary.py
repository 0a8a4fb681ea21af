"""The closed vocabularies of the input contract (docs/formats.md), as frozen data.

Rule-set names and their games come from the rule-set catalogue (``rulebook.catalogue``), so a
rule set added there is accepted here with no code change; the other lists are the formats
contract's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Mapping

GAMES: tuple[str, ...] = ("baccarat", "blackjack", "holdem_bonus")

BETS_BY_GAME: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "baccarat": ("banker", "player", "tie", "banker_pair", "player_pair", "tiger", "small_tiger", "big_tiger"),
    "blackjack": ("main", "pair", "insurance"),
    "holdem_bonus": ("ante", "bonus", "flop", "turn", "river", "progressive"),
})

ACTIONS_BY_GAME: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "baccarat": (),
    "blackjack": ("hit", "stand", "double", "split", "surrender", "insurance", "even_money"),
    "holdem_bonus": ("fold", "flop", "check", "turn", "river", "concede"),
})

DEVICE_EVENTS: tuple[str, ...] = ("shoe_start", "burn", "card", "shoe_end")
ROUND_STATUSES: tuple[str, ...] = ("settled", "void", "free_hand")
DEAL_MODES: tuple[str, ...] = ("shoe", "device")
SOURCE_KINDS: tuple[str, ...] = ("shoe_csv", "rounds_jsonl")
FILE_STATUSES: tuple[str, ...] = ("loaded", "unreadable", "refused")


@dataclass(frozen=True)
class Vocabulary:
    """Everything the checks compare against; ``rulesets`` maps a rule-set name to its game."""

    rulesets: Mapping[str, str]
    games: tuple[str, ...] = GAMES
    bets_by_game: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: BETS_BY_GAME)
    actions_by_game: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: ACTIONS_BY_GAME)
    events: tuple[str, ...] = DEVICE_EVENTS
    statuses: tuple[str, ...] = ROUND_STATUSES
    deal_modes: tuple[str, ...] = DEAL_MODES

    def game_bet_pairs(self) -> tuple[str, ...]:
        """``game/bet`` for every bet a game offers (a row check matches the pair at once)."""
        return tuple(f"{g}/{b}" for g, bets in self.bets_by_game.items() for b in bets)

    def game_action_pairs(self) -> tuple[str, ...]:
        return tuple(f"{g}/{a}" for g, acts in self.actions_by_game.items() for a in acts)

    def ruleset_game_pairs(self) -> tuple[str, ...]:
        return tuple(f"{rs}/{g}" for rs, g in self.rulesets.items())


@cache
def builtin_vocabulary() -> Vocabulary:
    """The vocabulary with the shipped rule-set catalogue."""
    from rulebook.catalogue import builtin

    cat = builtin()
    return Vocabulary(rulesets=MappingProxyType({name: cat.game_of(name) for name in cat.names()}))
