"""The audit's parameters: frozen data handed to every step (the pudl way: ``(frames, params) -> frame``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Callable

from rulebook.catalogue import Catalogue, UnknownRuleSet, builtin
from rulebook.round import RoundInput, RoundResult
from rulebook.ruleset import RuleSet
from pipelines.gaming_day import parse_day_start
from pipelines.settings import Settings


@dataclass(frozen=True)
class AuditParams:
    gaming_day_start: str = "06:00"
    catalogue: Catalogue = field(default_factory=builtin)
    # the per-round engine; tests may hand in one that returns hand-made RoundResults
    engine: Callable[[RoundInput], RoundResult] | None = None
    # settle over arrays where the game's array path takes the round (baccarat, blackjack, Hold'em: the irregular
    # rounds still go to the scalar engine); False forces the scalar engine for every round
    vectorised: bool = True
    # processes for the rounds the scalar engine settles (irregular rounds, vectorised=False); 1 = this process only
    workers: int = 1
    # fewer rounds than this stay in this process (a pool costs a second or two to start)
    pool_min_rounds: int = 2000
    # the run's PITAUDIT_* settings, built once by the CLI (pipelines.settings); the tasks and workers read them here
    settings: Settings = field(default_factory=Settings.defaults)
    _versions: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        parse_day_start(self.gaming_day_start)

    @property
    def day_start_minutes(self) -> int:
        return parse_day_start(self.gaming_day_start)

    def settle_round(self, round_input: RoundInput) -> RoundResult:
        if self.engine is not None:
            return self.engine(round_input)
        from rulebook.engine import settle_round

        return settle_round(round_input)

    def ruleset(self, name: str, day: dt.date) -> RuleSet | str:
        """The version of ``name`` in force on ``day``, or why there is none (a sentence)."""
        key = (name, day)
        if key not in self._versions:
            try:
                self._versions[key] = self.catalogue.in_force(name, day)
            except UnknownRuleSet as exc:
                self._versions[key] = str(exc)
        return self._versions[key]
