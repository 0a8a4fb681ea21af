"""Every command and every option of the CLI says what it does (a documented setting is a tested one)."""

from __future__ import annotations

import typer.main
from typer.testing import CliRunner

from pipelines.cli import app

runner = CliRunner()


def _commands():
    group = typer.main.get_command(app)
    return group, group.commands  # type: ignore[attr-defined]


def test_every_command_and_option_has_help_text():
    _, commands = _commands()
    assert {"odds", "simulate", "ingest", "audit", "demo", "rulesets"} <= set(commands)
    for name, command in commands.items():
        assert command.help and command.help.strip(), f"command {name} has no help"
        for param in command.params:
            if param.name == "help":
                continue
            assert getattr(param, "help", None), f"{name} --{param.name} has no help text"


def test_help_runs_for_every_command():
    _, commands = _commands()
    for name in commands:
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        assert "Usage" in result.output


def test_unknown_ruleset_is_a_one_line_reason_not_a_traceback():
    result = runner.invoke(app, ["odds", "--ruleset", "vegas-craps"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "unknown rule set 'vegas-craps'" in result.output


def test_a_deck_count_the_game_is_not_dealt_with_is_a_one_line_reason():
    result = runner.invoke(app, ["odds", "--ruleset", "hoiana-holdem-bonus", "--decks", "8"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "one deck" in result.output
    assert len(result.output.strip().splitlines()) == 1
