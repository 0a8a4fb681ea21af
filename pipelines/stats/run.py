"""Run every statistical detector over a night's windows, put one FDR over them, write the findings.

``statistical_findings(con, night)`` runs the detectors over tonight and the rolling windows of the
gaming days in the database that end with it (``StatsParams.windows``, 1, 7 and 30 days; a window
holding no more nights than a shorter one is skipped: the same data would be the same test twice; a
gaming day still in play, ``load.open_days``, runs only its own 1-day window), puts one Benjamini-Hochberg over
every entity tested that night, and turns the tests under the FDR level that hold new evidence into findings
(``findings_of``). ``investigate(con, first_day, last_day)`` is the same over one date range (an
investigation). Both are plain functions over an open read-only connection; the audit flow calls
``statistics_step`` once, after its write step, and writes through its one writer
(``write_statistics``).
"""

from __future__ import annotations

import datetime as dt
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

from pipelines.audit.findings import finding_id
from pipelines.audit.frames import FINDINGS_SCHEMA, conform
from pipelines.money import int128_of_blobs, money_for_files
from pipelines.stats.advantage import counter_tests, pair_count_tests
from pipelines.stats.collusion import collusion_tests, dealer_player_graph
from pipelines.stats.config import DEFAULT_PARAMS, StatsParams
from pipelines.stats.fdr import bh_adjust
from pipelines.stats.hold import dealer_error_rates, hold_tests
from pipelines.stats.load import StatsInputs, gaming_days, open_days
from pipelines.stats.luck import detect_luck, settled_baccarat
from pipelines.stats.reuse import Reuse, previous_reuse, stored_basis, window_basis, write_basis
from pipelines.stats.summaries import DaySummaries, concat_summaries, empty_summaries, far_rows_reader
from pipelines.stats.summary_store import (
    CHUNK_ROUNDS, scratch_file, stored_hold_rows, stored_summaries, summarise_days, summarised_days, summary_files,
    write_summaries,
)
from pipelines.stats.tests_frame import fmt_p, plain_floor_text, tests_frame
from pipelines.stats.windows import FarRows, HoldRowsReader, WindowMemo, window_tests
from pipelines.stats.wonging import mid_shoe_entry_tests

STAT_KINDS: tuple[str, ...] = ("hold_anomaly", "player_luck_anomaly", "advantage_play", "collusion_pattern")


@dataclass(frozen=True)
class StatsOutcome:
    night: dt.date | None  # the night the windows end with (None for an investigation's range)
    tests: pl.DataFrame  # every entity tested (TEST_SCHEMA + q_value, flagged)
    findings: pl.DataFrame  # FINDINGS_SCHEMA: the tests under the FDR level
    funnel: pl.DataFrame  # hold against handle with the 95 % and 99.7 % bands, per entity and window
    graph: pl.DataFrame  # the dealer-player graph, per pair and window
    summaries: DaySummaries | None = None  # per-day summaries made by this run, for the writer
    windows: tuple[int, ...] = ()  # the window lengths run (a shorter one's days again is not run)
    basis: str | None = None  # what the windows' rows were worked out by (``reuse.window_basis``), for the next night
    widths: dict = field(default_factory=dict)  # per window length, the games' hold padding width by grouping


def _window(inputs: StatsInputs, first: dt.date, last: dt.date) -> StatsInputs:
    def cut(df: pl.DataFrame) -> pl.DataFrame:
        return df.filter(pl.col("gaming_day").is_between(first, last)) if "gaming_day" in df.columns else df

    return StatsInputs(cut(inputs.wagers), cut(inputs.dealer_errors), inputs.cards, first, last)


def detect_all(inputs: StatsInputs, params: StatsParams, window_days: int) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Every detector over one window's frames: (tests, funnel, graph). No FDR here."""
    settled = settled_baccarat(inputs.wagers)  # baccarat wagers settled on the pay table, with their payout
    hold, funnel = hold_tests(inputs.wagers, params, window_days, settled=settled)
    graph = dealer_player_graph(inputs.wagers, window_days)
    collusion = collusion_tests(graph, params, window_days)
    tests = pl.concat([
        hold,
        dealer_error_rates(inputs.wagers, inputs.dealer_errors, params, window_days),
        detect_luck(inputs.wagers, params, window_days, settled=settled),
        counter_tests(inputs.wagers, inputs.cards, params, window_days),
        pair_count_tests(inputs.wagers, inputs.cards, params, window_days),
        mid_shoe_entry_tests(inputs.wagers, inputs.cards, params, window_days),
        collusion,
    ])
    if graph.height:  # the pair's p-value beside it (empty for pairs with too few rounds to be tested)
        graph = graph.join(collusion.select("dealer_id", "player_id", "currency", "p_value"),
                           on=["dealer_id", "player_id", "currency"], how="left")
    return tests, funnel, graph


def significant(values, digits: int = 6) -> list[float]:
    """Floats to ``digits`` significant digits: the last bits of a sum depend on the order rows arrive in
    (threads, processes), and the published files must be the same bytes whatever ran them."""
    return [float(f"{v:.{digits}g}") if v == v else v for v in values]


def with_fdr(tests: pl.DataFrame, params: StatsParams) -> pl.DataFrame:
    """Add q-values (BH over every row) and ``flagged`` (q <= the FDR level); p and q to 6 significant digits."""
    if tests.height == 0:
        return tests.with_columns(pl.lit(None, dtype=pl.Float64).alias("q_value"), pl.lit(None, dtype=pl.Boolean).alias("flagged"))
    tests = tests.with_columns(pl.Series("p_value", significant(tests["p_value"].to_list()), dtype=pl.Float64))
    q = significant(bh_adjust(tests["p_value"].to_numpy()).tolist())
    return tests.with_columns(pl.Series("q_value", q, dtype=pl.Float64)).with_columns(
        (pl.col("q_value") <= params.fdr_level).alias("flagged"))


def severity_of(q: float) -> str:
    """high below 1 in 10,000 false, medium below 1 in 1,000, else low (all under the FDR level)."""
    return "high" if q <= 1e-4 else "medium" if q <= 1e-3 else "low"


def _stable(value):
    """Floats of the evidence to 6 significant digits, recursively: the published detail must be the same bytes
    whatever order a multi-threaded sum met its rows in."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def findings_of(tests: pl.DataFrame, params: StatsParams, new_evidence_only: bool = False) -> pl.DataFrame:
    """The flagged tests as findings: money over the window, the sentence, the evidence and parameters in detail.

    ``new_evidence_only`` (a night's windows, not an investigation's range): only the tests that hold something the
    night's audit has not reported before. An entity with no rows on the night its window ends with (a shoe dealt
    three weeks ago, a pair that last met on Tuesday) has in that window a part of the rows it was tested on, and
    flagged on, the last night it played: written again, a shoe dealt on the third night was a finding 31 times on
    28 nights (1,364 of the 1,922 hold findings of 30 simulated nights were 69 shoes). And an entity whose rows are the
    same in two of the night's windows (every row inside the shorter one) is the same test twice: its finding is the
    shorter window's.
    The tests themselves, their q-values and the funnel are kept whole (``out_stat_tests``): only the findings are
    not repeated."""
    rows = []
    flagged = tests.filter(pl.col("flagged"))
    if new_evidence_only and flagged.height:
        flagged = flagged.filter(pl.col("last_day") == pl.col("window_end")).sort("window_days").unique(
            ["kind", "test", "entity", "currency", "first_day", "last_day"], keep="first", maintain_order=True)
    flagged = flagged.sort("kind", "test", "entity", "window_days")
    for r in flagged.iter_rows(named=True):
        # a finding belongs to the night its window ends with (an entity may have played only earlier in it)
        night = r.get("window_end") or r["last_day"]
        window = f"{r['window_days']} gaming day{'s' if r['window_days'] > 1 else ''} to {night}"
        sentence = plain_floor_text(r["sentence"])  # a window's row carried from an earlier night's table too
        detail = {"sentence": sentence, "test": r["test"], "entity": r["entity"], "window_days": r["window_days"],
                  "first_day": str(r["first_day"]), "last_day": str(r["last_day"]), "rounds": r["rounds"],
                  "wagers": r["wagers"], "p_value": r["p_value"], "q_value": r["q_value"],
                  "evidence": _stable(json.loads(r["evidence"])) if r["evidence"] else None,
                  "params": json.loads(params.as_detail())}
        text = plain_floor_text(f"{sentence}; q = {fmt_p(r['q_value'])} ({window}). ") + json.dumps(detail, separators=(",", ":"), default=str)
        key = f"{r['test']}|{r['entity']}|{r['currency']}|{r['window_days']}|{night}"
        expected, recorded = r["expected_net"], r["recorded_net"]
        rows.append({
            "finding_id": finding_id(r["kind"], r["table_id"], None, None, key), "kind": r["kind"],
            "severity": severity_of(r["q_value"]), "gaming_day": night, "table_id": r["table_id"],
            "player_id": r["player_id"], "dealer_id": r["dealer_id"], "expected_net": expected, "recorded_net": recorded,
            # no difference: a theoretical net is not money owed, and every sum of ``difference`` is money at stake
            "difference": None,
            "rule_ref": None, "detail": text, "p_value": r["p_value"], "q_value": r["q_value"], "game": r["game"],
            "ruleset": r["ruleset"], "currency": r["currency"],
        })
    if not rows:
        return conform(pl.DataFrame(), FINDINGS_SCHEMA)
    return conform(pl.DataFrame(rows, infer_schema_length=None), FINDINGS_SCHEMA)


def run_windows(inputs: StatsInputs, night: dt.date, days_present: list[dt.date], params: StatsParams):
    """Tonight and the rolling windows ending with it, over frames of every wager (the reference the summaries
    are checked against, and the frames-only path of the benchmarks)."""
    return _each_window(night, days_present, params, lambda first, w: detect_all(_window(inputs, first, night), params, w))


def _each_window(night: dt.date, days_present: list[dt.date], params: StatsParams, detect,
                 windows: tuple[int, ...] | None = None, ran: list[int] | None = None):
    tests, funnels, graphs = [], [], []
    seen: set[tuple] = set()
    for w in sorted(params.windows if windows is None else windows):
        first = night - dt.timedelta(days=w - 1)
        inside = tuple(d for d in days_present if first <= d <= night)
        if not inside or inside in seen:
            continue
        seen.add(inside)
        if ran is not None:
            ran.append(w)
        t, f, g = detect(first, w)
        tests.append(t.with_columns(pl.lit(night).alias("window_end")))
        if f.height:
            funnels.append(f)
        graphs.append(g)
    # windows of different lengths may give frames of different columns (a detector with nothing to report in
    # one of them): put them together by name (a 30-night database stopped here with a ShapeError)
    return (pl.concat(tests, how="diagonal_relaxed") if tests else tests_frame([]),
            pl.concat(funnels, how="diagonal_relaxed") if funnels else pl.DataFrame(),
            pl.concat(graphs, how="diagonal_relaxed") if graphs else pl.DataFrame())


def summary_windows(summaries: DaySummaries, night: dt.date, days_present: list[dt.date], params: StatsParams,
                    hold_rows_for: HoldRowsReader | None = None, memo: WindowMemo | None = None,
                    windows: tuple[int, ...] | None = None, reuse_for: Callable[[int], Reuse | None] | None = None,
                    ran: list[int] | None = None, widths: dict | None = None):
    """``run_windows`` from the days' summaries (what the audit runs). ``memo``: the figures the run's windows worked
    out per entity and days (``windows.WindowMemo``), shared by the windows of a night and by the nights of one run;
    ``reuse_for(window_days)``: the same window of an earlier night whose rows its untouched entities keep
    (``pipelines.stats.reuse``); ``ran``: gets the window lengths run; ``widths``: each one's games' hold padding
    widths."""
    memo = memo if memo is not None else WindowMemo()
    widths = widths if widths is not None else {}
    return _each_window(night, days_present, params, lambda first, w: window_tests(
        summaries, first, night, params, w, hold_rows_for, memo, reuse_for(w) if reuse_for else None,
        widths.setdefault(w, {})), windows, ran)


def _summaries_for(con, wanted: list[dt.date], fresh: DaySummaries, params: StatsParams) -> tuple[DaySummaries, DaySummaries, HoldRowsReader]:
    """(every summary of ``wanted``, the ones made now from the evidence, a reader of their hold rows): stored where
    the database has them in the current format, made from the evidence for the others (``fresh``, to be written)."""
    have = set(fresh.days)
    stored = summarised_days(con, min(wanted), max(wanted)) - have if wanted else set()
    missing = [d for d in wanted if d not in have and d not in stored]
    if missing:
        fresh = concat_summaries([fresh, summarise_days(con, missing, params)])
    from_db = stored_summaries(con, sorted(d for d in stored if d in set(wanted)), params.hold_min_wagers, fresh)
    db_rows = stored_hold_rows(con, sorted(from_db.days))
    memory_rows = far_rows_reader(fresh)

    def rows(first: dt.date, last: dt.date, far: pl.DataFrame) -> FarRows:
        """The far entities' rows of both, numbered by ``far``'s ``ent``."""
        return FarRows.concat([memory_rows(first, last, far), db_rows(first, last, far)])

    return concat_summaries([from_db, fresh]), fresh, rows


def statistical_findings(con, night: dt.date, params: StatsParams = DEFAULT_PARAMS,
                         fresh: DaySummaries | None = None, memo: WindowMemo | None = None,
                         windows: tuple[int, ...] | None = None, previous: StatsOutcome | None = None,
                         reuse: bool = True) -> StatsOutcome:
    """Tonight and the rolling windows ending with it, one FDR over every entity tested.

    The windows add up per-day summaries: ``fresh`` (made this run, e.g. tonight's), the stored ones, and those of
    any other day of the windows made now from the evidence (returned in the outcome's ``summaries``, for the
    writer). ``memo``: a ``windows.WindowMemo`` shared by the nights of one run (the same summaries). ``windows``: the
    window lengths to run (default ``params.windows``; a day still in play runs only its own, ``load.open_days``).
    ``reuse``: each window keeps the rows of the entities it did not touch from the same window of ``previous`` (an
    earlier night of this run) or of the latest earlier night the database holds it for (``pipelines.stats.reuse``:
    the same rows as working every entity out)."""
    windows = tuple(params.windows if windows is None else windows)
    longest = night - dt.timedelta(days=max(windows, default=1) - 1)
    days = gaming_days(con, longest, night)
    summaries, fresh, rows = _summaries_for(con, days, fresh if fresh is not None else empty_summaries(), params)
    basis = window_basis(params)

    def reuse_for(w: int) -> Reuse | None:
        found = previous_reuse(previous, night, w)
        return found if found is not None else stored_basis(con, night, w, basis, set(fresh.days))

    ran: list[int] = []
    widths: dict = {}
    tests, funnel, graph = summary_windows(summaries, night, days, params, rows, memo, windows,
                                           reuse_for if reuse else None, ran, widths)
    tests = with_fdr(tests, params)
    return StatsOutcome(night, tests, findings_of(tests, params, new_evidence_only=True), funnel, graph, fresh,
                        tuple(ran), basis, widths)


def investigate(con, first_day: dt.date, last_day: dt.date, params: StatsParams = DEFAULT_PARAMS) -> StatsOutcome:
    """Every detector over one date range (an investigation), its own FDR over the entities tested: the stored
    summaries of its days, the others summarised from the evidence (nothing is written: readers only read)."""
    days = gaming_days(con, first_day, last_day)
    summaries, _, rows = _summaries_for(con, days, empty_summaries(), params)
    window = (last_day - first_day).days + 1
    tests, funnel, graph = window_tests(summaries, first_day, last_day, params, window, rows)
    tests = with_fdr(tests.with_columns(pl.lit(last_day).alias("window_end")), params)
    return StatsOutcome(None, tests, findings_of(tests, params), funnel, graph)


# ---- the database side: read-only for the detectors, the flow's one writer for the results ----------

FUNNEL_TABLE, GRAPH_TABLE, TESTS_TABLE = "out_stat_funnel", "out_dealer_player", "out_stat_tests"


def funnel_frame(con, night: dt.date | None = None) -> pl.DataFrame:
    """The funnel plot's data for reports: hold against handle, bands, per entity and window (all nights or one)."""
    sql = f"SELECT * FROM {FUNNEL_TABLE}" + (" WHERE night = ?" if night else "") + " ORDER BY night, window_days, entity_type, entity, bet"
    return con.sql(sql, params=[night] if night else None).pl()


def funnel_curves_frame(con, night: dt.date | None = None) -> pl.DataFrame:
    """The funnel plot's band lines (theory, 95 % and 99.7 %) over a grid of handles, from ``funnel_frame``."""
    from pipelines.stats.hold import funnel_curves

    return funnel_curves(funnel_frame(con, night))


def dealer_player_frame(con, night: dt.date | None = None) -> pl.DataFrame:
    """The dealer-player graph for reports (pair, rounds, wagers, overpaid rounds/wagers/amounts, nets, p)."""
    sql = f"SELECT * FROM {GRAPH_TABLE}" + (" WHERE night = ?" if night else "") + " ORDER BY night, window_days, dealer_id, player_id"
    return con.sql(sql, params=[night] if night else None).pl()


def statistics_step(db_path: Path, nights: list[dt.date], params: StatsParams = DEFAULT_PARAMS,
                    memory_limit: str | None = None, chunk_rounds: int | None = CHUNK_ROUNDS,
                    reuse: bool = True) -> list[StatsOutcome]:
    """Read the database (a bounded read-only connection, closed before any write) and run each night: the audited
    nights are summarised again from the evidence (their partitions may have changed), a chunk of at most
    ``chunk_rounds`` rounds of tables at a time (``summary_store.summarise_days``), the other days of their windows
    come from the stored summaries. ``reuse``: a window's untouched entities keep their rows of the night before
    (``statistical_findings``); False works every entity out (the reference it is tested against)."""
    from pipelines.db import open_bounded_reader

    con = open_bounded_reader(db_path, memory_limit) if memory_limit else open_bounded_reader(db_path)
    try:
        nights = sorted(set(nights))
        fresh = summarise_days(con, gaming_days(con, nights[0], nights[-1]) if nights else [], params, chunk_rounds)
        fresh = DaySummaries(tuple(sorted(set(fresh.days) | set(nights))), **fresh.frames())  # a night with no wager too
        outcomes, memo = [], WindowMemo()
        still_in_play = open_days(con, nights)  # the next day's first rounds: no rolling windows of their own
        for night in nights:
            own = tuple(w for w in params.windows if w <= 1) if night in still_in_play else None
            outcome = statistical_findings(con, night, params, fresh, memo, own, outcomes[-1] if outcomes else None, reuse)
            fresh = outcome.summaries  # with any day a window had to summarise
            outcomes.append(outcome)
        return outcomes
    finally:
        con.close()


def _attach_night(df: pl.DataFrame, night: dt.date) -> pl.DataFrame:
    return df.with_columns(pl.lit(night).alias("night")).select(["night", *df.columns])


def _money_blobs_as_numbers(con, table: str, have: dict[str, str], adding: dict[str, str], folder: Path) -> None:
    """Rewrite ``table``'s totals stored as blobs (``have``: its column -> type) where the rows to add (``adding``) hold
    numbers: the dealer-player graph's money (``out_dealer_player``) reached the database as the 16 raw bytes of
    polars' Int128 until its scratch file held DECIMAL(38,0) (``pipelines.money.money_for_files``). The earlier nights'
    rows are kept, with their numbers (inside the writer's transaction)."""
    blobs = [name for name, kind in adding.items() if have.get(name) == "BLOB" and kind.startswith("DECIMAL")]
    if not blobs:
        return
    earlier = con.sql(f"SELECT * FROM {table}").pl()
    path = folder / f"{table}.earlier.parquet"
    money_for_files(earlier.with_columns(int128_of_blobs(earlier[c]) for c in blobs)).write_parquet(path)
    con.execute(f"DROP TABLE {table}")
    con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('" + path.as_posix().replace("'", "''") + "')")


def write_statistics(db_path: Path, outcomes: list[StatsOutcome], memory_limit: str | None = None) -> None:
    """Replace the nights' statistical findings, funnel rows, graph rows and tests, and the per-day summaries the
    run made (the last outcome's ``summaries`` holds every one), in one transaction.

    The frames reach DuckDB as Parquet files beside the database (no registered Arrow frame: see
    ``pipelines.db.create_keys_table`` on DuckDB 2.0.1), removed afterwards; they are written on a thread while the
    writer inserts the ones before.
    """
    import shutil

    nights = [o.night for o in outcomes if o.night is not None]
    findings = pl.concat([o.findings for o in outcomes]) if outcomes else conform(pl.DataFrame(), FINDINGS_SCHEMA)
    frames = {
        "out_findings": [findings] if findings.height else [],
        FUNNEL_TABLE: [_attach_night(o.funnel, o.night) for o in outcomes if o.funnel.height],
        GRAPH_TABLE: [_attach_night(o.graph.with_columns(pl.col("tables").list.join(",")), o.night)
                      for o in outcomes if o.graph.height],
        TESTS_TABLE: [_attach_night(o.tests, o.night) for o in outcomes if o.tests.height],
    }
    folder = Path(str(db_path) + ".stats")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    summaries = concat_summaries([o.summaries for o in outcomes if o.summaries is not None][-1:])
    # the scratch files are written on a thread in the order they are inserted: polars writes the next one while the
    # writer opens the database and DuckDB inserts the one before (both leave Python's lock)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stats-scratch")
    try:
        files = {table: pool.submit(lambda parts, path: scratch_file(pl.concat(parts, how="diagonal_relaxed"), path),
                                    parts, folder / f"{table}.parquet")
                 for table, parts in frames.items() if parts}
        _write(db_path, memory_limit, nights, folder, files, summaries, summary_files(folder, summaries, pool), outcomes)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # no file is being written when the folder goes
        shutil.rmtree(folder, ignore_errors=True)


def _write(db_path: Path, memory_limit: str | None, nights: list[dt.date], folder: Path, files: dict, summaries: DaySummaries,
           summary_paths: dict, outcomes: list[StatsOutcome]) -> None:
    """``write_statistics``' transaction: ``files`` (table -> the future of its scratch file) and ``summary_paths``
    (``summary_store.summary_files``) are waited for one by one, before each insert."""
    from pipelines.audit.publish import ensure_out_tables
    from pipelines.db import open_writer, rollback

    marks = ", ".join("?" for _ in nights) or "NULL"
    kinds = ", ".join(f"'{k}'" for k in STAT_KINDS)
    con = open_writer(db_path, memory_limit) if memory_limit else open_writer(db_path)
    try:
        ensure_out_tables(con)
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"DELETE FROM out_findings WHERE p_value IS NOT NULL AND kind IN ({kinds}) AND gaming_day IN ({marks})",
                        nights)
            for table in (FUNNEL_TABLE, GRAPH_TABLE, TESTS_TABLE):
                exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchone()[0]
                if exists:
                    con.execute(f"DELETE FROM {table} WHERE night IN ({marks})", nights)
            for table, written in files.items():
                path = written.result()
                source = "read_parquet('" + path.as_posix().replace("'", "''") + "')"
                if table == "out_findings":
                    con.execute(f"INSERT INTO out_findings SELECT {', '.join(FINDINGS_SCHEMA)} FROM {source}")
                    continue
                stored = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                                     "ORDER BY ordinal_position", [table]).fetchall()
                have = [r[0] for r in stored]
                described = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
                want = [d[0] for d in described]
                if have and have == want:
                    _money_blobs_as_numbers(con, table, dict(stored), {d[0]: d[1] for d in described}, folder)
                if have and have != want:  # derived data of another version: rebuilt
                    con.execute(f"DROP TABLE {table}")
                    have = []
                if not have:
                    con.execute(f"CREATE TABLE {table} AS SELECT * FROM {source} WHERE false")
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {source}")
            write_summaries(con, folder, summaries, summary_paths)  # the days summarised by this run (tonight's, any missing)
            # what the nights' windows were worked out by, for the next night's (after ``write_summaries`` dropped the
            # windows holding a day summarised again)
            write_basis(con, [(o.night, w, o.night - dt.timedelta(days=w - 1), o.basis, o.widths.get(w, {})) for o in outcomes
                              if o.night is not None and o.basis is not None for w in o.windows], nights)
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
    finally:
        con.close()
