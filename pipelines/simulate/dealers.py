"""Dealers and their rotation: who deals at which table at any instant.

Each pit works three eight-hour shifts from the gaming day's start (06:00, 14:00, 22:00 local).
A shift has ``k + ceil(k / 3)`` dealers for a pit of ``k`` tables. Every 20 minutes each dealer
moves one table along the pit; after the last table a dealer takes a break of
``ceil(k / 3)`` stints (so about 40 minutes after two hours for a pit of six). The schedule is a
formula, so the dealer of any round is found by arithmetic over arrays of instants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipelines.simulate.config import ROTATION_MS, SHIFT_HOURS
from pipelines.simulate.floor import Table

SHIFT_MS = SHIFT_HOURS * 3600 * 1000
SHIFTS_PER_DAY = 24 // SHIFT_HOURS


@dataclass(frozen=True, slots=True)
class PitRoster:
    pit: int
    table_positions: dict[int, int]  # table index -> position in the pit (0..k-1)
    shifts: tuple[tuple[str, ...], ...]  # dealer ids per shift of the day (same every day)

    @property
    def size(self) -> int:
        return len(self.table_positions)


def dealers_needed(k: int) -> int:
    return k + math.ceil(k / 3)


def build_rosters(tables: tuple[Table, ...]) -> dict[int, PitRoster]:
    """One roster per pit; dealer ids ``D1001`` upward, in pit and shift order."""
    pits: dict[int, list[Table]] = {}
    for t in tables:
        pits.setdefault(t.pit, []).append(t)
    rosters: dict[int, PitRoster] = {}
    next_id = 1001
    for pit in sorted(pits):
        members = pits[pit]
        m = dealers_needed(len(members))
        shifts = []
        for _ in range(SHIFTS_PER_DAY):
            shifts.append(tuple(f"D{next_id + i}" for i in range(m)))
            next_id += m
        rosters[pit] = PitRoster(pit, {t.index: j for j, t in enumerate(members)}, tuple(shifts))
    return rosters


def dealer_index_at(roster: PitRoster, table_index: int, t_ms: np.ndarray, day_start_ms: int) -> tuple[np.ndarray, np.ndarray]:
    """For each instant: the shift number and the index of the dealer (in that shift's list) at the table."""
    t = np.asarray(t_ms, dtype=np.int64) - day_start_ms
    shift = np.clip(t // SHIFT_MS, 0, SHIFTS_PER_DAY - 1)
    slot = (t - shift * SHIFT_MS) // ROTATION_MS
    m = len(roster.shifts[0])
    j = roster.table_positions[table_index]
    return shift, (j + slot) % m


def dealer_ids_at(roster: PitRoster, table_index: int, t_ms: np.ndarray, day_start_ms: int) -> list[str]:
    shift, idx = dealer_index_at(roster, table_index, t_ms, day_start_ms)
    return [roster.shifts[s][i] for s, i in zip(shift.tolist(), idx.tolist())]


def dealer_id_at(roster: PitRoster, table_index: int, t_ms: int, day_start_ms: int) -> str:
    """Scalar :func:`dealer_ids_at`."""
    t = t_ms - day_start_ms
    shift = min(max(t // SHIFT_MS, 0), SHIFTS_PER_DAY - 1)
    slot = (t - shift * SHIFT_MS) // ROTATION_MS
    ids = roster.shifts[shift]
    return ids[(roster.table_positions[table_index] + slot) % len(ids)]


def stints_of(roster: PitRoster, dealer_id: str, day_start_ms: int) -> list[tuple[int, int, int]]:
    """``(table index, start, end)`` of every 20-minute stint the dealer deals in the day."""
    by_position = {j: ti for ti, j in roster.table_positions.items()}
    out = []
    for s, ids in enumerate(roster.shifts):
        if dealer_id not in ids:
            continue
        d = ids.index(dealer_id)
        m = len(ids)
        for slot in range(SHIFT_MS // ROTATION_MS):
            j = (d - slot) % m
            if j in by_position:
                start = day_start_ms + s * SHIFT_MS + slot * ROTATION_MS
                out.append((by_position[j], start, start + ROTATION_MS))
    return out
