"""The players' decisions, each as a triad: ``verify_x`` (raises RuleViolation with the clause),
``can_x`` (a bool), ``x`` (verifies, then returns the new state; the last step says what it did).

Decisions: hit, stand, double, split, surrender (BJ-4.9, 4.10, 4.12, 4.13), and the two taken
before the subsequent deal, insurance and even money (BJ-4.11, 4.15.3).

Who a decision applies to: by default the controlling wager of the hand (the first main wager
placed on the seat, formats); ``wager_ids`` names the wagers on the seat it applies to, which is
how a back bettor doubles too (BJ-4.9.4), surrenders (BJ-4.12.2), or puts up a wager for a split
hand (BJ-4.10.7.1).

An amount the rules do not allow (a double above the original wager, insurance above half of it,
a split for a different amount) raises :class:`AmountViolation`, which carries the amounts the
rules would have accepted so the engine can settle on them and report the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from rulebook.blackjack.hand import identical_for_pair, is_ace, same_point_value
from rulebook.blackjack.state import (
    DONE_CLAUSE,
    EVEN_MONEY,
    LIVE,
    PLAY,
    SURRENDERED,
    BlackjackState,
    Hand,
    InsuranceBet,
    Stake,
    after_card,
    describe_total,
    hand_formed,
    note,
    place_split_hand,
    put_hand,
    second_card_dealt,
    show,
    take,
)
from rulebook.round import Wager
from rulebook.settlement import RuleViolation

DECISIONS = ("hit", "stand", "double", "split", "surrender")


class AmountViolation(RuleViolation):
    """The decision is allowed but not for that amount. ``amounts`` is ``(wager_id, amount)`` per
    wager as the engine should settle it (capped where the rule caps it, as placed otherwise)."""

    def __init__(self, message: str, clause: str, amounts: tuple[tuple[str, int], ...], deals: bool = True):
        super().__init__(message, clause)
        self.amounts = amounts
        self.deals = deals  # for a double: the controlling player doubles, so the hand gets its card


# -- shared checks ---------------------------------------------------------------------------
def _hand_in_turn(state: BlackjackState, seat: int, number: int) -> Hand:
    if state.phase != PLAY:
        raise RuleViolation("the players' decisions are over: the dealer's hand is being completed", "BJ-4.14.1")
    hand = state.hand(seat, number)
    if hand is None:
        if not state.seat_hands(seat):
            raise RuleViolation(f"seat {seat} has no wager and no cards", "BJ-4.7.2")
        raise RuleViolation(f"seat {seat} has no hand {number}", "BJ-4.10.4")
    if hand.done:
        raise RuleViolation(f"{hand.label()} takes no more decisions ({hand.done})", DONE_CLAUSE[hand.done])
    if state.turn != hand.key:
        raise RuleViolation(f"{hand.label()} is not the hand in play", "BJ-4.13.1")
    return hand


def _named_stakes(hand: Hand, wager_ids: Sequence[str] | None, clause: str) -> tuple[Stake, ...]:
    """The live stakes an action applies to: those named, or the controlling one."""
    if not wager_ids:
        ctrl = hand.controlling()
        if ctrl is None:
            raise RuleViolation(f"{hand.label()} has no wager in play", clause)
        return (ctrl,)
    by_id = {s.wager_id: s for s in hand.stakes}
    out = []
    for wid in dict.fromkeys(wager_ids):
        s = by_id.get(wid)
        if s is None:
            raise RuleViolation(f"wager {wid} is not on {hand.label()}", clause)
        if s.status != LIVE:
            raise RuleViolation(f"wager {wid} on {hand.label()} is no longer in play ({s.status})", clause)
        out.append(s)
    return tuple(out)


def _dealer_up_is_ace(state: BlackjackState) -> bool | None:
    up = state.up_card
    if up is None or up < 0:
        return None
    return is_ace(up)


# -- hit ---------------------------------------------------------------------------------------
def verify_hit(state: BlackjackState, seat: int, number: int) -> Hand:
    """Additional cards until the player stands or reaches or exceeds 21 (BJ-4.13.2)."""
    return _hand_in_turn(state, seat, number)


def can_hit(state: BlackjackState, seat: int, number: int) -> bool:
    return _can(verify_hit, state, seat, number)


def hit(state: BlackjackState, seat: int, number: int) -> BlackjackState:
    hand = verify_hit(state, seat, number)
    state, c = take(state)
    hand = hand._replace(cards=hand.cards + (c,), decided=True)
    state = note(state, f"{hand.label()} hits: {show(c)}, {describe_total(hand.cards)}", "BJ-4.13.1")
    return after_card(state, hand)


# -- stand -------------------------------------------------------------------------------------
def verify_stand(state: BlackjackState, seat: int, number: int) -> Hand:
    return _hand_in_turn(state, seat, number)


def can_stand(state: BlackjackState, seat: int, number: int) -> bool:
    return _can(verify_stand, state, seat, number)


def stand(state: BlackjackState, seat: int, number: int) -> BlackjackState:
    hand = verify_stand(state, seat, number)
    state = put_hand(state, hand._replace(done="stand"), turn=None)
    return note(state, f"{hand.label()} stands on {describe_total(hand.cards)}", "BJ-4.13.2")


# -- double ------------------------------------------------------------------------------------
def _double_amounts(
    state: BlackjackState, stakes: tuple[Stake, ...], amount: int | None
) -> tuple[tuple[tuple[str, int], ...], str | None, str | None]:
    """Each named wager's doubling amount, and (message, clause) if an amount breaks BJ-4.9.1.

    ``amount`` null: each doubles for its full stake. Equal to the stakes' sum: each in full.
    Otherwise it is each wager's amount, capped at that wager's stake ("equal to or less than their
    original wager"); an amount under the table minimum is reported and settled as placed."""
    if amount is None or (len(stakes) > 1 and amount == sum(s.amount for s in stakes)):
        return tuple((s.wager_id, s.amount) for s in stakes), None, None
    if amount <= 0:
        raise RuleViolation(f"a double of {amount} is not a wager", "BJ-4.9.1")
    out = []
    problem = None
    for s in stakes:
        a = amount
        if a > s.amount:
            problem = f"double of {amount} on wager {s.wager_id} exceeds its original wager {s.amount}: {s.amount} accepted"
            a = s.amount
        elif state.table_min is not None and a < state.table_min and a < s.amount:
            problem = f"double of {amount} on wager {s.wager_id} is below the table minimum {state.table_min}"
        out.append((s.wager_id, a))
    return tuple(out), problem, ("BJ-4.9.1" if problem else None)


def verify_double(
    state: BlackjackState, seat: int, number: int, amount: int | None = None, wager_ids: Sequence[str] | None = None
) -> tuple[Hand, tuple[tuple[str, int], ...], bool]:
    """On the first two cards of a hand, split hands included, not a blackjack (BJ-4.9.1, 4.9.1.1,
    4.9.2); a back bettor may double with the controlling player (BJ-4.9.4).

    Returns the hand, the amounts per wager, and whether the controlling player doubles (then the
    hand receives its one card) or only back bettors join a double (no card)."""
    hand = state.hand(seat, number)
    p = state.params
    if hand is not None and wager_ids and state.phase == PLAY:
        ctrl = hand.controlling()
        if ctrl is None or ctrl.wager_id not in wager_ids:
            # back bettors only: they join the controlling player's double (BJ-4.9.4)
            stakes = _named_stakes(hand, wager_ids, "BJ-4.9.4")
            if any(s.doubled for s in stakes):
                raise RuleViolation(f"a wager on {hand.label()} has already doubled", "BJ-4.9.1")
            if not hand.doubled:
                if state.turn != hand.key or hand.done:
                    raise RuleViolation(f"back bettors on {hand.label()} may double only when the controlling player does", "BJ-4.9.4")
                _double_allowed(state, hand)
            amounts, problem, clause = _double_amounts(state, stakes, amount)
            if problem:
                raise AmountViolation(problem, clause or "BJ-4.9.1", amounts, deals=False)
            return hand, amounts, False
    if hand is not None and hand.is_blackjack and not p.blackjack_may_double:
        raise RuleViolation(f"{hand.label()} is a blackjack and may not double", "BJ-4.9.2")
    hand = _hand_in_turn(state, seat, number)
    _double_allowed(state, hand)
    stakes = _named_stakes(hand, wager_ids, "BJ-4.9.4")
    amounts, problem, clause = _double_amounts(state, stakes, amount)
    if not p.double_for_less:
        short = [(w, a) for (w, a), s in zip(amounts, stakes) if a < s.amount]
        if short:
            raise AmountViolation(
                f"this rule set doubles for the full wager only; {short[0][1]} put up: settled as placed",
                "BJ-4.9.1",
                amounts,
            )
    if problem:
        raise AmountViolation(problem, clause or "BJ-4.9.1", amounts)
    return hand, amounts, True


def _double_allowed(state: BlackjackState, hand: Hand) -> None:
    p = state.params
    if hand.is_blackjack and not p.blackjack_may_double:
        raise RuleViolation(f"{hand.label()} is a blackjack and may not double", "BJ-4.9.2")
    if hand.split_aces:
        raise RuleViolation(f"{hand.label()} is a split ace: one card only", "BJ-4.10.4.1")
    if hand.from_split and not p.double_after_split:
        raise RuleViolation(f"{hand.label()} was formed by a split: this rule set does not double after splitting", "BJ-4.9.1.1")
    if len(hand.cards) != 2 or hand.decided:
        raise RuleViolation(f"{hand.label()} may double only on its first two cards", "BJ-4.9.1")


def can_double(state: BlackjackState, seat: int, number: int, amount: int | None = None, wager_ids: Sequence[str] | None = None) -> bool:
    return _can(verify_double, state, seat, number, amount, wager_ids)


def double(
    state: BlackjackState, seat: int, number: int, amount: int | None = None, wager_ids: Sequence[str] | None = None
) -> BlackjackState:
    hand, amounts, deals = verify_double(state, seat, number, amount, wager_ids)
    return apply_double(state, hand, amounts, deals)


def apply_double(state: BlackjackState, hand: Hand, amounts: tuple[tuple[str, int], ...], deals: bool) -> BlackjackState:
    """Put the doubling amounts on the hand; when the controlling player doubles, one card (BJ-4.9.1.2)."""
    if not deals and not hand.doubled:  # back bettors waiting for the controlling player (BJ-4.9.4)
        state = put_hand(state, hand._replace(pending_doubles=hand.pending_doubles + amounts))
        names = ", ".join(f"{w} {a}" for w, a in amounts)
        return note(state, f"{hand.label()}: back bettor(s) double with the controlling player: {names}", "BJ-4.9.4")
    if deals:
        amounts = amounts + tuple(pd for pd in hand.pending_doubles if pd[0] not in dict(amounts))
    add = dict(amounts)
    stakes = tuple(s._replace(doubled=add[s.wager_id]) if s.wager_id in add else s for s in hand.stakes)
    names = ", ".join(f"{w} {a}" for w, a in amounts)
    if not deals:
        state = put_hand(state, hand._replace(stakes=stakes))
        return note(state, f"{hand.label()}: back bettor(s) join the double before the card: {names}", "BJ-4.9.4")
    state, c = take(state)
    hand = hand._replace(stakes=stakes, cards=hand.cards + (c,), doubled=True, decided=True, pending_doubles=())
    state = note(state, f"{hand.label()} doubles ({names}): one card, {show(c)}, {describe_total(hand.cards)}", "BJ-4.9.1.2")
    if hand.busted:
        return after_card(state, hand)
    state = put_hand(state, hand._replace(done="double"), turn=None)
    return state


# -- split -------------------------------------------------------------------------------------
def verify_split(
    state: BlackjackState, seat: int, number: int, amount: int | None = None, wager_ids: Sequence[str] | None = None
) -> tuple[Hand, tuple[tuple[str, int], ...]]:
    """Two cards identical in point value, up to four hands, aces once (BJ-4.10.1, 4.10.4, 4.10.4.1).

    The controlling player splits; other wagers named in ``wager_ids`` put up an equal wager on the
    hand formed (BJ-4.10.7.1), the rest stay on the first hand (BJ-4.10.7.2). Returns the amounts
    put up on the new hand, by wager."""
    hand = _hand_in_turn(state, seat, number)
    p = state.params
    if len(hand.cards) != 2 or hand.decided:
        raise RuleViolation(f"{hand.label()} may split only its first two cards", "BJ-4.10.1")
    a, b = hand.cards
    if a >= 0 and b >= 0 and not same_point_value(a, b):
        raise RuleViolation(f"{show(a)} and {show(b)} are not identical in point value", "BJ-4.10.1")
    if hand.is_blackjack:
        raise RuleViolation(f"{hand.label()} is a blackjack", "BJ-4.10.1")
    if len(state.seat_hands(seat)) >= p.max_hands:
        raise RuleViolation(f"seat {seat} already has {p.max_hands} hands, the most a split may form", "BJ-4.10.4")
    if hand.from_split and is_ace(a) and not p.resplit_aces:
        raise RuleViolation("aces may be split once only", "BJ-4.10.4.1")
    ctrl = hand.controlling()
    if ctrl is None:
        raise RuleViolation(f"{hand.label()} has no wager in play", "BJ-4.10.1")
    others = [w for w in (wager_ids or ()) if w != ctrl.wager_id]
    backers = _named_stakes(hand, others, "BJ-4.10.7.1") if others else ()
    put_up = [(ctrl.wager_id, ctrl.amount if amount is None else amount)]
    put_up += [(s.wager_id, s.amount) for s in backers]
    put_up_t = tuple(put_up)
    if amount is not None and amount != ctrl.amount:
        settled = min(amount, ctrl.amount)
        raise AmountViolation(
            f"a split hand's wager must equal the original wager {ctrl.amount}; {amount} put up"
            + (f", {settled} accepted" if amount > ctrl.amount else ""),
            "BJ-4.10.1.1",
            ((ctrl.wager_id, settled),) + put_up_t[1:],
        )
    return hand, put_up_t


def can_split(state: BlackjackState, seat: int, number: int, amount: int | None = None, wager_ids: Sequence[str] | None = None) -> bool:
    return _can(verify_split, state, seat, number, amount, wager_ids)


def split(
    state: BlackjackState, seat: int, number: int, amount: int | None = None, wager_ids: Sequence[str] | None = None
) -> BlackjackState:
    hand, put_up = verify_split(state, seat, number, amount, wager_ids)
    return apply_split(state, hand, put_up)


def apply_split(state: BlackjackState, hand: Hand, put_up: tuple[tuple[str, int], ...]) -> BlackjackState:
    """Form the new hand in its play position (the rule set's ``split_play_order``: right after this one, or after
    the seat's last hand); this hand takes its second card now (BJ-4.10.2)."""
    first, second = hand.cards
    # one card to each split ace (BJ-4.10.4.1), unless a rule set says otherwise
    aces = first >= 0 and is_ace(first) and state.params.split_aces_one_card
    new_number = max(h.number for h in state.seat_hands(hand.seat)) + 1
    new_hand = Hand(
        seat=hand.seat,
        number=new_number,
        cards=(second,),
        stakes=tuple(Stake(w, a, original=False) for w, a in put_up),
        from_split=True,
        split_aces=aces,
    )
    kept = hand._replace(cards=(first,), from_split=True, split_aces=aces, pending_doubles=())
    state = state._replace(hands=place_split_hand(state.hands, kept, new_hand, state.params.split_play_order))
    # the two hands so formed, for a Pair wager placed when splitting (BJ-4.10.1.2)
    identical = None if first < 0 or second < 0 else identical_for_pair(first, second, state.params.pair_by)
    state = hand_formed(state, hand.seat, hand.number, first, identical)
    state = hand_formed(state, hand.seat, new_number, second, identical)
    names = ", ".join(f"{w} {a}" for w, a in put_up)
    state = note(
        state,
        f"{hand.label()} splits {show(first)} {show(second)}: hand {new_number} formed ({names} put up)",
        "BJ-4.10.1",
    )
    state, c = take(state)
    kept = kept._replace(cards=(first, c))
    state = second_card_dealt(state, kept)
    state = note(state, f"{kept.label()} second card: {show(c)}, {describe_total(kept.cards)}", "BJ-4.10.2")
    return after_card(state, kept)


# -- surrender ---------------------------------------------------------------------------------
def verify_surrender(
    state: BlackjackState, seat: int, number: int, wager_ids: Sequence[str] | None = None
) -> tuple[Hand, tuple[Stake, ...]]:
    """Half the original wager, before the subsequent deal, not against a dealer ace (BJ-4.12.1,
    4.12.1.1); any player on the area may (BJ-4.12.2)."""
    p = state.params
    hand = _hand_in_turn(state, seat, number)
    if not p.surrender_allowed:
        raise RuleViolation("this rule set has no surrender", "BJ-4.12.1")
    if _dealer_up_is_ace(state) and not p.surrender_against_ace:
        raise RuleViolation("surrender against a dealer ace refused", "BJ-4.12.1.1")
    if hand.from_split or hand.decided or len(hand.cards) != 2:
        raise RuleViolation(f"{hand.label()}: surrender only on the initial two cards, before the subsequent deal", "BJ-4.12.1")
    if hand.is_blackjack:
        raise RuleViolation(f"{hand.label()} is a blackjack, settled by BJ-4.15.2-4.15.4", "BJ-4.15.2")
    return hand, _named_stakes(hand, wager_ids, "BJ-4.12.2")


def can_surrender(state: BlackjackState, seat: int, number: int, wager_ids: Sequence[str] | None = None) -> bool:
    return _can(verify_surrender, state, seat, number, wager_ids)


def surrender(state: BlackjackState, seat: int, number: int, wager_ids: Sequence[str] | None = None) -> BlackjackState:
    hand, stakes = verify_surrender(state, seat, number, wager_ids)
    names = {s.wager_id for s in stakes}
    hand = hand._replace(stakes=tuple(s._replace(status=SURRENDERED) if s.wager_id in names else s for s in hand.stakes))
    state = note(state, f"{hand.label()}: {', '.join(sorted(names))} surrender(s) half", "BJ-4.12.1")
    ctrl = hand.controlling()
    if ctrl is None:
        state = put_hand(state, hand._replace(done="surrender"), turn=None)
        return state
    state = put_hand(state, hand)
    return note(state, f"{hand.label()}: wager {ctrl.wager_id} now makes the decisions", "BJ-4.12.3")


# -- insurance ---------------------------------------------------------------------------------
def insured_wager(state: BlackjackState, wager: Wager) -> Stake | None:
    """The main wager an insurance wager insures: the same player's on that seat, else the controlling one."""
    hand = state.hand(wager.seat, 1)
    if hand is None or not hand.stakes:
        return None
    if wager.player_id is not None:
        players = dict(state.main_players)
        for s in hand.stakes:
            if players.get(s.wager_id) == wager.player_id:
                return s
    return hand.stakes[0]


def verify_insurance(state: BlackjackState, wager: Wager, covers: Stake | None = None) -> int:
    """Up to half the initial wager, when the dealer's first card is an ace, before the subsequent
    deal (BJ-4.11.1, 4.11.2). ``covers``: the main wager insured (default: ``insured_wager``).
    Returns the amount in play."""
    if covers is None:
        covers = insured_wager(state, wager)
    if state.phase != PLAY:
        raise RuleViolation("insurance is placed after the initial deal", "BJ-4.11.2")
    if state.subsequent_deal_started:
        raise RuleViolation("insurance is placed before the subsequent deal", "BJ-4.11.2")
    if _dealer_up_is_ace(state) is False:
        raise RuleViolation(f"insurance is offered only when the dealer's first card is an ace, not {show(state.dealer[0])}", "BJ-4.11.1")
    if covers is None:
        raise RuleViolation(f"seat {wager.seat} has no initial wager to insure", "BJ-4.11.1")
    if wager.amount <= 0:
        raise RuleViolation(f"insurance of {wager.amount} is not a wager", "BJ-4.11.1")
    frac = state.params.insurance_max_fraction
    cap = covers.amount * frac.num // frac.den
    if wager.amount > cap:
        raise AmountViolation(
            f"insurance {wager.wager_id} of {wager.amount} exceeds {frac} of the initial wager {covers.amount}: {cap} accepted",
            "BJ-4.11.1",
            ((wager.wager_id, cap),),
        )
    return wager.amount


def can_insurance(state: BlackjackState, wager: Wager) -> bool:
    return _can(verify_insurance, state, wager)


can_insure = can_insurance


def insurance(state: BlackjackState, wager: Wager, amount: int | None = None) -> BlackjackState:
    """Accept an insurance wager (``amount`` overrides the wager's, e.g. capped by the engine)."""
    covers = insured_wager(state, wager)
    if amount is None:
        amount = verify_insurance(state, wager, covers)
    bet = InsuranceBet(wager.wager_id, wager.seat, amount, covers.wager_id if covers else None)
    state = state._replace(insurance=state.insurance + (bet,))
    return note(state, f"insurance {wager.wager_id}: {amount} on seat {wager.seat} (insures {bet.covers})", "BJ-4.11.1")


def refuse_insurance(state: BlackjackState, wager: Wager, clause: str, reason: str) -> BlackjackState:
    bet = InsuranceBet(wager.wager_id, wager.seat, 0, None, accepted=False, clause=clause, reason=reason)
    return state._replace(insurance=state.insurance + (bet,))


# -- even money --------------------------------------------------------------------------------
def verify_even_money(state: BlackjackState, seat: int, wager_ids: Sequence[str] | None = None) -> tuple[Hand, tuple[Stake, ...]]:
    """A blackjack against a dealer ace may be paid even money at once (BJ-4.15.3, 4.15.4.1)."""
    if state.phase != PLAY:
        raise RuleViolation("even money is offered before the dealer completes the hand", "BJ-4.15.3")
    hand = state.hand(seat, 1)
    if hand is None:
        raise RuleViolation(f"seat {seat} has no hand", "BJ-4.15.3")
    if not hand.is_blackjack:
        raise RuleViolation(f"{hand.label()} is not a blackjack: no even money", "BJ-4.15.3")
    if not _dealer_up_is_ace(state):
        raise RuleViolation("even money is offered only against a dealer ace", "BJ-4.15.3")
    return hand, _named_stakes(hand, wager_ids, "BJ-4.15.3")


def can_even_money(state: BlackjackState, seat: int, wager_ids: Sequence[str] | None = None) -> bool:
    return _can(verify_even_money, state, seat, wager_ids)


def even_money(state: BlackjackState, seat: int, wager_ids: Sequence[str] | None = None) -> BlackjackState:
    hand, stakes = verify_even_money(state, seat, wager_ids)
    names = {s.wager_id for s in stakes}
    hand = hand._replace(stakes=tuple(s._replace(status=EVEN_MONEY) if s.wager_id in names else s for s in hand.stakes))
    state = put_hand(state, hand)
    return note(state, f"{hand.label()}: {', '.join(sorted(names))} take(s) even money", "BJ-4.15.3")


# -- what a player may do now --------------------------------------------------------------------
def allowed_decisions(state: BlackjackState) -> set[str]:
    """The decisions open to the hand in turn (for a strategy to choose from)."""
    if state.turn is None:
        return set()
    seat, number = state.turn
    out = set()
    if can_hit(state, seat, number):
        out.update(("hit", "stand"))
    if can_double(state, seat, number):
        out.add("double")
    if can_split(state, seat, number):
        out.add("split")
    if can_surrender(state, seat, number):
        out.add("surrender")
    return out


def apply_decision(state: BlackjackState, decision: str) -> BlackjackState:
    """Apply one of DECISIONS to the hand in turn (the controlling wager, full amounts)."""
    seat, number = state.turn  # type: ignore[misc]
    return {"hit": hit, "stand": stand, "double": double, "split": split, "surrender": surrender}[decision](state, seat, number)


def _can(verify, *args) -> bool:
    try:
        verify(*args)
    except RuleViolation:
        return False
    return True
