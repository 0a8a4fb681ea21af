"""The parameters of a Texas Hold'em Bonus rule set (shared/rules 000, 002, 003).

Deal procedures are data: a list of steps, each one of
``burn`` (one card to the discard), ``seats:N`` (N cards to each seat with an Ante, in seat order,
before the next seat is served), ``community:N`` and ``dealer:N``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rulebook.payout import Payout

DEAL_STEP_KINDS = ("burn", "seats", "community", "dealer")


@dataclass(frozen=True, slots=True)
class BonusLine:
    """One line of the Bonus pay table (HTB-6.1.2), on the player's two hole cards."""

    hand: str  # aa_vs_dealer_aa, aa, ak_suited, aq_aj_suited, ak_offsuit, kk_qq_jj, aq_aj_offsuit, pair_2_to_10
    odds: str
    clause: str


@dataclass(frozen=True, slots=True)
class ProgressiveLine:
    """One line of a Progressive Jackpot pay table (MBS-4.1.2, 4.1.3; the guide's jackpot)."""

    hand: str  # royal_flush, straight_flush, four_of_a_kind, full_house, flush
    cards: str  # which cards make the hand: hole_and_flop, hole_and_turn, best_of_seven_with_hole, best_of_seven, community
    clause: str
    percent_of_meter: int = 0  # whole percent of the jackpot meter
    fixed: int = 0  # in the smallest unit of the rule set's jackpot currency
    pays_after_fold: bool = False  # MBS-3.7.1: community hands pay even to a folded hand


@dataclass(frozen=True, slots=True)
class ProgressiveParams:
    currency: str  # the currency the fixed amounts are written in
    lines: tuple[ProgressiveLine, ...]
    # how lines combine for one hand: "best" pays the single highest line (MBS), percent vs fixed "greater" (guide)
    percent_and_fixed: str = "greater"
    envy_bonus: int = 0  # guide: paid to other jackpot wagers when a royal or straight flush is won (0 = none)
    envy_clause: str = ""


@dataclass(frozen=True, slots=True)
class HoldemBonusParams:
    ante: Payout  # HTB-6.1.1
    flop: Payout
    turn: Payout
    river: Payout
    ante_qualifier: str  # "straight" (HTB-5.2, MBS-3.8.1) or "flush" (the guide)
    ante_qualifier_clause: str
    bonus_pay_table: tuple[BonusLine, ...]
    shoe_deal: tuple[str, ...]
    device_deal: tuple[str, ...]
    folded_bonus_loses: bool = True  # HTB-4.11.2.i, MBS-3.7.1
    decks: int = 1  # HTB-4.1
    progressive: ProgressiveParams | None = None

    def __post_init__(self) -> None:
        if self.ante_qualifier not in ("straight", "flush"):
            raise ValueError("ante_qualifier must be 'straight' or 'flush'")
        for procedure in (self.shoe_deal, self.device_deal):
            for step in procedure:
                kind, _, count = step.partition(":")
                if kind not in DEAL_STEP_KINDS or (kind != "burn" and not count.isdigit()):
                    raise ValueError(f"unknown deal step {step!r}; use burn, seats:N, community:N, dealer:N")
