"""What a game module gets to play one table's gaming day, and where it puts what it made."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pipelines.simulate.catalogue import Ticket
from pipelines.simulate.config import CHIP
from pipelines.simulate.dealers import dealer_id_at, dealer_ids_at
from pipelines.simulate.ground_truth import TruthRow
from pipelines.simulate.plan import DayPlan, Specials, TablePlan
from pipelines.simulate.records import EventBuffer, RoundRec
from rulebook.ruleset import RuleSet


@dataclass
class Counters:
    """Numbers that run on across a table's days: game numbers, wager ids, shoes, device events."""

    round_no: int
    wager: int = 1
    shoe: int = 1
    seq: int = 1
    jackpot_meter: int = 0


class Stream:
    """Scalar random draws at Python speed: uniforms drawn from the table's generator in blocks.

    The per-round games (blackjack, Hold'em) make dozens of small draws a round; a numpy call per
    draw costs microseconds, a list lookup a few tens of nanoseconds. Deterministic: the blocks
    come from the table's own seeded generator, in order.
    """

    __slots__ = ("_rng", "_buf", "_i")

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._buf: list[float] = []
        self._i = 0

    def random(self) -> float:
        if self._i >= len(self._buf):
            self._buf = self._rng.random(8192).tolist()
            self._i = 0
        v = self._buf[self._i]
        self._i += 1
        return v

    def take(self, n: int) -> list[float]:
        """``n`` uniforms at once (for loops that would otherwise call :meth:`random` per step)."""
        if self._i + n > len(self._buf):
            self._buf = self._buf[self._i:] + self._rng.random(max(8192, n)).tolist()
            self._i = 0
        out = self._buf[self._i:self._i + n]
        self._i += n
        return out

    def integers(self, lo: int, hi: int) -> int:
        """An integer in ``lo``..``hi - 1``."""
        return lo + int(self.random() * (hi - lo))

    def uniform(self, lo: float, hi: float) -> float:
        return lo + self.random() * (hi - lo)

    def choice(self, options):
        return options[int(self.random() * len(options))]


def chip(amount: float, lo: int, hi: int) -> int:
    """Scalar :func:`chips`: whole chips within ``lo``..``hi``."""
    a = int(round(amount / CHIP)) * CHIP
    lo_c = -(-lo // CHIP) * CHIP
    hi_c = max(lo_c, (hi // CHIP) * CHIP)
    return lo_c if a < lo_c else hi_c if a > hi_c else a


@dataclass
class DayContext:
    plan: TablePlan
    day: DayPlan
    ruleset: RuleSet
    rng: np.random.Generator
    counters: Counters
    rounds: list[RoundRec] = field(default_factory=list)
    events: EventBuffer = field(default_factory=EventBuffer)
    truth: list[TruthRow] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    #: the tickets the game module did not plant (the generic ones, and any it could not place)
    leftover: list[Ticket] = field(default_factory=list)
    #: rounds (index in the day) holding a card copy beyond the shoe's decks: (card, card it replaced, shoe id)
    duplicates: dict[int, tuple[int, int, str]] = field(default_factory=dict)
    #: rounds (index in the day) no other fault may touch (they hold the evidence of a planted one)
    protected: set[int] = field(default_factory=set)
    fast: Stream | None = None
    under_min_players: set = field(default_factory=set)  # players already given an under-minimum wager today

    def __post_init__(self) -> None:
        if self.fast is None:
            self.fast = Stream(self.rng)

    @property
    def table(self):
        return self.plan.table

    @property
    def specials(self) -> Specials:
        return self.plan.specials

    def next_wager_id(self) -> str:
        wid = f"W-{self.table.index + 1:04d}{self.counters.wager:07d}"
        self.counters.wager += 1
        return wid

    def wager_ids(self, n: int) -> list[str]:
        """``n`` fresh wager ids at once."""
        first = self.counters.wager
        self.counters.wager += n
        prefix = f"W-{self.table.index + 1:04d}"
        return [f"{prefix}{k:07d}" for k in range(first, first + n)]

    def next_shoe_id(self) -> str:
        compact = self.table.table_id.replace("-", "")
        sid = f"S-{compact}-{self.counters.shoe:04d}"
        self.counters.shoe += 1
        return sid

    def dealers(self, t_ms: np.ndarray) -> list[str]:
        return dealer_ids_at(self.plan.roster, self.table.index, t_ms, self.day.day_start_ms)

    def dealer_at(self, t_ms: int) -> str:
        return dealer_id_at(self.plan.roster, self.table.index, t_ms, self.day.day_start_ms)

    def count(self, key: str, n: int = 1) -> None:
        self.stats[key] = self.stats.get(key, 0) + n

    def add_truth(self, kind: str, rec: RoundRec | None, detail: str, wager=None, player_id=None, dealer_id=None) -> None:
        self.truth.append(
            TruthRow(
                kind=kind,
                table_id=self.table.table_id,
                round_no=None if rec is None else rec.round_no,
                wager_id=None if wager is None else wager.wager_id,
                player_id=(wager.player_id if wager is not None else player_id),
                dealer_id=(rec.dealer_id if rec is not None else dealer_id),
                detail=detail,
            )
        )


def chips(amount: np.ndarray | float, lo: int, hi: int) -> np.ndarray:
    """Amounts as the player puts them down: whole chips, within ``lo``..``hi`` (integer cents)."""
    a = np.round(np.asarray(amount, dtype=np.float64) / CHIP).astype(np.int64) * CHIP
    lo_c = -(-lo // CHIP) * CHIP
    hi_c = (hi // CHIP) * CHIP
    return np.clip(a, lo_c, max(lo_c, hi_c))


def sessions_per_round(day: DayPlan, opens: np.ndarray, roles: tuple[str, ...] | None = None):
    """``(round index, session)`` for every round a session covers (bets opened during the session)."""
    out_r: list[np.ndarray] = []
    out_s: list[int] = []
    for k, s in enumerate(day.sessions):
        if roles is not None and s.role not in roles:
            continue
        lo = int(np.searchsorted(opens, s.start_ms, side="left"))
        hi = int(np.searchsorted(opens, s.end_ms, side="left"))
        if hi > lo:
            out_r.append(np.arange(lo, hi))
            out_s.extend([k] * (hi - lo))
    if not out_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_r), np.array(out_s, dtype=np.int64)
