"""Print an OddsReport as a table a pit manager can read."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from rulebook.odds import OddsReport


def _pct(x: float | None, digits: int = 4) -> str:
    return "" if x is None else f"{100 * x:.{digits}f} %"


def render(report: OddsReport, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{report.ruleset}: {report.decks} deck(s)", title_justify="left")
    table.add_column("bet")
    table.add_column("house edge", justify="right")
    table.add_column("win", justify="right")
    table.add_column("push", justify="right")
    table.add_column("method")
    for name, bet in report.bets.items():
        method = bet.method
        if bet.ci95:
            method += f" (95 % CI {_pct(bet.ci95[0], 3)} .. {_pct(bet.ci95[1], 3)})"
        table.add_row(name, _pct(bet.house_edge), _pct(bet.win_probability), _pct(bet.push_probability), method)
    console.print(table)
    notes = [f"{name}: {bet.notes}" for name, bet in report.bets.items() if bet.notes]
    if report.strategy:
        notes.insert(0, f"strategy: {report.strategy}")
    for note in notes:
        console.print(f"  {note}", style="dim")
