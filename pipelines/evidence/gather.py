"""Gather one round's evidence from the database, read-only, and re-settle it with the audit's own steps.

Nothing here decides a rule. The round's partition (its table's gaming day) is read with the audit's loader
(:func:`pipelines.audit.load.load_partition`), reconstructed and re-settled with the audit's own functions
(:mod:`pipelines.audit.partition`), so the pack says what tonight's audit would say, limits and the
differential included (the first under-minimum wager of a player, TBAC-7.17, needs the whole partition).
The card-by-card narrative comes from the pure engine, fed the :class:`rulebook.round.RoundInput` the audit
builds (:func:`pipelines.audit.engine_pass.round_input`), asking for the steps the nightly run skips.

What the database recorded that night (the audit's ``out_settlements`` and ``out_findings``, the source files'
hashes) is read beside it, so a reviewer sees both, and any difference between them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from pipelines.audit.engine_pass import _settle_one, round_input
from pipelines.audit.load import _orphan_rounds, load_partition
from pipelines.audit.params import AuditParams
from pipelines.audit.partition import detect_in_partition, reconstruct_partition, settle_partition
from pipelines.db import get_meta
from pipelines.evidence.manifest import sha256_file
from pipelines.evidence.steps import card_rows
from rulebook.cards import card_text

NEIGHBOURS = 5  # rounds of the same shoe shown on either side of the disputed round


class EvidenceError(RuntimeError):
    """The round cannot be found or read; the message is one line a person can act on."""


@dataclass(frozen=True)
class RoundEvidence:
    """Everything the pack shows, as JSON-ready values (text, integers, lists, dicts): the renderer decides nothing."""

    round: dict  # the table's record and the reconstruction (times in ISO 8601 UTC)
    cards: list[dict]  # each device event of the round (card or burn), in device order, with the step it fed
    steps: list[dict]  # the engine's narrative, every step with its clause
    outcome: dict  # the engine's result in the recorded_result vocabulary, and what the table recorded
    wagers: list[dict]  # each wager: recorded, re-settled now, as audited that night, the clause behind each amount
    irregularities: list[dict]  # what the engine calls irregular in this round
    findings: list[dict]  # the findings of the round, as the audit recorded them (out_findings)
    findings_now: list[dict]  # the findings the audit's detectors raise on re-running the partition now
    neighbours: list[dict]  # rounds of the same shoe around this one
    sources: list[dict]  # the source files the round came from, with recorded and on-disk hashes
    source_lines: list[dict]  # which line of which file holds each record of the round
    notes: list[str] = field(default_factory=list)


def _iso(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def _plain(row: dict) -> dict:
    """Dates and times as ISO text, lists as lists: a row JSON can hold."""
    out = {}
    for k, v in row.items():
        if isinstance(v, (dt.datetime, dt.date)):
            out[k] = _iso(v)
        elif isinstance(v, pl.Series):
            out[k] = v.to_list()
        else:
            out[k] = v
    return out


def json_ready(v):
    """An engine outcome's value as JSON data: a list of cards stays a list, a Hold'em outcome's seats an object
    (keys as text), and anything else not JSON text (a card code object) its text. It was the Python text of the
    value ("['7s', '9c', '4h']", "{'2': {'status': 'played', ...}}"): round.json held a string a program could not
    read, and the page showed the reviewer Python."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): json_ready(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_ready(x) for x in v]
    return str(v)


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]).fetchall()[0][0])


def audit_params(con: duckdb.DuckDBPyConnection) -> AuditParams:
    """The parameters the database was loaded with (its gaming-day start, recorded by the ingest in minutes)."""
    minutes = get_meta(con, "gaming_day_start") if _has_table(con, "meta_schema") else None
    if minutes is None or not str(minutes).isdigit():
        return AuditParams()
    m = int(minutes)
    return AuditParams(gaming_day_start=f"{m // 60:02d}:{m % 60:02d}")


def find_gaming_day(con: duckdb.DuckDBPyConnection, table_id: str, round_no: int, params: AuditParams) -> dt.date:
    """The gaming day of the round: the table system's, else (a round only the device dealt) its first card's."""
    days = [r[0] for r in con.execute(
        "SELECT DISTINCT gaming_day FROM core_rounds WHERE table_id = ? AND round_no = ? ORDER BY 1",
        [table_id, round_no]).fetchall()]
    if not days:
        days = [r[0] for r in con.execute(
            f"SELECT DISTINCT gaming_day FROM ({_orphan_rounds(params.day_start_minutes)}) "
            "WHERE table_id = ? AND round_no = ? ORDER BY 1", [table_id, round_no]).fetchall()]
    if not days:
        raise EvidenceError(f"no round {round_no} of table {table_id!r} in the database (neither the table system nor a device has it)")
    if len(days) > 1:
        listed = ", ".join(d.isoformat() for d in days)
        raise EvidenceError(f"round {round_no} of table {table_id!r} exists on several gaming days ({listed}): name one with --gaming-day")
    return days[0]


def _rows(df: pl.DataFrame) -> list[dict]:
    return [_plain(r) for r in df.iter_rows(named=True)]


def _of_round(df: pl.DataFrame, table_id: str, round_no: int) -> pl.DataFrame:
    return df.filter((pl.col("table_id") == table_id) & (pl.col("round_no") == round_no))


def _db_frame(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())


class Recorded:
    """What the database recorded that night, looked up per round: one query each (the ``pitaudit evidence``
    command); :class:`pipelines.evidence.batch.PrefetchedRecord` answers the same questions from frames read in
    one batch (the audit's packs)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.has_settlements = _has_table(con, "out_settlements")
        self.has_findings = _has_table(con, "out_findings")

    def settlements(self, table_id: str, round_no: int, day: dt.date) -> list[dict]:
        if not self.has_settlements:
            return []
        return list(_db_frame(self.con, "SELECT * FROM out_settlements WHERE table_id = ? AND round_no = ? AND gaming_day = ?",
                              [table_id, round_no, day]).iter_rows(named=True))

    def findings(self, table_id: str, round_no: int, day: dt.date) -> list[dict]:
        if not self.has_findings:
            return []
        return _rows(_db_frame(self.con, f"""
            SELECT {RECORDED_FINDING_COLUMNS}
            FROM out_findings WHERE table_id = ? AND round_no = ? AND gaming_day = ? ORDER BY kind, wager_id, finding_id""",
            [table_id, round_no, day]))

    def finding_counts(self, table_id: str, day: dt.date, lo: int, hi: int) -> dict[int, int]:
        if not self.has_findings:
            return {}
        return dict(self.con.execute(
            "SELECT round_no, count(*) FROM out_findings WHERE table_id = ? AND gaming_day = ? AND round_no BETWEEN ? AND ? "
            "GROUP BY round_no", [table_id, day, lo, hi]).fetchall())

    def source_file(self, name: str) -> tuple | None:
        rows = self.con.execute("SELECT sha256, size_bytes, input_root FROM core_source_files WHERE source_file = ?", [name]).fetchall()
        return rows[0] if rows else None

    def disk_sha256(self, path: Path) -> str | None:
        return sha256_file(path) if path.is_file() else None


RECORDED_FINDING_COLUMNS = """finding_id, kind, severity, wager_id, seat, player_id, dealer_id, expected_net, recorded_net, difference,
                   rule_ref, detail, source_file, source_line"""


@dataclass(frozen=True)
class Frames:
    """The frames a round's evidence is assembled from: the loaded partition (or the rounds of it wanted), its
    reconstruction, its settlement and the findings the detectors raise on it."""

    rounds: pl.DataFrame
    wagers: pl.DataFrame
    actions: pl.DataFrame
    events: pl.DataFrame
    recon: pl.DataFrame
    settled_rounds: pl.DataFrame
    settled_wagers: pl.DataFrame
    fresh: pl.DataFrame  # FINDINGS_SCHEMA
    # True when wagers, actions, events, settled_rounds, settled_wagers and fresh hold only the round's own rows (the
    # audit's packs cut them per round once): the round's rows are then the frames themselves, not filtered again
    per_round: bool = False
    # the group's shoes and table records cut once for all its packs (:class:`pipelines.evidence.batch.Neighbourhood`),
    # else filtered here for each round
    neighbourhood: object | None = None
    # True when wagers, actions, events and settled_wagers are the round's own rows in the order this module sorts
    # them into (wager, action, device order), each key once (the audit's packs sort a group's rows once): not sorted
    # again per round
    in_round_order: bool = False


def gather_round(
    con: duckdb.DuckDBPyConnection, table_id: str, round_no: int, gaming_day: dt.date | None = None,
    params: AuditParams | None = None,
) -> RoundEvidence:
    """The evidence of one round, read with the read-only connection ``con`` (see the module docstring)."""
    params = params or audit_params(con)
    day = gaming_day or find_gaming_day(con, table_id, round_no, params)
    part = load_partition(con, ((day, table_id),), params)
    recon = reconstruct_partition(part, params)
    settled = settle_partition(part, recon, params)
    fresh = detect_in_partition(recon, settled, params)
    frames = Frames(part.rounds, part.wagers, part.actions, part.events, recon, settled.rounds, settled.wagers, fresh)
    return assemble_round(frames, Recorded(con), table_id, round_no, day, params)


def assemble_round(frames: Frames, recorded: "Recorded", table_id: str, round_no: int, day: dt.date,
                   params: AuditParams) -> RoundEvidence:
    """One round's evidence from ``frames`` and what the database recorded (``recorded``)."""
    recon, part_rounds = frames.recon, frames.rounds

    def this_round(df: pl.DataFrame) -> pl.DataFrame:
        return df if frames.per_round else _of_round(df, table_id, round_no)

    def in_order(df: pl.DataFrame, by: str | list[str]) -> pl.DataFrame:
        return this_round(df) if frames.in_round_order else this_round(df).sort(by)

    hood = frames.neighbourhood
    if hood is not None:  # the round's first row of the table's reconstruction and records, looked up
        recon_row, table_row = hood.first_rows(table_id, round_no)
    else:
        rec = _of_round(recon, table_id, round_no)
        table_rec = _of_round(part_rounds, table_id, round_no)
        recon_row = rec.row(0, named=True) if rec.height else {}
        table_row = table_rec.row(0, named=True) if table_rec.height else {}
    if not recon_row and not table_row:
        raise EvidenceError(f"no round {round_no} of table {table_id!r} on gaming day {day.isoformat()}")
    ctx = this_round(frames.settled_rounds)
    ctx_row = ctx.row(0, named=True) if ctx.height else None
    wagers_in = in_order(frames.wagers, "wager_order")
    actions_in = in_order(frames.actions, "action_order")
    events = in_order(frames.events, ["device_id", "event_seq"])
    notes: list[str] = []
    if recon_row.get("note"):
        notes.append(recon_row["note"])

    # the engine's narrative: the audit's RoundInput, with the steps the nightly run does not ask for
    result = None
    ruleset_label = None
    if ctx_row is not None and ctx_row.get("complete") and ctx_row.get("ruleset_key"):
        rs = params.ruleset(ctx_row["ruleset"], day)
        ruleset_label = ctx_row["ruleset_key"]
        ri = round_input(ctx_row, wagers_in.to_dicts(), actions_in.to_dicts(), "amount", rs)
        result, error = _settle_one(ri, params)
        if error:
            notes.append(f"the engine could not settle this round: {error}")
    elif ctx_row is not None and ctx_row.get("ruleset_error"):
        notes.append(ctx_row["ruleset_error"])
    steps = [{"what": s.what, "clause": s.clause} for s in (result.steps if result else ())]
    cards = card_rows(events.to_dicts(), steps)

    # settlements: re-settled now (the audit's functions) beside what the audit recorded that night
    now = in_order(frames.settled_wagers, "wager_order")
    recorded_audit: dict[str, dict] = {r["wager_id"]: r for r in recorded.settlements(table_id, round_no, day)}
    wagers = []
    for w in now.iter_rows(named=True):
        then = recorded_audit.get(w["wager_id"])
        wagers.append({
            "wager_id": w["wager_id"], "wager_order": w["wager_order"], "seat": w["seat"], "player_id": w["player_id"],
            "bet": w["bet"], "amount": w["amount"], "placed_at": _iso(w["placed_at"]),
            "settled_amount": w["settled_amount"], "amount_clause": _amount_clause(w),
            "cards_net": w["cards_net"], "pay_clause": w["pay_clause"],
            "recorded_net": w["recorded_net"], "expected_net": w["expected_net"], "difference": w["difference"],
            "clause": w["clause"], "adjustment": w["adjustment"], "detail": w["detail"],
            "unsettled_reason": w["unsettled_reason"],
            "limit_issue": w.get("limit_issue"), "limit_clause": w.get("limit_clause"),
            "audited_expected_net": None if then is None else then["expected_net"],
            "audited_clause": None if then is None else then["clause"],
            "same_as_audited": None if then is None else (then["expected_net"] == w["expected_net"] and then["clause"] == w["clause"]),
            "source_file": w["source_file"], "source_line": w["source_line"],
        })
    if recorded_audit and any(x["same_as_audited"] is False for x in wagers):
        notes.append("re-settled now, some wagers differ from what the audit recorded that night (see 'as audited'): "
                     "the rule set, the engine or the data changed since")
    if not recorded_audit and wagers:
        notes.append("the database holds no audited settlements for this round (only ingested, or not audited yet)")

    irregularities = [
        {"kind": x.kind, "clause": x.clause, "detail": x.detail, "voids_round": bool(x.voids_round)}
        for x in (result.irregularities if result else ())
    ]
    findings = recorded.findings(table_id, round_no, day)
    findings_now = _rows(this_round(frames.fresh).select(
        "finding_id", "kind", "severity", "wager_id", "expected_net", "recorded_net", "difference", "rule_ref", "detail"))

    engine_outcome = dict(result.outcome) if result and result.outcome else {}
    outcome = {
        "engine": {k: json_ready(v) for k, v in engine_outcome.items()},
        "engine_void": bool(result.void) if result else None,
        "recorded_result": table_row.get("recorded_result"),
        "status": table_row.get("status"),
    }
    round_info = {
        "table_id": table_id, "round_no": round_no, "gaming_day": day.isoformat(),
        "game": table_row.get("game"), "ruleset": table_row.get("ruleset"), "ruleset_version": ruleset_label,
        "dealer_id": table_row.get("dealer_id"), "currency": table_row.get("currency"),
        "shoe_id": table_row.get("shoe_id"), "device_shoe_id": recon_row.get("device_shoe_id"),
        "device_id": recon_row.get("device_id"), "decks": recon_row.get("decks"), "deal_mode": table_row.get("deal_mode"),
        "status": table_row.get("status"), "jackpot_meter": table_row.get("jackpot_meter"),
        "limits": {k: table_row.get(f"limit_{k}") for k in ("min", "max", "differential", "side_min", "side_max")},
        "bets_open_at": _iso(table_row.get("bets_open_at")), "bets_closed_at": _iso(table_row.get("bets_closed_at")),
        "first_card_at": _iso(recon_row.get("first_card_at")), "settled_at": _iso(table_row.get("settled_at")),
        "utc_offset_minutes": table_row.get("utc_offset_minutes"),
        "has_table_record": bool(table_row), "has_cards": bool(recon_row.get("has_cards")),
        "complete": bool(recon_row.get("complete")),
        "actions": [
            {"order": a["action_order"], "seat": a["seat"], "hand": a["hand"], "action": a["action"], "amount": a["amount"],
             "ts": _iso(a["ts"]), "wager_ids": a["wager_ids"]}
            for a in actions_in.iter_rows(named=True)
        ],
    }
    return RoundEvidence(
        round=round_info, cards=cards, steps=steps, outcome=outcome, wagers=wagers, irregularities=irregularities,
        findings=findings, findings_now=findings_now,
        neighbours=_neighbours(recorded, recon, part_rounds, table_id, round_no, day,
                               recon_row.get("device_shoe_id") or table_row.get("shoe_id"), frames.neighbourhood),
        sources=source_files(recorded, table_row, wagers_in, actions_in, events),
        source_lines=_source_lines(table_row, wagers_in, actions_in, events),
        notes=notes,
    )


def _amount_clause(w: dict) -> str | None:
    """The clause that set the amount a wager is settled at, when it is not the amount placed (limit, ratio,
    differential, or an override to nothing: void, Free Hand, a returned wager)."""
    if w["settled_amount"] == w["amount"]:
        return None
    if w.get("override"):
        return w.get("override_clause")
    if w.get("adjustment") == "differential":
        return w.get("differential_clause")
    return w.get("limit_clause") or w.get("clause")


def _neighbours(recorded: Recorded, recon: pl.DataFrame, rounds: pl.DataFrame, table_id: str, round_no: int, day: dt.date,
                shoe: str | None, hood=None) -> list[dict]:
    """Up to :data:`NEIGHBOURS` rounds of the same shoe either side, with their cards and the audit's finding count.
    ``hood``: the same rows of ``recon`` and ``rounds`` already cut by shoe and by table (a group of packs)."""
    if shoe is None:
        return []
    if hood is not None:
        same = hood.shoe(table_id, shoe)
    else:
        same = recon.filter((pl.col("table_id") == table_id) & (pl.col("device_shoe_id") == shoe)).sort("round_no")
    numbers = same["round_no"].to_list()
    if round_no not in numbers:
        return []
    i = numbers.index(round_no)
    window = same.slice(max(0, i - NEIGHBOURS), 2 * NEIGHBOURS + 1)
    counts: dict[int, int] = {}
    if window.height:
        counts = recorded.finding_counts(table_id, day, min(window["round_no"]), max(window["round_no"]))
    # the table's record of the window's rounds only (a table's day is a thousand rounds; a round number twice, on two
    # days, keeps its last row as a dict of every round did)
    if hood is not None:
        table = hood.table(table_id)
    else:
        shown = window["round_no"]
        table = {r["round_no"]: r for r in rounds.filter((pl.col("table_id") == table_id)
                                                         & pl.col("round_no").is_in(shown.to_list())).iter_rows(named=True)}
    out = []
    for r in window.iter_rows(named=True):
        t = table.get(r["round_no"], {})
        out.append({
            "round_no": r["round_no"], "this_round": r["round_no"] == round_no,
            "first_card_at": _iso(r["first_card_at"]), "dealer_id": t.get("dealer_id"), "status": t.get("status"),
            "cards": [card_text(int(c)) or "(empty)" for c in (r["dealt"] or [])],
            "recorded_result": t.get("recorded_result"), "findings": int(counts.get(r["round_no"], 0)),
        })
    return out


def _source_lines(table_row: dict, wagers: pl.DataFrame, actions: pl.DataFrame, events: pl.DataFrame) -> list[dict]:
    out = []
    if table_row:
        out.append({"record": "round", "source_file": table_row["source_file"], "source_line": table_row["source_line"]})
    for w in wagers.iter_rows(named=True):
        out.append({"record": f"wager {w['wager_id']}", "source_file": w["source_file"], "source_line": w["source_line"]})
    for e in events.iter_rows(named=True):
        out.append({"record": f"device event {e['device_id']} #{e['event_seq']} ({e['event']})", "source_file": e["source_file"],
                    "source_line": e["source_line"]})
    return out


def source_files(record: Recorded, table_row: dict, wagers: pl.DataFrame, actions: pl.DataFrame, events: pl.DataFrame) -> list[dict]:
    """Each source file of the round: the hash the ingest recorded, and the hash of what is on disk now (if it is)."""
    names = set()
    if table_row:
        names.add(table_row["source_file"])
    for df in (wagers, actions, events):
        names |= set(df["source_file"].drop_nulls().to_list())
    out = []
    for name in sorted(names):
        row = record.source_file(name)
        recorded, size, root = row if row else (None, None, None)
        disk_path = Path(root) / name if root else None
        on_disk = record.disk_sha256(disk_path) if disk_path is not None else None
        status = ("not recorded by the ingest" if recorded is None else "missing on disk" if on_disk is None
                  else "unchanged" if on_disk == recorded else "CHANGED since the ingest")
        out.append({"source_file": name, "recorded_sha256": recorded, "recorded_size_bytes": size,
                    "path_on_disk": None if disk_path is None else str(disk_path), "disk_sha256": on_disk, "status": status})
    return out
