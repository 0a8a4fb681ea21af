"""The parameters of a Blackjack rule set (Hoiana Blackjack Game Rules, No. 01/13.06.2020, clause prefix BJ).

Every field is either a rule the text states (with its clause) or a point the text leaves open,
decided and written in docs/interpretations/blackjack.md. The engine reads nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from rulebook.money import Odds, Rounding
from rulebook.payout import Payout


# the readings of a bust before the dealer's blackjack (BlackjackParams.bust_before_dealer_blackjack)
BUST_BEFORE_DEALER_BLACKJACK = ("loses_all", "original_only")
# the orders in which a seat's split hands are played (BlackjackParams.split_play_order)
SPLIT_PLAY_ORDERS = ("newest_first", "as_formed")


@dataclass(frozen=True, slots=True)
class BlackjackPayTable:
    win: Payout  # BJ-6.2.1, 1 to 1
    blackjack: Payout  # BJ-5.1, 3 to 2
    insurance: Payout  # BJ-5.1, 2 to 1
    pair: Payout  # BJ-5.1, 11 to 1
    even_money: Payout  # BJ-4.15.3, 1 to 1


@dataclass(frozen=True, slots=True)
class BlackjackParams:
    pay_table: BlackjackPayTable
    # A doubled or split hand that busts before the dealer's blackjack (BJ-4.13.3 against 4.9.5, 4.10.8):
    # "loses_all" (the bust is collected at once, doubling and split wager included) or "original_only"
    # (the dealer's blackjack then takes only the original wager, the rest is returned). The text leaves it
    # open and casinos differ: no default, every rule set states it (docs/interpretations/blackjack.md).
    bust_before_dealer_blackjack: str
    # The order of a seat's hands formed by splits (BJ-4.10.2, 4.10.3.1): the text has the first hand of each split
    # completed before the second receives a card, and says nothing of a resplit's new hand against an older split
    # hand still waiting. "newest_first": the new hand is laid next to the hand it came from and played right after
    # it (resplitting hand 1 plays 1, 3, 2: of the hands waiting, the newest formed is dealt first). "as_formed": the
    # hands are played in the order they were formed (1, 2, 3). It decides which card a hand that reaches 21 without
    # a logged decision received. No default, every rule set states it (docs/interpretations/blackjack.md).
    split_play_order: str
    decks: int = 8  # BJ-4.1 allows 1..8; the shoe_start event's `decks` overrides per shoe
    dealer_hole_card: bool = False  # BJ-4.7.2: one card to the dealer on the initial deal (the engine deals no hole card)
    dealer_hits_soft_17: bool = False  # BJ-4.14.3: stands on every 17
    max_hands: int = 4  # BJ-4.10.4
    resplit_aces: bool = False  # BJ-4.10.4.1: aces split once
    split_aces_one_card: bool = True  # BJ-4.10.4.1
    double_after_split: bool = True  # BJ-4.9.1.1
    double_for_less: bool = True  # BJ-4.9.1: "equal to or less than", not under the table minimum
    blackjack_may_double: bool = False  # BJ-4.9.2
    surrender_allowed: bool = True  # BJ-4.12.1: half, before the subsequent deal
    surrender_against_ace: bool = False  # BJ-4.12.1.1
    insurance_max_fraction: Odds = Odds(1, 2)  # BJ-4.11.1: up to half the initial wager ("1:2")
    dealer_blackjack_takes_original_only: bool = True  # BJ-4.9.5, 4.10.8
    max_wagers_per_seat: int = 3  # BJ-4.6
    # a 3:2 win or a half surrender on an odd amount: the house keeps the fraction (the text leaves it open)
    rounding: Rounding = Rounding.DOWN
    rounding_unit: int = 1
    # BJ-4.2.3.1, 6.3: "pair" means the same face (rank); suits are not compared
    pair_by: str = "rank"

    def __post_init__(self) -> None:
        if not 1 <= self.decks <= 8:
            raise ValueError(f"decks must be 1..8 (BJ-4.1), got {self.decks}")
        if self.bust_before_dealer_blackjack not in BUST_BEFORE_DEALER_BLACKJACK:
            raise ValueError(f"bust_before_dealer_blackjack must be one of {', '.join(BUST_BEFORE_DEALER_BLACKJACK)} "
                             f"(BJ-4.13.3 against 4.9.5, 4.10.8), got {self.bust_before_dealer_blackjack!r}")
        if self.split_play_order not in SPLIT_PLAY_ORDERS:
            raise ValueError(f"split_play_order must be one of {', '.join(SPLIT_PLAY_ORDERS)} "
                             f"(BJ-4.10.2, 4.10.3.1), got {self.split_play_order!r}")
        if self.pair_by not in ("rank", "rank_and_suit"):
            raise ValueError("pair_by must be 'rank' or 'rank_and_suit'")
        if not 1 <= self.max_hands <= 8:
            raise ValueError(f"max_hands must be 1..8 (BJ-4.10.4 says 4), got {self.max_hands}")
        if self.max_wagers_per_seat < 1:
            raise ValueError(f"max_wagers_per_seat must be at least 1 (BJ-4.6 says 3), got {self.max_wagers_per_seat}")
        if self.rounding_unit < 1:
            raise ValueError(f"rounding_unit must be a positive amount, got {self.rounding_unit}")
        if self.insurance_max_fraction.num > self.insurance_max_fraction.den:
            raise ValueError(f"insurance_max_fraction must not exceed 1 (BJ-4.11.1 says 1:2), got {self.insurance_max_fraction}")
