"""Settle many Hold'em Bonus rounds at once, from ``RoundInput``s (the simulator's and the benchmarks' batch path).

The nightly audit goes further: ``pipelines/audit/holdem_pass.py`` reads its frames as columns, with no
``RoundInput`` or ``RoundResult`` per round, and uses this module's array kernels (:func:`main_game_of`,
:func:`bonus_of` over the pay tables of several rule sets at once, :func:`jackpot_lines`) and its decision reader
(:func:`read_status`).

The clean round -- every card readable and where the procedure puts it, every decision legal -- is
the common case, and it is settled here over arrays: the rounds are grouped by rule set, deal mode
and number of seats, so that each hand's cards sit at fixed event positions (``deal.layout``) and
are gathered with one fancy index; every 7-card hand of the batch (players and dealers of all rule
sets together) goes through ``poker.evaluate7`` in one call, the jackpot hands in one call per
width; the settlement is numpy arithmetic per wager (:func:`main_game`, :func:`bonus`).

Any other round (an irregularity, an unread card, a decision the rules do not allow, a jackpot
hand, a second wager of a kind on one area, a jackpot wager off the stated stake -- a few per night) is handed to the scalar engine (``engine.settle_round``), which is the
reference: ``tests/test_holdem_vector.py`` proves the two agree on random rounds.
"""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rulebook import poker
from rulebook.cards import FOREIGN, card_text
from rulebook.holdem_bonus import engine, text
from rulebook.holdem_bonus.deal import Layout, layout, reconstruct
from rulebook.holdem_bonus.decisions import CONCEDED, FOLDED, PLAYED, read_seat
from rulebook.holdem_bonus.params import BONUS_HANDS, HoldemBonusParams, stated
from rulebook.round import Action, RoundInput, RoundResult, Step, Wager
from rulebook.settlement import Settlement

BET_CODES = {b: k for k, b in enumerate(engine.BETS)}  # ante 0, bonus 1, flop 2, turn 3, river 4, progressive 5
STATUS_CODES = {PLAYED: 0, FOLDED: 1, CONCEDED: 2}

# outcome kinds of a main-game or Bonus wager, as returned by main_game() and bonus()
WIN, ANTE_STAND_OFF, LOSE, STAND_OFF, FOLD, CONCEDE, BONUS_WIN, BONUS_LOSE = range(8)


# --------------------------------------------------------------------------------------------
# array kernels


def main_game(
    params: HoldemBonusParams, bet: np.ndarray, status: np.ndarray, player: np.ndarray, dealer: np.ndarray, amount: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Net and outcome kind of Ante/Flop/Turn/River wagers (bet codes 0, 2, 3, 4), per HTB-5.2-5.6.

    ``status``: 0 played, 1 folded, 2 conceded; ``player``/``dealer``: 7-card strengths. One rule set's
    :func:`main_game_of`.
    """
    return main_game_of(pay_tables((params,)), 0, bet, status, player, dealer, amount)


@dataclass(frozen=True)
class PayTables:
    """The main game's and the Bonus's pay tables of several rule sets, one block per rule set (its *version*
    index in ``params``), so that the wagers of every rule set are settled by one gather each: a version column
    picks the block (:func:`main_game_of`, :func:`bonus_of`)."""

    params: tuple[HoldemBonusParams, ...]
    main_num: np.ndarray  # by (version, kind, bet): ``amount * num // den``
    main_den: np.ndarray
    qualifier: np.ndarray  # by version: the category an Ante's hand must reach (HTB-5.3)
    bonus_line: np.ndarray  # by (version, ranks, suited, the dealer's A-A): the pay-table line, -1 none
    bonus_num: np.ndarray  # by (version, line); each block's last entry: a loss, -1/1
    bonus_den: np.ndarray
    bonus_kind: np.ndarray  # by (version, status, a line met)
    main_whole: bool  # every ``den`` is 1 (whole odds, e.g. 1:1, 3:1): the net needs no division
    bonus_whole: bool


_MAIN_WIDTH = len(BET_CODES) + 1  # the bet codes and one column for any other code
_MAIN_BLOCK = 8 * _MAIN_WIDTH
_BONUS_KEYS = 13 * 13 * 2 * 2


def pay_tables(params: Sequence[HoldemBonusParams]) -> PayTables:
    """:class:`PayTables` of ``params`` in that order (kept for the next call with the same rule sets)."""
    return _pay_tables(tuple(params))


@functools.lru_cache(maxsize=64)
def _pay_tables(params: tuple[HoldemBonusParams, ...]) -> PayTables:
    mains = [_main_tables(p) for p in params]
    bonuses = [_bonus_tables(p) for p in params]
    width = max((len(num) for _, num, _ in bonuses), default=1)
    bonus_num = np.full((len(params), width), -1, dtype=np.int64)
    bonus_den = np.ones((len(params), width), dtype=np.int64)
    for v, (_, num, den) in enumerate(bonuses):
        bonus_num[v, : len(num) - 1], bonus_den[v, : len(den) - 1] = num[:-1], den[:-1]
    out = PayTables(
        params=params,
        main_num=np.concatenate([num for num, _ in mains]) if params else np.zeros(0, dtype=np.int64),
        main_den=np.concatenate([den for _, den in mains]) if params else np.ones(0, dtype=np.int64),
        qualifier=np.array([engine.QUALIFIER_CATEGORY[p.ante_qualifier] for p in params], dtype=np.int64),
        bonus_line=np.concatenate([line for line, _, _ in bonuses]) if params else np.zeros(0, dtype=np.int64),
        bonus_num=bonus_num.reshape(-1),
        bonus_den=bonus_den.reshape(-1),
        bonus_kind=np.concatenate([_BONUS_KIND_FOLD_LOSES if p.folded_bonus_loses else _BONUS_KIND for p in params])
        if params else np.zeros(0, dtype=np.int64),
        main_whole=all(int(den.max(initial=1)) == 1 and int(den.min(initial=1)) == 1 for _, den in mains),
        bonus_whole=bool((bonus_den == 1).all()),
    )
    for a in (out.main_num, out.main_den, out.qualifier, out.bonus_line, out.bonus_num, out.bonus_den, out.bonus_kind):
        a.flags.writeable = False
    return out


def main_game_of(
    tables: PayTables, version: np.ndarray | int, bet: np.ndarray, status: np.ndarray, player: np.ndarray,
    dealer: np.ndarray, amount: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Net and outcome kind of Ante/Flop/Turn/River wagers (bet codes 0, 2, 3, 4), per HTB-5.2-5.6, each by the
    rule set ``tables.params[version]`` (``version`` per wager, or one for all).

    Each wager's kind is one gather from a small table by (status, comparison, an Ante below the qualifier), and
    its net ``amount * num // den`` with ``num/den`` from a table by (version, kind, bet): a win pays the bet's
    odds, a loss, fold or concession ``-1/1``, a stand-off ``0/1`` (a win on any other bet code pays ``0/1``).
    """
    amount = np.asarray(amount).astype(np.int64, copy=False)
    bet = np.asarray(bet)
    status = np.asarray(status)
    player, dealer = np.asarray(player), np.asarray(dealer)
    n_bets = len(BET_CODES)
    if bet.size and (bet.min() < 0 or bet.max() >= n_bets):
        bet = np.where((bet >= 0) & (bet < n_bets), bet, n_bets)  # another code: a row of 0/1
    if status.size and (status.min() < 0 or status.max() > 2):
        status = np.where(status == 1, 1, np.where(status == 2, 2, 0))  # any other status is a hand in play
    below = poker.category(player) < tables.qualifier[version]
    below &= bet == BET_CODES["ante"]
    # 0 the player's hand higher, 1 equal, 2 lower
    compare = np.sign(np.subtract(dealer, player, dtype=np.int64)) + 1
    kind = _MAIN_KIND[(status * 3 + compare) * 2 + below]
    at = np.asarray(version) * _MAIN_BLOCK + kind * _MAIN_WIDTH + bet
    net = amount * tables.main_num[at]
    return (net if tables.main_whole else net // tables.main_den[at]), kind


def _main_kind_table() -> np.ndarray:
    """The outcome kind by (status 0-2, comparison 0 higher / 1 equal / 2 lower, an Ante below the qualifier)."""
    table = np.empty(3 * 3 * 2, dtype=np.int64)
    for status in range(3):
        for compare in range(3):
            for below in range(2):
                kind = (WIN, STAND_OFF, LOSE)[compare]
                if compare == 0 and below:
                    kind = ANTE_STAND_OFF
                kind = (kind, FOLD, CONCEDE)[status]
                table[(status * 3 + compare) * 2 + below] = kind
    table.flags.writeable = False
    return table


_MAIN_KIND = _main_kind_table()


def _main_tables(params: HoldemBonusParams) -> tuple[np.ndarray, np.ndarray]:
    """``num`` and ``den`` of a wager's net by ``kind * (bets + 1) + bet`` (the last bet column: any other code)."""
    width = len(BET_CODES) + 1
    num = np.zeros(8 * width, dtype=np.int64)
    den = np.ones(8 * width, dtype=np.int64)
    for name in ("ante", "flop", "turn", "river"):
        odds = getattr(params, name).odds
        num[WIN * width + BET_CODES[name]], den[WIN * width + BET_CODES[name]] = odds.num, odds.den
    for kind in (LOSE, FOLD, CONCEDE):
        num[kind * width: (kind + 1) * width] = -1
    return num, den


def _bonus_class_table() -> np.ndarray:
    """BONUS_HANDS index (or -1) by (rank 1, rank 2, suited) of two hole cards, without the dealer's A-A."""
    table = np.full((13, 13, 2), -1, dtype=np.int8)
    index = {h: k for k, h in enumerate(BONUS_HANDS)}
    ace, jack, queen, king = 0, 10, 11, 12
    for r in range(13):
        hand = "aa" if r == ace else "kk_qq_jj" if r in (jack, queen, king) else "pair_2_to_10"
        table[r, r, 0] = index[hand]
    for other, suited_hand, offsuit_hand in (
        (king, "ak_suited", "ak_offsuit"),
        (queen, "aq_aj_suited", "aq_aj_offsuit"),
        (jack, "aq_aj_suited", "aq_aj_offsuit"),
    ):
        for a, b in ((ace, other), (other, ace)):
            table[a, b, 1] = index[suited_hand]
            table[a, b, 0] = index[offsuit_hand]
    table.flags.writeable = False
    return table


BONUS_CLASS = _bonus_class_table()


def bonus_hand_index(hole: np.ndarray, dealer: np.ndarray) -> np.ndarray:
    """BONUS_HANDS index of each pair of hole cards (n, 2), given the dealer's cards (n, 2); -1 = none."""
    r, s = hole // 4, hole % 4
    idx = BONUS_CLASS[r[:, 0], r[:, 1], (s[:, 0] == s[:, 1]).astype(np.intp)].astype(np.int64)
    dealer_aa = (dealer[:, 0] // 4 == 0) & (dealer[:, 1] // 4 == 0)
    return np.where((idx == BONUS_HANDS.index("aa")) & dealer_aa, BONUS_HANDS.index("aa_vs_dealer_aa"), idx)


def bonus(
    params: HoldemBonusParams, status: np.ndarray, hole: np.ndarray, dealer: np.ndarray, amount: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Net, outcome kind and pay-table line index (-1 = none) of Bonus wagers (HTB-6.1.2, 4.11.2.i, 5.6): one rule
    set's :func:`bonus_of`."""
    return bonus_of(pay_tables((params,)), 0, status, hole, dealer, amount)


def bonus_of(
    tables: PayTables, version: np.ndarray | int, status: np.ndarray, hole: np.ndarray, dealer: np.ndarray,
    amount: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Net, outcome kind and pay-table line index (-1 = none) of Bonus wagers (HTB-6.1.2, 4.11.2.i, 5.6), each by
    the rule set ``tables.params[version]``.

    The line is one gather from the rule set's table by (hole ranks, suited, the dealer's A-A); the kind one
    gather by (status, a line met); the net ``amount * num // den`` with a loss as ``-1/1``."""
    amount = np.asarray(amount).astype(np.int64, copy=False)
    hole, dealer, status = np.asarray(hole), np.asarray(dealer), np.asarray(status)
    version = np.asarray(version)
    r = hole // 4
    key = (r[:, 0].astype(np.intp) * 13 + r[:, 1]) * 4
    key += (hole[:, 0] % 4 == hole[:, 1] % 4) * 2
    key += (dealer[:, 0] // 4 == 0) & (dealer[:, 1] // 4 == 0)
    line = tables.bonus_line[version * _BONUS_KEYS + key]
    if status.size and (status.min() < 0 or status.max() > 2):
        status = np.where(status == 1, 1, np.where(status == 2, 2, 0))
    kind = tables.bonus_kind[version * 6 + status * 2 + (line >= 0)]
    width = len(tables.bonus_num) // max(len(tables.params), 1)
    at = version * width + np.where(kind == BONUS_WIN, line, width - 1)  # the block's last: a loss, -1/1
    net = amount * tables.bonus_num[at]
    return (net if tables.bonus_whole else net // tables.bonus_den[at]), kind, line


def _bonus_kind_table(folded_loses: bool) -> np.ndarray:
    """A Bonus wager's kind by (status 0 in play / 1 folded / 2 conceded, a pay-table line met)."""
    table = np.array([BONUS_LOSE, BONUS_WIN] * 3, dtype=np.int64)
    if folded_loses:
        table[2:4] = FOLD
    table[4:6] = CONCEDE
    table.flags.writeable = False
    return table


_BONUS_KIND = _bonus_kind_table(False)
_BONUS_KIND_FOLD_LOSES = _bonus_kind_table(True)


def _bonus_tables(params: HoldemBonusParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rule set's pay-table line (-1: none) by ``((rank 1 * 13 + rank 2) * 2 + suited) * 2 + dealer's A-A``,
    and each line's ``num``, ``den`` (one more entry: a loss, ``-1/1``)."""
    lines = params.bonus_pay_table
    line_of = np.full(len(BONUS_HANDS) + 1, -1, dtype=np.int64)  # BONUS_HANDS index -> pay-table line, last = none
    num = np.full(len(lines) + 1, -1, dtype=np.int64)
    den = np.ones(len(lines) + 1, dtype=np.int64)
    for k, line in enumerate(lines):
        line_of[BONUS_HANDS.index(line.hand)] = k
        o = line.odds.split(":")
        num[k], den[k] = int(o[0]), int(o[1])
    hand = BONUS_CLASS.astype(np.int64)
    aa, aa_vs = BONUS_HANDS.index("aa"), BONUS_HANDS.index("aa_vs_dealer_aa")
    # A-A against the dealer's A-A: its own line, or the A-A line where the table has no 1000:1 line
    against_aa = np.where((hand == aa) & (line_of[aa_vs] >= 0), aa_vs, hand)
    line_by = line_of[np.stack([hand, against_aa], axis=-1)].reshape(-1)  # -1 (no hand) reads line_of's last: none
    return line_by, num, den


def jackpot_lines(params: HoldemBonusParams, status: np.ndarray, hf: np.ndarray, ht: np.ndarray, seven: np.ndarray, community: np.ndarray) -> np.ndarray:
    """(n, lines) bool: which jackpot lines each hand meets (a folded hand only the after-fold lines)."""
    prog = params.progressive
    out = np.zeros((len(status), len(prog.lines)), dtype=bool)
    cat = {k: poker.category(v) for k, v in (("hf", hf), ("ht", ht), ("seven", seven), ("community", community))}
    source = {"hole_and_flop": "hf", "hole_and_turn": "ht", "best_of_seven": "seven", "best_of_seven_with_hole": "seven", "community": "community"}
    values = {"hf": hf, "ht": ht, "seven": seven, "community": community}
    wanted = {"straight_flush": poker.STRAIGHT_FLUSH, "four_of_a_kind": poker.FOUR_OF_A_KIND, "full_house": poker.FULL_HOUSE, "flush": poker.FLUSH}
    after_fold = status != 0
    for k, line in enumerate(prog.lines):
        s = values[source[line.cards]]
        if line.hand == "royal_flush":
            met = s == poker.ROYAL_FLUSH
        else:
            met = cat[source[line.cards]] == wanted[line.hand]
            if line.hand == "straight_flush":
                met &= s != poker.ROYAL_FLUSH
        if line.cards == "best_of_seven_with_hole":
            met &= seven > community
        if not line.pays_after_fold:
            met &= ~after_fold
        out[:, k] = met
    return out


# --------------------------------------------------------------------------------------------
# the batch


@dataclass
class _Clean:
    """A round the vector path settles: its index in the batch and what the pre-pass read."""

    index: int
    seats: tuple[int, ...]
    statuses: list[str]  # per seat, in seat order: played | folded | conceded
    codes: list[int]
    burns: list[bool]
    rows: list[int]  # per wager, in placing order, flat: seat index, bet code, amount


def settle_many(rounds: Sequence[RoundInput], with_steps: bool = False) -> list[RoundResult]:
    """Settle every round; equal to ``[engine.settle_round(r) for r in rounds]`` (steps only if ``with_steps``)."""
    results: list[RoundResult | None] = [None] * len(rounds)
    groups: dict[tuple, list[_Clean]] = defaultdict(list)
    memo: dict = {}
    for k, ri in enumerate(rounds):
        clean = _prepass(k, ri, memo)
        if clean is None:
            results[k] = _scalar(ri, with_steps)
        else:
            groups[(id(ri.ruleset.params), ri.deal_mode, len(clean.seats))].append(clean)

    # gather every clean round's hands at the fixed positions of its group's layout
    batches = []
    for (pid, mode, n), members in groups.items():
        params: HoldemBonusParams = rounds[members[0].index].ruleset.params
        lay = layout(*params.deal(mode), n)
        for m in (m for m in members if len(m.codes) != lay.length):
            results[m.index] = _scalar(rounds[m.index], with_steps)
        members = [m for m in members if len(m.codes) == lay.length]
        if not members:
            continue
        codes = np.array([m.codes for m in members], dtype=np.int64).reshape(len(members), lay.length)
        burns = np.array([m.burns for m in members], dtype=bool).reshape(len(members), lay.length)
        ok = _valid_rows(codes, burns, lay)
        for m in (m for m, good in zip(members, ok) if not good):
            results[m.index] = _scalar(rounds[m.index], with_steps)
        members = [m for m, good in zip(members, ok) if good]
        if members:
            codes = codes[ok]
            batches.append((params, mode, members, codes[:, lay.hole], codes[:, lay.community], codes[:, lay.dealer]))
    if not batches:
        return results  # type: ignore[return-value]

    # one evaluator call for every 7-card hand of the batch
    players = np.concatenate([np.concatenate([h.reshape(-1, 2), np.repeat(c, h.shape[1], axis=0)], axis=1) for _, _, _, h, c, _ in batches])
    dealers = np.concatenate([np.concatenate([d, c], axis=1) for _, _, _, _, c, d in batches])
    strengths = poker.evaluate7(np.concatenate([players, dealers]))
    p7_all, d7_all = strengths[: len(players)], strengths[len(players) :]

    p_off = d_off = 0
    for params, mode, members, hole, community, dealer in batches:
        g, n = hole.shape[0], hole.shape[1]
        p7 = p7_all[p_off : p_off + g * n].reshape(g, n)
        d7 = d7_all[d_off : d_off + g]
        p_off += g * n
        d_off += g
        _settle_batch(params, mode, members, rounds, hole, community, dealer, p7, d7, results, with_steps)
    return results  # type: ignore[return-value]


def _scalar(ri: RoundInput, with_steps: bool) -> RoundResult:
    r = engine.settle_round(ri)
    if with_steps:
        return r
    return RoundResult(r.settlements, r.unsettled, (), r.irregularities, r.void, r.outcome)


def _prepass(k: int, ri: RoundInput, memo: dict) -> _Clean | None:
    """The round's seats, decisions, wagers and card codes if nothing in it needs the scalar engine's judgement."""
    params = ri.ruleset.params
    mode = ri.deal_mode
    if (mode != "shoe" and mode != "device") or ri.ruleset.game != "holdem_bonus":
        return None
    if ri.decks is not None and ri.decks != params.decks:
        return None
    wagers = ri.wagers
    seats = sorted({w.seat for w in wagers if w.bet == "ante"})
    if not seats:
        return None
    index = {s: j for j, s in enumerate(seats)}
    bets_by = [""] * len(seats)  # strings, not lists: nothing here for the garbage collector to track
    rows: list[int] = []  # flat: seat index, bet code, amount per wager
    progressive_ok = params.progressive is not None
    stake = params.progressive.stake if progressive_ok and stated(params.progressive.stake) else None
    for w in wagers:
        j = index.get(w.seat)
        code = BET_CODES.get(w.bet)
        if j is None or code is None or w.amount < 0 or (code == 5 and not progressive_ok):
            return None
        if "0123456"[code] in bets_by[j]:  # a second wager of a kind on the area (HTB-4.7.2)
            return None
        if code == 5 and stake is not None and w.amount != stake:  # a jackpot wager off the stake
            return None
        bets_by[j] += "0123456"[code]
        rows += (j, code, w.amount)
    actions_by = [""] * len(seats)
    for a in ri.actions:
        j = index.get(a.seat)
        if j is None or "," in a.action:
            return None
        actions_by[j] += a.action + ","
    statuses = []
    for j in range(len(seats)):
        status = _clean_status(memo, params, mode, actions_by[j], "".join(sorted(bets_by[j])))
        if status is None:
            return None
        statuses.append(status)
    codes = [c.code for c in ri.cards]
    if FOREIGN in codes:
        return None
    return _Clean(k, tuple(seats), statuses, codes, [c.is_burn for c in ri.cards], rows)


def _clean_status(memo: dict, params: HoldemBonusParams, mode: str, actions: str, bets: str) -> str | None:
    """The seat's status if its decisions and wagers are clean, else None.

    Read by the one decision reader (decisions.read_seat) and memoised, for one batch, by the shape
    of the decisions -- a night has a few dozen distinct shapes. The memo is keyed by the identity
    of the frozen params (hashing them deeply per seat cost more than the reading itself); it lives
    only as long as the batch, whose rounds keep the params alive.
    """
    key = f"{id(params)}|{mode}|{actions}|{bets}"
    if key not in memo:
        memo[key] = read_status(params, mode, tuple(actions.split(",")[:-1]), tuple(engine.BETS[int(c)] for c in bets))
    return memo[key]


def read_status(params: HoldemBonusParams, mode: str, actions: tuple[str, ...], bets: tuple[str, ...]) -> str | None:
    """A seat's status (played, folded, conceded) from its action names and the bets it placed, read by the
    engine's own decision reader; None if anything in them needs the scalar engine's judgement."""
    wagers = [Wager(f"w{k}", 1, b, 1) for k, b in enumerate(bets)]
    play = read_seat(1, [Action(1, 1, a) for a in actions], wagers, params.decisions(mode), params.showdown)
    if play.irregularities or play.refused or play.status not in STATUS_CODES:
        return None
    return play.status


def _valid_rows(codes: np.ndarray, burns: np.ndarray, lay: Layout) -> np.ndarray:
    """Rows whose burns are where the layout has them, every dealt card readable, no card twice."""
    ok = (burns == lay.is_burn).all(axis=1)
    dealt = codes[:, ~lay.is_burn]
    ok &= (dealt >= 0).all(axis=1) & (dealt <= 51).all(axis=1)
    srt = np.sort(np.where(codes < 0, 1000 + np.arange(codes.shape[1]), codes), axis=1)
    ok &= (np.diff(srt, axis=1) != 0).all(axis=1)
    return ok


def _settle_batch(params, mode, members, rounds, hole, community, dealer, p7, d7, results, with_steps) -> None:
    g, n = hole.shape[0], hole.shape[1]

    # one row per wager: (round, seat index, bet code, amount)
    counts = [len(m.rows) // 3 for m in members]
    table = np.fromiter(itertools.chain.from_iterable(m.rows for m in members), dtype=np.int64, count=3 * sum(counts)).reshape(-1, 3)
    r_idx = np.repeat(np.arange(g), counts)
    s_idx, bet, amount = table[:, 0], table[:, 1], table[:, 2]
    seat_status = np.array([[STATUS_CODES[st] for st in m.statuses] for m in members], dtype=np.int64).reshape(g, n)
    status = seat_status[r_idx, s_idx]
    player, dealer_s = p7[r_idx, s_idx], d7[r_idx]

    net_main, kind_main = main_game(params, bet, status, player, dealer_s, amount)
    hole_w = hole[r_idx, s_idx]
    net_bonus, kind_bonus, line_bonus = bonus(params, status, hole_w, dealer[r_idx], amount)
    is_bonus = bet == BET_CODES["bonus"]
    net = np.where(is_bonus, net_bonus, net_main)
    kind = np.where(is_bonus, kind_bonus, kind_main)

    # the jackpot: the lines each hand meets; a round with a hand that meets one goes to the scalar engine
    is_jp = bet == BET_CODES["progressive"]
    scalar_rounds = np.zeros(g, dtype=bool)
    if is_jp.any():
        jp = np.flatnonzero(is_jp)
        cards = np.concatenate([hole_w[jp], community[r_idx[jp]]], axis=1)
        hf = poker.evaluate(cards[:, :5])
        ht = poker.evaluate(cards[:, :6])
        comm = poker.evaluate(community[r_idx[jp]])
        jp_status = np.where((status[jp] == 2) & params.progressive.checked_after_concede, 1, status[jp])
        met = jackpot_lines(params, jp_status, hf, ht, player[jp], comm).any(axis=1)
        conceded_lost = (status[jp] == 2) & (not params.progressive.checked_after_concede)
        met &= ~conceded_lost
        scalar_rounds[r_idx[jp[met]]] = True
        net[jp] = -amount[jp]
        kind[jp] = np.where(conceded_lost, CONCEDE, -1)

    # the results, worded by the shared sentences
    decisions = params.decisions(mode)
    sd = params.showdown
    prog = params.progressive
    payouts = {b: getattr(params, b) for b in ("ante", "flop", "turn", "river")}
    per_round: list[dict[str, Settlement]] = [dict() for _ in range(g)]
    net_l, kind_l, line_l = net.tolist(), kind.tolist(), line_bonus.tolist()
    player_l, dealer_l = player.tolist(), dealer_s.tolist()
    scalar_l, status_l = scalar_rounds.tolist(), status.tolist()
    hole_l = hole_w.tolist()
    odds_text = {b: str(p.odds) for b, p in payouts.items()}
    i = 0
    for r, m in enumerate(members):
        wagers = rounds[m.index].wagers
        if scalar_l[r]:
            i += len(wagers)
            continue
        out = per_round[r]
        for w in wagers:
            k, b = kind_l[i], w.bet
            if b == "progressive":
                if k == CONCEDE:
                    s = Settlement(net_l[i], sd.concede, text.conceded(b, w.seat))
                else:
                    s = Settlement(net_l[i], prog.lose_clause, text.jackpot_lose(status_l[i] != 0))
            elif k == FOLD:
                s = Settlement(net_l[i], decisions.fold, text.folded(b, w.seat))
            elif k == CONCEDE:
                s = Settlement(net_l[i], sd.concede, text.conceded(b, w.seat))
            elif k == BONUS_WIN:
                line = params.bonus_pay_table[line_l[i]]
                s = Settlement(net_l[i], line.clause, text.bonus_win(tuple(hole_l[i]), line.hand, line.odds))
            elif k == BONUS_LOSE:
                s = Settlement(net_l[i], sd.bonus_lose, text.bonus_lose(tuple(hole_l[i])))
            elif k == WIN:
                s = Settlement(net_l[i], payouts[b].clause, text.win(b, player_l[i], dealer_l[i], odds_text[b]))
            elif k == ANTE_STAND_OFF:
                s = Settlement(0, params.ante_qualifier_clause, text.ante_stand_off(player_l[i], dealer_l[i], params.ante_qualifier))
            elif k == LOSE:
                s = Settlement(net_l[i], sd.lose, text.lose(b, player_l[i], dealer_l[i]))
            else:
                s = Settlement(0, sd.stand_off, text.stand_off(b, player_l[i]))
            out[w.wager_id] = s
            i += 1

    comm_l, p7_l, d7_l = community.tolist(), p7.tolist(), d7.tolist()
    for r, m in enumerate(members):
        ri = rounds[m.index]
        if scalar_l[r]:
            results[m.index] = _scalar(ri, with_steps)
            continue
        steps: tuple[Step, ...] = ()
        if with_steps:
            procedure, clauses = params.deal(mode)
            deal = reconstruct(procedure, clauses, m.seats, ri.cards, params.irregularities.missing_burn.clause, params.irregularities.unexpected_burn.clause)
            by_seat = {s: ([a for a in ri.actions if a.seat == s], [w for w in ri.wagers if w.seat == s]) for s in m.seats}
            plays = [read_seat(s, *by_seat[s], params.decisions(mode), params.showdown) for s in m.seats]
            steps = tuple(engine.in_play_order(deal, plays))
        seats_out = {}
        for j, s in enumerate(m.seats):
            status_s = m.statuses[j]
            entry: dict[str, object] = {"status": status_s, "hand": text.hand(p7_l[r][j])}
            if status_s == PLAYED:
                p, d = p7_l[r][j], d7_l[r]
                entry["result"] = "win" if p > d else "lose" if p < d else "stand_off"
            seats_out[str(s)] = entry
        outcome = {"dealer_hand": text.hand(d7_l[r]), "community": [card_text(c) for c in comm_l[r]], "seats": seats_out}
        results[m.index] = RoundResult(per_round[r], {}, steps, (), False, outcome)
