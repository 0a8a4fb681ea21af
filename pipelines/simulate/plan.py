"""The night's plan, made once before any table plays: floor, rounds, sessions, dealers, faults.

Whatever involves more than one table is decided here, in one process, from the run's seed:
how many rounds each table deals and when it opens, the dealers' rotation, every player's
sessions (a rated player is never at two tables at once), where the planted behaviours happen,
and how many faults of which variant each table plants. Each table then plays its plan on its own
random stream (``SeedSequence(seed, spawn_key=(1, table))``), so the output does not depend on
how many processes run the tables, or in which order they finish.
"""

from __future__ import annotations

import datetime as dt
import gc
import math
from dataclasses import dataclass, replace

import numpy as np

from pipelines.simulate.catalogue import Ticket, draw_tickets
from pipelines.simulate.clock import MS_PER_HOUR, MS_PER_MIN, gaming_day_start_ms
from pipelines.simulate.config import (
    MAX_HOURS,
    MIN_AUTO_TABLES,
    PACE,
    PLANNED_HOURS,
    RULESET_SHARES,
    Behaviours,
    SimConfig,
)
from pipelines.simulate.dealers import PitRoster, build_rosters, stints_of
from pipelines.simulate.floor import Table, build_floor, ruleset_counts
from pipelines.simulate.players import PlayerPool, Profile, Session, assign_rated, place_special, seat_sessions
from rulebook.catalogue import UnknownRuleSet, builtin


class PlanError(ValueError):
    """The run cannot be planned as asked (one line, for the CLI)."""


@dataclass(frozen=True, slots=True)
class DayPlan:
    day_no: int
    day: dt.date
    day_start_ms: int
    n_rounds: int
    open_ms: int
    sessions: tuple[Session, ...]
    tickets: tuple[Ticket, ...]


@dataclass(frozen=True, slots=True)
class Specials:
    """Who and where the planted behaviours are (ids are None when a behaviour is off or has no place)."""

    behaviours: Behaviours
    counter_id: str | None = None
    lucky_id: str | None = None
    colluder_id: str | None = None
    colluding_dealer: str | None = None
    drift_table: str | None = None


@dataclass(frozen=True, slots=True)
class TablePlan:
    seed: int
    table: Table
    roster: PitRoster
    days: tuple[DayPlan, ...]
    specials: Specials
    first_round_no: int
    first_seq: int

    @property
    def rounds(self) -> int:
        return sum(d.n_rounds for d in self.days)


@dataclass(frozen=True, slots=True)
class NightPlan:
    tables: tuple[TablePlan, ...]
    specials: Specials

    @property
    def rounds(self) -> int:
        return sum(t.rounds for t in self.tables)


COUNTER_PROFILE = Profile(unit=2.0, p_banker=0.5, p_side=0.0, p_progressive=0.0, p_sit_out=0.0, hunch=False)
LUCKY_PROFILE = Profile(unit=1.5, p_banker=0.6, p_side=1.0, p_progressive=0.0, p_sit_out=0.03, hunch=False)
COLLUDER_PROFILE = Profile(unit=4.0, p_banker=0.6, p_side=0.05, p_progressive=0.0, p_sit_out=0.03, hunch=False)


def mix_pace(shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> float:
    """Rounds per table-hour of the floor's mix of games (``shares``: table shares per rule set)."""
    cat = builtin()
    return sum(share * PACE[cat.game_of(name)] for name, share in shares) / sum(s for _, s in shares)


def floor_pace(n_tables: int, shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> float:
    """Rounds per hour the whole floor deals with ``n_tables`` tables in the mix ``shares``."""
    cat = builtin()
    return sum(count * PACE[cat.game_of(name)] for name, count in ruleset_counts(n_tables, shares))


def tables_needed(rounds: int, hours: float, shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> int:
    """The fewest tables that deal ``rounds`` with no table busier than ``hours`` (10 % spread allowed)."""
    n = max(1, math.ceil(rounds / (mix_pace(shares) * hours)))
    while rounds * 1.1 / floor_pace(n, shares) > hours:
        n += 1
    return n


def tables_for(rounds: int, tables: int, shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> int:
    """The floor size: as given, or enough tables to deal ``rounds`` in about ``PLANNED_HOURS`` each."""
    if tables > 0:
        return tables
    return max(MIN_AUTO_TABLES, tables_needed(rounds, PLANNED_HOURS, shares))


def allocate_rounds(rng: np.random.Generator, floor: tuple[Table, ...], rounds: int,
                    shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> np.ndarray:
    """Rounds per table for one day: proportional to the game's pace, give or take 10 %, summing exactly."""
    pace = np.array([PACE[t.game] for t in floor])
    weight = pace * rng.uniform(0.9, 1.1, len(floor))
    raw = rounds * weight / weight.sum()
    whole = np.floor(raw).astype(np.int64)
    order = np.argsort(-(raw - whole), kind="stable")
    whole[order[: rounds - int(whole.sum())]] += 1
    hours = whole / pace
    worst = int(np.argmax(hours))
    if hours[worst] > MAX_HOURS:
        need = tables_needed(rounds, MAX_HOURS, shares)
        raise PlanError(
            f"{rounds} rounds a day do not fit on {len(floor)} tables: table {floor[worst].table_id} would deal "
            f"for {hours[worst]:.0f} hours at {PACE[floor[worst].game]:.0f} rounds/hour; use --tables {need} or more "
            f"(or leave --tables out to size the floor from the rounds)"
        )
    return whole


def _check_rule_sets(floor: tuple[Table, ...], first: dt.date, days: int) -> None:
    cat = builtin()
    for name in sorted({t.ruleset for t in floor}):
        for d in (first, first + dt.timedelta(days=days - 1)):
            try:
                cat.in_force(name, d)
            except UnknownRuleSet as exc:
                raise PlanError(f"{exc}; choose a later --start-day") from None


def make_plan(cfg: SimConfig) -> NightPlan:
    """Everything the tables need to play the night, from the seed alone (garbage collector paused:
    the plan is a large graph of small immutable records without cycles)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _make_plan(cfg)
    finally:
        if paused:
            gc.enable()


def _make_plan(cfg: SimConfig) -> NightPlan:
    ss = np.random.SeedSequence(cfg.seed, spawn_key=(0,))
    rng = np.random.default_rng(ss)
    shares = cfg.ruleset_shares
    n_tables = tables_for(cfg.rounds, cfg.tables, shares)
    floor = build_floor(n_tables, rng, shares)
    _check_rule_sets(floor, cfg.start_day, cfg.days)
    rosters = build_rosters(floor)
    games = {t.index: t.game for t in floor}
    pool = PlayerPool(rng)
    specials = _choose_specials(rng, floor, rosters, pool, cfg.behaviours)

    per_table_days: dict[int, list[DayPlan]] = {t.index: [] for t in floor}
    units: list[tuple[Table, int, int]] = []
    day_rows = []
    for day_no in range(cfg.days):
        day = cfg.start_day + dt.timedelta(days=day_no)
        counts = allocate_rounds(rng, floor, cfg.rounds, shares)
        sessions: list[Session] = []
        windows: dict[int, tuple[int, int]] = {}
        opens: dict[int, int] = {}
        for t, n in zip(floor, counts.tolist()):
            start = gaming_day_start_ms(day, t.utc_offset_min)
            if n == 0:
                continue
            hours = n / PACE[t.game]
            latest = 24 * MS_PER_HOUR - int(hours * 1.2 * MS_PER_HOUR) - 15 * MS_PER_MIN
            open_ms = start + int(rng.integers(5 * MS_PER_MIN, max(5 * MS_PER_MIN, latest) + 1))
            open_ms -= open_ms % 1000
            close_est = min(start + 24 * MS_PER_HOUR, open_ms + int(hours * 1.4 * MS_PER_HOUR))
            opens[t.index] = open_ms
            windows[t.index] = (open_ms, close_est)
            sessions.extend(seat_sessions(rng, t.index, t.game, t.seats, open_ms, close_est))
        if specials.colluder_id is not None and specials.colluding_dealer is None:
            specials = replace(specials, colluding_dealer=_choose_colluding_dealer(rng, floor, rosters, windows, day))
        by_table_s: dict[int, list[Session]] = {}
        for s in sessions:
            by_table_s.setdefault(s.table, []).append(s)
        by_table_s = _place_specials(rng, by_table_s, floor, rosters, windows, specials, day, pool)
        sessions = [s for t in floor for s in by_table_s.get(t.index, [])]
        sessions = assign_rated(sessions, games, pool, rng)
        pool.new_day()
        by_table: dict[int, list[Session]] = {}
        for s in sessions:
            by_table.setdefault(s.table, []).append(s)
        day_rows.append((day_no, day, counts, opens, by_table))
        units.extend((t, day_no, int(n)) for t, n in zip(floor, counts.tolist()))

    tickets = draw_tickets(rng, units, cfg.fault_rate)
    for day_no, day, counts, opens, by_table in day_rows:
        for t, n in zip(floor, counts.tolist()):
            table_sessions = tuple(sorted(by_table.get(t.index, []), key=lambda s: (s.start_ms, s.seat, s.role)))
            per_table_days[t.index].append(
                DayPlan(
                    day_no=day_no,
                    day=day,
                    day_start_ms=gaming_day_start_ms(day, t.utc_offset_min),
                    n_rounds=int(n),
                    open_ms=opens.get(t.index, 0),
                    sessions=table_sessions,
                    tickets=tuple(tickets.get((t.index, day_no), ())),
                )
            )
    first_rounds = rng.integers(1_000, 90_000, len(floor))
    first_seqs = rng.integers(1, 5_000_000, len(floor))
    plans = tuple(
        TablePlan(
            seed=cfg.seed,
            table=t,
            roster=rosters[t.pit],
            days=tuple(per_table_days[t.index]),
            specials=specials,
            first_round_no=int(first_rounds[t.index]),
            first_seq=int(first_seqs[t.index]),
        )
        for t in floor
    )
    return NightPlan(plans, specials)


def _choose_specials(rng, floor, rosters, pool: PlayerPool, b: Behaviours) -> Specials:
    bac = [t for t in floor if t.game == "baccarat"]
    bj = [t for t in floor if t.game == "blackjack"]
    counter = pool.new_id() if b.counter > 0 and bj else None
    lucky = pool.new_id() if b.luck > 0 and bac else None
    colluder = pool.new_id() if b.collusion > 0 and bac else None
    dealer = None  # chosen on the first day: a baccarat dealer whose stints meet open tables
    drift = bac[int(rng.integers(len(bac)))].table_id if b.drift > 0 and bac else None
    return Specials(b, counter, lucky, colluder, dealer, drift)


def _free(busy: list[tuple[int, int]], start: int, end: int) -> bool:
    rest = 30 * MS_PER_MIN
    return all(end + rest <= s or start >= e + rest for s, e in busy)


def _place_specials(rng, sessions: dict[int, list[Session]], floor, rosters, windows, sp: Specials, day, pool) -> dict[int, list[Session]]:
    """The counter's, the lucky player's and the colluder's sessions for one day (sessions by table)."""
    by_index = {t.index: t for t in floor}
    for pid, game, count, minutes, profile, role in (
        (sp.counter_id, "blackjack", 4, 60, COUNTER_PROFILE, "counter"),
        (sp.lucky_id, "baccarat", 5, 45, LUCKY_PROFILE, "lucky"),
    ):
        if pid is None:
            continue
        open_tables = [i for i, t in by_index.items() if t.game == game and i in windows]
        busy: list[tuple[int, int]] = []
        for _ in range(count * 5):
            if len(busy) >= count or not open_tables:
                break
            ti = open_tables[int(rng.integers(len(open_tables)))]
            lo, hi = windows[ti]
            length = minutes * MS_PER_MIN
            if hi - lo < length + MS_PER_HOUR:
                continue
            start = int(rng.integers(lo, hi - length))
            if not _free(busy, start, start + length):
                continue
            busy.append((start, start + length))
            seat = int(rng.integers(1, by_index[ti].seats + 1))
            sessions[ti] = place_special(sessions.get(ti, []), Session(ti, seat, start, start + length, pid, profile, role))
    if sp.colluder_id is not None and sp.colluding_dealer is not None:
        roster = next(r for r in rosters.values() if any(sp.colluding_dealer in ids for ids in r.shifts))
        rng.shuffle(runs := _runs(roster, sp.colluding_dealer, by_index, windows, day))
        busy = []
        for run in runs:
            if len(busy) >= 2:
                break
            if not _free(busy, run[0][1], run[-1][2]):
                continue
            busy.append((run[0][1], run[-1][2]))
            for ti, s, e in run:
                seat = int(rng.integers(1, by_index[ti].seats + 1))
                sessions[ti] = place_special(sessions.get(ti, []), Session(ti, seat, s, e, sp.colluder_id, COLLUDER_PROFILE, "colluder"))
    return sessions


def _runs(roster: PitRoster, dealer: str, by_index: dict[int, Table], windows, day) -> list[list[tuple[int, int, int]]]:
    """Two or three stints in a row the dealer deals at tables open at the time (the colluder follows)."""
    first_table = by_index[next(iter(roster.table_positions))]
    stints = stints_of(roster, dealer, gaming_day_start_ms(day, first_table.utc_offset_min))
    runs = []
    for length in (3, 2):
        for k in range(len(stints) - length + 1):
            run = stints[k : k + length]
            if any(run[i + 1][1] != run[i][2] for i in range(length - 1)):
                continue  # a break falls between
            if all(ti in windows and windows[ti][0] <= s and e <= windows[ti][1] for ti, s, e in run):
                runs.append(run)
        if runs:
            break
    return runs


def _choose_colluding_dealer(rng, floor, rosters, windows, day) -> str | None:
    """The baccarat dealer with the most chances to meet the colluder (ties broken at random)."""
    by_index = {t.index: t for t in floor}
    pits = sorted({t.pit for t in floor if t.game == "baccarat"})
    best: list[tuple[int, int, str]] = []
    for pit in pits:
        for ids in rosters[pit].shifts:
            for d in ids:
                runs = _runs(rosters[pit], d, by_index, windows, day)
                score = len(runs) * (10 if runs and len(runs[0]) == 3 else 1)
                best.append((score, int(rng.integers(1 << 30)), d))
    best.sort(reverse=True)
    return best[0][2] if best and best[0][0] > 0 else None
