"""Print an OddsReport as a table a pit manager can read: every figure that depends on the player's
decisions names its strategy and carries its standard error."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from rulebook.odds import OddsReport


def _pct(x: float | None, digits: int = 4) -> str:
    return "" if x is None else f"{100 * x:.{digits}f} %"


def render(report: OddsReport, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{report.ruleset}: {report.decks} deck(s)", title_justify="left")
    # the bet and the figures whole (an 80-column terminal, or a pipe, cut "banker_pair" to "banker_p…" and broke
    # "-0.4850 %" over two lines); the strategy and the method, words, wrap instead
    table.add_column("bet", no_wrap=True, min_width=max((len(name) for name in report.bets), default=3))
    for name in ("house edge", "std. error", "win", "push"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("strategy", ratio=1, overflow="fold")
    table.add_column("method", ratio=1, overflow="fold")
    for name, bet in report.bets.items():
        method = bet.method
        if bet.ci95:
            method += f" (95 % CI {_pct(bet.ci95[0], 3)} .. {_pct(bet.ci95[1], 3)})"
        table.add_row(
            name, _pct(bet.house_edge), _pct(bet.standard_error, 3), _pct(bet.win_probability), _pct(bet.push_probability),
            bet.strategy.name if bet.strategy else "(none needed)", method,
        )
    console.print(table)
    strategies = {b.strategy.name: b.strategy.description for b in report.bets.values() if b.strategy}
    for name, description in strategies.items():
        console.print(f"  strategy {name}: {description}", style="dim")
    for name, bet in report.bets.items():
        if bet.notes:
            console.print(f"  {name}: {bet.notes}", style="dim")
    for name, why in report.omitted.items():
        console.print(f"  {name}: no figure: {why}", style="dim")
