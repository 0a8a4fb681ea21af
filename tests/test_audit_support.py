"""Hand-made nights for the audit's tests: rounds written the way a person reads them.

``NightBuilder`` builds the canonical tables (core_rounds, core_wagers, core_actions,
core_device_events) in their exact schemas from short descriptions: a round's cards as text in
device order (``"6c 9d 3h Kd 5s"``, a burn written ``"b:2c"``), its wagers as
``(wager_id, bet, amount, net)``. Device events get consecutive ``event_seq`` per device and a
``shoe_start`` and one burn per shoe; timestamps follow the round number (bets close at ``base + round_no``
minutes, cards follow). It can write the tables to a DuckDB file (the ingest's schema) or hand
the frames straight to the audit's plain functions.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from rulebook.cards import parse_card
from rulebook.catalogue import builtin
from schemas.pandera_models import polars_schema
from schemas.tables import CORE_ACTIONS, CORE_DEVICE_EVENTS, CORE_QUARANTINE, CORE_ROUNDS, CORE_WAGERS

UTC = dt.timezone.utc
OFFSET = 7 * 60  # minutes: the Hoiana floor (+07:00)
DAY = dt.date(2026, 11, 24)
BASE = dt.datetime(2026, 11, 24, 15, 0, tzinfo=UTC)  # 22:00 local on the gaming day



def ts(round_no: int, seconds: float = 0.0) -> dt.datetime:
    return BASE + dt.timedelta(minutes=round_no, seconds=seconds)


@dataclass
class NightBuilder:
    rounds: list[dict] = field(default_factory=list)
    wagers: list[dict] = field(default_factory=list)
    actions: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    quarantine: list[dict] = field(default_factory=list)
    _seq: dict[str, int] = field(default_factory=dict)
    _shoes: set = field(default_factory=set)
    _line: dict[str, int] = field(default_factory=dict)

    def _next_line(self, file: str) -> int:
        """Physical line numbers: a CSV's header is line 1, a JSONL's first round is line 1."""
        first = 1 if file.endswith(".csv") else 0
        self._line[file] = self._line.get(file, first) + 1
        return self._line[file]

    def device_event(self, table_id: str, shoe_id: str, event: str, round_no: int | None, card: str | None,
                     at: dt.datetime, device_id: str | None = None, decks: int | None = None, skip_seq: int = 0) -> None:
        device = device_id or f"AE-{table_id}"
        seq = self._seq.get(device, 0) + 1 + skip_seq
        self._seq[device] = seq
        file = f"shoe_{device}.csv"
        self.events.append({
            "source_file": file, "source_line": self._next_line(file), "device_id": device, "table_id": table_id,
            "shoe_id": shoe_id, "event_seq": seq, "ts": at, "event": event, "round_no": round_no, "card": card,
            "card_code": None if event in ("shoe_start", "shoe_end") else parse_card(card), "decks": decks,
        })

    def start_shoe(self, table_id: str, shoe_id: str, decks: int = 8, at: dt.datetime | None = None,
                   burns: tuple[str | None, ...] = (None,)) -> None:
        """A new shoe: its ``shoe_start`` and the burns before its first round (by default one the device did not
        read, TBAC-7.11 / BJ-7.13; ``burns=()``: a shoe dealt without its burn)."""
        at = at or BASE - dt.timedelta(minutes=5)
        self.device_event(table_id, shoe_id, "shoe_start", None, None, at, decks=decks)
        for b in burns:
            self.device_event(table_id, shoe_id, "burn", None, b, at)
        self._shoes.add((table_id, shoe_id))

    def round(
        self,
        table_id: str,
        round_no: int,
        cards: str | None,
        wagers: list[tuple] = (),
        *,
        ruleset: str = "hoiana-tiger-baccarat/commission",
        status: str = "settled",
        shoe_id: str | None = None,
        dealer_id: str = "D1",
        limits: dict | None = None,
        recorded: dict | None = None,
        table_record: bool = True,
        deal_mode: str | None = None,
        actions: list[tuple] = (),
        jackpot_meter: int | None = None,
        currency: str = "USD",
        skip_seq: int = 0,
        decks: int = 8,
    ) -> None:
        """One round. ``wagers``: ``(wager_id, bet, amount, net[, seat[, player_id[, placed_after_close_s[, hand]]]])``
        (``hand``: a blackjack Pair wager placed when splitting, BJ-4.10.1.2);
        ``actions``: ``(seat, hand, action, amount)``; ``cards`` None: the device saw nothing."""
        shoe = shoe_id or f"S-{table_id}-1"
        lim = {"min": 2500, "max": 500000, "differential": 1000000, "side_min": 500, "side_max": 100000}
        if builtin().game_of(ruleset) != "baccarat":
            lim["differential"] = None
        lim.update(limits or {})
        if cards is not None:
            if (table_id, shoe) not in self._shoes:
                self.start_shoe(table_id, shoe, decks=decks)
            for i, c in enumerate(cards.split()):
                is_burn = c.startswith("b:")
                text = c[2:] if is_burn else c
                text = "" if text == "-" else text
                self.device_event(table_id, shoe, "burn" if is_burn else "card", round_no, text or None,
                                  ts(round_no, 5 + i), skip_seq=skip_seq if i == 0 else 0)
        if not table_record:
            return
        file = "rounds_night.jsonl"
        line = self._next_line(file)
        rec = recorded or {}
        self.rounds.append({
            "table_id": table_id, "round_no": round_no, "game": builtin().game_of(ruleset), "ruleset": ruleset, "shoe_id": shoe,
            "dealer_id": dealer_id, "currency": currency, "deal_mode": deal_mode, "limit_min": lim["min"],
            "limit_max": lim["max"], "limit_differential": lim["differential"], "limit_side_min": lim["side_min"],
            "limit_side_max": lim["side_max"], "bets_open_at": ts(round_no, -30), "bets_closed_at": ts(round_no, 0),
            "settled_at": ts(round_no, 40), "status": status,
            "recorded_winner": rec.get("winner"), "recorded_player_points": rec.get("player_points"),
            "recorded_banker_points": rec.get("banker_points"),
            "recorded_result": None if recorded is None else __import__("json").dumps(recorded),
            "jackpot_meter": jackpot_meter, "gaming_day": DAY, "utc_offset_minutes": OFFSET,
            "wager_count": len(wagers), "action_count": len(actions), "content_hash": f"{table_id}/{round_no}",
            "source_file": file, "source_line": line,
        })
        for order, w in enumerate(wagers, start=1):
            wager_id, bet, amount, net = w[:4]
            seat = w[4] if len(w) > 4 else 1
            player = w[5] if len(w) > 5 else f"P-{wager_id}"
            late = w[6] if len(w) > 6 else None
            hand = w[7] if len(w) > 7 else None
            self.wagers.append({
                "table_id": table_id, "round_no": round_no, "wager_order": order, "wager_id": wager_id, "seat": seat,
                "player_id": player, "bet": bet, "amount": amount,
                "placed_at": ts(round_no, -10) if late is None else ts(round_no, late), "net": net, "hand": hand,
                "source_file": file, "source_line": line,
            })
        for order, a in enumerate(actions, start=1):
            seat, hand, action, amount = a[:4]
            self.actions.append({
                "table_id": table_id, "round_no": round_no, "action_order": order, "seat": seat, "hand": hand,
                "action": action, "amount": amount, "ts": ts(round_no, 20 + order), "wager_ids": None,
                "source_file": file, "source_line": line,
            })

    # ---- input files, frames and databases ---------------------------------------------------------

    def write_input(self, folder: Path) -> Path:
        """The night as the devices and the table system export it (docs/formats.md): shoe_*.csv, rounds_*.jsonl."""
        import csv
        import json

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        local = dt.timezone(dt.timedelta(minutes=OFFSET))

        def iso(t: dt.datetime | None) -> str | None:
            return None if t is None else t.astimezone(local).isoformat(timespec="milliseconds")

        by_file: dict[str, list[dict]] = {}
        for e in self.events:
            by_file.setdefault(e["source_file"], []).append(e)
        for file, rows in by_file.items():
            with open(folder / file, "w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh, lineterminator="\n")
                w.writerow(["device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "decks"])
                for e in sorted(rows, key=lambda r: r["source_line"]):
                    w.writerow([e["device_id"], e["table_id"], e["shoe_id"], e["event_seq"], iso(e["ts"]), e["event"],
                                "" if e["round_no"] is None else e["round_no"], e["card"] or "",
                                "" if e["decks"] is None else e["decks"]])
        lines = []
        for r in sorted(self.rounds, key=lambda r: r["source_line"]):
            key = (r["table_id"], r["round_no"])
            limits = {"min": r["limit_min"], "max": r["limit_max"], "differential": r["limit_differential"],
                      "side_min": r["limit_side_min"], "side_max": r["limit_side_max"]}
            lines.append(json.dumps({
                "table_id": r["table_id"], "game": r["game"], "ruleset": r["ruleset"], "round_no": r["round_no"],
                "shoe_id": r["shoe_id"], "dealer_id": r["dealer_id"], "currency": r["currency"],
                "deal_mode": r["deal_mode"], "limits": {k: v for k, v in limits.items() if v is not None},
                "bets_open_at": iso(r["bets_open_at"]), "bets_closed_at": iso(r["bets_closed_at"]),
                "settled_at": iso(r["settled_at"]), "status": r["status"],
                "recorded_result": None if r["recorded_result"] is None else json.loads(r["recorded_result"]),
                "jackpot_meter": r["jackpot_meter"],
                "wagers": [
                    {"wager_id": w["wager_id"], "seat": w["seat"], "player_id": w["player_id"], "bet": w["bet"],
                     "amount": w["amount"], "placed_at": iso(w["placed_at"]), "net": w["net"],
                     **({} if w.get("hand") is None else {"hand": w["hand"]})}
                    for w in self.wagers if (w["table_id"], w["round_no"]) == key
                ],
                "actions": [
                    {"seat": a["seat"], "hand": a["hand"], "action": a["action"], "amount": a["amount"], "ts": iso(a["ts"])}
                    for a in self.actions if (a["table_id"], a["round_no"]) == key
                ],
            }))
        (folder / "rounds_night.jsonl").write_text("".join(l + "\n" for l in lines), encoding="utf-8")
        return folder


    def frames(self) -> dict[str, pl.DataFrame]:
        return {
            "core_rounds": pl.DataFrame(self.rounds, schema=polars_schema(CORE_ROUNDS)),
            "core_wagers": pl.DataFrame(self.wagers, schema=polars_schema(CORE_WAGERS)),
            "core_actions": pl.DataFrame(self.actions, schema=polars_schema(CORE_ACTIONS)),
            "core_device_events": pl.DataFrame(self.events, schema=polars_schema(CORE_DEVICE_EVENTS)),
            "core_quarantine": pl.DataFrame(self.quarantine, schema=polars_schema(CORE_QUARANTINE)),
        }

    def write_db(self, path: Path) -> Path:
        from pipelines.db import open_writer

        con = open_writer(path)
        try:
            for name, df in self.frames().items():
                con.register("_frame", df.to_arrow())
                con.execute(f"DELETE FROM {name}")
                con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _frame")
                con.unregister("_frame")
        finally:
            con.close()
        return path

    def connection(self):
        """An in-memory database with the canonical tables holding this night (what the ingest would write)."""
        from pipelines.db import open_memory_writer

        con = open_memory_writer()
        for name, df in self.frames().items():
            con.register("_frame", df.to_arrow())
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _frame")
            con.unregister("_frame")
        return con

    def audit(self, params=None, groups: int | None = None):
        """Audit every partition with the plain functions; returns (settlements, findings) over the night.

        ``groups``: run the partitions in that many groups (as the flow does) instead of one by one."""
        con = self.connection()
        try:
            return audit_connection(con, params, groups)
        finally:
            con.close()

    def audit_files(self, folder: Path, params=None):
        """Write the night as files, load them with the ingest (as ``pitaudit audit`` does) and audit the
        database it wrote with the plain functions: (settlements, findings, ingest summary)."""
        from pipelines.db import open_writer
        from pipelines.ingest.run import ingest_folder

        folder = Path(folder)
        inp = self.write_input(folder / "night")
        con = open_writer(folder / "audit.duckdb")
        try:
            summary = ingest_folder(con, inp, "06:00")
            settlements, findings = audit_connection(con, params)
        finally:
            con.close()
        return settlements, findings, summary


def audit_connection(con, params=None, groups: int | None = None):
    """Audit every partition of the database behind ``con`` with the flow's plain functions."""
    from pipelines.audit.detectors.burns import missing_shoe_burns, shoe_rulesets
    from pipelines.audit.detectors.gaps import detect_gaps
    from pipelines.audit.findings import finalize
    from pipelines.audit.load import contiguous_groups
    from pipelines.audit.load import load_gap_evidence, load_partition, load_shoe_openings, partition_keys
    from pipelines.audit.params import AuditParams
    from pipelines.audit.partition import audit_partition

    params = params or AuditParams()
    keys = partition_keys(con, params)
    plan = contiguous_groups(keys, groups) if groups else [(k,) for k in keys.select("gaming_day", "table_id").iter_rows()]
    results = [audit_partition(load_partition(con, g, params), params) for g in plan]
    jumps, numbers = load_gap_evidence(con, params)
    settlements = pl.concat([r.settlements for r in results]) if results else None
    burns = missing_shoe_burns(shoe_rulesets(load_shoe_openings(con, params), params))
    findings = finalize([r.findings for r in results] + [detect_gaps(jumps, numbers), burns])
    return settlements, findings
