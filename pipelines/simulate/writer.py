"""Writing the logs exactly as the devices and the table system export them (docs/formats.md).

- ``shoe_<device>_<gaming day>.csv``: one file per device per gaming day, written by polars in one
  call (no per-line flush), header ``device_id,table_id,shoe_id,event_seq,ts,event,round_no,card,decks``.
- ``rounds_<table>_<gaming day>.jsonl``: one file per table per gaming day, one JSON object per
  round. Lines are built from fixed templates (three times faster than ``json.dumps`` of a dict,
  and a test proves them identical to it).

The malformed lines the quarantine must catch are spliced in here, because only the writer knows
their line numbers; each one becomes a ground-truth row naming its file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from pipelines.simulate import records as R
from pipelines.simulate.clock import format_ts, format_ts_list
from pipelines.simulate.floor import Table
from pipelines.simulate.records import Events, RoundRec

CSV_COLUMNS = ("device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "decks")
_TEXTS, _TEXT_OFFSET = R.card_texts()


@dataclass(frozen=True, slots=True)
class Garble:
    """A malformed line to write just before line ``target`` (0-based data row / round index) of a file."""

    variant: str
    target: int


def shoe_file_name(table: Table, day: str) -> str:
    return f"shoe_{table.device_id}_{day}.csv"


def rounds_file_name(table: Table, day: str) -> str:
    return f"rounds_{table.table_id}_{day}.jsonl"


# ---- device log ------------------------------------------------------------------------------------


def device_frame(table: Table, events: Events, seq: np.ndarray) -> pl.DataFrame:
    """The device's events as the CSV's columns (text columns gathered from small lookup series)."""
    texts = pl.Series(_TEXTS.tolist(), dtype=pl.String)
    no_card = (events.card == R.NO_CARD) | (events.kind == R.SHOE_START) | (events.kind == R.SHOE_END)
    frame = pl.DataFrame(
        {
            "shoe_id": pl.Series(events.shoe_ids or [""], dtype=pl.String).gather(events.shoe.astype(np.int64)),
            "event_seq": pl.Series(np.asarray(seq, dtype=np.int64), dtype=pl.Int64),
            "ts": format_ts(events.ts, table.utc_offset_min, with_ms=True),
            "event": pl.Series(list(R.EVENT_NAMES), dtype=pl.String).gather(events.kind.astype(np.int64)),
            "round_no": pl.Series(events.round_no, dtype=pl.Int64),
            "card": texts.gather(events.card.astype(np.int64) + _TEXT_OFFSET),
            "no_card": pl.Series(no_card, dtype=pl.Boolean),
            "decks": pl.Series(events.decks.astype(np.int64), dtype=pl.Int64),
        }
    )
    return frame.select(
        pl.lit(table.device_id).alias("device_id"),
        pl.lit(table.table_id).alias("table_id"),
        "shoe_id",
        "event_seq",
        "ts",
        "event",
        pl.when(pl.col("round_no") >= 0).then(pl.col("round_no")).otherwise(None).alias("round_no"),
        pl.when(pl.col("no_card")).then(None).otherwise(pl.col("card")).alias("card"),
        pl.when(pl.col("event") == "shoe_start").then(pl.col("decks")).otherwise(None).alias("decks"),
    )


def garble_csv_line(line: str, variant: str) -> tuple[str, str]:
    """A malformed copy of a device line, and the quarantine reason it should get."""
    cells = line.split(",")
    if variant == "csv_wrong_column_count":
        return ",".join(cells[:-1]), "csv_column_count"
    if variant == "csv_unknown_event":
        cells[5] = {"card": "crad", "burn": "brun", "shoe_start": "shoe_strat", "shoe_end": "shoe_edn"}[cells[5]]
        return ",".join(cells), "unknown_event"
    if variant == "csv_bad_timestamp":
        cells[4] = "0000-00-00T00:00:00.000" + cells[4][23:]  # a device clock that lost its time
        return ",".join(cells), "bad_timestamp"
    raise ValueError(f"not a device-line garble: {variant}")


def write_device_log(path: Path, table: Table, events: Events, seq: np.ndarray, garbles: list[Garble]) -> list[tuple[int, str, str, int]]:
    """Write the device's file; returns ``(line number, variant, reason, event index)`` of each malformed line."""
    frame = device_frame(table, events, seq)
    text = frame.write_csv(include_header=True, line_terminator="\n")
    if not garbles:
        path.write_text(text, encoding="utf-8", newline="")
        return []
    lines = text.split("\n")
    header, rows = lines[0], lines[1:-1]
    out = [header]
    placed = []
    by_target: dict[int, list[Garble]] = {}
    for g in garbles:
        by_target.setdefault(g.target, []).append(g)
    for k, row in enumerate(rows):
        for g in by_target.get(k, []):
            bad, reason = garble_csv_line(row, g.variant)
            out.append(bad)
            placed.append((len(out), g.variant, reason, k))  # 1-based line number, the header is line 1
        out.append(row)
    path.write_text("\n".join(out) + "\n", encoding="utf-8", newline="")
    return placed


# ---- table system log -----------------------------------------------------------------------------


def _s(text: str | None) -> str:
    return "null" if text is None else f'"{text}"'


def _i(value: int | None) -> str:
    return "null" if value is None else str(value)


_DICT_TEXT: dict[tuple, str] = {}


def _value(v) -> str:
    """A JSON value as ``json.dumps`` writes it; flat dicts of scalars are remembered (results repeat)."""
    t = type(v)
    if t is dict:
        items = tuple(v.items())
        flat = all(type(x) is not list and type(x) is not dict for _, x in items)
        if flat:
            text = _DICT_TEXT.get(items)
            if text is not None:
                return text
        text = "{" + ", ".join(f"\"{k}\": {_value(x)}" for k, x in items) + "}"
        if flat and len(_DICT_TEXT) < 100_000:
            _DICT_TEXT[items] = text
        return text
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is int:
        return str(v)
    if t is str:
        return f'"{v}"' if v.isascii() and '"' not in v and "\\" not in v and v.isprintable() else json.dumps(v)
    if t is list:
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return json.dumps(v)


def encode_rounds(table: Table, game: str, ruleset: str, recs: list[RoundRec]) -> list[str]:
    """One JSON line per round, byte-identical to ``json.dumps`` of the same dict (key order as docs/formats.md)."""
    off = table.utc_offset_min
    n = len(recs)
    opens = format_ts_list(np.array([r.open_ms for r in recs], dtype=np.int64), off, False)
    closes = format_ts_list(np.array([r.close_ms for r in recs], dtype=np.int64), off, False)
    settles = format_ts_list(np.array([r.settled_ms for r in recs], dtype=np.int64), off, False)
    placed = format_ts_list(np.array([w.placed_ms for r in recs for w in r.wagers], dtype=np.int64), off, False)
    acted = format_ts_list(np.array([a.ts_ms for r in recs for a in r.actions], dtype=np.int64), off, False)
    lim = table.limits
    limits = f'{{"min": {lim.min}, "max": {lim.max}, '
    if lim.differential is not None:
        limits += f'"differential": {lim.differential}, '
    limits += f'"side_min": {lim.side_min}, "side_max": {lim.side_max}}}'
    head = (f'{{"table_id": "{table.table_id}", "game": "{game}", "ruleset": "{ruleset}", "round_no": ')
    mid = f'", "currency": "{table.currency}", "deal_mode": {_s(table.deal_mode)}, "limits": {limits}, '
    lines = []
    wi = ai = 0
    for k in range(n):
        r = recs[k]
        wagers = []
        for w in r.wagers:
            wagers.append(
                f'{{"wager_id": "{w.wager_id}", "seat": {w.seat}, "player_id": {_s(w.player_id)}, "bet": "{w.bet}", '
                f'"amount": {w.amount}, "placed_at": "{placed[wi]}", "net": {w.net}}}'
            )
            wi += 1
        actions = []
        for a in r.actions:
            text = (f'{{"seat": {a.seat}, "hand": {a.hand}, "action": "{a.action}", "amount": {_i(a.amount)}, '
                    f'"ts": "{acted[ai]}"')
            if a.wager_ids is not None:
                text += ', "wager_ids": [' + ", ".join(f'"{x}"' for x in a.wager_ids) + "]"
            actions.append(text + "}")
            ai += 1
        result = _value(r.recorded_result)
        lines.append(
            f'{head}{r.round_no}, "shoe_id": {_s(r.shoe_id)}, "dealer_id": "{r.dealer_id}{mid}'
            f'"bets_open_at": "{opens[k]}", "bets_closed_at": "{closes[k]}", "settled_at": "{settles[k]}", '
            f'"status": "{r.status}", "recorded_result": {result}, "jackpot_meter": {_i(r.jackpot_meter)}, '
            f'"wagers": [{", ".join(wagers)}], "actions": [{", ".join(actions)}]}}'
        )
    return lines


def garble_json_line(line: str, variant: str, rng_pick: int) -> tuple[str, str]:
    """A malformed copy of a round line, and the quarantine reason it should get."""
    if variant == "truncated_json_line":
        return line[: max(20, len(line) * (30 + rng_pick % 40) // 100)], "json_unparseable"
    if variant == "float_amount":
        data = json.loads(line)
        data["wagers"][0]["amount"] = data["wagers"][0]["amount"] + 0.5
        return json.dumps(data), "non_integer_amount"
    if variant == "timestamp_without_offset":
        data = json.loads(line)
        for key in ("bets_open_at", "bets_closed_at", "settled_at"):
            data[key] = data[key][:19]
        return json.dumps(data), "ts_no_offset"
    raise ValueError(f"not a round-line garble: {variant}")


def write_rounds_log(path: Path, lines: list[str], garbles: list[Garble], rng_pick: int) -> list[tuple[int, str, str, int]]:
    """Write the table system's file; returns ``(line number, variant, reason, round index)`` of each malformed line."""
    if not garbles:
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="")
        return []
    by_target: dict[int, list[Garble]] = {}
    for g in garbles:
        by_target.setdefault(g.target, []).append(g)
    out: list[str] = []
    placed = []
    for k, line in enumerate(lines):
        for g in by_target.get(k, []):
            bad, reason = garble_json_line(line, g.variant, rng_pick + k)
            out.append(bad)
            placed.append((len(out), g.variant, reason, k))  # 1-based line number
        out.append(line)
    path.write_text("".join(line + "\n" for line in out), encoding="utf-8", newline="")
    return placed
