"""One baccarat table's gaming day, vectorised: shoes, rounds, timings, wagers, settlements.

Baccarat is most of a floor's rounds, so nothing here loops per card: every shoe is shuffled and
cut into rounds by ``rulebook.baccarat.vector.deal_shoe`` (8 decks, a burn of one card plus its
value, a cut card 14-30 cards from the back, one hand after the cut card shows), every round is
resolved and every wager settled by ``rulebook.baccarat.vector`` (the arrays form of the engine,
proved equal to the scalar engine by its own tests), and timings, sessions and bets are numpy
operations over all rounds of the day. The baccarat faults (wrong payouts, limit and
differential breaches, an extra third card, a wrong announced result, a wager on a Free Hand, a
duplicated card in a shoe) are planted here because they need the resolved rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pipelines.simulate import records as R
from pipelines.simulate.config import CHIP
from pipelines.simulate.context import DayContext, chips, sessions_per_round
from pipelines.simulate.records import RoundRec, WagerRec
from rulebook.baccarat import vector as V
from rulebook.cards import NO_CARD, card_text
from rulebook.money import Odds

SIDE_BETS = ("tie", "player_pair", "banker_pair", "tiger", "small_tiger", "big_tiger")
SIDE_P = np.array([0.30, 0.20, 0.20, 0.15, 0.08, 0.07])
SIDE_CODES = np.array([V.BET_CODES[b] for b in SIDE_BETS], dtype=np.int8)
SIDE_ORDER = np.argsort(SIDE_CODES)  # column in SIDE_BETS order of each code, sorted by code
SIDE_ORDER_BY_CODE = SIDE_CODES[SIDE_ORDER]
BET_NAMES = tuple(V.BET_CODES)  # code -> name
_VALUE = np.array([(r + 1) if r < 9 else 0 for r in range(13) for _ in range(4)], dtype=np.int64)
FREE_HAND_RATE = 1 / 1500  # a card exposed in error makes the next hand a Free Hand (TBAC-7.5-7.8)
VOID_RATE = 1 / 4000  # a misdeal the table voided (TBAC-7.3): wagers returned


class DaySettler:
    """Every settlement of a day from one call to ``rulebook.baccarat.vector.settle``.

    The day's wagers and a grid of every (round, bet) pair go through ``vector.settle`` together
    (its lookup tables are built once per call, so one call a day is what keeps it cheap). A fault
    that changes an amount later settles it from the grid's reason and the rule set's pay line,
    with ``rulebook.money`` (the scalar definition of a win at odds); the clean-night test
    re-settles every wager with the scalar engine, so any disagreement shows.
    """

    def __init__(self, coups: V.Coups, params, w_r: np.ndarray, w_bet: np.ndarray, w_amt: np.ndarray):
        n = len(coups)
        m = len(w_r)
        nb = len(V.BET_CODES)
        ri = np.concatenate([w_r, np.repeat(np.arange(n), nb)])
        bet = np.concatenate([w_bet.astype(np.int64), np.tile(np.arange(nb), n)])
        amt = np.concatenate([w_amt, np.zeros(n * nb, dtype=np.int64)])
        net, reason = V.settle(coups, ri, bet, amt, params)
        self.net, self.reason = net[:m], reason[:m]
        self.grid = reason[m:].reshape(n, nb)
        self.params = params
        self.effect, self.num, self.den = V.payout_table(params)

    def one(self, i: int, bet: str, amount: int) -> int:
        r = int(self.grid[i, V.BET_CODES[bet]])
        if V.UNSETTLED_MASK[r]:
            raise AssertionError("a planted wager on a round the cards cannot settle")
        effect = int(self.effect[r])
        if effect == 1:
            return Odds(int(self.num[r]), int(self.den[r])).win(amount, self.params.rounding, self.params.rounding_unit)
        return -amount if effect == -1 else 0


@dataclass
class BaccaratDay:
    """The resolved rounds of a day, kept for the faults that need them."""

    ctx: DayContext
    cards: np.ndarray  # (n, 6) int16, NO_CARD padded
    ncards: np.ndarray  # (n,)
    card_ts: np.ndarray  # (n, 6) int64
    coups: V.Coups
    cls: np.ndarray  # result class (V.result_class)
    round_shoe: np.ndarray  # shoe id index per round
    spare: dict[int, list[int]]  # undealt cards per shoe index (for a card drawn in error)
    shoes: list[dict]  # per shoe: start ts, burns (ts, code), end ts
    extra: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # round -> [(code, ts)] beyond the rules
    settler: DaySettler | None = None
    open_ok: np.ndarray | None = None  # rounds a fault may still take (settled, with wagers, untouched)

    @property
    def recs(self) -> list[RoundRec]:
        return self.ctx.rounds


# ---- the day ------------------------------------------------------------------------------------


def simulate_day(ctx: DayContext) -> None:
    """Deal, time, bet and settle every round of the day, plant the baccarat faults, emit the events."""
    bd = _deal_and_time(ctx)
    _bet_and_settle(bd)
    tickets = list(ctx.day.tickets)
    for t in tickets:
        if t.variant == "duplicate_in_shoe":
            continue  # planted while the shoes were dealt
        planter = PLANTERS.get(t.variant)
        if planter is None or not planter(bd):
            ctx.leftover.append(t)
    _emit_events(bd)


def _burn_count(first: int) -> int:
    """The burn: the first card is turned over and that many more burned (ten and court cards count 10)."""
    rank = first // 4
    return 1 + (rank + 1 if rank < 9 else 10)


def _deal_and_time(ctx: DayContext) -> BaccaratDay:
    rng = ctx.rng
    t = ctx.table
    params = ctx.ruleset.params
    decks = t.decks
    n = ctx.day.n_rounds
    dup_tickets = [k for k in ctx.day.tickets if k.variant == "duplicate_in_shoe"]
    cards = np.full((n, 6), NO_CARD, dtype=np.int16)
    ncards = np.zeros(n, dtype=np.int64)
    round_shoe = np.zeros(n, dtype=np.int64)
    opens = np.zeros(n, dtype=np.int64)
    closes = np.zeros(n, dtype=np.int64)
    settles = np.zeros(n, dtype=np.int64)
    card_ts = np.zeros((n, 6), dtype=np.int64)
    spare: dict[int, list[int]] = {}
    shoes: list[dict] = []
    done = 0
    now = ctx.day.open_ms
    batch: list[tuple[np.ndarray, int, int, tuple | None, list[tuple[int, int]]]] = []
    while done < n:
        if not batch:
            batch = _shuffle_and_deal(rng, decks, max(2, (n - done) // 60 + 2), params.deal_order,
                                      dup_tickets if n - done >= 90 else [])
        shoe, burn_n, cut_at, dup, rounds = batch.pop(0)
        take = min(len(rounds), n - done)
        shoe_idx = ctx.events.new_shoe(ctx.next_shoe_id())
        # the device: shoe_start, burns one by one, then the rounds
        burn_ts = now + 3000 + np.cumsum(rng.integers(1200, 2000, burn_n))
        burn_codes = shoe[:burn_n].astype(np.int16).copy()
        if not t.reads_hidden_burns:
            burn_codes[1:] = NO_CARD  # only the exposed burn card is read
        first_open = int(burn_ts[-1]) + int(rng.integers(5000, 15000))
        first_open = -(-first_open // 1000) * 1000
        k = take
        sl = slice(done, done + k)
        lens = np.array([length for _, length in rounds[:k]], dtype=np.int64)
        starts = np.array([start for start, _ in rounds[:k]], dtype=np.int64)
        mask = np.arange(6)[None, :] < lens[:, None]
        idx = np.minimum(starts[:, None] + np.arange(6)[None, :], len(shoe) - 1)
        cards[sl] = np.where(mask, shoe[idx], NO_CARD)
        ncards[sl] = lens
        round_shoe[sl] = shoe_idx
        window = rng.integers(18, 29, k) * 1000
        first_delay = rng.integers(800, 2500, k)
        gaps = rng.integers(1200, 3500, (k, 6))
        gaps[:, 0] = 0
        rel_cards = window[:, None] + first_delay[:, None] + np.cumsum(gaps, axis=1)
        last = rel_cards[np.arange(k), lens - 1]
        rel_settle = -(-(last + rng.integers(6000, 12000, k)) // 1000) * 1000
        advance = rel_settle + rng.integers(2, 8, k) * 1000
        round_open = first_open + np.concatenate([[0], np.cumsum(advance[:-1])])
        opens[sl] = round_open
        closes[sl] = round_open + window
        settles[sl] = round_open + rel_settle
        card_ts[sl] = round_open[:, None] + rel_cards
        end_ts = int(settles[done + k - 1]) + int(rng.integers(2000, 5000))
        used = burn_n + int(lens.sum())
        spare[shoe_idx] = shoe[used:].astype(int).tolist()
        shoes.append({"idx": shoe_idx, "start": now, "burn_ts": burn_ts, "burn_codes": burn_codes, "end": end_ts,
                      "decks": decks})
        if dup is not None:
            _record_duplicate(ctx, dup, shoe, burn_n, [shoe[a:a + b] for a, b in rounds[:k]], done, shoe_idx, dup_tickets)
        done += k
        now = end_ts + int(rng.integers(240_000, 420_000))  # the shoe change
        now -= now % 1000
    coups = V.resolve(cards, ncards, deal_order=params.deal_order)
    bd = BaccaratDay(ctx, cards, ncards, card_ts, coups, V.result_class(coups), round_shoe, spare, shoes)
    bd.opens, bd.closes, bd.settles = opens, closes, settles  # type: ignore[attr-defined]
    return bd


def _shuffle_and_deal(rng, decks: int, count: int, deal_order, dup_tickets) -> list:
    """``count`` shoes shuffled, burned, cut and dealt into rounds: ``(shoe, burn, cut, duplicate, [(start, length)])``.

    The rounds are those of ``rulebook.baccarat.vector.deal_shoe`` (the same walk over the same
    ``required_at_each_card``), computed for all the shoes at once: the cards each position's round
    needs come from one vectorised pass over the shoes laid end to end, six empty cards apart.
    """
    size = 52 * decks
    perms = rng.permuted(np.tile(np.arange(52, dtype=np.int16), (count, decks)), axis=1)
    out = []
    for j in range(count):
        shoe = perms[j]
        burn_n = _burn_count(int(shoe[0]))
        cut_at = size - int(rng.integers(14, 31))
        dup = _plant_duplicate(rng, shoe, burn_n, cut_at, decks) if (j == 0 and dup_tickets) else None
        out.append((shoe, burn_n, cut_at, dup))
    gap = np.full((count, 6), NO_CARD, dtype=np.int16)
    laid = np.concatenate([perms, gap], axis=1).ravel()
    need = V.required_at_each_card(laid, deal_order).reshape(count, size + 6)[:, :size]
    return [(shoe, burn_n, cut_at, dup, V.walk_shoe(need[j], cut_at, burn_n)) for j, (shoe, burn_n, cut_at, dup) in enumerate(out)]


def _plant_duplicate(rng, shoe: np.ndarray, burn_n: int, cut_at: int, decks: int):
    """Make one card's copies exceed the decks: replace a card dealt before the cut with a card all of whose copies are dealt too."""
    hi = cut_at - 30
    positions = {c: np.flatnonzero(shoe == c) for c in range(52)}
    candidates = [c for c in range(52) if positions[c].min() >= burn_n and positions[c].max() < hi]
    if not candidates:
        return None
    x = int(candidates[int(rng.integers(len(candidates)))])
    for _ in range(50):
        p = int(rng.integers(burn_n, hi))
        if int(shoe[p]) != x:
            replaced = int(shoe[p])
            shoe[p] = x
            return (x, p, replaced)
    return None


def _record_duplicate(ctx: DayContext, dup, shoe, burn_n, rounds, first_round, shoe_idx, tickets) -> None:
    """Find the round that deals the copy beyond the decks; every round holding a copy is kept clear of
    other faults (an unread or unlogged copy would hide the evidence)."""
    x, p, replaced = dup
    copies = 0
    holding = []
    for i, r in enumerate(rounds):
        if any(int(c) == x for c in r):
            holding.append(first_round + i)
            copies += sum(1 for c in r if int(c) == x)
            if copies >= ctx.table.decks + 1:
                ctx.duplicates[first_round + i] = (x, replaced, ctx.events.shoe_ids[shoe_idx])
                ctx.protected.update(holding)
                tickets.pop(0)
                return


# ---- wagers ---------------------------------------------------------------------------------------


def _bet_and_settle(bd: BaccaratDay) -> None:
    ctx = bd.ctx
    rng = ctx.rng
    t = ctx.table
    lim = t.limits
    params = ctx.ruleset.params
    n = len(bd.ncards)
    opens, closes = bd.opens, bd.closes  # type: ignore[attr-defined]
    sessions = ctx.day.sessions
    status = np.zeros(n, dtype=np.int8)  # 0 settled, 1 void, 2 free hand
    u = rng.random(n)
    status[u < FREE_HAND_RATE] = 2
    status[(u >= FREE_HAND_RATE) & (u < FREE_HAND_RATE + VOID_RATE)] = 1

    r_idx, s_idx = sessions_per_round(ctx.day, opens)
    unit = np.array([s.profile.unit for s in sessions])[s_idx] if len(s_idx) else np.zeros(0)
    p_sit = np.array([s.profile.p_sit_out for s in sessions])[s_idx] if len(s_idx) else np.zeros(0)
    p_bank = np.array([s.profile.p_banker for s in sessions])[s_idx] if len(s_idx) else np.zeros(0)
    p_side = np.array([s.profile.p_side for s in sessions])[s_idx] if len(s_idx) else np.zeros(0)
    role = np.array([s.role for s in sessions], dtype=object)[s_idx] if len(s_idx) else np.zeros(0, object)
    play = rng.random(len(r_idx)) >= p_sit
    r_idx, s_idx, unit, p_bank, p_side, role = r_idx[play], s_idx[play], unit[play], p_bank[play], p_side[play], role[play]
    m = len(r_idx)
    window_s = (closes - opens) // 1000
    # main bets
    u = rng.random(m)
    main_code = np.where(u < 0.04, -1, np.where(u < 0.04 + 0.96 * p_bank, V.BET_BANKER, V.BET_PLAYER))
    mult = rng.choice(np.array([0.5, 1, 1, 1, 1.5, 2, 3]), m)
    main_amt = chips(unit * lim.min * mult, lim.min, lim.max)
    main_at = opens[r_idx] + rng.integers(1, np.maximum(2, window_s[r_idx] - 2)) * 1000
    # side bets
    has_side = (rng.random(m) < p_side) | (main_code < 0)
    side_code = SIDE_CODES[rng.choice(len(SIDE_BETS), m, p=SIDE_P)]
    lucky = role == "lucky"
    if lucky.any() and ctx.specials.behaviours.luck > 0:
        chosen, skip, won = _lucky_choice(bd, r_idx[lucky], side_code[lucky], ctx.specials.behaviours.luck, rng)
        side_code[lucky] = chosen
        at = np.flatnonzero(lucky)
        dropped = skip & (main_code[at] >= 0)  # a player with no main bet keeps the side bet (it is his only one)
        has_side[at[dropped]] = False
        placed = has_side[at]
        ctx.count("lucky_rounds", int(placed.sum()))
        ctx.count("lucky_wins", int((won & placed).sum()))
    side_base = np.where(main_code >= 0, main_amt * rng.uniform(0.1, 0.3, m), unit * lim.min * 0.3)
    side_amt = chips(side_base, lim.side_min, lim.side_max)
    side_at = np.minimum(main_at + rng.integers(0, 3, m) * 1000, closes[r_idx] - 1000)

    rows_r = [r_idx[main_code >= 0], r_idx[has_side]]
    rows_seat = [np.array([sessions[k].seat for k in s_idx[main_code >= 0]], dtype=np.int64),
                 np.array([sessions[k].seat for k in s_idx[has_side]], dtype=np.int64)]
    rows_sess = [s_idx[main_code >= 0], s_idx[has_side]]
    rows_bet = [main_code[main_code >= 0].astype(np.int8), side_code[has_side]]
    rows_amt = [main_amt[main_code >= 0], side_amt[has_side]]
    rows_at = [main_at[main_code >= 0], side_at[has_side]]

    # the drift table's big unrated bettor, who backs the winning side more often than chance allows
    if t.table_id == ctx.specials.drift_table:
        strength = ctx.specials.behaviours.drift
        rr = np.arange(n)
        informed = rng.random(n) < strength
        winner = bd.coups.winner
        guess = np.where(rng.random(n) < 0.5, V.BET_BANKER, V.BET_PLAYER)
        pick = np.where(informed & (winner == V.BANKER), V.BET_BANKER,
                        np.where(informed & (winner == V.PLAYER), V.BET_PLAYER, guess))
        rows_r.append(rr)
        rows_seat.append(rng.integers(1, t.seats + 1, n))
        rows_sess.append(np.full(n, -1))
        rows_bet.append(pick.astype(np.int8))
        rows_amt.append(chips(rng.uniform(8, 15, n) * lim.min, lim.min, lim.max))
        rows_at.append(closes - rng.integers(1, 4, n) * 1000)
        ctx.count("drift_rounds", int(informed.sum()))

    w_r = np.concatenate(rows_r)
    w_seat = np.concatenate(rows_seat)
    w_sess = np.concatenate(rows_sess)
    w_bet = np.concatenate(rows_bet).astype(np.int8)
    w_amt = np.concatenate(rows_amt).astype(np.int64)
    w_at = np.concatenate(rows_at).astype(np.int64)

    # a round nobody bet on gets a walk-in (a table does not deal to an empty layout)
    empty = np.setdiff1d(np.flatnonzero(status != 2), w_r)
    if len(empty):
        w_r = np.concatenate([w_r, empty])
        w_seat = np.concatenate([w_seat, rng.integers(1, t.seats + 1, len(empty))])
        w_sess = np.concatenate([w_sess, np.full(len(empty), -1)])
        w_bet = np.concatenate([w_bet, np.where(rng.random(len(empty)) < 0.6, V.BET_BANKER, V.BET_PLAYER).astype(np.int8)])
        w_amt = np.concatenate([w_amt, chips(lim.min * rng.uniform(1, 4, len(empty)), lim.min, lim.max)])
        w_at = np.concatenate([w_at, opens[empty] + rng.integers(1, 10, len(empty)) * 1000])

    keep = status[w_r] != 2  # a Free Hand has no wagers (TBAC-7.8)
    order = np.lexsort((np.arange(len(w_r)), w_at, w_r))
    order = order[keep[order]]
    w_r, w_seat, w_sess, w_bet, w_amt, w_at = (a[order] for a in (w_r, w_seat, w_sess, w_bet, w_amt, w_at))
    if lim.differential is not None:
        keep = _within_differential(w_r, w_bet, w_amt, w_at, n, lim.differential)
        w_r, w_seat, w_sess, w_bet, w_amt, w_at = (a[keep] for a in (w_r, w_seat, w_sess, w_bet, w_amt, w_at))

    bd.settler = DaySettler(bd.coups, params, w_r, w_bet, w_amt)
    net, reason = bd.settler.net, bd.settler.reason
    if V.UNSETTLED_MASK[reason].any():
        raise AssertionError("a clean baccarat round could not be settled from its own cards")

    dealers = ctx.dealers(opens)
    players = [None if k < 0 else sessions[k].player_id for k in w_sess.tolist()]
    roles = ["" if k < 0 else sessions[k].role for k in w_sess.tolist()]
    starts = np.searchsorted(w_r, np.arange(n + 1))
    recs = ctx.rounds
    winners = bd.coups.winner.tolist()
    pp, bp = bd.coups.player_points.tolist(), bd.coups.banker_points.tolist()
    w_r_l, w_seat_l, w_bet_l, w_amt_l, w_at_l, net_l = (a.tolist() for a in (w_r, w_seat, w_bet, w_amt, w_at, net))
    status_l = status.tolist()
    ids = ctx.wager_ids(len(w_r_l))
    shoe_ids = ctx.events.shoe_ids
    round_shoe = bd.round_shoe.tolist()
    opens_l, closes_l, settles_l = opens.tolist(), closes.tolist(), bd.settles.tolist()  # type: ignore[attr-defined]
    first_card = bd.card_ts[:, 0].tolist()
    starts_l = starts.tolist()
    names = ("settled", "void", "free_hand")
    for i in range(n):
        st = names[status_l[i]]
        rec = RoundRec(ctx.counters.round_no, shoe_ids[round_shoe[i]], dealers[i], opens_l[i], closes_l[i],
                       settles_l[i], st,
                       None if st == "void" else {"winner": V.WINNER_NAMES[winners[i]], "player_points": pp[i],
                                                  "banker_points": bp[i]},
                       None, [], [], first_card[i], st != "settled")
        ctx.counters.round_no += 1
        if st == "void":
            rec.wagers = [WagerRec(ids[j], w_seat_l[j], players[j], BET_NAMES[w_bet_l[j]], w_amt_l[j], w_at_l[j], 0, 0)
                          for j in range(starts_l[i], starts_l[i + 1])]
        else:
            rec.wagers = [WagerRec(ids[j], w_seat_l[j], players[j], BET_NAMES[w_bet_l[j]], w_amt_l[j], w_at_l[j],
                                   net_l[j], net_l[j]) for j in range(starts_l[i], starts_l[i + 1])]
        recs.append(rec)
    for r in ctx.protected:
        recs[r].faulted = True
    for r, (x, replaced, sid) in sorted(ctx.duplicates.items()):
        rec = recs[r]
        rec.faulted = True
        ctx.add_truth("card_integrity", rec, f"duplicate_in_shoe: copy {t.decks + 1} of {card_text(x)} in the "
                      f"{t.decks}-deck shoe {sid} (one {card_text(replaced)} short); nobody noticed, settled as dealt")
    if ctx.specials.colluder_id is not None and ctx.specials.behaviours.collusion > 0:
        _collude(bd, roles_by_round(recs, roles, starts))


def roles_by_round(recs, roles, starts) -> list[list[str]]:
    return [roles[starts[i]:starts[i + 1]] for i in range(len(recs))]


def _within_differential(w_r, w_bet, w_amt, w_at, n, differential) -> np.ndarray:
    """Drop the latest Banker/Player wagers of a round until the two totals are within the differential (TBAC-4.3.1)."""
    keep = np.ones(len(w_r), dtype=bool)
    bank = np.bincount(w_r, weights=np.where(w_bet == V.BET_BANKER, w_amt, 0), minlength=n)
    play = np.bincount(w_r, weights=np.where(w_bet == V.BET_PLAYER, w_amt, 0), minlength=n)
    for r in np.flatnonzero(np.abs(bank - play) > differential):
        idx = np.flatnonzero(w_r == r)
        b, p = float(bank[r]), float(play[r])
        for j in idx[::-1]:
            if abs(b - p) <= differential:
                break
            side = V.BET_BANKER if b > p else V.BET_PLAYER
            if w_bet[j] == side:
                keep[j] = False
                if side == V.BET_BANKER:
                    b -= w_amt[j]
                else:
                    p -= w_amt[j]
    return keep


def _lucky_choice(bd: BaccaratDay, rounds: np.ndarray, drawn: np.ndarray, strength: float, rng):
    """The lucky player's side bet, and whether he skips it and whether it wins.

    Past-posting help: the cards are fair, the choice is not. With probability ``strength`` a round is one where
    the player knows the cards: if a side bet wins it, he backs the line that pays most (a three-card 6 on the Big
    Tiger at 50:1, not the Tiger at 20:1); if none does, he places no side bet (``skip``). Otherwise he bets as
    drawn. (The first version only switched to a winning side bet at random, never skipped, and counted no wins:
    at strength 0.5 the player won about twice the fair rate on the lowest-paying lines, and the ground truth said
    "0 won".) No random draw is added, so that the rest of the night's random stream is unchanged.
    """
    c = bd.coups
    cls = bd.cls[rounds]
    wins = np.stack([
        c.winner[rounds] == V.TIE,
        c.player_pair[rounds] == 1,
        c.banker_pair[rounds] == 1,
        (cls == 3) | (cls == 4),
        cls == 3,
        cls == 4,
    ], axis=1)
    # what each side bet pays on this round's cards, in units (the Tiger pays more on a three-card 6)
    pays = np.where(wins, np.stack([np.full(len(rounds), 8), np.full(len(rounds), 11), np.full(len(rounds), 11),
                                    np.where(cls == 4, 20, 12), np.full(len(rounds), 22), np.full(len(rounds), 50)],
                                   axis=1), 0)
    helped = rng.random(len(rounds)) < strength
    out = drawn.copy()
    for k in np.flatnonzero(helped & wins.any(axis=1)):
        options = np.flatnonzero(wins[k])
        best = np.flatnonzero(pays[k] == pays[k].max())  # one who knows the cards backs the best-paying winner
        out[k] = SIDE_CODES[best[int(rng.integers(len(options))) % len(best)]]
    chosen = np.searchsorted(SIDE_ORDER_BY_CODE, out)  # out's column in ``wins``
    won = wins[np.arange(len(rounds)), SIDE_ORDER[chosen]]
    return out, helped & ~wins.any(axis=1), won


def _collude(bd: BaccaratDay, roles: list[list[str]]) -> None:
    """The colluding dealer quietly pays the colluder more than the rules give, now and then."""
    ctx = bd.ctx
    sp = ctx.specials
    for rec, rr in zip(ctx.rounds, roles):
        if rec.dealer_id != sp.colluding_dealer or rec.status != "settled" or rec.faulted:
            continue
        mine = [w for w, role in zip(rec.wagers, rr) if role == "colluder" and w.net != 0]
        if not mine or ctx.rng.random() >= sp.behaviours.collusion:
            continue
        w = mine[0]
        if w.net > 0:
            w.net = w.expected + max(CHIP, int(chips(w.amount * 0.1, CHIP, w.amount)))
            how = "paid more than the win"
        else:
            w.net = 0
            how = "losing wager not collected"
        rec.faulted = True
        ctx.count("collusion_overpays")
        ctx.add_truth("payout_mismatch", rec, f"collusion_overpay: {how}: recorded {w.net}, rules {w.expected} "
                      f"(dealer {rec.dealer_id}, player {w.player_id})", wager=w)


# ---- the baccarat faults -------------------------------------------------------------------------


def _pick(bd: BaccaratDay, mask: np.ndarray, where=None) -> int | None:
    """A random round meeting ``mask`` (and ``where(rec)``) that no fault or behaviour has touched yet."""
    if bd.open_ok is None:
        bd.open_ok = np.array([r.status == "settled" and not r.faulted and bool(r.wagers) for r in bd.recs])
    idx = np.flatnonzero(mask & bd.open_ok)
    rng = bd.ctx.rng
    while len(idx):
        k = int(rng.integers(len(idx)))
        i = int(idx[k])
        rec = bd.recs[i]
        if rec.status == "settled" and not rec.faulted and rec.wagers and (where is None or where(rec)):
            return i
        if rec.faulted or rec.status != "settled":
            bd.open_ok[i] = False
        idx = np.delete(idx, k)
    return None


def _settle_one(bd: BaccaratDay, i: int, bet: str, amount: int) -> int:
    return bd.settler.one(i, bet, amount)


def _add_wager(bd: BaccaratDay, i: int, bet: str, amount: int) -> WagerRec:
    """A wager a seated player adds to round ``i`` (the fault needs one of this kind)."""
    rec = bd.recs[i]
    base = rec.wagers[0]
    at = min(base.placed_ms + 1000, rec.close_ms - 1000)
    net = _settle_one(bd, i, bet, amount)
    w = WagerRec(bd.ctx.next_wager_id(), base.seat, base.player_id, bet, amount, at, net, net)
    rec.wagers.append(w)
    rec.wagers.sort(key=lambda x: x.placed_ms)
    return w


def _mistake(bd: BaccaratDay, i: int, w: WagerRec, recorded: int, variant: str, what: str) -> None:
    rec = bd.recs[i]
    w.net = recorded
    rec.faulted = True
    bd.ctx.add_truth("payout_mismatch", rec, f"{variant}: {what}: recorded {recorded}, rules {w.expected}", wager=w)


def _plant_commission_not_taken(bd: BaccaratDay) -> bool:
    i = _pick(bd, bd.coups.winner == V.BANKER, lambda r: any(w.bet == "banker" for w in r.wagers))
    if i is None:
        return False
    w = next(w for w in bd.recs[i].wagers if w.bet == "banker")
    _mistake(bd, i, w, w.amount, "commission_not_taken", "Banker win paid 1:1 (TBAC-5.1.1 pays 0.95:1)")
    return True


def _side_fault(bd: BaccaratDay, mask: np.ndarray, bets: tuple[str, ...], odds_paid: int, variant: str, what: str) -> bool:
    i = _pick(bd, mask)
    if i is None:
        return False
    rec = bd.recs[i]
    w = next((w for w in rec.wagers if w.bet in bets and w.expected > 0), None)
    if w is None:
        lim = bd.ctx.table.limits
        amount = int(chips(max(lim.side_min, rec.wagers[0].amount * 0.2), lim.side_min, lim.side_max))
        w = _add_wager(bd, i, bets[0], amount)
    _mistake(bd, i, w, w.amount * odds_paid, variant, what)
    return True


def _plant_tiger_two_card_rate(bd: BaccaratDay) -> bool:
    return _side_fault(bd, bd.cls == 4, ("tiger",), 12, "tiger_two_card_rate",
                       "Tiger on a three-card Banker six paid 12:1 (TBAC-5.1.3 pays 20:1)")


def _plant_pair_short_paid(bd: BaccaratDay) -> bool:
    c = bd.coups
    mask = (c.player_pair == 1) | (c.banker_pair == 1)
    i = _pick(bd, mask)
    if i is None:
        return False
    bet = "player_pair" if c.player_pair[i] == 1 else "banker_pair"
    only = np.zeros(len(mask), dtype=bool)
    only[i] = True
    return _side_fault(bd, only, (bet,), 8, "pair_short_paid", f"{bet} paid 8:1 (TBAC-5.1.3 pays 11:1)")


def _plant_banker_six_paid_full(bd: BaccaratDay) -> bool:
    i = _pick(bd, (bd.cls == 3) | (bd.cls == 4), lambda r: any(w.bet == "banker" for w in r.wagers))
    if i is None:
        return False
    w = next(w for w in bd.recs[i].wagers if w.bet == "banker")
    _mistake(bd, i, w, w.amount, "banker_six_paid_full", "no-commission Banker win on 6 paid 1:1 (TBAC-5.1.2 pays 1:2)")
    return True


def _plant_tie_main_collected(bd: BaccaratDay) -> bool:
    i = _pick(bd, bd.coups.winner == V.TIE, lambda r: any(w.bet in ("banker", "player") for w in r.wagers))
    if i is None:
        return False
    w = next(w for w in bd.recs[i].wagers if w.bet in ("banker", "player"))
    _mistake(bd, i, w, -w.amount, "tie_main_collected", f"{w.bet} wager collected on a Tie (TBAC-6.1 stand-off)")
    return True


def _main_wagers(rec: RoundRec) -> list[WagerRec]:
    return [w for w in rec.wagers if w.bet in ("banker", "player")]


def _plant_over_max(bd: BaccaratDay) -> bool:
    lim = bd.ctx.table.limits
    rng = bd.ctx.rng
    for _ in range(20):
        i = _pick(bd, np.ones(len(bd.recs), dtype=bool), lambda r: bool(_main_wagers(r)))
        if i is None:
            return False
        rec = bd.recs[i]
        w = _main_wagers(rec)[0]
        amount = int(chips(lim.max * rng.uniform(1.1, 1.6), lim.max + CHIP, 10 * lim.max))
        bank = sum(x.amount for x in rec.wagers if x.bet == "banker" and x is not w)
        play = sum(x.amount for x in rec.wagers if x.bet == "player" and x is not w)
        bank, play = (bank + amount, play) if w.bet == "banker" else (bank, play + amount)
        if lim.differential is not None and abs(bank - play) > lim.differential:
            continue
        w.amount = amount
        w.net = w.expected = _settle_one(bd, i, w.bet, lim.max)  # TBAC-7.18: paid / collected up to the maximum
        rec.faulted = True
        bd.ctx.add_truth("limit_breach", rec, f"over_max: {w.bet} {amount} above the table maximum {lim.max}; "
                         f"settled up to the maximum (TBAC-7.18): {w.net}", wager=w)
        return True
    return False


def _plant_under_min(bd: BaccaratDay) -> bool:
    """TBAC-7.17 pays a player's first under-minimum wager and returns the later ones: one per player per table-day."""
    lim = bd.ctx.table.limits
    used = bd.ctx.under_min_players
    i = _pick(bd, np.ones(len(bd.recs), dtype=bool), lambda r: any(w.player_id not in used for w in _main_wagers(r)))
    if i is None or lim.min <= CHIP:
        return False
    rec = bd.recs[i]
    w = next(w for w in _main_wagers(rec) if w.player_id not in used)
    if w.player_id is not None:
        used.add(w.player_id)
    w.amount = int(max(CHIP, (lim.min - CHIP) // CHIP * CHIP - CHIP * int(bd.ctx.rng.integers(0, 2))))
    w.net = w.expected = _settle_one(bd, i, w.bet, w.amount)  # TBAC-7.17: paid or collected once, in full
    rec.faulted = True
    bd.ctx.add_truth("limit_breach", rec, f"under_min: {w.bet} {w.amount} below the table minimum {lim.min}; "
                     f"settled in full (TBAC-7.17): {w.net}", wager=w)
    return True


def _differential(bd: BaccaratDay, pro_rata: bool) -> bool:
    """Three big Banker wagers put the box over the differential; settled pro rata (or, wrongly, in full).

    The totals are built so that the pro-rata factor is exactly 4/5 and every amount a multiple of the
    chip: scaling the amount first or the net first gives the same integer, whatever the audit chose.
    """
    ctx = bd.ctx
    lim = ctx.table.limits
    rng = ctx.rng
    i = _pick(bd, (bd.coups.winner == V.BANKER) | (bd.coups.winner == V.PLAYER))
    if i is None:
        return False
    rec = bd.recs[i]
    players = [w for w in rec.wagers if w.bet == "player"]
    play = sum(w.amount for w in players)
    while players and ((play + lim.differential) % 2000 or 5 * play > 2 * lim.max):
        play -= players.pop().amount  # keep the Player total small and a multiple of 2,000
    if (play + lim.differential) % 2000:
        return False
    total = (play + lim.differential) * 5 // 4
    parts = _split(total, 3, lim.max, lim.min, rng)
    if parts is None:
        return False
    kept = {id(w) for w in players}
    rec.wagers = [w for w in rec.wagers if w.bet not in ("banker", "player") or id(w) in kept]
    seats = rng.choice(np.arange(1, ctx.table.seats + 1), 3, replace=False)
    who = [w.player_id for w in rec.wagers] + [None, None, None]
    new = []
    for k, amount in enumerate(parts):
        full = _settle_one(bd, i, "banker", amount)
        scaled = _settle_one(bd, i, "banker", amount * 4 // 5)
        at = rec.close_ms - (4 - k) * 1000
        w = WagerRec(ctx.next_wager_id(), int(seats[k]), who[k], "banker", amount, at, full if not pro_rata else scaled, scaled)
        new.append(w)
    rec.wagers.extend(new)
    rec.wagers.sort(key=lambda x: x.placed_ms)
    rec.faulted = True
    ctx.add_truth("differential_breach", rec, f"{'pro_rata_settled' if pro_rata else 'wrong_pro_rata'}: Banker {total} vs "
                  f"Player {play}, differential {lim.differential}; pro rata factor 4/5 (TBAC-7.19)")
    if not pro_rata:
        for w in new:
            ctx.add_truth("payout_mismatch", rec, f"wrong_pro_rata: Banker wager over the differential settled in full: "
                          f"recorded {w.net}, rules {w.expected} (TBAC-7.19)", wager=w)
    return True


def _split(total: int, k: int, hi: int, lo: int, rng) -> list[int] | None:
    """``total`` as ``k`` chip amounts within ``lo``..``hi`` (None when it cannot be done)."""
    if total % CHIP or total > k * hi or total < k * lo:
        return None
    units = total // CHIP
    cap, floor_ = hi // CHIP, -(-lo // CHIP)
    parts = [units // k] * k
    parts[0] += units - sum(parts)
    for _ in range(10):
        a, b = rng.choice(k, 2, replace=False)
        move = int(rng.integers(0, max(1, parts[a] // 5)))
        if parts[a] - move >= floor_ and parts[b] + move <= cap:
            parts[a] -= move
            parts[b] += move
    if any(p > cap or p < floor_ for p in parts):
        return None
    return [p * CHIP for p in parts]


def _plant_extra_third_card(bd: BaccaratDay) -> bool:
    """A card dealt after a complete round; the table misses it, so the shoe's next round, which TBAC-7.8 makes a
    Free Hand (all wagers removed), is played and settled as an ordinary round: each of its wagers is a fault too."""
    recs = bd.recs
    same_shoe_next = np.r_[bd.round_shoe[1:] == bd.round_shoe[:-1], False]
    next_open = np.array([r.status == "settled" and not r.faulted and bool(r.wagers) for r in recs[1:]] + [False])
    i = _pick(bd, (bd.ncards < 6) & same_shoe_next & next_open)
    if i is None:
        return False
    spare = bd.spare[int(bd.round_shoe[i])]
    if not spare:
        return False
    code = spare.pop()
    rec = bd.recs[i]
    free = recs[i + 1]
    free.faulted = True
    for w in free.wagers:
        bd.ctx.add_truth("free_hand_wager", free, f"free_hand_not_declared: the round after round {rec.round_no}'s card "
                         f"dealt in error is a Free Hand; {w.bet} {w.amount} settled {w.net} (TBAC-7.8: all wagers removed)",
                         wager=w)
    last = int(bd.card_ts[i, int(bd.ncards[i]) - 1])
    ts = min(last + int(bd.ctx.rng.integers(1500, 3000)), rec.settled_ms - 1000)
    bd.extra.setdefault(i, []).append((code, ts))
    rec.faulted = True
    drew = "Player" if bd.coups.player_drew[i] == 0 else "Banker"
    bd.ctx.add_truth("drawing_rule_violation", rec, f"extra_third_card: {card_text(code)} drawn after a complete "
                     f"{int(bd.ncards[i])}-card round ({drew} had no third card coming, TBAC-7.6/7.7); table settled on the right cards")
    return True


def _plant_wrong_winner(bd: BaccaratDay) -> bool:
    i = _pick(bd, bd.coups.winner != V.TIE)
    if i is None:
        return False
    rec = bd.recs[i]
    r = dict(rec.recorded_result or {})
    right = r.get("winner")
    r["winner"] = "player" if right == "banker" else "banker"
    r["player_points"], r["banker_points"] = r["banker_points"], r["player_points"]
    rec.recorded_result = r
    rec.faulted = True
    bd.ctx.add_truth("result_mismatch", rec, f"wrong_winner_announced: recorded {r['winner']} "
                     f"{r['player_points']}-{r['banker_points']}, the cards give {right}; nets follow the cards (TBAC-7.16)")
    return True


def _plant_free_hand_wager(bd: BaccaratDay) -> bool:
    i = _pick(bd, np.ones(len(bd.recs), dtype=bool))
    if i is None:
        return False
    rec = bd.recs[i]
    rec.status = "free_hand"
    rec.wagers = rec.wagers[: int(bd.ctx.rng.integers(1, 3))]
    rec.faulted = True
    for w in rec.wagers:
        bd.ctx.add_truth("free_hand_wager", rec, f"wager_on_free_hand: {w.bet} {w.amount} left on a Free Hand and "
                         f"settled {w.net} (TBAC-7.8: all wagers removed)", wager=w)
    return True


PLANTERS = {
    "commission_not_taken": _plant_commission_not_taken,
    "tiger_two_card_rate": _plant_tiger_two_card_rate,
    "banker_six_paid_full": _plant_banker_six_paid_full,
    "tie_main_collected": _plant_tie_main_collected,
    "pair_short_paid": _plant_pair_short_paid,
    "wrong_pro_rata": lambda bd: _differential(bd, pro_rata=False),
    "pro_rata_settled": lambda bd: _differential(bd, pro_rata=True),
    "over_max": _plant_over_max,
    "under_min": _plant_under_min,
    "extra_third_card": _plant_extra_third_card,
    "wrong_winner_announced": _plant_wrong_winner,
    "wager_on_free_hand": _plant_free_hand_wager,
}


# ---- the device's events ------------------------------------------------------------------------------


def _emit_events(bd: BaccaratDay) -> None:
    ctx = bd.ctx
    ev = ctx.events
    first_no = ctx.rounds[0].round_no if ctx.rounds else 0
    n = len(bd.ncards)
    round_nos = first_no + np.arange(n)
    per_shoe = {}
    for i in range(n):
        per_shoe.setdefault(int(bd.round_shoe[i]), []).append(i)
    for shoe in bd.shoes:
        idx = shoe["idx"]
        ev.add(shoe["start"], R.SHOE_START, -1, NO_CARD, idx, shoe["decks"])
        ev.add(shoe["burn_ts"], R.BURN, -1, shoe["burn_codes"], idx)
        rounds = np.array(per_shoe.get(idx, []), dtype=np.int64)
        if len(rounds):
            counts = bd.ncards[rounds]
            mask = np.arange(6)[None, :] < counts[:, None]
            ts = bd.card_ts[rounds][mask]
            codes = bd.cards[rounds][mask]
            rno = np.repeat(round_nos[rounds], counts)
            if any(int(r) in bd.extra for r in rounds):
                ts, codes, rno = _with_extra(bd, rounds, round_nos, ts, codes, rno)
            ev.add(ts, R.CARD, rno, codes, idx)
        ev.add(shoe["end"], R.SHOE_END, -1, NO_CARD, idx)


def _with_extra(bd: BaccaratDay, rounds, round_nos, ts, codes, rno):
    ts_l, codes_l, rno_l = ts.tolist(), codes.tolist(), rno.tolist()
    for i in sorted(int(r) for r in rounds if int(r) in bd.extra):
        for code, t in bd.extra[i]:
            k = int(np.searchsorted(np.array(ts_l), t, side="right"))
            ts_l.insert(k, t)
            codes_l.insert(k, code)
            rno_l.insert(k, int(round_nos[i]))
    return np.array(ts_l, dtype=np.int64), np.array(codes_l, dtype=np.int16), np.array(rno_l, dtype=np.int64)
