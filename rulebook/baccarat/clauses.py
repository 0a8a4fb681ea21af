"""Clause ids of the Tiger Baccarat text (Hoiana, No. 01/01.10.2024) that are not in the pay table.

The pay table's clauses come from the rule set's data (``params.pay_table.<bet>.clause``); these
are the clauses for losing, standing off, voiding and the irregularities, which the text states
once for every version. Both engines (scalar and vector) cite them from here.
"""

from __future__ import annotations

from typing import Final

# TBAC-4.5: the bets a player may place, in the formats contract's names.
BETS: Final = ("banker", "player", "tie", "banker_pair", "player_pair", "tiger", "small_tiger", "big_tiger")
BET_CLAUSE: Final = "TBAC-4.5"
NEGATIVE_AMOUNT: Final = "TBAC-4.2"  # wagers are chips placed on the layout: never a negative amount

DEAL_PLAYER: Final = "TBAC-4.9.1.1"
DEAL_BANKER: Final = "TBAC-4.9.1.2"
INITIAL_DEAL: Final = "TBAC-4.9.1"
PAIR_CARDS: Final = "TBAC-4.9.1.3"
CARD_VALUES: Final = "TBAC-4.11"
POINT_COUNT: Final = "TBAC-4.12"
NATURAL: Final = "TBAC-4.13"
TABLE_ONE: Final = "TBAC-4.14"
TABLE_TWO: Final = "TBAC-4.15"
BANKER_AFTER_PLAYER_STANDS: Final = "TBAC-4.16"
BURN: Final = "TBAC-2.2.2"

PLAYER_WINS_HAND: Final = "TBAC-6.1.1.1"
PLAYER_LOSES: Final = "TBAC-6.1.1.2"
PLAYER_STANDOFF: Final = "TBAC-6.1.1.3"
BANKER_WINS_HAND: Final = "TBAC-6.1.2.1"
BANKER_LOSES: Final = "TBAC-6.1.2.2"
BANKER_STANDOFF: Final = "TBAC-6.1.2.3"
TIE_RESULT: Final = "TBAC-6.1.3"
TIE_LOSES: Final = "TBAC-6.1.3"
PAIR_WINS: Final = "TBAC-6.2.1.1"
PAIR_LOSES: Final = "TBAC-6.2.1.2"
TIGER_LOSES: Final = "TBAC-6.3.1.1"
SMALL_TIGER_LOSES: Final = "TBAC-6.4.1.1"
BIG_TIGER_LOSES: Final = "TBAC-6.5.1.1"

VOID_FOREIGN: Final = "TBAC-7.1"  # a foreign card: the current round is void (7.1.1)
EXTRA_PLAYER_CARD: Final = "TBAC-7.6"  # an unauthorised Player third card
EXTRA_BANKER_CARD: Final = "TBAC-7.7"  # an unauthorised Banker third card
FREE_HAND: Final = "TBAC-7.8"

# Finding kinds of the output contract (docs/formats.md).
CARD_INTEGRITY: Final = "card_integrity"
DRAWING_RULE_VIOLATION: Final = "drawing_rule_violation"
