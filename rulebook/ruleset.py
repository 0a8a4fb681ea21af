"""A rule set: one version of one casino rule text, as frozen data with an effective date."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Union

from rulebook.baccarat.params import BaccaratParams
from rulebook.blackjack.params import BlackjackParams
from rulebook.holdem_bonus.params import HoldemBonusParams
from rulebook.strict import RuleSetError, build

GameParams = Union[BaccaratParams, BlackjackParams, HoldemBonusParams]

PARAMS_BY_GAME: dict[str, type] = {
    "baccarat": BaccaratParams,
    "blackjack": BlackjackParams,
    "holdem_bonus": HoldemBonusParams,
}


@dataclass(frozen=True, slots=True)
class Header:
    name: str  # e.g. hoiana-tiger-baccarat/commission (the table log's `ruleset`)
    version: str
    effective_from: dt.date
    game: str  # baccarat | blackjack | holdem_bonus (the table log's `game`)
    clause_prefix: str  # TBAC, BJ, HTB, MBS, THB-G
    source: str  # the rule text this version transcribes
    effective_until: dt.date | None = None  # exclusive; None = until superseded

    def __post_init__(self) -> None:
        if self.game not in PARAMS_BY_GAME:
            raise ValueError(f"game must be one of {', '.join(PARAMS_BY_GAME)}, got {self.game!r}")


@dataclass(frozen=True, slots=True)
class RuleSet:
    header: Header
    params: Any  # the game's params dataclass (GameParams)

    @property
    def name(self) -> str:
        return self.header.name

    @property
    def game(self) -> str:
        return self.header.game

    @property
    def version(self) -> str:
        return self.header.version

    def in_force_on(self, day: dt.date) -> bool:
        h = self.header
        return h.effective_from <= day and (h.effective_until is None or day < h.effective_until)


def ruleset_from_mapping(data: dict[str, Any], where: str) -> RuleSet:
    """Validate a parsed rule-set file. Pure: the caller did the reading."""
    unknown = sorted(set(data) - {"ruleset", "params"})
    if unknown:
        raise RuleSetError(f"{where}: unknown top-level table(s) {', '.join(unknown)}; expected [ruleset] and [params]")
    if "ruleset" not in data or "params" not in data:
        raise RuleSetError(f"{where}: a rule-set file needs a [ruleset] and a [params] table")
    header = build(Header, data["ruleset"], f"{where}: ruleset")
    params = build(PARAMS_BY_GAME[header.game], data["params"], f"{where}: params")
    return RuleSet(header=header, params=params)
