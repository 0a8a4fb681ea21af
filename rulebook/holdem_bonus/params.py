"""The parameters of a Texas Hold'em Bonus rule set (HTB-, MBS-, THB-G- rule texts).

Everything a rule text fixes, or leaves open and we decided (docs/interpretations/holdem_bonus.md),
is a field here, loaded strictly from the rule set's TOML file, so that the engine holds no rule of
its own: pay tables, the Ante qualifier, the deal procedures and their clauses, the decisions'
clauses, what each irregularity does, and the progressive jackpot's lines and semantics.

Deal procedures are data: a list of steps, each one of ``burn`` (one card to the discard),
``seats:N`` (N cards to each seat with an Ante, in seat order, before the next seat is served),
``community:N`` and ``dealer:N``; each step has its clause in a parallel list.
"""

from __future__ import annotations

from dataclasses import dataclass

from rulebook.money import Rounding
from rulebook.payout import Payout

DEAL_STEP_KINDS = ("burn", "seats", "community", "dealer")

#: The Bonus pay table's hand names (HTB-6.1.2, MBS-4.1.1, THB-G-BONUS), strongest first.
BONUS_HANDS = (
    "aa_vs_dealer_aa",
    "aa",
    "ak_suited",
    "aq_aj_suited",
    "ak_offsuit",
    "kk_qq_jj",
    "aq_aj_offsuit",
    "pair_2_to_10",
)

#: Jackpot hands (MBS-4.1.2, 4.1.3; THB-G-JACKPOT). ``straight_flush`` excludes the royal (MBS-3.9.2).
PROGRESSIVE_HANDS = ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush")

#: Which cards make a jackpot hand.
#: hole_and_flop: the two hole cards and the three flop cards (MBS "on the Flop (after 5 cards)", the guide);
#: hole_and_turn: those and the turn card (MBS "after 6 cards"); best_of_seven_with_hole: the best five of
#: seven, strictly better than the five community cards alone (MBS "must include at least 1 Hole Card");
#: best_of_seven: the best five of seven (MBS "Best of 7 Cards"); community: the five community cards.
PROGRESSIVE_CARDS = ("hole_and_flop", "hole_and_turn", "best_of_seven_with_hole", "best_of_seven", "community")

IRREGULARITY_EFFECTS = ("void", "flag", "unsettled")

#: An amount a rule text leaves open and the casino has not yet stated. It is a value a rule set must
#: write out (the field has no default): the wagers it decides are left unsettled, with that reason,
#: until the casino states the amount (docs/interpretations/holdem_bonus.md, "Amounts the texts leave open").
UNSTATED = "unstated"


def stated(amount: int | str) -> bool:
    """Is this open amount stated (an integer) rather than :data:`UNSTATED`?"""
    return not isinstance(amount, str)


def _check_open_amount(name: str, amount: int | str, positive: bool = False) -> None:
    if isinstance(amount, str):
        if amount != UNSTATED:
            raise ValueError(f"{name} must be an amount in the smallest unit or {UNSTATED!r}, got {amount!r}")
    elif amount < 0 or (positive and amount == 0):
        raise ValueError(f"{name} must be {'positive' if positive else 'non-negative'}, got {amount}")


@dataclass(frozen=True, slots=True)
class BonusLine:
    """One line of the Bonus pay table (HTB-6.1.2), on the player's two hole cards."""

    hand: str  # one of BONUS_HANDS
    odds: str
    clause: str

    def __post_init__(self) -> None:
        if self.hand not in BONUS_HANDS:
            raise ValueError(f"unknown Bonus hand {self.hand!r}; use one of {', '.join(BONUS_HANDS)}")


@dataclass(frozen=True, slots=True)
class ProgressiveLine:
    """One line of a Progressive Jackpot pay table (MBS-4.1.2, 4.1.3; the guide's jackpot)."""

    hand: str  # one of PROGRESSIVE_HANDS
    cards: str  # one of PROGRESSIVE_CARDS
    clause: str
    percent_of_meter: int = 0  # whole percent of the jackpot meter at the round's close
    fixed: int = 0  # in the smallest unit of the rule set's jackpot currency
    pays_after_fold: bool = False  # MBS-3.7.1: community hands pay even to a folded hand

    def __post_init__(self) -> None:
        if self.hand not in PROGRESSIVE_HANDS:
            raise ValueError(f"unknown jackpot hand {self.hand!r}; use one of {', '.join(PROGRESSIVE_HANDS)}")
        if self.cards not in PROGRESSIVE_CARDS:
            raise ValueError(f"unknown jackpot cards {self.cards!r}; use one of {', '.join(PROGRESSIVE_CARDS)}")
        if not 0 <= self.percent_of_meter <= 100 or self.fixed < 0:
            raise ValueError("percent_of_meter must be 0..100 and fixed non-negative")
        if self.percent_of_meter == 0 and self.fixed == 0:
            raise ValueError(f"jackpot line {self.hand}/{self.cards} pays nothing")


@dataclass(frozen=True, slots=True)
class ProgressiveParams:
    currency: str  # the currency the fixed amounts are written in (ISO 4217)
    lines: tuple[ProgressiveLine, ...]
    lose_clause: str  # the clause a losing jackpot wager is collected under
    # one line with both a percentage and a fixed amount: "greater" (the guide: "whichever is the greater")
    percent_and_fixed: str
    # several lines met by one hand: "best" pays the single largest (one jackpot per wager), "sum" pays all
    combine: str
    # a winning jackpot wager: "collected" (the wager funds the meter; net = payout - wager) or "returned"
    wager_on_win: str
    # a percentage of the meter that is not a whole unit
    percent_rounding: Rounding
    # the stake of the jackpot wager, in the smallest unit of the jackpot currency: the texts name the
    # wager (MBS-1.1.12, THB-G-JACKPOT) but not its amount, so it has no default (UNSTATED until the
    # casino states it); a jackpot wager of another amount is a finding citing stake_clause
    stake: int | str
    stake_clause: str
    # the guide's Bonus Jackpot (envy): paid to every other jackpot wager of a round in which a royal /
    # straight flush is won (THB-G-BONUS-JACKPOT); the guide names no amount, so no default: UNSTATED
    # leaves the wagers it decides unsettled; 0 where the text has no such payout (MBS)
    envy_royal_flush: int | str
    envy_straight_flush: int | str
    # the guide's "conceding hand": is the jackpot wager still checked as after a fold?
    checked_after_concede: bool = False
    envy_clause: str = ""

    def envy_offered(self) -> bool:
        """Might the Bonus Jackpot pay anything (an amount stated above 0, or one not yet stated)?"""
        return any(not stated(a) or a > 0 for a in (self.envy_royal_flush, self.envy_straight_flush))

    def __post_init__(self) -> None:
        _check_open_amount("stake", self.stake, positive=True)
        _check_open_amount("envy_royal_flush", self.envy_royal_flush)
        _check_open_amount("envy_straight_flush", self.envy_straight_flush)
        if not self.stake_clause:
            raise ValueError("the jackpot stake needs its clause (stake_clause)")
        if self.percent_and_fixed not in ("greater", "sum"):
            raise ValueError("percent_and_fixed must be 'greater' or 'sum'")
        if self.combine not in ("best", "sum"):
            raise ValueError("combine must be 'best' or 'sum'")
        if self.wager_on_win not in ("collected", "returned"):
            raise ValueError("wager_on_win must be 'collected' or 'returned'")
        if len(self.currency) != 3 or not self.currency.isupper():
            raise ValueError(f"currency must be an ISO 4217 code, got {self.currency!r}")
        if self.envy_offered() and not self.envy_clause:
            raise ValueError("an envy bonus needs its clause")


@dataclass(frozen=True, slots=True)
class DecisionClauses:
    """Where the text allows each decision (HTB-4.11.2-4.11.4 with a card shoe, 4.12.2-4.12.4 with a device)."""

    fold: str  # fold: the Ante and the Bonus lose (HTB-4.11.2.i)
    flop: str  # the Flop bet, twice the Ante (HTB-4.11.2.ii)
    turn: str  # bet or check before the turn card (HTB-4.11.3)
    river: str  # bet or check before the river card (HTB-4.11.4)


@dataclass(frozen=True, slots=True)
class ShowdownClauses:
    win: str  # the player's hand is higher (HTB-5.2)
    lose: str  # lower (HTB-5.3)
    stand_off: str  # equal (HTB-5.4)
    bonus_lose: str  # hole cards not on the Bonus table (HTB-5.5)
    ante_required: str  # only a seat with an Ante is dealt / may bet the Bonus (HTB-4.7, 4.8)
    no_decision: str  # no Flop/Fold decision on record (HTB-7.11: an absent player's wagers are returned)
    compare: str  # the dealer compares every hand still in play (HTB-4.13, MBS-3.8)
    concede: str = ""  # declining the comparison loses every wager (HTB-5.6); "" = the text has no concession


@dataclass(frozen=True, slots=True)
class IrregularityRule:
    """What one kind of irregularity does under this rule set, and the clause that says so.

    ``effect``: ``void`` (every wager returned), ``flag`` (reported; the round is settled from the
    cards as the device recorded them), ``unsettled`` (reported; the text gives no rule, so the
    wagers the irregularity touches are left to the operator).
    """

    clause: str
    effect: str

    def __post_init__(self) -> None:
        if self.effect not in IRREGULARITY_EFFECTS:
            raise ValueError(f"effect must be one of {', '.join(IRREGULARITY_EFFECTS)}, got {self.effect!r}")


@dataclass(frozen=True, slots=True)
class Irregularities:
    foreign_card: IrregularityRule  # HTB-7.1.1/7.2, MBS-5.1
    card_count: IrregularityRule  # excess or shortage (HTB-7.1.3, 7.7; MBS-5.2); a duplicate proves an excess
    missing_burn: IrregularityRule  # HTB-7.8
    unexpected_burn: IrregularityRule  # a burn where the procedure has none (MBS-3.6 has none at all)
    decks: IrregularityRule  # the device loaded another number of decks than the text plays (HTB-4.1)


WAGER_RULE_EFFECTS = ("returned", "unsettled")


@dataclass(frozen=True, slots=True)
class WagerRule:
    """What the rules do with wagers of one irregular kind, and the clause that says so.

    ``effect``: ``returned`` (the text prescribes that the wagers are returned: net 0, citing the
    clause) or ``unsettled`` (the text has no rule for it: reported, the wagers left to the operator).
    """

    clause: str
    effect: str

    def __post_init__(self) -> None:
        if self.effect not in WAGER_RULE_EFFECTS:
            raise ValueError(f"effect must be one of {', '.join(WAGER_RULE_EFFECTS)}, got {self.effect!r}")


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
    shoe_deal_clauses: tuple[str, ...]  # one per step of shoe_deal
    device_deal: tuple[str, ...]
    device_deal_clauses: tuple[str, ...]
    shoe_decisions: DecisionClauses
    device_decisions: DecisionClauses
    showdown: ShowdownClauses
    irregularities: Irregularities
    # a second wager of one kind (Ante, Bonus, Flop, Turn, River) on one betting area: HTB-4.7.2 accepts
    # only one, so the later ones are refused and returned; the other texts have no rule for it
    one_wager_per_area: WagerRule
    # a seat with an Ante and no Fold/Flop decision on record (no Flop wager either): HTB-7.11 returns
    # an absent player's Ante and Bonus; the other texts have no rule for it
    absent_player: WagerRule
    folded_bonus_loses: bool = True  # HTB-4.11.2.i, MBS-3.7.1
    decks: int = 1  # HTB-4.1
    progressive: ProgressiveParams | None = None

    def __post_init__(self) -> None:
        if self.ante_qualifier not in ("straight", "flush"):
            raise ValueError("ante_qualifier must be 'straight' or 'flush'")
        for name, procedure, clauses in (
            ("shoe_deal", self.shoe_deal, self.shoe_deal_clauses),
            ("device_deal", self.device_deal, self.device_deal_clauses),
        ):
            for step in procedure:
                kind, _, count = step.partition(":")
                if kind not in DEAL_STEP_KINDS or (kind == "burn") != (count == "") or (count and not count.isdigit()):
                    raise ValueError(f"unknown deal step {step!r}; use burn, seats:N, community:N, dealer:N")
            if len(clauses) != len(procedure):
                raise ValueError(f"{name}_clauses needs one clause per step of {name}")
            counts = {k: 0 for k in DEAL_STEP_KINDS}
            for step in procedure:
                kind, _, count = step.partition(":")
                counts[kind] += int(count or 1)
            if (counts["seats"], counts["community"], counts["dealer"]) != (2, 5, 2):
                raise ValueError(f"{name} must deal two cards per seat, five community cards and two to the dealer")
        hands = [line.hand for line in self.bonus_pay_table]
        if len(set(hands)) != len(hands):
            raise ValueError("a Bonus hand appears twice in the pay table")
        if not 1 <= self.decks <= 8:
            raise ValueError(f"decks must be 1..8, got {self.decks}")

    def deal(self, mode: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The procedure and its clauses for a deal mode (``shoe`` or ``device``)."""
        if mode == "shoe":
            return self.shoe_deal, self.shoe_deal_clauses
        if mode == "device":
            return self.device_deal, self.device_deal_clauses
        raise ValueError(f"deal_mode must be 'shoe' or 'device', got {mode!r}")

    def decisions(self, mode: str) -> DecisionClauses:
        return self.shoe_decisions if mode == "shoe" else self.device_decisions
