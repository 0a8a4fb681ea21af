"""Read the night from the canonical tables, one group of partitions (gaming day x table) at a time.

A night of a million rounds is some eight million device events and five million wagers: held
whole as frames, with a copy cut into partitions, it would not fit the 4 GB the audit is allowed.
So the night is never read whole. :func:`partition_keys` lists the partitions (with their round
counts, to balance the work); :func:`load_partition` reads one group of them with a query of its own,
letting DuckDB do what needs a whole shoe or a device's whole event stream (window functions over
the group's devices) before the rows leave the database:

- the shoe's decks, from its ``shoe_start`` (``shoe_decks``);
- each card's copy number in its shoe (``copy_no``: a card seen more often than the decks hold it is
  an excess card, TBAC-7.1, HTB-7.1.3, BJ-7.14, MBS-5.2), counted only for the rare (shoe, card)
  pairs seen more often than that (null elsewhere: no excess);
- the device's ``event_seq`` gaps just before and after each event (``lost_before``, ``lost_after``)
  and how many of the missing numbers are lines of the device's log set aside in quarantine
  (``quarantined_before``);
- the gaming day of a dealt card: its round's, or for a round the table system never recorded, the
  local date of the card at the table's UTC offset shifted back by the gaming day's start.

The same functions read a file database or an in-memory one (the tests'), through any DuckDB
connection: the loader never writes.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import polars as pl

from pipelines.audit.params import AuditParams
from pipelines.db import create_keys_table

# how far before and after the audited days the device streams are read: the event just before a day's first one
# (its event_seq gap), a shoe loaded the evening before (its decks, the copies of a card already dealt)
MARGIN_DAYS = 2


@dataclass(frozen=True)
class Window:
    """The gaming days a run audits, as SQL predicates that keep every query to those days and a margin around
    them: tonight's audit reads tonight's rows, not the database's whole history (rows are appended night after
    night, so DuckDB skips the row groups of other nights by their min/max). ``None`` where a function takes a
    window means the whole database (tests, benchmarks)."""

    days: tuple[dt.date, ...]

    def rounds(self, alias: str = "") -> str:
        """Rounds of the audited days (``gaming_day`` of ``alias``)."""
        col = f"{alias}.gaming_day" if alias else "gaming_day"
        listed = ", ".join(f"DATE '{d.isoformat()}'" for d in self.days)
        return f"({col} BETWEEN DATE '{min(self.days).isoformat()}' AND DATE '{max(self.days).isoformat()}' AND {col} IN ({listed}))"

    def spans(self, before: int = MARGIN_DAYS, after: int = MARGIN_DAYS) -> list[tuple[dt.date, dt.date]]:
        """The days widened by ``before`` and ``after`` days, as the fewest ranges (first, last): one range for a night
        or a backfill, several for days far apart (a stray round of another year must not make tonight's reads
        span every day between)."""
        out: list[tuple[dt.date, dt.date]] = []
        for day in sorted(set(self.days)):
            lo, hi = day - dt.timedelta(days=before), day + dt.timedelta(days=after)
            if out and lo <= out[-1][1] + dt.timedelta(days=1):
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return out

    def near(self) -> "Window":
        """The audited days and the margin around each."""
        return Window(tuple(lo + dt.timedelta(days=i) for lo, hi in self.spans() for i in range((hi - lo).days + 1)))

    def near_rounds(self, alias: str = "") -> str:
        """Rounds of the audited days and of the margin around them (a number gap at the night's first round)."""
        col = f"{alias}.gaming_day" if alias else "gaming_day"
        return _any_of([f"({col} BETWEEN DATE '{lo.isoformat()}' AND DATE '{hi.isoformat()}')" for lo, hi in self.spans()])

    def events(self, alias: str = "", column: str = "ts") -> str:
        """Device events (or wagers by ``placed_at``, actions) of the audited days and of the margin around them
        (UTC instants, any offset)."""
        col = f"{alias}.{column}" if alias else column
        return _any_of([
            f"({col} >= TIMESTAMPTZ '{lo.isoformat()} 00:00:00+00' AND {col} < TIMESTAMPTZ '{hi.isoformat()} 00:00:00+00')"
            for lo, hi in self.spans(MARGIN_DAYS, MARGIN_DAYS + 1)])


def _any_of(conditions: list[str]) -> str:
    """SQL true when any of ``conditions`` is (each already in brackets): the one itself, or several ORed in brackets."""
    return conditions[0] if len(conditions) == 1 else f"({' OR '.join(conditions)})"


def _where(window: Window | None, method: str, alias: str = "") -> str:
    return "TRUE" if window is None else getattr(window, method)(alias)

# columns of a partition's frames, in the canonical tables' names
ROUND_COLUMNS = (
    "table_id", "round_no", "game", "ruleset", "shoe_id", "dealer_id", "currency", "deal_mode", "limit_min",
    "limit_max", "limit_differential", "limit_side_min", "limit_side_max", "bets_open_at", "bets_closed_at",
    "settled_at", "status", "recorded_winner", "recorded_player_points", "recorded_banker_points",
    "recorded_result", "jackpot_meter", "gaming_day", "utc_offset_minutes", "wager_count", "action_count",
    "source_file", "source_line",
)
WAGER_COLUMNS = (
    "table_id", "round_no", "wager_order", "wager_id", "seat", "player_id", "bet", "amount", "placed_at", "net", "hand",
    "source_file", "source_line",
)
ACTION_COLUMNS = (
    "table_id", "round_no", "action_order", "seat", "hand", "action", "amount", "ts", "wager_ids", "source_file",
    "source_line",
)
# an annotated device event (what reconstruct reads)
EVENT_COLUMNS = (
    "device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "card_code",
    "shoe_decks", "copy_no", "gaming_day", "source_file", "source_line",
    "lost_before", "quarantined_before", "lost_after",
)


@dataclass(frozen=True)
class Partition:
    """Gaming day x table partition(s): every frame the per-partition steps read.

    One (gaming day, table), or a group of them handed to one task run: the steps key every row by
    table and round, so the same functions read one partition or many alike.
    """

    keys: tuple[tuple[dt.date, str], ...]
    rounds: pl.DataFrame
    wagers: pl.DataFrame
    actions: pl.DataFrame
    events: pl.DataFrame  # annotated device events of the partitions' rounds

    @property
    def gaming_day(self) -> dt.date:
        return self.keys[0][0]

    @property
    def table_id(self) -> str:
        return self.keys[0][1]

    @property
    def label(self) -> str:
        first = f"{self.keys[0][0].isoformat()} {self.keys[0][1]}"
        return first if len(self.keys) == 1 else f"{first} and {len(self.keys) - 1} more partition(s)"


def _frame(con: duckdb.DuckDBPyConnection, sql: str, parameters: list | None = None) -> pl.DataFrame:
    df = con.sql(sql, params=parameters).pl() if parameters is not None else con.sql(sql).pl()
    # DuckDB hands TIMESTAMPTZ back in the session's zone name (e.g. Etc/UTC): one zone, UTC, everywhere.
    # One chunk per column: DuckDB's record batches (131,072 rows) come as chunks, and a gather, join or filter
    # on a frame of two chunks costs several times what it costs on one (a Hold'em group's wager keys gathered:
    # 4.1 against 0.4 ms; the copy into one chunk: 1.1 ms).
    return df.with_columns(
        pl.col(c).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
        for c, t in df.schema.items() if isinstance(t, pl.Datetime)
    ).rechunk()


def _orphan_rounds(day_start_minutes: int, window: Window | None = None) -> str:
    """SQL: (table_id, round_no, gaming_day, source_file, source_line) of every round the device dealt that the
    table system never recorded (its gaming day from its first card, at the table's UTC offset); within ``window``
    when given (its days only)."""
    inner = f"""
        SELECT e.table_id, e.round_no,
               CAST((min(e.ts) AT TIME ZONE 'UTC') + to_minutes(coalesce(min(o.off), 0) - {int(day_start_minutes)}) AS DATE)
                   AS gaming_day,
               arg_min(e.source_file, e.event_seq) AS source_file, arg_min(e.source_line, e.event_seq) AS source_line
        FROM core_device_events e
        ANTI JOIN core_rounds r ON r.table_id = e.table_id AND r.round_no = e.round_no
        LEFT JOIN (SELECT table_id, min(utc_offset_minutes) AS off FROM core_rounds
                   WHERE {_where(window, "near_rounds")} GROUP BY table_id) o
               ON o.table_id = e.table_id
        WHERE e.round_no IS NOT NULL AND e.event IN ('card', 'burn') AND {_where(window, "events", "e")}
        GROUP BY e.table_id, e.round_no
    """
    return inner if window is None else f"SELECT * FROM ({inner}) WHERE {window.rounds()}"


# What a round costs the audit (load, reconstruct, re-settle, detect, stage), relative to a baccarat round, measured
# on the simulated 1,000,000-round night (`benchmarks.audit --stages-of`): baccarat 0.09 ms, blackjack 0.47 ms,
# hold'em 0.46 ms of CPU a round. Only used to deal the partitions into groups of about equal time. Blackjack over
# arrays (rulebook/blackjack/vector.py), on a 200,000-round night: 0.08 ms a round against baccarat's 0.034.
GAME_COST = {"blackjack": 2, "holdem_bonus": 5}


def partition_keys(con: duckdb.DuckDBPyConnection, params: AuditParams, window: Window | None = None) -> pl.DataFrame:
    """Every (gaming_day, table_id) of ``window`` (None: of the database) with its number of rounds (either side's)
    and its ``work`` (rounds weighted by :data:`GAME_COST`), in order."""
    cost = " ".join(f"WHEN '{game}' THEN {n}" for game, n in GAME_COST.items())
    return _frame(con, f"""
        WITH orphans AS ({_orphan_rounds(params.day_start_minutes, window)})
        SELECT gaming_day, table_id, count(*) AS rounds, CAST(sum(cost) AS BIGINT) AS work FROM (
            SELECT gaming_day, table_id, CASE game {cost} ELSE 1 END AS cost FROM core_rounds
            WHERE {_where(window, "rounds")}
            UNION ALL
            SELECT gaming_day, table_id, 1 AS cost FROM orphans
        ) GROUP BY gaming_day, table_id ORDER BY gaming_day, table_id
    """)


def contiguous_groups(keys: pl.DataFrame, n: int) -> list[tuple[tuple[dt.date, str], ...]]:
    """The partitions, in key order, cut into at most ``n`` runs of about equal work (``work``, else ``rounds``).

    Runs, not the largest-first deal of partitions to groups: the groups' results, each sorted, put end to end in
    group order are the night's results in key order, so the settlements file needs no sort of millions of rows
    (pipelines.audit.publish). The flow hands the heaviest groups out first, so the workers still finish together.
    """
    key_list = [(d, t) for d, t in keys.select("gaming_day", "table_id").iter_rows()]
    if not key_list:
        return []
    work = [max(1, int(w or 0)) for w in keys["work" if "work" in keys.columns else "rounds"].to_list()]
    m = max(1, min(n, len(key_list)))
    share = sum(work) / m
    out: list[tuple[tuple[dt.date, str], ...]] = []
    current: list[tuple[dt.date, str]] = []
    done = 0
    for key, w in zip(key_list, work):
        current.append(key)
        done += w
        if done >= share * (len(out) + 1) and len(out) < m - 1:
            out.append(tuple(current))
            current = []
    if current:
        out.append(tuple(current))
    return out


# SQL over a CTE ``jumps`` (device_id, event_seq, source_file, source_line, prev_file, prev_line): the quarantined
# lines between the event kept before each jump and the one after it (two equi-joins on the file, no OR-join)
_QUARANTINED_BETWEEN = """
    SELECT device_id, event_seq, sum(n) AS n FROM (
        SELECT j.device_id, j.event_seq, count(*) AS n
        FROM jumps j JOIN core_quarantine q ON q.source_file = j.source_file
        WHERE q.source_line < j.source_line AND (j.prev_file <> j.source_file OR q.source_line > j.prev_line)
        GROUP BY j.device_id, j.event_seq
        UNION ALL
        SELECT j.device_id, j.event_seq, count(*) AS n
        FROM jumps j JOIN core_quarantine q ON q.source_file = j.prev_file
        WHERE j.prev_file <> j.source_file AND q.source_line > j.prev_line
        GROUP BY j.device_id, j.event_seq
    ) GROUP BY device_id, event_seq
"""


def annotated_events_sql(day_start_minutes: int, devices: str, window: Window | None = None) -> str:
    """SQL: every event of the devices selected by ``devices`` (a subquery of device_id), annotated (module docstring);
    within ``window`` and its margin when given.

    The reference for :func:`annotate_events`, which the loader runs (the tests hold the two equal): as one DuckDB
    query it cost about 0.7 CPU s a group of 50,000 rounds, three quarters of the group's load, in its joins and
    materialised CTEs rather than its scan."""
    return f"""
        WITH ev AS (
            SELECT device_id, table_id, shoe_id, event_seq, ts, event, round_no,
                   CASE WHEN card_code < 0 THEN card END AS card, card_code, decks, source_file, source_line,
                   event_seq - lag(event_seq) OVER dev - 1 AS gap,
                   lead(event_seq) OVER dev - event_seq - 1 AS gap_after
            FROM core_device_events
            WHERE device_id IN ({devices}) AND {_where(window, "events")}
            WINDOW dev AS (PARTITION BY device_id ORDER BY event_seq)
        ),
        jumps AS (
            SELECT j.device_id, j.event_seq, j.source_file, j.source_line, p.source_file AS prev_file, p.source_line AS prev_line
            FROM ev j JOIN ev p ON p.device_id = j.device_id AND p.event_seq = j.event_seq - j.gap - 1
            WHERE j.gap > 0
        ),
        quarantined AS ({_QUARANTINED_BETWEEN}),
        rounds_of AS (  -- the rounds of the tables these events come from (not the whole night's, on every call)
            SELECT table_id, round_no, gaming_day, utc_offset_minutes FROM core_rounds
            WHERE table_id IN (SELECT DISTINCT table_id FROM ev) AND {_where(window, "near_rounds")}
        ),
        offsets AS (SELECT table_id, min(utc_offset_minutes) AS off FROM rounds_of GROUP BY table_id),
        shoes AS (  -- decks per shoe, from its first shoe_start
            SELECT table_id, shoe_id, CAST(arg_min(decks, event_seq) AS BIGINT) AS shoe_decks
            FROM ev WHERE event = 'shoe_start' GROUP BY table_id, shoe_id
        ),
        crowded AS (  -- the few (shoe, card) pairs seen more often than the shoe's decks hold: number their copies
            SELECT c.device_id, c.event_seq,
                   row_number() OVER (PARTITION BY c.table_id, c.shoe_id, c.card_code ORDER BY c.device_id, c.event_seq) AS copy_no
            FROM ev c
            JOIN (SELECT ev.table_id, ev.shoe_id, ev.card_code FROM ev JOIN shoes USING (table_id, shoe_id)
                  WHERE ev.card_code >= 0 GROUP BY ev.table_id, ev.shoe_id, ev.card_code
                  HAVING count(*) > max(shoes.shoe_decks)) x
              ON x.table_id = c.table_id AND x.shoe_id = c.shoe_id AND x.card_code = c.card_code
        ),
        annotated AS (
            SELECT ev.device_id, ev.table_id, ev.shoe_id, ev.event_seq, ev.ts, ev.event, ev.round_no, ev.card,
                   ev.card_code, s.shoe_decks, c.copy_no,
                   coalesce(r.gaming_day, CAST((ev.ts AT TIME ZONE 'UTC')
                        + to_minutes(coalesce(o.off, 0) - {int(day_start_minutes)}) AS DATE)) AS gaming_day,
                   ev.source_file, ev.source_line,
                   greatest(coalesce(ev.gap, 0), 0) AS lost_before,
                   coalesce(q.n, 0) AS quarantined_before,
                   greatest(coalesce(ev.gap_after, 0), 0) AS lost_after
            FROM ev
            LEFT JOIN shoes s ON s.table_id = ev.table_id AND s.shoe_id = ev.shoe_id
            LEFT JOIN crowded c ON c.device_id = ev.device_id AND c.event_seq = ev.event_seq
            LEFT JOIN rounds_of r ON r.table_id = ev.table_id AND r.round_no = ev.round_no
            LEFT JOIN offsets o ON o.table_id = ev.table_id
            LEFT JOIN quarantined q ON q.device_id = ev.device_id AND q.event_seq = ev.event_seq
        )
        SELECT * FROM annotated
    """


#: the device events as stored, the columns :func:`annotate_events` reads
RAW_EVENT_COLUMNS = ("device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "card_code",
                     "decks", "source_file", "source_line")


def _raw_events(cur: duckdb.DuckDBPyConnection, devices: str, window: Window | None) -> pl.DataFrame:
    """The stored events of the devices ``devices`` (a subquery of device_id) within ``window``'s margin, in device
    order; ``card`` kept only where the code says the device could not read it (as the annotated rows carry it)."""
    cols = ", ".join("CASE WHEN card_code < 0 THEN card END AS card" if c == "card" else c for c in RAW_EVENT_COLUMNS)
    return _frame(cur, f"""SELECT {cols} FROM core_device_events
                           WHERE device_id IN ({devices}) AND {_where(window, "events")}""").sort("device_id", "event_seq")


def annotate_events(events: pl.DataFrame, rounds_of: pl.DataFrame, quarantine: pl.DataFrame,
                    day_start_minutes: int) -> pl.DataFrame:
    """The rows of :func:`annotated_events_sql`, computed over frames (module docstring).

    ``events``: :func:`_raw_events`, sorted by device and ``event_seq`` (every event of the devices' streams in the
    window); ``rounds_of``: (table_id, round_no, gaming_day, utc_offset_minutes) of the recorded rounds of the
    events' tables in the window's margin; ``quarantine``: (source_file, source_line) of the quarantined lines of at
    least the files of the events next to a jump. Polars over one sorted frame: the numbering gaps are differences
    with the row before and after, and the few crowded cards and jumps are small frames joined back."""
    ev = events.with_row_index("_row")
    same_device_before = pl.col("device_id") == pl.col("device_id").shift(1)
    same_device_after = pl.col("device_id") == pl.col("device_id").shift(-1)
    ev = ev.with_columns(
        pl.when(same_device_before).then(pl.col("event_seq") - pl.col("event_seq").shift(1) - 1).alias("_gap"),
        pl.when(same_device_after).then(pl.col("event_seq").shift(-1) - pl.col("event_seq") - 1).alias("_gap_after"),
    )
    n = ev.height
    # the quarantined lines between the event kept before each jump and the one after it (_QUARANTINED_BETWEEN)
    jumps = ev.select("_row", "_gap", "source_file", "source_line", pl.col("source_file").shift(1).alias("prev_file"),
                      pl.col("source_line").shift(1).alias("prev_line")).filter(pl.col("_gap") > 0)
    quarantined = pl.zeros(n, dtype=pl.Int64, eager=True).alias("quarantined_before")
    if jumps.height and quarantine.height:
        q = quarantine.select("source_file", pl.col("source_line").alias("q_line"))
        same_file = jumps.join(q, on="source_file").filter(
            (pl.col("q_line") < pl.col("source_line"))
            & ((pl.col("prev_file") != pl.col("source_file")) | (pl.col("q_line") > pl.col("prev_line"))))
        prev_file = jumps.filter(pl.col("prev_file") != pl.col("source_file")).join(
            q.rename({"source_file": "prev_file"}), on="prev_file").filter(pl.col("q_line") > pl.col("prev_line"))
        counted = pl.concat([same_file.select("_row"), prev_file.select("_row")]).group_by("_row").len()
        if counted.height:
            quarantined = quarantined.scatter(counted["_row"], counted["len"].cast(pl.Int64))
    # decks per shoe, from its first shoe_start that names them (DuckDB's arg_min skips a null argument)
    shoes = (ev.filter((pl.col("event") == "shoe_start") & pl.col("decks").is_not_null())
             .sort("event_seq", maintain_order=True)
             .group_by("table_id", "shoe_id", maintain_order=True).agg(pl.col("decks").first().cast(pl.Int64).alias("shoe_decks")))
    # the few (shoe, card) pairs seen more often than the shoe's decks hold: their copies numbered in device order
    copy_no = pl.repeat(None, n, dtype=pl.Int64, eager=True).alias("copy_no")
    over = (ev.filter(pl.col("card_code") >= 0).group_by("table_id", "shoe_id", "card_code").len("_seen")
            .join(shoes, on=["table_id", "shoe_id"]).filter(pl.col("_seen") > pl.col("shoe_decks")))
    if over.height:
        numbered = (ev.join(over.select("table_id", "shoe_id", "card_code"), on=["table_id", "shoe_id", "card_code"])
                    .sort("_row").select("_row", pl.int_range(1, pl.len() + 1, dtype=pl.Int64)
                                         .over("table_id", "shoe_id", "card_code").alias("copy_no")))
        copy_no = copy_no.scatter(numbered["_row"], numbered["copy_no"])
    offsets = rounds_of.group_by("table_id").agg(pl.col("utc_offset_minutes").min().cast(pl.Int64).alias("_off"))
    out = (ev.with_columns(quarantined, copy_no)
           .join(shoes, on=["table_id", "shoe_id"], how="left", maintain_order="left")
           .join(rounds_of.select("table_id", "round_no", pl.col("gaming_day").alias("_day")), on=["table_id", "round_no"],
                 how="left", maintain_order="left")
           .join(offsets, on="table_id", how="left", maintain_order="left"))
    local = pl.col("ts").dt.replace_time_zone(None) + pl.duration(
        minutes=pl.col("_off").fill_null(0) - int(day_start_minutes))
    return out.select(
        "device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "card_code", "shoe_decks",
        "copy_no", pl.coalesce(pl.col("_day"), local.dt.date()).alias("gaming_day"), "source_file", "source_line",
        pl.max_horizontal(pl.col("_gap").fill_null(0), 0).alias("lost_before"),
        pl.col("quarantined_before").cast(pl.Decimal(38, 0)),
        pl.max_horizontal(pl.col("_gap_after").fill_null(0), 0).alias("lost_after"),
    )


def shoes_of_rounds(events: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``events`` (sorted by device and ``event_seq``) that :func:`annotate_events` needs to annotate the
    events of ``rounds`` (table_id, round_no) exactly as it annotates them among all of ``events``: every event of
    the shoes those rounds' events belong to (a shoe's decks and a card's copies are counted over the whole shoe), and
    the device's event just before and after each of them (the numbering gaps, and the quarantined lines between).
    Rows stay in their order, so each kept event has the same neighbours as in the whole stream. The evidence packs
    want a few rounds of each partition: a tenth of the night's events to annotate instead of all of them."""
    if events.height == 0:
        return events
    wanted = rounds.select("table_id", pl.col("round_no").cast(events.schema["round_no"])).unique()
    shoes = events.join(wanted, on=["table_id", "round_no"], how="semi").select("table_id", "shoe_id").unique()
    rows = events.with_row_index("_i").join(shoes, on=["table_id", "shoe_id"], how="semi", nulls_equal=True)["_i"]
    core = pl.Series("_core", [False] * events.height).scatter(rows, True)
    keep = core | core.shift(1, fill_value=False) | core.shift(-1, fill_value=False)
    return events.filter(keep)


def _annotated_events(cur: duckdb.DuckDBPyConnection, day_start_minutes: int, devices: str,
                      window: Window | None, only_rounds: pl.DataFrame | None = None) -> pl.DataFrame:
    """:func:`annotate_events` of the devices ``devices`` within ``window``, read with ``cur``; with ``only_rounds``,
    only the rows :func:`shoes_of_rounds` keeps for those rounds are annotated (the rows of those rounds are the
    same, the others are not all there)."""
    events = _raw_events(cur, devices, window)
    if only_rounds is not None:
        events = shoes_of_rounds(events, only_rounds)
    tables = events["table_id"].unique().sort().to_list()
    rounds_of = _frame(cur, f"""SELECT table_id, round_no, gaming_day, utc_offset_minutes FROM core_rounds
                                WHERE table_id IN (SELECT unnest($1::VARCHAR[])) AND {_where(window, "near_rounds")}""",
                       [tables])
    files = events["source_file"].unique().sort().to_list()  # a quarantined line lies in a file of the stream
    quarantine = _frame(cur, """SELECT source_file, source_line FROM core_quarantine
                                WHERE source_file IN (SELECT unnest($1::VARCHAR[]))""", [files]) if files else \
        pl.DataFrame(schema={"source_file": pl.String, "source_line": pl.Int64})
    return annotate_events(events, rounds_of, quarantine, day_start_minutes)


# One read of the database at a time per process (partitions here, keys and gaps in tasks.py): the flow's tasks run
# in threads, DuckDB already spreads one query over the cores, and reads are short; the settling and checking that
# follow still run in parallel.
READ_LOCK = threading.Lock()


@contextmanager
def one_reader() -> Iterator[None]:
    """Hold :data:`READ_LOCK`; a function rather than the lock itself, so that a task that uses it still pickles
    (a task sent to a worker process carries the globals its function names, and a lock cannot travel)."""
    with READ_LOCK:
        yield


def load_partition(con: duckdb.DuckDBPyConnection, keys: tuple[tuple[dt.date, str], ...], params: AuditParams,
                   only_rounds: pl.DataFrame | None = None) -> Partition:
    """Every frame of a group of partitions, read with the connection ``con`` (see the module docstring).

    ``only_rounds`` (``table_id``, ``round_no``): keep only those rounds of the partitions (the evidence packs want
    a few rounds of each). Their rows are the same as in a whole load: the events are still annotated over their
    devices' whole streams (gaps, a card's copies in its shoe) before the rounds are picked."""
    with READ_LOCK:
        return _load_partition(con, keys, params, only_rounds)


def _keys_frame(keys) -> pl.DataFrame:
    return pl.DataFrame({"gaming_day": [k[0] for k in keys], "table_id": [k[1] for k in keys]},
                        schema={"gaming_day": pl.Date, "table_id": pl.String}).unique()


#: how far from its round's times a wager or an action is first looked for (:func:`_near_rounds`)
NEAR_ROUNDS = dt.timedelta(hours=1)


def _near_rounds(rounds: pl.DataFrame, column: str) -> str | None:
    """SQL: ``column`` within :data:`NEAR_ROUNDS` of the loaded rounds' times (their bets opening to their settling), or
    None when they have none. Only a first read: the caller reads the whole table when the rows found are fewer than the
    rounds' counts say, so the rows are the same; but DuckDB skips the row groups of every other night by their min/max,
    where the days' window with its margin (``Window.events``: two days either side) read four nights more of a
    history's wagers and actions for every group of partitions."""
    times = rounds.select(pl.min_horizontal(pl.col("bets_open_at").min(), pl.col("bets_closed_at").min(),
                                            pl.col("settled_at").min()).alias("lo"),
                          pl.max_horizontal(pl.col("bets_open_at").max(), pl.col("bets_closed_at").max(),
                                            pl.col("settled_at").max()).alias("hi")) if rounds.height else None
    if times is None or times["lo"][0] is None or times["hi"][0] is None:
        return None
    lo, hi = (t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc) for t in (times["lo"][0], times["hi"][0]))
    try:
        lo, hi = (lo - NEAR_ROUNDS).astimezone(dt.timezone.utc), (hi + NEAR_ROUNDS).astimezone(dt.timezone.utc)
    except OverflowError:  # a time at the calendar's edge (year 1 or 9999): the days' window instead
        return None
    return f"({column} >= TIMESTAMPTZ '{lo.isoformat()}' AND {column} <= TIMESTAMPTZ '{hi.isoformat()}')"


def _load_partition(con: duckdb.DuckDBPyConnection, keys: tuple[tuple[dt.date, str], ...], params: AuditParams,
                    only_rounds: pl.DataFrame | None = None) -> Partition:
    cur = con.cursor()
    window = Window(tuple(sorted({k[0] for k in keys})))
    try:
        create_keys_table(cur, "_audit_keys", keys)
        in_keys = f"{window.rounds()} AND (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _audit_keys)"
        only = ""
        if only_rounds is not None:
            cur.execute("CREATE OR REPLACE TEMP TABLE _audit_only AS SELECT unnest($1::VARCHAR[]) AS table_id, "
                        "unnest($2::BIGINT[]) AS round_no",
                        [only_rounds["table_id"].to_list(), only_rounds["round_no"].to_list()])
            # a semi join on the two columns, not ``(table_id, round_no) IN (SELECT (table_id, round_no) ...)``: the
            # same rows, without a struct built and hashed for every round of the days (half the rounds' read, the
            # packs' 17 groups of the 1,000,000-round night: 0.64 -> 0.32 CPU s; the wagers' and actions' alike)
            only = " SEMI JOIN _audit_only USING (table_id, round_no)"
        rounds = _frame(cur, f"""
            SELECT {', '.join(ROUND_COLUMNS)} FROM core_rounds{only} WHERE {in_keys} ORDER BY table_id, round_no""")
        of_rounds = f"""JOIN (SELECT table_id, round_no FROM core_rounds{only} WHERE {in_keys}) k USING (table_id, round_no)"""
        # the wagers and actions carry no gaming day: read those of the days' time window first (DuckDB skips the
        # other nights' row groups by their min/max), and the whole table only when the rounds' counts say that
        # some lie outside it (a wager stamped days away from its round)
        wager_sql = f"""
            SELECT {', '.join('w.' + c if c not in ('table_id', 'round_no') else c for c in WAGER_COLUMNS)}
            FROM core_wagers w {of_rounds} WHERE {{}} ORDER BY table_id, round_no, wager_order"""
        wagers = _frame(cur, wager_sql.format(_near_rounds(rounds, "w.placed_at") or window.events("w", "placed_at")))
        if wagers.height != int(rounds["wager_count"].sum() or 0):
            wagers = _frame(cur, wager_sql.format("TRUE"))
        action_sql = f"""
            SELECT {', '.join('a.' + c if c not in ('table_id', 'round_no') else c for c in ACTION_COLUMNS)}
            FROM core_actions a {of_rounds} WHERE {{}} ORDER BY table_id, round_no, action_order"""
        actions = _frame(cur, action_sql.format(f"(a.ts IS NULL OR {_near_rounds(rounds, 'a.ts') or window.events('a')})"))
        if actions.height != int(rounds["action_count"].sum() or 0):
            actions = _frame(cur, action_sql.format("TRUE"))
        devices = f"""SELECT DISTINCT device_id FROM core_device_events
                      WHERE table_id IN (SELECT DISTINCT table_id FROM _audit_keys) AND {window.events()}"""
        events = _annotated_events(cur, params.day_start_minutes, devices, window, only_rounds).filter(
            pl.col("round_no").is_not_null()).join(_keys_frame(keys), on=["gaming_day", "table_id"], how="semi",
                                                   maintain_order="left")
        if only_rounds is not None:
            events = events.join(only_rounds.select("table_id", pl.col("round_no").cast(pl.Int64)).unique(),
                                 on=["table_id", "round_no"], how="semi", maintain_order="left")
        cur.execute("DROP TABLE _audit_keys")
        if only_rounds is not None:
            cur.execute("DROP TABLE _audit_only")
    finally:
        cur.close()
    return Partition(keys=tuple(keys), rounds=rounds, wagers=wagers, actions=actions, events=events)


JUMP_COLUMNS = ("device_id", "table_id", "event_seq", "round_no", "gaming_day", "source_file", "source_line",
                "lost_before", "quarantined_before")


def load_gap_evidence(con: duckdb.DuckDBPyConnection, params: AuditParams,
                      window: Window | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the gap detectors need of the night: each device event just after a jump in its ``event_seq``
    (with the numbers skipped and how many of them are quarantined lines), and every round number either side
    saw (table_id, round_no, gaming_day, source). One window over the device events' numbers; the rest is joins.
    ``window``: the audited days and their margin (None: the whole database); the caller keeps the findings of
    the audited days."""
    cur = con.cursor()
    try:
        jumps = _frame(cur, f"""
            WITH numbered AS (  -- the event before each one in its device's stream: (device_id, event_seq) is a key
                SELECT device_id, table_id, event_seq, round_no, ts, source_file, source_line,
                       event_seq - lag(event_seq) OVER dev - 1 AS gap,
                       lag(source_file) OVER dev AS prev_file, lag(source_line) OVER dev AS prev_line
                FROM core_device_events WHERE {_where(window, "events")}
                WINDOW dev AS (PARTITION BY device_id ORDER BY event_seq)
            ),
            jumps AS (SELECT * FROM numbered WHERE gap > 0),
            quarantined AS ({_QUARANTINED_BETWEEN}),
            near AS (SELECT table_id, round_no, gaming_day, utc_offset_minutes FROM core_rounds
                     WHERE {_where(window, "near_rounds")}),
            offsets AS (SELECT table_id, min(utc_offset_minutes) AS off FROM near GROUP BY table_id)
            SELECT j.device_id, j.table_id, j.event_seq, j.round_no,
                   coalesce(r.gaming_day, CAST((j.ts AT TIME ZONE 'UTC')
                        + to_minutes(coalesce(o.off, 0) - {int(params.day_start_minutes)}) AS DATE)) AS gaming_day,
                   j.source_file, j.source_line, j.gap AS lost_before, coalesce(q.n, 0) AS quarantined_before
            FROM jumps j
            LEFT JOIN near r ON r.table_id = j.table_id AND r.round_no = j.round_no
            LEFT JOIN offsets o ON o.table_id = j.table_id
            LEFT JOIN quarantined q ON q.device_id = j.device_id AND q.event_seq = j.event_seq
            ORDER BY j.device_id, j.event_seq""")
        near = None if window is None else window.near()
        numbers = _frame(cur, f"""
            WITH orphans AS ({_orphan_rounds(params.day_start_minutes, near)})
            SELECT table_id, round_no, gaming_day, source_file, source_line FROM core_rounds
            WHERE {_where(window, "near_rounds")}
            UNION ALL
            SELECT table_id, round_no, gaming_day, source_file, source_line FROM orphans
            ORDER BY table_id, round_no""")
    finally:
        cur.close()
    return jumps, numbers


SHOE_OPENING_COLUMNS = ("device_id", "table_id", "shoe_id", "start_seq", "card_seq", "round_no", "burned", "jumped",
                        "gaming_day", "ruleset", "game", "dealer_id", "currency", "source_file", "source_line")


def load_shoe_openings(con: duckdb.DuckDBPyConnection, params: AuditParams,
                       window: Window | None = None) -> pl.DataFrame:
    """How each shoe began, for the burn check (pipelines.audit.detectors.burns): one row per ``shoe_start`` of the
    window whose shoe's first ``card`` event is in the window too, with whether a ``burn`` came between them
    (``burned``) and whether the device's ``event_seq`` jumps there (``jumped``: events lost, maybe the burns), the
    first card's table, round and line, and that round's gaming day, rule set, dealer and currency (null where the
    table system never logged the round). Events before the window's first ``shoe_start`` of a device belong to a
    shoe whose start is not loaded: not judged. One window over the device events' numbers, as the gaps'; the
    shoes are numbered over what is left once the cards that follow a card are dropped (every shoe_start, burn,
    jump and first card stays): 0.43 s CPU for the 1.5 M events of the 200,000-round night, against 1.07 s
    numbering every event."""
    cur = con.cursor()
    try:
        return _frame(cur, f"""
            WITH steps AS (  -- the event before each one in its device's stream
                SELECT device_id, table_id, shoe_id, event_seq, ts, event, round_no, source_file, source_line,
                       event_seq - lag(event_seq) OVER dev - 1 AS gap, lag(event) OVER dev AS prev_event
                FROM core_device_events WHERE {_where(window, "events")}
                WINDOW dev AS (PARTITION BY device_id ORDER BY event_seq)
            ),
            marks AS (  -- all but the cards that follow a card: a shoe's first card follows its start or a burn
                SELECT * FROM steps
                WHERE event <> 'card' OR prev_event IS DISTINCT FROM 'card' OR gap > 0
            ),
            ev AS (  -- each numbered by the shoe_starts before it on its device (0: no start loaded)
                SELECT *, sum(CASE WHEN event = 'shoe_start' THEN 1 ELSE 0 END)
                              OVER (PARTITION BY device_id ORDER BY event_seq ROWS UNBOUNDED PRECEDING) AS shoe_no
                FROM marks
            ),
            shoes AS (
                SELECT device_id, shoe_no,
                       min(event_seq) FILTER (WHERE event = 'shoe_start') AS start_seq,
                       min(event_seq) FILTER (WHERE event = 'card') AS card_seq,
                       min(event_seq) FILTER (WHERE event = 'burn') AS burn_seq,
                       min(event_seq) FILTER (WHERE gap > 0 AND event <> 'shoe_start') AS jump_seq
                FROM ev WHERE shoe_no > 0 GROUP BY device_id, shoe_no
            ),
            near AS (SELECT table_id, round_no, gaming_day, utc_offset_minutes, ruleset, game, dealer_id, currency
                     FROM core_rounds WHERE {_where(window, "near_rounds")}),
            offsets AS (SELECT table_id, min(utc_offset_minutes) AS off FROM near GROUP BY table_id)
            SELECT s.device_id, c.table_id, st.shoe_id, s.start_seq, s.card_seq, c.round_no,
                   coalesce(s.burn_seq < s.card_seq, FALSE) AS burned,
                   coalesce(s.jump_seq <= s.card_seq, FALSE) AS jumped,
                   coalesce(r.gaming_day, CAST((c.ts AT TIME ZONE 'UTC')
                        + to_minutes(coalesce(o.off, 0) - {int(params.day_start_minutes)}) AS DATE)) AS gaming_day,
                   r.ruleset, r.game, r.dealer_id, r.currency, c.source_file, c.source_line
            FROM shoes s
            JOIN ev st ON st.device_id = s.device_id AND st.event_seq = s.start_seq
            JOIN ev c ON c.device_id = s.device_id AND c.event_seq = s.card_seq
            LEFT JOIN near r ON r.table_id = c.table_id AND r.round_no = c.round_no
            LEFT JOIN offsets o ON o.table_id = c.table_id
            ORDER BY s.device_id, s.start_seq""")
    finally:
        cur.close()


def load_source_changes(con: duckdb.DuckDBPyConnection, day_start_minutes: int, keys=None) -> pl.DataFrame:
    """Every core_source_changes row (of the partitions ``keys``, else all) with the partition it lies in now: the
    round's gaming day (for a device event, its round's, or the local date of its time shifted by the day's
    start) and the round's dealer, game, rule set and currency."""
    cur = con.cursor()
    try:
        where = ""
        if keys is not None:
            create_keys_table(cur, "_change_keys", keys)
            where = "WHERE (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _change_keys)"
        return _frame(cur, f"""
            WITH offsets AS (SELECT table_id, min(utc_offset_minutes) AS off FROM core_rounds GROUP BY table_id),
            placed AS (
                SELECT c.kind, c.row_key, coalesce(e.table_id, c.table_id) AS table_id,
                       coalesce(e.round_no, c.round_no) AS round_no, c.device_id,
                       coalesce(r.gaming_day, c.gaming_day, CAST((e.ts AT TIME ZONE 'UTC')
                           + to_minutes(coalesce(o.off, 0) - {int(day_start_minutes)}) AS DATE)) AS gaming_day,
                       r.dealer_id, r.game, r.ruleset, r.currency,
                       c.earlier_source_file, c.earlier_source_line, c.earlier_content,
                       c.later_source_file, c.later_source_line, c.later_content
                FROM core_source_changes c
                LEFT JOIN core_device_events e ON e.device_id = c.device_id AND e.event_seq = c.event_seq
                LEFT JOIN core_rounds r ON r.table_id = coalesce(e.table_id, c.table_id)
                                       AND r.round_no = coalesce(e.round_no, c.round_no)
                LEFT JOIN offsets o ON o.table_id = coalesce(e.table_id, c.table_id)
            )
            SELECT * FROM placed {where}
            ORDER BY gaming_day, table_id, round_no, row_key, later_source_file, later_source_line""")
    finally:
        cur.close()


#: The ``core_source_files`` rows of the names in ``$1`` that are this input's reads: each name's read from its first
#: byte and the reads of its growth since, up to the read of the content the file holds now (``$2``/``$3``: names and
#: the SHA-256 of their content, from the ingest's screen), else up to the name's latest read. The next night's
#: export may reuse the names, and the earlier nights' reads of a name are not this input's (a file unreadable on
#: night 1 and read on night 2 is not unreadable in night 2's outputs; night 31's report listed each reused name 31
#: times); nor are the later nights' reads when an earlier export is audited again (a backfill of night 2 from its
#: own folder listed night 3's files, their lines and quarantine counts, in its report).
_THIS_INPUTS_READS = """(
    SELECT * EXCLUDE (since, upto) FROM (
        SELECT f.*, u.upto, max(f.ingested_at) FILTER (WHERE f.start_byte = 0 AND (u.upto IS NULL OR f.ingested_at <= u.upto))
                   OVER (PARTITION BY f.source_file) AS since
        FROM core_source_files f
        LEFT JOIN (SELECT s.source_file, max(s.ingested_at) AS upto
                   FROM core_source_files s
                   JOIN (SELECT unnest($2::VARCHAR[]) AS source_file, unnest($3::VARCHAR[]) AS sha256) c
                     ON c.source_file = s.source_file AND c.sha256 = s.sha256
                   WHERE s.status = 'loaded' GROUP BY s.source_file) u ON u.source_file = f.source_file
        WHERE f.source_file IN (SELECT unnest($1::VARCHAR[])))
    WHERE (since IS NULL OR ingested_at >= since) AND (upto IS NULL OR ingested_at <= upto))"""


def _contents(files: list[str], contents: dict[str, str] | None) -> list:
    """The parameters of :data:`_THIS_INPUTS_READS`: the names, then the names and SHA-256s of ``contents``."""
    known = {k: v for k, v in (contents or {}).items() if v}
    return [list(files), list(known), list(known.values())]


def _file_rows(con: duckdb.DuckDBPyConnection, source: str = "core_source_files",
               parameters: list | None = None) -> pl.DataFrame:
    """The files that were not read (unreadable, or a refused link) as quarantine rows: an empty source_line, the
    reason's text, then why. ``source``: the table or subquery of ``core_source_files`` rows to look at."""
    from schemas.reasons import FILE_REASONS

    files = _frame(con.cursor(), f"""
        SELECT source_file, NULL::BIGINT AS source_line, reason_code, coalesce(error, '') AS error, '' AS raw
        FROM {source} WHERE status <> 'loaded'""", parameters)
    text = pl.col("reason_code").replace_strict(FILE_REASONS, default="file not read", return_dtype=pl.String)
    return files.select(
        "source_file", "source_line",
        pl.when(pl.col("error").str.starts_with(text)).then(pl.col("error"))
        .otherwise(pl.concat_str([text, pl.lit(": "), pl.col("error")])).alias("reason"),
        "raw")


def _with_files(lines: pl.DataFrame, files: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([lines, files.cast(lines.schema)]).sort(["source_file", "source_line", "reason"], nulls_last=False)


def load_quarantine(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every quarantined line, and every file that was not read as a row of its own (quarantine.csv shows both)."""
    lines = _frame(con.cursor(), "SELECT source_file, source_line, reason, raw FROM core_quarantine")
    return _with_files(lines, _file_rows(con))


def load_quarantine_of(con: duckdb.DuckDBPyConnection, files: list[str],
                       contents: dict[str, str] | None = None) -> pl.DataFrame:
    """The quarantined lines of the input files ``files`` (relative paths): this run's input, not the history's;
    and those of them that were not read (unreadable, or a refused link), each a row with its reason.
    ``contents``: each file's SHA-256 as the ingest found it (:data:`_THIS_INPUTS_READS`)."""
    lines = _frame(con.cursor(), """
        SELECT source_file, source_line, reason, raw FROM core_quarantine
        WHERE source_file IN (SELECT unnest($1::VARCHAR[]))""", [list(files)])
    return _with_files(lines, _file_rows(con, _THIS_INPUTS_READS, _contents(files, contents)))


def load_source_files_of(con: duckdb.DuckDBPyConnection, files: list[str],
                         contents: dict[str, str] | None = None) -> pl.DataFrame:
    """The ``core_source_files`` rows of the input files ``files`` (relative paths), as they are now: each name's
    latest read from its first byte and the reads of its growth since. The next night's export may reuse the names:
    the earlier nights' reads of a name are not this input's (a report of night 31 listed each file 31 times)."""
    return _frame(con.cursor(), f"""
        SELECT source_file, kind, lines_read, rows_accepted, rows_quarantined, status, error
        FROM {_THIS_INPUTS_READS} ORDER BY source_file, ingested_at, start_byte""", _contents(files, contents))


def names_loaded_as(con: duckdb.DuckDBPyConnection, files: dict[str, tuple[str, str]]) -> dict[str, str]:
    """For each input file (relative path -> its kind and SHA-256) whose content was loaded under another name only, that
    name: the README's backfill reads ``exports/`` after each night loaded ``exports/<night>/``, so every file is
    ``already loaded`` and its lines and reads are kept under its name in its night's folder. A content some file of
    the input holds under its own name is that file's; of several files with one such content, the first is given it.
    """
    files = {rel: ks for rel, ks in files.items() if ks[1]}
    if not files:
        return {}
    rows = con.cursor().execute("""
        WITH c AS (SELECT unnest($1::VARCHAR[]) AS rel, unnest($2::VARCHAR[]) AS kind, unnest($3::VARCHAR[]) AS sha256)
        SELECT c.rel, c.kind, c.sha256, min(s.source_file) FROM c
        JOIN core_source_files s ON s.sha256 = c.sha256 AND s.kind = c.kind AND s.status = 'loaded'
        WHERE (c.kind, c.sha256) NOT IN (
            SELECT (t.kind, t.sha256) FROM core_source_files t JOIN c o ON t.source_file = o.rel AND t.sha256 = o.sha256
            WHERE t.status = 'loaded')
        GROUP BY ALL ORDER BY c.rel""",
        [list(files), [k for k, _ in files.values()], [h for _, h in files.values()]]).fetchall()
    given: dict[tuple[str, str], str] = {}
    for rel, kind, sha, name in rows:
        given.setdefault((kind, sha), (rel, name))
    return dict(given.values())


def quarantine_as_in_files(quarantine: pl.DataFrame, paths: dict[str, "Path"]) -> pl.DataFrame:
    """The rows of ``quarantine`` that are the lines the input files hold now (``paths``: relative path -> file).

    The quarantine is kept by file name and line, and the next night's export may reuse yesterday's names: the
    rows of a name are yesterday's lines and tonight's. A row is tonight's when the file now holds that very
    line at that number (its ``raw`` as the ingest read it). Rows that name no line (a file that could not be
    read: line 0 or none) and rows of a file that cannot be read now are kept.
    """
    from pipelines.ingest.lines import lines_at

    if quarantine.height == 0:
        return quarantine
    kept = [quarantine.filter(~pl.col("source_file").is_in(list(paths)) | pl.col("source_line").is_null()
                              | (pl.col("source_line") < 1))]
    in_files = quarantine.filter(pl.col("source_file").is_in(list(paths)) & (pl.col("source_line") >= 1))
    wanted: dict[str, set[int]] = {}
    for name, line in zip(in_files["source_file"].to_list(), in_files["source_line"].to_list()):
        wanted.setdefault(name, set()).add(line)
    names, numbers, texts, unreadable = [], [], [], []
    for name, lines in wanted.items():
        try:  # only the wanted lines, read as the ingest reads lines
            found = lines_at(paths[name], lines)
        except OSError:
            unreadable.append(name)
            continue
        names.extend([name] * len(found))
        numbers.extend(found)
        texts.extend(found.values())
    now = pl.DataFrame({"source_file": names, "source_line": numbers, "raw": texts},
                       schema={"source_file": pl.String, "source_line": pl.Int64, "raw": pl.String})
    kept.append(in_files.join(now, on=["source_file", "source_line", "raw"], how="semi", maintain_order="left"))
    kept.append(in_files.filter(pl.col("source_file").is_in(unreadable)))
    return pl.concat(kept).unique(maintain_order=True).sort(["source_file", "source_line", "reason"])
