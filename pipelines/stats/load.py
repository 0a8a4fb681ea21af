"""What the statistical detectors read from the database, for a range of gaming days (read-only).

Four frames: the re-settled wagers (``out_settlements`` with each round's shoe and the shoe's decks
from the device's ``shoe_start``), the deterministic findings that are dealer errors, the rounds
dealt per dealer, and the device's card sequence of the shoes the counting detectors need.
Everything is bound as SQL parameters.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

WAGER_COLUMNS = (
    "gaming_day", "table_id", "round_no", "wager_id", "wager_order", "seat", "player_id", "dealer_id", "game",
    "ruleset", "ruleset_version", "currency", "status", "bet", "amount", "settled_amount", "cards_net",
    "expected_net", "recorded_net", "difference", "adjustment", "source_file", "source_line",
)

#: the columns the detectors read (the wager's id, order, paid amount and source are evidence, not statistics: a
#: night's 4,500,000 wagers came to 1 GB with them)
READ_COLUMNS = tuple(c for c in WAGER_COLUMNS if c not in ("wager_id", "wager_order", "settled_amount", "source_file", "source_line"))

# deterministic kinds that are a dealer's error at the table (a wrong settlement or a wrong procedure)
DEALER_ERROR_KINDS = ("payout_mismatch", "drawing_rule_violation", "void_not_honoured", "free_hand_wager",
                      "late_wager", "result_mismatch", "illegal_action")


@dataclass(frozen=True)
class StatsInputs:
    wagers: pl.DataFrame  # READ_COLUMNS (or all WAGER_COLUMNS) + shoe_id, decks
    dealer_errors: pl.DataFrame  # gaming_day, table_id, round_no, dealer_id, kind (one row per round and kind)
    cards: pl.DataFrame  # table_id, shoe_id, event_seq, round_no, card_code, decks (card events only, device order)
    first_day: dt.date
    last_day: dt.date


#: how far before the first and after the last round of the days a shoe's card events are looked for (a shoe
#: that began earlier than this is read whole: ``_shoe_cards``)
SHOE_SPAN = dt.timedelta(days=1)


GAMES = ("baccarat", "blackjack", "holdem_bonus")


def load_inputs(con, first_day: dt.date, last_day: dt.date, games: tuple[str, ...] = GAMES,
                tables: Sequence[str] | None = None) -> StatsInputs:
    """The frames of gaming days ``first_day..last_day`` from an open (read-only) DuckDB connection.

    Only the days' rows are read: the settlements and findings by gaming day, the card events of the days' shoes
    within ``SHOE_SPAN`` of the days' rounds (the events table has no gaming day; it is read by time, which its
    row groups are ordered by), so one night's read does not grow with the history. ``tables``: only these tables'
    rows (a chunk of a night, ``table_chunks``; bound as one list parameter), every table when None."""
    marks = ", ".join("?" for _ in games)
    # a chunk's tables also as their range: the tables' rows are stored in table order, so DuckDB skips the other
    # tables' row groups (the list alone scanned the whole day and hashed all its rounds again for every chunk)
    only, only_s = ("", "") if tables is None else (" AND table_id BETWEEN ? AND ? AND table_id = ANY(?::VARCHAR[])",
                                                    " AND s.table_id BETWEEN ? AND ? AND s.table_id = ANY(?::VARCHAR[])")
    chosen = [] if tables is None else [min(tables), max(tables), list(tables)]
    con.execute(f"""CREATE OR REPLACE TEMP TABLE _stat_shoes AS
        SELECT table_id, shoe_id, min(bets_closed_at) AS lo, max(coalesce(settled_at, bets_closed_at)) AS hi
        FROM core_rounds WHERE gaming_day BETWEEN ? AND ? AND game IN ({marks}) AND shoe_id IS NOT NULL{only}
        GROUP BY ALL""", [first_day, last_day, *games, *chosen])
    decks, cards = _shoe_cards(con, None if tables is None else (min(tables), max(tables)))
    cols = ", ".join(f"s.{c}" for c in READ_COLUMNS)
    wagers = con.sql(f"""
        SELECT {cols}, r.shoe_id
        FROM out_settlements s
        LEFT JOIN (SELECT table_id, round_no, gaming_day, shoe_id FROM core_rounds WHERE gaming_day BETWEEN ? AND ?{only}) r
          ON r.table_id = s.table_id AND r.round_no = s.round_no AND r.gaming_day = s.gaming_day
        WHERE s.gaming_day BETWEEN ? AND ? AND s.game IN ({marks}){only_s}
        ORDER BY s.gaming_day, s.table_id, s.round_no, s.wager_order""",
                    params=[first_day, last_day, *chosen, first_day, last_day, *games, *chosen]).pl()
    wagers = wagers.join(decks, on="shoe_id", how="left", maintain_order="left")
    kinds = ", ".join("?" for _ in DEALER_ERROR_KINDS)
    errors = con.sql(f"""
        SELECT DISTINCT gaming_day, table_id, round_no, dealer_id, kind FROM out_findings
        WHERE gaming_day BETWEEN ? AND ? AND kind IN ({kinds}) AND dealer_id IS NOT NULL AND round_no IS NOT NULL{only}""",
                     params=[first_day, last_day, *DEALER_ERROR_KINDS, *chosen]).pl()
    return StatsInputs(wagers, errors, cards, first_day, last_day)


def table_chunks(con, day: dt.date, max_rounds: int, games: tuple[str, ...] = GAMES) -> list[list[str]] | None:
    """The day's tables (those with a settled wager of ``games``) in order, cut into runs of consecutive tables of at
    most ``max_rounds`` rounds together (a table with more is a run of its own): the chunks the statistics step reads
    and summarises one at a time, so that what it holds does not grow with the night. A table's day (and so each of
    its shoes: a shoe is one table's) is never split. None when a wager has no table (no list of tables holds it:
    the day is read whole)."""
    marks = ", ".join("?" for _ in games)
    rows = con.execute(f"""SELECT table_id, count(DISTINCT round_no) FROM out_settlements
                           WHERE gaming_day = ? AND game IN ({marks}) GROUP BY table_id""", [day, *games]).fetchall()
    if any(table is None for table, _ in rows):
        return None
    chunks: list[list[str]] = []
    held = 0
    for table, rounds in sorted(rows):
        if not chunks or (chunks[-1] and held + rounds > max_rounds):
            chunks.append([])
            held = 0
        chunks[-1].append(table)
        held += rounds
    return chunks


def side_bet_families(con, day: dt.date, families: tuple[tuple[str, tuple[str, ...]], ...]) -> set[str]:
    """The side-bet families (name, bets) some rated player bet at a settled baccarat wager on ``day``: a family's
    shoe-left measure is taken over the whole day once any of its bets was placed (``summaries.summarise``), so a
    chunk of the day's tables must know it of the whole day."""
    bets = sorted({b for _, names in families for b in names})
    found = {r[0] for r in con.execute("""SELECT DISTINCT bet FROM out_settlements WHERE gaming_day = ? AND game = 'baccarat'
        AND player_id IS NOT NULL AND status = 'settled' AND bet = ANY(?::VARCHAR[])""", [day, bets]).fetchall()}
    return {name for name, names in families if found & set(names)}


def _shoe_cards(con, table_range: tuple[str, str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(decks per shoe from its ``shoe_start``, the card events in device order with their shoe's decks) of the shoes
    in ``_stat_shoes``: the events within ``SHOE_SPAN`` of their rounds, and every event of a shoe whose start lies
    further back (read by its shoe alone). DuckDB puts the cards in order (a night's 7,000,000 cards took polars
    seconds to sort by their string keys). ``table_range``: the least and greatest table of ``_stat_shoes`` (a chunk's),
    which lets DuckDB skip the other tables' row groups of the events (stored in table order: each chunk scanned the
    whole day's events, and a shoe from an earlier day every day's)."""
    span = SHOE_SPAN.days
    within, bound = ("", None) if table_range is None else (
        " AND e.table_id BETWEEN $table_lo AND $table_hi", {"table_lo": table_range[0], "table_hi": table_range[1]})
    near = f"""FROM core_device_events e JOIN _stat_shoes s ON s.table_id = e.table_id AND s.shoe_id = e.shoe_id
        WHERE e.ts BETWEEN (SELECT min(lo) FROM _stat_shoes) - INTERVAL {span} DAY
                       AND (SELECT max(hi) FROM _stat_shoes) + INTERVAL {span} DAY
          AND e.ts BETWEEN s.lo - INTERVAL {span} DAY AND s.hi + INTERVAL {span} DAY{within}"""
    starts = con.sql(f"SELECT e.table_id, e.shoe_id, e.decks {near} AND e.event = 'shoe_start'", params=bound).pl()
    started = set(starts.select("table_id", "shoe_id").iter_rows())
    earlier = [k for k in con.execute("SELECT table_id, shoe_id FROM _stat_shoes").fetchall() if k not in started]
    columns = "e.table_id, e.shoe_id, e.event_seq, e.round_no, e.card_code"
    sql = f"SELECT {columns} {near} AND e.event = 'card'"
    if earlier:
        con.execute("CREATE OR REPLACE TEMP TABLE _stat_far AS SELECT unnest($1::VARCHAR[]) AS table_id, "
                    "unnest($2::VARCHAR[]) AS shoe_id", [[k[0] for k in earlier], [k[1] for k in earlier]])
        far = "FROM core_device_events e SEMI JOIN _stat_far f ON f.table_id = e.table_id AND f.shoe_id = e.shoe_id"
        far_starts = con.sql(f"SELECT e.table_id, e.shoe_id, e.decks {far} WHERE e.event = 'shoe_start'{within}",
                             params=bound).pl()
        starts = pl.concat([starts, far_starts])
        sql = f"""SELECT n.* FROM ({sql}) n ANTI JOIN _stat_far f ON f.table_id = n.table_id AND f.shoe_id = n.shoe_id
                  UNION ALL SELECT {columns} {far} WHERE e.event = 'card'{within}"""
    cards = con.sql(f"SELECT * FROM ({sql}) ORDER BY table_id, shoe_id, event_seq", params=bound).pl()
    decks = starts.group_by("shoe_id").agg(pl.col("decks").max())
    return decks, cards.join(decks, on="shoe_id", how="left", maintain_order="left")


def gaming_days(con, first_day: dt.date | None = None, last_day: dt.date | None = None) -> list[dt.date]:
    """The gaming days (of ``first_day..last_day``, default all) the database holds settlements for, in order."""
    lo, hi = first_day or dt.date.min, last_day or dt.date.max
    return [r[0] for r in con.execute("SELECT DISTINCT gaming_day FROM out_settlements WHERE gaming_day BETWEEN ? AND ? "
                                      "ORDER BY 1", [lo, hi]).fetchall()]


#: a gaming day with fewer rounds than this share of the day before it, and no later day in the database, is the
#: start of a day still in play (``open_days``)
OPEN_DAY_SHARE = 1 / 24


def open_days(con, nights: Sequence[dt.date], share: float = OPEN_DAY_SHARE) -> set[dt.date]:
    """The nights of ``nights`` that are a gaming day still in play: the database holds no round of a later gaming day,
    and the day holds fewer than ``share`` of the rounds of the gaming day before it (within a week). An export taken
    after the gaming day's end holds the first rounds of the next day (a few minutes of play), which the next export
    completes: its rolling windows would test again almost exactly what the windows of the day before test, and the
    next run replaces them (docs/interpretations/statistics.md, "A day still in play")."""
    if not nights:
        return set()
    rows = con.execute("""SELECT gaming_day, count(*) FROM core_rounds WHERE gaming_day BETWEEN ? AND ?
                          GROUP BY gaming_day""", [min(nights) - dt.timedelta(days=7), max(nights)]).fetchall()
    per_day = dict(rows)
    night = max(nights)  # only the latest day can be in play: the days before it have a later day
    # a round of a later day, found by the row groups' ranges (not a scan of every night's rounds)
    (later,), = con.execute("SELECT count(*) FROM (SELECT 1 FROM core_rounds WHERE gaming_day > ? LIMIT 1)", [night]).fetchall()
    before = [d for d in per_day if d < night]
    if later or night not in per_day or not before or per_day[night] >= share * per_day[max(before)]:
        return set()
    return {night}
