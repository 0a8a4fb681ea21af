"""``pitaudit simulate --game-shares``: a night with the mix of games asked for (issue 13's mixed night).

The shares are of rounds, not tables: a Hold'em table deals 30 rounds an hour and a baccarat table 70, so
40 % Hold'em rounds needs far more than 40 % of the tables. These tests count the rounds in the files the
simulator wrote, by the ``game`` each round line names.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.simulate.config import RULESET_SHARES, SimConfig, parse_game_shares, shares_for_games
from pipelines.simulate.plan import make_plan


def _rounds_per_game(folder: Path) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for path in folder.glob("rounds_*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            counts[json.loads(line)["game"]] += 1
    return counts


def test_the_files_hold_the_shares_of_rounds_asked_for(tmp_path):
    out = tmp_path / "mixed"
    result = CliRunner().invoke(app, ["simulate", "--out", str(out), "--rounds", "6000", "--tables", "60", "--seed", "4", "--quiet",
                                      "--workers", "1", "--fault-rate", "0", "--game-shares",
                                      "baccarat=40,holdem_bonus=40,blackjack=20"])
    assert result.exit_code == 0, result.output
    counts = _rounds_per_game(out)
    total = sum(counts.values())
    assert total == 6000
    shares = {g: 100 * n / total for g, n in counts.items()}
    assert shares["baccarat"] == pytest.approx(40, abs=2.5)
    assert shares["holdem_bonus"] == pytest.approx(40, abs=2.5)
    assert shares["blackjack"] == pytest.approx(20, abs=2.5)
    # (60 tables: on the smallest floor, 24, a table is 4 % of the rounds)
    # the usual mix of the same size is nowhere near it: the option changed the night
    usual = SimConfig(out=str(tmp_path / "x"), rounds=6000, seed=4)
    plan = make_plan(usual)
    holdem = sum(t.rounds for t in plan.tables if t.table.game == "holdem_bonus")
    assert 100 * holdem / plan.rounds < 15


@pytest.mark.parametrize("mix", [
    {"baccarat": 40, "holdem_bonus": 40, "blackjack": 20},
    {"baccarat": 10, "holdem_bonus": 10, "blackjack": 80},
    {"baccarat": 1, "holdem_bonus": 3},
])
def test_the_plan_deals_each_game_its_share_of_a_large_night(mix):
    cfg = SimConfig(out="unused", rounds=200_000, seed=3, game_shares=tuple(mix.items()))
    plan = make_plan(cfg)
    by_game: collections.Counter = collections.Counter()
    for t in plan.tables:
        by_game[t.table.game] += t.rounds
    asked = {g: v / sum(mix.values()) for g, v in mix.items()}
    for game in ("baccarat", "blackjack", "holdem_bonus"):
        assert by_game[game] / plan.rounds == pytest.approx(asked.get(game, 0.0), abs=0.01), game
    # every rule set of a game with a share has tables; a game left out has none
    rulesets = {t.table.ruleset for t in plan.tables}
    for ruleset, _ in RULESET_SHARES:
        game = {"hoiana-blackjack": "blackjack"}.get(ruleset, "baccarat" if "baccarat" in ruleset else "holdem_bonus")
        assert (ruleset in rulesets) == (game in mix), ruleset


def test_without_the_option_the_floor_is_the_usual_one():
    assert SimConfig(out="x").ruleset_shares is RULESET_SHARES
    # the usual proportions, asked for as game shares of rounds, give back about the usual floor
    plan = make_plan(SimConfig(out="x", rounds=100_000, seed=2))
    by_game: collections.Counter = collections.Counter()
    for t in plan.tables:
        by_game[t.table.game] += t.rounds
    again = make_plan(SimConfig(out="x", rounds=100_000, seed=2, game_shares=tuple(by_game.items())))
    assert abs(len(again.tables) - len(plan.tables)) <= 2
    assert shares_for_games({"baccarat": 1})[0][1] > 0 and shares_for_games({"baccarat": 1})[2][1] == 0


@pytest.mark.parametrize("text, says", [
    ("poker=50,baccarat=50", "unknown game 'poker'"),
    ("baccarat=0,blackjack=0", "at least one game"),
    ("baccarat=-5,blackjack=10", "0 or more"),
    ("baccarat=40,baccarat=60", "named twice"),
    ("baccarat:40", "GAME=SHARE"),
    ("baccarat=lots", "must be a number"),
])
def test_a_bad_mix_is_refused_with_one_line(tmp_path, text, says):
    with pytest.raises(ValueError, match=says):
        parse_game_shares(text)
    result = CliRunner().invoke(app, ["simulate", "--out", str(tmp_path / "n"), "--rounds", "100", "--quiet",
                                      "--game-shares", text])
    assert result.exit_code != 0
    assert says in result.output and "Traceback" not in result.output
    assert not (tmp_path / "n").exists() or not any((tmp_path / "n").iterdir())


def test_the_option_is_in_the_help():
    result = CliRunner().invoke(app, ["simulate", "--help"], env={"COLUMNS": "200"})
    assert "--game-shares" in result.output
