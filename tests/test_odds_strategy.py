"""Every odds figure that depends on the player's decisions names its strategy and its standard error,
in the API (rulebook.odds), in `pitaudit odds --json` and in the text table."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.odds_table import render
from rulebook.catalogue import builtin
from rulebook.odds import house_edges

BJ = builtin().latest("hoiana-blackjack")
HOIANA = builtin().latest("hoiana-holdem-bonus")
BACCARAT = builtin().latest("hoiana-tiger-baccarat/commission")


def test_blackjack_main_figure_names_basic_strategy_and_its_standard_error():
    main = house_edges(BJ, 8, rounds=20_000, seed=3).bets["main"]
    assert main.strategy.name == "basic" and "basic strategy" in main.strategy.description
    half = (main.ci95[1] - main.ci95[0]) / 2
    assert main.standard_error == pytest.approx(half / 1.96, rel=1e-9)
    assert 0.001 < main.standard_error < 0.02  # about 1.15 / sqrt(20,000)


def test_exact_figures_that_depend_on_no_decision_carry_no_strategy():
    report = house_edges(BACCARAT, 8)
    assert all(b.strategy is None and b.method == "exact" for b in report.bets.values())
    assert "strategy" not in json.dumps(report.as_json())


def test_holdem_rule_strategy_figure_states_its_strategy_and_standard_error():
    ante = house_edges(HOIANA, rounds=50_000, seed=1, strategy="check").bets["ante"]
    assert ante.strategy.name == "check" and ante.standard_error > 0
    assert ante.ci95[0] == pytest.approx(ante.house_edge - 1.96 * ante.standard_error)
    with pytest.raises(ValueError, match="unknown strategy"):
        house_edges(HOIANA, strategy="hunch")


def test_cli_json_and_text_name_the_strategy_and_standard_error():
    runner = CliRunner()
    out = runner.invoke(app, ["odds", "--ruleset", "hoiana-holdem-bonus", "--flops", "2", "--json"])
    assert out.exit_code == 0, out.output
    ante = json.loads(out.output)["bets"]["ante"]
    assert {"house_edge", "standard_error", "strategy"} <= set(ante) and ante["strategy"]["name"] == "optimal"
    report = house_edges(HOIANA, strategy="basic", rounds=20_000)
    buf = io.StringIO()
    render(report, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "std. error" in text and "strategy basic: fold 2-3 to 2-7 unsuited" in text


def test_basic_strategy_folds_exactly_the_five_low_unsuited_classes_and_plays_a_pair_of_twos():
    """The ``basic`` strategy's stated pre-flop rule: fold 2-3 to 2-7 unsuited, play every other hand.
    Over all 1,326 two-card holdings that is 5 classes x 12 unsuited combinations = 60 folds; a pair of
    twos (whose suits always differ) is played (it was once folded as if it were "2-2 unsuited")."""
    import itertools

    import numpy as np

    from rulebook.holdem_bonus.odds import strategy_decisions
    from rulebook.holdem_bonus.strategy import PREFLOP_FOLD, starting_hand

    holdings = list(itertools.combinations(range(52), 2))
    cards = np.array([[a, b, *[c for c in range(52) if c not in (a, b)][:5]] for a, b in holdings], dtype=np.int64)
    _, _, fold = strategy_decisions(cards, "basic")
    folded = {starting_hand(a, b) for (a, b), f in zip(holdings, fold) if f}
    assert int(fold.sum()) == 60 and folded == set(PREFLOP_FOLD)
    twos = [i for i, (a, b) in enumerate(holdings) if a // 4 == b // 4 == 1]
    assert len(twos) == 6 and not fold[twos].any()


@pytest.mark.parametrize("rs, rounds", [(BACCARAT, None), (BJ, 10_000)])
def test_the_table_on_an_80_column_terminal_shows_each_bet_and_figure_whole(rs, rounds):
    """`pitaudit odds` on an 80-column terminal (or piped: rich then takes 80) cut the bet names ("banker_p…",
    "insuran…") and broke each figure from its "%" onto the next line ("-0.4850" over "%"): the bet, the one thing a
    row is read by, could not be told. The names and figures are kept whole; the strategy and method columns wrap."""
    report = house_edges(rs, 8, **({"rounds": rounds, "seed": 3} if rounds else {}))
    buf = io.StringIO()
    render(report, Console(file=buf, width=80))
    rows = [line for line in buf.getvalue().splitlines() if line.startswith("│")]
    cells = [[c.strip() for c in line.strip("│").split("│")] for line in rows]
    assert {c[0] for c in cells if c[0]} == set(report.bets)  # every bet by its whole name, on its first line
    for bet, figures in report.bets.items():
        first = next(c for c in cells if c[0] == bet)
        assert first[1] == f"{100 * figures.house_edge:.4f} %"
