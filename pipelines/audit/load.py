"""Read the night from the canonical tables and cut it into partitions (gaming day x table).

The database is opened read-only here; only the flow's writer task writes. Everything the
per-partition steps need is read once, annotated where the whole shoe or the whole night matters
(decks, card copies, gaming days of device-only rounds), and split so that each partition's frames
are self-contained: the same task can run on this machine or, later, on a cluster worker.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from pipelines.audit.params import AuditParams
from pipelines.audit.reconstruct import annotate_events
from pipelines.db import open_reader

ROUND_COLUMNS = (
    "table_id", "round_no", "game", "ruleset", "shoe_id", "dealer_id", "currency", "deal_mode", "limit_min",
    "limit_max", "limit_differential", "limit_side_min", "limit_side_max", "bets_open_at", "bets_closed_at",
    "settled_at", "status", "recorded_winner", "recorded_player_points", "recorded_banker_points",
    "recorded_result", "jackpot_meter", "gaming_day", "utc_offset_minutes", "wager_count", "action_count",
    "source_file", "source_line",
)
WAGER_COLUMNS = (
    "table_id", "round_no", "wager_order", "wager_id", "seat", "player_id", "bet", "amount", "placed_at", "net",
    "source_file", "source_line",
)
ACTION_COLUMNS = (
    "table_id", "round_no", "action_order", "seat", "hand", "action", "amount", "ts", "wager_ids", "source_file",
    "source_line",
)
EVENT_COLUMNS = (
    "device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "card_code", "decks",
    "source_file", "source_line",
)


@dataclass(frozen=True)
class Night:
    """Everything read from the database, with device events annotated over whole shoes."""

    rounds: pl.DataFrame
    wagers: pl.DataFrame
    actions: pl.DataFrame
    events: pl.DataFrame  # annotated (reconstruct.annotate_events)
    quarantine: pl.DataFrame
    source_files: pl.DataFrame | None = None  # core_source_files: what each input file contributed


@dataclass(frozen=True)
class Partition:
    """One gaming day at one table: every frame a per-partition step reads."""

    gaming_day: dt.date
    table_id: str
    rounds: pl.DataFrame
    wagers: pl.DataFrame
    actions: pl.DataFrame
    events: pl.DataFrame

    @property
    def key(self) -> tuple[dt.date, str]:
        return (self.gaming_day, self.table_id)

    @property
    def label(self) -> str:
        return f"{self.gaming_day.isoformat()} {self.table_id}"


def read_night(db_path: Path, params: AuditParams) -> Night:
    """The canonical tables, read-only, as polars frames (device events annotated)."""
    con = open_reader(db_path)
    try:
        rounds = _read(con, "core_rounds", ROUND_COLUMNS, "table_id, round_no")
        wagers = _read(con, "core_wagers", WAGER_COLUMNS, "table_id, round_no, wager_order")
        actions = _read(con, "core_actions", ACTION_COLUMNS, "table_id, round_no, action_order")
        events = _read(con, "core_device_events", EVENT_COLUMNS, "device_id, event_seq",
                       select={"card": "CASE WHEN card_code < 0 THEN card END AS card"})
        quarantine = con.sql(
            "SELECT source_file, source_line, reason, raw FROM core_quarantine ORDER BY source_file, source_line, reason"
        ).pl()
        source_files = con.sql(
            "SELECT source_file, kind, lines_read, rows_accepted, rows_quarantined, status, error "
            "FROM core_source_files ORDER BY source_file"
        ).pl()
    finally:
        con.close()
    return Night(rounds, wagers, actions, annotate_events(events, rounds, params, quarantine), quarantine, source_files)


def _read(con, table: str, columns: tuple[str, ...], order: str, select: dict[str, str] | None = None) -> pl.DataFrame:
    exprs = [(select or {}).get(c, c) for c in columns]
    df = con.sql(f"SELECT {', '.join(exprs)} FROM {table} ORDER BY {order}").pl()
    # DuckDB hands TIMESTAMPTZ back in the session's zone name (e.g. Etc/UTC): one zone, UTC, everywhere
    return df.with_columns(
        pl.col(c).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
        for c, t in df.schema.items() if isinstance(t, pl.Datetime)
    )


def partitions(night: Night) -> list[Partition]:
    """The night cut into (gaming day, table) partitions, in a stable order."""
    keys_rounds = night.rounds.select("gaming_day", "table_id")
    keys_events = night.events.filter(pl.col("round_no").is_not_null()).select("gaming_day", "table_id")
    keys = pl.concat([keys_rounds, keys_events]).unique().sort(["gaming_day", "table_id"])
    day_of = night.rounds.select("table_id", "round_no", "gaming_day")

    def split(df: pl.DataFrame, with_day: bool) -> dict[tuple, pl.DataFrame]:
        if not with_day:
            df = df.join(day_of, on=["table_id", "round_no"], how="left")
        return {k: v for k, v in df.partition_by(["gaming_day", "table_id"], as_dict=True, maintain_order=True).items()}

    rounds = split(night.rounds, True)
    wagers = split(night.wagers, False)
    actions = split(night.actions, False)
    events = split(night.events.filter(pl.col("round_no").is_not_null()), True)
    out = []
    for day, table in keys.iter_rows():
        k = (day, table)
        out.append(Partition(
            gaming_day=day,
            table_id=table,
            rounds=rounds.get(k, night.rounds.clear()),
            wagers=wagers.get(k, night.wagers.clear()).drop("gaming_day", strict=False),
            actions=actions.get(k, night.actions.clear()).drop("gaming_day", strict=False),
            events=events.get(k, night.events.clear()),
        ))
    return out


@dataclass(frozen=True)
class Batch:
    """Partitions handed to one task run together: task runs cost milliseconds each, a night has a thousand tables."""

    partitions: tuple[Partition, ...]

    @property
    def label(self) -> str:
        p = self.partitions
        if not p:
            return "empty"
        if len(p) == 1:
            return p[0].label
        return f"{p[0].label} .. {p[-1].label} ({len(p)} partitions)"

    @property
    def rounds(self) -> int:
        return sum(x.rounds.height for x in self.partitions)


def batches(parts: list[Partition], n: int) -> list[Batch]:
    """``parts`` in at most ``n`` batches of about equal work (rounds), each in partition order.

    Largest partitions first to the lightest batch (the LPT rule): the batches finish together on a
    pool of workers. The partitions themselves never change: a batch is only how they travel.
    """
    n = max(1, min(n, len(parts)))
    loads = [0] * n
    members: list[list[int]] = [[] for _ in range(n)]
    order = sorted(range(len(parts)), key=lambda i: (-parts[i].rounds.height, i))
    for i in order:
        k = min(range(n), key=lambda j: (loads[j], j))
        members[k].append(i)
        loads[k] += max(1, parts[i].rounds.height)
    return [Batch(tuple(parts[i] for i in sorted(m))) for m in members if m]
