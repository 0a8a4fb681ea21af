"""One blackjack table's gaming day: shoes, seats and back bettors, basic strategy, settlement.

Blackjack cannot be vectorised across rounds (each decision takes the next card of the shoe), so
rounds are played one by one here, on plain lists. The rules engine's own forward player
(``rulebook.blackjack.play``) walks its immutable state machine at about 0.8 ms a round, which
would make blackjack alone take longer than the whole 1,000,000-round night is allowed; so this
module plays and settles a round with the same conventions in a few tens of microseconds, and the
engine stays the referee: every clean round of the tests is re-settled by
``rulebook.engine.settle_round`` from the files written, with zero differences required.

The conventions followed are the engine's (rulebook/blackjack/state.py, dealer.py, settle.py):
one card to each seat with a wager in seat order, one to the dealer (no hole card, BJ-4.7.2), a
second to each seat; insurance and even money before the subsequent deal; each seat in turn, the
first hand formed by a split completed before the second receives its second card (BJ-4.10.2), a
resplit's new hand played where the rule set's ``split_play_order`` puts it (right after the hand it
came from, or after the seat's last hand), no decision recorded for a hand that reached 21 or a split
ace; the dealer draws only what the wagers still in play need (BJ-4.14.1), to 17 (BJ-4.14.2-3).
Decisions are ``rulebook.blackjack.strategy.basic_action``; back bettors never double or split
(they stay on the first hand, BJ-4.10.7.2), so a controlling player with a back bettor does not
surrender (BJ-4.12.3 would hand the decisions to the back bettor).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipelines.simulate import records as R
from pipelines.simulate.config import CHIP
from pipelines.simulate.context import DayContext, chip
from pipelines.simulate.records import ActionRec, RoundRec, WagerRec
from rulebook.blackjack.strategy import basic_action, takes_insurance
from rulebook.cards import NO_CARD, card_text
from rulebook.money import round_amount

_POINTS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
POINTS = [_POINTS[c >> 2] for c in range(52)]
HILO = [(1 if 2 <= POINTS[c] <= 6 else -1 if POINTS[c] in (1, 10) else 0) for c in range(52)]


def total(cards: list[int]) -> tuple[int, bool]:
    hard = 0
    ace = False
    for c in cards:
        p = POINTS[c]
        hard += p
        ace = ace or p == 1
    if ace and hard <= 11:
        return hard + 10, True
    return hard, False


def is_bj(cards: list[int]) -> bool:
    return len(cards) == 2 and total(cards)[0] == 21


# ---- one round -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Stake:
    wager_id: str
    amount: int
    original: bool
    doubled: int = 0
    status: str = "live"  # live | surrendered | even_money


@dataclass(slots=True)
class Hand:
    seat: int
    number: int
    cards: list[int]
    stakes: list[Stake]
    from_split: bool = False
    split_aces: bool = False
    decided: bool = False
    done: str = ""
    blackjack: bool = False  # set once, after the initial deal: two-card 21 not formed by a split (BJ-2.1)

    def controlling(self) -> Stake | None:
        for s in self.stakes:
            if s.status == "live":
                return s
        return None


class Shoe:
    """The shoe's cards in order and how many have left it."""

    def __init__(self, cards: list[int]):
        self.cards = cards
        self.pos = 0

    def next(self) -> int:
        c = self.cards[self.pos]
        self.pos += 1
        return c


class Round:
    """One round being played (plain mutable lists; a few tens of microseconds a round)."""

    def __init__(self, params, shoe: Shoe, mains, pairs):
        self.p = params
        self.shoe = shoe
        self.cards: list[int] = []
        self.actions: list[tuple[int, int, str, int | None, int]] = []
        self.pairs = pairs
        self.insurance: list[tuple[str, int, int]] = []
        by_seat: dict[int, list[Stake]] = {}
        for wid, seat, amount in mains:
            by_seat.setdefault(seat, []).append(Stake(wid, amount, True))
        seats = sorted(set(by_seat) | {s for _, s, _ in pairs})
        self.hands: dict[int, list[Hand]] = {s: [Hand(s, 1, [], by_seat.get(s, []))] for s in seats}
        self.dealer: list[int] = []
        self.first_two: dict[int, list[int]] = {}

    def take(self) -> int:
        c = self.shoe.next()
        self.cards.append(c)
        return c

    # -- the initial deal (BJ-4.7.2)
    def deal(self) -> None:
        for rnd in (1, 2):
            for s in self.hands:
                self.hands[s][0].cards.append(self.take())
            if rnd == 1:
                self.dealer.append(self.take())
        for s, hs in self.hands.items():
            self.first_two[s] = list(hs[0].cards)
            if is_bj(hs[0].cards):
                hs[0].blackjack = True
                hs[0].done = "blackjack"

    @property
    def up(self) -> int:
        return self.dealer[0]

    def up_is_ace(self) -> bool:
        return POINTS[self.up] == 1

    def add_insurance(self, wid: str, seat: int, amount: int) -> None:
        self.insurance.append((wid, seat, amount))
        self.actions.append((seat, 1, "insurance", amount, len(self.cards)))

    def take_even_money(self, seat: int) -> None:
        h = self.hands[seat][0]
        h.stakes[0].status = "even_money"
        self.actions.append((seat, 1, "even_money", None, len(self.cards)))

    # -- the players' hands (BJ-4.9-4.13)
    def allowed(self, h: Hand, back_bettors: bool, no_double: bool) -> set[str]:
        out = {"hit", "stand"}
        if len(h.cards) == 2 and not h.decided and not h.split_aces:
            if not no_double and not h.blackjack and (not h.from_split or self.p.double_after_split):
                out.add("double")
            a, b = h.cards
            seat_hands = len(self.hands[h.seat])
            if (not no_double and POINTS[a] == POINTS[b] and seat_hands < self.p.max_hands
                    and not (h.from_split and POINTS[a] == 1 and not self.p.resplit_aces)):
                out.add("split")
            if (self.p.surrender_allowed and not back_bettors and not h.from_split and not h.blackjack
                    and (self.p.surrender_against_ace or not self.up_is_ace())):
                out.add("surrender")
        return out

    def _after_card(self, h: Hand) -> None:
        t = total(h.cards)[0]
        if h.split_aces and len(h.cards) >= 2:
            h.done = "split_aces"
        elif t > 21:
            h.done = "bust"
        elif t == 21:
            h.done = "blackjack" if h.blackjack else "21"

    def play_seats(self, decide, no_double: set[str]) -> None:
        for seat, hs in self.hands.items():
            pos = 0
            while pos < len(hs):
                h = hs[pos]
                if len(h.cards) == 1:  # a hand formed by a split gets its second card now (BJ-4.10.2)
                    h.cards.append(self.take())
                    self._after_card(h)
                while not h.done:
                    ctrl = h.controlling()
                    if ctrl is None:
                        h.done = "surrender"
                        break
                    back = len([s for s in h.stakes if s is not ctrl]) > 0
                    action = decide(h, self.up, self.allowed(h, back, ctrl.wager_id in no_double))
                    if action == "hit":
                        self.actions.append((seat, h.number, "hit", None, len(self.cards)))
                        h.cards.append(self.take())
                        h.decided = True
                        self._after_card(h)
                    elif action == "stand":
                        self.actions.append((seat, h.number, "stand", None, len(self.cards)))
                        h.done = "stand"
                    elif action == "double":
                        self.actions.append((seat, h.number, "double", ctrl.amount, len(self.cards)))
                        ctrl.doubled = ctrl.amount
                        h.decided = True
                        h.cards.append(self.take())
                        if total(h.cards)[0] > 21:
                            h.done = "bust"
                        else:
                            h.done = "double"
                    elif action == "split":
                        self.actions.append((seat, h.number, "split", ctrl.amount, len(self.cards)))
                        first, second = h.cards
                        aces = POINTS[first] == 1
                        number = max(x.number for x in hs) + 1
                        new = Hand(seat, number, [second], [Stake(ctrl.wager_id, ctrl.amount, False)], True, aces)
                        # its play position is the rule set's split_play_order (rulebook.blackjack.state.place_split_hand)
                        hs.insert(pos + 1 if self.p.split_play_order == "newest_first" else len(hs), new)
                        h.cards = [first, self.take()]
                        h.from_split = True
                        h.blackjack = False  # no blackjack after a split (BJ-4.10.5)
                        h.split_aces = aces
                        self._after_card(h)
                    elif action == "surrender":
                        self.actions.append((seat, h.number, "surrender", None, len(self.cards)))
                        ctrl.status = "surrendered"
                        h.decided = True
                        if h.controlling() is None:
                            h.done = "surrender"
                    else:
                        raise ValueError(action)
                pos += 1

    # -- the dealer (BJ-4.14, "as necessary")
    def needs(self) -> tuple[bool, bool]:
        up = self.up
        up_ten_or_ace = POINTS[up] in (1, 10)
        need_total = False
        need_second = bool(self.insurance)
        for hs in self.hands.values():
            for h in hs:
                if not any(s.status == "live" for s in h.stakes) or total(h.cards)[0] > 21:
                    continue
                if h.blackjack:
                    need_second = need_second or up_ten_or_ace
                else:
                    need_total = True
        return need_total, need_second or need_total

    def deal_dealer(self, extra: int = 0) -> None:
        need_total, need_second = self.needs()
        while need_second:
            t = total(self.dealer)[0]
            if (t >= 17 and not (self.p.dealer_hits_soft_17 and total(self.dealer) == (17, True))) or (
                    not need_total and len(self.dealer) >= 2):
                break
            self.dealer.append(self.take())
        for _ in range(extra):  # a card drawn in error after the dealer's hand was complete (BJ-7.3)
            self.cards.append(self.shoe.next())

    # -- settlement (BJ-4.15, 4.16, 5, 6)
    def settle(self) -> tuple[dict[str, int], dict[str, set[str]]]:
        p = self.p
        d = self.dealer
        up = d[0]
        if len(d) >= 2:
            dealer_bj = is_bj(d[:2])
        else:
            dealer_bj = False if POINTS[up] not in (1, 10) else None
        dt = total(d)[0]
        nets: dict[str, int] = {}
        tags: dict[str, set[str]] = {}
        for hs in self.hands.values():
            for h in hs:
                mine = total(h.cards)[0]
                for s in h.stakes:
                    risked = s.amount + s.doubled
                    tag = tags.setdefault(s.wager_id, set())
                    if s.doubled:
                        tag.add("doubled")
                    if not s.original:
                        tag.add("split")
                    if s.status == "surrendered":
                        net = round_amount(s.amount, 2, p.rounding, p.rounding_unit) - s.amount
                        tag.add("surrender")
                    elif s.status == "even_money":
                        net = p.pay_table.even_money.odds.win(s.amount, p.rounding, p.rounding_unit)
                        tag.add("even_money")
                    elif mine > 21:
                        net = -risked
                    elif h.blackjack:
                        if dealer_bj is None:
                            raise AssertionError("a live blackjack without the dealer's second card")
                        net = 0 if dealer_bj else p.pay_table.blackjack.odds.win(s.amount, p.rounding, p.rounding_unit)
                        tag.add("blackjack" if not dealer_bj else "blackjack_push")
                    elif dealer_bj:
                        net = -s.amount if s.original else 0
                        if s.doubled or not s.original:
                            tag.add("dealer_bj_returned")
                    elif dt > 21 or mine > dt:
                        net = p.pay_table.win.odds.win(risked, p.rounding, p.rounding_unit)
                    elif mine < dt:
                        net = -risked
                    else:
                        net = 0
                    nets[s.wager_id] = nets.get(s.wager_id, 0) + net
        for wid, seat, amount in self.pairs:
            a, b = self.first_two[seat][:2]
            pair = (a >> 2) == (b >> 2) if p.pair_by == "rank" else a == b
            nets[wid] = p.pay_table.pair.odds.win(amount, p.rounding, p.rounding_unit) if pair else -amount
        for wid, seat, amount in self.insurance:
            if is_bj(self.first_two[seat]):
                nets[wid] = 0
            elif POINTS[d[1]] == 10:
                nets[wid] = p.pay_table.insurance.odds.win(amount, p.rounding, p.rounding_unit)
            else:
                nets[wid] = -amount
        return nets, tags

    def outcome(self) -> dict:
        """The dealer's result in the engine's ``recorded_result`` vocabulary (rulebook.blackjack.settle.outcome)."""
        d = self.dealer
        t = total(d)[0]
        if len(d) >= 2:
            bj: bool | None = is_bj(d[:2])
        elif POINTS[d[0]] not in (1, 10):
            bj = False
        else:
            bj = None
        return {"dealer_cards": [card_text(c) for c in d], "dealer_points": t, "dealer_bust": t > 21, "dealer_blackjack": bj}


# ---- the day ---------------------------------------------------------------------------------------


def _basic(h: Hand, up: int, allowed: set[str]) -> str:
    return basic_action(h.cards, up, allowed)


def simulate_day(ctx: DayContext) -> None:
    rng = ctx.rng
    f = ctx.fast
    t = ctx.table
    lim = t.limits
    params = ctx.ruleset.params
    decks = t.decks
    n = ctx.day.n_rounds
    sessions = ctx.day.sessions
    tickets = list(ctx.day.tickets)
    pending = {k: [x for x in tickets if x.variant == k] for k in
               ("duplicate_in_shoe", "dealer_extra_card", "under_min")}
    post = [x for x in tickets if x.variant not in pending]
    start_at = {k: sorted(f.integers(0, max(1, n - 40)) for _ in v) for k, v in pending.items()}
    # a dealer blackjack against a doubled or split hand is rare: the shoe is arranged for one, per ticket
    arrange = sorted(f.integers(0, max(1, n - 40)) for x in post if x.variant == "double_lost_to_dealer_blackjack")
    seat_sessions = [s for s in sessions if s.role != "back"]
    back_sessions = [s for s in sessions if s.role == "back"]
    sp = ctx.specials
    ev = ctx.events
    now = ctx.day.open_ms
    shoe: Shoe | None = None
    shoe_idx = -1
    cut = 0
    running = 0  # Hi-Lo running count of the cards seen since the shuffle
    dup: tuple[int, int] | None = None  # card with one copy too many in this shoe, copies dealt so far
    holding: list[int] = []  # rounds of this shoe that dealt a copy of it
    played: list[tuple[RoundRec, Round, dict]] = []
    live: list = []  # seat sessions under way (sessions are sorted by start)
    nxt = 0
    for i in range(n):
        if shoe is None or shoe.pos >= cut:
            if shoe is not None:
                ev.one(now + f.integers(2000, 5000), R.SHOE_END, -1, NO_CARD, shoe_idx)
                now += f.integers(150_000, 240_000)
            cards = rng.permutation(np.tile(np.arange(52, dtype=np.int64), decks))
            cut = int(len(cards) * f.uniform(0.75, 0.80))
            dup = None
            holding = []
            if pending["duplicate_in_shoe"] and n - i >= 40 and i >= start_at["duplicate_in_shoe"][0]:
                dup = _plant_duplicate(rng, cards, cut)
            shoe = Shoe(cards.tolist())
            shoe_idx = ev.new_shoe(ctx.next_shoe_id())
            ev.one(now, R.SHOE_START, -1, NO_CARD, shoe_idx, decks)
            burn_ts = now + f.integers(3000, 6000)
            ev.one(burn_ts, R.BURN, -1, shoe.next(), shoe_idx)  # the first card is burned (BJ-7.13)
            now = -(-(burn_ts + f.integers(5000, 15000)) // 1000) * 1000
            running = HILO[shoe.cards[0]]
        open_ms = now
        close_ms = open_ms + f.integers(10, 17) * 1000
        while nxt < len(seat_sessions) and seat_sessions[nxt].start_ms <= open_ms:
            live.append(seat_sessions[nxt])
            nxt += 1
        live = [s for s in live if s.end_ms > open_ms]
        mains, pairs, who, order, under = _wagers(ctx, f, open_ms, close_ms, live, back_sessions,
                                                  running, len(shoe.cards) - shoe.pos, pending, start_at, i)
        rnd = Round(params, shoe, mains, pairs)
        rnd.deal()
        if rnd.up_is_ace():
            tc = running / max(0.5, (len(shoe.cards) - shoe.pos) / 52)
            hunch = {who[w]["seat"]: who[w] for w, _, _ in mains if who[w]["hunch"] or who[w]["role"] == "counter"}
            for seat, hs in rnd.hands.items():
                h = hs[0]
                info = hunch.get(seat)
                if info is None or not h.stakes or h.stakes[0].wager_id != info["wid"]:
                    continue
                ctrl = h.stakes[0]
                if h.blackjack:
                    if info["role"] != "counter" and f.random() < 0.5:
                        rnd.take_even_money(seat)
                    continue
                wants = takes_insurance(tc) if info["role"] == "counter" else f.random() < 0.3
                amount = (ctrl.amount // 2) // CHIP * CHIP
                if wants and lim.side_min <= amount <= lim.side_max:
                    wid = ctx.next_wager_id()
                    rnd.add_insurance(wid, seat, amount)
                    who[wid] = dict(info, bet="insurance", amount=amount, at=None)
        extra = 0
        rnd.play_seats(_basic, under)
        if arrange and i >= arrange[0] and _arrange_dealer_blackjack(rnd, shoe):
            arrange.pop(0)
        if pending["dealer_extra_card"] and i >= start_at["dealer_extra_card"][0]:
            need_total, _ = rnd.needs()
            if need_total and len(shoe.cards) - shoe.pos > 10:
                extra = 1
        rnd.deal_dealer(extra)
        if extra:
            pending["dealer_extra_card"].pop(0)
            start_at["dealer_extra_card"].pop(0)
        nets, tags = rnd.settle()
        for c in rnd.cards:
            running += HILO[c]
        if dup is not None and dup[0] in rnd.cards:
            dup = (dup[0], dup[1] + rnd.cards.count(dup[0]))
            holding.append(i)
        rec, now = _record(ctx, f, rnd, open_ms, close_ms, who, nets, shoe_idx, order)
        meta = {"tags": tags, "extra": extra, "dup": None}
        if dup is not None and dup[1] >= decks + 1:
            meta["dup"] = (dup[0], ctx.events.shoe_ids[shoe_idx])
            ctx.protected.update(holding)  # other faults keep off the rounds holding the evidence
            dup = None
            pending["duplicate_in_shoe"].pop(0)
            start_at["duplicate_in_shoe"].pop(0)
        played.append((rec, rnd, meta))
    if shoe is not None:
        ev.one(now + f.integers(2000, 5000), R.SHOE_END, -1, NO_CARD, shoe_idx)
    for v in pending.values():
        ctx.leftover.extend(v)  # not placed (too few rounds left): the table runner counts them
    _plant_post(ctx, played, post)


def _arrange_dealer_blackjack(rnd: Round, shoe: Shoe) -> bool:
    """If a doubled or split hand is waiting on a dealer ace or ten, bring the card that makes the
    dealer's blackjack to the top of the shoe (a swap: the shoe keeps its cards)."""
    up = POINTS[rnd.up]
    if up not in (1, 10):
        return False
    if not any(s.doubled or not s.original for hs in rnd.hands.values() for h in hs for s in h.stakes
               if s.status == "live" and total(h.cards)[0] <= 21):
        return False
    want = 10 if up == 1 else 1
    for k in range(shoe.pos + 1, min(len(shoe.cards), shoe.pos + 60)):
        if POINTS[shoe.cards[k]] == want:
            shoe.cards[shoe.pos], shoe.cards[k] = shoe.cards[k], shoe.cards[shoe.pos]
            return True
    return False


def _plant_duplicate(rng, cards: np.ndarray, cut: int) -> tuple[int, int] | None:
    """Replace a card dealt before the cut with a card all of whose copies are dealt too (one copy too many)."""
    hi = cut - 20
    for _ in range(30):
        x = int(rng.integers(52))
        pos = np.flatnonzero(cards == x)
        if pos.min() >= 1 and pos.max() < hi:
            for _ in range(50):
                p = int(rng.integers(1, hi))
                if int(cards[p]) != x:
                    cards[p] = x
                    return (x, 0)
    return None


_MULTS = (0.5, 1, 1, 1, 1.5, 2)
_BACK_MULTS = (0.5, 1, 1, 2)


def _wagers(ctx, f, open_ms, close_ms, live, back_sessions, running, left, pending, start_at, i):
    """The round's main and pair wagers, in placing order, with who placed them."""
    t = ctx.table
    lim = t.limits
    sp = ctx.specials
    mains: list[tuple[str, int, int]] = []
    pairs: list[tuple[str, int, int]] = []
    who: dict[str, dict] = {}
    placed: list[tuple[int, str]] = []
    under: set[str] = set()
    seen_seats: set[int] = set()
    window_s = (close_ms - open_ms) // 1000
    for s in live:
        if s.seat in seen_seats:
            continue
        if f.random() < s.profile.p_sit_out:
            continue
        seen_seats.add(s.seat)
        if s.role == "counter":
            tc = running / max(0.5, left / 52)
            strength = sp.behaviours.counter
            units = min(max(1 + strength * 2.75 * (tc - 1), 1), 1 + 11 * strength)
            ctx.count("counter_rounds")
            ctx.stats["counter_max_units"] = max(ctx.stats.get("counter_max_units", 0), int(round(units)))
            amount = chip(units * s.profile.unit * lim.min, lim.min, lim.max // 2)
        else:
            amount = chip(s.profile.unit * lim.min * f.choice(_MULTS), lim.min, lim.max // 2)
        at = open_ms + f.integers(1, max(2, window_s - 3)) * 1000
        wid = ctx.next_wager_id()
        placed.append((at, wid))
        who[wid] = {"seat": s.seat, "player": s.player_id, "bet": "main", "amount": amount, "at": at, "wid": wid,
                    "hunch": s.profile.hunch, "role": s.role}
        if s.role != "counter" and f.random() < s.profile.p_side:
            pid = ctx.next_wager_id()
            pamount = chip(amount * f.uniform(0.1, 0.4), lim.side_min, lim.side_max)
            placed.append((at + 1000, pid))
            who[pid] = {"seat": s.seat, "player": s.player_id, "bet": "pair", "amount": pamount, "at": at + 1000,
                        "wid": pid, "hunch": False, "role": s.role}
    for s in back_sessions:
        if not (s.start_ms <= open_ms < s.end_ms) or f.random() < 0.3:
            continue
        n_on_seat = sum(1 for w in who.values() if w["seat"] == s.seat and w["bet"] == "main")
        if n_on_seat >= ctx.ruleset.params.max_wagers_per_seat:
            continue
        amount = chip(s.profile.unit * lim.min * f.choice(_BACK_MULTS), lim.min, lim.max // 2)
        at = close_ms - f.integers(1, 4) * 1000
        wid = ctx.next_wager_id()
        placed.append((at, wid))
        who[wid] = {"seat": s.seat, "player": s.player_id, "bet": "main", "amount": amount, "at": at, "wid": wid,
                    "hunch": False, "role": "back"}
    if not any(w["bet"] == "main" for w in who.values()):  # a walk-in: the table does not deal to nobody
        wid = ctx.next_wager_id()
        at = open_ms + f.integers(1, 6) * 1000
        placed.append((at, wid))
        who[wid] = {"seat": f.integers(1, t.seats + 1), "player": None, "bet": "main",
                    "amount": chip(lim.min * f.uniform(1, 3), lim.min, lim.max // 2), "at": at, "wid": wid,
                    "hunch": False, "role": ""}
    placed.sort()
    # a wager below the table minimum, once (a planted limit breach; it will neither double nor split)
    if pending["under_min"] and i >= start_at["under_min"][0] and lim.min > CHIP:
        first_main = next(w for _, w in placed if who[w]["bet"] == "main")
        who[first_main]["amount"] = (lim.min - CHIP) // CHIP * CHIP
        under.add(first_main)
        pending["under_min"].pop(0)
        start_at["under_min"].pop(0)
    for _, wid in placed:
        w = who[wid]
        (mains if w["bet"] == "main" else pairs).append((wid, w["seat"], w["amount"]))
    # a pair wager needs a main wager on its seat
    seats_with_main = {s for _, s, _ in mains}
    pairs = [p for p in pairs if p[1] in seats_with_main]
    return mains, pairs, who, [wid for _, wid in placed if who[wid]["bet"] == "main" or who[wid]["seat"] in seats_with_main], under


def _record(ctx, f, rnd: Round, open_ms, close_ms, who, nets, shoe_idx, order):
    """Timestamps for the cards and decisions, the device's card events, and the table's round record."""
    cards = rnd.cards
    actions = rnd.actions
    n_cards = len(cards)
    u = f.take(n_cards + 2 * len(actions) + 3)
    t = close_ms + 800 + int(u[0] * 1200)
    card_ts = []
    action_ts = []
    k = 0  # next action
    j = 1  # next uniform
    for c in range(n_cards + 1):
        while k < len(actions) and actions[k][4] == c:  # decisions made before card c
            t += 1000 + int(u[j] * 3000)
            action_ts.append(t)
            t += 400 + int(u[j + 1] * 800)
            j += 2
            k += 1
        if c < n_cards:
            card_ts.append(t)
            t += 1200 + int(u[j] * 1000)
            j += 1
    settled = -(-(t + 4000 + int(u[j] * 4000)) // 1000) * 1000
    rec = RoundRec(ctx.counters.round_no, ctx.events.shoe_ids[shoe_idx], ctx.dealer_at(open_ms),
                   open_ms, close_ms, settled, "settled", rnd.outcome(), None, [], [], card_ts[0] if card_ts else 0)
    ctx.counters.round_no += 1
    ctx.events.many(card_ts, R.CARD, rec.round_no, cards, shoe_idx)
    wagers = rec.wagers
    for wid in order:
        w = who[wid]
        net = nets[wid]
        wagers.append(WagerRec(wid, w["seat"], w["player"], w["bet"], w["amount"], w["at"], net, net))
    ins_at = []
    for (seat, hand, action, amount, _), ts in zip(actions, action_ts):
        ts = -(-ts // 1000) * 1000
        rec.actions.append(ActionRec(seat, hand, action, amount, ts))
        if action == "insurance":  # the insurance wager is placed when the decision is made
            ins_at.append(ts)
    for (wid, seat, amount), ts in zip(rnd.insurance, ins_at):
        wagers.append(WagerRec(wid, seat, who[wid]["player"], "insurance", amount, ts, nets[wid], nets[wid]))
    now = settled + 1000 + int(u[-1] * 4) * 1000
    return rec, now


# ---- the blackjack faults -------------------------------------------------------------------------


def _plant_post(ctx: DayContext, played, post) -> None:
    rng = ctx.rng
    for k, (rec, rnd, meta) in enumerate(played):
        ctx.rounds.append(rec)
        if k in ctx.protected:
            rec.faulted = True
        if meta["dup"] is not None:
            x, sid = meta["dup"]
            rec.faulted = True
            ctx.add_truth("card_integrity", rec, f"duplicate_in_shoe: copy {ctx.table.decks + 1} of {card_text(x)} in the "
                          f"{ctx.table.decks}-deck shoe {sid}; nobody noticed, settled as dealt")
        if meta["extra"]:
            rec.faulted = True
            ctx.add_truth("drawing_rule_violation", rec, f"dealer_extra_card: the dealer drew {card_text(rnd.shoe.cards[rnd.shoe.pos - 1])} "
                          f"after standing on {total(rnd.dealer)[0]} (BJ-4.14.3, 7.3); settled on the right cards")
    for rec, _, meta in played:
        for w in rec.wagers:
            if w.bet == "main" and w.amount < ctx.table.limits.min:  # planted before the play: always recorded
                rec.faulted = True
                ctx.add_truth("limit_breach", rec, f"under_min: main {w.amount} below the table minimum "
                              f"{ctx.table.limits.min}; settled in full: {w.net}", wager=w)
    for ticket in post:
        want = {"blackjack_paid_even": "blackjack", "double_lost_to_dealer_blackjack": "dealer_bj_returned",
                "surrender_collected_in_full": "surrender"}.get(ticket.variant)
        if want is None:
            ctx.leftover.append(ticket)
            continue
        options = [(rec, w) for rec, _, meta in played if not rec.faulted
                   for w in rec.wagers if w.bet == "main" and want in meta["tags"].get(w.wager_id, ())]
        if not options:
            ctx.count("unplaced_" + ticket.variant)
            continue
        rec, w = options[int(rng.integers(len(options)))]
        rec.faulted = True
        if want == "blackjack":
            w.net = w.amount
            what = "blackjack paid 1:1 (BJ-5.1 pays 3:2)"
        elif want == "dealer_bj_returned":
            w.net = _risked_total(played, rec, w.wager_id)
            what = "the doubled or split stake collected on a dealer blackjack (BJ-4.9.5, 4.10.8: original wager only)"
        else:
            w.net = -w.amount
            what = "surrendered wager collected in full (BJ-4.12.1: half returned)"
        ctx.add_truth("payout_mismatch", rec, f"{ticket.variant}: {what}: recorded {w.net}, rules {w.expected}", wager=w)


def _risked_total(played, rec, wid: str) -> int:
    for r, rnd, _ in played:
        if r is rec:
            return -sum(s.amount + s.doubled for hs in rnd.hands.values() for h in hs for s in h.stakes if s.wager_id == wid)
    raise KeyError(wid)
