"""The sentences a settlement carries (``Settlement.detail``), in one place.

Both the scalar engine and the vectorised settlement word their results through these functions,
so that an investigator reads the same sentence whichever path settled the round, and the tests can
compare the two paths exactly.
"""

from __future__ import annotations

from functools import lru_cache

from rulebook import poker
from rulebook.cards import card_text
from rulebook.holdem_bonus.hands import BONUS_LABELS

QUALIFIER_NAMES = {"straight": "a Straight", "flush": "a Flush"}


@lru_cache(maxsize=None)
def hand(strength: int) -> str:
    return poker.describe(int(strength))


# The sentences of the common settlements as templates: the scalar functions below fill them in one
# round at a time, and the audit's array path (pipelines/audit/holdem_pass.py) fills the same templates
# column-wise, so the two cannot word a result differently. Fields: {bet}, {seat}, {player}/{dealer}
# (a hand in words, :func:`hand`), {odds} ("1 to 1"), {qualifier}, {card1} {card2}, {label}.
WIN = "{bet}: the player's {player} beats the dealer's {dealer}; pays {odds}"
ANTE_STAND_OFF = "ante: the player's {player} beats the dealer's {dealer} but is below {qualifier}: stand-off"
LOSE = "{bet}: the player's {player} loses to the dealer's {dealer}"
STAND_OFF = "{bet}: the player's {player} ties the dealer's: stand-off, returned"
FOLDED = "{bet}: seat {seat} folded: lost"
CONCEDED = "{bet}: seat {seat} conceded (declined the comparison): lost"
BONUS_WIN = "bonus: hole cards {card1} {card2}, {label}, pay {odds}"
BONUS_LOSE = "bonus: hole cards {card1} {card2} are not on the Bonus pay table: lost"


def odds_words(odds: str) -> str:
    return odds.replace(":", " to ")


def win(bet: str, player: int, dealer: int, odds: str) -> str:
    return WIN.format(bet=bet, player=hand(player), dealer=hand(dealer), odds=odds_words(odds))


def ante_stand_off(player: int, dealer: int, qualifier: str) -> str:
    return ANTE_STAND_OFF.format(player=hand(player), dealer=hand(dealer), qualifier=QUALIFIER_NAMES[qualifier])


def lose(bet: str, player: int, dealer: int) -> str:
    return LOSE.format(bet=bet, player=hand(player), dealer=hand(dealer))


def stand_off(bet: str, player: int) -> str:
    return STAND_OFF.format(bet=bet, player=hand(player))


def folded(bet: str, seat: int) -> str:
    return FOLDED.format(bet=bet, seat=seat)


def conceded(bet: str, seat: int) -> str:
    return CONCEDED.format(bet=bet, seat=seat)


def bonus_win(hole: tuple[int, int], hand_name: str, odds: str) -> str:
    return BONUS_WIN.format(card1=card_text(hole[0]), card2=card_text(hole[1]), label=BONUS_LABELS[hand_name], odds=odds_words(odds))


def bonus_lose(hole: tuple[int, int]) -> str:
    return BONUS_LOSE.format(card1=card_text(hole[0]), card2=card_text(hole[1]))


def jackpot_win(line_desc: str, payout: int, wager_on_win: str, envy: int) -> str:
    extra = f" plus a Bonus Jackpot of {envy}" if envy else ""
    wager = "the wager is collected" if wager_on_win == "collected" else "the wager is returned"
    return f"progressive: {line_desc}, pays {payout}{extra}; {wager}"


def jackpot_envy(envy: int, wager_on_win: str) -> str:
    wager = "the wager is collected" if wager_on_win == "collected" else "the wager is returned"
    return f"progressive: no jackpot hand; another hand won a royal or straight flush: Bonus Jackpot {envy}; {wager}"


def jackpot_lose(after_fold: bool) -> str:
    return "progressive: no community jackpot hand after a fold: lost" if after_fold else "progressive: no jackpot hand: lost"


CARDS_TEXT = {
    "hole_and_flop": "on the hole cards and the flop",
    "hole_and_turn": "on the hole cards, the flop and the turn",
    "best_of_seven_with_hole": "on the best five of seven, with a hole card",
    "best_of_seven": "on the best five of seven",
    "community": "on the five community cards",
}
HAND_TEXT = {
    "royal_flush": "Royal flush",
    "straight_flush": "Straight flush",
    "four_of_a_kind": "Four of a kind",
    "full_house": "Full house",
    "flush": "Flush",
}


def line_description(line) -> str:
    parts = []
    if line.percent_of_meter:
        parts.append(f"{line.percent_of_meter}% of the meter")
    if line.fixed:
        parts.append(f"fixed {line.fixed}")
    return f"{HAND_TEXT[line.hand]} {CARDS_TEXT[line.cards]} ({' or '.join(parts)})"


BET_NAMES = {"ante": "Ante", "bonus": "Bonus", "flop": "Flop", "turn": "Turn", "river": "River", "progressive": "jackpot"}


def envy_unstated(hands: list[str], clause: str) -> str:
    """The reason a jackpot wager is unsettled when the Bonus Jackpot it is due has no stated amount."""
    won = " and a ".join(HAND_TEXT[h].lower() for h in hands)
    fields = ", ".join(f"envy_{h}" for h in hands)
    return (
        f"progressive: a {won} was won at the table this round, so every other jackpot wager is due the Bonus "
        f"Jackpot, whose amount the rule text leaves open and the rule set does not state ({fields} unstated; "
        f"{clause}): the casino must state it"
    )


def second_wager(w, first) -> str:
    """A second wager of one kind on one betting area (HTB-4.7.2)."""
    bet = BET_NAMES.get(w.bet, w.bet)
    who = ""
    if w.player_id and first.player_id and w.player_id != first.player_id:
        who = f" by player {w.player_id}, on a hand player {first.player_id} bet on"
    return (
        f"seat {w.seat}: a second {bet} wager ({w.wager_id}, {w.amount:,}){who}; only one {bet} is accepted on a "
        f"betting area, the first ({first.wager_id}, {first.amount:,}) stands"
    )


def stake_breach(w, stake: int, currency: str) -> str:
    return (
        f"seat {w.seat}: jackpot wager {w.wager_id} of {w.amount:,} where the jackpot stake is {stake:,} ({currency} "
        f"smallest units): the prizes are amounts, not odds, so it is settled as placed"
    )


def absent(bet: str, seat: int) -> str:
    return (
        f"{bet}: seat {seat} has an Ante and no Fold or Flop decision on record: the player was not present to "
        f"decide, the hand is invalid and the {BET_NAMES[bet]} is returned"
    )
