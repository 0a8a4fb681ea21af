"""The dealer's hand after the players' (BJ-4.14): the cards left in the round are the dealer's
draws, checked against the drawing rule.

No hole card: the dealer's second card is drawn only now (BJ-4.7.2, 4.14.1). The dealer draws on
16 or less and stands on every 17, soft or hard (BJ-4.14.2, 4.14.3). "As necessary" (4.14.1): when
no hand is left that the dealer's total decides, the dealer may stop early: a blackjack against a
dealer ten or ace and an insurance wager need only the second card; nothing at all when every hand
is bust, surrendered or paid. The device's cards are accepted when they are a prefix of the
4.14 draw that covers what the wagers need; then:

- cards beyond a total of 17 or more were dealt in error to the completed hand: they are removed
  from play (BJ-7.3) and the dealer hit a 17+ (drawing_rule_violation, BJ-4.14.3);
- the dealer stopping under 17 while a hand needs the total is a drawing_rule_violation (BJ-4.14.2),
  and the wagers that depend on it cannot be settled from the cards;
- an unread card in the dealer's hand hides the total: the wagers it decides are unsettled.
"""

from __future__ import annotations


from rulebook.blackjack.hand import hand_total, is_ace, is_ten_value, known
from rulebook.blackjack.state import (
    DEALER,
    DEALER_COMPLETE,
    DEALER_SHORT,
    DEALER_UNKNOWN,
    DONE,
    LIVE,
    BlackjackState,
    describe_total,
    flag,
    note,
    show,
)
from rulebook.cards import card_text
from rulebook.settlement import RuleViolation


def dealer_stands(cards: tuple[int, ...], hits_soft_17: bool) -> bool:
    """17 or more, soft or hard, stands (BJ-4.14.3); a rule set that hits soft 17 draws on it."""
    total, soft = hand_total(cards)
    return total >= 17 and not (hits_soft_17 and soft and total == 17)


def dealer_needs(state: BlackjackState) -> tuple[bool, bool]:
    """``(total, second_card)``: does any wager still in play need the dealer's final total, or at
    least the dealer's second card (blackjack against a ten or ace, BJ-4.15.4; insurance, BJ-4.14.4)?
    An insurance wager on a seat holding a blackjack is void (BJ-4.15.3) and needs nothing: a blackjack
    paid even money with such a wager beside it leaves the dealer no card to draw."""
    up = state.up_card
    up_ten_or_ace = up is None or up < 0 or is_ace(up) or is_ten_value(up)
    need_total = False
    need_second = any(b.accepted and not state.seat_holds_blackjack(b.seat) for b in state.insurance)
    for h in state.hands:
        if not any(s.status == LIVE for s in h.stakes) or h.busted:
            continue
        if h.is_blackjack:
            need_second = need_second or up_ten_or_ace
        else:
            need_total = True
    return need_total, need_second or need_total


def play_dealer(state: BlackjackState) -> BlackjackState:
    """Complete the dealer's hand from the cards left in the round (BJ-4.14)."""
    if state.phase != DEALER:
        raise RuleViolation("the dealer draws after every player's hand is complete", "BJ-4.14.1")
    need_total, need_second = dealer_needs(state)
    remaining = state.shoe[state.taken :]
    dealer = state.dealer
    if state.missing or not dealer:
        # the players' cards already ran past the end of the log: the dealer's are not in it
        status = DEALER_UNKNOWN if need_second else DEALER_COMPLETE
        state = state._replace(phase=DONE, dealer_status=status)
        return note(state, "the dealer's draws are not in the device log", "BJ-4.14.1")
    used = 0
    status = ""
    while True:
        if not known(dealer):
            # the total is hidden from here on: every card left is taken as the dealer's
            dealer = dealer + remaining[used:]
            for c in remaining[used:]:
                state = note(state, f"dealer draws {show(c)}", "BJ-4.14.2")
            used = len(remaining)
            status = DEALER_UNKNOWN
            break
        if dealer_stands(dealer, state.params.dealer_hits_soft_17):
            total = hand_total(dealer)[0]
            what = f"dealer is bust on {total}" if total > 21 else f"dealer stands on {describe_total(dealer)}"
            state = note(state, what, "BJ-4.14.2" if total > 21 else "BJ-4.14.3")
            status = DEALER_COMPLETE
            break
        if used == len(remaining):
            break
        c = remaining[used]
        used += 1
        dealer = dealer + (c,)
        state = note(state, f"dealer draws {show(c)}: {describe_total(dealer)}", "BJ-4.14.2")
    extra = remaining[used:]
    state = state._replace(dealer=dealer, taken=state.taken + used, extra=extra)
    if extra:
        before = describe_total(dealer)
        state = flag(
            state,
            "drawing_rule_violation",
            "BJ-4.14.3",
            f"dealer drew {' '.join(card_text(c) if c >= 0 else '??' for c in extra)} after standing on {before}: "
            f"removed from play (BJ-7.3)",
        )
    if not status:
        drawn = len(dealer) - 1
        total = hand_total(dealer)[0]
        if need_total:
            status = DEALER_SHORT
            state = flag(
                state,
                "drawing_rule_violation",
                "BJ-4.14.2",
                f"dealer's hand ends on {total} with {drawn} card(s) drawn; the dealer must draw to 17 "
                f"(or the device log lost the dealer's cards)",
            )
        elif need_second and drawn == 0:
            status = DEALER_SHORT
            state = flag(
                state,
                "drawing_rule_violation",
                "BJ-4.14.1",
                "the dealer drew no second card, which a blackjack or an insurance wager still awaited",
            )
        else:
            status = DEALER_COMPLETE
            state = note(state, f"no hand needs the dealer's total: the dealer stops on {total}", "BJ-4.14.1")
    return state._replace(phase=DONE, dealer_status=status)


def deal_dealer(state: BlackjackState) -> BlackjackState:
    """Draw the dealer's cards from the shoe as BJ-4.14 requires, no more (for a round being played,
    e.g. by the simulator; ``play_dealer`` is for checking a round's recorded cards)."""
    need_total, need_second = dealer_needs(state)
    want = 0
    dealer = state.dealer
    while need_second:
        if (known(dealer) and dealer_stands(dealer, state.params.dealer_hits_soft_17)) or (not need_total and len(dealer) >= 2):
            break
        if state.taken + want >= len(state.shoe):
            break
        dealer = dealer + (state.shoe[state.taken + want],)
        want += 1
    return play_dealer(state._replace(shoe=state.shoe[: state.taken + want]))
