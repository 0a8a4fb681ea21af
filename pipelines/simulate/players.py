"""Players and their sessions: who sits where, when, betting how.

A session is one player at one seat of one table for a stretch of time (or, at blackjack, a
back bettor wagering on someone else's seat). Seats alternate between empty spells and sessions;
about two thirds of sessions are rated (a ``player_id`` the casino knows), the rest unrated
(``player_id`` null). Rated players are drawn from a pool that persists across days and are never
in two places at once: a player is free again 30 minutes after a session ends.

The planted behaviours need particular players in particular places, so they are placed here too:
the card counter's blackjack sessions, the lucky player's baccarat sessions, and the colluder's
sessions following one dealer from table to table.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

import numpy as np

from pipelines.simulate.clock import MS_PER_MIN

#: Median session length in minutes per game, and the share of sessions that are rated.
SESSION_MEDIAN_MIN = {"baccarat": 35.0, "blackjack": 30.0, "holdem_bonus": 50.0}
RATED_SHARE = {"baccarat": 0.7, "blackjack": 0.6, "holdem_bonus": 0.55}
REST_MS = 30 * MS_PER_MIN


@dataclass(frozen=True, slots=True)
class Profile:
    """How a player bets. Amounts are in multiples of the table minimum (``unit``), rounded to chips."""

    unit: float  # the usual bet, in table minimums
    p_banker: float  # baccarat: Banker rather than Player
    p_side: float  # chance per round of a side bet (baccarat side bets, blackjack Pair, Hold'em Bonus)
    p_progressive: float  # Hold'em: the jackpot wager
    p_sit_out: float  # chance of sitting a round out
    hunch: bool  # blackjack: now and then strays from basic strategy (insurance, even money)


@dataclass(frozen=True, slots=True)
class Session:
    table: int  # table index
    seat: int
    start_ms: int
    end_ms: int
    player_id: str | None
    profile: Profile
    role: str = ""  # "", "back" (blackjack back bettor), "counter", "lucky", "colluder"


def draw_profiles(rng: np.random.Generator, n: int) -> list[Profile]:
    """``n`` betting profiles at once (one random draw per field for all of them)."""
    unit = np.clip(rng.lognormal(np.log(2.5), 0.8, n), 1.0, 40.0)
    banker = rng.uniform(0.45, 0.75, n)
    side = np.array([0.0, 0.05, 0.15, 0.35])[rng.choice(4, n, p=[0.35, 0.3, 0.25, 0.1])]
    prog = np.array([0.0, 0.5, 1.0])[rng.choice(3, n, p=[0.4, 0.3, 0.3])]
    sit = rng.uniform(0.02, 0.15, n)
    hunch = rng.random(n) < 0.1
    return [Profile(float(a), float(b), float(c), float(d), float(e), bool(f))
            for a, b, c, d, e, f in zip(unit.tolist(), banker.tolist(), side.tolist(), prog.tolist(), sit.tolist(),
                                        hunch.tolist())]


class PlayerPool:
    """Rated players by game family, created on demand, with their profiles and when they are free."""

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._ids = (rng.permutation(900_000) + 100_000).tolist()
        self._next = 0
        self.profiles: dict[str, Profile] = {}
        self._free: dict[str, list[str]] = {}  # game -> players free now (in release order)
        self._busy: dict[str, list[tuple[int, str]]] = {}  # game -> heap of (free_at, player)
        self._spare: list[Profile] = []  # profiles drawn ahead, for newcomers

    def new_id(self) -> str:
        pid = f"P-{self._ids[self._next]}"
        self._next += 1
        return pid

    def assign(self, game: str, start_ms: int, end_ms: int) -> str:
        """A rated player for a session: a free regular of the game, or a newcomer."""
        free = self._free.setdefault(game, [])
        busy = self._busy.setdefault(game, [])
        while busy and busy[0][0] <= start_ms:
            free.append(heapq.heappop(busy)[1])
        if free:
            k = int(self._rng.integers(len(free)))
            free[k], free[-1] = free[-1], free[k]
            pid = free.pop()
        else:
            pid = self.new_id()
            if not self._spare:
                self._spare = draw_profiles(self._rng, 256)[::-1]
            self.profiles[pid] = self._spare.pop()
        heapq.heappush(busy, (end_ms + REST_MS, pid))
        return pid

    def new_day(self) -> None:
        """Everyone goes home: every rated player is free at the start of the next day."""
        for game, busy in self._busy.items():
            free = self._free.setdefault(game, [])
            while busy:
                free.append(heapq.heappop(busy)[1])


def seat_sessions(
    rng: np.random.Generator, table: int, game: str, seats: int, open_ms: int, close_ms: int
) -> list[Session]:
    """Unassigned sessions filling a table's seats between its opening and closing (player ids later)."""
    median = SESSION_MEDIAN_MIN[game] * MS_PER_MIN
    occupancy = float(rng.uniform(0.45, 0.85))
    mean_gap = median * 1.2 * (1 - occupancy) / occupancy
    most = seats * ((close_ms - open_ms) // (6 * MS_PER_MIN) + 2)  # more sessions than can fit
    lengths = np.clip(rng.lognormal(np.log(median), 0.6, most), 6 * MS_PER_MIN, 300 * MS_PER_MIN).astype(np.int64).tolist()
    gaps = (rng.exponential(mean_gap, most + seats) + MS_PER_MIN).astype(np.int64).tolist()
    starts_now = (rng.random(seats) < occupancy).tolist()
    spans: list[tuple[int, int, int, str]] = []
    k = g = 0
    for seat in range(1, seats + 1):
        t = open_ms if starts_now[seat - 1] else open_ms + gaps[g]
        g += 1
        while t < close_ms:
            end = min(t + lengths[k], close_ms)
            k += 1
            if end - t >= 5 * MS_PER_MIN:
                spans.append((seat, t, end, ""))
            t = end + gaps[g]
            g += 1
    if game == "blackjack":  # back bettors: a few per hour, on a random seat, for 10-40 minutes
        hours = (close_ms - open_ms) / (60 * MS_PER_MIN)
        n_back = int(rng.poisson(1.5 * hours))
        starts = rng.integers(open_ms, max(open_ms + 1, close_ms - 10 * MS_PER_MIN), n_back).tolist()
        lens = (rng.uniform(10, 40, n_back) * MS_PER_MIN).astype(np.int64).tolist()
        where = rng.integers(1, seats + 1, n_back).tolist()
        for start, length, seat in zip(starts, lens, where):
            spans.append((seat, start, min(close_ms, start + length), "back"))
    profiles = draw_profiles(rng, len(spans))
    return [Session(table, seat, a, b, None, p, role) for (seat, a, b, role), p in zip(spans, profiles)]


def place_special(sessions: list[Session], special: Session) -> list[Session]:
    """Put ``special`` on its seat, trimming or dropping the ordinary seat sessions it overlaps."""
    out = []
    for s in sessions:
        if s.table != special.table or s.seat != special.seat or s.role == "back":
            out.append(s)
            continue
        if s.end_ms <= special.start_ms or s.start_ms >= special.end_ms:
            out.append(s)
            continue
        if s.start_ms < special.start_ms and special.start_ms - s.start_ms >= 5 * MS_PER_MIN:
            out.append(replace(s, end_ms=special.start_ms))
        if s.end_ms > special.end_ms and s.end_ms - special.end_ms >= 5 * MS_PER_MIN:
            out.append(replace(s, start_ms=special.end_ms))
    out.append(special)
    return out


def assign_rated(sessions: list[Session], games: dict[int, str], pool: PlayerPool, rng: np.random.Generator) -> list[Session]:
    """Give rated players to about ``RATED_SHARE`` of the sessions, earliest first; the rest stay unrated."""
    order = sorted(range(len(sessions)), key=lambda i: (sessions[i].start_ms, sessions[i].table, sessions[i].seat, sessions[i].role))
    out = list(sessions)
    draws = rng.random(len(sessions)).tolist()
    for k, i in enumerate(order):
        s = sessions[i]
        if s.role not in ("", "back"):
            continue  # the planted players already have their ids
        game = games[s.table]
        if draws[k] < RATED_SHARE[game]:
            pid = pool.assign(game, s.start_ms, s.end_ms)
            out[i] = Session(s.table, s.seat, s.start_ms, s.end_ms, pid, pool.profiles[pid], s.role)
    return out
