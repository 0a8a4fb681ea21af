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
    """Gaming day x table partition(s): every frame a per-partition step reads.

    Usually one (gaming day, table); the flow hands several to one task run (``partitions(night,
    groups=n)``): the steps key every row by table and round, so the same functions read one
    partition or many alike, and the fixed cost of a step is paid once per group, not per table.
    """

    keys: tuple[tuple[dt.date, str], ...]
    rounds: pl.DataFrame
    wagers: pl.DataFrame
    actions: pl.DataFrame
    events: pl.DataFrame

    @property
    def gaming_day(self) -> dt.date:
        return self.keys[0][0]

    @property
    def table_id(self) -> str:
        return self.keys[0][1]

    @property
    def key(self) -> tuple[dt.date, str]:
        return self.keys[0]

    @property
    def label(self) -> str:
        first = f"{self.keys[0][0].isoformat()} {self.keys[0][1]}"
        return first if len(self.keys) == 1 else f"{first} and {len(self.keys) - 1} more partition(s)"


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


def partitions(night: Night, groups: int | None = None) -> list[Partition]:
    """The night cut into (gaming day, table) partitions, in a stable order.

    With ``groups``, the partitions are dealt into at most that many groups of about equal work
    (rounds; the largest first to the lightest group), each group one :class:`Partition` holding
    several keys: how the flow spreads a night of a thousand tables over a few workers.
    """
    keys_rounds = night.rounds.select("gaming_day", "table_id")
    keys_events = night.events.filter(pl.col("round_no").is_not_null()).select("gaming_day", "table_id")
    keys = pl.concat([keys_rounds, keys_events]).group_by(["gaming_day", "table_id"]).len().sort(["gaming_day", "table_id"])
    key_list = [(d, t) for d, t, _ in keys.iter_rows()]
    if groups is None:
        group_of = {k: i for i, k in enumerate(key_list)}
    else:
        group_of = _balanced(key_list, keys["len"].to_list(), groups)
    key_frame = pl.DataFrame(
        {"gaming_day": [k[0] for k in key_list], "table_id": [k[1] for k in key_list],
         "_group": [group_of[k] for k in key_list]},
        schema={"gaming_day": pl.Date, "table_id": pl.String, "_group": pl.Int64},
    )
    day_of = night.rounds.select("table_id", "round_no", "gaming_day")

    def split(df: pl.DataFrame, with_day: bool) -> dict[int, pl.DataFrame]:
        if not with_day:
            df = df.join(day_of, on=["table_id", "round_no"], how="left")
        df = df.join(key_frame, on=["gaming_day", "table_id"], how="left")
        return {k[0]: v.drop("_group") for k, v in df.partition_by(["_group"], as_dict=True, maintain_order=True).items()}

    rounds = split(night.rounds, True)
    wagers = split(night.wagers, False)
    actions = split(night.actions, False)
    events = split(night.events.filter(pl.col("round_no").is_not_null()), True)
    members: dict[int, list[tuple[dt.date, str]]] = {}
    for k in key_list:
        members.setdefault(group_of[k], []).append(k)
    out = []
    for g in sorted(members, key=lambda g: members[g][0]):
        out.append(Partition(
            keys=tuple(members[g]),
            rounds=rounds.get(g, night.rounds.clear()),
            wagers=wagers.get(g, night.wagers.clear()).drop("gaming_day", strict=False),
            actions=actions.get(g, night.actions.clear()).drop("gaming_day", strict=False),
            events=events.get(g, night.events.clear()),
        ))
    return out


def _balanced(keys: list[tuple[dt.date, str]], work: list[int], groups: int) -> dict[tuple[dt.date, str], int]:
    """Deal ``keys`` into ``groups`` of about equal ``work`` (the LPT rule), so that a pool of workers finishes together."""
    n = max(1, min(groups, len(keys)))
    loads = [0] * n
    out = {}
    for i in sorted(range(len(keys)), key=lambda i: (-work[i], i)):
        g = min(range(n), key=lambda j: (loads[j], j))
        out[keys[i]] = g
        loads[g] += max(1, work[i])
    return out
