"""A Blackjack round as an immutable state: every card dealt and every decision yields a new state.

The state holds the round's cards in device order (burns already set aside), how many have been
taken, the hands (with the wagers staked on each), the dealer's cards, and the record of what
happened: ``steps`` (one per card and decision, each with its clause) and ``irregularities``.
Nothing is mutated: a transition returns a new state whose last step says what it did, so a
dispute review can replay a round one state at a time.

The phases follow the rule text: the initial deal (BJ-4.7), the players' decisions seat by seat
and hand by hand (BJ-4.9-4.13), the dealer's draws (BJ-4.14), then settlement (BJ-4.15, 4.16,
in ``settle.py``). The decisions themselves (verify_x / can_x / x) live in ``decisions.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

from rulebook.blackjack.hand import hand_total, is_two_card_21, known, min_total
from rulebook.blackjack.params import BlackjackParams
from rulebook.cards import NO_CARD, UNREADABLE, card_text
from rulebook.round import Irregularity, Step, Wager
from rulebook.settlement import RuleViolation

# A card the play needed but the device log does not have (lost events): unknown, like ``??``.
MISSING: Final = NO_CARD

# phases
DEAL: Final = "deal"
PLAY: Final = "play"
DEALER: Final = "dealer"
DONE: Final = "done"

# the status of a wager's stake on a hand
LIVE: Final = "live"
SURRENDERED: Final = "surrendered"  # BJ-4.12.1: half of it is returned, whatever follows
EVEN_MONEY: Final = "even_money"  # BJ-4.15.3: paid 1 to 1 on the spot

# why a hand takes no more cards (Hand.done), and the clause that says so
DONE_CLAUSE: Final = {
    "stand": "BJ-4.13.2",
    "bust": "BJ-4.13.3",
    "21": "BJ-4.13.2",
    "blackjack": "BJ-4.15.2",
    "double": "BJ-4.9.1.2",
    "split_aces": "BJ-4.10.4.1",
    "surrender": "BJ-4.12.1",
}

# the dealer's hand after BJ-4.14 (BlackjackState.dealer_status)
DEALER_COMPLETE: Final = "complete"  # drew what 4.14 requires (or all that any wager needed)
DEALER_SHORT: Final = "short"  # stopped under 17 while a wager needed the total (BJ-4.14.2)
DEALER_UNKNOWN: Final = "unknown"  # an unread or missing card hides the total


def show(code: int) -> str:
    """A card as a step shows it; the unknown ones say why."""
    if code >= 0:
        return card_text(code)
    if code == UNREADABLE:
        return "?? (unreadable)"
    if code == MISSING:
        return "(no card in the device log)"
    return card_text(code)


def describe_total(cards: tuple[int, ...]) -> str:
    if not known(cards):
        return "total unknown"
    total, soft = hand_total(cards)
    return f"{'soft ' if soft else ''}{total}"


class Stake(NamedTuple):
    """One wager's money on one hand.

    ``amount`` is what the wager risks on this hand before doubling: the original wager on the
    hand it was placed on (or stayed on after a split, BJ-4.10.7.2), or the amount put up for a
    hand formed by a split (BJ-4.10.1.1, 4.10.7.1). ``original`` marks the stake a dealer
    blackjack collects; the others, and every doubling, are returned (BJ-4.9.5, 4.10.8).
    """

    wager_id: str
    amount: int
    original: bool
    doubled: int = 0  # BJ-4.9.1: the amount added by doubling (equal to or less than ``amount``)
    status: str = LIVE


class Hand(NamedTuple):
    """The cards of one hand and the stakes on it. ``number`` is 1 for the seat's initial hand,
    then 2, 3, 4 for hands formed by splits, in the order they were formed (formats: ``hand``)."""

    seat: int
    number: int
    cards: tuple[int, ...]
    stakes: tuple[Stake, ...]
    from_split: bool = False  # no blackjack after a split (BJ-2.1, 4.10.5)
    split_aces: bool = False  # one card to each split ace (BJ-4.10.4.1)
    doubled: bool = False
    decided: bool = False  # a hit, double or split was made on it: no double/surrender any more
    done: str = ""  # why it takes no more cards (DONE_CLAUSE); "" while in play or waiting
    pending_doubles: tuple[tuple[str, int], ...] = ()  # back bettors' doubles awaiting the controller's (BJ-4.9.4)

    @property
    def key(self) -> tuple[int, int]:
        return (self.seat, self.number)

    @property
    def is_blackjack(self) -> bool:
        """An ace and a ten-value card as the seat's first two cards, not after a split (BJ-2.1, 4.10.5)."""
        return not self.from_split and is_two_card_21(self.cards)

    @property
    def known(self) -> bool:
        return known(self.cards)

    @property
    def busted(self) -> bool:
        """Over 21 on the readable cards alone: bust whatever an unread card was (BJ-4.13.3)."""
        return min_total(self.cards) > 21

    def live_stakes(self) -> tuple[Stake, ...]:
        return tuple(s for s in self.stakes if s.status == LIVE)

    def controlling(self) -> Stake | None:
        """The stake whose player decides for the hand: the first main wager placed (formats), or,
        once it has surrendered, the next one still in play (BJ-4.12.3)."""
        for s in self.stakes:
            if s.status == LIVE:
                return s
        return None

    def label(self) -> str:
        return f"seat {self.seat} hand {self.number}"


class FormedHand(NamedTuple):
    """A hand as a split formed it, for the Pair wager placed when splitting (BJ-4.10.1.2).

    ``first`` is the card the hand kept or received from the split, ``second`` the card dealt to it
    next (None until it is dealt). ``identical`` says whether the split cards were identical (the
    rule set's ``pair_by``): only then may a Pair wager be placed (4.10.1.2 "when splitting identical
    cards"). A hand that keeps its number through a resplit keeps the record of the split that first
    formed it (docs/interpretations/blackjack.md)."""

    seat: int
    number: int
    first: int
    second: int | None
    identical: bool | None  # None: a split card was not read


class InsuranceBet(NamedTuple):
    """An insurance wager as the rules accept it (BJ-4.11): ``amount`` is what is in play, ``covers``
    the main wager it insures. A refused one (``clause`` says why) is returned."""

    wager_id: str
    seat: int
    amount: int
    covers: str | None
    accepted: bool = True
    clause: str = "BJ-4.11.1"
    reason: str = ""


class Returned(NamedTuple):
    """A wager the rules do not accept on this round: returned to the player, net 0."""

    wager_id: str
    clause: str
    reason: str


class BlackjackState(NamedTuple):
    params: BlackjackParams
    shoe: tuple[int, ...]  # the round's cards in device order, burns set aside
    table_min: int | None = None  # the table minimum, for doubling for less (BJ-4.9.1)
    taken: int = 0  # cards of ``shoe`` dealt so far
    seats: tuple[int, ...] = ()  # seats with a wager, in dealing order (BJ-4.7.2)
    hands: tuple[Hand, ...] = ()  # every hand, by seat, then in play position
    dealer: tuple[int, ...] = ()
    phase: str = DEAL
    turn: tuple[int, int] | None = None  # (seat, hand number) whose decision is awaited
    pairs: tuple[Wager, ...] = ()  # accepted pair wagers (BJ-4.8)
    split_pairs: tuple[Wager, ...] = ()  # pair wagers placed when splitting, on a hand (BJ-4.10.1.2)
    formed: tuple[FormedHand, ...] = ()  # hands formed by splits, with their second card (BJ-4.10.1.2)
    insurance: tuple[InsuranceBet, ...] = ()
    returned: tuple[Returned, ...] = ()
    main_players: tuple[tuple[str, str | None], ...] = ()  # main wager id -> player id (insurance is the player's own)
    first_two: tuple[tuple[int, tuple[int, ...]], ...] = ()  # each seat's initial two cards, for the pair wager (BJ-6.3)
    initial_cards: int = 0  # cards in the initial deal; more taken means the subsequent deal began (BJ-2.10)
    missing: int = 0  # cards the play needed that the device log does not have
    extra: tuple[int, ...] = ()  # cards after the dealer's completed hand, removed from play (BJ-7.3)
    dealer_status: str = ""
    steps: tuple[Step, ...] = ()
    irregularities: tuple[Irregularity, ...] = ()
    record: bool = True  # False: no steps are written (RoundInput.with_steps); all else is the same

    # -- looking things up ------------------------------------------------------------------
    def hand(self, seat: int, number: int) -> Hand | None:
        for h in self.hands:
            if h.seat == seat and h.number == number:
                return h
        return None

    def seat_hands(self, seat: int) -> tuple[Hand, ...]:
        return tuple(h for h in self.hands if h.seat == seat)

    def turn_hand(self) -> Hand | None:
        return None if self.turn is None else self.hand(*self.turn)

    @property
    def up_card(self) -> int | None:
        return self.dealer[0] if self.dealer else None

    @property
    def subsequent_deal_started(self) -> bool:
        return self.taken > self.initial_cards or any(h.decided for h in self.hands)

    def seat_holds_blackjack(self, seat: int) -> bool:
        """Whether the seat's initial two cards are a blackjack: any insurance wager on it is then void and returned
        (BJ-4.15.3), so it waits for nothing of the dealer's hand. An unread card is no blackjack here."""
        cards = dict(self.first_two).get(seat, ())
        return len(cards) == 2 and is_two_card_21(cards)


def _quick_replace(cls: type) -> None:
    """Give a NamedTuple of this module a faster ``_replace`` (same result, same errors).

    ``collections.namedtuple``'s own pops every field name from the keyword dictionary; a round of
    Blackjack makes some fifty new states, and with twenty fields that was a fifth of the engine's
    time. Here only the fields that change are touched.
    """
    index = {name: i for i, name in enumerate(cls._fields)}
    new = tuple.__new__

    def _replace(self, **changes):
        values = list(self)
        try:
            for name, value in changes.items():
                values[index[name]] = value
        except KeyError:
            raise ValueError(f"Got unexpected field names: {[n for n in changes if n not in index]!r}") from None
        return new(type(self), values)

    _replace.__doc__ = f"A new {cls.__name__} with the given fields replaced."
    type.__setattr__(cls, "_replace", _replace)


for _cls in (Stake, Hand, FormedHand, InsuranceBet, Returned, BlackjackState):
    _quick_replace(_cls)
del _cls


# -- small pure helpers the transitions share ------------------------------------------------
def note(state: BlackjackState, what: str, clause: str) -> BlackjackState:
    if not state.record:
        return state
    return state._replace(steps=state.steps + (Step(what, clause),))


def flag(state: BlackjackState, kind: str, clause: str, detail: str, voids: bool = False) -> BlackjackState:
    irr = Irregularity(kind=kind, clause=clause, detail=detail, voids_round=voids)
    if not state.record:
        return state._replace(irregularities=state.irregularities + (irr,))
    return state._replace(irregularities=state.irregularities + (irr,), steps=state.steps + (Step(f"irregularity: {detail}", clause),))


def take(state: BlackjackState) -> tuple[BlackjackState, int]:
    """The next card from the device; MISSING when the log has no more (counted in ``missing``)."""
    if state.taken < len(state.shoe):
        return state._replace(taken=state.taken + 1), state.shoe[state.taken]
    return state._replace(missing=state.missing + 1), MISSING


def put_hand(state: BlackjackState, hand: Hand, **changes) -> BlackjackState:
    """The state with ``hand`` (matched by seat and number) replaced."""
    hands = tuple(hand if h.seat == hand.seat and h.number == hand.number else h for h in state.hands)
    return state._replace(hands=hands, **changes)


# -- the round opens: wagers on seats ----------------------------------------------------------
def open_round(
    params: BlackjackParams,
    shoe: Iterable[int],
    wagers: Iterable[Wager],
    table_min: int | None = None,
    record: bool = True,
) -> BlackjackState:
    """Seat the wagers. A seat with a main or pair wager is dealt cards (BJ-4.7.2); the first main
    wager placed on a seat controls its hand (formats); at most ``max_wagers_per_seat`` main
    wagers (BJ-4.6) and three pair wagers (BJ-4.8.3) per seat are accepted, the others returned.
    Insurance wagers are decisions taken after the deal: see ``decisions.insurance``. ``record=False``:
    the state writes no steps (see ``BlackjackState.record``)."""
    mains: dict[int, list[Stake]] = {}
    pairs: list[Wager] = []
    split_pairs: list[Wager] = []
    pair_count: dict[int, int] = {}
    returned: list[Returned] = []
    players: list[tuple[str, str | None]] = []
    steps: list[Step] = []
    irregular: list[Irregularity] = []
    for w in wagers:
        if w.bet == "main":
            on_seat = mains.setdefault(w.seat, [])
            if len(on_seat) >= params.max_wagers_per_seat:
                why = f"wager {w.wager_id} is main wager {len(on_seat) + 1} on seat {w.seat}; at most {params.max_wagers_per_seat} players wager on one area: returned"
                returned.append(Returned(w.wager_id, "BJ-4.6", why))
                irregular.append(Irregularity("illegal_action", "BJ-4.6", why))
                continue
            on_seat.append(Stake(w.wager_id, w.amount, original=True))
            players.append((w.wager_id, w.player_id))
            if record:
                steps.append(Step(f"wager {w.wager_id}: {w.amount} on seat {w.seat}{' (controls the hand)' if len(on_seat) == 1 else ' (back bet)'}", "BJ-4.7.1"))
        elif w.bet == "pair" and w.hand is not None:
            # placed when splitting (BJ-4.10.1.2): decided by its hand's second card, see settle.py
            split_pairs.append(w)
            if record:
                steps.append(Step(f"pair wager {w.wager_id}: {w.amount} on seat {w.seat} hand {w.hand}, placed when splitting", "BJ-4.10.1.2"))
        elif w.bet == "pair":
            n = pair_count.get(w.seat, 0)
            if n >= 3:
                why = f"pair wager {w.wager_id} is the {n + 1}th on seat {w.seat}; only three are permitted: returned"
                returned.append(Returned(w.wager_id, "BJ-4.8.3", why))
                irregular.append(Irregularity("illegal_action", "BJ-4.8.3", why))
                continue
            pair_count[w.seat] = n + 1
            pairs.append(w)
            if record:
                steps.append(Step(f"pair wager {w.wager_id}: {w.amount} on seat {w.seat}", "BJ-4.8.1"))
    seats = tuple(sorted(set(mains) | set(pair_count)))
    hands = tuple(Hand(seat=s, number=1, cards=(), stakes=tuple(mains.get(s, ()))) for s in seats)
    return BlackjackState(
        params=params,
        shoe=tuple(shoe),
        table_min=table_min,
        seats=seats,
        hands=hands,
        pairs=tuple(pairs),
        split_pairs=tuple(split_pairs),
        returned=tuple(returned),
        main_players=tuple(players),
        steps=tuple(steps),
        irregularities=tuple(irregular),
        record=record,
    )


def deal_initial(state: BlackjackState) -> BlackjackState:
    """One card to each seat with a wager in seat order, one to the dealer, a second to each seat (BJ-4.7.2)."""
    if state.phase != DEAL:
        raise RuleViolation("the initial deal has already been made", "BJ-4.7.2")
    hands = list(state.hands)
    steps = list(state.steps)
    record = state.record
    for rnd in (1, 2):
        for i, h in enumerate(hands):
            state, c = take(state)
            hands[i] = h._replace(cards=h.cards + (c,))
            if record:
                steps.append(Step(f"{h.label()} card {rnd}: {show(c)}", "BJ-4.7.2"))
        if rnd == 1:
            state, c = take(state)
            dealer = (c,)
            if record:
                steps.append(Step(f"dealer's card: {show(c)} (no second card until the players are done)", "BJ-4.7.2"))
    for i, h in enumerate(hands):
        if h.is_blackjack:
            hands[i] = h._replace(done="blackjack")
            if record:
                steps.append(Step(f"{h.label()}: blackjack", "BJ-2.1"))
    state = state._replace(
        hands=tuple(hands),
        dealer=dealer,
        phase=PLAY,
        steps=tuple(steps),
        initial_cards=state.taken,
        first_two=tuple((h.seat, h.cards) for h in hands),
    )
    if state.missing:
        state = flag(
            state,
            "card_integrity",
            "BJ-4.7.2",
            f"the initial deal needs {len(hands) * 2 + 1} cards and the device log has {len(hands) * 2 + 1 - state.missing}",
        )
    return state


# -- whose turn: seat order, and within a seat the hands in play position (BJ-4.10.2) ----------------
def place_split_hand(hands: tuple[Hand, ...], kept: Hand, new: Hand, order: str) -> tuple[Hand, ...]:
    """``hands`` with the hand split replaced by ``kept`` and the hand it formed, ``new``, in its play position.

    The rule set's ``split_play_order`` (BJ-4.10.2, 4.10.3.1 leave it open): ``"newest_first"`` lays the new hand
    right after the hand it came from, so after a resplit the new pair is completed before an older split hand is
    dealt to (1, 3, 2); ``"as_formed"`` lays it after the seat's last hand, so the hands play in the order they were
    formed (1, 2, 3). Either way the hand split keeps playing first (BJ-4.10.2)."""
    out: list[Hand] = []
    for h in hands:
        if h.seat == kept.seat and h.number == kept.number:
            out.append(kept)
            if order == "newest_first":
                out.append(new)
        else:
            out.append(h)
    if order != "newest_first":
        last = max(i for i, h in enumerate(out) if h.seat == kept.seat)
        out.insert(last + 1, new)
    return tuple(out)


def next_pending(state: BlackjackState, seat: int | None = None) -> tuple[int, int] | None:
    """The next hand to play: the first hand not complete, in seat order and play position.

    A hand formed by a split sits where the rule set's ``split_play_order`` lays it (``place_split_hand``): right
    after the hand it was split from (a resplit's new pair is completed before an older split hand is dealt to), or
    after the seat's last hand (the hands play in the order formed). The first hand of a split is completed before the
    second receives a card either way (BJ-4.10.2)."""
    for h in state.hands:
        if not h.done and (seat is None or h.seat == seat):
            return h.key
    return None


def start_hand(state: BlackjackState, seat: int, number: int) -> BlackjackState:
    """Give the turn to a hand: a hand formed by a split gets its second card now (BJ-4.10.2); a
    split ace takes no more (BJ-4.10.4.1); a hand of 21 needs no decision (BJ-4.13.2)."""
    hand = state.hand(seat, number)
    if state.phase != PLAY or hand is None or hand.done or state.turn is not None:
        raise RuleViolation(f"seat {seat} hand {number} cannot take the turn now", "BJ-4.13.1")
    earlier = [h for h in state.hands if h.seat < seat and not h.done]
    if earlier:
        raise RuleViolation(f"{earlier[0].label()} plays before seat {seat}", "BJ-4.13.1")
    if len(hand.cards) == 1:
        state, c = take(state)
        hand = hand._replace(cards=hand.cards + (c,))
        state = second_card_dealt(state, hand)
        state = note(state, f"{hand.label()} (formed by a split) second card: {show(c)}, {describe_total(hand.cards)}", "BJ-4.10.2")
    return after_card(state, hand)


def hand_formed(state: BlackjackState, seat: int, number: int, first: int, identical: bool | None) -> BlackjackState:
    """Record a hand a split formed (BJ-4.10.1.2); a hand already formed by an earlier split keeps its record."""
    if any(f.seat == seat and f.number == number for f in state.formed):
        return state
    return state._replace(formed=state.formed + (FormedHand(seat, number, first, None, identical),))


def second_card_dealt(state: BlackjackState, hand: Hand) -> BlackjackState:
    """Record the second card dealt to a hand formed by a split, the first time it has two (BJ-4.10.1.2)."""
    if len(hand.cards) != 2:
        return state
    formed = tuple(
        f._replace(second=hand.cards[1]) if f.seat == hand.seat and f.number == hand.number and f.second is None else f
        for f in state.formed
    )
    return state._replace(formed=formed)


def after_card(state: BlackjackState, hand: Hand) -> BlackjackState:
    """Put ``hand`` back after it received a card, closing it when the rules give it no decision."""
    done = ""
    if hand.split_aces and len(hand.cards) >= 2:
        done = "split_aces"
    elif hand.busted:
        done = "bust"
    elif hand.known and hand_total(hand.cards)[0] == 21:
        done = "blackjack" if hand.is_blackjack else "21"
    if done:
        hand = hand._replace(done=done)
        state = put_hand(state, hand, turn=None)
        what = {
            "split_aces": f"{hand.label()}: a split ace receives one card only",
            "bust": f"{hand.label()} is bust ({min_total(hand.cards)}): its wagers lose",
            "21": f"{hand.label()} reaches 21: no more cards",
            "blackjack": f"{hand.label()}: blackjack",
        }[done]
        return note(state, what, DONE_CLAUSE[done])
    return put_hand(state, hand, turn=hand.key)


def close_turn(state: BlackjackState) -> BlackjackState:
    """The hand in turn has no further decision recorded: it stands (BJ-4.13.2)."""
    hand = state.turn_hand()
    if hand is None:
        return state
    state = put_hand(state, hand._replace(done="stand"), turn=None)
    return note(state, f"{hand.label()}: no further decision recorded, stands on {describe_total(hand.cards)}", "BJ-4.13.2")


def advance(state: BlackjackState) -> BlackjackState:
    """Move the turn to the next hand needing a decision; when none is left the dealer draws (BJ-4.14.1)."""
    while state.phase == PLAY and state.turn is None:
        nxt = next_pending(state)
        if nxt is None:
            return state._replace(phase=DEALER)
        state = start_hand(state, *nxt)
    return state

