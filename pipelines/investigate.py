"""Questions surveillance investigators ask across days: one player, one dealer, one table.

Plain SQL over the audit's published tables (``out_settlements``, ``out_findings``), on a
read-only connection to the snapshot (``pipelines.db.open_snapshot``), so an investigation never
holds up the nightly run. Each function returns a polars frame the notebooks chart; money stays
in integer smallest units (per currency); only ratios such as hold are floats.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl

from pipelines.stats.load import SHOE_SPAN


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> pl.DataFrame:
    df = pl.from_arrow(con.sql(sql, params=params).to_arrow_table())
    # DuckDB hands TIMESTAMPTZ back in the session's zone name (e.g. Etc/UTC): one zone, UTC, everywhere; money
    # sums come as DECIMAL(38,0) (a night of large legal amounts overflows BIGINT) and are read as Int128
    return df.with_columns(*(pl.col(c).dt.convert_time_zone("UTC") for c, t in df.schema.items()
                             if isinstance(t, pl.Datetime) and t.time_zone),
                           *(pl.col(c).cast(pl.Int128) for c, t in df.schema.items()
                             if isinstance(t, pl.Decimal) and t.scale == 0))


def player_by_day(con: duckdb.DuckDBPyConnection, player_id: str) -> pl.DataFrame:
    """Per gaming day and currency: rounds, wagers, amount wagered, recorded and expected net, overpayment."""
    return _frame(
        con,
        """
        SELECT gaming_day, currency,
               count(DISTINCT table_id || '#' || round_no) AS rounds,
               count(*) AS wagers,
               sum(amount) AS wagered,
               sum(recorded_net) AS recorded_net,
               sum(expected_net) AS expected_net,
               sum(greatest(difference, 0)) AS overpaid,
               sum(CASE WHEN expected_net IS NULL THEN 1 ELSE 0 END) AS wagers_not_settleable
        FROM out_settlements WHERE player_id = ?
        GROUP BY ALL ORDER BY gaming_day, currency
        """,
        [player_id],
    )


def dealer_overpayments(con: duckdb.DuckDBPyConnection, dealer_id: str) -> pl.DataFrame:
    """Who this dealer overpaid, and how often: the first lead in a dealer-player collusion review."""
    return _frame(
        con,
        """
        SELECT coalesce(player_id, '(unrated)') AS player_id, currency,
               count(*) AS wagers,
               sum(CASE WHEN difference > 0 THEN 1 ELSE 0 END) AS overpaid_wagers,
               sum(greatest(difference, 0)) AS overpaid,
               sum(least(difference, 0)) AS underpaid
        FROM out_settlements WHERE dealer_id = ?
        GROUP BY ALL ORDER BY overpaid DESC, player_id, currency
        """,
        [dealer_id],
    )


def table_hold_by_day(con: duckdb.DuckDBPyConnection, table_id: str) -> pl.DataFrame:
    """Per gaming day: drop (amount wagered), the house's win as recorded and as the rules say, and hold %."""
    return _frame(
        con,
        """
        SELECT gaming_day, currency, count(*) AS wagers, sum(amount) AS wagered,
               -sum(recorded_net) AS house_win_recorded,
               -sum(expected_net) AS house_win_expected,
               -sum(recorded_net) / nullif(sum(amount), 0) AS hold_recorded,
               -sum(expected_net) / nullif(sum(amount), 0) AS hold_expected
        FROM out_settlements WHERE table_id = ? AND status = 'settled'
        GROUP BY ALL ORDER BY gaming_day, currency
        """,
        [table_id],
    )


def findings_about(
    con: duckdb.DuckDBPyConnection,
    *,
    player_id: str | None = None,
    dealer_id: str | None = None,
    table_id: str | None = None,
) -> pl.DataFrame:
    """Every finding that names the subject, money findings first."""
    if not any((player_id, dealer_id, table_id)):
        raise ValueError("name a player, a dealer or a table")
    return _frame(
        con,
        """
        SELECT gaming_day, kind, severity, table_id, round_no, wager_id, player_id, dealer_id,
               expected_net, recorded_net, difference, rule_ref, detail, source_file, source_line
        FROM out_findings
        WHERE (? IS NULL OR player_id = ?) AND (? IS NULL OR dealer_id = ?) AND (? IS NULL OR table_id = ?)
        ORDER BY abs(coalesce(difference, 0)) DESC, gaming_day, table_id, round_no, finding_id
        """,
        [player_id, player_id, dealer_id, dealer_id, table_id, table_id],
    )


# --- one subject over a range of gaming days (pitaudit investigate, the notebooks) ---------------------------------

SUBJECT_COLUMNS = {"player": "player_id", "dealer": "dealer_id", "table": "table_id"}


@dataclass(frozen=True)
class Subject:
    """Whom an investigation is about: a player, a dealer or a table, over gaming days ``first`` to ``last``
    (either open). The column is picked from :data:`SUBJECT_COLUMNS`, never from input; the id is bound."""

    kind: str
    id: str
    first: dt.date | None = None
    last: dt.date | None = None

    def __post_init__(self) -> None:
        if self.kind not in SUBJECT_COLUMNS:
            raise ValueError(f"a subject is a player, a dealer or a table, not {self.kind!r}")

    @property
    def column(self) -> str:
        return SUBJECT_COLUMNS[self.kind]

    @property
    def label(self) -> str:
        span = f" from {self.first.isoformat() if self.first else 'the first day'} to {self.last.isoformat() if self.last else 'the last day'}"
        return f"{self.kind} {self.id}{span if (self.first or self.last) else ''}"


def _group(subjects: list[Subject]) -> tuple[str, str, list]:
    """(column, SQL condition template, parameters) selecting the rows of several subjects of one kind and one range:
    ``{p}`` in the template is the table's alias prefix."""
    kinds = {(x.kind, x.first, x.last) for x in subjects}
    if len(kinds) != 1:
        raise ValueError("subjects queried together share their kind and their range of days")
    s = subjects[0]
    return (s.column, "{p}" + s.column + " IN (SELECT unnest(?::VARCHAR[])) AND {p}gaming_day BETWEEN "
            "coalesce(?, DATE '0001-01-01') AND coalesce(?, DATE '9999-12-31')",
            [sorted({x.id for x in subjects}), s.first, s.last])


_DAYS = "{p}gaming_day BETWEEN coalesce(?, DATE '0001-01-01') AND coalesce(?, DATE '9999-12-31')"


def _days(subjects: list[Subject], alias: str) -> tuple[str, list]:
    """(SQL, parameters): the subjects' range of days on the table ``alias`` joined to their rows by its gaming day. It
    selects no other row than the join does (the subject's rows are of those days), and lets DuckDB skip the other
    nights' row groups of that table: without it, each query read the whole of ``core_rounds`` or ``out_settlements``,
    every night of the history, to join a window's rows."""
    return _DAYS.format(p=alias + "."), [subjects[0].first, subjects[0].last]


def _split(df: pl.DataFrame, subjects: list[Subject]) -> dict[Subject, pl.DataFrame]:
    """The rows of each subject (column ``_subject``), in the query's order, without that column.

    The queries sort by ``_subject`` first, so each subject's rows are one run: a slice of the frame (grouping
    the rows by subject to copy them out was a tenth of the CPU of the audit's pages at 30 nights)."""
    empty = df.head(0).drop("_subject")
    if not df.height:
        return dict.fromkeys(subjects, empty)
    runs = df["_subject"].rle()
    ids, lengths = runs.struct.field("value").to_list(), runs.struct.field("len").to_list()
    body = df.drop("_subject")
    if len(set(ids)) == len(ids):
        starts = [0, *itertools.accumulate(lengths)]
        # one chunk each, as a copy would be (a table's Parquet file is written a row group per chunk)
        parts = {ident: body.slice(start, n).rechunk() for ident, start, n in zip(ids, starts, lengths)}
    else:  # a subject in more than one run (a query not sorted by it): its rows gathered, in order
        parts = {k[0]: v for k, v in df.partition_by("_subject", maintain_order=True, include_key=False,
                                                     as_dict=True).items()}
    return {x: parts.get(x.id, empty) for x in subjects}


#: the order of a subject's wagers and of its rounds, by subject first (:func:`_split`): time, then the round's key (and
#: the wager's place in it), nulls last as DuckDB's ``ORDER BY`` puts them. The rows are sorted by polars after the
#: query: the same order (strings by their bytes, times by the instant, the keys make each row's place unique), and
#: DuckDB's sort of a 30-day page's rows on one thread was two-fifths of its read (0.43 -> 0.26 CPU s for the
#: 481,000 wagers of 13 dealers at night 31 of 30 nights)
WAGERS_ORDER = ("_subject", "bets_closed_at", "gaming_day", "table_id", "round_no", "wager_order")
ROUNDS_ORDER = ("_subject", "bets_closed_at", "gaming_day", "table_id", "round_no")


def subject_wagers_of(con: duckdb.DuckDBPyConnection, subjects: list[Subject]) -> dict[Subject, pl.DataFrame]:
    """:func:`subject_wagers` of several subjects of one kind and range, in one query (sorted: :data:`WAGERS_ORDER`)."""
    col, cond, params = _group(subjects)
    days, days_params = _days(subjects, "r")
    return _split(_frame(con, f"""
        SELECT w.{col} AS _subject, w.gaming_day, w.table_id, w.round_no, w.wager_id, w.wager_order, w.seat, w.player_id,
               w.dealer_id, w.game, w.ruleset, w.ruleset_version, w.currency, w.status, w.bet, w.amount, w.settled_amount,
               w.recorded_net, w.expected_net, w.difference, w.clause, w.unsettled_reason,
               r.bets_closed_at, r.settled_at, r.shoe_id
        FROM out_settlements w
        LEFT JOIN core_rounds r ON r.table_id = w.table_id AND r.round_no = w.round_no AND r.gaming_day = w.gaming_day
                                   AND {days}
        WHERE {cond.format(p="w.")}
    """, days_params + params).sort(*WAGERS_ORDER, nulls_last=True, maintain_order=True), subjects)


def subject_wagers(con: duckdb.DuckDBPyConnection, s: Subject) -> pl.DataFrame:
    """Every wager of the subject (out_settlements), with its round's times, in time order."""
    return subject_wagers_of(con, [s])[s]


def subject_rounds_of(con: duckdb.DuckDBPyConnection, subjects: list[Subject],
                      wagers_of: dict[Subject, pl.DataFrame] | None = None) -> dict[Subject, pl.DataFrame]:
    """:func:`subject_rounds` of several subjects of one kind and range. ``wagers_of``: their
    :func:`subject_wagers_of`, when the caller has read them already.

    Each round's line is summed from the subject's wagers (:func:`rounds_of_wagers`), and only the findings on those
    rounds are read: summing ``out_settlements`` again in DuckDB read the subjects' wagers a second time (1.7 s of the
    12.6 s of py-spy samples in the audit's pages at night 31 of 30 nights)."""
    wagers_of = subject_wagers_of(con, subjects) if wagers_of is None else wagers_of
    rounds_of = {s: rounds_of_wagers(wagers_of[s]) for s in subjects}
    keys = pl.concat([r.select(ROUND_KEYS) for r in rounds_of.values()]).unique()
    on_rounds = _findings_on_rounds(con, keys, subjects)
    return {s: r.join(on_rounds, on=ROUND_KEYS, how="left", maintain_order="left")
            .with_columns(pl.col("findings").fill_null(0)).select(ROUNDS_COLUMNS)
            for s, r in rounds_of.items()}


ROUND_KEYS = ["gaming_day", "table_id", "round_no"]
#: a subject's rounds, in this order (:func:`subject_rounds`)
ROUNDS_COLUMNS = ["gaming_day", "bets_closed_at", "table_id", "round_no", "game", "dealer_id", "currency", "status",
                  "wagers", "wagered", "recorded_net", "expected_net", "difference", "wagers_not_settleable", "findings",
                  "finding_kinds"]


def rounds_of_wagers(wagers: pl.DataFrame) -> pl.DataFrame:
    """One line per round of a subject's wagers (:func:`subject_wagers_of`'s frame, in its time order): the round's game,
    dealer, currency and status (the round's own, on each of its wagers), how many wagers, and their money totals as
    Int128 (:mod:`pipelines.money`), in the wagers' order of rounds (:data:`ROUNDS_ORDER`)."""
    return (wagers.group_by(ROUND_KEYS, maintain_order=True)
            .agg(pl.col("bets_closed_at", "game", "dealer_id", "currency", "status").first(),
                 pl.len().cast(pl.Int64).alias("wagers"),
                 *(_sql_sum(c).alias(name) for c, name in (("amount", "wagered"), ("recorded_net", "recorded_net"),
                                                           ("expected_net", "expected_net"), ("difference", "difference"))),
                 pl.col("expected_net").null_count().cast(pl.Int64).alias("wagers_not_settleable"))
            .sort(*ROUNDS_ORDER[1:], nulls_last=True, maintain_order=True))


def _sql_sum(column: str) -> pl.Expr:
    """SQL's ``sum``: null over no value (a round none of whose wagers could be settled has no expected net, not 0)."""
    return pl.when(pl.col(column).is_not_null().any()).then(pl.col(column).cast(pl.Int128).sum())


def _findings_on_rounds(con: duckdb.DuckDBPyConnection, keys: pl.DataFrame, subjects: list[Subject]) -> pl.DataFrame:
    """Per round of ``keys``: how many findings the audit made on it (any subject's) and their kinds. The keys are
    bound as parameters, not a registered Arrow frame (``pipelines.db.create_keys_table`` says why), and unpacked in
    the query itself: no table to name, so threads sharing the connection cannot meet on one."""
    days, days_params = _days(subjects, "f")
    packed, tables = _packed_round_keys(keys)
    return _frame(con, f"""
        WITH p AS (SELECT string_split(unnest(string_split(?, ',')), ':') AS p),
        k AS (SELECT DATE '1970-01-01' + CAST(p[1] AS INTEGER) AS gaming_day,
                     list_extract(?::VARCHAR[], CAST(p[2] AS BIGINT)) AS table_id, CAST(p[3] AS BIGINT) AS round_no
              FROM p WHERE p[1] <> '')
        SELECT f.gaming_day, f.table_id, f.round_no, count(*) AS findings,
               string_agg(DISTINCT f.kind, ', ' ORDER BY f.kind) AS finding_kinds
        FROM out_findings f SEMI JOIN k USING (gaming_day, table_id, round_no)
        WHERE {days}
        GROUP BY ALL
    """, [packed, tables] + days_params)


def _packed_round_keys(keys: pl.DataFrame) -> tuple[str, list[str]]:
    """``keys`` (gaming_day, table_id, round_no) as one parameter DuckDB unpacks: ``day:table:round`` per key, joined by
    commas (the day in days since 1970, the table by its place from 1 in the second value, a list of the distinct
    table ids, so that no id from the input is ever spelled inside the text). DuckDB turns a Python list parameter into
    its values one element at a time, about 3 us each: the three lists of a 30-day page's 12,000 rounds cost 0.08 s
    CPU, this string 0.01 (the pages of night 31 of 30 nights bind 181,609 keys). A key with a null part matches no
    finding in the join: it is left out."""
    keys = keys.drop_nulls(ROUND_KEYS)
    tables = keys["table_id"].unique(maintain_order=True)
    place = keys["table_id"].replace_strict(tables, pl.int_range(1, len(tables) + 1, eager=True), return_dtype=pl.Int64)
    packed = keys.select(pl.concat_str([pl.col("gaming_day").cast(pl.Int32), place, pl.col("round_no")], separator=":"))
    return packed.to_series().str.join(",").item(), tables.to_list()


def subject_rounds(con: duckdb.DuckDBPyConnection, s: Subject) -> pl.DataFrame:
    """Every round the subject took part in: time, table, dealer, its wagers' totals, and the audit's findings on it."""
    return subject_rounds_of(con, [s])[s]


def subject_findings_of(con: duckdb.DuckDBPyConnection, subjects: list[Subject]) -> dict[Subject, pl.DataFrame]:
    """:func:`subject_findings` of several subjects of one kind and range, in one query."""
    col, cond, params = _group(subjects)
    return _split(_frame(con, f"""
        SELECT {col} AS _subject, gaming_day, kind, severity, table_id, round_no, wager_id, player_id, dealer_id, currency,
               expected_net, recorded_net, difference, rule_ref, detail, source_file, source_line, finding_id,
               p_value, q_value
        FROM out_findings WHERE {cond.format(p="")}
        ORDER BY _subject, abs(coalesce(difference, 0)) DESC, gaming_day, table_id, round_no, finding_id
    """, params), subjects)


def subject_findings(con: duckdb.DuckDBPyConnection, s: Subject) -> pl.DataFrame:
    """Every finding naming the subject in the range: the deterministic ones (which name player, dealer and table)
    and the statistical ones (advantage play, luck, collusion, hold), these with their p- and q-values."""
    return subject_findings_of(con, [s])[s]


def bet_moments(con: duckdb.DuckDBPyConnection, first: dt.date | None = None, last: dt.date | None = None) -> pl.DataFrame:
    """Per rule set, bet and currency: the mean and variance of a wager's net per unit staked, as the rules settled
    every wager of the floor in the range (the floor's own estimate of each bet's expectation and spread).

    The band of :func:`pipelines.investigation.analysis.results_over_time` is built from these. An estimate: a
    rare-hit side bet seen a few hundred times has a poor variance estimate; the exact payout distributions
    of the statistical detectors will replace it where they exist.

    DuckDB only counts the wagers of each (net, stake) pair, in integers; the means and variances are summed here in
    one fixed order. Averaging the doubles in SQL summed them in whatever order DuckDB's threads met them, so the
    figures moved in their last digits from one run to the next. The rule-set version is the most common one, ties
    going to the latest."""
    counts = _frame(con, """
        SELECT ruleset, bet, currency, ruleset_version, expected_net, amount, count(*) AS c
        FROM out_settlements
        WHERE expected_net IS NOT NULL AND amount > 0 AND status = 'settled'
          AND gaming_day BETWEEN coalesce(?, DATE '0001-01-01') AND coalesce(?, DATE '9999-12-31')
        GROUP BY ALL
    """, [first, last])
    return moments_per_unit(counts)


def moments_per_unit(counts: pl.DataFrame) -> pl.DataFrame:
    """``bet_moments`` from its counts (ruleset, bet, currency, ruleset_version, expected_net, amount, c): the same
    counts in any row order give the same bits."""
    keys = ["ruleset", "bet", "currency"]
    schema = {"ruleset": pl.String, "bet": pl.String, "currency": pl.String, "n": pl.Int64,
              "ruleset_version": pl.String, "mean_per_unit": pl.Float64, "var_per_unit": pl.Float64}
    if counts.height == 0:
        return pl.DataFrame(schema=schema)
    counts = counts.sort(*keys, "expected_net", "amount", "ruleset_version")
    version = (counts.group_by(*keys, "ruleset_version").agg(pl.col("c").sum())
               .sort(*keys, "c", "ruleset_version", descending=[False, False, False, True, True])
               .group_by(keys, maintain_order=True).first().select(*keys, "ruleset_version"))
    rows = []
    for key, g in counts.group_by(keys, maintain_order=True):
        x = g["expected_net"].cast(pl.Float64).to_numpy() / g["amount"].cast(pl.Float64).to_numpy()
        c = g["c"].to_numpy().astype(np.float64)
        n = c.sum()
        mean = float(np.dot(c, x) / n)
        rows.append((*key, int(n), mean, float(np.dot(c, (x - mean) ** 2) / n)))
    out = pl.DataFrame(rows, schema={k: schema[k] for k in (*keys, "n", "mean_per_unit", "var_per_unit")},
                       orient="row")
    return out.join(version, on=keys, how="left").select(*schema).sort(keys)


def dealers_of_many(con: duckdb.DuckDBPyConnection, subjects: list[Subject],
                    wagers_of: dict[Subject, pl.DataFrame] | None = None) -> dict[Subject, pl.DataFrame]:
    """:func:`dealers_of` of several subjects of one kind and range. ``wagers_of``: their :func:`subject_wagers_of`, when
    the caller has read them already: the dealers are summed from those rows, not from ``out_settlements`` again."""
    wagers_of = subject_wagers_of(con, subjects) if wagers_of is None else wagers_of
    return {s: dealers_of_wagers(wagers_of[s]) for s in subjects}


def dealers_of_wagers(wagers: pl.DataFrame) -> pl.DataFrame:
    """Per dealer (``(none recorded)`` where the round names none) and currency of a subject's wagers: the rounds and
    wagers, the money totals as Int128, what was overpaid and underpaid (a wager whose difference is unknown counts 0),
    and the wrong settlements; the most overpaid dealer first."""
    return (wagers.with_columns(pl.col("dealer_id").fill_null("(none recorded)"))
            .group_by("dealer_id", "currency")
            .agg(_rounds_counted().alias("rounds"), *_money_totals(),
                 pl.col("difference").clip(upper_bound=0).fill_null(0).cast(pl.Int128).sum().alias("underpaid"),
                 (pl.col("difference") != 0).sum().cast(pl.Int64).alias("wrong_settlements"))
            .sort(["overpaid", "rounds", "dealer_id", "currency"], descending=[True, True, False, False],
                  nulls_last=True))


def _rounds_counted() -> pl.Expr:
    """SQL's ``count(DISTINCT (table_id, round_no, gaming_day))`` over the rows whose round key is whole."""
    known = pl.all_horizontal(pl.col("table_id", "round_no", "gaming_day").is_not_null())
    return pl.struct("table_id", "round_no", "gaming_day").filter(known).n_unique().cast(pl.Int64)


def _money_totals() -> list[pl.Expr]:
    """A group's wagers, and its money as Int128: wagered, net as recorded, net as the rules settle it, and overpaid
    (a wager whose difference is unknown counts 0, as SQL's ``greatest(difference, 0)`` has it)."""
    return [pl.len().cast(pl.Int64).alias("wagers"), _sql_sum("amount").alias("wagered"), _sql_sum("recorded_net"),
            _sql_sum("expected_net"),
            pl.col("difference").clip(lower_bound=0).fill_null(0).cast(pl.Int128).sum().alias("overpaid")]


def dealers_of(con: duckdb.DuckDBPyConnection, s: Subject) -> pl.DataFrame:
    """Under which dealers the subject's wagers were played (a dealer subject: itself), with money and findings."""
    return dealers_of_many(con, [s])[s]


# the subjects whose column is one of its round's: every wager of a round has the round's table, and its dealer (the
# audit gives each wager its round's dealer_id, pipelines.audit.settle), so the wagers at a dealer's or a table's rounds
# are the rows naming that dealer or table
ROUND_COLUMNS = ("dealer", "table")
# played_with's columns of the wagers ``{p}`` at the subject's rounds
_PLAYED_WITH = """coalesce({p}player_id, '(unrated)') AS player_id, {p}currency,
               count(DISTINCT ({p}table_id, {p}round_no, {p}gaming_day)) FILTER (WHERE {p}table_id IS NOT NULL AND {p}round_no IS NOT NULL AND {p}gaming_day IS NOT NULL) AS rounds_together,
               count(*) AS wagers, CAST(sum({p}amount) AS DECIMAL(38,0)) AS wagered, CAST(sum({p}recorded_net) AS DECIMAL(38,0)) AS recorded_net,
               CAST(sum({p}expected_net) AS DECIMAL(38,0)) AS expected_net, CAST(sum(greatest({p}difference, 0)) AS DECIMAL(38,0)) AS overpaid,
               count(DISTINCT {p}dealer_id) AS dealers"""


def played_with_many(con: duckdb.DuckDBPyConnection, subjects: list[Subject],
                     wagers_of: dict[Subject, pl.DataFrame] | None = None) -> dict[Subject, pl.DataFrame]:
    """:func:`played_with` of several subjects of one kind and range.

    A dealer's or a table's (:data:`ROUND_COLUMNS`): its own wagers, grouped by player (the same rows a join of the
    wagers with the subject's rounds finds), from ``wagers_of`` (their :func:`subject_wagers_of`) when the caller has
    read them already. A player's: the wagers at the player's rounds, the player's own left out, in one query."""
    col, cond, params = _group(subjects)
    if subjects[0].kind in ROUND_COLUMNS:
        wagers_of = subject_wagers_of(con, subjects) if wagers_of is None else wagers_of
        return {s: played_with_wagers(wagers_of[s]) for s in subjects}
    days, days_params = _days(subjects, "o")
    exclude = "AND coalesce(o.player_id, '') <> m._subject" if subjects[0].kind == "player" else ""
    return _split(_frame(con, f"""
        WITH my_rounds AS (SELECT DISTINCT me.{col} AS _subject, me.gaming_day, me.table_id, me.round_no
                           FROM out_settlements me WHERE {cond.format(p="me.")})
        SELECT m._subject, {_PLAYED_WITH.format(p="o.")}
        FROM out_settlements o JOIN my_rounds m USING (gaming_day, table_id, round_no)
        WHERE {days} {exclude}
        GROUP BY ALL ORDER BY m._subject, rounds_together DESC, overpaid DESC, player_id, currency
    """, params + days_params), subjects)


def played_with_wagers(wagers: pl.DataFrame) -> pl.DataFrame:
    """Per player (``(unrated)`` where none is named) and currency of the wagers at a dealer's or a table's rounds (its
    own rows): the rounds together, wagers, money totals as Int128, what was overpaid, and under how many dealers; the
    player of the most rounds first."""
    return (wagers.with_columns(pl.col("player_id").fill_null("(unrated)"))
            .group_by("player_id", "currency")
            .agg(_rounds_counted().alias("rounds_together"), *_money_totals(),
                 pl.col("dealer_id").drop_nulls().n_unique().cast(pl.Int64).alias("dealers"))
            .sort(["rounds_together", "overpaid", "player_id", "currency"], descending=[True, True, False, False],
                  nulls_last=True))


def played_with(con: duckdb.DuckDBPyConnection, s: Subject) -> pl.DataFrame:
    """The players at the subject's rounds (a player subject: the others at the same rounds), with their money.

    For a dealer or table this is who played under that dealer or at that table (the collusion lead of
    :func:`dealer_overpayments`, over the range)."""
    return played_with_many(con, [s])[s]


def blackjack_cards(con: duckdb.DuckDBPyConnection, tables: list[str], shoes: pl.DataFrame | None = None,
                    near: tuple[dt.datetime, dt.datetime] | None = None) -> pl.DataFrame:
    """The card events of the devices of ``tables`` (for the count before each round), with the shoe's decks.

    ``shoes`` (``table_id``, ``shoe_id``): only those shoes' events (whole shoes, so each round's count is the same),
    not every shoe the tables ever dealt: an investigation's read does not grow with the database's history.
    ``near`` (the first and last ``bets_closed_at`` of the rounds wanted): with ``shoes``, the events within
    ``SHOE_SPAN`` of that range, the statistical detectors' own bound (DuckDB skips the other nights' row groups
    instead of reading every night's events), and every event of a shoe whose ``shoe_start`` lies further back: each
    wanted round's count is the same (the events a shoe dealt after them do not enter it)."""
    if not tables or (shoes is not None and shoes.height == 0):
        return pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String, "event_seq": pl.Int64,
                                    "round_no": pl.Int64, "card_code": pl.Int16, "decks": pl.Int64})
    if shoes is not None:
        shoes = shoes.drop_nulls()
        wanted = "WITH wanted AS (SELECT unnest(?::VARCHAR[]) AS table_id, unnest(?::VARCHAR[]) AS shoe_id)"
        of_shoes = "FROM core_device_events e SEMI JOIN wanted w ON e.table_id = w.table_id AND e.shoe_id = w.shoe_id"
        parameters = [shoes["table_id"].to_list(), shoes["shoe_id"].to_list()]
        if near is not None and None not in near:
            days = SHOE_SPAN.days
            span = f"e.ts BETWEEN ?::TIMESTAMPTZ - INTERVAL {days} DAY AND ?::TIMESTAMPTZ + INTERVAL {days} DAY"
            started = {tuple(r) for r in con.execute(
                f"{wanted} SELECT DISTINCT e.table_id, e.shoe_id {of_shoes} WHERE {span} AND e.event = 'shoe_start'",
                [*parameters, *near]).fetchall()}
            whole = [k for k in shoes.select("table_id", "shoe_id").unique().iter_rows() if k not in started]
            events = f"""{wanted}, whole AS (SELECT unnest(?::VARCHAR[]) AS table_id, unnest(?::VARCHAR[]) AS shoe_id),
            ev AS (SELECT e.* {of_shoes} WHERE {span}
                   AND (e.table_id, e.shoe_id) NOT IN (SELECT (table_id, shoe_id) FROM whole)
                   UNION ALL SELECT e.* FROM core_device_events e SEMI JOIN whole w ON e.table_id = w.table_id AND e.shoe_id = w.shoe_id)"""
            parameters = [*parameters, [k[0] for k in whole], [k[1] for k in whole], *near]
        else:
            events = f"{wanted}, ev AS (SELECT e.* {of_shoes})"
    else:
        events = "WITH ev AS (SELECT * FROM core_device_events WHERE table_id IN (SELECT unnest(?::VARCHAR[])))"
        parameters = [tables]
    return _frame(con, events + """,
        shoes AS (SELECT table_id, shoe_id, CAST(arg_min(decks, event_seq) AS BIGINT) AS decks FROM ev
                  WHERE event = 'shoe_start' GROUP BY table_id, shoe_id)
        SELECT ev.table_id, ev.shoe_id, ev.event_seq, ev.round_no, ev.card_code, s.decks
        FROM ev LEFT JOIN shoes s USING (table_id, shoe_id)
        WHERE ev.event = 'card' AND ev.round_no IS NOT NULL
        ORDER BY ev.table_id, ev.device_id, ev.event_seq
    """, parameters)


# --- dealers' errors across the floor (the dealer error trends notebook) -------------------------------------------

# the findings that are a dealer's doing (a settlement, a drawing, a void or Free Hand not honoured, a late wager
# accepted, a limit not enforced); device and data findings (card integrity, gaps, unmatched rounds) are not
DEALER_ERROR_KINDS = ("payout_mismatch", "drawing_rule_violation", "void_not_honoured", "free_hand_wager", "late_wager",
                      "limit_breach", "differential_breach", "result_mismatch", "illegal_action")


def dealer_error_rates(con: duckdb.DuckDBPyConnection, first: dt.date | None = None, last: dt.date | None = None) -> pl.DataFrame:
    """Per dealer: rounds dealt, rounds with at least one dealer error, the rate per 1,000 rounds, money wrongly
    paid (overpaid, underpaid per currency is in ``dealer_overpayments``), and the floor's rate beside it."""
    return _frame(con, """
        WITH r AS (SELECT gaming_day, table_id, round_no, dealer_id FROM core_rounds
                   WHERE dealer_id IS NOT NULL AND gaming_day BETWEEN coalesce(?, DATE '0001-01-01') AND coalesce(?, DATE '9999-12-31')),
        e AS (SELECT DISTINCT gaming_day, table_id, round_no FROM out_findings WHERE kind IN (SELECT unnest(?::VARCHAR[]))),
        per AS (SELECT r.dealer_id, count(*) AS rounds, count(e.round_no) AS error_rounds
                FROM r LEFT JOIN e USING (gaming_day, table_id, round_no) GROUP BY r.dealer_id)
        SELECT dealer_id, rounds, error_rounds, 1000.0 * error_rounds / rounds AS errors_per_1000,
               1000.0 * sum(error_rounds) OVER () / sum(rounds) OVER () AS floor_per_1000
        FROM per ORDER BY errors_per_1000 DESC, rounds DESC, dealer_id
    """, [first, last, list(DEALER_ERROR_KINDS)])


def dealer_errors_by_hour(con: duckdb.DuckDBPyConnection, first: dt.date | None = None, last: dt.date | None = None) -> pl.DataFrame:
    """Per dealer and hour (UTC) the round's betting closed: rounds, and rounds with a dealer error, by kind."""
    return _frame(con, """
        WITH r AS (SELECT gaming_day, table_id, round_no, dealer_id, date_trunc('hour', bets_closed_at) AS hour FROM core_rounds
                   WHERE dealer_id IS NOT NULL AND gaming_day BETWEEN coalesce(?, DATE '0001-01-01') AND coalesce(?, DATE '9999-12-31')),
        e AS (SELECT gaming_day, table_id, round_no, min(kind) AS kind FROM out_findings
              WHERE kind IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL)
        SELECT r.hour, r.dealer_id, count(*) AS rounds, count(e.round_no) AS error_rounds,
               string_agg(DISTINCT e.kind, ', ' ORDER BY e.kind) AS kinds
        FROM r LEFT JOIN e USING (gaming_day, table_id, round_no)
        GROUP BY ALL ORDER BY r.hour, r.dealer_id
    """, [first, last, list(DEALER_ERROR_KINDS)])
