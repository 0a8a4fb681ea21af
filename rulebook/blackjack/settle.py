"""Settle every wager of a completed round (BJ-4.15, 4.16, 5, 6): a pure function of the final state.

A ``main`` wager's net is the total over every hand it has money on (formats): the hand it was
placed on, the hands it put up a wager for when splitting, and what it added by doubling. Each
hand's part is settled on its own and carries its clause; the wager's clause lists them.

Where the cards cannot decide a part (an unread card, a dealer's hand the device log does not
complete), the whole wager goes to ``unsettled`` with the reason: its total is not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from rulebook.blackjack.hand import (
    hand_total,
    identical_for_pair,
    is_ace,
    is_ten_value,
    is_two_card_21,
    known,
    same_card,
    same_face,
)
from rulebook.blackjack.state import (
    DEALER_COMPLETE,
    DEALER_SHORT,
    EVEN_MONEY,
    SURRENDERED,
    BlackjackState,
    FormedHand,
    Hand,
    Stake,
)
from rulebook.round import Wager
from rulebook.cards import card_text
from rulebook.money import round_amount
from rulebook.settlement import Settlement


@dataclass(frozen=True, slots=True)
class DealerView:
    """What the settlement may rely on about the dealer's hand."""

    cards: tuple[int, ...]
    blackjack: bool | None  # None: the cards do not say
    total: int | None  # the final total, None when not final or not known
    why_unknown: str  # when blackjack or total is None: the reason, with its clause

    @property
    def bust(self) -> bool:
        return self.total is not None and self.total > 21


def dealer_view(state: BlackjackState) -> DealerView:
    d = state.dealer
    up = d[0] if d else -1
    if up < 0:
        return DealerView(d, None, None, "the dealer's first card is not readable (BJ-4.7.2)")
    if len(d) >= 2 and d[1] >= 0:
        bj: bool | None = is_two_card_21(d[:2])
    elif not (is_ace(up) or is_ten_value(up)):
        bj = False  # a 2-9 cannot make a blackjack whatever follows
    else:
        bj = None
    total = None
    why = ""
    if state.dealer_status == DEALER_COMPLETE and known(d):
        total = hand_total(d)[0]
    elif state.dealer_status == DEALER_SHORT:
        why = "the dealer's hand stops under 17 in the device log (BJ-4.14.2)"
    elif state.missing:
        why = "the device log runs out of cards before the dealer's hand (BJ-4.13.1)"
    else:
        why = "the dealer's hand holds an unreadable card (BJ-4.14)"
    if bj is None and not why:
        why = "the dealer's second card is not in the device log (BJ-4.14.4)"
    return DealerView(d, bj, total, why)


# -- one stake on one hand ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Part:
    net: int
    clause: str
    text: str


def settle_stake(state: BlackjackState, hand: Hand, stake: Stake, dealer: DealerView) -> Part | str:
    """One wager's money on one hand: a Part, or the reason it cannot be settled."""
    p = state.params
    where = hand.label()
    risked = stake.amount + stake.doubled
    if stake.status == SURRENDERED:
        if not p.surrender_against_ace and (not dealer.cards or dealer.cards[0] < 0):
            # as for insurance (BJ-4.11.1): the card that says whether the surrender could be offered is not seen
            return (f"{where} surrendered against a dealer card the device could not read: whether surrender could be "
                    "offered (not against an ace) cannot be checked (BJ-4.12.1.1)")
        back = round_amount(stake.amount, 2, p.rounding, p.rounding_unit)
        return Part(back - stake.amount, "BJ-4.12.1", f"{where} surrendered: half of {stake.amount} returned, {stake.amount - back} lost")
    if stake.status == EVEN_MONEY:
        won = p.pay_table.even_money.odds.win(stake.amount, p.rounding, p.rounding_unit)
        return Part(won, p.pay_table.even_money.clause, f"{where} blackjack takes even money: +{won}")
    if hand.busted:
        return _bust(state, hand, stake, dealer)
    if not hand.known:
        return f"{where} holds a card the device could not read or did not log (BJ-4.3)"
    mine = hand_total(hand.cards)[0]
    if hand.is_blackjack:
        if dealer.blackjack is None:
            return f"{where} blackjack against a dealer {card_text(dealer.cards[0]) if dealer.cards and dealer.cards[0] >= 0 else '??'}: {dealer.why_unknown}"
        if dealer.blackjack:
            return Part(0, "BJ-6.2.3", f"{where} blackjack against dealer blackjack: stand-off")
        bj = p.pay_table.blackjack
        won = bj.odds.win(stake.amount, p.rounding, p.rounding_unit)
        up = dealer.cards[0]
        if not (is_ace(up) or is_ten_value(up)):
            clause = "BJ-4.15.2"
        elif dealer.total == 21:
            clause = "BJ-6.2.3.1"
        else:
            clause = bj.clause
        return Part(won, clause, f"{where} blackjack pays {bj.odds}: +{won}")
    if dealer.blackjack is None:
        return f"{where}: {dealer.why_unknown}"
    if dealer.blackjack:
        if not p.dealer_blackjack_takes_original_only:
            return Part(-risked, "BJ-6.2.2", f"{where} loses to dealer blackjack: -{risked}")
        if stake.original:
            clause = "BJ-4.9.5" if stake.doubled else ("BJ-4.10.8" if hand.from_split else "BJ-6.2.2")
            extra = f", the double of {stake.doubled} returned" if stake.doubled else ""
            return Part(-stake.amount, clause, f"{where} {mine} loses the original wager to dealer blackjack: -{stake.amount}{extra}")
        clause = "BJ-4.9.5" if stake.doubled else "BJ-4.10.8"
        return Part(0, clause, f"{where} {mine}: dealer blackjack collects only the original wager; the split wager {stake.amount}"
                    + (f" and the double {stake.doubled}" if stake.doubled else "") + " returned")
    if dealer.total is None:
        return f"{where}: {dealer.why_unknown}"
    d = dealer.total
    if d > 21 or mine > d:
        won = p.pay_table.win.odds.win(risked, p.rounding, p.rounding_unit)
        vs = "dealer bust" if d > 21 else f"dealer {d}"
        return Part(won, p.pay_table.win.clause, f"{where} {mine} beats {vs}: +{won}")
    if mine < d:
        return Part(-risked, "BJ-6.2.2", f"{where} {mine} loses to dealer {d}: -{risked}")
    return Part(0, "BJ-6.2.3", f"{where} {mine} ties dealer {d}: stand-off")


def _bust(state: BlackjackState, hand: Hand, stake: Stake, dealer: DealerView) -> Part | str:
    """A busted hand's stake (BJ-4.13.3). Where the rule set reads BJ-4.9.5 / 4.10.8 over the bust
    (``bust_before_dealer_blackjack = "original_only"``), a dealer blackjack afterwards takes only the
    original wager and returns the doubling and the split wager."""
    p = state.params
    where = hand.label()
    risked = stake.amount + stake.doubled
    extra = risked - (stake.amount if stake.original else 0)  # what original-only would return
    if p.bust_before_dealer_blackjack == "loses_all" or not p.dealer_blackjack_takes_original_only or extra == 0:
        return Part(-risked, "BJ-4.13.3", f"{where} bust: -{risked}")
    if dealer.blackjack is None:
        return f"{where} bust: whether the dealer's blackjack returns {extra} is not known: {dealer.why_unknown}"
    if not dealer.blackjack:
        return Part(-risked, "BJ-4.13.3", f"{where} bust: -{risked}")
    lost = stake.amount if stake.original else 0
    clause = "BJ-4.9.5" if stake.doubled else "BJ-4.10.8"
    return Part(-lost, clause, f"{where} bust, then the dealer's blackjack takes only the original wager: -{lost}, {extra} returned")


# -- the round ------------------------------------------------------------------------------------
def settle(state: BlackjackState) -> tuple[dict[str, Settlement], dict[str, str]]:
    """``(settlements, unsettled)`` by wager id for every wager the round holds."""
    p = state.params
    dealer = dealer_view(state)
    settlements: dict[str, Settlement] = {}
    unsettled: dict[str, str] = {}

    parts: dict[str, list[Part | str]] = {}
    for hand in state.hands:
        for stake in hand.stakes:
            parts.setdefault(stake.wager_id, []).append(settle_stake(state, hand, stake, dealer))
    for wid, ps in parts.items():
        reasons = [x for x in ps if isinstance(x, str)]
        if reasons:
            unsettled[wid] = reasons[0]
            continue
        done = [x for x in ps if isinstance(x, Part)]
        clauses = list(dict.fromkeys(x.clause for x in done))
        settlements[wid] = Settlement(sum(x.net for x in done), ", ".join(clauses), "; ".join(x.text for x in done))

    first_two = dict(state.first_two)
    for w in state.pairs:
        cards = first_two.get(w.seat, ())
        if len(cards) < 2 or not known(cards[:2]):
            unsettled[w.wager_id] = f"pair wager on seat {w.seat}: a first card is unreadable or not in the device log (BJ-6.3)"
            continue
        a, b = cards[:2]
        is_pair = same_face(a, b) if p.pair_by == "rank" else same_card(a, b)
        shown = f"{card_text(a)} {card_text(b)}"
        if is_pair:
            won = p.pay_table.pair.odds.win(w.amount, p.rounding, p.rounding_unit)
            settlements[w.wager_id] = Settlement(won, "BJ-6.3.1", f"seat {w.seat} {shown} is a pair: pays {p.pay_table.pair.odds}, +{won}")
        else:
            clause = "BJ-4.2.3.1" if a >= 36 and b >= 36 else "BJ-6.3.2"
            settlements[w.wager_id] = Settlement(-w.amount, clause, f"seat {w.seat} {shown} is not a pair: -{w.amount}")

    for w in state.split_pairs:
        done = settle_split_pair(state, w)
        if isinstance(done, str):
            unsettled[w.wager_id] = done
        else:
            settlements[w.wager_id] = done

    for bet in state.insurance:
        if not bet.accepted:
            settlements[bet.wager_id] = Settlement(0, bet.clause, f"insurance not accepted, returned: {bet.reason}")
            continue
        if state.seat_holds_blackjack(bet.seat):
            settlements[bet.wager_id] = Settlement(0, "BJ-4.15.3", f"seat {bet.seat} holds a blackjack: insurance void, returned")
            continue
        if dealer.cards and dealer.cards[0] < 0:
            unsettled[bet.wager_id] = f"insurance on seat {bet.seat}: the dealer's first card is unreadable, so the offer cannot be checked (BJ-4.11.1)"
            continue
        if len(dealer.cards) < 2 or dealer.cards[1] < 0:
            unsettled[bet.wager_id] = f"insurance on seat {bet.seat}: the dealer's second card is unreadable or not in the device log (BJ-4.14.4)"
            continue
        second = dealer.cards[1]
        if is_ten_value(second):
            ins = p.pay_table.insurance
            won = ins.odds.win(bet.amount, p.rounding, p.rounding_unit)
            settlements[bet.wager_id] = Settlement(won, ins.clause, f"dealer's second card {card_text(second)} is a ten: insurance pays {ins.odds}, +{won}")
        else:
            settlements[bet.wager_id] = Settlement(-bet.amount, "BJ-4.14.4", f"dealer's second card {card_text(second)} is not a ten: insurance loses -{bet.amount}")

    for r in state.returned:
        settlements[r.wager_id] = Settlement(0, r.clause, r.reason)
    return settlements, unsettled


def formed_hand(state: BlackjackState, seat: int, number: int | None) -> FormedHand | None:
    """The record of the split that formed hand ``number`` of ``seat`` (None: no split formed it)."""
    return next((f for f in state.formed if f.seat == seat and f.number == number), None)


def settle_split_pair(state: BlackjackState, w: Wager) -> Settlement | str:
    """A Pair wager placed when splitting (BJ-4.10.1.2): it wins if the second card dealt to its hand is
    identical to the hand's first card (the rule set's ``pair_by``, as for the pair wager of BJ-6.3), and
    loses if it is not. The second card is the one dealt to the hand right after the split that formed it,
    so a hand split again keeps that result. A Settlement, or why it cannot be settled."""
    p = state.params
    where = f"seat {w.seat} hand {w.hand}"
    f = formed_hand(state, w.seat, w.hand)
    if f is None:
        return f"pair wager placed when splitting on {where}: no split formed that hand, so it has no second card to decide it (BJ-4.10.1.2)"
    if f.identical is None:
        return f"pair wager placed when splitting on {where}: a split card could not be read, so whether the option was open cannot be checked (BJ-4.10.1.2)"
    if not f.identical:
        return Settlement(0, "BJ-4.10.1.2", f"{where} was formed by splitting cards that are not identical: no Pair wager may be placed on it, returned")
    if f.second is None or f.second < 0:
        return f"pair wager placed when splitting on {where}: the hand's second card is unreadable or not in the device log (BJ-4.10.1.2)"
    shown = f"{card_text(f.first)} {card_text(f.second)}"
    if identical_for_pair(f.first, f.second, p.pair_by):
        pair = p.pay_table.pair
        won = pair.odds.win(w.amount, p.rounding, p.rounding_unit)
        return Settlement(won, f"BJ-4.10.1.2, {pair.clause}", f"{where} {shown}: the second card dealt to the split hand is identical: pays {pair.odds}, +{won}")
    return Settlement(-w.amount, "BJ-4.10.1.2", f"{where} {shown}: the second card dealt to the split hand is not identical: -{w.amount}")


def outcome(state: BlackjackState) -> dict[str, object]:
    """The dealer's result in the table log's ``recorded_result`` vocabulary."""
    d = state.dealer
    out: dict[str, object] = {"dealer_cards": [card_text(c) if c >= 0 else "??" for c in d]}
    if d and known(d):
        total = hand_total(d)[0]
        out["dealer_points"] = total
        out["dealer_bust"] = total > 21
    else:
        out["dealer_points"] = None
        out["dealer_bust"] = None
    out["dealer_blackjack"] = dealer_view(state).blackjack
    return out
