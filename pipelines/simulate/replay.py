"""Read a simulated night back and re-settle it with the rules engine: the simulator's own check.

This is deliberately small and independent of the audit pipeline (which has its own ingest): it
parses the files the simulator wrote, skips the lines it planted as malformed (any line that does
not parse), rebuilds each round's ``RoundInput`` from the device's card events and the table
system's record, and calls ``rulebook.engine.settle_round``. The tests use it to prove that a
clean night re-settles with zero differences, and that each planted fault shows in the logs.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from rulebook.cards import parse_card
from rulebook.catalogue import builtin
from rulebook.engine import settle_round
from rulebook.round import Action, DeviceCard, Limits, RoundInput, RoundResult, Wager

EVENTS = ("shoe_start", "burn", "card", "shoe_end")


@dataclass
class DeviceEvent:
    file: str
    line: int
    device_id: str
    table_id: str
    shoe_id: str
    seq: int
    ts: dt.datetime
    event: str
    round_no: int | None
    card: str
    decks: int | None


@dataclass
class Night:
    events: list[DeviceEvent] = field(default_factory=list)
    rounds: list[dict] = field(default_factory=list)  # each with "_file", "_line"
    bad_lines: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, raw)

    def cards_by_round(self) -> dict[tuple[str, int], list[DeviceEvent]]:
        out: dict[tuple[str, int], list[DeviceEvent]] = {}
        for e in self.events:
            if e.round_no is not None and e.event in ("card", "burn"):
                out.setdefault((e.table_id, e.round_no), []).append(e)
        return out

    def decks_by_shoe(self) -> dict[tuple[str, str], int]:
        return {(e.table_id, e.shoe_id): e.decks for e in self.events if e.event == "shoe_start" and e.decks}


def _ts(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError("timestamp without an offset")
    return value


def read_night(folder: Path) -> Night:
    night = Night()
    for path in sorted(folder.rglob("shoe_*.csv")):
        with path.open(encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
        header = lines[0].split(",")
        for k, raw in enumerate(lines[1:], start=2):
            if not raw:
                continue
            try:
                row = next(csv.reader([raw]))
                if len(row) != len(header):
                    raise ValueError("columns")
                r = dict(zip(header, row))
                if r["event"] not in EVENTS:
                    raise ValueError("event")
                night.events.append(DeviceEvent(
                    path.name, k, r["device_id"], r["table_id"], r["shoe_id"], int(r["event_seq"]), _ts(r["ts"]),
                    r["event"], int(r["round_no"]) if r["round_no"] else None, r["card"],
                    int(r["decks"]) if r["decks"] else None))
            except (ValueError, StopIteration):
                night.bad_lines.append((path.name, k, raw))
    for path in sorted(folder.rglob("rounds_*.jsonl")):
        with path.open(encoding="utf-8") as f:
            for k, raw in enumerate(f, start=1):
                raw = raw.rstrip("\n")
                try:
                    rec = json.loads(raw)
                    for key in ("bets_open_at", "bets_closed_at", "settled_at"):
                        _ts(rec[key])
                    for w in rec["wagers"]:
                        if not isinstance(w["amount"], int) or not isinstance(w["net"], int):
                            raise ValueError("amount")
                except (ValueError, KeyError, TypeError):
                    night.bad_lines.append((path.name, k, raw))
                    continue
                rec["_file"], rec["_line"] = path.name, k
                night.rounds.append(rec)
    return night


def gaming_day(ts: dt.datetime, start: dt.time = dt.time(6, 0)) -> dt.date:
    """The gaming day of a local timestamp (06:00 to 06:00 by default)."""
    local = ts.replace(tzinfo=None)
    day = local.date()
    return day - dt.timedelta(days=1) if local.time() < start else day


def round_input(rec: dict, cards: list[DeviceEvent], decks: int | None) -> RoundInput:
    ruleset = builtin().in_force(rec["ruleset"], gaming_day(_ts(rec["bets_closed_at"])))
    lim = rec["limits"]
    return RoundInput(
        ruleset=ruleset,
        cards=tuple(DeviceCard(parse_card(e.card), e.event == "burn") for e in cards),
        wagers=tuple(Wager(w["wager_id"], w["seat"], w["bet"], w["amount"], w["player_id"]) for w in rec["wagers"]),
        actions=tuple(Action(a["seat"], a["hand"], a["action"], a["amount"], tuple(a["wager_ids"]) if a.get("wager_ids") else None)
                      for a in rec["actions"]),
        deal_mode=rec["deal_mode"],
        decks=decks,
        jackpot_meter=rec["jackpot_meter"],
        currency=rec["currency"],
        limits=Limits(lim.get("min"), lim.get("max"), lim.get("differential"), lim.get("side_min"), lim.get("side_max")),
    )


def resettle(night: Night) -> list[tuple[dict, RoundResult]]:
    """Every round record with the engine's result from its cards (rounds without cards are skipped)."""
    by_round = night.cards_by_round()
    decks = night.decks_by_shoe()
    out = []
    for rec in night.rounds:
        cards = by_round.get((rec["table_id"], rec["round_no"]))
        if not cards:
            continue
        ri = round_input(rec, cards, decks.get((rec["table_id"], cards[0].shoe_id)))
        out.append((rec, settle_round(ri)))
    return out
