"""One Hold'em Bonus table's gaming day: a fresh deck per round, both deal modes, a simple strategy.

Each round is a new single-deck shoe (its own ``shoe_id``, ``shoe_start`` with ``decks`` 1 and
``shoe_end``), dealt in the order the rule set's procedure gives for the table's deal mode
(``params.shoe_deal`` / ``params.device_deal``: burns only where the procedure has them). Players
play the flop with a pair, any ace, any jack or better, any suited cards or offsuit connectors,
and fold the rest (about a quarter of hands); they bet the turn and the river with a made hand (a pair using a hole card, or a
straight or flush), and check otherwise. When every seat folds at a card-shoe table, the dealer
stops dealing (unless a jackpot wager still needs the community cards).

Every round of the day is settled at once by ``rulebook.holdem_bonus.vector.settle_many`` (the
engine's batch path, equal to ``engine.settle_round`` round by round, its tests prove).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from pipelines.simulate import records as R
from pipelines.simulate.config import JACKPOT_CONTRIBUTION, JACKPOT_SEED, PROGRESSIVE_WAGER
from pipelines.simulate.context import DayContext, chip
from pipelines.simulate.records import ActionRec, RoundRec, WagerRec
from rulebook.cards import NO_CARD, card_text
from rulebook.holdem_bonus.hands import bonus_line
from rulebook.holdem_bonus.params import stated
from rulebook.holdem_bonus.vector import settle_many
from rulebook.money import Odds
from rulebook.round import Action, DeviceCard, Limits, RoundInput, Wager

_POKER_VALUE = [12] + list(range(12))  # rank index -> 2..A as 0..12


def plays_flop(c1: int, c2: int) -> bool:
    """Pre-flop: play a pair, any ace, any jack or better, any suited cards, offsuit connectors from 5-4 up; fold the rest (about a quarter of hands)."""
    r1, r2 = c1 >> 2, c2 >> 2
    if r1 == r2 or r1 == 0 or r2 == 0:
        return True
    hi, lo = max(_POKER_VALUE[r1], _POKER_VALUE[r2]), min(_POKER_VALUE[r1], _POKER_VALUE[r2])
    if hi >= 9 or (c1 & 3) == (c2 & 3):
        return True
    return hi - lo <= 2 and lo >= 3


_STRAIGHTS = tuple(0b11111 << lo for lo in range(9)) + (0b1000000001111,)  # by 13-bit value mask, the wheel last


def made_hand(hole: tuple[int, int], board: list[int]) -> bool:
    """A pair or better that uses a hole card, or a straight or flush among the cards seen."""
    h1, h2 = hole[0] >> 2, hole[1] >> 2
    if h1 == h2:
        return True
    for c in board:
        r = c >> 2
        if r == h1 or r == h2:
            return True
    suits = [0, 0, 0, 0]
    mask = 0
    for c in (hole[0], hole[1], *board):
        suits[c & 3] += 1
        mask |= 1 << _POKER_VALUE[c >> 2]
    if max(suits) >= 5:
        return True
    return any(mask & s == s for s in _STRAIGHTS)


@dataclass
class SeatBets:
    seat: int
    player: str | None
    ante: int
    bonus: int
    progressive: int
    ante_at: int
    hunch: bool
    ids: dict[str, str] = field(default_factory=dict)


@dataclass
class Played:
    """One round as dealt and decided (before settlement)."""

    rec: RoundRec
    seats: list[SeatBets]
    events: list[tuple[int, bool, int]]  # (code, is_burn, ts)
    hole: dict[int, tuple[int, int]]
    community: list[int]
    dealer: list[int]
    folded: set[int]
    forced_fold: int | None = None
    duplicate: tuple[int, int] | None = None  # (event index, original code) replaced by a copy


def _procedure(params, mode: str) -> tuple[tuple[str, int], ...]:
    """The deal procedure as (kind, count) steps."""
    return tuple((st.partition(":")[0], int(st.partition(":")[2] or 1)) for st in params.deal(mode)[0])


def simulate_day(ctx: DayContext) -> None:
    rng = ctx.rng
    t = ctx.table
    lim = t.limits
    params = ctx.ruleset.params
    mode = t.deal_mode
    procedure = _procedure(params, mode)
    n = ctx.day.n_rounds
    tickets = list(ctx.day.tickets)
    pre_kinds = ("folded_bonus_paid", "duplicate_in_deck", "under_min")
    pending = {k: [x for x in tickets if x.variant == k] for k in pre_kinds}
    f = ctx.fast
    start_at = {k: sorted(f.integers(0, max(1, n - 20)) for _ in v) for k, v in pending.items()}
    post = [x for x in tickets if x.variant not in pre_kinds]
    sessions = list(ctx.day.sessions)
    progressive = params.progressive is not None
    if progressive and ctx.counters.jackpot_meter == 0:
        ctx.counters.jackpot_meter = JACKPOT_SEED + f.integers(0, 20) * 100_000
    now = ctx.day.open_ms
    played: list[Played] = []
    live: list = []
    nxt = 0
    decks = rng.permuted(np.tile(np.arange(52), (n, 1)), axis=1).tolist()  # a fresh shuffled deck per round
    for i in range(n):
        open_ms = now
        close_ms = open_ms + f.integers(15, 26) * 1000
        while nxt < len(sessions) and sessions[nxt].start_ms <= open_ms:
            live.append(sessions[nxt])
            nxt += 1
        live = [s for s in live if s.end_ms > open_ms]
        seats = _bets(ctx, f, live, open_ms, close_ms, progressive, pending, start_at, i)
        deck = decks[i]
        dup = None
        if pending["duplicate_in_deck"] and i >= start_at["duplicate_in_deck"][0]:
            dup = True
            pending["duplicate_in_deck"].pop(0)
            start_at["duplicate_in_deck"].pop(0)
        p = _deal_and_decide(ctx, f, procedure, mode, deck, seats, open_ms, close_ms, pending, start_at, i, params, dup)
        played.append(p)
        now = p.rec.settled_ms + f.integers(3, 9) * 1000
    _settle(ctx, played, params, mode, progressive)
    for p in played:
        ctx.rounds.append(p.rec)
    for v in pending.values():
        ctx.leftover.extend(v)
    _plant_post(ctx, played, post, params)
    _emit(ctx, played)


_MULTS = (0.5, 1, 1, 1, 2)


def _bets(ctx, f, active, open_ms, close_ms, progressive, pending, start_at, i) -> list[SeatBets]:
    t = ctx.table
    lim = t.limits
    seen: set[int] = set()
    out: list[SeatBets] = []
    window_s = (close_ms - open_ms) // 1000
    for s in active:
        if s.seat in seen or f.random() < s.profile.p_sit_out:
            continue
        seen.add(s.seat)
        ante = chip(s.profile.unit * lim.min * f.choice(_MULTS), lim.min, lim.max // 2)
        bonus = chip(ante * f.uniform(0.2, 1.0), lim.side_min, lim.side_max) if f.random() < 0.3 + s.profile.p_side else 0
        prog = PROGRESSIVE_WAGER if progressive and f.random() < s.profile.p_progressive else 0
        at = open_ms + f.integers(1, max(2, window_s - 3)) * 1000
        out.append(SeatBets(s.seat, s.player_id, ante, bonus, prog, at, s.profile.hunch))
    if not out:  # a walk-in: the table does not deal to nobody
        ante = chip(lim.min * f.uniform(1, 3), lim.min, lim.max // 2)
        out.append(SeatBets(f.integers(1, t.seats + 1), None, ante, 0, 0, open_ms + 2000, False))
    if pending["under_min"] and i >= start_at["under_min"][0] and lim.min > 500:
        out[0].ante = (lim.min - 500) // 500 * 500
        pending["under_min"].pop(0)
        start_at["under_min"].pop(0)
    out.sort(key=lambda b: b.seat)
    return out


def _deal_and_decide(ctx, f, procedure, mode, deck, seats, open_ms, close_ms, pending, start_at, i, params, dup) -> Played:
    """Walk the deal procedure over the deck, with the players' decisions where they fall in time."""
    seat_nos = [b.seat for b in seats]
    hole_cards: dict[int, list[int]] = {s: [] for s in seat_nos}
    community: list[int] = []
    dealer: list[int] = []
    events: list[tuple[int, bool, int]] = []
    actions: list[ActionRec] = []
    folded: set[int] = set()
    decided = {"pre": False, "turn": False, "river": False}
    pos = 0
    u = f.take(len(deck))  # one uniform per card dealt (at most the deck) for the gaps between cards
    t = close_ms + 600 + int(u[-1] * 900)
    any_progressive = any(b.progressive for b in seats)
    forced = None
    gap_lo, gap_width = (700, 700) if mode == "shoe" else (300, 400)

    def card(is_burn: bool) -> int:
        nonlocal pos, t
        c = deck[pos]
        events.append((c, is_burn, t))
        t += gap_lo + int(u[pos] * gap_width)
        pos += 1
        return c

    def decide(street: str) -> None:
        nonlocal t, forced
        for b in seats:
            s = b.seat
            if s in folded or (street != "pre" and s not in played_flop):
                continue
            t += 3000 + int(f.random() * 7000) if street == "pre" else 2000 + int(f.random() * 4000)
            ts = -(-t // 1000) * 1000
            hole = tuple(hole_cards[s])
            if street == "pre":
                play = plays_flop(*hole)
                if f.random() < 0.03:
                    play = not play  # now and then a player follows a hunch
                if pending["folded_bonus_paid"] and i >= start_at["folded_bonus_paid"][0] and b.bonus and \
                        bonus_line(params.bonus_pay_table, hole, None) is not None and forced is None:
                    play, forced = False, s  # a qualifying Bonus hand folded (the dealer will pay the Bonus anyway)
                if play:
                    played_flop.add(s)
                    actions.append(ActionRec(s, 1, "flop", 2 * b.ante, ts))
                else:
                    folded.add(s)
                    actions.append(ActionRec(s, 1, "fold", None, ts))
            else:
                seen = community[:3] if street == "turn" else community[:4]
                bet = made_hand(hole, seen)
                actions.append(ActionRec(s, 1, street if bet else "check", b.ante if bet else None, ts))
        t += 1000 + int(f.random() * 2000)

    played_flop: set[int] = set()
    stopped = False
    steps = procedure
    for j, (kind, k) in enumerate(steps):
        # with a card shoe the decisions come before the community cards they precede (and before their burn)
        leads_to_community = kind == "community" or (kind == "burn" and j + 1 < len(steps) and steps[j + 1][0] == "community")
        if mode == "shoe" and leads_to_community and hole_cards[seat_nos[0]] and len(hole_cards[seat_nos[0]]) == 2:
            street = {0: "pre", 3: "turn", 4: "river"}.get(len(community))
            if street and not decided[street]:
                decide(street)
                decided[street] = True
                if street == "pre" and not played_flop and not any_progressive:
                    stopped = True  # every seat folded: the deal ends here
                    break
        if kind == "burn":
            card(True)
        elif kind == "seats":
            for _ in range(k):
                for s in seat_nos:
                    hole_cards[s].append(card(False))
        elif kind == "community":
            for _ in range(k):
                community.append(card(False))
        elif kind == "dealer":
            if mode == "shoe":  # any decision left comes before the dealer's cards (MBS: all five community first)
                for street in ("pre", "turn", "river"):
                    if not decided[street]:
                        decide(street)
                        decided[street] = True
            for _ in range(k):
                dealer.append(card(False))
    if mode == "device" and not stopped:
        for street in ("pre", "turn", "river"):
            decide(street)
    if forced is not None:
        pending["folded_bonus_paid"].pop(0)
        start_at["folded_bonus_paid"].pop(0)
    duplicate = None
    if dup:
        dealt = [k for k, (c, burn, _) in enumerate(events) if not burn]
        a = f.integers(0, len(dealt))
        b = (a + f.integers(1, len(dealt))) % len(dealt)
        ka, kb = dealt[a], dealt[b]
        duplicate = (kb, events[kb][0])
        events[kb] = (events[ka][0], False, events[kb][2])  # the deck held this card twice
    settled = -(-(t + f.integers(8000, 18000)) // 1000) * 1000
    shoe_id = ctx.next_shoe_id()
    rec = RoundRec(ctx.counters.round_no, shoe_id, ctx.dealer_at(open_ms), open_ms, close_ms, settled,
                   first_card_ms=events[0][2] if events else 0)
    ctx.counters.round_no += 1
    rec.actions = actions
    wid = ctx.next_wager_id
    wagers = rec.wagers
    for b in seats:
        b.ids["ante"] = w_id = wid()
        wagers.append(WagerRec(w_id, b.seat, b.player, "ante", b.ante, b.ante_at, 0, 0))
        if b.bonus:
            b.ids["bonus"] = w_id = wid()
            wagers.append(WagerRec(w_id, b.seat, b.player, "bonus", b.bonus, b.ante_at + 1000, 0, 0))
        if b.progressive:
            b.ids["progressive"] = w_id = wid()
            wagers.append(WagerRec(w_id, b.seat, b.player, "progressive", b.progressive, b.ante_at + 1000, 0, 0))
    by_seat = {b.seat: b for b in seats}
    for a in actions:  # the Flop, Turn and River wagers go down when the decisions are made
        if a.action in ("flop", "turn", "river"):
            b = by_seat[a.seat]
            b.ids[a.action] = w_id = wid()
            wagers.append(WagerRec(w_id, a.seat, b.player, a.action, a.amount, a.ts_ms, 0, 0))
    rec.wagers.sort(key=lambda w: w.placed_ms)
    hole = {s: tuple(v) for s, v in hole_cards.items() if len(v) == 2}
    return Played(rec, seats, events, hole, community, dealer, folded, forced, duplicate)


_DEVICE_CARDS = {(c, b): DeviceCard(c, b) for c in range(52) for b in (False, True)}


def _as_the_table_plays(ruleset):
    """The rule set with every jackpot amount the text leaves open (the guide's Bonus Jackpot) at 0: a
    simulated table does not offer what its rule set does not state. The audit, reading the shipped
    rule set, leaves the wagers such an amount decides unsettled (docs/interpretations/holdem_bonus.md)."""
    prog = ruleset.params.progressive
    if prog is None or (stated(prog.envy_royal_flush) and stated(prog.envy_straight_flush)):
        return ruleset
    envy = {k: (v if stated(v) else 0) for k, v in (("envy_royal_flush", prog.envy_royal_flush), ("envy_straight_flush", prog.envy_straight_flush))}
    params = dataclasses.replace(ruleset.params, progressive=dataclasses.replace(prog, **envy))
    return dataclasses.replace(ruleset, params=params)


def _round_input(ctx: DayContext, p: Played, params, mode: str, ruleset=None) -> RoundInput:
    lim = ctx.table.limits
    return RoundInput(
        ruleset=ruleset or ctx.ruleset,
        cards=tuple(_DEVICE_CARDS[(c, burn)] for c, burn, _ in p.events),
        wagers=tuple(Wager(w.wager_id, w.seat, w.bet, w.amount, w.player_id) for w in p.rec.wagers),
        actions=tuple(Action(a.seat, a.hand, a.action, a.amount, a.wager_ids) for a in p.rec.actions),
        deal_mode=mode,
        decks=1,
        jackpot_meter=p.rec.jackpot_meter,
        currency=ctx.table.currency,
        limits=Limits(lim.min, lim.max, lim.differential, lim.side_min, lim.side_max),
    )


def _settle(ctx: DayContext, played: list[Played], params, mode: str, progressive: bool) -> None:
    """Settle the day's rounds in one batch; a jackpot paid from the meter resets it, and the rounds after are re-settled."""
    start = 0
    while start < len(played):
        meter = ctx.counters.jackpot_meter
        num, den = JACKPOT_CONTRIBUTION
        for p in played[start:]:
            if progressive:
                meter += sum(w.amount for w in p.rec.wagers if w.bet == "progressive") * num // den
                p.rec.jackpot_meter = meter
        table_rules = _as_the_table_plays(ctx.ruleset)
        results = settle_many([_round_input(ctx, p, params, mode, table_rules) for p in played[start:]])
        reset_at = None
        for k, (p, res) in enumerate(zip(played[start:], results)):
            if p.duplicate is not None:  # the table counted the cards and voided the round (HTB-7.7, MBS-5.2)
                p.rec.status = "void"
                p.rec.recorded_result = None
                continue
            if res.unsettled:
                raise AssertionError(f"a clean Hold'em round could not be settled: {res.unsettled}")
            for w in p.rec.wagers:
                w.net = w.expected = res.settlements[w.wager_id].net
            out = res.outcome or {}
            p.rec.recorded_result = {key: out[key] for key in ("dealer_hand", "community") if key in out} or None
            if progressive and reset_at is None and any(
                    w.bet == "progressive" and w.net >= p.rec.jackpot_meter // 20 for w in p.rec.wagers):
                reset_at = start + k  # a percentage of the meter was paid: it restarts from its seed
        if reset_at is None:
            ctx.counters.jackpot_meter = meter if progressive else 0
            break
        ctx.counters.jackpot_meter = JACKPOT_SEED
        start = reset_at + 1
        ctx.count("jackpot_resets")


# ---- the Hold'em faults --------------------------------------------------------------------------


def _plant_post(ctx: DayContext, played: list[Played], post, params) -> None:
    rng = ctx.rng
    for p in played:
        rec = p.rec
        if p.duplicate is not None:
            rec.faulted = True
            k, original = p.duplicate
            ctx.add_truth("card_integrity", rec, f"duplicate_in_deck: {card_text(p.events[k][0])} dealt twice from the "
                          f"single deck (card {k + 1} should have been {card_text(original)}); the table voided the round "
                          f"(HTB-7.7, MBS-5.2)")
        if p.forced_fold is not None and not rec.faulted:
            w = next((w for w in rec.wagers if w.seat == p.forced_fold and w.bet == "bonus"), None)
            line = bonus_line(params.bonus_pay_table, p.hole[p.forced_fold], tuple(p.dealer) if len(p.dealer) == 2 else None)
            if w is not None and line is not None:
                rec.faulted = True
                w.net = Odds.parse(line.odds).win(w.amount)
                ctx.add_truth("payout_mismatch", rec, f"folded_bonus_paid: the Bonus of a folded hand paid {line.odds} "
                              f"({line.hand}): recorded {w.net}, rules {w.expected} ({line.clause}; a fold loses the Bonus)",
                              wager=w)
    for rec_p in played:
        for w in rec_p.rec.wagers:
            if w.bet == "ante" and w.amount < ctx.table.limits.min:  # planted before the play: always recorded
                rec_p.rec.faulted = True
                ctx.add_truth("limit_breach", rec_p.rec, f"under_min: Ante {w.amount} below the table minimum "
                              f"{ctx.table.limits.min}; settled in full: {w.net} (HTB-7.10)", wager=w)
    lines = list(params.bonus_pay_table)
    for ticket in post:
        if ticket.variant == "ante_paid_below_qualifier":
            options = []
            for p in played:
                if p.rec.faulted or p.rec.status != "settled":
                    continue
                by = {(w.seat, w.bet): w for w in p.rec.wagers}
                for b in p.seats:
                    a, f = by.get((b.seat, "ante")), by.get((b.seat, "flop"))
                    if a is not None and f is not None and a.expected == 0 and f.expected > 0:
                        options.append((p.rec, a))
            if not options:
                ctx.count("unplaced_" + ticket.variant)
                continue
            rec, w = options[int(rng.integers(len(options)))]
            rec.faulted = True
            w.net = w.amount
            ctx.add_truth("payout_mismatch", rec, f"ante_paid_below_qualifier: the Ante paid 1:1 on a win below the "
                          f"{params.ante_qualifier} qualifier: recorded {w.net}, rules {w.expected} ({params.ante_qualifier_clause})",
                          wager=w)
        elif ticket.variant == "bonus_wrong_line":
            options = [(p.rec, w) for p in played if not p.rec.faulted and p.rec.status == "settled"
                       for w in p.rec.wagers if w.bet == "bonus" and w.expected > 0]
            if not options:
                ctx.count("unplaced_" + ticket.variant)
                continue
            rec, w = options[int(rng.integers(len(options)))]
            paid = [Odds.parse(line.odds) for line in lines]
            right = next(k for k, o in enumerate(paid) if o.win(w.amount) == w.expected)
            lower = paid[right + 1] if right + 1 < len(paid) else Odds(1, 1)
            rec.faulted = True
            w.net = lower.win(w.amount)
            ctx.add_truth("payout_mismatch", rec, f"bonus_wrong_line: a {lines[right].hand} Bonus paid {lower} instead of "
                          f"{lines[right].odds}: recorded {w.net}, rules {w.expected} ({lines[right].clause})", wager=w)
        else:
            ctx.leftover.append(ticket)


def _emit(ctx: DayContext, played: list[Played]) -> None:
    """The device's events: per round a fresh single-deck shoe, its cards and burns in deal order."""
    ev = ctx.events
    for p in played:
        shoe = ev.new_shoe(p.rec.shoe_id)
        first = p.events[0][2] if p.events else p.rec.close_ms + 500
        last = p.events[-1][2] if p.events else first
        ev.one(first - 400, R.SHOE_START, -1, NO_CARD, shoe, 1)
        rno = p.rec.round_no
        for code, burn, ts in p.events:
            ev.one(ts, R.BURN if burn else R.CARD, rno, code, shoe)
        ev.one(min(last + 1500, p.rec.settled_ms - 500), R.SHOE_END, -1, NO_CARD, shoe)
