"""One table's whole run: every gaming day played, faulted and written, on the table's own random stream.

This is the unit of parallel work: it reads nothing but its plan and writes only its own files
(one device log and one round log per gaming day), so tables can run in any process in any
order and the bytes come out the same.
"""

from __future__ import annotations

import gc
import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipelines.simulate import faults as F
from pipelines.simulate.context import Counters, DayContext
from pipelines.simulate.ground_truth import TruthRow
from pipelines.simulate.plan import TablePlan
from pipelines.simulate.writer import (
    encode_rounds,
    rounds_file_name,
    shoe_file_name,
    write_device_log,
    write_rounds_log,
)
from rulebook.catalogue import builtin

GAME_MODULES = {
    "baccarat": "pipelines.simulate.baccarat",
    "blackjack": "pipelines.simulate.blackjack",
    "holdem_bonus": "pipelines.simulate.holdem",
}


@dataclass
class TableResult:
    table_index: int
    rounds: int = 0
    events: int = 0
    truth: list[TruthRow] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0  # CPU time this table took (for the benchmark's per-game cost)


def add_stats(total: dict[str, int], more: dict[str, int]) -> None:
    """Add one day's or one table's behaviour counts into ``total``: counts add up, a ``*_max_units`` is the largest
    (the ground truth's "bets up to N units": summed over a week's days it said 28 where the counter's bet never
    passed its cap of 6.5 units at strength 0.5)."""
    for key, value in more.items():
        total[key] = max(total.get(key, 0), value) if key.endswith("_max_units") else total.get(key, 0) + value


def table_rng(plan: TablePlan) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(plan.seed, spawn_key=(1, plan.table.index)))


def simulate_table(plan: TablePlan, out_dir: Path) -> TableResult:
    """Play, fault and write every gaming day of one table (the cyclic garbage collector is paused:
    a day creates hundreds of thousands of small records without cycles, and its passes over them
    cost more than the play itself)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _simulate_table(plan, out_dir)
    finally:
        if paused:
            gc.enable()


def _simulate_table(plan: TablePlan, out_dir: Path) -> TableResult:
    started = time.process_time()
    rng = table_rng(plan)
    t = plan.table
    module = importlib.import_module(GAME_MODULES[t.game])
    counters = Counters(round_no=plan.first_round_no, seq=plan.first_seq)
    result = TableResult(t.index)
    for day in plan.days:
        if day.n_rounds == 0:
            continue
        ruleset = builtin().in_force(t.ruleset, day.day)
        ctx = DayContext(plan=plan, day=day, ruleset=ruleset, rng=rng, counters=counters)
        module.simulate_day(ctx)
        events = ctx.events.freeze()
        order = np.argsort(events.ts, kind="stable")
        if not np.array_equal(order, np.arange(len(order))):
            raise AssertionError(f"{t.table_id}: device events out of time order")
        round_tickets = [k for k in ctx.leftover if k.variant in F.ROUND_LEVEL]
        lost = [k for k in ctx.leftover if k.variant == "lost_events"]
        garbles = [k for k in ctx.leftover if k.variant in F.JSON_GARBLES + F.CSV_GARBLES]
        for k in ctx.leftover:
            if k not in round_tickets and k not in lost and k not in garbles:
                ctx.count("unplaced_" + k.variant)
        events = F.plant_round_faults(ctx, events, round_tickets)
        seq = counters.seq + np.arange(len(events), dtype=np.int64)
        counters.seq += len(events)
        events, seq = F.plant_lost_events(ctx, events, seq, lost)
        json_g, csv_g = F.choose_garbles(ctx, events, garbles)
        label = day.day.isoformat()
        shoe_name = shoe_file_name(t, label)
        rounds_name = rounds_file_name(t, label)
        for line, variant, reason, k in write_device_log(out_dir / shoe_name, t, events, seq, csv_g):
            rno = int(events.round_no[k])
            ctx.truth.append(TruthRow("quarantine", t.table_id, rno if rno >= 0 else None, None, None, None,
                                      f"{variant}: {shoe_name} line {line}: to quarantine as {reason} (line 1 is the header)"))
        lines = encode_rounds(t, t.game, t.ruleset, ctx.rounds)
        for line, variant, reason, k in write_rounds_log(out_dir / rounds_name, lines, json_g, int(rng.integers(1 << 30))):
            rec = ctx.rounds[k]
            ctx.truth.append(TruthRow("quarantine", t.table_id, rec.round_no, None, None, rec.dealer_id,
                                      f"{variant}: {rounds_name} line {line}: to quarantine as {reason}; "
                                      f"the next line carries the round in full"))
        result.rounds += len(ctx.rounds)
        result.events += len(events)
        result.truth.extend(ctx.truth)
        result.files.extend([shoe_name, rounds_name])
        add_stats(result.stats, ctx.stats)
    result.cpu_seconds = time.process_time() - started
    return result
