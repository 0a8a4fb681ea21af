"""The statistical detectors' parameters: frozen data, written into every finding's detail.

Why these numbers: the FDR level is the share of flags we accept to be false (1 %: an investigator
who gets a false alarm every night stops reading); the minimum sample sizes keep an entity out of
the test family until its statistic can be small at all (a player with three Tiger bets cannot be
improbably lucky at the 1 % level after a correction over hundreds of entities, and testing him only
dilutes the others' power).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class StatsParams:
    windows: tuple[int, ...] = (1, 7, 30)  # gaming days ending with tonight (1 = tonight)
    fdr_level: float = 0.01  # Benjamini-Hochberg level over every entity tested that night
    # hold_anomaly
    hold_min_wagers: int = 200  # wagers an entity (table, dealer, shoe x bet type) needs to be tested
    hold_groupings: tuple[str, ...] = ("table_id", "dealer_id", "shoe_id")
    dealer_error_min_rounds: int = 50  # rounds a dealer needs before the error rate is tested
    # player_luck_anomaly
    luck_min_wagers: int = 20  # wagers of one player on one bet type (or on side bets together)
    # advantage_play
    counter_min_hands: int = 30  # main-bet hands of a player at blackjack with a known count
    mid_shoe_after_rounds: int = 5  # a shoe entered after this many of its rounds is a mid-shoe entry
    mid_shoe_min_entries: int = 5  # a player's mid-shoe entries before they are tested
    pair_count_min_bets: int = 20  # baccarat pair bets of a player with a known remaining shoe
    # collusion_pattern
    collusion_min_rounds: int = 10  # rounds of one player with one dealer
    collusion_prior_rounds: int = 200  # pseudo-rounds at the floor's rate mixed into each baseline

    def as_detail(self) -> str:
        """The parameters as compact JSON, for a finding's detail."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)


DEFAULT_PARAMS = StatsParams()
