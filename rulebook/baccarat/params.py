"""The parameters of a Tiger Baccarat rule set (Hoiana Tiger Baccarat Game Rules, clause prefix TBAC)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rulebook.money import Rounding
from rulebook.payout import Payout


class Variant(str, Enum):
    COMMISSION = "commission"  # TBAC-2.2.5, 5.1.1
    NO_COMMISSION = "no-commission"  # TBAC-2.2.10, 5.1.2


@dataclass(frozen=True, slots=True)
class BaccaratPayTable:
    banker: Payout  # TBAC-5.1.1 (0.95 to 1) or 5.1.2 (1 to 1)
    player: Payout  # TBAC-5.1.1 / 5.1.2
    tie: Payout  # TBAC-5.1.3
    banker_pair: Payout
    player_pair: Payout
    tiger_two_cards: Payout
    tiger_three_cards: Payout
    small_tiger: Payout
    big_tiger: Payout
    banker_wins_on_six: Payout | None = None  # TBAC-5.1.2, no-commission only (1 to 2)


@dataclass(frozen=True, slots=True)
class BaccaratParams:
    variant: Variant
    pay_table: BaccaratPayTable
    decks: int = 8  # not fixed by the text (casinos commonly use 8): a parameter
    # how a fractional win (0.95 to 1, 1 to 2) is brought to a whole unit; the house keeps the fraction
    rounding: Rounding = Rounding.DOWN
    rounding_unit: int = 1
    # the hand each of the first four cards goes to (TBAC-4.9.1)
    deal_order: tuple[str, ...] = ("player", "banker", "player", "banker")

    def __post_init__(self) -> None:
        if not 1 <= self.decks <= 16:
            raise ValueError(f"decks must be 1..16, got {self.decks}")
        if self.deal_order not in (("player", "banker", "player", "banker"), ("banker", "player", "banker", "player")):
            raise ValueError(f"deal_order must alternate player and banker, got {self.deal_order}")
        if (self.variant is Variant.NO_COMMISSION) != (self.pay_table.banker_wins_on_six is not None):
            raise ValueError("banker_wins_on_six is required for no-commission and forbidden for commission")
        if self.rounding_unit < 1:
            raise ValueError("rounding_unit must be at least 1")
