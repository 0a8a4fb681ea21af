"""The procedure clauses the audit cites itself, per rule text (clause prefix).

The engine settles a round by its cards and decisions and cites the pay-table clause. What happens
*around* the cards (table limits, the baccarat differential, a round the table declared void, a
Free Hand, a wager placed after "no more bets", a card seen more often than the shoe holds) is
decided by the audit, and these are the clauses it cites. They are data, one frozen record per
rule text; where a text has no clause for a point the field says so (``None``), and the audit then
flags the fact without prescribing a different settlement (docs/findings.md, docs/interpretations/audit.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

# where a rule text is silent on table limits the finding cites the limit sign posted at the table
LIMIT_SIGN = "LIMIT-SIGN"


@dataclass(frozen=True, slots=True)
class ProcedureClauses:
    prefix: str
    # no wager after the first card / after "no more bets"
    late_wager: str
    # a round the table declared void: every wager returned
    void_returned: str
    # the clause voiding a round when extra cards are discovered during it (cited in the finding; an excess
    # found only by the audit afterwards does not void the round: docs/interpretations/audit.md)
    excess_card_void: str | None
    # the clause a card-count finding cites
    excess_card: str
    # over the table maximum: paid or collected up to the maximum, the excess returned (None: no such clause)
    over_maximum: str | None
    # under the table minimum (TBAC-7.17 returns repeat offenders' wagers; HTB-7.10 pays and takes them)
    under_minimum: str | None
    # the announced result is not what decides (the cards stand)
    result_stands: str
    # hold'em: Flop twice the Ante, Turn/River equal to the Ante, and what happens to the excess
    flop_ratio: str | None = None
    turn_river_ratio: str | None = None
    ratio_excess_returned: bool = False
    # baccarat only
    differential: str | None = None
    differential_exception: str | None = None
    free_hand: str | None = None
    # the engine's drawing_rule_violation clauses whose card(s) dealt in error begin the next hand, a Free Hand
    free_hand_causes: tuple[str, ...] = ()
    # shoe-level burn before the first round (None: no burn in the procedure)
    missing_shoe_burn: str | None = None
    # a card the device could not read, where the engine names no clause for it (the text's catch-all)
    unreadable_card: str = ""


CLAUSES: Mapping[str, ProcedureClauses] = MappingProxyType({
    "TBAC": ProcedureClauses(
        prefix="TBAC",
        unreadable_card="TBAC-7.20",
        late_wager="TBAC-4.2",  # wagers placed prior to the first card being dealt (and 4.6: no more bets)
        void_returned="TBAC-2.2.20",  # "Void" means invalid with no result
        excess_card_void="TBAC-7.1.1",
        excess_card="TBAC-7.1",
        over_maximum="TBAC-7.18",
        under_minimum="TBAC-7.17",
        result_stands="TBAC-7.16",
        differential="TBAC-7.19",
        differential_exception="TBAC-7.19.1",
        free_hand="TBAC-7.8",
        free_hand_causes=("TBAC-7.6", "TBAC-7.7"),  # an unauthorised Player / Banker third card (pipelines/audit/free_hand.py)
        missing_shoe_burn="TBAC-7.11",
    ),
    "BJ": ProcedureClauses(
        prefix="BJ",
        unreadable_card="BJ-7.17",
        late_wager="BJ-4.5",  # no wager placed after the first card, except doubles, splits, insurance, surrender
        void_returned="BJ-2.15",
        excess_card_void="BJ-7.14.1",  # a card that does not belong to the decks in use is a foreign card
        excess_card="BJ-7.14",
        over_maximum=None,
        under_minimum=None,
        result_stands="BJ-4.3",  # the point total determines the result, not the total announced
        missing_shoe_burn="BJ-7.13",
    ),
    "HTB": ProcedureClauses(
        prefix="HTB",
        unreadable_card="HTB-7.13",
        late_wager="HTB-4.9",  # the Dealer shall refuse all bets placed after "No more bets" (4.7: before the first card)
        void_returned="HTB-7.12",
        excess_card_void="HTB-7.7",
        excess_card="HTB-7.1.3",
        over_maximum="HTB-7.10",
        under_minimum="HTB-7.10",
        result_stands="HTB-5.1",
        flop_ratio="HTB-7.10.1",
        turn_river_ratio="HTB-7.10.1",
        ratio_excess_returned=True,
    ),
    "MBS": ProcedureClauses(
        prefix="MBS",
        unreadable_card="MBS-5",
        late_wager="MBS-5.6",
        void_returned="MBS-5.1.1",
        excess_card_void="MBS-5.2",
        excess_card="MBS-5.2",
        over_maximum=None,
        under_minimum=None,
        result_stands="MBS-3.8",
        flop_ratio="MBS-3.7.2",
        turn_river_ratio="MBS-3.7.2",
    ),
    "THB-G": ProcedureClauses(
        prefix="THB-G",
        unreadable_card="THB-G-SETTLEMENT",
        # the guide is cited by its section headings as the rule set cites it (THB-G-ANTE-WAGER, ...)
        late_wager="THB-G-ANTE-WAGER",  # "Before any cards are dealt, you must place an Ante Wager"
        void_returned="THB-G-SETTLEMENT",
        excess_card_void=None,
        excess_card="THB-G-SETTLEMENT",
        over_maximum=None,
        under_minimum=None,
        result_stands="THB-G-SETTLEMENT",
        flop_ratio="THB-G-FLOP-WAGER",  # "a Flop Wager ... of an amount that is twice your Ante Wager"
        # one clause for the Turn and the River: the glossary states both ("must be equal to the value of the Ante
        # Wager"); the TURN WAGER section says nothing of the River
        turn_river_ratio="THB-G-GLOSSARY",
    ),
})


def clauses_for(prefix: str) -> ProcedureClauses:
    """The procedure clauses of a rule text; an unknown prefix is a programming error."""
    try:
        return CLAUSES[prefix]
    except KeyError:
        raise KeyError(f"no procedure clauses for rule texts with prefix {prefix!r}; add them to pipelines/audit/clauses.py") from None


# Bets decided after the cards start by design (never late, never checked against min/max).
DECISION_BETS: frozenset[str] = frozenset({"insurance", "flop", "turn", "river"})
# Side bets: checked against side_min/side_max when the table posts them.
SIDE_BETS: frozenset[str] = frozenset(
    {"tie", "banker_pair", "player_pair", "tiger", "small_tiger", "big_tiger", "pair", "bonus", "progressive"}
)
