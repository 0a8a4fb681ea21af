"""The body of ``pitaudit investigate``: gather one subject's rows read-only, write the page and the rows.

Files written into ``--out``: ``index.html`` (the page), ``plotly.min.js`` (the charts' script, which the page
loads from beside it), and each table as CSV and Parquet: ``rounds``, ``wagers``, ``findings``,
``results_over_time``, ``bet_vs_count``, ``dealers``, ``tables``, ``played_with``. The audit's pages (:func:`write_pages` with
:data:`AUDIT_CSV_TABLES`) write the big tables as Parquet only, and say how to get their CSVs.
"""

from __future__ import annotations

import datetime as dt
import shlex
from pathlib import Path

import polars as pl

from pipelines import investigate as q
from pipelines.csv_safe import write_csv
from pipelines.db import DatabaseError, open_reader
from pipelines.evidence.pack import database_for_readers, pitaudit_version
from pipelines.evidence.render import money_unit_note
from pipelines.investigation import figures as F
from pipelines.investigation.analysis import (bet_ramp, bet_vs_count, by_table, dealers_with_theory, results_over_time,
                                             results_summary)
from pipelines.investigation.count import true_counts
from pipelines.investigation.render import MAX_HTML_ROWS, render_page, script_href, table_rows, write_plotly_js
from pipelines.investigation.theory import exact_where_known
from pipelines.money import money_for_files
from pipelines.out_folder import check_folder, prepare_folder

TABLES = ("rounds", "wagers", "findings", "results_over_time", "bet_vs_count", "dealers", "tables", "played_with")
# The audit's pages write every table as Parquet and only these as CSV too: rounds, wagers, results_over_time and
# bet_vs_count grow with the window (a 30-day page's wagers were tens of MB as CSV, written again as Parquet, for
# every flagged subject of every night). ``pitaudit investigate --out DIR`` writes them all as CSV (the page says).
AUDIT_CSV_TABLES = ("findings", "dealers", "tables", "played_with")
#: how a page's tables are written as Parquet: zstd at its fastest level. A page over 30 days holds every wager of its
#: window (night 31 of 30 nights: 31 pages, 2.2 million rows in 217 Parquet files); polars' default level (3) cost
#: about 1.1-1.2 CPU s for them, level 1 about 0.85, for 6 % more bytes (48.5 -> 51.6 MB). The same rows and types
#: (a reader sees the same frames), and the same bytes on every run.
PAGE_PARQUET = {"compression": "zstd", "compression_level": 1}
MOMENTS_NOTE = ("from each bet's payout distribution: exact for every baccarat bet, the Hold'em Bonus bet and the "
                "blackjack Pair and Insurance; the Hold'em main game (Ante, Flop, Turn and River per unit of Ante, "
                "given to the Ante) and the blackjack main wager from the engine's simulation of its stated strategy "
                "(a player who plays worse than that strategy nets less than the line: at these games a curve "
                "below the band is what folding too often or standing too soon gives, not by itself an anomaly); a "
                "jackpot wager, whose stake the rule set leaves unstated, from every wager of the floor in the range "
                "as the rules settle it. The table below says which each bet is")


class InvestigationError(RuntimeError):
    """The investigation cannot run; one line a person can act on."""


def gather(con, subject: q.Subject, moments_of: dict | None = None) -> dict[str, object]:
    """Every frame of the investigation (see the module docstring), read with the read-only connection ``con``.

    ``moments_of``: the bets' moments per range already read (the audit's pages of one window share them)."""
    return gather_many(con, [subject], moments_of)[subject]


def gather_many(con, subjects: list[q.Subject], moments_of: dict | None = None) -> dict[q.Subject, dict[str, object]]:
    """:func:`gather` of several subjects: one query per table for all the subjects of one kind and range (the audit
    writes a page for each flagged subject of each window: one query per page and table grew with the pages)."""
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if not {"out_settlements", "out_findings"} <= have:
        raise InvestigationError("the database holds no audit results (out_settlements, out_findings): run `pitaudit audit` first")
    moments_of = {} if moments_of is None else moments_of
    groups: dict[tuple, list[q.Subject]] = {}
    for subject in dict.fromkeys(subjects):
        groups.setdefault((subject.kind, subject.first, subject.last), []).append(subject)
    out: dict[q.Subject, dict[str, object]] = {}
    for (_, first, last), group in groups.items():
        if (first, last) not in moments_of:
            moments_of[(first, last)] = exact_where_known(q.bet_moments(con, first, last))
        moments = moments_of[(first, last)]
        wagers_of = q.subject_wagers_of(con, group)
        # the count before each round of the group's blackjack shoes (each shoe's count is its own)
        bj = pl.concat([w.filter(pl.col("game") == "blackjack") for w in wagers_of.values()])
        # their events near the rounds' times (DuckDB skips the other nights'), a shoe that started earlier whole
        near = (bj["bets_closed_at"].min(), bj["bets_closed_at"].max()) if bj.height else None
        counts = true_counts(q.blackjack_cards(con, sorted(bj["table_id"].unique().to_list()),
                                               bj.select("table_id", "shoe_id").unique(), near))
        rounds, findings = q.subject_rounds_of(con, group, wagers_of), q.subject_findings_of(con, group)
        dealers, played = q.dealers_of_many(con, group, wagers_of), q.played_with_many(con, group, wagers_of)
        for subject in group:
            wagers = wagers_of[subject]
            out[subject] = {
                "rounds": rounds[subject], "wagers": wagers, "findings": findings[subject],
                "results_over_time": results_over_time(wagers, moments), "bet_vs_count": bet_vs_count(wagers, counts),
                "dealers": dealers_with_theory(dealers[subject], wagers, moments), "tables": by_table(wagers, moments),
                "played_with": played[subject],
                "moments": moments,
            }
    return out


def count_source() -> str:
    return "the statistical detectors' count, pipelines.stats.counts; burns not counted"


#: the names an investigation's folder may hold (a previous investigation's files)
OWN_FILES = {"index.html", "plotly.min.js"} | {f"{name}.{ext}" for name in TABLES for ext in ("csv", "parquet")}


def write_investigation(db: Path, subject: q.Subject, out: Path) -> Path:
    """Write the investigation of ``subject`` into ``out``; returns the page's path."""
    check_folder(out, OWN_FILES, "investigation", InvestigationError)  # before the database is read
    source = database_for_readers(db)
    try:
        con = open_reader(source)
    except DatabaseError as exc:
        raise InvestigationError(str(exc)) from None
    try:
        frames = gather(con, subject)
    finally:
        con.close()
    check_found(frames, subject, str(source))  # before the previous run's files are removed: a typo keeps them
    prepare_folder(out, OWN_FILES, "investigation", InvestigationError)
    return write_pages(frames, subject, out, str(source))


def check_found(frames: dict, subject: q.Subject, source: str) -> None:
    """:class:`InvestigationError` when the gathered ``frames`` hold no wager and no finding of ``subject``."""
    if frames["rounds"].height == 0 and frames["findings"].height == 0:
        raise InvestigationError(f"nothing about {subject.label} in {source}: no wager and no finding names it")


def investigate_command(subject: q.Subject, database: str) -> str:
    """The ``pitaudit investigate`` line that writes this subject's page with every table as CSV (shell-quoted: an id
    comes from the logs)."""
    days = "".join(f" --{o} {d.isoformat()}" for o, d in (("from", subject.first), ("to", subject.last)) if d)
    return f"pitaudit investigate --db {shlex.quote(database)} --{subject.kind} {shlex.quote(subject.id)}{days} --out DIR"


def write_pages(frames: dict, subject: q.Subject, out: Path, source: str, plotly_js: Path | None = None,
                csv_tables: tuple[str, ...] = TABLES, max_points: int | None = F.MAX_POINTS) -> Path:
    """The investigation's files from its gathered frames (:func:`gather`); the audit calls it with its own reader.

    ``plotly_js``: the output folder's shared ``plotly.min.js`` the page loads (``render.write_plotly_js``, written by
    the caller once for all its pages); None: written into ``out`` beside the page. Every table is written as
    Parquet, those of ``csv_tables`` as CSV too (the audit's pages: :data:`AUDIT_CSV_TABLES`). ``max_points``: the
    results figure's points per trace (:func:`figures.thinned`; None: all)."""
    rounds, wagers, findings = frames["rounds"], frames["wagers"], frames["findings"]
    check_found(frames, subject, source)
    out.mkdir(parents=True, exist_ok=True)
    if plotly_js is None:
        plotly_js = write_plotly_js(out)
    files = []
    for name in TABLES:
        frame: pl.DataFrame = frames[name]
        if name in csv_tables:
            write_csv(frame, out / f"{name}.csv")
            files.append(f"{name}.csv")
        money_for_files(frame).write_parquet(out / f"{name}.parquet", **PAGE_PARQUET)
        files.append(f"{name}.parquet")
    # the file a person opens for all of a table's rows: its CSV where there is one
    rows_file = {name: f"{name}.csv" if name in csv_tables else f"{name}.parquet" for name in TABLES}

    curve = frames["results_over_time"]
    summary = results_summary(curve)
    summary_rows = [
        {**s, "cum_theory_units": None if s["cum_theory"] is None else round(s["cum_theory"]),
         "sd_units": None if s.get("sd") is None else round(s["sd"])}
        for s in summary.to_dicts()
    ]
    ramp = bet_ramp(frames["bet_vs_count"])
    figs: dict[str, str] = {}
    chart_notes = []
    for i, cur in enumerate(sorted(curve["currency"].drop_nulls().unique().to_list()) if curve.height else []):
        figs[f"results-{cur}"] = F.fragment(F.results_spec(curve, cur, max_points), f"fig-results-{i}")
        points = int((curve["currency"] == cur).sum())
        if max_points is not None and points > max_points:
            chart_notes.append(
                f"The {cur} results chart is thinned to {max_points:,} of its {points:,} wagers' points per line: the "
                f"first and the last, and in each stretch between them the wagers where the recorded net is farthest "
                f"above and below theory, so no peak or dip is lost. Every wager's point is in "
                f"{' and '.join(f for f in (f'results_over_time.{x}' for x in ('parquet', 'csv')) if f in files)}.")
    if ramp["wagers"]:
        of_currency = frames["bet_vs_count"].filter(pl.col("currency") == ramp["currency"]) if ramp["currency"] else frames["bet_vs_count"]
        markers = F.count_sample(of_currency, max_points) if max_points is not None else of_currency
        figs["bet-vs-count"] = F.fragment(F.count_spec(markers, ramp, None), "fig-count")
        drawn = markers.height
        if drawn < ramp["wagers"]:
            chart_notes.append(
                f"The bet-versus-count chart's markers are {drawn:,} of the {ramp['wagers']:,} wagers: {max_points:,} spread evenly through "
                f"them, and in each true count the largest and the smallest bet. The mean bet per count, the correlation "
                f"and the table below are of every wager; every wager is in "
                f"{' and '.join(f for f in (f'bet_vs_count.{x}' for x in ('parquet', 'csv')) if f in files)}.")
    if findings.height:
        by_kind = findings.group_by("kind").len().sort(["len", "kind"], descending=[True, False])
        figs["findings-by-kind"] = F.fragment(F.bars_spec(by_kind["kind"].to_list(), by_kind["len"].to_list(),
                                                     "Findings by kind", "findings", "#b42318"), "fig-findings")
    dealers, tables = frames["dealers"], frames["tables"]
    if subject.kind == "dealer" and tables.height:
        # a dealer's rounds are all under himself: where his results against theory came from is the chart (the table
        # below has every table)
        cur = tables.group_by("currency").agg(pl.col("wagered").sum()).sort(["wagered", "currency"], descending=[True, False])["currency"][0]
        t = tables.filter(pl.col("currency") == cur).head(30)
        divisor, label = F.unit(cur)
        figs["tables"] = F.fragment(F.bars_spec(t["table_id"].to_list(), [v / divisor for v in t["above_theory"].to_list()],
                                                "Players' net above theory at each table", label), "fig-tables")
    elif dealers.height:
        d = dealers.group_by("dealer_id").agg(pl.col("rounds").sum()).sort(["rounds", "dealer_id"], descending=[True, False]).head(30)
        figs["dealers"] = F.fragment(F.bars_spec(d["dealer_id"].to_list(), d["rounds"].to_list(), "Rounds under each dealer", "rounds"),
                                     "fig-dealers")
    notes = []
    without = int(summary["without_theory"].sum()) if summary.height else 0
    if without:
        notes.append(f"{without} wager(s) of a bet the floor has no settled wager of add nothing to the theory line")
    currencies = wagers["currency"].drop_nulls().unique().to_list()
    page = render_page({
        "subject": {"kind": subject.kind, "id": subject.id},
        "span": f"{subject.first or rounds['gaming_day'].min() or ''} to {subject.last or rounds['gaming_day'].max() or ''}",
        "database": source, "version": pitaudit_version(), "files": files, "rows_file": rows_file,
        "csv_command": None if set(csv_tables) >= set(TABLES) else investigate_command(subject, source),
        "notes": notes, "chart_notes": chart_notes,
        "counts": {"rounds": rounds.height, "wagers": wagers.height, "findings": findings.height,
                   "days": rounds["gaming_day"].n_unique(), "tables": rounds["table_id"].n_unique(),
                   "dealers": dealers.height, "by_table": tables.height, "players": frames["played_with"].height},
        "summary": summary_rows, "moments_note": MOMENTS_NOTE, "figures": figs, "ramp": ramp, "count_source": count_source(),
        "findings": table_rows(findings), "dealers": table_rows(dealers), "players": table_rows(frames["played_with"]),
        "tables": table_rows(tables.with_columns(pl.col("theory").round(0), pl.col("sd").round(0),
                                                 pl.col("above_theory").round(0), pl.col("z_recorded").round(1))),
        "rounds": table_rows(rounds),
        "theory": [r for r in table_rows(frames["moments"].join(
            wagers.select("ruleset", "bet", "currency").unique(), on=["ruleset", "bet", "currency"], how="semi").sort(
            "ruleset", "bet", "currency"))],
        "unit_note": money_unit_note(currencies[0] if len(currencies) == 1 else ", ".join(sorted(currencies)) or None),
    }, script_href(out, plotly_js))
    (out / "index.html").write_text(page, encoding="utf-8")
    return out / "index.html"


def parse_day(text: str | None, option: str) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvestigationError(f"{option} must be a date like 2026-11-24, got {text!r}") from None


def run_investigate(db: Path, player: str | None, dealer: str | None, table: str | None, first: str | None,
                    last: str | None, out: Path, fail) -> None:
    import typer

    from pipelines.evidence.gather import EvidenceError

    named = [(k, v) for k, v in (("player", player), ("dealer", dealer), ("table", table)) if v is not None]
    if len(named) != 1:
        fail("name exactly one subject: --player ID, --dealer ID or --table ID")
    kind, ident = named[0]
    try:
        subject = q.Subject(kind, ident, parse_day(first, "--from"), parse_day(last, "--to"))
        if subject.first and subject.last and subject.first > subject.last:
            raise InvestigationError(f"--to {subject.last} is before --from {subject.first}")  # as `audit` says it
        page = write_investigation(db, subject, out)
    except (InvestigationError, EvidenceError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the investigation into {out}: {exc.strerror or exc}")
    typer.echo(f"investigation of {subject.label}: {page}")
