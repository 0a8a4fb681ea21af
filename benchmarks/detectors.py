"""Detection power and false positives of the statistical detectors (issue 11), on simulated nights.

Each scenario plants one behaviour in a small simulated floor (``pipelines.stats.synthetic``: real shuffled
shoes, the rules engine's resolver, the rule set's pay table) and runs every detector over it with one
Benjamini-Hochberg at the audit's FDR level (1 %), exactly as ``pitaudit audit`` does for one window. Power is
the share of nights on which the planted entity is flagged; false positives are flags that name no planted
entity, per entity tested (and the share of nights with any), measured on the same floors with the behaviour
on (beside it) and off (a fair floor). Then power against strength and sample size. Run:

    .venv/bin/python -m benchmarks.detectors                         # 50 nights per goal, 20 per curve point
    .venv/bin/python -m benchmarks.detectors --nights 100 --curve-nights 40
    .venv/bin/python -m benchmarks.detectors --timing-rounds 50000   # + the detectors' time in the audit flow
    .venv/bin/python -m benchmarks.detectors --only none --curve-nights 0 --timing-synthetic 200000  # one synthetic night
    .venv/bin/python -m benchmarks.detectors --only none --curve-nights 0 --input night-1m/   # a real simulated night
    .venv/bin/python -m benchmarks.detectors --only none --curve-nights 0 --timing-db audit.duckdb  # an audited database
    .venv/bin/python -m benchmarks.detectors --only none --curve-nights 0 --timing-step audit.duckdb  # its last night,
                                                    # as the audit's statistics task runs it (on a copy), with its parts

Nothing is asserted; the figures are printed (docs/detectors.md quotes them).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import time
from dataclasses import dataclass
from typing import Callable

import polars as pl

from pipelines.stats.config import StatsParams
from pipelines.stats.load import StatsInputs
from pipelines.stats.run import detect_all, with_fdr
from pipelines.stats.synthetic import Floor, nights

DAY = dt.date(2026, 11, 24)
PARAMS = StatsParams()


@dataclass(frozen=True)
class Scenario:
    name: str
    goal: str
    floor: Floor
    days: int
    found: Callable[[pl.DataFrame, Floor], bool]  # the planted entity is flagged
    planted: Callable[[dict, Floor], bool]  # a flagged row names the planted entity (or its direct consequence)
    off: dict  # the Floor fields that switch the behaviour off


def _tables(row: dict) -> set[str]:
    try:
        return set(json.loads(row["evidence"] or "{}").get("tables", []))
    except ValueError:
        return set()


def _drift_table(f: Floor) -> str:
    return f"BAC-{f.baccarat_tables + 1:02d}"


SCENARIOS = (
    Scenario(
        "counter", "a Hi-Lo counter spreading 1-8 units over 500 hands",
        Floor(baccarat_tables=0, blackjack_tables=2, blackjack_rounds=250, counter_units=8, counter_hands=500), 1,
        lambda t, f: t.filter(pl.col("flagged") & (pl.col("test") == "bet_vs_count") & (pl.col("player_id") == "P-COUNTER")).height > 0,
        lambda r, f: r["player_id"] == "P-COUNTER", {"counter_units": 1.0}),
    Scenario(
        "collusion", "a dealer overpaying one player in 2 % of their rounds together over a week",
        Floor(baccarat_tables=2, baccarat_rounds=300, blackjack_tables=0, colluder=True, collusion_rate=0.02), 7,
        lambda t, f: t.filter(pl.col("flagged") & (pl.col("test") == "overpaid_pair") & (pl.col("dealer_id") == "D-COLLUDER")
                              & (pl.col("player_id") == "P-COLLUDER")).height > 0,
        lambda r, f: r["player_id"] == "P-COLLUDER" or r["dealer_id"] == "D-COLLUDER", {"collusion_rate": 0.0}),
    Scenario(
        "luck", "a Big Tiger bettor winning at 5x the fair rate over 300 bets",
        Floor(baccarat_tables=2, blackjack_tables=0, seats=3, luck_multiple=5, luck_bets=300), 1,
        lambda t, f: t.filter(pl.col("flagged") & (pl.col("test") == "luck") & (pl.col("player_id") == "P-LUCKY")).height > 0,
        lambda r, f: r["player_id"] == "P-LUCKY" or r["table_id"] == "BAC-99" or "BAC-99" in _tables(r),  # his table's hold
        {"luck_multiple": 1.0}),
    Scenario(
        "bonus_luck", "a Hold'em Bonus bettor winning at 3x the fair rate over 300 bets (beside blackjack Pair and Insurance)",
        Floor(baccarat_tables=0, blackjack_tables=2, blackjack_side=True, holdem_tables=2, holdem_rounds=300,
              holdem_luck_multiple=3, holdem_luck_bets=300), 1,
        lambda t, f: t.filter(pl.col("flagged") & (pl.col("test") == "luck") & (pl.col("player_id") == "P-LUCKY-HB")).height > 0,
        lambda r, f: r["player_id"] == "P-LUCKY-HB" or r["table_id"] == "HB-99" or "HB-99" in _tables(r),  # his table's hold
        {"holdem_luck_multiple": 1.0}),
    Scenario(
        "drift", "a baccarat table holding about -9 % against +1.2 % over 1,200 rounds",
        Floor(baccarat_tables=2, blackjack_tables=0, drift=0.27, drift_rounds=1200), 1,
        lambda t, f: t.filter(pl.col("flagged") & (pl.col("test") == "hold_table") & (pl.col("table_id") == _drift_table(f))).height > 0,
        lambda r, f: r["table_id"] == _drift_table(f) or _drift_table(f) in _tables(r), {"drift": 0.0}),
)


def run_night(floor: Floor, days: int, seed: int) -> tuple[pl.DataFrame, float]:
    w, c, e = nights(floor, DAY, days, seed)
    t0 = time.process_time()
    tests = detect_all(StatsInputs(w, e, c, DAY, DAY + dt.timedelta(days=days - 1)), PARAMS, days)[0]
    tests = with_fdr(tests, PARAMS)
    hold = None
    if floor.drift > 0:
        row = tests.filter((pl.col("test") == "hold_table") & (pl.col("table_id") == _drift_table(floor)) & (pl.col("bet") == "all"))
        if row.height:
            ev = json.loads(row["evidence"][0])
            hold = (ev["hold"], ev["theoretical_hold"])
    return tests, time.process_time() - t0, hold


def measure(s: Scenario, floor: Floor, n: int, seed0: int) -> dict:
    found = false = tested = nights_false = 0
    cpu = 0.0
    holds = []
    for i in range(n):
        tests, sec, hold = run_night(floor, s.days, seed0 + i)
        cpu += sec
        if hold:
            holds.append(hold)
        found += s.found(tests, floor)
        rows = [r for r in tests.iter_rows(named=True) if not s.planted(r, floor)]
        f = sum(1 for r in rows if r["flagged"])
        false += f
        tested += len(rows)
        nights_false += f > 0
    out = {"nights": n, "power": found / n, "false_per_entity": false / max(1, tested), "entities_per_night": tested / n,
           "nights_with_false_flag": nights_false / n, "detect_cpu_s_per_night": cpu / n}
    if holds:
        out["mean_hold"] = sum(h for h, _ in holds) / len(holds)
        out["mean_theoretical_hold"] = sum(t for _, t in holds) / len(holds)
    return out


CURVES = {
    "counter": [("counter_units", (2, 4, 8)), ("counter_hands", (100, 250, 500))],
    "luck": [("luck_multiple", (2, 3, 5)), ("luck_bets", (100, 300))],
    "collusion": [("collusion_rate", (0.01, 0.02, 0.05)), ("days", (1, 7))],
    "bonus_luck": [("holdem_luck_multiple", (1.5, 2, 3)), ("holdem_luck_bets", (100, 300))],
    "drift": [("drift", (0.1, 0.2, 0.27)), ("drift_rounds", (300, 1200))],
}


def _fmt(m: dict) -> str:
    text = (f"power {m['power']:.0%}  false flags {m['false_per_entity']:.3%} of {m['entities_per_night']:.0f} entities/night"
            f"  nights with a false flag {m['nights_with_false_flag']:.0%}  detect {m['detect_cpu_s_per_night']:.2f} s CPU/night")
    if "mean_hold" in m:
        text += f"  hold {m['mean_hold']:+.1%} vs theory {m['mean_theoretical_hold']:+.1%}"
    return text


def timing(rounds: int) -> None:
    """The statistics step of ``pitaudit audit`` on one simulated night: the flow's own wall time for it, and the
    CPU time of the same step re-run in this process on the audited database (the machine may be shared)."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from pipelines.stats.run import statistics_step

    env = dict(os.environ, PREFECT_SERVER_ANALYTICS_ENABLED="false")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pipelines.cli", "simulate", "--out", f"{tmp}/night", "--rounds", str(rounds),
                        "--seed", "11", "--fault-rate", "0.01"], check=True, env=env, capture_output=True)
        done = subprocess.run([sys.executable, "-m", "pipelines.cli", "audit", "--input", f"{tmp}/night", "--db",
                               f"{tmp}/a.duckdb", "--out", f"{tmp}/out"], check=True, env=env, capture_output=True, text=True)
        line = next(x for x in done.stderr.splitlines() if "statistics" in x and " s" in x)
        print(f"timing: {rounds:,}-round night, the flow's steps: {line.split('audit: ', 1)[-1].strip()}")
        timing_db(Path(tmp) / "a.duckdb", rounds)


def timing_db(db, rounds: int = 0) -> None:
    """The statistics step in this process on an audited database: the shoe enumerations (once per process and
    deck count; frozen as data for 6 and 8 decks) apart from the detectors, CPU seconds (the machine may be shared);
    the step as the audit runs it (its windows timed inside it); then its first part again, one chunk at a time with
    no read-ahead, to split it into the read of the audited nights' evidence, the chunks' summaries and their merge
    (the three grow with the night; the windows grow with the entities, not the rounds). ``rounds``: 0 counts the
    database's."""
    import pipelines.stats.run as run
    from pipelines.db import open_bounded_reader
    from pipelines.stats.advantage import FAMILIES
    from pipelines.stats.config import DEFAULT_PARAMS
    from pipelines.stats.distributions import joint_outcome_probabilities
    from pipelines.stats.load import load_inputs, side_bet_families, table_chunks
    from pipelines.stats.summaries import summarise_chunk
    from pipelines.stats.summary_chunks import merge_chunks
    from pipelines.stats.summary_store import CHUNK_ROUNDS
    from pipelines.stats.tiger_count import _removal_classes

    cpu0 = time.process_time()
    for decks in (6, 8):
        joint_outcome_probabilities(decks)
        _removal_classes(decks, ("player", "banker", "player", "banker"))
    enumerations = time.process_time() - cpu0
    nights = _nights(db)
    rounds = rounds or _rounds(db)
    windows = [0.0, 0.0]
    findings = run.statistical_findings

    def timed_windows(*a, **k):
        c, w = time.process_time(), time.perf_counter()
        try:
            return findings(*a, **k)
        finally:
            windows[0] += time.process_time() - c
            windows[1] += time.perf_counter() - w

    run.statistical_findings = timed_windows
    try:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        outcomes = run.statistics_step(db, nights)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    finally:
        run.statistical_findings = findings
    con = open_bounded_reader(db)
    read = summarise_cpu = merge = 0.0
    try:
        for night in nights:  # the step's first part again, timed apart: the reads, the chunks' summaries, the merge
            chunks = table_chunks(con, night, CHUNK_ROUNDS)
            families = (side_bet_families(con, night, tuple((name, bets) for name, bets, *_ in FAMILIES))
                        if chunks is not None and len(chunks) > 1 else None)
            parts = []
            for tables in (chunks if families is not None else [None]):
                cpu1 = time.process_time()
                inputs = load_inputs(con, night, night, tables=tables)
                cpu2 = time.process_time()
                parts.append(summarise_chunk(inputs, DEFAULT_PARAMS, families))
                read, summarise_cpu = read + cpu2 - cpu1, summarise_cpu + time.process_time() - cpu2
                del inputs
            cpu1 = time.process_time()
            merge_chunks(parts, (night,), DEFAULT_PARAMS)
            merge += time.process_time() - cpu1
            del parts
    finally:
        con.close()
    tests = sum(o.tests.height for o in outcomes)
    print(f"timing: shoe enumerations (6 and 8 decks, once per process): {enumerations:.1f} s CPU")
    print(f"timing: statistics step on {rounds:,} rounds ({len(nights)} night(s): "
          f"{', '.join(str(n) for n in nights)}): {cpu:.1f} s CPU, {wall:.1f} s wall (load average "
          f"{os.getloadavg()[0]:.1f}), {tests:,} entities tested; of it the read and summaries {cpu - windows[0]:.1f} s CPU "
          f"({wall - windows[1]:.1f} s wall), the windows (and their own reads) {windows[0]:.1f} s CPU ({windows[1]:.1f} s wall)")
    print(f"timing: the read and summaries again, chunk by chunk, no read-ahead: the read of the nights' evidence "
          f"{read:.1f} s CPU, the chunks' summaries {summarise_cpu:.1f} s CPU, their merge {merge:.1f} s CPU")
    how = "measured" if rounds >= 900_000 else "a linear extrapolation (a smaller night's fixed costs inflate it)"
    print(f"timing: per 1,000,000 rounds: {cpu / max(rounds, 1) * 1e6:.1f} s CPU, {how} (goal: under 10 s; each night "
          "with its windows over the nights before it)")


def timing_step(db, nights: list[dt.date] | None = None, repeat: int = 2) -> None:
    """The statistics task of ``pitaudit audit`` on a copy of an audited database: ``statistics_step`` then
    ``write_statistics`` (as ``pipelines.audit.tasks.statistics_task`` calls them, with the default settings), ``repeat``
    times (the first run pays the process's one-off costs, the enumerations and the rule sets' odds; each later one is
    the steady state, writing over the rows of the run before, as a re-run does). CPU seconds of this process (DuckDB's
    and polars' threads included) and wall seconds, with the parts that grow with the history: the stored summaries
    read, the audited nights' summaries made from the evidence, each window length's tests (hold, luck, counting,
    collusion: their reads of the far hold rows included), the write, and the entities each window length carried over
    from the night before (``pipelines.stats.reuse``: the database must hold that night's windows, written by this
    code). ``nights``: default the database's latest gaming day, and the day before it when the latest is a day still in play (``load.open_days``: the audit of an
    export holding the next day's first rounds audits both)."""
    import shutil
    import tempfile
    from pathlib import Path

    import pipelines.stats.run as run
    from pipelines.db import open_bounded_reader
    from pipelines.settings import Settings
    from pipelines.stats.load import gaming_days, open_days

    settings = Settings()
    if not nights:
        con = open_bounded_reader(db)
        try:
            days = gaming_days(con)
            nights = days[-1:]
            if days and open_days(con, nights) and len(days) > 1:
                nights = days[-2:]
        finally:
            con.close()
    parts: dict[str, float] = {}

    def timed(name_of, f):
        def g(*a, **k):
            c = time.process_time()
            try:
                return f(*a, **k)
            finally:
                key = name_of(a)
                parts[key] = parts.get(key, 0.0) + time.process_time() - c
        return g

    from pipelines.stats import reuse as reuse_module

    carried: dict[int, int] = {}
    match = reuse_module.Reuse.match

    def counted(me, candidates, on):
        mask, rows = match(me, candidates, on)
        for w in rows["window_days"].to_list():
            carried[w] = carried.get(w, 0) + 1
        return mask, rows

    reuse_module.Reuse.match = counted
    saved = {n: getattr(run, n) for n in ("window_tests", "stored_summaries", "summarise_days")}
    run.window_tests = timed(lambda a: f"{a[4]}-day windows", saved["window_tests"])
    run.stored_summaries = timed(lambda a: "stored summaries read", saved["stored_summaries"])
    run.summarise_days = timed(lambda a: "summaries made", saved["summarise_days"])
    folder = Path(tempfile.mkdtemp(prefix="pitaudit-timing-"))
    try:
        copy = folder / "copy.duckdb"
        shutil.copyfile(db, copy)
        for r in range(repeat):
            parts.clear()
            carried.clear()
            c0, w0 = time.process_time(), time.perf_counter()
            outcomes = run.statistics_step(copy, nights, memory_limit=settings.reader_memory,
                                           chunk_rounds=settings.group_rounds)
            c1, w1 = time.process_time(), time.perf_counter()
            run.write_statistics(copy, outcomes, memory_limit=settings.writer_memory)
            c2, w2 = time.process_time(), time.perf_counter()
            tests = {}
            for o in outcomes:
                for w, n in o.tests.group_by("window_days").len().rows():
                    tests[w] = tests.get(w, 0) + n
            detail = ", ".join(f"{k} {v:.2f}" for k, v in sorted(parts.items()))
            print(f"timing: statistics task, run {r + 1} of {repeat}, night(s) {', '.join(str(n) for n in nights)}: "
                  f"step {c1 - c0:.2f} s CPU ({w1 - w0:.2f} s wall), write {c2 - c1:.2f} s CPU ({w2 - w1:.2f} s wall); "
                  f"of the step (CPU s): {detail}; entities tested per window length: "
                  f"{', '.join(f'{w}-day {n:,}' for w, n in sorted(tests.items()))}; of them carried over from the night "
                  f"before (untouched): {', '.join(f'{w}-day {n:,}' for w, n in sorted(carried.items())) or 'none'}; "
                  f"load average {os.getloadavg()[0]:.1f}",
                  flush=True)
            del outcomes
    finally:
        for n, f in saved.items():
            setattr(run, n, f)
        reuse_module.Reuse.match = match
        shutil.rmtree(folder, ignore_errors=True)


def timing_input(folder: str) -> None:
    """``pitaudit audit`` of the night in ``folder`` into a temporary database (a child process, as a user runs it),
    then ``timing_db`` on that database: the statistics step measured on a real simulated night."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    env = dict(os.environ, PREFECT_SERVER_ANALYTICS_ENABLED="false")
    tmp = Path(tempfile.mkdtemp(prefix="pitaudit-detectors-"))
    try:
        done = subprocess.run([sys.executable, "-m", "pipelines.cli", "audit", "--input", folder, "--db", str(tmp / "a.duckdb"),
                               "--out", str(tmp / "out")], env=env, capture_output=True, text=True)
        if done.returncode:  # the statistics are written before the publish step: time them if they are there
            print(f"timing: the audit of {folder} stopped (rc={done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
        if not (tmp / "a.duckdb").exists() or not _nights(tmp / "a.duckdb"):
            print("timing: no audited night in the database; nothing to time")
            return
        timing_db(tmp / "a.duckdb")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def timing_synthetic(rounds: int) -> None:
    """One night's statistics step on a synthetic floor of about ``rounds`` rounds (``pipelines.stats.synthetic``:
    40 baccarat and 10 blackjack tables, 2,000 players; no database read): the night's summaries and its 1-day
    window, CPU seconds, and the linear extrapolation to 1,000,000 rounds."""
    from pipelines.stats.distributions import joint_outcome_probabilities
    from pipelines.stats.summaries import summarise
    from pipelines.stats.synthetic import night
    from pipelines.stats.tiger_count import _removal_classes
    from pipelines.stats.windows import window_tests

    for decks in (6, 8):
        joint_outcome_probabilities(decks)
        _removal_classes(decks, ("player", "banker", "player", "banker"))
    per_table = max(1, rounds // 50)
    floor = Floor(baccarat_tables=40, baccarat_rounds=per_table, blackjack_tables=10, blackjack_rounds=per_table,
                  players=2000, dealers=60)
    w, c, e = night(floor, DAY, 7)
    inputs = StatsInputs(w, e, c, DAY, DAY)
    cpu0 = time.process_time()
    summaries = summarise(inputs, PARAMS, (DAY,))
    cpu1 = time.process_time()
    tests = window_tests(summaries, DAY, DAY, PARAMS, 1)[0]
    cpu2 = time.process_time()
    total = cpu2 - cpu0
    print(f"timing: synthetic night of {50 * per_table:,} rounds ({w.height:,} wagers): summaries {cpu1 - cpu0:.1f} s CPU, "
          f"the 1-day window {cpu2 - cpu1:.1f} s CPU ({tests.height:,} entities); linear extrapolation to 1,000,000 "
          f"rounds: {total / (50 * per_table) * 1e6:.0f} s CPU (+ the database read)")


def _rounds(db) -> int:
    from pipelines.db import open_reader

    con = open_reader(db)
    try:
        return int(con.execute("SELECT count(*) FROM core_rounds").fetchone()[0])
    finally:
        con.close()


def _nights(db):
    from pipelines.db import open_reader
    from pipelines.stats.load import gaming_days

    con = open_reader(db)
    try:
        return gaming_days(con)
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=50, help="nights per goal scenario (behaviour on, and off)")
    ap.add_argument("--curve-nights", type=int, default=20, help="nights per point of the power curves (0: no curves)")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--timing-rounds", type=int, default=0, help="also time the statistics step of pitaudit audit")
    ap.add_argument("--timing-db", default="", help="time the statistics step on this audited database instead")
    ap.add_argument("--timing-db-rounds", type=int, default=0, help="the rounds of --timing-db (default: its core_rounds)")
    ap.add_argument("--input", default="", help="audit this night (a folder) and time the statistics step on it")
    ap.add_argument("--timing-synthetic", type=int, default=0, help="time one synthetic night of about this many rounds")
    ap.add_argument("--timing-step", default="", help="time the audit's statistics task on a copy of this audited database")
    ap.add_argument("--timing-nights", default="", help="with --timing-step: the nights (comma-separated dates; default "
                    "its latest gaming day, and the one before when the latest is still in play)")
    ap.add_argument("--timing-repeat", type=int, default=2, help="with --timing-step: runs in one process (default 2)")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    print(f"FDR level {PARAMS.fdr_level}; windows of this benchmark: the scenario's nights (1, or 7 for collusion)")
    for s in SCENARIOS:
        if only and s.name not in only:
            continue
        on = measure(s, s.floor, args.nights, 1000)
        off = measure(s, dataclasses.replace(s.floor, **s.off), args.nights, 5000)
        print(f"goal {s.name}: {s.goal}")
        print(f"  planted:  {_fmt(on)}")
        print(f"  fair:     {_fmt(off)}")
        if args.curve_nights:
            (fa, va), (fb, vb) = CURVES[s.name]
            for b in vb:
                cells = []
                for a in va:
                    floor = s.floor
                    days = s.days
                    changes = {}
                    for field, value in ((fa, a), (fb, b)):
                        if field == "days":
                            days = value
                        else:
                            changes[field] = value
                    floor = dataclasses.replace(floor, **changes)
                    sc = dataclasses.replace(s, days=days)
                    m = measure(sc, floor, args.curve_nights, 9000)
                    cells.append(f"{fa}={a}: {m['power']:.0%}" + (f" (hold {m['mean_hold']:+.1%})" if "mean_hold" in m else ""))
                print(f"  curve {fb}={b}: " + "  ".join(cells))
    if args.timing_rounds:
        timing(args.timing_rounds)
    if args.timing_db:
        timing_db(args.timing_db, args.timing_db_rounds)
    if args.input:
        timing_input(args.input)
    if args.timing_synthetic:
        timing_synthetic(args.timing_synthetic)
    if args.timing_step:
        nights = [dt.date.fromisoformat(d) for d in args.timing_nights.split(",") if d]
        timing_step(args.timing_step, nights, args.timing_repeat)


if __name__ == "__main__":
    main()
