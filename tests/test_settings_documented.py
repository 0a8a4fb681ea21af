"""Every ``PITAUDIT_*`` setting is a field of ``pipelines.settings.Settings`` and has a row in the README's
Settings table, and the table names no other (the datasette way: the registry is iterated against the docs,
so a setting nobody can find is a failing test). Also: nothing else reads a ``PITAUDIT_`` variable, and a
malformed value is a one-line error naming the variable, never a silent default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.settings import Settings, SettingsError, env_name, load_settings

ROOT = Path(__file__).parents[1]


def _documented() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Settings", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `(PITAUDIT_[A-Z_]+)` \| ([^|]+) \|", section, flags=re.M)}


def test_every_field_is_in_the_readme_and_no_other():
    fields = {env_name(name) for name in Settings.model_fields}
    assert {"PITAUDIT_DUCKDB_MEMORY", "PITAUDIT_MAX_AMOUNT", "PITAUDIT_DEBUG"} <= fields
    assert fields == set(_documented())


def test_the_readme_gives_each_plain_default():
    documented = _documented()
    for name, info in Settings.model_fields.items():
        if info.default is not None and not isinstance(info.default, bool):
            assert f"{info.default:_}".replace("_", ",") in documented[env_name(name)].replace("`", "") or \
                str(info.default) in documented[env_name(name)], name


def test_no_module_reads_the_environment_for_a_setting_but_the_settings():
    pattern = re.compile(r"environ(?:\.get)?\s*[\[(]\s*[\"']PITAUDIT_")
    readers = [p.relative_to(ROOT).as_posix() for folder in ("pipelines", "rulebook", "schemas", "benchmarks")
               for p in (ROOT / folder).rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))]
    assert readers == []


@pytest.mark.parametrize("name, value, words", [
    ("PITAUDIT_INGEST_WORKERS", "two", "valid integer"),
    ("PITAUDIT_INGEST_WORKERS", "-1", "greater than or equal to 0"),
    ("PITAUDIT_GROUP_ROUNDS", "0", "greater than 0"),
    ("PITAUDIT_DUCKDB_MEMORY", "1GB'; ATTACH 'x", "a size such as"),
    ("PITAUDIT_DUCKDB_MEMORY", "lots", "a size such as"),
    ("PITAUDIT_MAX_AMOUNT", str(2**63 - 1), "less than or equal to"),
    ("PITAUDIT_DEBUG", "maybe", "valid boolean"),
    # edge values found only mid-run before, after the ingest: DuckDB ran out of memory, or refused the value
    ("PITAUDIT_DUCKDB_MEMORY", "0.0001KB", "from 32MB to 1000TB"),
    ("PITAUDIT_DUCKDB_MEMORY", "8MB", "from 32MB to 1000TB"),
    ("PITAUDIT_DUCKDB_MEMORY", "99999999TB", "from 32MB to 1000TB"),
    # a typo of a worker count started a parser per batch of the night at once (out of memory), not a refusal
    ("PITAUDIT_INGEST_WORKERS", "10000", "less than or equal to 256"),
    ("PITAUDIT_AUDIT_PROCESSES", "10000", "less than or equal to 256"),
    # a wait for ever (or never compared: NaN) held a scheduled night behind a stuck run without a word
    ("PITAUDIT_LOCK_WAIT", "inf", "finite number"),
    ("PITAUDIT_LOCK_WAIT", "nan", "finite number"),
    ("PITAUDIT_LOCK_WAIT", "90000", "less than or equal to 86400"),
])
def test_a_malformed_value_is_one_line_naming_the_variable(monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        load_settings()
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{name}=") and words in text


def test_a_notify_url_apprise_does_not_understand_stops_at_once_without_repeating_it(monkeypatch):
    """Before, a malformed PITAUDIT_NOTIFY_URL was found only when a night had high findings, and then dropped without
    a word (a log line no handler showed): the operator learned of it by missing an alert. The value may hold a
    password, so the error names the variable and not the value."""
    monkeypatch.setenv("PITAUDIT_NOTIFY_URL", "mailto//ops:s3cret@casino.example")
    with pytest.raises(SettingsError) as err:
        load_settings()
    text = str(err.value)
    assert text.startswith("PITAUDIT_NOTIFY_URL: must be an Apprise URL") and "s3cret" not in text and "\n" not in text
    monkeypatch.setenv("PITAUDIT_NOTIFY_URL", "json://127.0.0.1:9/notify")  # the near miss: a URL Apprise reads
    assert load_settings().notify_url == "json://127.0.0.1:9/notify"


def test_an_undeliverable_notification_is_a_warning_line_not_silence(capsys):
    from pipelines.audit.notify import send

    assert not send("json://127.0.0.1:9/notify", "pitaudit 2026-11-24: 3 high-severity finding(s)", "body")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pitaudit: warning: the notification to PITAUDIT_NOTIFY_URL (json://...)")


def test_values_are_read_and_normalised(monkeypatch):
    monkeypatch.setenv("PITAUDIT_DUCKDB_MEMORY", " 2 gib ")
    monkeypatch.setenv("PITAUDIT_INGEST_WORKERS", "3")
    monkeypatch.setenv("PITAUDIT_AUDIT_PROCESSES", "256")  # the near-miss of 10000: the bound itself
    monkeypatch.setenv("PITAUDIT_GROUP_ROUNDS", "")  # empty: the default
    s = load_settings()
    assert (s.writer_memory, s.reader_memory, s.parse_workers, s.group_rounds) == ("2GiB", "2GiB", 3, 50_000)
    assert s.audit_processes == 256
    monkeypatch.delenv("PITAUDIT_DUCKDB_MEMORY")
    s = load_settings()
    assert (s.writer_memory, s.reader_memory) == ("1500MB", "1GB")
    with pytest.raises(Exception):
        s.group_rounds = 3  # frozen


def test_the_cli_stops_on_a_malformed_setting_with_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from pipelines.cli import app

    (tmp_path / "in").mkdir()
    monkeypatch.setenv("PITAUDIT_MAX_AMOUNT", "a lot")
    result = CliRunner().invoke(app, ["ingest", "--input", str(tmp_path / "in"), "--db", str(tmp_path / "a.duckdb")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "pitaudit: PITAUDIT_MAX_AMOUNT='a lot': input should be a valid integer, unable to parse string as an integer"]
    assert not (tmp_path / "a.duckdb").exists()


@pytest.mark.parametrize("name, near", [("PITAUDIT_LOCKWAIT", "PITAUDIT_LOCK_WAIT"),
                                        ("PITAUDIT_EVIDENCE_PACK", "PITAUDIT_EVIDENCE_PACKS"),
                                        ("pitaudit_duckdb_mem", "PITAUDIT_DUCKDB_MEMORY"),
                                        ("PITAUDIT_COLOUR", None)])
def test_a_misspelled_setting_stops_with_one_line_naming_it(monkeypatch, name, near):
    """A misspelled name was read by nothing: ``PITAUDIT_LOCKWAIT=0`` left the 300 s wait, ``PITAUDIT_EVIDENCE_PACK=0``
    wrote 2,000 packs, without a word (the silent default a malformed value is never given). Names are read without
    regard to case, as the settings are."""
    monkeypatch.setenv(name, "0")
    with pytest.raises(SettingsError) as err:
        load_settings()
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{name.upper()}: not a pitaudit setting")
    assert (f"did you mean {near}?" in text) if near else "did you mean" not in text
    monkeypatch.delenv(name)
    monkeypatch.setenv("pitaudit_lock_wait", "0")  # a setting's own name, in any case, is no misspelling
    assert load_settings().lock_wait == 0
