"""Blackjack over arrays: every round of one rule-set version re-settled at once, the scalar engine kept as the referee.

Why: one round at a time the engine (``engine.py``) settles a few thousand rounds a CPU-second, and
blackjack was most of a night's re-settlement. Here the same rules run over numpy arrays:

- the initial deal is read off the device's cards by position (BJ-4.7.2: one card to each seat with a
  wager in seat order, one to the dealer, a second to each seat);
- each seat's decisions are applied step by step, step k of every seat of every round at once. A
  legal decision takes a known number of cards (hit and double one, split two: one now, one when the
  hand formed takes its turn, BJ-4.10.2), so where each seat's cards start is a running sum, and the
  seats play side by side. Every decision is validated as ``decisions.py`` validates it;
- the dealer takes the cards left (BJ-4.14), soft or hard 17 as the rule set says;
- every stake, Pair and insurance wager is settled with the clause and the sentence the scalar
  engine gives (``settle.py``), with the rule set's rounding, in integers (``vector_settle.py``).

A round the arrays do not model is handed back, with the reason, for the scalar engine to settle:
an irregularity of any kind (an illegal or out-of-turn decision, a card unread, foreign, missing or
one copy too many, the dealer's draws against BJ-4.14, a Pair wager placed when splitting on a hand
no split of identical cards formed), a decision naming wagers (back bettors' doubles, splits,
surrenders), a back bettor's double or split after the controlling player surrendered (BJ-4.12.3),
a wager the cards cannot settle, a hole-card rule set. The scalar engine's sentences for those are the reference, and
they are rare on a night; ``tests/test_blackjack_vector.py`` holds the two paths equal field by field.

Pure: frames and parameters in, frames out.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from rulebook.blackjack.params import BlackjackParams
from rulebook.blackjack.vector_settle import (
    D_21, D_BJ, D_BUST, D_DOUBLE, D_SPLIT_ACES, D_STAND, D_SURRENDER, Settlement, VectorOutput, _total,
)
from rulebook.cards import FOREIGN

PLAY_CODES = {"hit": 1, "stand": 2, "double": 3, "split": 4, "surrender": 5}
HIT, STAND, DOUBLE, SPLIT, SURRENDER = 1, 2, 3, 4, 5
INSURANCE_ACT, EVEN_MONEY_ACT = 6, 7
ACTION_CODES = {**PLAY_CODES, "insurance": INSURANCE_ACT, "even_money": EVEN_MONEY_ACT}

_POINTS = np.array([min(c // 4 + 1, 10) for c in range(52)] + [0] * 4, dtype=np.int64)  # codes 52.. never used


def _flat(lists: pl.Series) -> np.ndarray:
    """Every element of a list column, row after row (its Arrow values: no copy through ``explode``)."""
    arr = lists.to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    values = arr.flatten()
    if values.null_count:  # (the reconstruction writes no null card; were one there, it is left out as before)
        return lists.explode().drop_nulls().to_numpy().astype(np.int64)
    return values.to_numpy().astype(np.int64)


def _padded(lists: pl.Series, fill: int, dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """A list column as a (rows, width) array of ``dtype`` padded with ``fill``, and each row's length."""
    lens = lists.list.len().fill_null(0).to_numpy().astype(np.int64)
    width = max(1, int(lens.max()) if len(lens) else 1)
    flat = _flat(lists) if lens.sum() else np.zeros(0, np.int64)
    out = np.full((len(lens), width), fill, dtype=dtype)
    out[np.arange(width)[None, :] < lens[:, None]] = flat  # row by row, as the elements come
    return out, lens


_BETS = pl.Enum(["main", "pair", "insurance"])
_ACTIONS = pl.Enum(list(ACTION_CODES))


def _codes(texts: pl.Series, names: pl.Enum) -> np.ndarray:
    """Each text's place among ``names`` (-1: none of them), as ``replace_strict`` with a default would give it."""
    return texts.cast(names, strict=False).to_physical().fill_null(-1).to_numpy().astype(np.int64)


def _kept(keep: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows ``keep`` of each array."""
    return tuple(x[keep] for x in arrays)


def _runs(sorted_ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each id 0..n-1 starts in ``sorted_ids`` and how many times it is there (a search for every id, by counting)."""
    counts = np.bincount(sorted_ids, minlength=n)[:n] if len(sorted_ids) else np.zeros(n, np.int64)
    return np.cumsum(counts) - counts, counts


def _in_order(frame: pl.DataFrame, order: str) -> pl.DataFrame:
    """``frame`` sorted by its round (``_ri``) and ``order``: a join of frames that come in that order keeps it,
    and a check of adjacent rows costs less than the sort."""
    ri = frame["_ri"].to_numpy()
    o = frame[order].to_numpy()
    if frame[order].null_count() == 0 and (
        (ri[1:] > ri[:-1]) | ((ri[1:] == ri[:-1]) & (o[1:] > o[:-1]))
    ).all():
        return frame
    return frame.sort(["_ri", order])


def _of_rounds(ctx: pl.DataFrame, frames: list[tuple[pl.DataFrame, str]]) -> list[pl.DataFrame]:
    """Each frame's rows of the rounds of ``ctx``, with ``_ri`` (the round's row in ``ctx``), sorted by round and the
    frame's ``order`` column: what an inner join on (table_id, round_no) gives. The round is found by one integer key
    (the table's code among ``ctx``'s tables, then the round number) searched in ``ctx``'s sorted keys: hashing the
    strings of every wager and action row in a join cost more than the rest of their reading."""
    keys = ctx.select("table_id", "round_no")
    rn = keys["round_no"]
    tables = keys["table_id"].unique().sort()
    fits = (keys.height > 0 and tables.null_count() == 0 and rn.null_count() == 0
            and 0 <= int(rn.min()) and int(rn.max()) < 2**31)
    if fits:
        enum = pl.Enum(tables)
        kc = keys["table_id"].cast(enum).to_physical().to_numpy().astype(np.int64) << 32 | rn.to_numpy().astype(np.int64)
        order = None if (kc[1:] > kc[:-1]).all() else np.argsort(kc, kind="stable")
        sk = kc if order is None else kc[order]
        fits = order is None or (sk[1:] > sk[:-1]).all()  # a round twice in ctx: the join's own semantics
    if not fits:
        with_ri = keys.with_row_index("_ri")
        return [_in_order(f.join(with_ri, on=["table_id", "round_no"], how="inner"), o) for f, o in frames]
    out = []

    def key(tid: pl.Series, rn: pl.Series) -> np.ndarray:
        code = tid.cast(enum, strict=False).to_physical().fill_null(-1).to_numpy().astype(np.int64)
        r = rn.fill_null(-1).to_numpy().astype(np.int64)
        return np.where((code >= 0) & (r >= 0) & (r < 2**31), code << 32 | np.maximum(r, 0), -1)

    for f, o in frames:
        # the key of each run of rows of one (table, round): a row's rows come together as loaded, and the table's
        # code is looked up once a run, not once a row
        tid, rn = f["table_id"], f["round_no"]
        new = np.flatnonzero(((tid != tid.shift(1)) | (rn != rn.shift(1))).fill_null(True).to_numpy())
        kr = key(tid.gather(new), rn.gather(new))
        if len(kr) and (kr[1:] >= kr[:-1]).all():  # in round order (as loaded): one search per round, not per row
            pos = np.repeat(np.minimum(np.searchsorted(sk, kr), len(sk) - 1), np.diff(np.append(new, f.height)))
            kf = np.repeat(kr, np.diff(np.append(new, f.height)))
        else:
            kf = key(tid, rn)
            pos = np.minimum(np.searchsorted(sk, kf), len(sk) - 1)
        hit = sk[pos] == kf
        ri = pos if order is None else order[pos]
        if not hit.all():
            f, ri = f.filter(pl.Series(hit)), ri[hit]
        out.append(_in_order(f.with_columns(pl.Series("_ri", ri, dtype=pl.UInt32)), o))
    return out


def scalar_share(ctx: pl.DataFrame, wagers: pl.DataFrame, actions: pl.DataFrame, amount_col: str,
                 rs) -> pl.DataFrame:
    """The rounds :func:`settle_frames` hands to the scalar engine, with why (for the benchmark)."""
    return settle_frames(ctx, wagers, actions, amount_col, rs.params, with_rounds=False).handed


def settle_frames(ctx: pl.DataFrame, wagers: pl.DataFrame, actions: pl.DataFrame, amount_col: str,
                  p: BlackjackParams, with_rounds: bool = True) -> VectorOutput:
    """Settle every round of ``ctx`` the arrays can (see the module docstring); hand the others back.

    ``ctx``: table_id, round_no, codes (every card and burn event, device order), dealt (the cards, burns
    excluded), decks, limit_min. ``wagers``: table_id, round_no, wager_id, seat, bet, ``amount_col``,
    player_id, hand (optional), wager_order. ``actions``: table_id, round_no, seat, hand, action, amount,
    wager_ids, action_order."""
    return _Night(ctx, wagers, actions, amount_col, p, with_rounds).run()


class _Night(Settlement):
    """The arrays of one call: rounds (r), seats with cards (units, u), hands (u * MH + slot), wagers, actions."""

    def __init__(self, ctx, wagers, actions, amount_col, p: BlackjackParams, with_rounds: bool):
        self.p = p
        self.with_rounds = with_rounds
        self.ctx_in = ctx
        self.ctx = ctx.select("table_id", "round_no", *(["ruleset_version"] if "ruleset_version" in ctx.columns else []))
        self.R = R = ctx.height
        self.why = np.zeros(R, dtype=np.int64)
        w_cols = ["table_id", "round_no", "wager_id", "seat", "bet", amount_col, "player_id", "wager_order"]
        w_cols += ["hand"] if "hand" in wagers.columns else []
        a_cols = ["table_id", "round_no", "seat", "hand", "action", "amount", "wager_ids", "action_order"]
        w, a = _of_rounds(self.ctx, [(wagers.select(w_cols), "wager_order"), (actions.select(a_cols), "action_order")])
        self.w, self.a = w, a
        self.amount_col = amount_col
        self._cards(ctx)
        self._wagers(w)
        self._actions(a)

    # -- the evidence -------------------------------------------------------------------------------
    def _mark(self, rounds: np.ndarray, code: int) -> None:
        rounds = np.asarray(rounds, dtype=np.int64)
        if rounds.size:
            sel = rounds[self.why[rounds] == 0]
            self.why[sel] = code

    def _cards(self, ctx: pl.DataFrame) -> None:
        p = self.p
        if p.dealer_hole_card:
            self.why[:] = 1
        self.cards, self.ncards = _padded(ctx["dealt"], -9, np.int32)  # card codes: 32 bits are plenty
        # an unreadable, foreign or missing card among those dealt; a foreign burn (BJ-7.14.1)
        col = np.arange(self.cards.shape[1])
        bad_card = ((self.cards < 0) & (col[None, :] < self.ncards[:, None])).any(axis=1)
        lens = ctx["codes"].list.len().fill_null(0).to_numpy().astype(np.int64)
        codes = _flat(ctx["codes"]) if lens.sum() else np.zeros(0, np.int64)
        rows = np.repeat(np.arange(self.R), lens)
        bad_card[rows[codes == FOREIGN]] = True
        # more copies of a card than the shoe holds (BJ-7.14.1), burns included
        decks = ctx["decks"].fill_null(0).to_numpy().astype(np.int64) if "decks" in ctx.columns else np.zeros(self.R, np.int64)
        decks = np.where(decks > 0, decks, p.decks)
        real = codes >= 0
        copies = np.bincount(rows[real] * 52 + codes[real], minlength=self.R * 52).reshape(self.R, 52)
        if len(copies) and copies.max() > decks.min():  # (one look at the largest count first: almost never)
            bad_card |= (copies > decks[:, None]).any(axis=1)
        self._mark(np.flatnonzero(bad_card), 2)
        # the table minimum (doubling for less, BJ-4.9.1): an amount, so integers, with where there is none
        limit = ctx["limit_min"] if "limit_min" in ctx.columns else pl.Series([None] * self.R, dtype=pl.Int64)
        self.table_min = limit.fill_null(0).to_numpy().astype(np.int64)
        self.has_min = limit.is_not_null().to_numpy()

    def _wagers(self, w: pl.DataFrame) -> None:
        p = self.p
        ri = w["_ri"].to_numpy().astype(np.int64)
        bet = _codes(w["bet"], _BETS)
        amount = w[self.amount_col].fill_null(0).to_numpy().astype(np.int64)
        seat = w["seat"].fill_null(-1).to_numpy().astype(np.int64)
        hand_named = w["hand"].is_not_null().to_numpy() if "hand" in w.columns else np.zeros(len(ri), bool)
        # a wager id twice in a round (ids are unique on a night: the cheap global test first)
        ids = w["wager_id"]
        # (distinct 64-bit hashes prove the ids distinct, and cost less than counting the texts; a hash seen twice
        # sends the ids to the exact test)
        dup_id = np.zeros(len(ri), bool) if ids.hash().n_unique() == len(ri) else ids.is_duplicated().to_numpy()
        if dup_id.any():
            dup_id = w.select(pl.struct("_ri", "wager_id").is_duplicated()).to_series().to_numpy()
        # a hand is named only by a Pair wager placed when splitting (BJ-4.10.1.2); on another the scalar says why not
        # (an amount past 2**40 smallest units would risk 64-bit overflow in the odds: the scalar engine's Python ints)
        bad = ((bet < 0) | (amount <= 0) | (amount >= 2**40) | (hand_named & (bet != 1)) | dup_id | (seat < 0)
               | (seat >= 1_000_000))
        self.w_hand = w["hand"].fill_null(0).to_numpy().astype(np.int64) if "hand" in w.columns else np.zeros(len(ri), np.int64)
        self._mark(ri[bad], 3)
        self.w_ri, self.w_bet, self.w_amount, self.w_seat = ri, bet, amount, seat
        self.w_player = w["player_id"]
        main = bet == 0
        # seats with a main wager, in seat order: one unit each (a Pair-only seat goes to the scalar engine)
        seat = np.clip(seat, 0, 999_999)
        sk = ri * 1_000_000 + seat
        top = int(seat.max()) + 1 if len(seat) else 1
        self.top = top if top <= 64 else 0
        if self.top:  # seats are small numbers: a presence table, cheaper than a sort, and each unit's number by it
            present = np.zeros(self.R * top, bool)
            present[ri[main] * top + seat[main]] = True
            at = np.flatnonzero(present)
            main_keys = (at // top) * 1_000_000 + at % top
            self.present, self.unit_of = present, np.cumsum(present) - 1
        else:
            main_keys = np.unique(sk[main])
        self.main_keys = main_keys
        self.u_ri = main_keys // 1_000_000
        self.u_seat = main_keys % 1_000_000
        U = self.U = len(main_keys)
        self.r_u0, self.r_nseats = _runs(self.u_ri, self.R)
        self._mark(np.flatnonzero(self.r_nseats == 0), 3)
        self.w_u, on_seat = self._unit(ri, seat)
        self._mark(ri[~on_seat & (bet >= 0)], 3)
        # the controlling wager: the first main wager placed on the seat; back bettors follow it
        main_rows = np.flatnonzero(main & on_seat)
        u_of = self.w_u[main_rows]
        if not (u_of[1:] >= u_of[:-1]).all():  # wagers placed out of seat order in a round
            order = np.argsort(u_of, kind="stable")
            main_rows, u_of = main_rows[order], u_of[order]
        firsts = np.concatenate(([True], u_of[1:] != u_of[:-1])) if len(u_of) else np.zeros(0, bool)
        self.u_ctrl = np.zeros(U, np.int64)
        self.u_ctrl[u_of[firsts]] = main_rows[firsts]
        u_first, n_main = _runs(u_of, U)
        self.u_nmain = n_main
        # each main wager's place among its seat's (0: the controlling one): surrenders pass along it (BJ-4.12.3)
        self.w_stake = np.zeros(len(ri), np.int64)
        self.w_stake[main_rows] = np.arange(len(u_of)) - u_first[u_of]
        self.w_ctrl = np.zeros(len(ri), bool)
        self.w_ctrl[main_rows[firsts]] = True
        self._mark(self.u_ri[n_main > p.max_wagers_per_seat], 3)
        n_pair = np.bincount(self.w_u[(bet == 1) & on_seat & (self.w_hand == 0)], minlength=U)
        self._mark(self.u_ri[n_pair > 3], 3)

    def _unit(self, ri: np.ndarray, seat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unit (seat with a main wager) of each (round, seat), 0 where there is none, and whether there is one."""
        if self.top:
            inside = (seat >= 0) & (seat < self.top)
            at = ri * self.top + np.clip(seat, 0, self.top - 1)
            on = inside & self.present[at]
            return np.where(on, self.unit_of[at], 0), on
        sk = ri * 1_000_000 + np.clip(seat, 0, 999_999)
        u = np.searchsorted(self.main_keys, sk)
        on = (u < self.U) & (self.main_keys[np.minimum(u, max(self.U - 1, 0))] == sk) if self.U else np.zeros(len(ri), bool)
        on &= (seat >= 0) & (seat < 1_000_000)
        return np.where(on, u, 0), on

    def _actions(self, a: pl.DataFrame) -> None:
        ri = self.a_ri = a["_ri"].to_numpy().astype(np.int64)
        code = _codes(a["action"], _ACTIONS) + 1  # 0: not a decision the arrays know
        seat = a["seat"].fill_null(-1).to_numpy().astype(np.int64)
        hand = a["hand"].fill_null(-1).to_numpy().astype(np.int64)
        amt_null = a["amount"].is_null().to_numpy()
        amt = a["amount"].fill_null(0).to_numpy().astype(np.int64)
        named = (a["wager_ids"].list.len().fill_null(0) > 0).to_numpy()
        u, on = self._unit(ri, seat)
        bad = (code == 0) | named | ~on | (seat < 0)
        self._mark(ri[bad], 4)
        # before the play: even money (once a seat), insurance decisions (need an insurance wager on the seat)
        em = code == EVEN_MONEY_ACT
        em_count = np.bincount(u[em & on], minlength=self.U)
        self._mark(self.u_ri[em_count > 1], 4)
        self.u_even_money = em_count > 0
        ins_w = np.bincount(self.w_u[(self.w_bet == 2)], minlength=self.U) if self.U else np.zeros(0, np.int64)
        ins_a = code == INSURANCE_ACT
        self._mark(ri[ins_a & on & (ins_w[u] == 0)], 4)
        # the play, seat by seat in seat order, in the order of play within a seat
        play = (code >= HIT) & (code <= SURRENDER) & on
        rows = np.flatnonzero(play)
        if not (u[rows][1:] >= u[rows][:-1]).all():  # seats' decisions interleaved in a round's log
            rows = rows[np.argsort(u[rows], kind="stable")]  # by unit, then the recorded order
        self.a_u = u[rows]
        self.a_code = code[rows]
        self.a_hand = hand[rows]
        self.a_amt = amt[rows]
        self.a_amt_null = amt_null[rows]
        self.u_a0, self.u_nact = _runs(self.a_u, self.U)
        # cards each seat takes in its play: hit and double one, split two (the second when the hand formed plays)
        take = np.where((self.a_code == HIT) | (self.a_code == DOUBLE), 1, np.where(self.a_code == SPLIT, 2, 0))
        self.u_take = np.bincount(self.a_u, weights=take, minlength=self.U).astype(np.int64)

    # -- the round, played -----------------------------------------------------------------------------
    def run(self) -> VectorOutput:
        p = self.p
        U, MH = self.U, p.max_hands
        self.MH = MH
        ok_r = self.why == 0
        # the initial deal (BJ-4.7.2)
        ns = self.r_nseats
        self._mark(np.flatnonzero(ok_r & (self.ncards < 2 * ns + 1)), 6)
        j = np.arange(U) - self.r_u0[self.u_ri]
        W = self.cards.shape[1]
        c1 = self.cards[self.u_ri, np.minimum(j, W - 1)]
        c2 = self.cards[self.u_ri, np.minimum(ns[self.u_ri] + 1 + j, W - 1)]
        self.up = self.cards[np.arange(self.R), np.minimum(ns, W - 1)]
        c1, c2 = np.maximum(c1, 0), np.maximum(c2, 0)  # a bad card's round is handed back already
        self.up = np.maximum(self.up, 0)
        up_u = self.up[self.u_ri]
        self.first0, self.first1 = c1, c2
        # where each seat's play cards start: after the initial deal and the earlier seats' cards
        csum = np.cumsum(self.u_take) - self.u_take
        self.u_off = 2 * ns[self.u_ri] + 1 + csum - csum[self.r_u0[self.u_ri]]
        self.r_dealer0 = 2 * ns + 1 + np.bincount(self.u_ri, weights=self.u_take, minlength=self.R).astype(np.int64)
        self.u_ptr = np.zeros(U, np.int64)
        self.u_bad = self.why[self.u_ri] != 0

        n = U * MH
        # points, card codes and counts in narrow integers (less to read and write per step); amounts in 64 bits
        self.h_hard = np.zeros(n, np.int32)
        self.h_ace = np.zeros(n, bool)
        self.h_n = np.zeros(n, np.int32)
        self.h_c0 = np.zeros(n, np.int32)
        self.h_c1 = np.zeros(n, np.int32)
        self.h_split = np.zeros(n, bool)
        self.h_split_aces = np.zeros(n, bool)
        self.h_decided = np.zeros(n, bool)
        self.h_done = np.zeros(n, np.int8)
        self.h_doubled = np.zeros(n, np.int64)
        self.h_amount = np.zeros(n, np.int64)
        # the hands splits formed, for the Pair wager placed when splitting (state.FormedHand, BJ-4.10.1.2)
        self.f_first = np.full(n, -1, np.int64)
        self.f_second = np.full(n, -1, np.int64)
        self.f_ident = np.zeros(n, bool)
        h0 = np.arange(U) * MH
        self.h_hard[h0] = _POINTS[c1] + _POINTS[c2]
        self.h_ace[h0] = (c1 < 4) | (c2 < 4)
        self.h_n[h0] = 2
        self.h_c0[h0], self.h_c1[h0] = c1, c2
        self.h_amount[h0] = self.w_amount[self.u_ctrl] if U else 0
        bj = _total(self.h_hard[h0], self.h_ace[h0]) == 21
        self.h_done[h0] = np.where(bj, D_BJ, 0)
        self.u_bj = bj
        self.u_nh = np.ones(U, np.int64)
        self.order = np.zeros((U, MH), np.int64)
        self.order[:] = np.arange(MH)[None, :]
        self.pos_of = np.tile(np.arange(MH), U)
        self.u_cur = np.where(bj, 1, 0)
        self.u_inturn = np.zeros(U, bool)
        self.u_surr = np.zeros(U, np.int64)  # main wagers of the seat surrendered, in their order (BJ-4.12.3)

        # even money: a blackjack against a dealer ace (BJ-4.15.3)
        up_ace = up_u < 4
        self._bad_units(self.u_even_money & ~(bj & up_ace))
        self._insurance(up_ace)
        self._play()
        self._finish()
        self._bad_units(~self.u_bad & (self.u_ptr != self.u_take), 6)
        self._split_pair_checks()
        self._dealer()
        return self._settle()

    def _bad_units(self, mask: np.ndarray, code: int = 5) -> None:
        mask = np.asarray(mask)
        idx = np.flatnonzero(mask) if mask.dtype == bool else mask
        if idx.size:
            self.u_bad[idx] = True
            self._mark(self.u_ri[idx], code)

    def _insurance(self, up_ace_u: np.ndarray) -> None:
        """Insurance wagers: a dealer ace, up to ``insurance_max_fraction`` of the insured wager (BJ-4.11.1)."""
        p = self.p
        rows = np.flatnonzero((self.w_bet == 2) & (self.why[self.w_ri] == 0))
        u = self.w_u[rows]
        # the insured wager: the same player's main wager on the seat, else the controlling one
        covers = self.u_ctrl[u].copy()
        mains = np.flatnonzero(self.w_bet == 0)
        if rows.size and mains.size:
            # the first such main wager by row (wager order), found by a join of the few seats with insurance: the
            # player ids of every wager as Python strings cost more than the rest of the step
            mains = mains[np.isin(self.w_u[mains], u)]
            insured = pl.DataFrame({"k": np.arange(len(rows)), "u": u, "pid": self.w_player.gather(rows)})
            main = pl.DataFrame({"m": mains, "u": self.w_u[mains], "pid": self.w_player.gather(mains)})
            found = insured.join(main, on=["u", "pid"], how="inner").group_by("k").agg(pl.col("m").min())
            covers[found["k"].to_numpy()] = found["m"].to_numpy()
        frac = p.insurance_max_fraction
        cap = self.w_amount[covers] * frac.num // frac.den
        bad = ~up_ace_u[u] | (self.w_amount[rows] > cap)
        self._bad_units(u[bad])
        self.ins_rows = rows

    # one card from the device for each unit in A
    def _draw(self, A: np.ndarray) -> np.ndarray:
        idx = self.u_off[A] + self.u_ptr[A]
        r = self.u_ri[A]
        short = idx >= self.ncards[r]
        if short.any():
            self._bad_units(A[short], 6)
        self.u_ptr[A] += 1
        return np.maximum(self.cards[r, np.minimum(idx, self.cards.shape[1] - 1)], 0)

    def _give(self, hi: np.ndarray, card: np.ndarray) -> None:
        self.h_hard[hi] += _POINTS[card]
        self.h_ace[hi] |= card < 4
        self.h_c1[hi] = np.where(self.h_n[hi] == 1, card, self.h_c1[hi])
        self.h_n[hi] += 1

    def _after_card(self, A: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``state.after_card``: close a hand the rules give no decision; move the turn. Returns done."""
        total = _total(self.h_hard[hi], self.h_ace[hi])
        done = np.where(self.h_split_aces[hi] & (self.h_n[hi] >= 2), D_SPLIT_ACES,
                        np.where(self.h_hard[hi] > 21, D_BUST, np.where(total == 21, D_21, 0)))
        self.h_done[hi] = done
        closed = done > 0
        self.u_cur[A[closed]] += 1
        self.u_inturn[A] = ~closed
        return closed

    def _close(self, A: np.ndarray, how: int = D_STAND) -> None:
        hi = A * self.MH + self.order[A, self.u_cur[A]]
        self.h_done[hi] = how
        self.u_cur[A] += 1
        self.u_inturn[A] = False

    def _start(self, A: np.ndarray) -> np.ndarray:
        """``state.start_hand`` on the hand at each unit's current position; returns whether it closed at once."""
        hi = A * self.MH + self.order[A, self.u_cur[A]]
        one = self.h_n[hi] == 1
        if one.any():
            self._give(hi[one], self._draw(A[one]))
            self._second_card(hi[one])
        return self._after_card(A, hi)

    def _play(self) -> None:
        p = self.p
        MH = self.MH
        K = int(self.u_nact.max()) if self.U else 0
        units = np.arange(self.U)
        for k in range(K):
            units = units[self.u_nact[units] > k]  # the seats with a k-th decision (fewer at every step)
            A = units[~self.u_bad[units]]
            if not A.size:
                break
            row = self.u_a0[A] + k
            code, t = self.a_code[row], self.a_hand[row] - 1
            amt, amt_null = self.a_amt[row], self.a_amt_null[row]
            exists = (t >= 0) & (t < self.u_nh[A])
            if not exists.all():
                self._bad_units(A[~exists])
                A, code, t, amt, amt_null = _kept(exists, A, code, t, amt, amt_null)
            hi = A * MH + t
            pos = self.pos_of[hi]
            cur = self.u_cur[A]
            # a decision on a complete hand: a stand is only noted (engine._play), anything else is refused
            done_t = pos < cur
            if done_t.any():
                self._bad_units(A[done_t & (code != STAND)])
                A, code, amt, amt_null, hi, pos, cur = _kept(~done_t, A, code, amt, amt_null, hi, pos, cur)
            # naming the next hand closes the one in play (it stands); skipping a hand is not modelled
            later = pos > cur
            if later.any():
                close = later & self.u_inturn[A]
                if close.any():
                    self._close(A[close])
                skip = pos != self.u_cur[A]
                if skip.any():
                    self._bad_units(A[skip])
                    A, code, amt, amt_null, hi = _kept(~skip, A, code, amt, amt_null, hi)
            st = ~self.u_inturn[A]
            if st.any():
                closed = np.zeros(len(A), bool)
                closed[st] = self._start(A[st])
                if closed.any():
                    self._bad_units(A[closed & (code != STAND)])
                    A, code, amt, amt_null, hi = _kept(~closed, A, code, amt, amt_null, hi)
            live = ~self.u_bad[A]
            if not live.all():
                A, code, amt, amt_null, hi = _kept(live, A, code, amt, amt_null, hi)

            m = code == HIT
            if m.any():
                B, hB = A[m], hi[m]
                self._give(hB, self._draw(B))
                self.h_decided[hB] = True
                self._after_card(B, hB)
            m = code == STAND
            if m.any():
                self._close(A[m])
            m = code == DOUBLE
            if m.any():
                self._double(A[m], hi[m], amt[m], amt_null[m])
            m = code == SPLIT
            if m.any():
                self._split(A[m], hi[m], amt[m], amt_null[m])
            m = code == SURRENDER
            if m.any():
                B, hB = A[m], hi[m]
                up_ace = self.up[self.u_ri[B]] < 4
                bad = (~np.bool_(p.surrender_allowed) | (up_ace & (not p.surrender_against_ace)) | self.h_split[hB]
                       | self.h_decided[hB] | (self.h_n[hB] != 2))
                self._bad_units(B[bad])
                B = B[~bad]
                # the controlling wager surrenders; the next main wager on the seat decides from now (BJ-4.12.3)
                self.u_surr[B] += 1
                self._close(B[self.u_surr[B] >= self.u_nmain[B]], D_SURRENDER)

    def _double(self, A, hi, amt, amt_null) -> None:
        """``decisions.verify_double`` / ``apply_double`` for the controlling wager (BJ-4.9.1, 4.9.1.1, 4.10.4.1)."""
        p = self.p
        stake = self.h_amount[hi]
        amount = np.where(amt_null, stake, amt)
        r = self.u_ri[A]
        below_min = self.has_min[r] & (amount < self.table_min[r]) & (amount < stake)
        # (after a surrender a back bettor decides, BJ-4.12.3: a double or split of theirs is the scalar engine's)
        bad = (self.h_split_aces[hi] | (self.h_split[hi] & (not p.double_after_split)) | (self.h_n[hi] != 2)
               | (self.u_surr[A] > 0)
               | self.h_decided[hi] | (amount <= 0) | (amount > stake) | (~amt_null & below_min)
               | ((not p.double_for_less) & (amount < stake)))
        self._bad_units(A[bad])
        ok = ~bad
        A, hi, amount = A[ok], hi[ok], amount[ok]
        self.h_doubled[hi] = amount
        self._give(hi, self._draw(A))
        self.h_decided[hi] = True
        self.h_done[hi] = np.where(self.h_hard[hi] > 21, D_BUST, D_DOUBLE)
        self.u_cur[A] += 1
        self.u_inturn[A] = False

    def _split(self, A, hi, amt, amt_null) -> None:
        """``decisions.verify_split`` / ``apply_split`` (BJ-4.10.1, 4.10.1.1, 4.10.2, 4.10.4, 4.10.4.1)."""
        p = self.p
        MH = self.MH
        c0, c1 = self.h_c0[hi], self.h_c1[hi]
        stake = self.h_amount[hi]
        bad = ((self.h_n[hi] != 2) | self.h_decided[hi] | (_POINTS[c0] != _POINTS[c1]) | (self.u_nh[A] >= p.max_hands)
               | (self.u_surr[A] > 0)
               | (self.h_split[hi] & (c0 < 4) & (not p.resplit_aces)) | (~amt_null & (amt != stake)))
        self._bad_units(A[bad])
        ok = ~bad
        A, hi, c0, c1, stake = A[ok], hi[ok], c0[ok], c1[ok], stake[ok]
        if not A.size:
            return
        aces = (c0 < 4) & p.split_aces_one_card
        new = A * MH + self.u_nh[A]
        self.h_hard[new], self.h_ace[new], self.h_n[new] = _POINTS[c1], c1 < 4, 1
        self.h_c0[new], self.h_split[new], self.h_split_aces[new] = c1, True, aces
        self.h_amount[new] = stake
        self.h_hard[hi], self.h_ace[hi], self.h_n[hi] = _POINTS[c0], c0 < 4, 1
        self.h_split[hi], self.h_split_aces[hi] = True, aces
        ident = (c0 // 4 == c1 // 4) if p.pair_by == "rank" else (c0 == c1)
        fresh = self.f_first[hi] < 0  # a hand split again keeps the record of the split that formed it
        self.f_first[hi[fresh]], self.f_ident[hi[fresh]] = c0[fresh], ident[fresh]
        self.f_first[new], self.f_ident[new] = c1, ident
        # the hand formed takes its play position (split_play_order, state.place_split_hand): right after the hand
        # split, or after the seat's last hand; the hand split plays on first either way (BJ-4.10.2)
        q = self.u_cur[A] + 1 if p.split_play_order == "newest_first" else self.u_nh[A]
        old = self.order[A].copy()
        cols = np.arange(MH)[None, :]
        shifted = np.concatenate([old[:, :1], old[:, :-1]], axis=1)
        nh = self.u_nh[A] + 1
        neworder = np.where(cols < q[:, None], old, np.where(cols == q[:, None], (new - A * MH)[:, None], shifted))
        neworder = np.where(cols < nh[:, None], neworder, cols)  # the slots not in use keep their own positions
        self.order[A] = neworder
        self.u_nh[A] = nh
        self.pos_of[(A[:, None] * MH + neworder).ravel()] = np.broadcast_to(cols, neworder.shape).ravel()
        self._give(hi, self._draw(A))
        self._second_card(hi)
        self._after_card(A, hi)

    def _second_card(self, hi: np.ndarray) -> None:
        """``state.second_card_dealt``: a formed hand's first second card decides its split-time Pair wager."""
        now = (self.h_n[hi] == 2) & (self.f_first[hi] >= 0) & (self.f_second[hi] < 0)
        self.f_second[hi[now]] = self.h_c1[hi[now]]

    def _finish(self) -> None:
        """``engine._finish_seat``: the hands left without a decision stand; hands formed get their second card."""
        for _ in range(self.MH + 1):
            A = np.flatnonzero(~self.u_bad & (self.u_cur < self.u_nh))
            if not A.size:
                return
            inturn = self.u_inturn[A]
            if inturn.any():
                self._close(A[inturn])
            B = A[~inturn]
            if B.size:
                closed = self._start(B)
                open_ = B[~closed]
                self._close(open_)

    # -- the dealer (BJ-4.14) ----------------------------------------------------------------------
    def _dealer(self) -> None:
        p = self.p
        R, MH = self.R, self.MH
        ok = self.why == 0
        up = self.up
        up_ten_or_ace = (up < 4) | (up >= 36)
        # what the wagers still in play need of the dealer (dealer.dealer_needs)
        # the hands in use only (most seats play one hand of MH slots)
        nh = self.u_nh
        u_of = np.repeat(np.arange(self.U), nh)
        slot = np.arange(len(u_of)) - np.repeat(np.cumsum(nh) - nh, nh)
        ctrl_live = ~((slot == 0) & ((self.u_surr[u_of] > 0) | self.u_even_money[u_of]))
        back_live = (slot == 0) & (self.u_nmain[u_of] > np.maximum(self.u_surr[u_of], 1))
        live = (ctrl_live | back_live) & (self.h_hard[u_of * MH + slot] <= 21)
        hbj = (slot == 0) & self.u_bj[u_of]
        r_of = self.u_ri[u_of]
        need_total = np.bincount(r_of[live & ~hbj], minlength=R) > 0
        need_second = need_total | (np.bincount(r_of[live & hbj & up_ten_or_ace[r_of]], minlength=R) > 0)
        # an insurance wager on a seat holding a blackjack is void (BJ-4.15.3): it waits for no card of the dealer's
        ins_live = self.ins_rows[~self.u_bj[self.w_u[self.ins_rows]]]
        need_second |= np.bincount(self.w_ri[ins_live], minlength=R) > 0
        d0 = self.r_dealer0
        m = np.where(ok, self.ncards - d0, 0)
        self._mark(np.flatnonzero(ok & (m < 0)), 6)
        m = np.maximum(m, 0)
        hard, ace = _POINTS[up].copy(), up < 4
        stood = np.zeros(R, bool)
        used = np.zeros(R, np.int64)
        W = self.cards.shape[1]
        # draw k of every dealer still drawing: a dealer who stood, or has no card left to take, changes no more
        A = np.arange(R)
        for k in range(int(m.max()) + 1 if R else 0):
            A = A[~stood[A] & (k <= m[A])]
            if not A.size:
                break
            h, a = hard[A], ace[A]
            tot = _total(h, a)
            stands = (tot >= 17) & ~(p.dealer_hits_soft_17 & a & (h <= 11) & (tot == 17))
            used[A[stands]] = k
            stood[A[stands]] = True
            D = A[~stands & (k < m[A])]
            c = np.maximum(self.cards[D, np.minimum(d0[D] + k, W - 1)], 0)
            hard[D] += _POINTS[c]
            ace[D] |= c < 4
        # cards past the dealer's standing total (BJ-7.3), or the dealer short of what a wager needs (BJ-4.14.2)
        extra = stood & (used < m)
        short = ~stood & (need_total | (need_second & (m == 0)))
        self._mark(np.flatnonzero(ok & (extra | short)), 6)
        self.d_total = _total(hard, ace)
        self.d_n = 1 + m
        second = self.cards[np.arange(R), np.minimum(d0, W - 1)]
        self.d_second = np.where(m >= 1, np.maximum(second, 0), -1)
        d1 = self.d_second
        two21 = (m >= 1) & (((up < 4) & (d1 >= 36)) | ((up >= 36) & (d1 >= 0) & (d1 < 4)))
        self.d_bj = np.where(m >= 1, two21.astype(np.int64), np.where(up_ten_or_ace, -1, 0))  # -1: not known

    # -- settlement (settle.py) ----------------------------------------------------------------------
