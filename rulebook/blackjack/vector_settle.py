"""Blackjack over arrays, the settlement: each stake, Pair and insurance wager of the rounds ``vector.py``
played, with the clause and the sentence the scalar engine (``settle.py``) gives, and the round's outcome.

Kept apart from the play so that each module has one job: ``vector.py`` reconstructs the rounds (the deal,
the decisions, the dealer's draws) into arrays; this module reads those arrays and writes the frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from rulebook.blackjack.params import BlackjackParams
from rulebook.cards import card_text
from rulebook.money import Odds, Rounding

# why a round goes to the scalar engine
HANDED: dict[int, str] = {
    1: "a hole-card rule set (the scalar engine says why it is not supported)",
    2: "a card unreadable, foreign or missing from the log, or more copies of a card than the shoe holds",
    3: "a wager the arrays do not take (another bet, no positive amount or a huge one, a hand named on a main or "
       "insurance wager, a repeated id, more than the seat allows, a side bet on a seat without a main wager)",
    4: "a decision the arrays do not take (unknown, naming wagers, on a seat without a main wager, "
       "even money twice, insurance without an insurance wager)",
    5: "a decision the rules refuse, or one out of the order of play",
    6: "the device log has fewer or more cards than the decisions and the dealer's draws (BJ-4.14)",
    7: "a wager the cards cannot settle",
}

# Hand.done as codes
D_STAND, D_BUST, D_21, D_BJ, D_DOUBLE, D_SPLIT_ACES, D_SURRENDER = 1, 2, 3, 4, 5, 6, 7

# the clause of the kinds of part whose clause is one (an index into ``Settlement._settle``'s names)
_CLAUSE_OF_KIND = {1: 1, 2: 2, 3: 3, 5: 6, 7: 10, 10: 11, 11: 10, 12: 6}

_TEXTS = [card_text(c) for c in range(52)]
_CARD = pl.Series(_TEXTS, dtype=pl.String)  # a card's text by code
_NEXT_CARD = pl.Series(['", "' + t for t in _TEXTS] + [""], dtype=pl.String)  # code 52: no card
# a round outcome's text before the dealer's cards, by (dealer blackjack: not known, no, yes) * 2 + dealer bust
_HEAD = pl.Series([f'{{"dealer_blackjack": {bj}, "dealer_bust": {bust}, "dealer_cards": ["'
                   for bj in ("null", "false", "true") for bust in ("false", "true")], dtype=pl.String)
_TAIL = pl.Series([f'"], "dealer_points": {p}}}' for p in range(32)], dtype=pl.String)  # after them, by the points


@dataclass(frozen=True)
class VectorOutput:
    """``wagers``: table_id, round_no, wager_id, net, pay_clause, detail, unsettled_reason (every wager of an
    accepted round); ``rounds``: table_id, round_no, ruleset_version (when ``ctx`` has it), outcome (JSON, the
    scalar engine's ``outcome``); ``handed``: table_id, round_no, why (the rounds for the scalar engine), and
    those rounds' own rows of the three inputs (``handed_ctx``, ``handed_wagers``, ``handed_actions``)."""

    wagers: pl.DataFrame
    rounds: pl.DataFrame
    handed: pl.DataFrame
    handed_ctx: pl.DataFrame
    handed_wagers: pl.DataFrame
    handed_actions: pl.DataFrame


def _odds_win(amount: np.ndarray, odds: Odds, p: BlackjackParams) -> np.ndarray:
    return _round(amount * odds.num, odds.den, p)


def _round(numer: np.ndarray, den: int, p: BlackjackParams) -> np.ndarray:
    """``rulebook.money.round_amount`` over arrays (non-negative numerators)."""
    unit = p.rounding_unit
    step = den * unit
    whole, rest = np.divmod(numer, step)
    if p.rounding is Rounding.DOWN:
        return whole * unit
    if p.rounding is Rounding.UP:
        return (whole + (rest > 0)) * unit
    return (whole + (2 * rest >= step)) * unit


def _total(hard: np.ndarray, ace: np.ndarray) -> np.ndarray:
    """BJ-4.2.1: an ace counts 11 unless that passes 21."""
    return np.where(ace & (hard <= 11), hard + 10, hard)


def _sentences(pt) -> dict[int, pl.Expr]:
    """Each kind of part's sentence, as ``settle.settle_stake`` writes it, over the columns ``_NEEDS`` names.

    Formatted kind by kind on the columns that kind needs: cheaper than one chain of conditions that
    formats every sentence for every row; and left in pieces (a copy of every sentence into one column
    cost more than the few rows that need them together)."""
    where = pl.col("where")
    dbl = pl.col("doubled") > 0
    return {
        1: pl.format("{} surrendered: half of {} returned, {} lost", where, "amount", pl.col("amount") - pl.col("back")),
        2: pl.format("{} blackjack takes even money: +{}", where, "won_em"),
        3: pl.format("{} bust: -{}", where, "risked"),
        4: pl.format("{} bust, then the dealer's blackjack takes only the original wager: -{}, {} returned", where, "lost", "extra"),
        5: pl.format("{} blackjack against dealer blackjack: stand-off", where),
        6: pl.format("{} blackjack pays {}: +{}", where, pl.lit(str(pt.blackjack.odds)), "won_bj"),
        7: pl.format("{} loses to dealer blackjack: -{}", where, "risked"),
        8: pl.format("{} {} loses the original wager to dealer blackjack: -{}{}", where, "mine", "amount",
                     pl.when(dbl).then(pl.format(", the double of {} returned", "doubled")).otherwise(pl.lit(""))),
        9: pl.format("{} {}: dealer blackjack collects only the original wager; the split wager {}{} returned", where, "mine",
                     "amount", pl.when(dbl).then(pl.format(" and the double {}", "doubled")).otherwise(pl.lit(""))),
        10: pl.format("{} {} beats {}: +{}", where, "mine",
                      pl.when(pl.col("d") > 21).then(pl.lit("dealer bust")).otherwise(pl.format("dealer {}", "d")), "won"),
        11: pl.format("{} {} loses to dealer {}: -{}", where, "mine", "d", "risked"),
        12: pl.format("{} {} ties dealer {}: stand-off", where, "mine", "d"),
    }


_NEEDS = {1: ("amount", "back"), 2: ("won_em",), 3: ("risked",), 4: ("lost", "extra"), 5: (), 6: ("won_bj",),
          7: ("risked",), 8: ("mine", "amount", "doubled"), 9: ("mine", "amount", "doubled"), 10: ("mine", "d", "won"),
          11: ("mine", "d", "risked"), 12: ("mine", "d")}


def _by_kind(kind: np.ndarray, sel: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The parts ``sel`` grouped by their kind 1..12, each kind's parts in their order."""
    order = sel[np.argsort(kind[sel].astype(np.int8), kind="stable")]  # small integers: numpy's radix sort
    bounds = np.searchsorted(kind[order], np.arange(14))
    return [(k, order[bounds[k]:bounds[k + 1]]) for k in range(1, 13) if bounds[k + 1] > bounds[k]]


def _places(seat: np.ndarray, number: np.ndarray) -> pl.Series:
    """``seat {seat} hand {number}`` of every part: from a table of the few seats and hands a table has, else
    formatted row by row."""
    hands = int(number.max()) if len(number) else 1
    if len(seat) and 0 <= int(seat.min()) and int(seat.max()) < 64 and int(number.min()) >= 1:
        table = pl.Series([f"seat {s} hand {n}" for s in range(64) for n in range(1, hands + 1)], dtype=pl.String)
        return table.gather((seat * hands + number - 1).astype(np.int64))
    return pl.DataFrame({"seat": seat, "number": number}).select(pl.format("seat {} hand {}", "seat", "number")).to_series()


class Settlement:
    """The settlement half of ``vector._Night``: reads the arrays its play filled (see there)."""

    def _settle(self) -> VectorOutput:
        p = self.p
        pt = p.pay_table
        MH = self.MH
        ok_r = self.why == 0
        ok_u = ok_r[self.u_ri]
        # the stakes: the controlling wager on every hand of its seat, back bettors on the first hand
        # (the hands in use of the seats settled, in order: built from the counts, not sought among all MH slots)
        nh = np.where(ok_u, self.u_nh, 0)
        uu = np.repeat(np.arange(self.U), nh)
        hands = uu * MH + np.arange(len(uu)) - np.repeat(np.cumsum(nh) - nh, nh)
        back_rows = np.flatnonzero((self.w_bet == 0) & ~self.w_ctrl & ok_r[self.w_ri])
        s_h = np.concatenate([hands, self.w_u[back_rows] * MH])
        s_w = np.concatenate([self.u_ctrl[uu], back_rows])
        s_ctrl = np.concatenate([np.ones(len(hands), bool), np.zeros(len(back_rows), bool)])
        s_u = s_h // MH
        s_slot = s_h % MH
        s_r = self.u_ri[s_u]
        amount = np.where(s_ctrl, self.h_amount[s_h], self.w_amount[s_w])
        doubled = np.where(s_ctrl, self.h_doubled[s_h], 0)
        risked = amount + doubled
        original = s_slot == 0
        surrendered = np.where(s_ctrl, original & (self.u_surr[s_u] > 0), self.w_stake[s_w] < self.u_surr[s_u])
        even = s_ctrl & original & self.u_even_money[s_u]
        hard, ace = self.h_hard[s_h], self.h_ace[s_h]
        mine = _total(hard, ace)
        busted = hard > 21
        from_split = self.h_split[s_h]
        hand_bj = original & ~from_split & self.u_bj[s_u]
        d_bj, d_total = self.d_bj[s_r], self.d_total[s_r]
        up = self.up[s_r]
        up_ten_or_ace = (up < 4) | (up >= 36)
        extra = risked - np.where(original, amount, 0)
        oo_bust = (p.bust_before_dealer_blackjack != "loses_all") & p.dealer_blackjack_takes_original_only & (extra != 0)

        K = np.select(
            [surrendered, even, busted & ~oo_bust, busted & (d_bj == -1), busted & (d_bj == 0), busted,
             hand_bj & (d_bj == -1), hand_bj & (d_bj == 1), hand_bj, d_bj == -1,
             (d_bj == 1) & (not p.dealer_blackjack_takes_original_only), (d_bj == 1) & original, d_bj == 1,
             (d_total > 21) | (mine > d_total), mine < d_total],
            [1, 2, 3, 0, 3, 4, 0, 5, 6, 0, 7, 8, 9, 10, 11], 12)
        self._mark(np.unique(s_r[K == 0]), 7)
        ok_r = self.why == 0
        # the clause of each part, as an index into `names` (settle.settle_stake's clauses)
        names = ["", "BJ-4.12.1", pt.even_money.clause, "BJ-4.13.3", "BJ-4.9.5", "BJ-4.10.8", "BJ-6.2.3", "BJ-4.15.2",
                 "BJ-6.2.3.1", pt.blackjack.clause, "BJ-6.2.2", pt.win.clause]
        seat = self.u_seat[s_u]
        number = s_slot + 1
        # the order of a wager's parts: its hands in play order (settle.settle walks state.hands)
        posn = self.pos_of[s_h]
        sel = np.flatnonzero(ok_r[s_r])
        # each kind of part is settled, worded and given its clause on its own rows: the amounts each kind pays
        # (rounded per the rule set) are worked out only where that kind is
        net = np.zeros(len(K), np.int64)
        clause = np.zeros(len(K), np.int64)
        full = {"amount": amount, "doubled": doubled, "risked": risked, "mine": mine, "d": d_total, "extra": extra}
        texts = _sentences(pt)
        places = _places(seat, number)
        # a wager on one hand is its part; one on several (a split) sums them, its clauses listed once each
        many_w = np.bincount(s_w[sel], minlength=len(self.w_ri)) > 1
        names_s = pl.Series(names, dtype=pl.String)
        pieces, split_at, split_text = [], [], []
        for k, at in _by_kind(K, sel):
            amt = amount[at]
            if k == 1:
                back = _round(amt, 2, p)
                got, cols = back - amt, {"back": back}
            elif k == 2:
                got = _odds_win(amt, pt.even_money.odds, p)
                cols = {"won_em": got}
            elif k in (3, 7, 11):
                got = -risked[at]
                cols = {}
            elif k == 4:
                lost = np.where(original[at], amt, 0)
                got, cols = -lost, {"lost": lost}
            elif k == 6:
                got = _odds_win(amt, pt.blackjack.odds, p)
                cols = {"won_bj": got}
            elif k == 8:
                got, cols = -amt, {}
            elif k == 10:
                got = _odds_win(risked[at], pt.win.odds, p)
                cols = {"won": got}
            else:  # 5, 9, 12: a stand-off
                got, cols = 0, {}
            net[at] = got
            if k in (4, 9):
                clause[at] = np.where(doubled[at] > 0, 4, 5)
            elif k == 6:
                clause[at] = np.where(~up_ten_or_ace[at], 7, np.where(d_total[at] == 21, 8, 9))
            elif k == 8:
                clause[at] = np.where(doubled[at] > 0, 4, np.where(from_split[at], 5, 10))
            else:
                clause[at] = _CLAUSE_OF_KIND[k]
            frame = pl.DataFrame({"where": places.gather(at), **{c: cols[c] if c in cols else full[c][at] for c in _NEEDS[k]}})
            text = frame.select(texts[k]).to_series()
            w_at = s_w[at]
            many = many_w[w_at]
            if many.any():
                split_at.append(at[many])
                split_text.append(text.filter(many))
                at, w_at, text = at[~many], w_at[~many], text.filter(~many)
            pieces.append(pl.DataFrame({"_w": w_at, "net": net[at], "pay_clause": names_s.gather(clause[at]), "detail": text}))
        if split_at:  # a split's wager: its parts in play order, summed, clauses once each, sentences joined
            sev, text = np.concatenate(split_at), pl.concat(split_text)
            by = np.lexsort((posn[sev], s_w[sev]))
            sev, text = sev[by], text.gather(by)
            ws = s_w[sev]
            starts = np.flatnonzero(np.concatenate(([True], ws[1:] != ws[:-1])))
            count = np.diff(np.append(starts, len(ws)))
            cl = clause[sev]
            details, clauses = [], []
            for j in range(int(count.max())):  # the j-th part of every split wager at once (a split has a few hands)
                there = count > j
                at = starts + np.where(there, j, 0)
                mask = pl.Series(there)
                details.append(pl.when(mask).then(text.gather(at)))
                # a clause already listed for that wager is not listed again
                new = there & ~np.any([cl[at] == cl[np.minimum(starts + i, at)] for i in range(j)], axis=0) if j else there
                clauses.append(pl.when(pl.Series(new)).then(names_s.gather(cl[at])))
            pieces.append(pl.select(pl.Series("_w", ws[starts]), pl.Series("net", np.add.reduceat(net[sev], starts)),
                                    pl.concat_str(clauses, separator=", ", ignore_nulls=True).alias("pay_clause"),
                                    pl.concat_str(details, separator="; ", ignore_nulls=True).alias("detail")))
        pieces += [o.select("_w", pl.col("net").cast(pl.Int64), "pay_clause", "detail")
                   for o in (self._pairs(ok_r), self._split_pairs(ok_r), self._insured(ok_r))]
        settled = pl.concat(pieces)
        # in the wagers' own order (each wager is settled once): round by round as they came, so that the audit puts
        # them beside its wagers by position (``joins.attach_round_blocks``), not by a join hashing the keys
        wrows = settled["_w"].to_numpy()
        settled_rows = np.zeros(len(self.w_ri), bool)
        settled_rows[wrows] = True
        if settled_rows.sum() == len(wrows):  # (a wager twice would keep the pieces' order)
            place = np.zeros(len(self.w_ri), np.int64)
            place[wrows] = np.arange(len(wrows))
            wrows = np.flatnonzero(settled_rows)
            settled = settled.rechunk().gather(place[wrows])
        wagers = pl.DataFrame({
            "table_id": self.w["table_id"].gather(wrows),
            "round_no": self.w["round_no"].gather(wrows),
            "wager_id": self.w["wager_id"].gather(wrows),
            "net": settled["net"],
            "pay_clause": settled["pay_clause"],
            "detail": settled["detail"],
        }).with_columns(pl.lit(None, dtype=pl.String).alias("unsettled_reason"))
        back = np.flatnonzero(~ok_r)
        handed = self.ctx.select("table_id", "round_no")[back].with_columns(
            pl.Series("why", [HANDED[int(c)] for c in self.why[back]], dtype=pl.String))
        rounds = self._outcomes(ok_r) if self.with_rounds else pl.DataFrame()
        # the few rows of the rounds handed back, gathered by number (a filter reads the whole frame)
        return VectorOutput(wagers, rounds, handed, self.ctx_in[back],
                            self.w[np.flatnonzero(~ok_r[self.w_ri])].drop("_ri"),
                            self.a[np.flatnonzero(~ok_r[self.a_ri])].drop("_ri"))

    def _pairs(self, ok_r: np.ndarray) -> pl.DataFrame:
        """The Pair wager on the seat's first two cards (BJ-6.3, 4.2.3.1)."""
        p = self.p
        rows = np.flatnonzero((self.w_bet == 1) & (self.w_hand == 0) & ok_r[self.w_ri])
        u = self.w_u[rows]
        a, b = self.first0[u], self.first1[u]
        pair = (a // 4 == b // 4) if p.pair_by == "rank" else (a == b)
        amount = self.w_amount[rows]
        won = _odds_win(amount, p.pay_table.pair.odds, p)
        shown = _CARD.gather(a) + " " + _CARD.gather(b)
        df = pl.DataFrame({"_w": rows, "pair": pair, "seat": self.u_seat[u], "shown": shown, "won": won, "amount": amount,
                           "tens": (a >= 36) & (b >= 36)})
        return df.select(
            "_w",
            pl.when("pair").then(pl.col("won")).otherwise(-pl.col("amount")).alias("net"),
            pl.when("pair").then(pl.lit("BJ-6.3.1")).when("tens").then(pl.lit("BJ-4.2.3.1")).otherwise(pl.lit("BJ-6.3.2"))
            .alias("pay_clause"),
            pl.when("pair").then(pl.format("seat {} {} is a pair: pays {}, +{}", "seat", "shown", pl.lit(str(p.pay_table.pair.odds)), "won"))
            .otherwise(pl.format("seat {} {} is not a pair: -{}", "seat", "shown", "amount")).alias("detail"),
        )

    def _split_pair_checks(self) -> None:
        """``engine._split_pair_checks``: a split-time Pair wager on a hand no split formed, or formed from cards
        that are not identical, is an irregularity: those rounds go to the scalar engine."""
        rows = np.flatnonzero((self.w_bet == 1) & (self.w_hand != 0) & (self.why[self.w_ri] == 0))
        u, slot = self.w_u[rows], self.w_hand[rows] - 1
        there = (slot >= 0) & (slot < self.u_nh[u])
        hi = u * self.MH + np.clip(slot, 0, self.MH - 1)
        bad = ~there | (self.f_first[hi] < 0) | ~self.f_ident[hi] | (self.f_second[hi] < 0)
        self._bad_units(u[bad])
        self.sp_rows, self.sp_hi = rows, hi

    def _split_pairs(self, ok_r: np.ndarray) -> pl.DataFrame:
        """The Pair wager placed when splitting: the hand's second card against its first (BJ-4.10.1.2)."""
        p = self.p
        pair = p.pay_table.pair
        keep = ok_r[self.w_ri[self.sp_rows]]
        rows, hi = self.sp_rows[keep], self.sp_hi[keep]
        first, second = self.f_first[hi], self.f_second[hi]
        win = (first // 4 == second // 4) if p.pair_by == "rank" else (first == second)
        amount = self.w_amount[rows]
        df = pl.DataFrame({"_w": rows, "win": win, "seat": self.w_seat[rows], "hand": self.w_hand[rows],
                           "shown": _CARD.gather(first) + " " + _CARD.gather(second),
                           "won": _odds_win(amount, pair.odds, p), "amount": amount})
        return df.select(
            "_w",
            pl.when("win").then(pl.col("won")).otherwise(-pl.col("amount")).alias("net"),
            pl.when("win").then(pl.lit(f"BJ-4.10.1.2, {pair.clause}")).otherwise(pl.lit("BJ-4.10.1.2")).alias("pay_clause"),
            pl.when("win").then(pl.format("seat {} hand {} {}: the second card dealt to the split hand is identical: pays {}, +{}",
                                          "seat", "hand", "shown", pl.lit(str(pair.odds)), "won"))
            .otherwise(pl.format("seat {} hand {} {}: the second card dealt to the split hand is not identical: -{}",
                                 "seat", "hand", "shown", "amount")).alias("detail"),
        )

    def _insured(self, ok_r: np.ndarray) -> pl.DataFrame:
        """Insurance: void against the seat's own blackjack (BJ-4.15.3), else the dealer's second card (BJ-4.14.4)."""
        p = self.p
        ins = p.pay_table.insurance
        rows = self.ins_rows[ok_r[self.w_ri[self.ins_rows]]]
        u = self.w_u[rows]
        second = np.maximum(self.d_second[self.w_ri[rows]], 0)
        ten = second >= 36
        amount = self.w_amount[rows]
        won = _odds_win(amount, ins.odds, p)
        df = pl.DataFrame({"_w": rows, "own_bj": self.u_bj[u], "ten": ten, "seat": self.u_seat[u], "won": won, "amount": amount,
                           "card": _CARD.gather(second)})
        return df.select(
            "_w",
            pl.when("own_bj").then(0).when("ten").then(pl.col("won")).otherwise(-pl.col("amount")).alias("net"),
            pl.when("own_bj").then(pl.lit("BJ-4.15.3")).when("ten").then(pl.lit(ins.clause)).otherwise(pl.lit("BJ-4.14.4"))
            .alias("pay_clause"),
            pl.when("own_bj").then(pl.format("seat {} holds a blackjack: insurance void, returned", "seat"))
            .when("ten").then(pl.format("dealer's second card {} is a ten: insurance pays {}, +{}", "card", pl.lit(str(ins.odds)), "won"))
            .otherwise(pl.format("dealer's second card {} is not a ten: insurance loses -{}", "card", "amount")).alias("detail"),
        )

    def _outcomes(self, ok_r: np.ndarray) -> pl.DataFrame:
        """``settle.outcome`` as the JSON text the scalar path writes (keys sorted). Its fixed pieces come from small
        tables of texts (the head by dealer blackjack and bust, the tail by the dealer's points), so that each round's
        text is one concatenation of gathered columns."""
        rows = np.flatnonzero(ok_r)
        m = self.d_n[rows] - 1
        points = self.d_total[rows]
        # the dealer's cards: the up card, then what was drawn
        W = self.cards.shape[1]
        cols = [_HEAD.gather((self.d_bj[rows] + 1) * 2 + (points > 21)), _CARD.gather(self.up[rows])]
        for k in range(int(m.max()) if len(m) else 0):
            c = self.cards[rows, np.minimum(self.r_dealer0[rows] + k, W - 1)]
            cols.append(_NEXT_CARD.gather(np.where(k < m, np.maximum(c, 0), 52)))
        if len(points) and 0 <= int(points.min()) and int(points.max()) < len(_TAIL):
            cols.append(_TAIL.gather(points))
        else:
            cols.append(pl.select(pl.concat_str([pl.lit('"], "dealer_points": '), pl.lit(pl.Series(points)).cast(pl.String),
                                                 pl.lit("}")])).to_series())
        ctx = self.ctx if len(rows) == self.R else self.ctx[rows]
        return ctx.with_columns(pl.concat_str(cols).alias("outcome"))
