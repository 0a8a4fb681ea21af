"""Each seat's decisions, read from the table system's actions and checked against the rules.

A seat decides once before the flop (``fold`` or ``flop``: HTB-4.11.2, MBS-3.7), then may bet or
check before the turn and before the river (``turn``/``check``, ``river``/``check``: HTB-4.11.3,
4.11.4, MBS-3.7.2), and, where the rule set has a concession (HTB-5.6, the guide's "conceding
hand"), may concede at the showdown. The decisions are read in order as a small state machine:
the first action the rules do not allow is an ``illegal_action`` irregularity and ends the reading
(what came before stands). The wagers must agree with the decisions: a wager the legal decisions
do not account for (a turn wager after a check, any Flop wager on a folded hand) is *refused*: the
engine leaves it unsettled with the reason, because the text says nothing of how to settle it.

Where the log holds no decision for a street, the wagers speak: a Flop wager means the seat played
the flop, a Turn or River wager a bet on that street, none a check (HTB-7.11.1: a player absent
after the flop is deemed to have checked). No pre-flop decision and no Flop wager: undecided.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulebook.holdem_bonus.params import DecisionClauses, ShowdownClauses
from rulebook.round import Action, Irregularity, Step, Wager

PLAYED, FOLDED, CONCEDED, UNDECIDED = "played", "folded", "conceded", "undecided"
# when a decision is made: the community cards on the table by then (a concession at the showdown, after every card)
PRE_FLOP, BEFORE_TURN, BEFORE_RIVER, SHOWDOWN = 0, 3, 4, 99
ACTIONS = ("fold", "flop", "check", "turn", "river", "concede")


@dataclass(frozen=True, slots=True)
class SeatPlay:
    seat: int
    status: str  # played | folded | conceded | undecided
    turn_bet: bool = False
    river_bet: bool = False
    irregularities: tuple[Irregularity, ...] = ()
    refused: dict[str, str] = field(default_factory=dict)  # wager_id -> why the rules cannot settle it
    steps: tuple[Step, ...] = ()
    # per step: the community cards on the table when the seat decided (0 before the flop, 3 before the turn, 4
    # before the river, SHOWDOWN at it): where the step stands among the deal's (``engine.in_play_order``)
    streets: tuple[int, ...] = ()


def read_seat(
    seat: int,
    actions: list[Action],
    wagers: list[Wager],
    clauses: DecisionClauses,
    showdown: ShowdownClauses,
) -> SeatPlay:
    """The seat's decisions as the rules allow them, with every disagreement reported."""
    issues: list[Irregularity] = []
    steps: list[Step] = []
    streets: list[int] = []

    def say(street: int, step: Step) -> None:
        steps.append(step)
        streets.append(street)

    # per street: None = no decision recorded, True = bet, False = check
    pre: str | None = None  # "fold" | "flop"
    turn: bool | None = None
    river: bool | None = None
    conceded = False
    state = "start"
    for k, act in enumerate(actions):
        name = act.action
        problem = None
        if state == "start":
            if name == "fold":
                pre, state = "fold", "folded"
                say(PRE_FLOP, Step(f"seat {seat} folds: Ante and Bonus lose", clauses.fold))
            elif name == "flop":
                pre, state = "flop", "turn"
                say(PRE_FLOP, Step(f"seat {seat} bets the Flop", clauses.flop))
            else:
                problem = (clauses.flop, f"the first decision must be fold or flop, got {name!r}")
        elif state in ("turn", "river", "done") and name == "concede":
            if showdown.concede:
                conceded, state = True, "conceded"
                say(SHOWDOWN, Step(f"seat {seat} concedes: every wager loses", showdown.concede))
            else:
                problem = (showdown.compare, "the rule set has no concession: every hand is compared")
        elif state == "turn":
            if name in ("turn", "check"):
                turn, state = name == "turn", "river"
                say(BEFORE_TURN, Step(f"seat {seat} {'bets the Turn' if turn else 'checks the Turn'}", clauses.turn))
            elif name == "river":
                river, state = True, "done"
                say(BEFORE_RIVER, Step(f"seat {seat} bets the River (no Turn decision recorded)", clauses.river))
            else:
                problem = (clauses.turn, f"after the Flop bet the seat may bet the Turn or check, got {name!r}")
        elif state == "river":
            if name in ("river", "check"):
                river, state = name == "river", "done"
                say(BEFORE_RIVER, Step(f"seat {seat} {'bets the River' if river else 'checks the River'}", clauses.river))
            else:
                problem = (clauses.river, f"{name!r} after the Turn decision; the seat may bet the River or check")
        elif state == "done":
            problem = (clauses.river, f"{name!r} after the River decision")
        elif state == "folded":
            problem = (clauses.fold, f"{name!r} after a fold: a folded hand takes no further part")
        else:  # conceded
            problem = (showdown.concede, f"{name!r} after conceding")
        if problem is not None:
            clause, what = problem
            rest = len(actions) - k - 1
            tail = f"; {rest} later action(s) of the seat ignored" if rest else ""
            issues.append(Irregularity("illegal_action", clause, f"seat {seat}: {what}{tail}"))
            break

    by_bet: dict[str, list[Wager]] = {}
    for w in wagers:
        by_bet.setdefault(w.bet, []).append(w)
    refused: dict[str, str] = {}

    def refuse(bet: str, why: str, clause: str) -> None:
        for w in by_bet.get(bet, []):
            refused[w.wager_id] = f"{bet} wager {why}: the rules do not allow it ({clause})"
        if bet in by_bet:
            issues.append(Irregularity("illegal_action", clause, f"seat {seat}: {bet} wager {why}"))

    if pre is None:
        if "flop" in by_bet:
            pre = "flop"
            say(PRE_FLOP, Step(f"seat {seat} played the Flop (no decision recorded; a Flop wager was placed)", clauses.flop))
        else:
            for bet in ("turn", "river"):
                refuse(bet, "without a Flop decision or wager", clauses.flop)
            return SeatPlay(seat, UNDECIDED, irregularities=tuple(issues), refused=refused, steps=tuple(steps),
                            streets=tuple(streets))
    if pre == "fold":
        for bet in ("flop", "turn", "river"):
            refuse(bet, "on a folded hand", clauses.fold)
        return SeatPlay(seat, FOLDED, irregularities=tuple(issues), refused=refused, steps=tuple(steps),
                        streets=tuple(streets))

    if "flop" not in by_bet:
        issues.append(Irregularity("illegal_action", clauses.flop, f"seat {seat}: a Flop decision with no Flop wager"))
    bets = {}
    for bet, decided, clause in (("turn", turn, clauses.turn), ("river", river, clauses.river)):
        if decided is None:
            bets[bet] = bet in by_bet
            if bet in by_bet:
                say(BEFORE_TURN if bet == "turn" else BEFORE_RIVER,
                    Step(f"seat {seat} bet the {bet.title()} (no decision recorded; a {bet.title()} wager was placed)", clause))
        elif decided:
            bets[bet] = True
            if bet not in by_bet:
                issues.append(Irregularity("illegal_action", clause, f"seat {seat}: a {bet.title()} bet with no {bet.title()} wager"))
        else:
            bets[bet] = False
            refuse(bet, f"after a check on the {bet.title()}", clause)
    status = CONCEDED if conceded else PLAYED
    return SeatPlay(
        seat,
        status,
        turn_bet=bets["turn"],
        river_bet=bets["river"],
        irregularities=tuple(issues),
        refused=refused,
        steps=tuple(steps),
        streets=tuple(streets),
    )
