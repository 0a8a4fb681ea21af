"""Hold'em Bonus rounds re-settled over columns: the audit's frames in, its result frames out.

Why a path of its own: the scalar engine, and even ``rulebook.holdem_bonus.vector.settle_many``, want a
``RoundInput`` per round and give back a ``RoundResult`` with a ``Settlement`` per wager -- a dozen Python
objects a round, which cost ten times the settlement itself. Here the context, wager and action frames
are read as numpy columns: each wager's round by one int64 search, the seats dealt and the bets placed as
bits, each seat's decisions coded as one integer and read once per distinct shape (a night has a few
dozen), the cards gathered at the fixed positions of the rule set's deal procedure (``deal.layout``, and
``deal.early_stops`` for a deal stopped after every seat folded), every hand through the vectorised
evaluator in one call, the wagers settled by the array kernels of ``rulebook.holdem_bonus.vector`` (a
jackpot win by the scalar engine's own ``lines_met`` and ``jackpot_payout``), and the clauses, sentences
and round outcomes built column-wise from the same templates the scalar engine fills
(``rulebook.holdem_bonus.text``), so an investigator reads the same words whichever path settled.
Every rule-set version of the pass goes through it at once: each round and wager reads its version's pay
tables, decisions and deal procedure from tables indexed by a version column (``_Book``), not a loop over
the versions (a group of a night holds three).

A round goes to the scalar engine, which stays the reference (``tests/test_holdem_pass.py`` holds the two
equal), when anything in it asks for judgement: an irregularity of any kind (a foreign, unread, missing or
duplicated card, a burn out of place, a card count off the procedure, another number of decks), a
decision or wager the rules do not allow, a seat with no Ante or beyond seat 9, a second wager on an area,
a jackpot wager off the stated stake, a royal or straight flush where the guide's Bonus Jackpot (envy) is
due, a jackpot payout the round's record cannot give (no meter, another currency), or a deal stopped early
with a jackpot wager on the table. ``benchmarks/holdem_pass.py`` prints how many.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import polars as pl
import pyarrow as pa

from pipelines.audit.frames import IRREGULARITIES_SCHEMA, ROUND_RESULTS_SCHEMA, WAGER_RESULTS_SCHEMA, conform, empty
from rulebook import poker
from rulebook.cards import FOREIGN, NO_CARD, card_text
from rulebook.holdem_bonus import text, vector
from rulebook.holdem_bonus.deal import early_stops, layout
from rulebook.holdem_bonus.decisions import ACTIONS, CONCEDED, FOLDED, PLAYED
from rulebook.holdem_bonus.hands import (
    BONUS_LABELS,
    JackpotStrengths,
    MissingEvidence,
    is_royal_or_straight_flush_line,
    jackpot_payout,
    lines_met,
)
from rulebook.holdem_bonus.params import HoldemBonusParams, stated
from rulebook.ruleset import RuleSet

MODES = ("shoe", "device")
# seats 0..9: their names sort as their numbers, as the outcome's JSON keys must (json.dumps sort_keys)
SEATS = 10
# a seat decides at most four times (flop, turn, river, concede): more is illegal, and the scalar engine says so
MAX_ACTIONS = 4
POPCOUNT = np.array([bin(k).count("1") for k in range(256)], dtype=np.int64)
STATUS_NAMES = (PLAYED, FOLDED, CONCEDED)
PROGRESSIVE = vector.BET_CODES["progressive"]
BONUS = vector.BET_CODES["bonus"]


# --------------------------------------------------------------------------------------------
# lookup columns, built once


@cache
def _hand_texts() -> pl.Series:
    """The hand in words by strength (index 0 unused)."""
    return pl.Series("hand", ["", *(text.hand(s) for s in range(1, poker.N_STRENGTHS + 1))], dtype=pl.String)


@cache
def _hand_entries() -> pl.Series:
    """A seat's ``"hand": ..., `` by strength (0: none, a deal stopped early)."""
    return pl.Series("h", ["", *(f'"hand": {json.dumps(text.hand(s))}, ' for s in range(1, poker.N_STRENGTHS + 1))],
                     dtype=pl.String)


@cache
def _seat_keys() -> pl.Series:
    """A seat's key by seat number, then the same after a comma (any seat but a round's first)."""
    return pl.Series("key", [f'{sep}"{k}": {{' for sep in ("", ", ") for k in range(SEATS)], dtype=pl.String)


@cache
def _outcome_heads() -> pl.Series:
    """An outcome's opening: a round dealt in full lists its community cards first; one stopped early has none."""
    return pl.Series("head", ['{"community": [', "{"], dtype=pl.String)


@cache
def _community_texts() -> pl.Series:
    """A community card in JSON by code, then the same after a comma (the second card to the fifth)."""
    return pl.Series("card", [f"{sep}{json.dumps(card_text(c))}" for sep in ("", ", ") for c in range(52)], dtype=pl.String)


@cache
def _dealer_entries() -> pl.Series:
    """What follows the community cards: the dealer's hand by strength (index 0 unused)."""
    return pl.Series("dealer", ["", *(f'], "dealer_hand": {json.dumps(text.hand(s))}, '
                                       for s in range(1, poker.N_STRENGTHS + 1))], dtype=pl.String)


@cache
def _result_status() -> pl.Series:
    """A seat's result (win, lose, stand-off, none) and status, by ``result * 3 + status``."""
    results = ('"result": "win", ', '"result": "lose", ', '"result": "stand_off", ', "")
    return pl.Series("rs", [f'{r}"status": "{s}"}}' for r in results for s in STATUS_NAMES], dtype=pl.String)


@cache
def _card_texts(quoted: bool) -> pl.Series:
    return pl.Series("card", [json.dumps(card_text(c)) if quoted else card_text(c) for c in range(52)], dtype=pl.String)


def _fill(template: str, fields: dict[str, pl.Series | str], height: int) -> pl.Series:
    """The template of ``text`` filled column-wise: literal parts as they are, each field from its column (one
    ``pl.format``, which writes a sentence for less than the same ``concat_str`` of literals and columns)."""
    columns: dict[str, pl.Series] = {}
    parts: list[pl.Expr] = []
    pattern: list[str] = []
    for literal, field, _, _ in string.Formatter().parse(template):
        if literal:
            parts.append(pl.lit(literal))
            pattern.append(literal)
        if field is not None:
            value = fields[field]
            if isinstance(value, str):
                parts.append(pl.lit(value))
                pattern.append(value)
            else:
                columns[field] = value
                parts.append(pl.col(field))
                pattern.append("{}")
    if not columns:  # a sentence with no field from the rows
        return pl.Series("detail", [template.format(**fields)] * height, dtype=pl.String)
    if any(("{" in part or "}" in part) and part != "{}" for part in pattern):  # a brace in the words themselves
        return pl.DataFrame(columns).select(pl.concat_str(parts).alias("detail")).to_series()
    names = [e.meta.output_name() for e in parts if e.meta.is_column()]
    return pl.DataFrame(columns).select(pl.format("".join(pattern), *names).alias("detail")).to_series()


# --------------------------------------------------------------------------------------------
# the pass


def holdem_pass(
    ctx: pl.DataFrame,
    wagers: pl.DataFrame,
    actions: pl.DataFrame,
    amount_col: str,
    rulesets: dict[str, RuleSet],
    with_rounds: bool,
    scalar: Callable[[pl.DataFrame, pl.DataFrame, pl.DataFrame, RuleSet | dict[str, RuleSet]], object],
):
    """Settle the rounds of ``ctx`` (any Hold'em rule-set versions, ``ruleset_version`` the key into ``rulesets``);
    ``scalar(ctx, wagers, actions, rs)`` settles the rest: one version's rounds with ``rs`` its rule set, or every
    version's at once with ``rs`` the map of ``ruleset_version`` to rule set.

    Returns an ``EngineOutput`` of the same frames the scalar pass gives (``pipelines.audit.engine_pass``).
    """
    from pipelines.audit.engine_pass import EngineOutput

    c = ctx.select(*CONTEXT).with_row_index("_ri")
    n = c.height
    wri, wrows = _round_rows(wagers, c, "wager_order")
    ari, arows = _round_rows(actions, c, "action_order")
    if wri is None or ari is None:  # a round twice in the context: the scalar pass says what it does with it
        return _concat(EngineOutput, [
            scalar(ctx.filter(pl.col("ruleset_version") == key), wagers, actions, rulesets[key])
            for key in ctx["ruleset_version"].unique(maintain_order=True).to_list()
        ], with_rounds)
    columns = _Columns(
        wri=wri,
        seat=wagers["seat"].fill_null(-1).to_numpy().astype(np.int64)[wrows],
        bet=_names(wagers["bet"], tuple(vector.BET_CODES), 0, -1)[wrows],
        amount=wagers[amount_col].fill_null(-1).to_numpy().astype(np.int64)[wrows],
        ari=ari,
        aseat=actions["seat"].fill_null(-1).to_numpy().astype(np.int64)[arows],
        # 1..6: the names decisions.py knows; 7: any other (null included), which no state of its reader allows
        acode=_names(actions["action"], ACTIONS, 1, 7)[arows],
    )
    every_round = _Rounds.of(c)
    version_keys = c["ruleset_version"].unique(maintain_order=True).to_list()
    version = _codes(c["ruleset_version"], {k: i for i, k in enumerate(version_keys)}, -1)
    if (version < 0).any():  # the caller's context holds rounds with a rule set in force only
        raise ValueError("a Hold'em round without a rule-set version reached the column pass")
    book = _book(tuple(rulesets[key].params for key in version_keys))
    done = _settle(book, version, every_round, columns)
    rest = ~done.ok
    outputs = [EngineOutput(
        _wager_frame(wagers, wrows, done, book.classes),
        _round_frame(c, done) if with_rounds else empty(ROUND_RESULTS_SCHEMA),
        empty(IRREGULARITIES_SCHEMA),
    )]
    handed = np.flatnonzero(rest)
    if handed.size:
        # a few rounds, all versions in one call, each settled by its own rule set (in version order, as the versions
        # come in the context): their rows gathered, not the whole frames filtered
        handed = handed[np.argsort(version[handed], kind="stable")]
        outputs.append(scalar(
            ctx[handed],
            wagers[np.sort(wrows[rest[wri]])],
            actions[np.sort(arows[rest[ari]])],
            {key: rulesets[key] for key in version_keys},
        ))
    return _concat(EngineOutput, outputs, with_rounds)


# what the pass reads of the context frame
CONTEXT = ("table_id", "round_no", "ruleset_version", "deal_mode", "decks", "codes", "burns", "jackpot_meter", "currency")


def _concat(EngineOutput, outputs: list, with_rounds: bool):
    return EngineOutput(
        pl.concat([o.wagers for o in outputs]) if outputs else empty(WAGER_RESULTS_SCHEMA),
        pl.concat([o.rounds for o in outputs]) if outputs and with_rounds else empty(ROUND_RESULTS_SCHEMA),
        pl.concat([o.irregularities for o in outputs]) if outputs else empty(IRREGULARITIES_SCHEMA),
    )


@dataclass(frozen=True)
class _Columns:
    """The wager and action columns the settlement reads, as numpy; ``wri``/``ari``: the round (context row) of each."""

    wri: np.ndarray
    seat: np.ndarray
    bet: np.ndarray
    amount: np.ndarray
    ari: np.ndarray
    aseat: np.ndarray
    acode: np.ndarray


ROUND_BITS = 40  # (table, round number) as one int64: the table's index above 40 bits of round number


def _round_rows(frame: pl.DataFrame, c: pl.DataFrame, order: str) -> tuple[np.ndarray | None, np.ndarray]:
    """The rows of ``frame`` whose round is in ``c``, each round's rows together and in ``order``, and each one's
    round (the row of ``c``): ``(rounds, rows)``, or ``(None, ...)`` if a round appears twice in ``c``.

    A numpy search over one int64 key (the table's index and the round number), without a join on the text
    key or a copy of the frame: those cost more than the settlement."""
    # the tables numbered in name order: frames sorted by table and round give ascending keys (a fast search)
    tables = sorted(c["table_id"].unique().drop_nulls().to_list())
    index = {t: k for k, t in enumerate(tables)}
    rn = c["round_no"]
    if c.height == 0 or rn.null_count() or c["table_id"].null_count() or rn.min() < 0 or rn.max() >= 1 << ROUND_BITS:
        return _joined_round_rows(frame, c, order)
    ck = (_codes(c["table_id"], index, -1) << ROUND_BITS) | rn.to_numpy()
    by_key = np.argsort(ck, kind="stable")
    sk = ck[by_key]
    if (sk[1:] == sk[:-1]).any():
        return None, np.zeros(0, dtype=np.int64)
    ft = _codes(frame["table_id"], index, -1)
    fr = frame["round_no"].fill_null(-1).to_numpy()
    fine = (ft >= 0) & (fr >= 0) & (fr < 1 << ROUND_BITS)
    fk = (np.where(fine, ft, 0) << ROUND_BITS) | np.where(fine, fr, 0)
    # one search per run of equal keys (a round's rows come together): a tenth of the searches
    starts = np.flatnonzero(np.concatenate([[True], fk[1:] != fk[:-1]])) if len(fk) else np.zeros(0, dtype=np.int64)
    found = np.minimum(np.searchsorted(sk, fk[starts]), len(sk) - 1)
    # each run's round (-1: none), then each row's (a row off the int64 form has none, whatever its run)
    ri = np.repeat(np.where(sk[found] == fk[starts], by_key[found], -1), np.diff(np.append(starts, len(fk))))
    ri[~fine] = -1
    o = frame[order].fill_null(-1).to_numpy().astype(np.int64)
    if (ri >= 0).all():  # every row's round in the context (the common case): no gather
        rows = np.arange(len(ri))
    else:
        rows = np.flatnonzero(ri >= 0)
        ri, fk, o = ri[rows], fk[rows], o[rows]
    # each round's rows together and in their order (the rounds themselves may come in any order)
    if len(ri) > 1 and not ((fk[1:] > fk[:-1]) | ((fk[1:] == fk[:-1]) & (o[1:] >= o[:-1]))).all():
        by = np.lexsort((o, fk))
        rows, ri = rows[by], ri[by]
    return ri, rows


def _joined_round_rows(frame: pl.DataFrame, c: pl.DataFrame, order: str) -> tuple[np.ndarray | None, np.ndarray]:
    """The same by a join, for keys the int64 form cannot hold (negative or huge round numbers, a null)."""
    if c.select("table_id", "round_no").is_duplicated().any():
        return None, np.zeros(0, dtype=np.int64)
    out = frame.select("table_id", "round_no", order).with_row_index("_row").join(
        c.select("table_id", "round_no", pl.col("_ri").cast(pl.Int64)), on=["table_id", "round_no"], how="inner"
    ).sort(["_ri", order, "_row"])
    return out["_ri"].to_numpy(), out["_row"].to_numpy().astype(np.int64)


def _codes(s: pl.Series, index: dict, default: int) -> np.ndarray:
    """``index[value]`` for every value of ``s`` (``default`` for any other, null included), as int64. Read run
    by run: the frames come sorted by table and round, so a text column has few runs (a dictionary look-up per
    run, not per row); a column of many runs goes through polars' own replace."""
    runs = s.rle_id().to_numpy()
    if not len(runs):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], runs[1:] != runs[:-1]]))
    if len(starts) > len(runs) // 8:
        return s.replace_strict(index, default=default, return_dtype=pl.Int64).fill_null(default).to_numpy()
    values = s.gather(pl.Series(starts)).to_list()
    return np.array([index.get(v, default) if v is not None else default for v in values], dtype=np.int64)[runs]


def _names(s: pl.Series, names: tuple[str, ...], first: int, default: int) -> np.ndarray:
    """``first + k`` where ``s`` holds ``names[k]``, ``default`` elsewhere (null included), as int64."""
    physical = s.cast(pl.Enum(list(names)), strict=False).to_physical().fill_null(len(names)).to_numpy()
    return np.array([*range(first, first + len(names)), default], dtype=np.int64)[physical]


@dataclass(frozen=True)
class _Rounds:
    """The context columns the settlement reads, as numpy: the cards flat, with each round's offset and length."""

    frame: pl.DataFrame  # the pass's context (its jackpot meter and currency are read for a jackpot win only)
    rows: np.ndarray  # these rounds' rows in ``frame``
    mode: np.ndarray  # 0 shoe, 1 device, -1 anything else
    decks: np.ndarray  # -1: not recorded
    codes: np.ndarray  # every round's card codes, one after another (a null or empty list: one NO_CARD)
    burns: np.ndarray
    code_at: np.ndarray  # where each round's codes start in ``codes``
    burn_at: np.ndarray
    n_codes: np.ndarray  # -1: no list
    n_burns: np.ndarray  # -2: no list

    @classmethod
    def of(cls, c: pl.DataFrame) -> "_Rounds":
        n_codes = c["codes"].list.len().fill_null(-1).to_numpy().astype(np.int64)
        n_burns = c["burns"].list.len().fill_null(-2).to_numpy().astype(np.int64)
        return cls(
            frame=c,
            rows=np.arange(c.height),
            mode=_codes(c["deal_mode"], {"shoe": 0, "device": 1}, -1).astype(np.int8),
            decks=c["decks"].fill_null(-1).to_numpy().astype(np.int64),
            codes=c["codes"].explode().fill_null(NO_CARD).to_numpy().astype(np.int16),
            burns=c["burns"].explode().fill_null(False).to_numpy().astype(bool),
            code_at=np.concatenate([[0], np.cumsum(np.maximum(n_codes, 1))])[:-1],
            burn_at=np.concatenate([[0], np.cumsum(np.maximum(n_burns, 1))])[:-1],
            n_codes=n_codes,
            n_burns=n_burns,
        )

    def cards(self, rows: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(codes, burns) of ``rows``, each ``length`` events long (as the caller has checked)."""
        span = np.arange(length)
        return self.codes[self.code_at[rows][:, None] + span], self.burns[self.burn_at[rows][:, None] + span]


@dataclass
class _Settled:
    """What the columns settled, in the rows of the pass (``rows`` of the context,
    ``wagers`` of the wager frame); ``cls`` indexes the pass's outcome classes (:func:`_classes`), -1 = ``won``."""

    ok: np.ndarray  # per round of the pass: settled here
    rounds: np.ndarray  # the context rows settled
    early: np.ndarray  # per settled round: every seat folded and the deal stopped short
    dealer: np.ndarray  # per settled round: the dealer's strength
    community: np.ndarray  # per settled round: (5,) cards
    seat_no: np.ndarray
    seat_status: np.ndarray
    seat_strength: np.ndarray
    n_seats: np.ndarray  # per settled round
    wagers: np.ndarray  # the wager rows settled
    net: np.ndarray
    cls: np.ndarray
    bet: np.ndarray  # per wager: the seat number, the two strengths, the hole cards (the sentences' fields)
    seat: np.ndarray
    player: np.ndarray
    dealer_w: np.ndarray
    hole: np.ndarray
    won: dict[int, tuple[str, str]]


@dataclass(frozen=True)
class _Book:
    """What the pass reads of its rule sets, one entry per rule-set version (the pass's ``version`` index), so
    that one pass settles the rounds of every version: each round and wager reads its version's entry."""

    params: tuple[HoldemBonusParams, ...]
    pay: vector.PayTables  # the main game's and the Bonus's pay tables, by version
    decks: np.ndarray
    folded_bonus_loses: np.ndarray
    jackpot: np.ndarray  # the rule set has a jackpot wager
    stake: np.ndarray  # its stated stake, -1: none stated
    deals: tuple[tuple[str, tuple[str, ...], tuple[str, ...], np.ndarray], ...]  # (mode, procedure, clauses, versions)
    classes: list[tuple[str, str, dict[str, str]]]  # every version's outcome classes (:func:`_classes`), in order
    class_offset: np.ndarray  # where each version's classes begin
    shapes: dict[int, int]  # a seat's status by its shape and version (:func:`_seat_status`), filled as they come


@lru_cache(maxsize=64)
def _book(params: tuple[HoldemBonusParams, ...]) -> _Book:
    """The pass's :class:`_Book` of these rule sets (kept: a worker settles group after group of the same ones)."""
    deals: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], list[int]]] = {}
    for m, name in enumerate(MODES):
        for v, p in enumerate(params):
            procedure, clauses = p.deal(name)
            # the positions depend on the procedure only: versions that deal alike are gathered together
            deals.setdefault((name, procedure), (clauses, []))[1].append(v)
    classes: list[tuple[str, str, dict[str, str]]] = []
    offsets = []
    for p in params:
        offsets.append(len(classes))
        classes += _classes(p)
    return _Book(
        params=params,
        pay=vector.pay_tables(params),
        decks=np.array([p.decks for p in params], dtype=np.int64),
        folded_bonus_loses=np.array([p.folded_bonus_loses for p in params], dtype=bool),
        jackpot=np.array([p.progressive is not None for p in params], dtype=bool),
        stake=np.array([p.progressive.stake if p.progressive is not None and stated(p.progressive.stake) else -1
                        for p in params], dtype=np.int64),
        deals=tuple((name, procedure, clauses, np.array(vs, dtype=np.int64))
                    for (name, procedure), (clauses, vs) in deals.items()),
        classes=classes,
        class_offset=np.array(offsets, dtype=np.int64),
        shapes={},
    )


def _settle(book: _Book, version: np.ndarray, rounds: _Rounds, cols: _Columns) -> _Settled:
    """The rounds of the pass, every rule-set version at once (``version``: each round's index into ``book``):
    which the columns settle, and how. Each round reads its own version's tables and deal procedure."""
    n = len(rounds.rows)
    ctx_rows = rounds.rows
    ok = np.ones(n, dtype=bool)
    mode = rounds.mode
    ok &= mode >= 0
    ok &= (rounds.decks == -1) | (rounds.decks == book.decks[version])
    wri, seat, bet, amount = cols.wri, cols.seat, cols.bet, cols.amount
    wv = version[wri]

    # the wagers: the seats dealt (those with an Ante, HTB-4.7, 4.11.1) as bits of the round, and each wager's seat
    # among them (a second Ante on a seat carries into the next bit: its round fails the area check below)
    seat_ok = (seat >= 0) & (seat < SEATS)
    ante = (bet == 0) & seat_ok
    dealt_bits = np.bincount(wri[ante], weights=np.left_shift(1, seat[ante]).astype(np.float64), minlength=n).astype(np.int64)
    seat_keys = np.flatnonzero(((dealt_bits[:, None] >> np.arange(SEATS)) & 1).ravel())  # round * SEATS + seat, sorted
    n_total = len(seat_keys)
    seat_row = np.full(n * SEATS, -1, dtype=np.int64)
    seat_row[seat_keys] = np.arange(n_total)
    wpos = seat_row[wri * SEATS + np.where(seat_ok, seat, 0)]
    found = seat_ok & (wpos >= 0)
    wpos = np.maximum(wpos, 0)
    bad = ~found | (bet < 0) | (amount < 0)
    # a jackpot wager where the rule set has none, or off its stated stake
    is_jp = bet == PROGRESSIVE
    bad |= is_jp & (~book.jackpot[wv] | ((book.stake[wv] >= 0) & (amount != book.stake[wv])))
    ok[wri[bad]] = False
    good_w = ~bad
    # each seat's bets as bits; a second wager of a kind on one area (HTB-4.7.2) shows as fewer bits than wagers
    bet_sum = np.bincount(wpos[good_w], weights=np.left_shift(1, bet[good_w]).astype(np.float64), minlength=n_total).astype(np.int64)
    placed = np.bincount(wpos[good_w], minlength=n_total)
    twice = POPCOUNT[bet_sum & 255] != placed
    bets_mask = bet_sum & 63
    seat_ri = seat_keys // SEATS
    seat_no = seat_keys % SEATS
    ok[seat_ri[twice | (bet_sum > 63)]] = False
    n_seats = np.bincount(seat_ri, minlength=n)
    ok &= n_seats > 0
    first_seat = np.concatenate([[0], np.cumsum(n_seats)])

    # the decisions, read once per distinct shape (seat's actions, its wagers, the deal mode, the version)
    seat_status = _seat_status(book.params, book.shapes, cols, seat_row, bets_mask, mode[seat_ri] if n_total else np.zeros(0, np.int8),
                               version[seat_ri], ok)
    ok[seat_ri[seat_status < 0]] = False
    folded = np.bincount(seat_ri, weights=seat_status == 1, minlength=n).astype(np.int64)
    all_folded = (folded == n_seats) & (n_seats > 0)
    has_jackpot = np.zeros(n, dtype=bool)
    has_jackpot[wri[is_jp]] = True
    has_bonus = np.zeros(n, dtype=bool)
    has_bonus[wri[bet == BONUS]] = True

    # the cards, at the fixed positions of the deal procedure (versions that deal alike together)
    hole = np.zeros((n_total, 2), dtype=np.uint8)
    community = np.zeros((n, 5), dtype=np.uint8)
    dealer = np.zeros((n, 2), dtype=np.uint8)
    early = np.zeros(n, dtype=bool)  # every seat folded and the deal stopped after the hole cards
    dealt = np.zeros(n, dtype=bool)
    lens = rounds.n_codes
    ok &= lens == rounds.n_burns
    may_stop_all = all_folded & ~has_jackpot & (book.folded_bonus_loses[version] | ~has_bonus)
    multi = len(book.deals) > len(MODES)
    for name, procedure, clauses, versions in book.deals:
        of_mode = ok & (mode == MODES.index(name))
        if multi:
            of_mode &= np.isin(version, versions)
        for ns in np.unique(n_seats[of_mode]).tolist():
            lay = _layout(procedure, clauses, ns)
            of_shape = of_mode & (n_seats == ns)
            stops = [(lay.length, of_shape)]
            may_stop = of_shape & may_stop_all
            stops += [(length, may_stop) for length in _early_stops(procedure, ns)]
            for length, allowed in stops:
                rows = np.flatnonzero(allowed & (lens == length))
                if not rows.size:
                    continue
                codes, burns = rounds.cards(rows, length)
                fine = _clean_cards(codes, burns, lay.is_burn[:length])
                rows, codes = rows[fine], codes[fine]
                seat_rows = first_seat[rows][:, None] + np.arange(ns)
                hole[seat_rows] = codes[:, lay.hole]
                dealt[rows] = True
                if length == lay.length:
                    community[rows] = codes[:, lay.community]
                    dealer[rows] = codes[:, lay.dealer]
                else:
                    early[rows] = True
    ok &= dealt

    # every hand of the rounds dealt in full, in one evaluator call
    full = ok & ~early
    seat_full = full[seat_ri]
    fr = np.flatnonzero(full)
    sf = np.flatnonzero(seat_full)
    hands = np.empty((len(sf) + len(fr), 7), dtype=np.uint8)  # the players' seven cards, then the dealers'
    hands[: len(sf), :2] = hole[sf]
    hands[: len(sf), 2:] = community[seat_ri[sf]]
    hands[len(sf):, :2] = dealer[fr]
    hands[len(sf):, 2:] = community[fr]
    strengths = poker.evaluate7(hands)
    p7 = np.ones(n_total, dtype=np.int64)
    d7 = np.ones(n, dtype=np.int64)
    p7[sf] = strengths[: len(sf)]
    d7[fr] = strengths[len(sf):]

    # the wagers settled (kernels of rulebook.holdem_bonus.vector, each wager by its version's tables)
    sel = np.flatnonzero(ok[wri])
    ws, wr, wb, wa, wv = wpos[sel], wri[sel], bet[sel], amount[sel], wv[sel]
    status = seat_status[ws]
    player, dealer_s = p7[ws], d7[wr]
    line_b = np.full(len(sel), -1, dtype=np.int64)
    is_bonus = wb == BONUS
    is_jp = wb == PROGRESSIVE
    # every wager through the main game's kernel at once (a Bonus or jackpot code nets 0 there): the Bonus and
    # jackpot wagers are written over below, which costs less than gathering the main wagers apart
    net, kind = vector.main_game_of(book.pay, wv, wb, status, player, dealer_s, wa)
    bi = np.flatnonzero(is_bonus)
    net[bi], kind[bi], line_b[bi] = vector.bonus_of(book.pay, wv[bi], status[bi], hole[ws[bi]], dealer[wr[bi]], wa[bi])
    won: dict[int, tuple[str, str]] = {}  # wager row -> (clause, sentence) of a jackpot wager that wins
    if is_jp.any():
        jp = np.flatnonzero(is_jp)  # every round with a jackpot wager was dealt in full (see `may_stop`)
        cards = np.ascontiguousarray(np.concatenate([hole[ws[jp]], community[wr[jp]]], axis=1))
        hf = poker.evaluate(np.ascontiguousarray(cards[:, :5]))
        ht = poker.evaluate(np.ascontiguousarray(cards[:, :6]))
        comm = poker.evaluate(np.ascontiguousarray(cards[:, 2:]))
        jv = wv[jp]
        for v in np.unique(jv).tolist():
            p = book.params[v]
            prog = p.progressive
            mine = jv == v
            jpv = jp[mine]
            st = np.where((status[jpv] == 2) & prog.checked_after_concede, 1, status[jpv])
            met = vector.jackpot_lines(p, st, hf[mine], ht[mine], player[jpv], comm[mine]).any(axis=1)
            conceded_lost = (status[jpv] == 2) & (not prog.checked_after_concede)
            met &= ~conceded_lost
            net[jpv] = -wa[jpv]
            kind[jpv] = np.where(conceded_lost, vector.CONCEDE, np.where(status[jpv] != 0, _JP_LOSE_AFTER_FOLD, _JP_LOSE))
            if met.any():
                _jackpot_wins(prog, rounds, jpv[met], hf[mine][met], ht[mine][met], comm[mine][met], sel, wr, wa, status,
                              player, net, kind, ok, won)
        keep = ok[wr]
        if not keep.all():
            sel, ws, wr, wb, wa, wv = sel[keep], ws[keep], wr[keep], wb[keep], wa[keep], wv[keep]
            status, player, dealer_s, net, kind, line_b = status[keep], player[keep], dealer_s[keep], net[keep], kind[keep], line_b[keep]

    cls = _class_of(kind, wb, line_b, mode[wr])
    rounds_ok = np.flatnonzero(ok)
    seats = np.flatnonzero(ok[seat_ri])
    return _Settled(
        ok=ok, rounds=ctx_rows[rounds_ok], early=early[rounds_ok], dealer=d7[rounds_ok], community=community[rounds_ok],
        seat_no=seat_no[seats], seat_status=seat_status[seats],
        seat_strength=p7[seats], n_seats=n_seats[rounds_ok],
        wagers=sel, net=np.where((kind == vector.ANTE_STAND_OFF) | (kind == vector.STAND_OFF), 0, net),
        cls=np.where(cls >= 0, cls + book.class_offset[wv], -1), bet=wb, seat=seat_no[ws], player=player, dealer_w=dealer_s,
        hole=hole[ws], won=won,
    )


# outcome kinds beyond vector's: a jackpot wager that meets no line (a hand in play, a folded one), one that wins
_JP_LOSE, _JP_LOSE_AFTER_FOLD, _JP_WIN = 100, 101, 102


def _jackpot_wins(prog, rounds, rows, hf, ht, comm, sel, wr, wa, status, player, net, kind, ok, won) -> None:
    """The jackpot wagers whose hands meet a line (a few a night), paid by the scalar engine's own functions
    (``hands.lines_met``, ``hands.jackpot_payout``); a round where the guide's Bonus Jackpot (envy) is due,
    or where the record lacks what a payout needs (a meter, the currency), goes to the scalar engine whole."""
    by_round: dict[int, list[tuple[int, tuple]]] = {}
    for k, i in enumerate(rows.tolist()):
        js = JackpotStrengths(int(hf[k]), int(ht[k]), int(player[i]), int(comm[k]))
        by_round.setdefault(int(wr[i]), []).append((i, lines_met(prog, js, bool(status[i] != 0))))
    for r, items in by_round.items():
        if prog.envy_offered() and any(is_royal_or_straight_flush_line(l) for _, met in items for l in met):
            ok[r] = False
            continue
        meter, currency = rounds.frame["jackpot_meter"][int(rounds.rows[r])], rounds.frame["currency"][int(rounds.rows[r])]
        try:
            paid = [(i, *jackpot_payout(prog, met, meter, currency)) for i, met in items]
        except MissingEvidence:
            ok[r] = False
            continue
        for i, payout, line in paid:
            if payout == 0:
                continue  # the loss already written
            net[i] = payout - int(wa[i]) if prog.wager_on_win == "collected" else payout
            kind[i] = _JP_WIN
            won[int(sel[i])] = (line.clause, text.jackpot_win(text.line_description(line), payout, prog.wager_on_win, 0))


def _seat_status(params: tuple[HoldemBonusParams, ...], shapes: dict[int, int], cols: _Columns, seat_row: np.ndarray,
                 bets_mask: np.ndarray, seat_mode: np.ndarray, seat_version: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Per seat dealt: 0 played, 1 folded, 2 conceded, -1 anything the scalar engine must judge.

    ``seat_row``: each (round * SEATS + seat)'s seat dealt, -1 for none. A seat's decisions are coded as one
    integer (its action names, in order, as base-8 digits), so that the decision reader
    (``decisions.read_seat``) runs once per distinct shape and rule-set version -- a few dozen a night -- and
    not once per seat; ``shapes`` keeps each shape's status for the next group. Marks ``ok`` False for a round with an
    action on a seat that has no Ante."""
    n_total = len(bets_mask)
    ari, aseat, code = cols.ari, cols.aseat, cols.acode
    aok = (aseat >= 0) & (aseat < SEATS)
    apos = seat_row[ari * SEATS + np.where(aok, aseat, 0)]
    aok &= apos >= 0
    ok[ari[~aok]] = False
    apos, code = apos[aok], code[aok]
    by_seat = np.argsort(apos, kind="stable")  # each seat's actions together, in the order they happened
    count = np.bincount(apos, minlength=n_total)
    starts = np.concatenate([[0], np.cumsum(count)])[:-1]
    k = np.empty(len(apos), dtype=np.int64)
    k[by_seat] = np.arange(len(apos)) - starts[apos[by_seat]]
    k = np.minimum(k, MAX_ACTIONS)
    shape = np.bincount(apos, weights=code * 8.0 ** k, minlength=n_total).astype(np.int64)
    too_many = count > MAX_ACTIONS  # more decisions than a seat can legally make: some must be illegal
    key = ((shape * 8 + np.minimum(count, 7)) * 64 + bets_mask) * 2 + seat_mode.astype(np.int64)
    key = key * len(params) + seat_version
    uniq, inverse = np.unique(key, return_inverse=True)
    if len(shapes) > 1 << 16:  # a bound on what is kept (a night has a few hundred shapes)
        shapes.clear()
    looked_up = []
    for u in uniq.tolist():
        if u not in shapes:
            shapes[u] = _shape_status(params[u % len(params)], u // len(params))
        looked_up.append(shapes[u])
    status = np.array(looked_up, dtype=np.int64)[inverse]
    return np.where(too_many, -1, status)


@lru_cache(maxsize=1 << 16)
def _shape_status(p: HoldemBonusParams, key: int) -> int:
    """The status of one shape of seat (see :func:`_seat_status`), read by ``decisions.read_seat`` itself; kept
    for the next group (a night has a few hundred shapes per rule set, and a worker settles many groups)."""
    mode, key = MODES[key & 1], key >> 1
    mask, key = key & 63, key >> 6
    count, shape = key & 7, key >> 3
    names = tuple(ACTIONS[(shape >> (3 * j) & 7) - 1] if (shape >> (3 * j) & 7) <= len(ACTIONS) else "?" for j in range(count))
    bets = tuple(b for j, b in enumerate(vector.engine.BETS) if mask >> j & 1)
    status = vector.read_status(p, mode, names, bets)
    return -1 if status is None else STATUS_NAMES.index(status)


# the deal procedure's positions by (procedure, clauses, seats): a few dozen shapes a night, read for every group
_layout = lru_cache(maxsize=1024)(layout)
_early_stops = lru_cache(maxsize=1024)(early_stops)


def _clean_cards(codes: np.ndarray, burns: np.ndarray, is_burn: np.ndarray) -> np.ndarray:
    """Rows whose burns are where the procedure has them, every dealt card readable, no foreign card, no card twice."""
    card = (codes >= 0) & (codes <= 51)
    fine = (burns == is_burn).all(axis=1)
    fine &= card[:, ~is_burn].all(axis=1)
    fine &= ((codes != FOREIGN) & (codes <= 51)).all(axis=1)
    # no card twice: each row's cards as bits of one 64-bit word hold as many bits as the row has cards
    bits = np.left_shift(np.uint64(1), np.where(card, codes, 0).astype(np.uint64)) * card
    fine &= np.bitwise_count(np.bitwise_or.reduce(bits, axis=1)) == card.sum(axis=1)
    return fine


# --------------------------------------------------------------------------------------------
# the frames, column-wise


def _classes(p: HoldemBonusParams) -> list[tuple[str, str, dict[str, str]]]:
    """Every outcome class of a wager: (clause, sentence template, the template's fields that are fixed)."""
    sd = p.showdown
    out: list[tuple[str, str, dict[str, str]]] = []
    for name in MODES:  # 0, 1: a fold, by deal mode (the clauses differ)
        out.append((p.decisions(name).fold, text.FOLDED, {}))
    out.append((sd.concede, text.CONCEDED, {}))  # 2
    for b in ("ante", "flop", "turn", "river"):  # 3..6: a win, by bet
        payout = getattr(p, b)
        out.append((payout.clause, text.WIN, {"odds": text.odds_words(str(payout.odds))}))
    out.append((p.ante_qualifier_clause, text.ANTE_STAND_OFF, {"qualifier": text.QUALIFIER_NAMES[p.ante_qualifier]}))  # 7
    out.append((sd.lose, text.LOSE, {}))  # 8
    out.append((sd.stand_off, text.STAND_OFF, {}))  # 9
    out.append((sd.bonus_lose, text.BONUS_LOSE, {}))  # 10
    lose_clause = p.progressive.lose_clause if p.progressive else ""
    out.append((lose_clause, text.jackpot_lose(False), {}))  # 11
    out.append((lose_clause, text.jackpot_lose(True), {}))  # 12
    for line in p.bonus_pay_table:  # 13..: a Bonus win, by pay-table line
        out.append((line.clause, text.BONUS_WIN, {"label": BONUS_LABELS[line.hand], "odds": text.odds_words(line.odds)}))
    return out


def _class_of(kind: np.ndarray, bet: np.ndarray, line: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """Each wager's outcome class in the version's :func:`_classes` (-1: a jackpot win, worded apart)."""
    win_class = np.array([3, 3, 4, 5, 6, 3], dtype=np.int64)  # by bet code: ante, (bonus), flop, turn, river
    # the classes fixed by the kind from a table; a fold's (by deal mode), a win's (by bet) and a Bonus win's (by
    # pay-table line) from their own columns
    cls = _KIND_CLASS[np.clip(kind, 0, len(_KIND_CLASS) - 1)]
    for k, by in ((vector.FOLD, mode), (vector.WIN, win_class[bet]), (vector.BONUS_WIN, 13 + line)):
        at = np.flatnonzero(kind == k)
        cls[at] = by[at]
    return cls


def _kind_classes() -> np.ndarray:
    table = np.full(_JP_WIN + 2, -1, dtype=np.int64)  # the last: any kind not named (none is)
    for kind, cls in ((vector.CONCEDE, 2), (vector.ANTE_STAND_OFF, 7), (vector.LOSE, 8), (vector.STAND_OFF, 9),
                      (vector.BONUS_LOSE, 10), (_JP_LOSE, 11), (_JP_LOSE_AFTER_FOLD, 12)):
        table[kind] = cls
    return table


_KIND_CLASS = _kind_classes()


def _wager_frame(w: pl.DataFrame, wrows: np.ndarray, done: _Settled, classes: list[tuple[str, str, dict[str, str]]]) -> pl.DataFrame:
    """The wager results: net, clause and sentence of every wager settled, the sentences filled one template
    at a time for all rule-set versions together (a class's fixed fields, e.g. its odds, as a column)."""
    rows, net, cls = done.wagers, done.net, done.cls
    seat, player, dealer, hole, bet = done.seat, done.player, done.dealer_w, done.hole, done.bet
    won = done.won
    take_rows = pl.Series(wrows[rows])
    # a settled wager's bet is one of the names its code stands for (any other went to the scalar engine)
    bet_names = pl.Series(list(vector.BET_CODES), dtype=pl.String)
    details: list[pl.Series] = []
    by_template: dict[str, list[int]] = {}
    for k, (_, template, _) in enumerate(classes):
        by_template.setdefault(template, []).append(k)
    template_of = np.full(len(classes) + 1, 0, dtype=np.int8)  # by class, 1 + the template (the last, 0: a jackpot win)
    for t, members in enumerate(by_template.values()):
        template_of[members] = t + 1
    # the wagers by template (a jackpot win first), each template's in their order: one stable sort of small codes
    tid = template_of[cls]
    order = np.argsort(tid, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(tid, minlength=len(by_template) + 1))])
    special = order[: bounds[1]]
    if special.size:
        paid = [won[int(rows[i])] for i in special]
        details.append(pl.Series("detail", [d for _, d in paid], dtype=pl.String))
    for t, (template, members) in enumerate(by_template.items()):
        picked = order[bounds[t + 1]: bounds[t + 2]]
        if not picked.size:
            continue
        fields: dict[str, pl.Series | str] = {}
        fixed_names = set(classes[members[0]][2])
        for name in fixed_names:  # one value per class: a lookup column
            values = pl.Series([classes[k][2][name] if k in members else "" for k in range(len(classes))], dtype=pl.String)
            fields[name] = values.gather(pl.Series(cls[picked]))
        if "{bet}" in template:
            fields["bet"] = bet_names.gather(pl.Series(bet[picked]))
        if "{seat}" in template:
            fields["seat"] = pl.Series(seat[picked]).cast(pl.String)
        if "{player}" in template:
            fields["player"] = _hand_texts().gather(pl.Series(player[picked]))
        if "{dealer}" in template:
            fields["dealer"] = _hand_texts().gather(pl.Series(dealer[picked]))
        if "{card1}" in template:
            fields["card1"] = _card_texts(False).gather(pl.Series(hole[picked, 0].astype(np.int64)))
            fields["card2"] = _card_texts(False).gather(pl.Series(hole[picked, 1].astype(np.int64)))
        details.append(_fill(template, fields, len(picked)))
    clause_table = pl.Series([*(c for c, _, _ in classes), None], dtype=pl.String)
    clause = clause_table.gather(pl.Series(np.where(cls >= 0, cls, len(classes))))
    if special.size:
        clause = clause.scatter(special, pl.Series([c for c, _ in paid], dtype=pl.String))
    position = np.empty(len(rows), dtype=np.int64)  # where each wager's sentence sits in the concatenation
    position[order] = np.arange(len(rows))
    detail = pl.concat(details, rechunk=True).gather(pl.Series(position)) if details else pl.Series("detail", [], dtype=pl.String)
    out = w.select("table_id", "round_no", "wager_id").gather(take_rows)
    out = out.with_columns(
        pl.Series("net", net, dtype=pl.Int64),
        clause.alias("pay_clause"),
        detail.alias("detail"),
        pl.lit(None, dtype=pl.String).alias("unsettled_reason"),
    )
    return conform(out, WAGER_RESULTS_SCHEMA)


def _round_frame(c: pl.DataFrame, done: _Settled) -> pl.DataFrame:
    """The round results: not void, the outcome in the scalar engine's JSON (sorted keys), nothing else."""
    rows, early, d7, n_seats = done.rounds, done.early, done.dealer, done.n_seats
    community = done.community.astype(np.int64).reshape(-1, 5)
    seat_no, st, p7 = done.seat_no, done.seat_status, done.seat_strength
    # each round's seats are consecutive, in seat order (as the rounds are)
    in_full = ~np.repeat(early, n_seats)
    seat_d7 = np.repeat(d7, n_seats)
    result = np.where(p7 > seat_d7, 0, np.where(p7 < seat_d7, 1, 2))
    # a seat's entry: its key (after a comma but for a round's first seat), its hand, its result with its status, each a
    # gather from a small table of texts; a round's seats are consecutive, so its k-th seat is the entry at its first
    # seat's row plus k
    first = np.concatenate([[0], np.cumsum(n_seats)])
    rank = np.arange(len(seat_no)) - np.repeat(first[:-1], n_seats)
    seats = pl.DataFrame({
        "key": _seat_keys().gather(pl.Series(seat_no + SEATS * np.minimum(rank, 1))),
        "h": _hand_entries().gather(pl.Series(np.where(in_full, p7, 0))),
        "rs": _result_status().gather(pl.Series(np.where((st == 0) & in_full, result, 3) * len(STATUS_NAMES) + st)),
    }).select(pl.concat_str(["key", "h", "rs"]).alias("entry")).to_series()
    most = int(n_seats.max()) if len(n_seats) else 0
    # the k-th seat of every round as a column (null where a round has fewer), and the community cards and the
    # dealer's hand (null where the deal stopped early): the outcome's one concatenation skips the nulls, which
    # joins each round's seats without a list per round
    slots = {
        f"s{k}": seats.gather(pl.Series(pa.array(first[:-1] + k, mask=n_seats <= k), dtype=pl.Int64))
        for k in range(most)
    }
    cards = _community_texts()
    frame = pl.DataFrame({
        "head": _outcome_heads().gather(pl.Series(early.astype(np.int64))),
        **{f"c{k}": cards.gather(pl.Series(pa.array(community[:, k] + 52 * min(k, 1), mask=early), dtype=pl.Int64))
           for k in range(5)},
        "dealer": _dealer_entries().gather(pl.Series(pa.array(d7, mask=early), dtype=pl.Int64)),
        **slots,
    })
    outcome = pl.concat_str(
        [pl.col("head"), *(pl.col(f"c{k}") for k in range(5)), pl.col("dealer"), pl.lit('"seats": {'),
         *(pl.col(name) for name in slots), pl.lit("}}")],
        ignore_nulls=True,
    )
    out = c.select("table_id", "round_no", "ruleset_version").gather(pl.Series(rows)).with_columns(
        pl.lit(False).alias("engine_void"),
        frame.select(outcome.alias("outcome")).to_series(),
    )
    return conform(out, ROUND_RESULTS_SCHEMA)
