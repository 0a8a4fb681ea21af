"""``ground_truth.csv``: one row per planted fault or behaviour, in the finding kinds' names.

Columns (the issue's): ``kind, table_id, round_no, wager_id, player_id, dealer_id, detail``. A
fault on a wager names the wager; a fault on a round names the round; a behaviour names the
player, dealer or table it concerns. ``kind`` is a finding kind of the output contract
(``payout_mismatch`` ... ``collusion_pattern``), or ``quarantine`` for a malformed input line the
audit must set aside (its ``detail`` names the file and line). ``detail`` starts with the variant
(``commission_not_taken: ...``) so a measurement can break recall down by how the fault was made.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("kind", "table_id", "round_no", "wager_id", "player_id", "dealer_id", "detail")

#: Every kind a ground-truth row may carry.
KINDS = (
    "payout_mismatch",
    "limit_breach",
    "differential_breach",
    "card_integrity",
    "drawing_rule_violation",
    "result_mismatch",
    "void_not_honoured",
    "free_hand_wager",
    "late_wager",
    "sequence_gap",
    "unmatched_round",
    "quarantine",
    "hold_anomaly",
    "player_luck_anomaly",
    "advantage_play",
    "collusion_pattern",
)


@dataclass(frozen=True, slots=True)
class TruthRow:
    kind: str
    table_id: str
    round_no: int | None
    wager_id: str | None
    player_id: str | None
    dealer_id: str | None
    detail: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown ground-truth kind {self.kind!r}")

    def sort_key(self) -> tuple:
        return (self.table_id, self.round_no if self.round_no is not None else -1, self.kind, self.wager_id or "", self.detail)

    def cells(self) -> list[str]:
        return [
            self.kind,
            self.table_id,
            "" if self.round_no is None else str(self.round_no),
            self.wager_id or "",
            self.player_id or "",
            self.dealer_id or "",
            self.detail,
        ]


def write_ground_truth(path: Path, rows: list[TruthRow]) -> None:
    """Write the rows sorted by table, round, kind (a stable order: byte-identical for a seed)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for row in sorted(rows, key=TruthRow.sort_key):
        w.writerow(row.cells())
    path.write_text(buf.getvalue(), encoding="utf-8")


def read_ground_truth(path: Path) -> list[TruthRow]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = []
        for r in csv.DictReader(f):
            rows.append(
                TruthRow(
                    kind=r["kind"],
                    table_id=r["table_id"],
                    round_no=int(r["round_no"]) if r["round_no"] else None,
                    wager_id=r["wager_id"] or None,
                    player_id=r["player_id"] or None,
                    dealer_id=r["dealer_id"] or None,
                    detail=r["detail"],
                )
            )
        return rows
