"""Settle one Blackjack round from the device's cards and the table system's decisions.

``settle_round(RoundInput) -> RoundResult``: the scalar reference engine. It replays the round on
the immutable state of ``state.py`` (the initial deal BJ-4.7.2; insurance and even money before the
subsequent deal BJ-4.11, 4.15.3; each seat in turn, hand by hand, BJ-4.13, 4.10.2; the dealer's
draws BJ-4.14) and settles each wager (``settle.py``). Judgements, in docs/interpretations/blackjack.md:

- card flow follows the evidence, money follows the rules: a decision the rules do not allow is
  refused (an ``illegal_action`` irregularity with its clause) and has no effect; a card the table
  dealt for it goes on to the next hand or the dealer, as BJ-7.2 has a card dealt in error do;
- a foreign card voids the round (BJ-7.14.1): every wager nets 0;
- an unreadable card leaves the hands it is in, or the dealer's total, unverifiable: the wagers
  they decide are unsettled; a card the play needs that the log does not have is a card_integrity
  finding and the same;
- the dealer's cards are checked against BJ-4.14 in ``dealer.py``.

The order of ``actions`` across seats does not matter (seats play in seat order, BJ-4.7.2); within
a seat it is the order of play: an action naming another hand than the one in play closes the
hand in play (it stands) and gives the turn to the named hand. The play position of split hands is
the rule set's ``split_play_order`` (BJ-4.10.2, 4.10.3.1 leave it open; ``state.place_split_hand``).
Hands still to play that come before the named hand in that order and that the seat's log does not
name again (a split hand that reached 21 on its second card takes no decision, so nothing is logged
for it) are dealt and complete first; a hand the log names later still waits for its turn there (the
table played out of the rule set's order: the cards follow the log, a step says so).
"""

from __future__ import annotations

from collections.abc import Sequence

from rulebook.blackjack import decisions as D
from rulebook.blackjack.dealer import play_dealer
from rulebook.blackjack.hand import is_ace, is_ten_value, known
from rulebook.blackjack.params import BlackjackParams
from rulebook.blackjack.settle import formed_hand, outcome, settle
from rulebook.blackjack.state import (
    DEALER,
    PLAY,
    BlackjackState,
    advance,
    close_turn,
    deal_initial,
    flag,
    next_pending,
    note,
    open_round,
    start_hand,
)
from rulebook.cards import FOREIGN, NO_CARD, UNREADABLE, card_text
from rulebook.round import Action, Irregularity, RoundInput, RoundResult, Step, Wager
from rulebook.settlement import RuleViolation, Settlement

BETS = ("main", "pair", "insurance")
PLAY_ACTIONS = ("hit", "stand", "double", "split", "surrender")
BEFORE_PLAY = ("insurance", "even_money")


def settle_round(round_input: RoundInput) -> RoundResult:
    params: BlackjackParams = round_input.ruleset.params
    # the decks the device says it loaded (BJ-4.1: one to eight); a count below one says nothing, the rule set's holds
    decks = round_input.logged_decks or params.decks
    if params.dealer_hole_card:
        why = "this engine deals the dealer one card on the initial deal (BJ-4.7.2); a hole-card rule set is not supported"
        return RoundResult({}, {w.wager_id: why for w in round_input.wagers}, (Step(why, "BJ-4.7.2"),), (), False, {})

    voided = _foreign_card(round_input, decks)
    if voided is not None:
        return voided

    wagers, unsettled, early_steps = _usable_wagers(round_input.wagers)
    record = round_input.with_steps
    shoe = []
    for ev in round_input.cards:
        if ev.is_burn:
            if record:
                early_steps.append(Step(f"burn {card_text(ev.code) or '(not read)'}", "BJ-7.1"))
        else:
            shoe.append(ev.code)

    state = open_round(params, shoe, [w for w in wagers if w.bet != "insurance"], round_input.limits.min, record=record)
    if not state.seats:
        for w in wagers:
            unsettled.setdefault(w.wager_id, "no main or pair wager on the table: nothing was dealt (BJ-4.7.2)")
        return RoundResult({}, unsettled, tuple(early_steps) + state.steps, state.irregularities, False, {})
    state = deal_initial(state)
    short_at_deal = state.missing

    by_seat: dict[int, list[Action]] = {}
    for a in round_input.actions:
        if a.action in BEFORE_PLAY:
            state = _before_play(state, a, wagers)
        elif a.action in PLAY_ACTIONS:
            by_seat.setdefault(a.seat, []).append(a)
        else:
            state = flag(state, "illegal_action", "BJ-4.13.1", f"seat {a.seat} hand {a.hand}: unknown decision {a.action!r} ignored")
    for w in wagers:
        if w.bet == "insurance":
            state = _insure(state, w)

    for seat in sorted(by_seat):
        if seat not in state.seats:
            state = flag(state, "illegal_action", "BJ-4.7.2", f"seat {seat} has no wager and no cards: its {len(by_seat[seat])} decision(s) ignored")
    for seat in state.seats:
        played = by_seat.get(seat, [])
        for i, action in enumerate(played):
            state = _play(state, action, frozenset(a.hand for a in played[i:]))
        state = _finish_seat(state, seat)
    state = advance(state)
    state = _unmatched_back_doubles(state)
    if state.missing > short_at_deal:
        state = flag(
            state,
            "card_integrity",
            "BJ-4.13.1",
            f"the decisions need {state.missing - short_at_deal} card(s) more than the device log has (lost events?)",
        )
    if state.phase == DEALER:
        state = play_dealer(state)
    state = _unreadable(state)
    state = _split_pair_checks(state)

    settlements, more_unsettled = settle(state)
    unsettled.update(more_unsettled)
    steps = tuple(early_steps) + state.steps + tuple(
        Step(f"settle {wid}: {s.net:+d} ({s.detail})", s.clause) for wid, s in settlements.items()
    ) if record else ()
    return RoundResult(
        settlements=settlements,
        unsettled=unsettled,
        steps=steps,
        irregularities=state.irregularities,
        void=False,
        outcome=outcome(state),
    )


# -- before anything is dealt ---------------------------------------------------------------------
def _foreign_card(ri: RoundInput, decks: int) -> RoundResult | None:
    """A foreign card, or more copies of a card than the shoe holds, voids the round (BJ-7.14.1)."""
    counts: dict[int, int] = {}
    reason = ""
    for ev in ri.cards:
        if ev.code == FOREIGN:
            reason = "a foreign card was found in the round"
            break
        if ev.code >= 0:
            counts[ev.code] = counts.get(ev.code, 0) + 1
            if counts[ev.code] > decks:
                reason = f"{card_text(ev.code)} appears {counts[ev.code]} times in a {decks}-deck shoe"
                break
    if not reason:
        return None
    detail = f"{reason}: the round is void, every wager returned"
    irr = Irregularity("card_integrity", "BJ-7.14.1", detail, voids_round=True)
    settlements = {w.wager_id: Settlement(0, "BJ-7.14.1", detail) for w in ri.wagers}
    return RoundResult(settlements, {}, (Step(detail, "BJ-7.14.1"),), (irr,), True, {})


def _usable_wagers(wagers: Sequence[Wager]) -> tuple[list[Wager], dict[str, str], list[Step]]:
    ok, unsettled, steps = [], {}, []
    for w in wagers:
        if w.bet not in BETS:
            unsettled[w.wager_id] = f"bet {w.bet!r} is not a blackjack wager (main, pair, insurance)"
        elif not isinstance(w.amount, int) or w.amount <= 0:
            unsettled[w.wager_id] = f"wager amount {w.amount!r} is not a positive whole amount"
        elif w.hand is not None and w.bet != "pair":
            unsettled[w.wager_id] = (f"a {w.bet} wager names hand {w.hand}: only a Pair wager placed when splitting is "
                                     "placed on a hand (BJ-4.10.1.2); the others are placed on the seat")
        else:
            ok.append(w)
    return ok, unsettled, steps


# -- insurance and even money, before the subsequent deal ------------------------------------------
def _insure(state: BlackjackState, w: Wager) -> BlackjackState:
    try:
        return D.insurance(state, w)
    except D.AmountViolation as exc:
        state = flag(state, "illegal_action", exc.clause, exc.reason)
        return D.insurance(state, w, amount=exc.amounts[0][1])
    except RuleViolation as exc:
        state = flag(state, "illegal_action", exc.clause, f"insurance {w.wager_id} refused: {exc.reason}")
        return D.refuse_insurance(state, w, exc.clause, exc.reason)


def _before_play(state: BlackjackState, a: Action, wagers: Sequence[Wager]) -> BlackjackState:
    if a.action == "even_money":
        try:
            return D.even_money(state, a.seat, a.wager_ids)
        except RuleViolation as exc:
            if _even_money_rests_on_unseen_cards(state, a.seat):
                return note(state, f"seat {a.seat}: even money not judged ({exc.reason}): a card it rests on is not "
                                   "in the device log or was not read", "BJ-4.15.3")
            return flag(state, "illegal_action", exc.clause, f"seat {a.seat}: even money refused: {exc.reason}")
    # an insurance action records a decision whose money is the insurance wager (settled from `wagers`)
    has_wager = any(w.bet == "insurance" and w.seat == a.seat for w in wagers)
    if not has_wager:
        return flag(state, "illegal_action", "BJ-4.11.1", f"seat {a.seat}: insurance decision recorded without an insurance wager")
    return note(state, f"seat {a.seat} takes insurance" + (f" ({a.amount})" if a.amount is not None else ""), "BJ-4.11.1")


def _even_money_rests_on_unseen_cards(state: BlackjackState, seat: int) -> bool:
    """Whether even money's conditions (BJ-4.15.3: the seat's blackjack, the dealer's ace) rest on a card the device
    log lacks (a short initial deal) or could not read: the decision is then neither legal nor illegal, and the
    round's card_integrity finding says why. Refusing it called a blackjack's even money illegal because the
    blackjack's second card was the one lost."""
    hand = state.hand(seat, 1)
    if hand is None:
        return False
    first_two = hand.cards[:2]
    if len(first_two) < 2 or not known(first_two):
        # unseen unless the cards that were read already rule a blackjack out (a 5, or two tens)
        seen = [c for c in first_two if c >= 0]
        return len(seen) < 2 and all(is_ace(c) or is_ten_value(c) for c in seen)
    return hand.is_blackjack and not known(state.dealer[:1])


# -- the players' decisions -----------------------------------------------------------------------
def _focus(state: BlackjackState, seat: int, number: int, later: frozenset[int] = frozenset()) -> BlackjackState:
    """Give the turn to (seat, number) if it is a hand still to play: the hand in play stands. ``later``: the hands of
    the seat its log names from this action on; a hand still to play before it in the rule set's order of play
    (``split_play_order``) that the log does not name again plays in its place first (the module docstring)."""
    if state.turn == (seat, number) or state.phase != PLAY:
        return state
    hand = state.hand(seat, number)
    if hand is None or hand.done:
        return state
    if state.turn is not None:
        state = close_turn(state)
    # hands of earlier seats are complete before this seat plays (seat order, BJ-4.7.2), and so are this seat's hands
    # that come first in play position and that the log does not name again (a resplit's new hand that reached 21 on
    # its second card takes no decision: nothing is logged for it, BJ-4.10.2, 4.13.2)
    while (nxt := next_pending(state)) is not None and nxt != (seat, number) and (
            nxt[0] < seat or (nxt[0] == seat and nxt[1] not in later)):
        state = start_hand(state, *nxt)
        if state.turn is not None:
            state = close_turn(state)
    if state.record and nxt is not None and nxt[0] == seat and nxt != (seat, number):
        state = note(state, f"seat {seat} hand {number} plays before hand {nxt[1]}, as the log has it: out of the rule "
                            f"set's order of split hands ({state.params.split_play_order})", "BJ-4.10.2")
    if not state.hand(seat, number).done:
        state = start_hand(state, seat, number)
    return state


def _play(state: BlackjackState, a: Action, later: frozenset[int] = frozenset()) -> BlackjackState:
    seat, number = a.seat, a.hand
    state = _focus(state, seat, number, later)
    hand = state.hand(seat, number)
    if a.action == "stand" and hand is not None and hand.done:
        return note(state, f"{hand.label()}: stand recorded on a complete hand ({hand.done})", "BJ-4.13.2")
    try:
        if a.action == "hit":
            return D.hit(state, seat, number)
        if a.action == "stand":
            return D.stand(state, seat, number)
        if a.action == "surrender":
            return D.surrender(state, seat, number, a.wager_ids)
        if a.action == "double":
            try:
                return D.double(state, seat, number, a.amount, a.wager_ids)
            except D.AmountViolation as exc:
                state = flag(state, "illegal_action", exc.clause, exc.reason)
                return D.apply_double(state, state.hand(seat, number), exc.amounts, exc.deals)
        if a.action == "split":
            try:
                return D.split(state, seat, number, a.amount, a.wager_ids)
            except D.AmountViolation as exc:
                state = flag(state, "illegal_action", exc.clause, exc.reason)
                return D.apply_split(state, state.hand(seat, number), exc.amounts)
    except RuleViolation as exc:
        why = exc.reason if exc.reason.endswith("refused") else f"{a.action} refused: {exc.reason}"
        return flag(state, "illegal_action", exc.clause, f"seat {seat} hand {number}: {why}")
    raise AssertionError(a.action)  # PLAY_ACTIONS are all handled above


def _finish_seat(state: BlackjackState, seat: int) -> BlackjackState:
    """Hands of the seat with no more decisions recorded stand; split hands get their cards (BJ-4.10.2)."""
    if state.phase != PLAY:
        return state
    while True:
        if state.turn is not None:
            if state.turn[0] > seat:
                return state
            state = close_turn(state)
            continue
        nxt = next_pending(state)
        if nxt is None or nxt[0] > seat:
            return state
        state = start_hand(state, *nxt)


def _unmatched_back_doubles(state: BlackjackState) -> BlackjackState:
    for h in state.hands:
        if h.pending_doubles and not h.doubled:
            names = ", ".join(w for w, _ in h.pending_doubles)
            state = flag(state, "illegal_action", "BJ-4.9.4", f"{h.label()}: {names} doubled but the controlling player did not: not in play")
    return state


def _split_pair_checks(state: BlackjackState) -> BlackjackState:
    """A Pair wager placed when splitting needs a split of identical cards that formed its hand (BJ-4.10.1.2):
    one that names a hand no split formed, or a hand formed from cards that are not identical, is reported."""
    for w in state.split_pairs:
        f = formed_hand(state, w.seat, w.hand)
        if f is None:
            state = flag(state, "illegal_action", "BJ-4.10.1.2",
                         f"pair wager {w.wager_id} names seat {w.seat} hand {w.hand}, which no split formed: it cannot be settled")
        elif f.identical is False:
            state = flag(state, "illegal_action", "BJ-4.10.1.2",
                         f"pair wager {w.wager_id} on seat {w.seat} hand {w.hand}: the split cards were not identical, "
                         "so no Pair wager may be placed: returned")
    return state


def _unreadable(state: BlackjackState) -> BlackjackState:
    """One card_integrity finding per unreadable card the round used (the wagers it decides are unsettled)."""
    n = sum(1 for c in state.shoe[: state.taken] if c in (UNREADABLE, NO_CARD))
    if n:
        state = flag(state, "card_integrity", "BJ-4.3", f"{n} card(s) of the round could not be read: the hands holding them cannot be verified")
    return state
