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


def fail(message: str, code: int = 2) -> None:
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
) -> None:
    """House edge and win probability of every bet: exact enumeration where the game allows, else simulation with a 95 % interval."""
    from rulebook.catalogue import UnknownRuleSet, builtin
    from rulebook.odds import house_edges

    try:
        rs = builtin().latest(ruleset)
    except UnknownRuleSet as exc:
        fail(str(exc))
    try:
        report = house_edges(rs, decks, rounds=rounds, seed=seed)
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
) -> None:
    """Write a casino night's logs, exactly as the devices and the table system do, with planted faults and their ground truth."""
    import datetime as dt

    from pipelines.simulate.config import Behaviours
    from pipelines.simulate.run import SimulationError, run_simulation

    try:
        first = dt.date.fromisoformat(start_day)
    except ValueError:
        fail(f"--start-day must be a date like 2026-11-24, got {start_day!r}")
    try:
        run_simulation(out=out, tables=tables, rounds=rounds, days=days, seed=seed, fault_rate=fault_rate,
                       start_day=first, behaviours=Behaviours(counter, luck, collusion, drift), workers=workers,
                       overwrite=overwrite, quiet=quiet)
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
    from pipelines.ingest.run import IngestError, run_ingest
    from pipelines.ingest.store import InvariantError

    try:
        run_ingest(input_dir=input, db_path=db, gaming_day_start=day_start, settings=settings)
    except IngestError as exc:
        fail(str(exc))
    except InvariantError as exc:
        fail(f"internal error (line accounting), nothing of that batch of files was kept: {exc}", code=3)
    publish_for_readers(db, settings)


@app.command()
def audit(
    input: Path = typer.Option(..., "--input", help="Folder searched recursively for shoe_*.csv and rounds_*.jsonl."),
    db: Path = typer.Option(..., "--db", help="DuckDB file (created if missing); findings are kept there too."),
    out: Path = typer.Option(..., "--out", help="Folder for findings.csv, settlements.parquet, quarantine.csv, report.html."),
    day_start: str = typer.Option("06:00", "--gaming-day-start", help="Local time at which a gaming day begins."),
) -> None:
    """The nightly audit: ingest, reconstruct every round from the cards, re-settle every wager, flag every finding, publish."""
    settings = settings_or_fail()
    from pipelines.audit.run import AuditError, run_audit

    try:
        run_audit(input_dir=input, db_path=db, out_dir=out, gaming_day_start=day_start, settings=settings)
    except AuditError as exc:
        fail(str(exc))
    publish_for_readers(db, settings)


@app.command()
def clause(
    clause_id: str = typer.Argument(..., metavar="ID", help="A clause id as findings cite it, e.g. TBAC-7.7, BJ-4.10.1.2, THB-G-SETTLEMENT."),
    rule_docs: Optional[Path] = typer.Option(None, "--rule-docs", help="Folder of the casino's rule documents (default: PITAUDIT_RULE_DOCS; see docs/rule-documents.md)."),
) -> None:
    """Print the text of a rule clause (with its sub-clauses), read from the casino's rule documents."""
    from pipelines.show_clause import clause_answer

    answer = clause_answer(clause_id, rule_docs)
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

    try:
        run_demo(out, settings=settings)
    except AuditError as exc:
        fail(str(exc))
    publish_for_readers(out / "pitaudit.duckdb", settings)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
