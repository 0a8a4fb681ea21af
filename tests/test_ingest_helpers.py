"""Shared helpers of the ingest tests: valid logs, named corruptions with the reason each must give."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import duckdb

from pipelines.db import open_writer
from pipelines.ingest.run import IngestSummary, ingest_folder
from pipelines.ingest.synthetic import CSV_HEADER, table_log

TABLES_TO_COMPARE = ("core_source_files", "core_device_events", "core_rounds", "core_wagers", "core_actions",
                     "core_quarantine", "core_source_changes", "core_duplicate_lines")


def write_table(folder: Path, index: int, rounds: int, seed: int = 1, **kw) -> tuple[Path, Path, list[str], list[str]]:
    """Write one table's rounds_*.jsonl and shoe_*.csv; returns the paths and the lines written."""
    log = table_log(index, rounds, seed, **kw)
    folder.mkdir(parents=True, exist_ok=True)
    rp = folder / f"rounds_{log.table_id}.jsonl"
    sp = folder / f"shoe_{log.device_id}.csv"
    rp.write_text("\n".join(log.round_lines) + "\n", encoding="utf-8")
    sp.write_text(CSV_HEADER + "\n" + "\n".join(log.event_lines) + "\n", encoding="utf-8")
    return rp, sp, log.round_lines, log.event_lines


def ingest(folder: Path, db: Path, day_start: str = "06:00", settings=None) -> tuple[duckdb.DuckDBPyConnection, IngestSummary]:
    con = open_writer(db)
    summary = ingest_folder(con, folder, day_start, settings=settings)
    return con, summary


def snapshot(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every core table's rows, sorted, without the wall-clock column (ingested_at)."""
    out = {}
    for t in TABLES_TO_COMPARE:
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [t]).fetchall()
            if r[0] not in ("ingested_at", "input_root")]
        rows = con.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall()
        out[t] = sorted(rows, key=repr)
    return out


# --- corruptions of a JSON round line: (name, function(line) -> line, expected reason code) -----------------
def _edit(fn: Callable[[dict], None]) -> Callable[[str], str]:
    def apply(line: str) -> str:
        d = json.loads(line)
        fn(d)
        return json.dumps(d)
    return apply


def _set(path: str, value) -> Callable[[dict], None]:
    def fn(d: dict) -> None:
        parts = path.split(".")
        target = d
        for p in parts[:-1]:
            target = target[int(p)] if p.isdigit() else target[p]
        last = int(parts[-1]) if parts[-1].isdigit() else parts[-1]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value
    return fn


_DELETE = object()


def _dup_wager_id(d: dict) -> None:
    d["wagers"][1]["wager_id"] = d["wagers"][0]["wager_id"]


def _unknown_action(d: dict) -> None:
    d["actions"] = [{"seat": 1, "hand": 1, "action": "teleport", "amount": None, "ts": d["bets_closed_at"]}]


JSON_CORRUPTIONS: list[tuple[str, Callable[[str], str], str]] = [
    ("truncated", lambda s: s[: len(s) // 2], "json_unparseable"),
    ("not json", lambda s: "<round>" + s, "json_unparseable"),
    ("array", lambda s: "[" + s + "]", "json_not_object"),
    ("blank", lambda s: "", "blank_line"),
    ("whitespace", lambda s: "   \t", "blank_line"),
    ("missing table_id", _edit(_set("table_id", _DELETE)), "missing_field"),
    ("missing round_no", _edit(_set("round_no", _DELETE)), "missing_field"),
    ("null currency", _edit(_set("currency", None)), "missing_field"),
    ("missing wagers", _edit(_set("wagers", _DELETE)), "missing_field"),
    ("missing wager amount", _edit(_set("wagers.0.amount", _DELETE)), "missing_field"),
    ("round_no as text", _edit(_set("round_no", "12")), "wrong_type"),
    ("seat as text", _edit(_set("wagers.1.seat", "3")), "wrong_type"),
    ("wagers not a list", _edit(_set("wagers", {"a": 1})), "wrong_type"),
    ("wager not an object", _edit(_set("wagers.2", 17)), "element_not_object"),
    ("amount as text", _edit(_set("wagers.0.amount", "100")), "wrong_type"),
    ("negative amount", _edit(_set("wagers.0.amount", -500)), "negative_amount"),
    ("float amount", _edit(_set("wagers.0.amount", 100.0)), "non_integer_amount"),
    ("float net", _edit(_set("wagers.1.net", 95.5)), "non_integer_amount"),
    ("negative limit", _edit(_set("limits.max", -1)), "negative_amount"),
    ("unknown game", _edit(_set("game", "roulette")), "unknown_game"),
    ("unknown ruleset", _edit(_set("ruleset", "vegas-strip")), "unknown_ruleset"),
    ("unknown bet", _edit(_set("wagers.0.bet", "lucky_7")), "unknown_bet"),
    ("unknown status", _edit(_set("status", "cancelled")), "unknown_status"),
    ("closed without offset", _edit(_set("bets_closed_at", "2026-11-24T22:13:41")), "ts_no_offset"),
    ("placed_at without offset", _edit(_set("wagers.1.placed_at", "2026-11-24T22:13:41.250")), "ts_no_offset"),
    ("not a timestamp", _edit(_set("bets_closed_at", "yesterday")), "bad_timestamp"),
    ("duplicate wager_id", _edit(_dup_wager_id), "duplicate_wager_id"),
    ("unknown action", _edit(_unknown_action), "unknown_action"),
]

# --- corruptions of a CSV device line (never the header, never the first data line) --------------------
def _field(i: int, value: str) -> Callable[[str], str]:
    def apply(line: str) -> str:
        f = line.split(",")
        f[i] = value
        return ",".join(f)
    return apply


CSV_CORRUPTIONS: list[tuple[str, Callable[[str], str], str]] = [
    ("too few columns", lambda s: s.rsplit(",", 1)[0], "csv_column_count"),
    ("too many columns", lambda s: s + ",extra", "csv_column_count"),
    ("blank", lambda s: "", "blank_line"),
    ("unbalanced quote", lambda s: '"' + s, "csv_unparseable"),
    ("missing device", _field(0, ""), "missing_field"),
    ("seq not integer", _field(3, "abc"), "wrong_type"),
    ("seq backwards", _field(3, "0"), "seq_backwards"),
    ("ts without offset", _field(4, "2026-11-24T22:14:03.512"), "ts_no_offset"),
    ("ts not a timestamp", _field(4, "2026-13-45T99:00:00+07:00"), "bad_timestamp"),
    ("unknown event", _field(5, "card_swipe"), "unknown_event"),
    ("round_no not integer", _field(6, "7b"), "wrong_type"),
]
