"""Benchmark: the morning report of a 1,000,000-round night: build time and file size.

    .venv/bin/python -m benchmarks.report                    # 1,000,000 rounds, 1,000 tables, ~6 M wagers
    .venv/bin/python -m benchmarks.report --rounds 100000    # smaller
    .venv/bin/python -m benchmarks.report --keep DIR --reuse # the night already written to DIR
    .venv/bin/python -m benchmarks.report --browser          # also open it in headless Chromium, sort, search

The night is synthetic, written straight into a DuckDB file in SQL rather than simulated and audited
(that takes many minutes on a shared machine): ``out_settlements`` with one row per wager (six per round
on average, every game and rule set of the catalogue, three currencies), ``core_rounds`` with one row per
round, ``out_findings`` with 13,000 findings (the count of a real 1,000,000-round night, with dealers,
players, money and detail sentences of realistic length) and 2,000 source files. What is timed is what
the audit's publish step does for the report: :func:`pipelines.report.report_inputs` (the SQL aggregates:
per-bet handle, the findings' hours, the files, the trend) and :func:`pipelines.report.write_report`
(hold against theory, the figures, the page). The house edges of the shipped rule sets are stored
(``pipelines/report/theory_figures.json``); ``--cold`` also times computing them (about 6 CPU-seconds,
the simulated blackjack and Hold'em main games most of it), the price of a rule set of the user's own.
The report is given what the audit gives it besides: which finding rounds have an evidence pack (the
findings table's flag) and a hold-detector funnel (one row per baccarat table; :func:`with_audit_pages`).
Writing the packs themselves is measured apart (``benchmarks/packs.py``).
Goal (issue 12): under 15 s and under 10 MB. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import tempfile
import time
from pathlib import Path

DAY = dt.date(2026, 11, 24)
# (game, rule set, version, currency, bets, share of tables)
FLOOR = (
    ("baccarat", "hoiana-tiger-baccarat/commission", "01/01.10.2024", "USD",
     ("banker", "player", "tie", "player_pair", "banker_pair", "tiger"), 0.40),
    ("baccarat", "hoiana-tiger-baccarat/no-commission", "01/01.10.2024", "USD",
     ("banker", "player", "tie", "small_tiger", "big_tiger", "player_pair"), 0.25),
    ("blackjack", "hoiana-blackjack", "01/13.06.2020", "USD", ("main", "main", "main", "pair", "main", "insurance"), 0.20),
    ("holdem_bonus", "hoiana-holdem-bonus", "01/01.05.2025", "USD", ("ante", "flop", "turn", "river", "bonus", "ante"), 0.05),
    ("holdem_bonus", "mbs-holdem-bonus-progressive", "5", "SGD", ("ante", "flop", "turn", "river", "bonus", "progressive"), 0.05),
    ("holdem_bonus", "guide-holdem-bonus-progressive", "1", "AUD", ("ante", "flop", "turn", "river", "bonus", "progressive"), 0.05),
)


def build_night(db: Path, rounds: int, tables: int, findings: int) -> dict:
    """The synthetic night's tables in ``db``; returns its counts."""
    import duckdb

    from pipelines.audit.publish import OUT_TABLES, _ensure
    from pipelines.db import create_tables
    from rulebook.catalogue import load_catalogue

    cat = load_catalogue()
    versions = {rs.name: rs.version for rs in cat.rulesets}
    con = duckdb.connect(str(db))
    create_tables(con)
    for name, schema in OUT_TABLES.items():
        _ensure(con, name, schema)
    # the floor: table i plays FLOOR[k] by share
    floor_rows, start = [], 0
    for k, (game, rs, _v, cur, bets, share) in enumerate(FLOOR):
        n = max(1, round(tables * share)) if k < len(FLOOR) - 1 else tables - start
        for i in range(start, start + n):
            floor_rows.append((i, game, rs, versions.get(rs, _v), cur, list(bets)))
        start += n
    con.execute("CREATE TEMP TABLE floor (t INTEGER, game VARCHAR, ruleset VARCHAR, ver VARCHAR, currency VARCHAR, bets VARCHAR[])")
    con.executemany("INSERT INTO floor VALUES (?, ?, ?, ?, ?, ?)", floor_rows)
    per_table = rounds // tables
    con.execute(f"""
        CREATE TEMP TABLE r AS
        SELECT f.*, 'T-' || lpad(CAST(f.t AS VARCHAR), 4, '0') AS table_id, g.n AS round_no,
               'D' || CAST((f.t * 7 + g.n // 60) % 400 AS VARCHAR) AS dealer_id
        FROM floor f, range(1, {per_table} + 1) g(n)""")
    con.execute("""
        INSERT INTO out_settlements (gaming_day, table_id, round_no, wager_id, wager_order, seat, player_id, dealer_id,
            game, ruleset, ruleset_version, currency, status, bet, amount, settled_amount, cards_net, expected_net,
            clause, recorded_net, difference, source_file, source_line)
        SELECT DATE '2026-11-24', table_id, round_no, 'W' || CAST(round_no AS VARCHAR) || '-' || CAST(w AS VARCHAR), w, w,
               'P-' || CAST(hash(table_id, round_no // 40, w) % 20000 AS VARCHAR), dealer_id, game, ruleset, ver, currency,
               'settled', bets[1 + (w - 1) % 6], amt, amt, net, net, 'TBAC-5.1.1', net, 0,
               'rounds_' || table_id || '.jsonl', round_no
        FROM (SELECT *, amt * CASE WHEN hash(round_no, w, table_id) % 100 < 47 THEN 1 ELSE -1 END AS net
              FROM (SELECT *, CAST(1 + hash(table_id, round_no, w) % 200 AS BIGINT) * 500 AS amt
                    FROM r, range(1, 7) x(w)) a) b""")
    con.execute("""
        INSERT INTO core_rounds (table_id, round_no, game, ruleset, dealer_id, currency, bets_closed_at, status,
            gaming_day, utc_offset_minutes, wager_count, action_count, source_file, source_line)
        SELECT table_id, round_no, game, ruleset, dealer_id, currency,
               TIMESTAMPTZ '2026-11-23 23:00:00+00' + to_seconds(round_no * 86), 'settled', DATE '2026-11-24', 420, 6, 0,
               'rounds_' || table_id || '.jsonl', round_no FROM r""")
    kinds = ("payout_mismatch", "limit_breach", "void_not_honoured", "card_integrity", "drawing_rule_violation",
             "result_mismatch", "sequence_gap", "unmatched_round", "late_wager", "illegal_action")
    con.execute(f"""
        INSERT INTO out_findings (finding_id, kind, severity, gaming_day, table_id, round_no, wager_id, seat, player_id,
            dealer_id, expected_net, recorded_net, difference, rule_ref, detail, source_file, source_line, game, ruleset,
            ruleset_version, currency, device_id)
        SELECT lpad(printf('%x', i), 16, '0'), k.kind, CASE WHEN i % 10 < 6 THEN 'high' WHEN i % 10 < 9 THEN 'medium' ELSE 'low' END,
               DATE '2026-11-24', r.table_id, r.round_no, 'W' || CAST(r.round_no AS VARCHAR) || '-1', 1 + i % 7,
               'P-' || CAST(hash(i) % 20000 AS VARCHAR), r.dealer_id,
               CASE WHEN i % 10 < 6 THEN 20000 END, CASE WHEN i % 10 < 6 THEN 12000 + (i % 50) * 500 END,
               CASE WHEN i % 10 < 6 THEN -8000 + (i % 50) * 500 END, 'TBAC-5.1.3',
               'the Banker wins on 6 with three cards: tiger pays 20:1 (TBAC-5.1.3); paid 12:1 (120,000), expected 200,000: '
               || 'the player was underpaid 80,000 (finding ' || CAST(i AS VARCHAR) || ')',
               'rounds_' || r.table_id || '.jsonl', r.round_no, r.game, r.ruleset, r.ver, r.currency, 'AE-0107'
        FROM range({findings}) f(i)
        JOIN (SELECT *, row_number() OVER () - 1 AS rn FROM r) r ON r.rn = (i * 7919) % (SELECT count(*) FROM r)
        JOIN (SELECT unnest({list(kinds)}) AS kind, generate_subscripts({list(kinds)}, 1) - 1 AS kn) k ON k.kn = i % {len(kinds)}""")
    con.execute("""
        INSERT INTO core_source_files (source_file, kind, sha256, size_bytes, first_line, start_byte, lines_read,
            rows_accepted, rows_quarantined, rows_duplicate, ingested_at, status, error, input_root)
        SELECT 'rounds_' || table_id || '.jsonl', 'rounds_jsonl', md5(table_id), 1000, 1, 0, max(round_no), max(round_no),
               0, 0, TIMESTAMPTZ '2026-11-24 07:00:00+00', 'loaded', NULL, '/night' FROM r GROUP BY table_id
        UNION ALL
        SELECT 'shoe_' || table_id || '.csv', 'shoe_csv', md5(table_id || 's'), 1000, 1, 0, 20 * max(round_no),
               20 * max(round_no), 0, 0, TIMESTAMPTZ '2026-11-24 07:00:00+00', 'loaded', NULL, '/night' FROM r GROUP BY table_id""")
    counts = {name: con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0]
              for name in ("out_settlements", "out_findings", "core_rounds", "core_source_files")}
    keys = con.execute("SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()
    con.close()
    counts["keys"] = keys
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--tables", type=int, default=1_000)
    ap.add_argument("--findings", type=int, default=13_000)
    ap.add_argument("--keep", type=Path, default=None, help="write the database and report here (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the night already written there")
    ap.add_argument("--cold", action="store_true", help="also time computing the house edges of every rule set")
    ap.add_argument("--browser", action="store_true", help="also open the report in headless Chromium and time it")
    args = ap.parse_args()

    import polars as pl

    from pipelines.audit.publish import read_findings, settlement_totals
    from pipelines.report import report_inputs, write_report

    work = args.keep or Path(tempfile.mkdtemp(prefix="pitaudit-bench-report-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "night.duckdb"
    if args.reuse and db.exists():
        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        keys = con.execute("SELECT DISTINCT gaming_day, table_id FROM out_settlements ORDER BY ALL").fetchall()
        counts = {n: con.execute(f"SELECT count(*) FROM {n}").fetchall()[0][0]
                  for n in ("out_settlements", "out_findings", "core_rounds", "core_source_files")}
        con.close()
    else:
        db.unlink(missing_ok=True)
        counts = build_night(db, args.rounds, args.tables, args.findings)
        keys = counts.pop("keys")
    t = time.perf_counter()
    print(f"synthetic night: {counts['core_rounds']:,} rounds, {counts['out_settlements']:,} wagers, "
          f"{counts['out_findings']:,} findings, {len(keys):,} tables, {counts['core_source_files']:,} files")

    if args.cold:
        from pipelines.report.theory import compute_figures
        from rulebook.catalogue import load_catalogue

        t, c = time.perf_counter(), time.process_time()
        for rs in load_catalogue().rulesets:
            compute_figures(rs)
        print(f"house edges of every rule set computed afresh: {time.perf_counter() - t:.1f} s wall, "
              f"{time.process_time() - c:.1f} s CPU (not part of the report's time: they are stored)")

    findings = read_findings(db, keys)  # publish holds these already (findings.csv is written from them)
    totals = settlement_totals(db, keys)
    quarantine = pl.DataFrame(schema={"source_file": pl.String, "source_line": pl.Int64, "reason": pl.String, "raw": pl.String})
    out = work / "report.html"
    t, c = time.perf_counter(), time.process_time()
    inputs = report_inputs(db, keys, findings, totals, quarantine)
    inputs = with_audit_pages(inputs)  # as the audit gives them: the packs written, the hold detector's funnel
    gathered = time.perf_counter() - t
    write_report(out, inputs)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    size = out.stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"report: {wall:.1f} s wall ({gathered:.1f} s of SQL aggregates), {cpu:.1f} s CPU in this process; "
          f"{size / 1e6:.2f} MB ({size:,} bytes); peak memory {peak:,.0f} MB")
    print(f"goal: under 15 s and under 10 MB -> {'met' if wall < 15 and size < 10e6 else 'NOT met'}")
    print(f"report written to {out}")
    if args.browser:
        in_browser(out)


def with_audit_pages(inputs):
    """What the audit adds to the report's inputs: which finding rounds have an evidence pack (the first
    ``Settings.evidence_packs`` of the ranking, the rest over the bound: the findings table then carries a
    flag per row) and the hold detector's funnel (here one row per baccarat table, from the report's own
    per-table hold: the detector is not run on a synthetic night) with its band lines."""
    import dataclasses

    import polars as pl

    from pipelines.evidence.batch import PackIndex
    from pipelines.report.theory import hold_by_table
    from pipelines.settings import Settings
    from pipelines.stats.hold import funnel_curves

    bound = Settings.defaults().evidence_packs
    rounds = inputs.findings.filter(pl.col("round_no").is_not_null() & pl.col("p_value").is_null()).select(
        "gaming_day", "table_id", "round_no").unique(maintain_order=True)
    index = PackIndex(bound=bound, rounds=rounds.height, over_bound=max(0, rounds.height - bound))
    index.written = {(t, r): d for d, t, r in rounds.head(bound).iter_rows()}
    hold = hold_by_table(inputs.bets).filter((pl.col("game") == "baccarat") & pl.col("theo_pct").is_not_null())
    funnel = hold.select(
        pl.lit(DAY).alias("night"), pl.lit("table").alias("entity_type"), pl.col("table_id").alias("entity"),
        pl.lit("all").alias("bet"), "currency", pl.lit(1).alias("window_days"), pl.col("handle").cast(pl.Int64),
        pl.col("house_win").cast(pl.Int64), pl.col("hold_pct").alias("hold"), pl.col("theo_pct").alias("theoretical_hold"),
        pl.col("band_lo_pct").alias("hold_low_95"), pl.col("band_hi_pct").alias("hold_high_95"),
        (pl.col("sd") / pl.col("handle").cast(pl.Float64).sqrt()).alias("sd_per_unit"), pl.lit(0.5).alias("p_value"))
    return dataclasses.replace(inputs, packs=index, funnel=funnel, funnel_curves=funnel_curves(funnel))


def in_browser(path: Path) -> None:
    """Open the report in headless Chromium (tests/browser.py) and time what a reader waits for."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from browser import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        print("browser: no Chromium to open the report with")
        return
    b = Browser(executable)
    try:
        t = time.perf_counter()
        visit = b.open(path, "benchmark")
        visit.page.wait_for_selector("#findings-table[data-ready='1']", timeout=120_000)
        plots = b.wait_for_plots(visit.page, 120_000)
        loaded = time.perf_counter() - t
        t = time.perf_counter()
        visit.page.click("#findings-head th[data-key=diff]")
        sort = time.perf_counter() - t
        t = time.perf_counter()
        visit.page.fill("#f-search", "p-1")
        visit.page.wait_for_function("document.getElementById('f-count').textContent.indexOf(' of ') > 0")
        visit.page.wait_for_timeout(200)  # the search waits 150 ms for the typing to stop
        search = time.perf_counter() - t - 0.2
        print(f"browser: open, unpack the findings and draw {plots} charts {loaded:.1f} s; sort the findings "
              f"{sort:.2f} s; search {max(search, 0):.2f} s ({visit.page.text_content('#f-count')}); "
              f"console errors {len(visit.console_errors)}, requests off file:// {len(visit.blocked_requests)}")
    finally:
        b.close()


if __name__ == "__main__":
    main()
