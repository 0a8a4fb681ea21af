"""Night after night into one database, with real files and the CLI as a user runs it (`pitaudit ingest`).

The contract's rules: a file is known by its content, not its name; the next night's export reusing the same
names loads; a file that grew loads its new lines; a file that could not be read and now can, loads; a round
or event that arrives again identical changes nothing, with other content is a new version, both kept. And
bad input gets a reason: duplicate JSON keys, amounts beyond the bound, links leading outside the input.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.ingest.synthetic import CSV_HEADER, START, table_log
from test_ingest_helpers import snapshot

ROUNDS, CARDS = 6, 6


def night_files(folder: Path, night: int, tables: int = 2) -> dict[str, list[str]]:
    """Night ``night``'s export: the same file names every night, new rounds and events (a device counts on)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for index in range(tables):
        log = table_log(index, ROUNDS, seed=night, cards=CARDS, start=START + dt.timedelta(days=night),
                        first_round=1 + night * ROUNDS, first_seq=1 + night * (ROUNDS * CARDS + 2))
        rp, sp = folder / f"rounds_{log.table_id}.jsonl", folder / f"shoe_{log.device_id}.csv"
        rp.write_text("\n".join(log.round_lines) + "\n", encoding="utf-8")
        sp.write_text(CSV_HEADER + "\n" + "\n".join(log.event_lines) + "\n", encoding="utf-8")
        written[rp.name], written[sp.name] = log.round_lines, log.event_lines
    return written


def cli_ingest(folder: Path, db: Path):
    result = CliRunner().invoke(app, ["ingest", "--input", str(folder), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return result.output


def query(db: Path, sql: str, params=()):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def count(db: Path, table: str) -> int:
    return query(db, f"SELECT count(*) FROM {table}")[0][0]


@pytest.mark.parametrize("same_folder", [True, False])
def test_the_next_nights_export_with_the_same_names_loads(tmp_path: Path, same_folder: bool) -> None:
    db = tmp_path / "audit.duckdb"
    for night in range(3):
        folder = tmp_path / ("in" if same_folder else f"night{night}")
        night_files(folder, night)
        out = cli_ingest(folder, db)
        assert "4 loaded" in out and "0 already loaded" in out, out
    assert count(db, "core_rounds") == 3 * 2 * ROUNDS
    assert count(db, "core_device_events") == 3 * 2 * (ROUNDS * CARDS + 2)
    assert count(db, "core_source_changes") == 0 and count(db, "core_quarantine") == 0
    days = [r[0] for r in query(db, "SELECT DISTINCT gaming_day FROM core_rounds ORDER BY 1")]
    assert days == [dt.date(2026, 11, 24) + dt.timedelta(days=n) for n in range(3)]
    # and the last night again: its content is known, nothing is read
    out = cli_ingest(tmp_path / ("in" if same_folder else "night2"), db)
    assert "0 loaded" in out and "4 already loaded" in out


@pytest.mark.parametrize("cut", ["at a line end", "mid-line"])
def test_a_file_copied_in_two_halves_loads_its_second_half(tmp_path: Path, cut: str) -> None:
    full = tmp_path / "full"
    written = night_files(full, 0, tables=1)
    clean = tmp_path / "clean.duckdb"
    cli_ingest(full, clean)
    folder = tmp_path / "in"
    folder.mkdir()
    for name in written:
        data = (full / name).read_bytes()
        half = data.index(b"\n", len(data) // 2) + 1 if cut == "at a line end" else len(data) // 2
        (folder / name).write_bytes(data[:half])  # the copy is still in progress
    db = tmp_path / "audit.duckdb"
    cli_ingest(folder, db)
    for name in written:
        shutil.copyfile(full / name, folder / name)  # the copy has finished
    out = cli_ingest(folder, db)
    assert "2 loaded (of which 2 grown since an earlier read" in out, out
    got, want = snapshot(duckdb.connect(str(db), read_only=True)), snapshot(duckdb.connect(str(clean), read_only=True))
    for table in ("core_rounds", "core_wagers", "core_actions", "core_device_events", "core_source_changes"):
        assert got[table] == want[table], table
    loads = query(db, "SELECT source_file, first_line, lines_read, rows_accepted + rows_quarantined FROM core_source_files "
                      "WHERE status = 'loaded' ORDER BY 1, 2")
    assert all(read == accounted for *_, read, accounted in loads)
    for name, lines in written.items():
        header = 1 if name.startswith("shoe_") else 0
        first, second = [row for row in loads if row[0] == name]
        assert first[1] == 1 and second[1] > 1
        if cut == "at a line end":  # the two reads cover every line once
            assert first[2] + second[2] == len(lines) and second[1] == first[2] + header + 1
        else:  # the line cut in two was read twice: quarantined half, then accepted whole
            assert first[2] + second[2] == len(lines) + 1
    if cut == "mid-line":
        assert count(db, "core_quarantine") == 2  # one cut line per file, set aside with its reason


def test_a_file_that_could_not_be_read_and_now_can_loads(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    name = next(n for n in written if n.startswith("rounds_"))
    text = (folder / name).read_text(encoding="utf-8")
    (folder / name).write_bytes(text.encode("utf-16"))  # exported in the wrong encoding
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert f"unreadable: {name}: UTF-16 encoded" in out
    assert count(db, "core_rounds") == 0
    out = cli_ingest(folder, db)  # a re-run records nothing new
    assert query(db, "SELECT count(*) FROM core_source_files WHERE status = 'unreadable'")[0][0] == 1
    (folder / name).write_text(text, encoding="utf-8")  # exported again, readable
    out = cli_ingest(folder, db)
    assert "1 loaded" in out
    assert count(db, "core_rounds") == ROUNDS


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its permissions")
def test_a_file_the_os_refuses_then_allows_loads(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    name = next(n for n in written if n.startswith("rounds_"))
    (folder / name).chmod(0)
    db = tmp_path / "audit.duckdb"
    try:
        out = cli_ingest(folder, db)
        assert f"unreadable: {name}: cannot read the file" in out
    finally:
        (folder / name).chmod(0o644)
    out = cli_ingest(folder, db)
    assert "1 loaded" in out and count(db, "core_rounds") == ROUNDS


def test_an_identical_round_again_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    db = tmp_path / "audit.duckdb"
    cli_ingest(folder, db)
    before = snapshot(duckdb.connect(str(db), read_only=True))
    rounds = next(v for k, v in written.items() if k.startswith("rounds_"))
    again = tmp_path / "again"
    again.mkdir()
    # re-exported with its keys in another order and other spacing: the same content
    (again / "rounds_reexport.jsonl").write_text(json.dumps(dict(reversed(json.loads(rounds[2]).items()))) + "\n")
    out = cli_ingest(again, db)
    assert "identical duplicates kept once: 1" in out
    after = snapshot(duckdb.connect(str(db), read_only=True))
    for table in ("core_rounds", "core_wagers", "core_actions", "core_quarantine", "core_source_changes"):
        assert after[table] == before[table], table


def test_a_round_reexported_with_a_changed_net_keeps_both_versions(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    db = tmp_path / "audit.duckdb"
    cli_ingest(folder, db)
    name = next(n for n in written if n.startswith("rounds_"))
    lines = list(written[name])
    r = json.loads(lines[3])
    old_net, r["wagers"][1]["net"] = r["wagers"][1]["net"], r["wagers"][1]["net"] + 2500
    lines[3] = json.dumps(r)
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")  # the same name, re-exported
    out = cli_ingest(folder, db)
    assert "arrived again with different content: 1" in out
    key = f"{r['table_id']}/{r['round_no']}"
    rows = query(db, "SELECT row_key, earlier_source_file, earlier_source_line, earlier_content, later_source_file, "
                     "later_source_line, later_content FROM core_source_changes")
    assert [(a, b, c, e, f) for a, b, c, _, e, f, _ in rows] == [(key, name, 4, name, 4)]
    assert json.loads(rows[0][3])["w"][1]["net"] == old_net and json.loads(rows[0][6])["w"][1]["net"] == old_net + 2500
    assert query(db, "SELECT net FROM core_wagers WHERE table_id = ? AND round_no = ? AND wager_order = 2",
                 [r["table_id"], r["round_no"]]) == [(old_net + 2500,)]
    # the audit's view: one source_changed finding naming both sources (high: a net changed)
    from pipelines.audit.detectors.changes import source_changed_findings

    con = duckdb.connect(str(db), read_only=True)
    found = source_changed_findings(con, 360)
    assert found.height == 1
    f = found.row(0, named=True)
    assert (f["kind"], f["severity"], f["table_id"], f["round_no"], f["gaming_day"]) == \
           ("source_changed", "high", r["table_id"], r["round_no"], dt.date(2026, 11, 24))
    # the same name re-exported: not "X:4 then X:4"; amounts in major units, as every detail's (formats.md)
    from pipelines.currency import format_money

    assert f"{name}:4, then line 4 of a later file of that name" in f["detail"], f["detail"]
    cur = r["currency"]
    assert f"wagers[2].net {format_money(old_net, cur)} -> {format_money(old_net + 2500, cur)}" in f["detail"]
    assert source_changed_findings(con, 360, [(dt.date(2026, 11, 25), r["table_id"])]).height == 0
    assert source_changed_findings(con, 360, [(dt.date(2026, 11, 24), r["table_id"])]).height == 1
    con.close()


def test_duplicate_json_keys_are_quarantined(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    name = next(n for n in written if n.startswith("rounds_"))
    lines = list(written[name])
    lines[1] = lines[1].replace('"net":', '"net":0,"net":', 1)  # a wager's net twice: which one?
    lines[4] = lines[4][:-1] + ',"status":"void"}'  # the round's status twice
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert "duplicate JSON key" in out
    got = query(db, "SELECT source_line, reason_code, detail FROM core_quarantine ORDER BY 1")
    assert got == [(2, "duplicate_key", "key 'net' appears twice in one object"),
                   (5, "duplicate_key", "key 'status' appears twice in one object")]
    assert count(db, "core_rounds") == ROUNDS - 2


def test_json_that_only_a_lenient_parser_reads_is_unparseable_and_its_strict_twin_loads(tmp_path: Path) -> None:
    """A trailing comma, NaN and Infinity are not JSON (RFC 8259); DuckDB's parser takes them, Python's refuses
    them: such a line means something only to some readers, as a repeated key does, so it is quarantined."""
    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    name = next(n for n in written if n.startswith("rounds_"))
    lines = list(written[name])
    lines[1] = lines[1][:-1] + ",}"  # a trailing comma after the last member
    lines[2] = lines[2][:-1] + ',"note":NaN}'
    lines[3] = lines[3][:-1] + ',"note":-Infinity}'
    lines[4] = lines[4][:-1] + ',"note":null}'  # the near miss: an extra member, strict JSON
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert "unparseable JSON" in out
    got = query(db, "SELECT source_line, reason_code, detail FROM core_quarantine ORDER BY 1")
    assert [g[:2] for g in got] == [(2, "json_unparseable"), (3, "json_unparseable"), (4, "json_unparseable")]
    assert got[0][2].startswith("not strict JSON: ") and got[1][2] == "not strict JSON: NaN is not a JSON value"
    assert got[2][2] == "not strict JSON: -Infinity is not a JSON value"
    assert count(db, "core_rounds") == ROUNDS - 3


def test_an_amount_of_2_63_minus_1_is_quarantined_and_later_nights_load(tmp_path: Path) -> None:
    db = tmp_path / "audit.duckdb"
    folder = tmp_path / "night0"
    written = night_files(folder, 0, tables=1)
    name = next(n for n in written if n.startswith("rounds_"))
    lines = list(written[name])
    r = json.loads(lines[0]); r["wagers"][0]["amount"] = 2**63 - 1
    lines[0] = json.dumps(r)
    r = json.loads(lines[1]); r["wagers"][2]["net"] = -(2**63)
    lines[1] = json.dumps(r)
    r = json.loads(lines[2]); r["limits"]["max"] = 10**12 + 1
    lines[2] = json.dumps(r)
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = cli_ingest(folder, db)
    assert "amount beyond the bound" in out
    got = query(db, "SELECT source_line, reason_code, detail FROM core_quarantine ORDER BY 1")
    assert [g[:2] for g in got] == [(1, "amount_beyond_bound"), (2, "amount_beyond_bound"), (3, "amount_beyond_bound")]
    assert got[0][2] == f"wagers[1].amount: {2**63 - 1} beyond the bound 1,000,000,000,000 (PITAUDIT_MAX_AMOUNT)"
    assert got[2][2].startswith("limit_max: 1000000000001 beyond")
    night_files(tmp_path / "night1", 1, tables=1)
    cli_ingest(tmp_path / "night1", db)
    assert count(db, "core_rounds") == 2 * ROUNDS - 3
    # sums over every night stay far inside 64 bits
    assert query(db, "SELECT max(abs(amount)), max(abs(net)) FROM core_wagers")[0][0] <= 10**12


def test_a_lower_bound_from_the_environment_is_applied(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "in"
    night_files(folder, 0, tables=1)
    monkeypatch.setenv("PITAUDIT_MAX_AMOUNT", "50000")
    out = cli_ingest(folder, tmp_path / "audit.duckdb")
    assert "amount beyond the bound" in out


def test_a_link_leading_outside_the_input_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    night_files(outside, 0, tables=1)
    folder = tmp_path / "in"
    night_files(folder, 1, tables=1)
    (folder / "rounds_secret.jsonl").symlink_to(outside / "rounds_BAC-00.jsonl")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "shoe_inside.csv").symlink_to(folder / "shoe_AE-0000.csv")  # inside: followed (same content)
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert "refused: rounds_secret.jsonl: symbolic link leading outside the input folder" in out
    assert "refused: linked: symbolic link leading outside the input folder" in out
    assert count(db, "core_rounds") == ROUNDS  # night 1's own rounds only
    refused = query(db, "SELECT source_file, status, reason_code FROM core_source_files WHERE status <> 'loaded' ORDER BY 1")
    assert refused == [("linked", "refused", "symlink_outside_input"), ("rounds_secret.jsonl", "refused", "symlink_outside_input")]
    # the audit's quarantine.csv lists each as a row with its reason
    from pipelines.audit.load import load_quarantine

    con = duckdb.connect(str(db), read_only=True)
    q = load_quarantine(con)
    con.close()
    rows = {r["source_file"]: r for r in q.iter_rows(named=True)}
    assert rows["rounds_secret.jsonl"]["source_line"] is None
    assert rows["rounds_secret.jsonl"]["reason"].startswith("symbolic link leading outside the input folder")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_under_an_input_name_is_reported_unreadable_not_skipped_or_opened(tmp_path: Path) -> None:
    """formats.md, "file cannot be read": every input-named file is loaded or reported with its reason; a named pipe is
    never opened (reading it would block the run until something wrote to it)."""
    folder = tmp_path / "in"
    night_files(folder, 1, tables=1)
    os.mkfifo(folder / "rounds_pipe.jsonl")
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert "rounds_pipe.jsonl: not a regular file" in out
    assert count(db, "core_rounds") == ROUNDS
    rows = query(db, "SELECT status, reason_code FROM core_source_files WHERE source_file = 'rounds_pipe.jsonl'")
    assert rows == [("unreadable", "file_unreadable")]


def test_a_file_whose_name_is_not_utf8_is_reported_unreadable_and_the_night_loads(tmp_path: Path) -> None:
    """A file system name is bytes: an exporter's Latin-1 name (``rounds_\\xe9.jsonl``) reached DuckDB as its
    source_file and stopped the whole night ("cannot encode str as UTF-8, surrogate '\\udce9'"). It is a file not read,
    named with its bytes escaped, and the reason says why; the night's other files load."""
    folder = tmp_path / "in"
    night_files(folder, 1, tables=1)
    first = next(folder.glob("rounds_*.jsonl"))
    os.rename(folder / first.name, os.fsencode(folder) + b"/rounds_caf\xe9.jsonl")
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert "rounds_caf\\xe9.jsonl: its name is not UTF-8" in out
    rows = query(db, "SELECT source_file, status, reason_code FROM core_source_files WHERE status <> 'loaded'")
    assert rows == [("rounds_caf\\xe9.jsonl", "unreadable", "file_unreadable")]
    assert count(db, "core_device_events") > 0


def test_markup_in_a_file_name_or_a_line_is_printed_as_text(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    odd = folder / "night[" / "]"  # the relative path holds "[/]"
    night_files(odd, 0, tables=1)
    (odd / "shoe_bad.csv").write_text("[/]not,a,header[bold]\n1,2,3\n", encoding="utf-8")
    db = tmp_path / "audit.duckdb"
    out = cli_ingest(folder, db)
    assert "unreadable: night[/]/shoe_bad.csv: first line is not the shoe CSV header" in out
    assert "[/]not,a,header[bold]" in out
    assert count(db, "core_rounds") == ROUNDS
    # the progress bar names the batch being loaded: drawn on a terminal, it prints the name as text
    import io

    from rich.console import Console

    from pipelines.console import ingest_progress
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder

    night_files(odd, 1, tables=1)
    terminal = Console(file=io.StringIO(), force_terminal=True, width=200)  # a terminal that records what it was sent

    con = open_writer(db)
    try:
        with ingest_progress(show=True, console=terminal) as progress:
            started = progress.started

            def started_and_drawn(batch):
                started(batch)
                progress.bar.refresh()

            progress.started = started_and_drawn
            summary = ingest_folder(con, folder, progress=progress)
    finally:
        con.close()
    assert summary.count("loaded") == 2
    assert "ingest night[/]/rounds_BAC-00.jsonl" in terminal.file.getvalue()


def test_the_summary_names_the_partitions_a_run_read(tmp_path: Path) -> None:
    """What the audit needs to re-settle only what changed: the (gaming day, table) of every round read."""
    from test_ingest_helpers import ingest

    folder = tmp_path / "in"
    night_files(folder, 0)
    con, first = ingest(folder, tmp_path / "audit.duckdb")
    con.close()
    night_files(folder, 1)
    con, second = ingest(folder, tmp_path / "audit.duckdb")
    con.close()
    day0, day1 = dt.date(2026, 11, 24), dt.date(2026, 11, 25)
    assert first.partitions == ((day0, "BAC-00"), (day0, "BJ-01")) and first.gaming_days == (day0,)
    assert second.partitions == ((day1, "BAC-00"), (day1, "BJ-01"))


def test_a_round_moved_to_another_gaming_day_names_both_partitions(tmp_path: Path) -> None:
    from test_ingest_helpers import ingest

    folder = tmp_path / "in"
    written = night_files(folder, 0, tables=1)
    con, _ = ingest(folder, tmp_path / "audit.duckdb")
    con.close()
    name = next(n for n in written if n.startswith("rounds_"))
    r = json.loads(written[name][0])
    r["bets_closed_at"] = "2026-11-25T12:00:00+07:00"  # re-exported a day later: it moves to the 25th
    again = tmp_path / "again"
    again.mkdir()
    (again / "rounds_fix.jsonl").write_text(json.dumps(r) + "\n", encoding="utf-8")
    con, summary = ingest(again, tmp_path / "audit.duckdb")
    con.close()
    assert summary.source_changes == 1
    assert summary.partitions == ((dt.date(2026, 11, 24), "BAC-00"), (dt.date(2026, 11, 25), "BAC-00"))


def test_a_grown_file_streamed_in_chunks_loads_as_a_whole_one(tmp_path: Path, monkeypatch) -> None:
    """The path of a file too big for a batch: a grown file is streamed from where its last read ended, its CSV
    header taken from its first line, chunk by chunk."""
    import functools

    import pipelines.ingest.batch as batch
    import pipelines.ingest.run as ingest_run
    from test_ingest_helpers import ingest

    full = tmp_path / "full"
    written = night_files(full, 0)
    con, _ = ingest(full, tmp_path / "clean.duckdb")
    want = snapshot(con)
    con.close()
    monkeypatch.setattr(ingest_run, "BIG_FILE_BYTES", 0)  # every file is "too big": streamed on its own
    monkeypatch.setattr(batch, "iter_lines", functools.partial(batch.iter_lines, chunk_bytes=512))
    folder = tmp_path / "in"
    folder.mkdir()
    for name in written:
        data = (full / name).read_bytes()
        (folder / name).write_bytes(data[: data.index(b"\n", len(data) // 3) + 1])
    con, _ = ingest(folder, tmp_path / "grown.duckdb")
    con.close()
    for name in written:
        shutil.copyfile(full / name, folder / name)
    con, summary = ingest(folder, tmp_path / "grown.duckdb")
    got = snapshot(con)
    con.close()
    assert all(f.first_line > 1 for f in summary.files)
    for table in ("core_rounds", "core_wagers", "core_actions", "core_device_events", "core_quarantine"):
        assert got[table] == want[table], table


def test_a_terminal_escape_in_a_file_name_is_shown_escaped_not_sent_to_the_terminal(tmp_path: Path) -> None:
    """formats.md, Conventions, Text: control and invisible characters make two names look alike. A file named with
    ESC sequences and a carriage return reached the operator's terminal and log raw (``pitaudit ingest``'s summary,
    ``pitaudit audit``'s summary and its "nothing to audit" line): it could erase the line saying the file was not
    read. Now shown escaped, on one line; the near-miss, a name with brackets and accents, is shown as it is."""
    from pipelines.audit.scope import nothing_reason
    from pipelines.console import shown
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder

    assert shown("rounds_é[x].jsonl") == "rounds_é[x].jsonl"
    assert shown("a\x1b[2K\rb\nc\u202ed") == "a\\x1b[2K\\rb\\nc\\u202ed"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "rounds_\x1b[2K\rall read\n.jsonl").write_bytes(b"\0\0")
    escaped = "rounds_\\x1b[2K\\rall read\\n.jsonl"
    out = cli_ingest(folder, tmp_path / "a.duckdb")
    assert "\x1b" not in out and "\r" not in out
    assert f"unreadable: {escaped}: binary content" in out
    con = open_writer(tmp_path / "b.duckdb")
    try:
        summary = ingest_folder(con, folder)
    finally:
        con.close()
    line = nothing_reason(folder, summary, False)
    assert "\x1b" not in line and "\n" not in line and f"1 not read ({escaped}: binary content" in line
