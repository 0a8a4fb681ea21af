"""What the rules prescribe around the cards: table limits, Hold'em ratios, the baccarat differential, void rounds.

The engine settles a wager by its cards and decisions, at the amount placed. The rule texts also
say what happens when the amount itself is wrong, or the round does not count:

- over the table maximum: paid or collected up to the maximum only, the excess returned
  (TBAC-7.18, HTB-7.10); a text with no such clause (blackjack, MBS, the guide) prescribes nothing
  different, and the breach is flagged against the posted limit sign;
- under the minimum: TBAC-7.17 pays and collects the first time only, a player's later under-minimum
  wagers are returned; HTB-7.10 pays and takes them;
- Hold'em: a Flop not twice the Ante, a Turn or River not equal to the Ante (HTB-7.10.1: an
  excess is returned, a shortfall is settled as placed; MBS-3.7.2 and the guide only state the ratio);
- baccarat Banker and Player totals differing by more than the table differential: the larger side is
  settled pro rata on what the differential allows (TBAC-7.19), except wagers under the table
  minimum, which are paid and taken as placed (TBAC-7.19.1);
- a void round returns every wager (the table's ``void`` status; the rules' own void from the
  engine, or a card seen more often than the shoe holds), and a Free Hand carries no wagers (TBAC-7.8):
  the round the table marked ``free_hand``, and the round after a card dealt in error in the same shoe
  (``free_hand_after``, pipelines.audit.free_hand), whatever the table marked.

:func:`prescribe` computes, per wager, the amount the rules settle at (``settled_amount``) and any
override to a fixed net of 0, with the clause and a sentence for each; it never looks at the cards.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from pipelines.currency import format_amount

from pipelines.audit.clauses import CLAUSES, DECISION_BETS, LIMIT_SIGN, SIDE_BETS
from pipelines.audit.frames import in_order
from pipelines.audit.joins import attach

# columns prescribe() needs on each wager row
WAGER_CONTEXT_COLUMNS: tuple[str, ...] = (
    "table_id", "round_no", "gaming_day", "wager_id", "wager_order", "seat", "player_id", "bet", "amount",
    "game", "clause_prefix", "status", "limit_min", "limit_max", "limit_side_min", "limit_side_max",
    "limit_differential", "rules_void", "rules_void_clause",
)
# optional: ``free_hand_after`` / ``free_hand_cause`` (pipelines.audit.free_hand), a Free Hand by the rules


# each wager's rule text as a row of CLAUSES (the last row: none), found once per frame in ``_PREFIX``: a lookup of
# the text's clauses by that row is a gather, where mapping the prefix strings again cost a hash pass per clause
_PREFIXES: tuple[str, ...] = tuple(CLAUSES)
_PREFIX = "_prefix_row"


def _prefix_row() -> pl.Expr:
    return pl.col("clause_prefix").replace_strict(
        {p: i for i, p in enumerate(_PREFIXES)}, default=len(_PREFIXES), return_dtype=pl.UInt32
    ).alias(_PREFIX)


def _prefix_rows(prefix: pl.Series) -> pl.Series:
    """:func:`_prefix_row` of a column, looked up once per run of equal values: a round's wagers share its rule
    text, so the column has about one run per round or fewer, where the expression hashes every wager's string."""
    runs = prefix.rle_id().to_numpy()
    starts = np.flatnonzero(np.concatenate([[True], runs[1:] != runs[:-1]]))
    if len(starts) > len(runs) // 4:
        return prefix.to_frame("clause_prefix").select(_prefix_row()).to_series()
    index = {p: i for i, p in enumerate(_PREFIXES)}
    values = prefix.gather(pl.Series(starts)).to_list()
    return pl.Series(_PREFIX, np.array([index.get(v, len(_PREFIXES)) for v in values], dtype=np.uint32)[runs])


def _by_text(values: list, dtype: pl.DataType) -> pl.Expr:
    """One value per rule text (``values`` in ``_PREFIXES`` order, then the value for no known text), per wager."""
    return pl.lit(pl.Series(values, dtype=dtype)).gather(pl.col(_PREFIX))


def _clause(field: str) -> pl.Expr:
    """The procedure clause ``field`` of the wager's rule text (null where the text has none)."""
    return _by_text([getattr(CLAUSES[p], field) for p in _PREFIXES] + [None], pl.String)


TEXT_COLUMNS = ("limit_issue", "differential_issue", "override_detail")
# what the sentences of :func:`_sentences` read of a wager's row (``free_hand_after``/``free_hand_cause`` when present)
SENTENCE_COLUMNS = (
    "bet", "amount", "currency", "status", "override", "override_clause", "differential_clause", "free_hand_after",
    "free_hand_cause", "_over", "_over_clause", "_hi", "_under", "_under_clause", "_lo", "_under_repeat",
    "_first_under_round", "_ratio_off", "_ratio_target", "_ratio_clause", "_ante", "_ante_settled", "_excess_returned", "_prorated",
    "_exempt", "_banker_total", "_player_total", "_diff", "_larger", "_larger_total", "_smaller_total", "_settled",
    "_capped",
)


def _free_hand_expected(w: pl.DataFrame) -> pl.Expr:
    """The round is a Free Hand by the rules (a card dealt in error in the round before: pipelines.audit.free_hand)."""
    return pl.col("free_hand_after").is_not_null() if "free_hand_after" in w.columns else pl.lit(False)


def prescribe(w: pl.DataFrame) -> pl.DataFrame:
    """Add to each wager row: the limit and ratio checks, the differential, the overrides and ``settled_amount``.

    Added columns: ``category`` (main, side, decision), ``limit_issue``/``limit_clause`` (a sentence
    and the clause when the wager breaks a limit or a Hold'em ratio, whether or not the rules change
    its settlement), ``differential_issue``/``differential_clause`` (the round's Banker/Player totals
    exceed the differential and this wager is on the larger side), ``override``/``override_clause``/
    ``override_detail`` (void, rules_void, free_hand, returned: the wager nets 0), and
    ``settled_amount`` (the amount the cards are to be settled at), ``amount_clause`` (the clause
    that set it when it is not the amount placed).

    The arithmetic runs over every wager as columns; the sentences are written only for the few
    wagers that have something to say.
    """
    if w.height == 0:
        return w.with_columns(
            *(pl.lit(None, dtype=pl.String).alias(c) for c in (
                "category", "limit_issue", "limit_clause", "differential_issue", "differential_clause",
                "override", "override_clause", "override_detail", "amount_clause")),
            pl.lit(None, dtype=pl.Int64).alias("settled_amount"),
        )
    w = w.with_columns(_prefix_rows(w["clause_prefix"]))
    w = w.with_columns(
        pl.when(pl.col("bet").is_in(list(DECISION_BETS))).then(pl.lit("decision"))
        .when(pl.col("bet").is_in(list(SIDE_BETS))).then(pl.lit("side"))
        .otherwise(pl.lit("main")).alias("category"),
        _clause("over_maximum").alias("_over_clause"),
        _clause("under_minimum").alias("_under_clause"),
    )
    w = w.with_columns(
        pl.when(pl.col("category") == "main").then(pl.col("limit_min"))
        .when(pl.col("category") == "side").then(pl.col("limit_side_min")).alias("_lo"),
        pl.when(pl.col("category") == "main").then(pl.col("limit_max"))
        .when(pl.col("category") == "side").then(pl.col("limit_side_max")).alias("_hi"),
    )
    w = w.with_columns(
        (pl.col("_hi").is_not_null() & (pl.col("amount") > pl.col("_hi"))).alias("_over"),
        (pl.col("_lo").is_not_null() & (pl.col("amount") < pl.col("_lo"))).alias("_under"),
    )
    w = _under_minimum_repeats(w)
    w = _holdem_ratios(w)
    capped = pl.when(pl.col("_over") & pl.col("_over_clause").is_not_null()).then(pl.col("_hi")).otherwise(pl.col("amount"))
    capped = pl.when(pl.col("_ratio_cap").is_not_null()).then(pl.min_horizontal(capped, pl.col("_ratio_cap"))).otherwise(capped)
    w = w.with_columns(capped.cast(pl.Int64).alias("_capped"))
    w = w.with_columns(
        pl.when(pl.col("_capped") != pl.col("amount"))
        .then(pl.when(pl.col("_over") & pl.col("_over_clause").is_not_null()).then(pl.col("_over_clause"))
              .otherwise(pl.col("_ratio_clause")))
        .alias("_cap_clause"),
        pl.when(pl.col("_over")).then(pl.coalesce("_over_clause", pl.lit(LIMIT_SIGN)))
        .when(pl.col("_under")).then(pl.coalesce("_under_clause", pl.lit(LIMIT_SIGN)))
        .when(pl.col("_ratio_off")).then(pl.col("_ratio_clause"))
        .alias("limit_clause"),
    )
    w = _differential(w)
    w = w.with_columns(
        pl.when(pl.col("status") == "void").then(pl.lit("void"))
        .when(pl.col("rules_void").fill_null(False)).then(pl.lit("rules_void"))
        .when((pl.col("status") == "free_hand") | _free_hand_expected(w)).then(pl.lit("free_hand"))
        .when(pl.col("_under_repeat")).then(pl.lit("returned"))
        .alias("override"),
    )
    w = w.with_columns(
        pl.when(pl.col("override") == "void").then(_clause("void_returned"))
        .when(pl.col("override") == "rules_void").then(pl.col("rules_void_clause"))
        .when(pl.col("override") == "free_hand").then(pl.coalesce(_clause("free_hand"), _clause("void_returned")))
        .when(pl.col("override") == "returned").then(pl.col("_under_clause"))
        .alias("override_clause"),
    )
    w = w.with_columns(
        pl.when(pl.col("override").is_not_null()).then(pl.lit(0, dtype=pl.Int64))
        .otherwise(pl.col("_settled")).alias("settled_amount"),
        pl.when(pl.col("override").is_not_null()).then(pl.col("override_clause"))
        .when(pl.col("_settled") != pl.col("_capped")).then(pl.col("differential_clause"))
        .when(pl.col("_capped") != pl.col("amount")).then(pl.col("_cap_clause"))
        .alias("amount_clause"),
    )
    w = _sentences(w)
    return w.drop([c for c in w.columns if c.startswith("_")])


def _sentences(w: pl.DataFrame) -> pl.DataFrame:
    """Write limit_issue, differential_issue and override_detail for the wagers that have something to say."""
    say = (
        pl.col("_over") | pl.col("_under") | pl.col("_ratio_off") | pl.col("_prorated") | pl.col("_exempt")
        | pl.col("override").is_not_null()
    )
    # the few rows that speak gathered by their numbers and their sentences put back in place: filtering and
    # joining the whole ~60-column frame cost more than writing the sentences
    rows = w.select(say.alias("_say")).to_series().arg_true()
    texts: dict[str, list] = {c: [] for c in TEXT_COLUMNS}
    # only the columns the sentences read are gathered and read row by row (the frame has some seventy)
    for r in w.select(c for c in SENTENCE_COLUMNS if c in w.columns)[rows].iter_rows(named=True):
        limit = _limit_sentence(r)
        texts["limit_issue"].append(limit)
        texts["differential_issue"].append(_differential_sentence(r))
        texts["override_detail"].append(_override_sentence(r, limit))
    def column(name: str, values: list) -> pl.Series:
        out = pl.repeat(None, w.height, dtype=pl.String, eager=True).alias(name)
        return out.scatter(rows, pl.Series(values, dtype=pl.String)) if len(rows) else out

    return w.with_columns(column(c, v) for c, v in texts.items())


def _n(v: int | None, currency: str | None) -> str:
    """An amount of a sentence in the currency's major units (the report and the pack show money so)."""
    return "?" if v is None else format_amount(v, currency)


def _limit_sentence(r: dict) -> str | None:
    bet, amount = r["bet"], r["amount"]
    if r["_over"]:
        head = f"{bet} {_n(amount, r['currency'])} over the table maximum {_n(r['_hi'], r['currency'])}"
        if r["_over_clause"]:
            return (f"{head}: paid or collected up to the maximum only, the excess {_n(amount - r['_hi'], r['currency'])} returned "
                    f"({r['_over_clause']})")
        return f"{head}: the rule text has no limit clause; settled as placed"
    if r["_under"]:
        head = f"{bet} {_n(amount, r['currency'])} under the table minimum {_n(r['_lo'], r['currency'])}"
        clause = r["_under_clause"]
        if r["_under_repeat"]:
            return (f"{head}: the player's under-minimum wagers were settled once already (round "
                    f"{r['_first_under_round']}); this one is returned ({clause})")
        if clause == "TBAC-7.17":
            return f"{head}: paid or collected this one time only ({clause})"
        if clause:
            return f"{head}: paid and taken as placed ({clause})"
        return f"{head}: the rule text has no limit clause; settled as placed"
    if r["_ratio_off"]:
        target, clause = r["_ratio_target"], r["_ratio_clause"]
        should = "twice the Ante" if bet == "flop" else "equal to the Ante"
        ante = f"Ante {_n(r['_ante'], r['currency'])}"
        if r["_ante_settled"] != r["_ante"]:
            ante += f", settled at the table maximum {_n(r['_ante_settled'], r['currency'])} by {r['_over_clause']}"
        head = f"{bet} {_n(amount, r['currency'])} is not {should} ({ante})"
        if amount > target:
            if r["_excess_returned"]:
                return f"{head}: the excess {_n(amount - target, r['currency'])} is returned and the wager settled at {_n(target, r['currency'])} ({clause})"
            return f"{head}: the rule text prescribes no correction; settled as placed ({clause})"
        if r["_excess_returned"]:
            return f"{head}: collected or paid as placed ({clause})"
        return f"{head}: settled as placed ({clause})"
    return None


def _differential_sentence(r: dict) -> str | None:
    if not (r["_prorated"] or r["_exempt"]):
        return None
    totals = (f"Banker {_n(r['_banker_total'], r['currency'])} v Player {_n(r['_player_total'], r['currency'])}, over the table differential "
              f"{_n(r['_diff'], r['currency'])} by {_n(r['_larger_total'] - r['_smaller_total'] - r['_diff'], r['currency'])}")
    if r["_prorated"]:
        return (f"{totals}: the {r['_larger']} side is settled pro rata, this wager on {_n(r['_settled'], r['currency'])} of its "
                f"{_n(r['_capped'], r['currency'])} ({r['differential_clause']})")
    return f"{totals}: this wager is under the table minimum and is paid and taken as placed ({r['differential_clause']})"


def _override_sentence(r: dict, limit: str | None) -> str | None:
    o, clause = r["override"], r["override_clause"]
    if o == "void":
        return f"the table declared the round void: every wager is returned ({clause})"
    if o == "rules_void":
        return f"the rules make the round void: every wager is returned ({clause})"
    if o == "free_hand":
        after = r.get("free_hand_after")
        if after is not None and r["status"] != "free_hand":
            return (f"the card(s) dealt in error in round {after} ({r['free_hand_cause']}) begin this hand, a Free Hand: "
                    f"all wagers must be removed from the layout ({clause}); the table recorded the round as {r['status']}")
        if after is not None:
            return (f"a Free Hand, begun by the card(s) dealt in error in round {after} ({r['free_hand_cause']}): "
                    f"all wagers must be removed from the layout ({clause})")
        return f"a Free Hand: all wagers must be removed from the layout ({clause})"
    if o == "returned":
        return limit
    return None


def _under_minimum_repeats(w: pl.DataFrame) -> pl.DataFrame:
    """TBAC-7.17: a player's under-minimum wagers are settled in the first round they appear, returned after.

    The same player is the same ``player_id`` at the same table on the same gaming day; an unrated
    wager (no player_id) cannot be linked to earlier ones and is settled as placed.
    """
    applies = pl.col("_under") & pl.col("player_id").is_not_null() & (pl.col("_under_clause") == "TBAC-7.17")
    # the few columns the grouping reads are cut before the filter: a filter of the whole wager frame copies it all
    first = (
        w.select("table_id", "gaming_day", "player_id", "round_no", "_under", "_under_clause")
        .filter(applies)
        .group_by(["table_id", "gaming_day", "player_id"])
        .agg(pl.col("round_no").min().alias("_first_under_round"))
    )
    w = attach(w, first, ["table_id", "gaming_day", "player_id"])
    return w.with_columns(
        (applies & (pl.col("round_no") > pl.col("_first_under_round"))).fill_null(False).alias("_under_repeat")
    )


def _holdem_ratios(w: pl.DataFrame) -> pl.DataFrame:
    """The Flop is twice the Ante, the Turn and River equal to it (HTB-4.11.2-4.11.4, MBS-3.7.2, the guide)."""
    first = _first_antes(w)
    if first is not None:
        w = w.with_columns(first)
    else:
        ante = (
            w.select("table_id", "round_no", "seat", "game", "bet", "wager_order", "amount")
            .filter((pl.col("game") == "holdem_bonus") & (pl.col("bet") == "ante"))
            .group_by(["table_id", "round_no", "seat"])
            .agg(pl.col("amount").sort_by("wager_order").first().alias("_ante"))
        )
        w = attach(w, ante, ["table_id", "round_no", "seat"])
    # HTB-7.10 settles an Ante over the table maximum at the maximum and returns the excess: the Flop, Turn and River
    # are measured against the Ante so settled (HTB-7.10.1 "up to the maximum permissible limit"); a text with no
    # limit clause settles the Ante as placed, and the ratios with it
    if {"_over_clause", "limit_max"} <= set(w.columns):
        capped = pl.col("_over_clause").is_not_null() & (pl.col("_ante") > pl.col("limit_max")).fill_null(False)
        w = w.with_columns(pl.when(capped).then(pl.col("limit_max")).otherwise(pl.col("_ante")).alias("_ante_settled"))
    else:
        w = w.with_columns(pl.col("_ante").alias("_ante_settled"))
    holdem = pl.col("game") == "holdem_bonus"
    target = (
        pl.when(holdem & (pl.col("bet") == "flop")).then(2 * pl.col("_ante_settled"))
        .when(holdem & pl.col("bet").is_in(["turn", "river"])).then(pl.col("_ante_settled"))
    )
    w = w.with_columns(
        target.alias("_ratio_target"),
        _ratio_clause().alias("_ratio_clause"),
        _by_text([CLAUSES[p].ratio_excess_returned for p in _PREFIXES] + [False], pl.Boolean).alias("_excess_returned"),
    )
    off = (pl.col("_ratio_target").is_not_null() & (pl.col("amount") != pl.col("_ratio_target"))).fill_null(False)
    return w.with_columns(
        off.alias("_ratio_off"),
        pl.when(off & pl.col("_excess_returned") & (pl.col("amount") > pl.col("_ratio_target")))
        .then(pl.col("_ratio_target")).alias("_ratio_cap"),
    )


def _ratio_clause() -> pl.Expr:
    """The wager's rule text's Flop ratio clause on a Flop, its Turn/River clause on any other bet: one gather from a
    table by (text, a Flop), where two gathers and a choice between them cost twice as much."""
    table = [c for p in _PREFIXES for c in (CLAUSES[p].turn_river_ratio, CLAUSES[p].flop_ratio)] + [None, None]
    return pl.lit(pl.Series(table, dtype=pl.String)).gather(
        pl.col(_PREFIX).cast(pl.Int64) * 2 + (pl.col("bet") == "flop").fill_null(False).cast(pl.Int64)
    )


def _first_antes(w: pl.DataFrame) -> pl.Series | None:
    """``_ante`` of every row: the amount of the first Hold'em Ante (by wager order) of its seat in its round, as the
    grouping and join in :func:`_holdem_ratios` give it, over numpy arrays. It needs the rows as the load gives them,
    each round's rows together and in strictly rising wager order; on any other frame it returns None and the
    grouping runs instead."""
    n = w.height
    if n < 2 or w["seat"].dtype not in (pl.Int8, pl.Int16, pl.Int32, pl.Int64):
        return None
    if w.select(pl.any_horizontal(pl.col("table_id", "round_no", "wager_order").is_null()).any()).item():
        return None
    if not in_order(w, ["table_id", "round_no"]):
        return None
    table = w["table_id"].rle_id().to_numpy()
    round_no, order = w["round_no"].to_numpy(), w["wager_order"].to_numpy()
    new_round = np.ones(n, dtype=bool)
    new_round[1:] = (table[1:] != table[:-1]) | (round_no[1:] != round_no[:-1])
    if (~new_round[1:] & (order[1:] <= order[:-1])).any():  # a tie or a step back in wager order within a round
        return None
    rid = np.cumsum(new_round) - 1
    seat = w["seat"]
    has_seat = seat.is_not_null().to_numpy()
    seat = seat.fill_null(0).to_numpy().astype(np.int64)
    ante = (has_seat & w.select((pl.col("game") == "holdem_bonus") & (pl.col("bet") == "ante")).to_series().fill_null(False).to_numpy())
    rows = np.flatnonzero(ante)
    values = np.zeros(n, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    if rows.size:
        lo, hi = int(seat[rows].min()), int(seat[rows].max())
        width = hi - lo + 1
        key = rid * width + (seat - lo)
        in_range = has_seat & (seat >= lo) & (seat <= hi)
        slots = (int(rid[-1]) + 1) * width
        if slots <= 4 * n and np.bincount(key[rows], minlength=slots).max() == 1:
            # one Ante per seat (the rule and the common case): each seat's Ante row from a table by key, no sort
            first_row = np.full(slots, -1, dtype=np.int64)
            first_row[key[rows]] = rows
            source = first_row[np.where(in_range, key, 0)]
            found = in_range & (source >= 0)
        else:
            keys, first = np.unique(key[rows], return_index=True)  # each seat's first Ante row, in row (= wager) order
            at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            found = in_range & (keys[at] == key)
            source = rows[first][at]
        source = np.where(found, source, 0)
        amount = w["amount"]
        values = np.where(found, amount.fill_null(0).to_numpy().astype(np.int64)[source], 0)
        found &= ~amount.is_null().to_numpy()[source]
    return pl.Series("_ante", pa.array(values, mask=~found), dtype=w["amount"].dtype)


def _differential(w: pl.DataFrame) -> pl.DataFrame:
    """TBAC-7.19: settle the larger of the Banker and Player sides pro rata on what the differential allows.

    The totals are of the amounts after the limit caps (TBAC-7.18 applies to each wager first).
    Wagers under the table minimum are paid and taken as placed (TBAC-7.19.1) and the rest share
    what remains of the allowance; each settles on ``floor(amount * share / pool)`` (the excess,
    rounded up, is returned).
    """
    clause = _clause("differential")
    eligible = (
        (pl.col("game") == "baccarat") & pl.col("bet").is_in(["banker", "player"])
        & pl.col("limit_differential").is_not_null() & clause.is_not_null()
        & (pl.col("status") == "settled")
    )
    under = pl.col("amount") < pl.col("limit_min").fill_null(0)
    source = w.select("table_id", "round_no", "game", "bet", "limit_differential", "limit_min", _PREFIX, "status", "amount",
                      "_capped")
    if not (w["game"] == "baccarat").any():  # a Hold'em or Blackjack group: the same empty grouping, of no rows
        source = source.clear()
    sides = (
        source
        .filter(eligible)
        .group_by(["table_id", "round_no"])
        .agg(
            pl.col("_capped").filter(pl.col("bet") == "banker").sum().alias("_banker_total"),
            pl.col("_capped").filter(pl.col("bet") == "player").sum().alias("_player_total"),
            pl.col("limit_differential").first().alias("_diff"),
            pl.col("_capped").filter((pl.col("bet") == "banker") & under).sum().alias("_banker_under"),
            pl.col("_capped").filter((pl.col("bet") == "player") & under).sum().alias("_player_under"),
        )
        .filter((pl.col("_banker_total") - pl.col("_player_total")).abs() > pl.col("_diff"))
        .with_columns(
            pl.when(pl.col("_banker_total") > pl.col("_player_total")).then(pl.lit("banker")).otherwise(pl.lit("player")).alias("_larger"),
            pl.min_horizontal("_banker_total", "_player_total").alias("_smaller_total"),
            pl.max_horizontal("_banker_total", "_player_total").alias("_larger_total"),
        )
        .with_columns(
            pl.when(pl.col("_larger") == "banker").then(pl.col("_banker_under")).otherwise(pl.col("_player_under")).alias("_exempt_total"),
        )
        .with_columns(
            (pl.col("_larger_total") - pl.col("_exempt_total")).alias("_pool"),
            pl.max_horizontal(pl.col("_smaller_total") + pl.col("_diff") - pl.col("_exempt_total"), pl.lit(0)).alias("_share"),
        )
    )
    w = attach(w, sides, ["table_id", "round_no"])
    if sides.height == 0:  # no round over its differential (every Hold'em or Blackjack group): nothing pro rata
        return w.with_columns(
            pl.lit(False).alias("_exempt"), pl.lit(False).alias("_prorated"), pl.col("_capped").alias("_settled"),
            pl.lit(None, dtype=pl.String).alias("differential_clause"),
        )
    on_larger = (eligible & pl.col("_larger").is_not_null() & (pl.col("bet") == pl.col("_larger"))).fill_null(False)
    share = (
        pl.col("_capped").cast(pl.Int128) * pl.col("_share").cast(pl.Int128) // pl.col("_pool").cast(pl.Int128).clip(lower_bound=1)
    ).cast(pl.Int64)
    w = w.with_columns((on_larger & under).alias("_exempt"), (on_larger & ~under).alias("_prorated"))
    return w.with_columns(
        pl.when(pl.col("_prorated")).then(share).otherwise(pl.col("_capped")).alias("_settled"),
        pl.when(pl.col("_prorated")).then(clause).when(pl.col("_exempt")).then(_clause("differential_exception"))
        .alias("differential_clause"),
    )
