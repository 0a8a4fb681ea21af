"""``pitaudit simulate``: plan the night, play every table (in parallel), write the ground truth.

The plan is made in this process; the tables are played by worker processes, each table's plan
sent to a worker that writes that table's files. Workers are spawned, not forked (a fork of a
process whose polars thread pool is running can deadlock), and each runs polars on one thread
(the workers already fill the cores). The ground truth is gathered from the tables, the
behaviours' rows added, and written sorted, so the output is byte-identical for a seed whatever
the number of workers.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from pathlib import Path

from pipelines.simulate.config import Behaviours, SimConfig
from pipelines.simulate.ground_truth import TruthRow, write_ground_truth
from pipelines.simulate.plan import NightPlan, PlanError, TablePlan, make_plan
from pipelines.simulate.table import TableResult, add_stats, simulate_table

OUTPUT_PATTERNS = ("shoe_*.csv", "rounds_*.jsonl", "ground_truth.csv")

class SimulationError(RuntimeError):
    """The simulation could not run (one line, for the CLI)."""


@dataclass(frozen=True)
class Summary:
    out: Path
    tables: int
    rounds: int
    events: int
    truth_rows: int
    seconds: float
    stats: dict[str, int]
    kinds: dict[str, int]
    by_game: dict[str, tuple[int, float]]  # game -> (rounds, CPU seconds spent on its tables)


def _play(job: tuple[TablePlan, Path]) -> TableResult:
    return simulate_table(*job)


def _pool(workers: int):
    """Spawned workers with polars on one thread each (the environment is read when polars loads)."""
    ctx = mp.get_context("spawn")
    before = os.environ.get("POLARS_MAX_THREADS")
    os.environ["POLARS_MAX_THREADS"] = "1"
    try:
        return ctx.Pool(workers)
    finally:
        if before is None:
            del os.environ["POLARS_MAX_THREADS"]
        else:
            os.environ["POLARS_MAX_THREADS"] = before


def prepare_out(out: Path, overwrite: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    existing = sorted(p for pattern in OUTPUT_PATTERNS for p in out.glob(pattern))
    if existing and not overwrite:
        raise SimulationError(f"{out} already holds simulated logs ({existing[0].name}, ...); "
                              f"choose an empty folder or pass --overwrite")
    for p in existing:
        p.unlink()


def behaviour_rows(plan: NightPlan, stats: dict[str, int]) -> list[TruthRow]:
    """One row per planted behaviour that actually played (its strength and how often it acted)."""
    sp = plan.specials
    b = sp.behaviours
    rows = []
    if sp.counter_id and stats.get("counter_rounds", 0):
        rows.append(TruthRow("advantage_play", "", None, None, sp.counter_id, None,
                             f"card_counter: Hi-Lo bet spread, strength {b.counter}; {stats['counter_rounds']} rounds "
                             f"at blackjack, bets up to {stats.get('counter_max_units', 0)} units"))
    if sp.lucky_id and stats.get("lucky_rounds", 0):
        rows.append(TruthRow("player_luck_anomaly", "", None, None, sp.lucky_id, None,
                             f"lucky_side_bets: strength {b.luck}; {stats['lucky_rounds']} baccarat side bets, "
                             f"{stats.get('lucky_wins', 0)} won"))
    if sp.colluder_id and stats.get("collusion_overpays", 0):
        rows.append(TruthRow("collusion_pattern", "", None, None, sp.colluder_id, sp.colluding_dealer,
                             f"dealer_overpays_player: strength {b.collusion}; {stats['collusion_overpays']} overpaid "
                             f"wagers (each also a payout_mismatch row)"))
    if sp.drift_table and stats.get("drift_rounds", 0):
        rows.append(TruthRow("hold_anomaly", sp.drift_table, None, None, None, None,
                             f"hold_drift: strength {b.drift}; on {stats['drift_rounds']} rounds a big unrated bettor "
                             f"backed the side that won"))
    return rows


def simulate(cfg: SimConfig, overwrite: bool = False, progress: bool = True) -> Summary:
    started = time.perf_counter()
    out = Path(cfg.out)
    try:
        plan = make_plan(cfg)
    except PlanError as exc:
        raise SimulationError(str(exc)) from None
    prepare_out(out, overwrite)
    workers = cfg.workers or os.cpu_count() or 1
    results: dict[int, TableResult] = {}
    with _progress(progress, plan.rounds) as advance:
        if workers == 1 or len(plan.tables) == 1:
            for tp in plan.tables:
                res = simulate_table(tp, out)
                results[res.table_index] = res
                advance(res.rounds)
        else:
            # big tables first, so no worker is left with a long one at the end
            order = sorted(range(len(plan.tables)), key=lambda i: -plan.tables[i].rounds)
            with _pool(workers) as pool:
                for res in pool.imap_unordered(_play, [(plan.tables[i], out) for i in order], chunksize=1):
                    results[res.table_index] = res
                    advance(res.rounds)
    truth: list[TruthRow] = []
    stats: dict[str, int] = {}
    rounds = events = 0
    by_game: dict[str, tuple[int, float]] = {}
    for i in sorted(results):
        r = results[i]
        game = plan.tables[i].table.game
        n, cpu = by_game.get(game, (0, 0.0))
        by_game[game] = (n + r.rounds, cpu + r.cpu_seconds)
        truth.extend(r.truth)
        rounds += r.rounds
        events += r.events
        add_stats(stats, r.stats)
    truth.extend(behaviour_rows(plan, stats))
    write_ground_truth(out / "ground_truth.csv", truth)
    kinds: dict[str, int] = {}
    for row in truth:
        kinds[row.kind] = kinds.get(row.kind, 0) + 1
    return Summary(out, len(plan.tables), rounds, events, len(truth), time.perf_counter() - started, stats, kinds, by_game)


class _progress:
    """A rich progress bar over rounds (or nothing when quiet)."""

    def __init__(self, show: bool, total: int):
        self.show = show
        self.total = total

    def __enter__(self):
        if not self.show:
            return lambda n: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._p = Progress(TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TextColumn("rounds"),
                           TimeElapsedColumn(), transient=True)
        self._p.__enter__()
        task = self._p.add_task("rounds", total=self.total)
        return lambda n: self._p.advance(task, n)

    def __exit__(self, *exc):
        if self.show:
            self._p.__exit__(*exc)
        return False


def run_simulation(
    out: Path,
    tables: int = 0,
    rounds: int = 5_000,
    days: int = 1,
    seed: int = 7,
    fault_rate: float = 0.01,
    *,
    start_day: dt.date = dt.date(2026, 11, 24),
    behaviours: Behaviours | None = None,
    workers: int = 0,
    overwrite: bool = False,
    quiet: bool = False,
    game_shares: tuple[tuple[str, float], ...] | None = None,
) -> Summary:
    """The CLI's entry point: simulate and print a one-paragraph summary."""
    cfg = SimConfig(out=str(out), rounds=rounds, tables=tables, days=days, seed=seed, fault_rate=fault_rate,
                    start_day=start_day, behaviours=behaviours if behaviours is not None else Behaviours(),
                    workers=workers, game_shares=game_shares)
    summary = simulate(cfg, overwrite=overwrite, progress=not quiet)
    if not quiet:
        from rich.console import Console
        from rich.markup import escape

        c = Console()
        c.print(f"[bold]{summary.rounds:,}[/] rounds on {summary.tables} tables over {days} gaming day(s), "
                f"{summary.events:,} device events, in {summary.seconds:.1f} s "
                f"({summary.rounds / max(summary.seconds, 1e-9):,.0f} rounds/s) -> {escape(str(summary.out))}")
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(summary.kinds.items()))
        c.print(f"ground_truth.csv: {summary.truth_rows} rows ({kinds or 'none'})")
    return summary
