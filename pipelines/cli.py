"""The ``pitaudit`` command line. Each command's body lives in its own module and is imported
only when the command runs, so ``pitaudit --help`` stays instant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    name="pitaudit",
    help="Audit casino table games: re-settle every round from the cards and flag what is wrong.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def settings_or_fail():
    """The run's PITAUDIT_* settings, read once here and handed down; a malformed value stops the command."""
    from pipelines.settings import SettingsError, load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        fail(str(exc))


def publish_for_readers(db: Path, settings=None) -> None:
    """After a run, hand readers a consistent copy so they never hold the writer's file (pipelines/db.py)."""
    from pipelines.db import DatabaseError, publish_snapshot

    try:
        target = publish_snapshot(db, *([settings.writer_memory] if settings is not None else []))
    except (DatabaseError, OSError) as exc:
        fail(f"the run finished but its read-only snapshot could not be published: {exc}")
    typer.echo(f"read-only snapshot for investigators and notebooks: {target}")


# exit statuses a scheduler can act on (README, "Exit statuses")
EXIT_AUDITED = 0  # the audit ran, whatever it found
EXIT_COULD_NOT_RUN = 2  # a bad option or setting, an unreadable folder, a database another run holds, a failure
EXIT_INTERNAL = 3  # a defect of the loader (its line accounting): report it
EXIT_NOTHING_TO_AUDIT = 4  # the input (or the days asked for) held no round: not a clean night


def fail(message: str, code: int = EXIT_COULD_NOT_RUN) -> None:
    """Stop with a one-line reason (never a traceback) and a non-zero exit status."""
    typer.secho(f"pitaudit: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code)


@app.command()
def rulesets(
    names: bool = typer.Option(False, "--names", help="Print only the rule-set names, one a line."),
) -> None:
    """List the approved rule sets, their versions and effective dates."""
    from rulebook.catalogue import builtin

    cat = builtin()
    for name in cat.names():
        if names:
            typer.echo(name)
            continue
        for rs in sorted(cat.versions(name), key=lambda r: r.header.effective_from):
            h = rs.header
            typer.echo(f"{h.name:40} {h.game:13} version {h.version:15} from {h.effective_from}  ({h.clause_prefix})")


@app.command()
def odds(
    ruleset: str = typer.Option(..., "--ruleset", help="Rule-set name, e.g. hoiana-tiger-baccarat/commission (see `pitaudit rulesets`)."),
    decks: Optional[int] = typer.Option(None, "--decks", min=1, max=16, help="Decks in the shoe (default: the rule set's)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: {ruleset, decks, bets: {bet: {house_edge, ...}}}."),
    rounds: Optional[int] = typer.Option(None, "--rounds", min=10_000, help="Rounds to simulate for figures that need a strategy (blackjack, the Hold'em main game); default: the game's, a few seconds' worth."),
    seed: int = typer.Option(20261125, "--seed", help="Seed for simulated figures."),
    strategy: Optional[str] = typer.Option(None, "--strategy", help="The player's strategy for figures that depend on decisions (Hold'em: optimal, basic, pair_with_hole, check); default: the game's near-optimal one."),
    flops: Optional[int] = typer.Option(None, "--flops", min=2, help="Hold'em under the optimal strategy: count this many random flops (with a standard error) instead of all 1,755 flop classes (exact, 1-1.5 CPU-minutes and up to 0.7 GB a process, with a progress bar on a terminal)."),
    processes: int = typer.Option(0, "--processes", min=0, help="Processes to spread the Hold'em flop count over; 0 = one per core. The figures do not depend on it."),
) -> None:
    """House edge of every bet, with the strategy and standard error behind every figure that depends on decisions: exact where the game allows, else counted or simulated."""
    from rulebook.catalogue import UnknownRuleSet, builtin
    from rulebook.odds import house_edges

    try:
        rs = builtin().latest(ruleset)
    except UnknownRuleSet as exc:
        fail(str(exc))
    try:
        options = {k: v for k, v in (("strategy", strategy), ("flops", flops)) if v is not None}
        from pipelines.chunks_on_cores import chunks_on_cores
        from pipelines.console import count_progress

        with count_progress("Hold'em main game, flops counted") as progress, chunks_on_cores(processes) as map_chunks:
            report = house_edges(rs, decks, rounds=rounds, seed=seed, progress=progress, map_chunks=map_chunks, **options)
    except ValueError as exc:  # e.g. a deck count the game is not dealt with
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(report.as_json()))
        return
    from pipelines.odds_table import render

    render(report)


@app.command()
def simulate(
    out: Path = typer.Option(..., "--out", help="Folder to write shoe_*.csv, rounds_*.jsonl and ground_truth.csv into."),
    tables: int = typer.Option(0, "--tables", min=0, help="Tables on the floor (a mix of all six rule sets); 0 = enough for the rounds at each game's pace (at least 24)."),
    rounds: int = typer.Option(5_000, "--rounds", min=1, help="Rounds in all, per day, across the floor."),
    days: int = typer.Option(1, "--days", min=1, help="Gaming days to simulate."),
    seed: int = typer.Option(7, "--seed", min=0, help="Random seed: the same seed writes the same bytes."),
    fault_rate: float = typer.Option(0.01, "--fault-rate", min=0.0, max=1.0, help="Share of rounds with a planted fault."),
    start_day: str = typer.Option("2026-11-24", "--start-day", help="The first gaming day (YYYY-MM-DD)."),
    counter: float = typer.Option(0.5, "--counter", min=0.0, max=1.0, help="Strength of the planted card counter's bet spread (0 = off)."),
    luck: float = typer.Option(0.5, "--luck", min=0.0, max=1.0, help="Strength of the planted lucky side-bet player (0 = off)."),
    collusion: float = typer.Option(0.5, "--collusion", min=0.0, max=1.0, help="Share of a colluding dealer's rounds with one player that are overpaid (0 = off)."),
    drift: float = typer.Option(0.5, "--drift", min=0.0, max=1.0, help="Strength of the planted hold drift at one baccarat table (0 = off)."),
    workers: int = typer.Option(0, "--workers", min=0, help="Processes playing the tables; 0 = one per core. The output does not depend on it."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace simulated logs already in --out (only shoe_*.csv, rounds_*.jsonl, ground_truth.csv)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no summary."),
    game_shares: Optional[str] = typer.Option(None, "--game-shares", metavar="GAME=SHARE,...", help="The night's share of rounds per game, e.g. baccarat=40,holdem_bonus=40,blackjack=20 (relative weights; a game left out gets no table); default: the floor's usual mix, about 77 % baccarat, 15 % blackjack, 8 % Hold'em."),
) -> None:
    """Write a casino night's logs, exactly as the devices and the table system do, with planted faults and their ground truth."""
    import datetime as dt

    from pipelines.simulate.config import Behaviours, parse_game_shares
    from pipelines.simulate.run import SimulationError, run_simulation

    try:
        first = dt.date.fromisoformat(start_day)
    except ValueError:
        fail(f"--start-day must be a date like 2026-11-24, got {start_day!r}")
    from schemas.rules import TS_MAX, TS_MIN

    # the nights' instants (a night runs past midnight) must be ones the ingest accepts (formats.md, Conventions)
    lo, hi = TS_MIN.date() + dt.timedelta(days=1), TS_MAX.date() - dt.timedelta(days=2)
    if not lo <= first or (hi - first).days + 1 < days:
        fail(f"--start-day {first} with --days {days:,}: the simulated gaming days must lie from {lo} to {hi} "
             "(the instants the ingest accepts)")
    try:
        mix = parse_game_shares(game_shares) if game_shares is not None else None
    except ValueError as exc:
        fail(f"--game-shares: {exc}")
    try:
        run_simulation(out=out, tables=tables, rounds=rounds, days=days, seed=seed, fault_rate=fault_rate,
                       start_day=first, behaviours=Behaviours(counter, luck, collusion, drift), workers=workers,
                       overwrite=overwrite, quiet=quiet, game_shares=mix)
    except (SimulationError, OSError) as exc:
        fail(str(exc))


@app.command()
def ingest(
    input: Path = typer.Option(..., "--input", help="Folder searched recursively for shoe_*.csv and rounds_*.jsonl."),
    db: Path = typer.Option(..., "--db", help="DuckDB file to load into (created if missing)."),
    day_start: str = typer.Option("06:00", "--gaming-day-start", help="Local time at which a gaming day begins."),
) -> None:
    """Load the card-device and table-system logs into DuckDB; every line is accepted or quarantined with a reason."""
    settings = settings_or_fail()
    from pipelines.console import ingest_progress, print_ingest_summary
    from pipelines.db import DatabaseError, open_writer
    from pipelines.ingest.run import IngestError, ingest_folder
    from pipelines.ingest.store import InvariantError

    from pipelines.writer_lock import LockError, writer_lock

    from pipelines.audit.run import not_utf8

    problem = not_utf8(input_folder=input, database=db)
    if problem:
        fail(problem)
    if not input.is_dir():  # before the database is created or locked: a typo makes no empty database
        fail(f"input folder {input} does not exist or is not a folder")
    try:
        with writer_lock(db, settings.lock_wait, lambda text: typer.echo(f"pitaudit: {text}", err=True)):
            try:
                con = open_writer(db, settings.writer_memory)
            except DatabaseError as exc:
                fail(str(exc))
            try:
                with ingest_progress() as progress:
                    summary = ingest_folder(con, input, day_start, settings=settings, progress=progress)
            finally:
                con.close()
            print_ingest_summary(summary)
            publish_for_readers(db, settings)
    except (IngestError, LockError) as exc:
        fail(str(exc))
    except InvariantError as exc:
        fail(f"internal error (line accounting), nothing of that batch of files was kept: {exc}", code=EXIT_INTERNAL)
    except typer.Exit:  # a reason already said (fail() inside the block): typer's Exit is a RuntimeError too
        raise
    except Exception as exc:  # noqa: BLE001 - one line, as `audit` says it (PITAUDIT_DEBUG=1 shows the traceback)
        if settings.debug:
            raise
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        fail(f"the ingest stopped: {type(exc).__name__}: {text}")


@app.command()
def audit(
    input: Path = typer.Option(..., "--input", help="Folder searched recursively for shoe_*.csv and rounds_*.jsonl."),
    db: Path = typer.Option(..., "--db", help="DuckDB file (created if missing); findings are kept there too."),
    out: Path = typer.Option(..., "--out", help="Folder for findings.csv, settlements.parquet, quarantine.csv, report.html."),
    day_start: str = typer.Option("06:00", "--gaming-day-start", help="Local time at which a gaming day begins."),
    gaming_day: Optional[str] = typer.Option(None, "--gaming-day", help="Audit and report this gaming day only (YYYY-MM-DD); default: the gaming days of the input."),
    from_day: Optional[str] = typer.Option(None, "--from", help="Backfill: the first gaming day to re-audit (with --to)."),
    to_day: Optional[str] = typer.Option(None, "--to", help="Backfill: the last gaming day to re-audit (with --from)."),
    dask: Optional[str] = typer.Option(None, "--dask", help="Run the partitions on a Dask cluster: local (a cluster of "
                                       "worker processes on this machine) or a scheduler address, e.g. tcp://HOST:8786."),
) -> None:
    """The nightly audit: ingest, reconstruct every round from the cards, re-settle every wager, flag every finding, publish.

    Exit status: 0 audited (whatever it found), 4 nothing to audit (no round in the input or the days asked for),
    2 could not run (the reason on one line; PITAUDIT_DEBUG=1 shows the traceback)."""
    settings = settings_or_fail()
    from pipelines.audit.run import AuditError, NothingToAudit, run_audit
    from pipelines.db import snapshot_path

    try:
        run_audit(input_dir=input, db_path=db, out_dir=out, gaming_day_start=day_start, settings=settings,
                  gaming_day=gaming_day, from_day=from_day, to_day=to_day, dask=dask)
    except NothingToAudit as exc:
        fail(str(exc), code=EXIT_NOTHING_TO_AUDIT)
    except AuditError as exc:
        fail(str(exc))
    typer.echo(f"read-only snapshot for investigators and notebooks: {snapshot_path(db)}")


@app.command()
def serve(
    cron: str = typer.Option(..., "--cron", help='When to audit, a cron line in --timezone, e.g. "30 6 * * *" (06:30 every day).'),
    timezone: str = typer.Option("UTC", "--timezone", help="The cron line's time zone, e.g. Asia/Ho_Chi_Minh."),
    input: Path = typer.Option(..., "--input", help="Folder the night's exports arrive in (searched recursively)."),
    db: Path = typer.Option(..., "--db", help="DuckDB file every night is audited into."),
    out: Path = typer.Option(..., "--out", help="Folder for each night's findings.csv, settlements.parquet, quarantine.csv, report.html."),
    day_start: str = typer.Option("06:00", "--gaming-day-start", help="Local time at which a gaming day begins."),
    name: str = typer.Option("nightly", "--name", help="The deployment's name on the Prefect server."),
) -> None:
    """Serve the nightly audit as a Prefect deployment on a schedule, against the Prefect server in PREFECT_API_URL
    (start one with `prefect server start`). Runs until Ctrl-C; each run is `pitaudit audit` named by its gaming day."""
    settings_or_fail()
    from pipelines.audit.params import parse_day_start
    from pipelines.audit.run import AuditError, check_can_run, prefect_defaults
    from pipelines.audit.schedule import ScheduleError, check_schedule

    try:
        check_schedule(cron, timezone)
        parse_day_start(day_start)
        check_can_run(input, db, out, day_start)  # what the first night would stop on, said now and not at 06:30
    except (ScheduleError, ValueError, AuditError) as exc:
        fail(str(exc))
    prefect_defaults(console="INFO", own_home=False)
    from prefect.settings import get_current_settings

    if not get_current_settings().api.url:
        fail("pitaudit serve needs a Prefect server: start one with `prefect server start` and set PREFECT_API_URL "
             "(e.g. http://127.0.0.1:4200/api); without a server, run `pitaudit audit` from cron (README)")
    from pipelines.audit.schedule import nightly_deployment, serve_forever

    serve_forever(nightly_deployment(input, db, out, cron, timezone, day_start, name=name))


@app.command()
def clause(
    clause_id: str = typer.Argument(..., metavar="ID", help="A clause id as findings cite it, e.g. TBAC-7.7, BJ-4.10.1.2, THB-G-SETTLEMENT."),
    rule_docs: Optional[Path] = typer.Option(None, "--rule-docs", help="Folder of the casino's rule documents (default: PITAUDIT_RULE_DOCS; see docs/rule-documents.md)."),
) -> None:
    """Print the text of a rule clause (with its sub-clauses), read from the casino's rule documents."""
    from pipelines.show_clause import clause_answer

    answer = clause_answer(clause_id, rule_docs if rule_docs is not None else settings_or_fail().rule_docs)
    if answer.status:
        fail(answer.text, code=answer.status)
    typer.echo(answer.text)


@app.command()
def demo(
    out: Path = typer.Option(Path("out"), "--out", help="Where to write the database and the report."),
) -> None:
    """Audit the committed sample night (data/sample/) and say where the report is."""
    settings = settings_or_fail()
    from pipelines.audit.run import AuditError
    from pipelines.demo import run_demo

    from pipelines.db import snapshot_path

    try:
        run_demo(out, settings=settings)
    except AuditError as exc:
        fail(str(exc))
    typer.echo(f"read-only snapshot for investigators and notebooks: {snapshot_path(out / 'pitaudit.duckdb')}")


@app.command()
def evidence(
    db: Optional[Path] = typer.Option(None, "--db", help="The audit's DuckDB file (its read-only snapshot is read when there is one)."),
    table: Optional[str] = typer.Option(None, "--table", help="The round's table id, e.g. BAC-02."),
    round_no: Optional[int] = typer.Option(None, "--round", min=0, help="The round's game number."),
    gaming_day: Optional[str] = typer.Option(None, "--gaming-day", help="The round's gaming day (YYYY-MM-DD); needed only when the round number recurs on several days."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for the pack (empty, or a previous pack); default: evidence/<table>/<round> under the current folder, where the report (run from its folder) links to it."),
    cameras: Optional[Path] = typer.Option(None, "--cameras", help="Table-to-camera map (TOML, docs/evidence.md); default: the PITAUDIT_CAMERAS setting."),
    rule_docs: Optional[Path] = typer.Option(None, "--rule-docs", help="Folder of the casino's rule documents, to quote each clause's text; default: the PITAUDIT_RULE_DOCS setting."),
    verify_dir: Optional[Path] = typer.Option(None, "--verify", help="Check the pack in this folder instead: any changed, added or removed file fails, named."),
    seal: Optional[str] = typer.Option(None, "--seal", help="With --verify: the seal printed when the pack was written (SHA-256 of its SHA256SUMS)."),
) -> None:
    """A round's dispute evidence pack (HTML + JSON, card by card, each amount with its clause, sealed by SHA-256), or --verify one."""
    from pipelines.evidence.command import run_evidence

    run_evidence(db, table, round_no, gaming_day, out, cameras, rule_docs, verify_dir, seal, fail,
                 settings=None if verify_dir is not None else settings_or_fail())


@app.command()
def investigate(
    db: Path = typer.Option(..., "--db", help="The audit's DuckDB file (its read-only snapshot is read when there is one)."),
    player: Optional[str] = typer.Option(None, "--player", help="Investigate this player id."),
    dealer: Optional[str] = typer.Option(None, "--dealer", help="Investigate this dealer id."),
    table: Optional[str] = typer.Option(None, "--table", help="Investigate this table id."),
    first: Optional[str] = typer.Option(None, "--from", help="First gaming day (YYYY-MM-DD); default: the first in the database."),
    last: Optional[str] = typer.Option(None, "--to", help="Last gaming day (YYYY-MM-DD); default: the last in the database."),
    out: Path = typer.Option(..., "--out", help="Folder for index.html and the rows as CSV and Parquet."),
) -> None:
    """One player, dealer or table across gaming days: every round and finding, results against expectation, bets against the count."""
    from pipelines.investigation.command import run_investigate

    run_investigate(db, player, dealer, table, first, last, out, fail)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
