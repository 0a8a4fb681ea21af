"""Ingest: what is accepted, what is quarantined and why, duplicates, gaming days, re-runs."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from pipelines.gaming_day import parse_day_start
from pipelines.ingest.run import IngestError
from pipelines.ingest.synthetic import CSV_HEADER
from test_ingest_helpers import CSV_CORRUPTIONS, JSON_CORRUPTIONS, ingest, snapshot, write_table


def _counts(con, source_file):
    return con.execute("""SELECT lines_read, rows_accepted, rows_quarantined, rows_duplicate, status
                          FROM core_source_files WHERE source_file = ?""", [source_file]).fetchall()[0]


def test_clean_logs_load_completely_with_their_source_lines(tmp_path: Path) -> None:
    rp, sp, rounds, events = write_table(tmp_path / "in", 1, 30)  # a blackjack table
    con, s = ingest(tmp_path / "in", tmp_path / "db.duckdb")
    assert _counts(con, rp.name) == (30, 30, 0, 0, "loaded")
    assert _counts(con, sp.name) == (len(events), len(events), 0, 0, "loaded")
    assert con.execute("SELECT count(*) FROM core_wagers").fetchall()[0][0] == 30 * 6
    assert con.execute("SELECT count(*) FROM core_actions").fetchall()[0][0] == 30
    # round line n is source_line n; device event line n is the CSV's line n+1 (line 1 is the header)
    r = json.loads(rounds[9])
    got = con.execute("SELECT round_no, source_line FROM core_rounds WHERE round_no = ?", [r["round_no"]]).fetchall()
    assert got == [(r["round_no"], 10)]
    ev = events[4].split(",")
    got = con.execute("SELECT event_seq, card FROM core_device_events WHERE source_line = 6").fetchall()
    assert got == [(int(ev[3]), ev[7] or None)]
    w = r["wagers"][2]
    got = con.execute("SELECT wager_id, amount, net, wager_order FROM core_wagers WHERE source_line = 10 AND wager_order = 3"
                      ).fetchall()
    assert got == [(w["wager_id"], w["amount"], w["net"], 3)]
    assert s.lines_read == 30 + len(events) and s.rows_quarantined == 0


@pytest.mark.parametrize("name,corrupt,code", JSON_CORRUPTIONS, ids=[c[0] for c in JSON_CORRUPTIONS])
def test_each_json_corruption_quarantines_its_line_with_its_reason(tmp_path: Path, name, corrupt, code) -> None:
    index = 1 if name == "unknown action" else 0  # blackjack has actions; baccarat for the rest
    rp, _, rounds, _ = write_table(tmp_path / "in", index, 5)
    rounds[2] = corrupt(rounds[2])
    rp.write_text("\n".join(rounds) + "\n", encoding="utf-8")
    con, _ = ingest(tmp_path / "in", tmp_path / "db.duckdb")
    q = con.execute("SELECT source_line, reason_code, raw FROM core_quarantine WHERE source_file = ?", [rp.name]).fetchall()
    assert [(line, c) for line, c, _ in q] == [(3, code)], q
    assert q[0][2] == rounds[2]
    assert _counts(con, rp.name)[:3] == (5, 4, 1)
    assert sorted(r[0] for r in con.execute("SELECT source_line FROM core_rounds").fetchall()) == [1, 2, 4, 5]
    assert con.execute("SELECT count(*) FROM core_wagers WHERE source_line = 3").fetchall()[0][0] == 0


@pytest.mark.parametrize("name,corrupt,code", CSV_CORRUPTIONS, ids=[c[0] for c in CSV_CORRUPTIONS])
def test_each_csv_corruption_quarantines_its_line_with_its_reason(tmp_path: Path, name, corrupt, code) -> None:
    _, sp, _, events = write_table(tmp_path / "in", 0, 3)
    events[5] = corrupt(events[5])
    sp.write_text(CSV_HEADER + "\n" + "\n".join(events) + "\n", encoding="utf-8")
    con, _ = ingest(tmp_path / "in", tmp_path / "db.duckdb")
    q = con.execute("SELECT source_line, reason_code FROM core_quarantine WHERE source_file = ?", [sp.name]).fetchall()
    assert q == [(7, code)]  # events[5] is line 7 (header, then events[0] on line 2)
    n = len(events)
    assert _counts(con, sp.name)[:3] == (n, n - 1, 1)


def test_card_without_round_is_quarantined_but_unreadable_and_foreign_cards_are_evidence(tmp_path: Path) -> None:
    _, sp, _, events = write_table(tmp_path / "in", 0, 3)
    f = events[2].split(","); f[7] = "??"; events[2] = ",".join(f)
    f = events[3].split(","); f[7] = "1x"; events[3] = ",".join(f)
    f = events[4].split(","); f[6] = ""; events[4] = ",".join(f)
    f = events[5].split(","); f[5] = "burn"; f[6] = ""; f[7] = ""; events[5] = ",".join(f)  # unread burn, no round
    sp.write_text(CSV_HEADER + "\n" + "\n".join(events) + "\n", encoding="utf-8")
    con, _ = ingest(tmp_path / "in", tmp_path / "db.duckdb")
    got = dict(con.execute("SELECT source_line, card_code FROM core_device_events WHERE source_line IN (4, 5, 7)").fetchall())
    assert got == {4: -1, 5: -2, 7: -3}
    assert con.execute("SELECT source_line, reason_code FROM core_quarantine").fetchall() == [(6, "card_without_round")]
    codes = con.execute("SELECT card, card_code FROM core_device_events WHERE event = 'card'").fetchall()
    from rulebook.cards import parse_card

    assert all(code == parse_card(card) for card, code in codes)
    assert con.execute("SELECT card_code FROM core_device_events WHERE event = 'shoe_start'").fetchall() == [(None,)]


def test_bom_crlf_and_a_final_line_without_newline(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    rp, sp, rounds, events = write_table(folder, 2, 4)
    rp.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(rounds).encode())  # no final line end
    sp.write_bytes(b"\xef\xbb\xbf" + (CSV_HEADER + "\r\n" + "\r\n".join(events) + "\r\n").encode())
    con, _ = ingest(folder, tmp_path / "db.duckdb")
    assert _counts(con, rp.name)[:3] == (4, 4, 0)
    assert _counts(con, sp.name)[:3] == (len(events), len(events), 0)
    assert con.execute("SELECT count(*) FROM core_device_events WHERE card LIKE '%\r%' OR decks IS NULL AND event = 'shoe_start'"
                       ).fetchall()[0][0] == 0


def test_truncated_last_line_is_quarantined_not_lost(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    rp, sp, rounds, events = write_table(folder, 0, 4)
    rp.write_text("\n".join(rounds)[:-25], encoding="utf-8")
    sp.write_text(CSV_HEADER + "\n" + "\n".join(events)[:-40], encoding="utf-8")
    con, _ = ingest(folder, tmp_path / "db.duckdb")
    assert con.execute("SELECT source_file, source_line, reason_code FROM core_quarantine ORDER BY 1").fetchall() == [
        (rp.name, 4, "json_unparseable"), (sp.name, len(events) + 1, "csv_column_count")]


def test_unreadable_files_are_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write_table(folder, 0, 3)
    (folder / "sub").mkdir()
    (folder / "sub" / "rounds_utf16.jsonl").write_bytes('{"a": 1}\n'.encode("utf-16"))
    (folder / "sub" / "shoe_binary.csv").write_bytes(b"\x00\x01\x02" * 100)
    (folder / "sub" / "shoe_badheader.csv").write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    (folder / "sub" / "shoe_empty.csv").write_bytes(b"")
    (folder / "sub" / "rounds_empty.jsonl").write_bytes(b"")
    con, s = ingest(folder, tmp_path / "db.duckdb")
    status = dict(con.execute("SELECT source_file, status FROM core_source_files").fetchall())
    assert status["sub/rounds_utf16.jsonl"] == "unreadable"
    assert status["sub/shoe_binary.csv"] == "unreadable"
    assert status["sub/shoe_badheader.csv"] == "unreadable"
    assert status["sub/shoe_empty.csv"] == "unreadable"
    assert status["sub/rounds_empty.jsonl"] == "loaded"
    assert status["rounds_BAC-00.jsonl"] == "loaded"
    err = con.execute("SELECT error FROM core_source_files WHERE source_file = 'sub/rounds_utf16.jsonl'").fetchall()[0][0]
    assert "UTF-16" in err
    assert s.count("unreadable") == 4


def test_reingesting_the_same_files_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write_table(folder, 0, 10)
    rp, _, rounds, _ = write_table(folder, 1, 10)
    rounds[3] = rounds[3].replace('"status":"settled"', '"status":"??"')
    rp.write_text("\n".join(rounds) + "\n", encoding="utf-8")
    con, _ = ingest(folder, tmp_path / "db.duckdb")
    before = snapshot(con)
    con.close()
    con, s = ingest(folder, tmp_path / "db.duckdb")
    assert snapshot(con) == before
    assert s.count("already loaded") == 4 and s.lines_read == 0


def test_a_file_rewritten_under_a_loaded_name_is_new_content_and_loads(tmp_path: Path) -> None:
    """Files are known by content: new bytes under an old name are read; the rounds they repeat are duplicates."""
    folder = tmp_path / "in"
    rp, _, rounds, _ = write_table(folder, 0, 5)
    con, _ = ingest(folder, tmp_path / "db.duckdb")
    before = snapshot(con)
    rows = "SELECT * EXCLUDE (content_hash) FROM core_rounds ORDER BY round_no"  # the hash is filled once compared
    rounds_before = con.execute(rows).fetchall()
    con.close()
    rp.write_text("\n".join(rounds[:3]) + "\n", encoding="utf-8")
    con, s = ingest(folder, tmp_path / "db.duckdb")
    f = next(f for f in s.files if f.source_file == rp.name)
    assert (f.status, f.lines_read, f.rows_accepted, f.rows_duplicate) == ("loaded", 3, 3, 3)
    after = snapshot(con)
    assert con.execute(rows).fetchall() == rounds_before
    for t in ("core_wagers", "core_actions", "core_device_events", "core_quarantine", "core_source_changes"):
        assert after[t] == before[t], t
    assert con.execute("SELECT count(*) FROM core_source_files WHERE source_file = ?", [rp.name]).fetchall()[0][0] == 2


def test_identical_duplicate_round_in_two_files_is_kept_once(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    rp, _, rounds, _ = write_table(folder, 0, 6)
    # the same rounds 4..6 exported again, with the keys in another order: same content
    again = [json.dumps(dict(reversed(list(json.loads(x).items())))) for x in rounds[3:]]
    (folder / "rounds_BAC-00_late.jsonl").write_text("\n".join(again) + "\n", encoding="utf-8")
    con, s = ingest(folder, tmp_path / "db.duckdb")
    assert con.execute("SELECT count(*) FROM core_rounds").fetchall()[0][0] == 6
    assert con.execute("SELECT count(*) FROM core_wagers").fetchall()[0][0] == 36
    assert _counts(con, "rounds_BAC-00_late.jsonl") == (3, 3, 0, 3, "loaded")
    dups = con.execute("SELECT source_line, kept_source_file, kept_source_line FROM core_duplicate_lines ORDER BY 1").fetchall()
    assert dups == [(1, rp.name, 4), (2, rp.name, 5), (3, rp.name, 6)]


def _changes(con):
    return con.execute("""SELECT kind, row_key, earlier_source_file, earlier_source_line, later_source_file,
                                 later_source_line FROM core_source_changes ORDER BY ALL""").fetchall()


def test_a_round_arriving_again_with_other_content_is_a_new_version_both_kept(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    rp, _, rounds, _ = write_table(folder, 0, 6)
    r = json.loads(rounds[4])
    r["wagers"][0]["net"] += 500  # the same round, a different settlement
    (folder / "rounds_BAC-00_late.jsonl").write_text(rounds[3] + "\n" + json.dumps(r) + "\n", encoding="utf-8")
    con, s = ingest(folder, tmp_path / "db.duckdb")
    key = [r["table_id"], r["round_no"]]
    # the core tables hold the later version (the one the audit settles), once
    got = con.execute("""SELECT r.source_file, r.source_line, w.net FROM core_rounds r JOIN core_wagers w
                         USING (table_id, round_no) WHERE table_id = ? AND round_no = ? AND w.wager_order = 1""",
                      key).fetchall()
    assert got == [("rounds_BAC-00_late.jsonl", 2, r["wagers"][0]["net"])]
    assert con.execute("SELECT count(*) FROM core_wagers WHERE table_id = ? AND round_no = ?", key).fetchall()[0][0] == 6
    # both versions are kept, whole, with both sources; nothing is quarantined for it
    assert _changes(con) == [("rounds_jsonl", f"{key[0]}/{key[1]}", rp.name, 5, "rounds_BAC-00_late.jsonl", 2)]
    earlier, later = con.execute("SELECT earlier_content, later_content FROM core_source_changes").fetchall()[0]
    assert json.loads(earlier)["w"][0]["net"] == json.loads(rounds[4])["wagers"][0]["net"]
    assert json.loads(later)["w"][0]["net"] == r["wagers"][0]["net"]
    assert con.execute("SELECT count(*) FROM core_quarantine").fetchall()[0][0] == 0
    assert _counts(con, rp.name) == (6, 6, 0, 0, "loaded")
    assert _counts(con, "rounds_BAC-00_late.jsonl") == (2, 2, 0, 1, "loaded")
    assert s.source_changes == 1
    # a third copy identical to the latest version is a duplicate; one identical to the first is a change back
    (folder / "rounds_BAC-00_third.jsonl").write_text(json.dumps(r) + "\n" + rounds[4] + "\n", encoding="utf-8")
    con.close()
    con, s = ingest(folder, tmp_path / "db.duckdb")
    assert _counts(con, "rounds_BAC-00_third.jsonl") == (2, 2, 0, 1, "loaded")
    assert _changes(con)[-1] == ("rounds_jsonl", f"{key[0]}/{key[1]}", "rounds_BAC-00_late.jsonl", 2,
                                 "rounds_BAC-00_third.jsonl", 2)
    assert con.execute("SELECT source_file, source_line FROM core_rounds WHERE round_no = ?",
                       [r["round_no"]]).fetchall() == [("rounds_BAC-00_third.jsonl", 2)]


def test_versions_within_one_file_follow_its_lines(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    rp, _, rounds, _ = write_table(folder, 0, 3)
    r = json.loads(rounds[1]); r["status"] = "void"
    rp.write_text("\n".join(rounds + [rounds[0], json.dumps(r)]) + "\n", encoding="utf-8")
    con, _ = ingest(folder, tmp_path / "db.duckdb")
    assert _counts(con, rp.name) == (5, 5, 0, 1, "loaded")
    assert sorted(x[0] for x in con.execute("SELECT source_line FROM core_rounds").fetchall()) == [1, 3, 5]
    assert [c[3:] for c in _changes(con)] == [(2, rp.name, 5)]
    assert con.execute("SELECT source_line, kept_source_line FROM core_duplicate_lines").fetchall() == [(4, 1)]


def test_device_event_arriving_again(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    _, sp, _, events = write_table(folder, 0, 3)
    changed = events[3].split(","); changed[7] = "Kh" if changed[7] != "Kh" else "Qh"
    (folder / "shoe_AE-0000_again.csv").write_text(
        CSV_HEADER + "\n" + events[2] + "\n" + ",".join(changed) + "\n", encoding="utf-8")
    con, _ = ingest(folder, tmp_path / "db.duckdb")
    assert _counts(con, "shoe_AE-0000_again.csv") == (2, 2, 0, 1, "loaded")
    assert _counts(con, sp.name)[:3] == (len(events), len(events), 0)
    seq = int(events[3].split(",")[3])
    assert con.execute("SELECT card, source_file FROM core_device_events WHERE event_seq = ?", [seq]).fetchall() == [
        (changed[7], "shoe_AE-0000_again.csv")]
    assert [c[:3] + c[4:] for c in _changes(con)] == [("shoe_csv", f"AE-0000/{seq}", sp.name, "shoe_AE-0000_again.csv", 3)]


@pytest.mark.parametrize("offset,closed_local,day_start,expected", [
    ("+07:00", "2026-11-25T05:59:59", "06:00", dt.date(2026, 11, 24)),
    ("+07:00", "2026-11-25T06:00:00", "06:00", dt.date(2026, 11, 25)),
    ("-05:00", "2026-11-25T05:59:59.999", "06:00", dt.date(2026, 11, 24)),
    ("-05:00", "2026-11-25T06:00:00", "06:00", dt.date(2026, 11, 25)),
    ("+05:45", "2026-11-25T00:30:00", "06:00", dt.date(2026, 11, 24)),
    ("Z", "2026-11-24T23:59:00", "06:00", dt.date(2026, 11, 24)),
    ("+08:00", "2026-11-25T03:59:00", "04:00", dt.date(2026, 11, 24)),
    ("+08:00", "2026-11-25T04:00:00", "04:00", dt.date(2026, 11, 25)),
    ("+09:00", "2026-11-25T00:00:00", "00:00", dt.date(2026, 11, 25)),
])
def test_gaming_day_is_the_local_date_of_bets_closed_shifted_by_the_day_start(
        tmp_path: Path, offset, closed_local, day_start, expected) -> None:
    folder = tmp_path / "in"
    rp, _, rounds, _ = write_table(folder, 0, 1)
    r = json.loads(rounds[0])
    r["bets_closed_at"] = closed_local + offset
    rp.write_text(json.dumps(r) + "\n", encoding="utf-8")
    con, _ = ingest(folder, tmp_path / "db.duckdb", day_start)
    minutes = 0 if offset == "Z" else (1 if offset[0] == "+" else -1) * (int(offset[1:3]) * 60 + int(offset[4:6]))
    assert con.execute("SELECT gaming_day, utc_offset_minutes FROM core_rounds").fetchall() == [(expected, minutes)]


def test_gaming_day_start_must_be_a_time_and_stay_the_same_per_database(tmp_path: Path) -> None:
    assert parse_day_start("06:00") == 360 and parse_day_start("4:30") == 270
    for bad in ("6", "24:00", "06:60", "six"):
        with pytest.raises(ValueError):
            parse_day_start(bad)
    folder = tmp_path / "in"
    write_table(folder, 0, 1)
    con, _ = ingest(folder, tmp_path / "db.duckdb", "06:00")
    con.close()
    with pytest.raises(IngestError, match="06:00"):
        ingest(folder, tmp_path / "db.duckdb", "05:00")


def test_the_cli_prints_a_summary_with_reasons(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pipelines.cli import app

    folder = tmp_path / "in"
    rp, _, rounds, _ = write_table(folder, 0, 4)
    rounds[1] = rounds[1][:40]
    rp.write_text("\n".join(rounds) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["ingest", "--input", str(folder), "--db", str(tmp_path / "db.duckdb")])
    assert res.exit_code == 0, res.output
    assert "2 loaded" in res.output and "unparseable JSON" in res.output and "quarantined: 1" in res.output
    res = CliRunner().invoke(app, ["ingest", "--input", str(tmp_path / "nope"), "--db", str(tmp_path / "db.duckdb")])
    assert res.exit_code != 0 and "does not exist" in res.output


def test_progress_bar_run_loads_the_same(tmp_path: Path) -> None:
    from pipelines.db import open_writer
    from pipelines.ingest.run import ingest_folder

    folder = tmp_path / "in"
    write_table(folder, 2, 4)
    from pipelines.console import ingest_progress

    con = open_writer(tmp_path / "a.duckdb")
    with ingest_progress(show=True) as progress:
        s = ingest_folder(con, folder, progress=progress)
    assert s.count("loaded") == 2 and s.rows_accepted == s.lines_read > 0
    plain, _ = ingest(folder, tmp_path / "b.duckdb")
    assert snapshot(con) == snapshot(plain)


def test_a_line_set_aside_is_not_evidence_of_the_sequence(tmp_path: Path) -> None:
    """A mistyped event the device sent again with the same event_seq: the resent line is accepted
    (the quarantined line does not count as the device's earlier event)."""
    _, sp, _, events = write_table(tmp_path / "in", 0, 3)
    bad = events[4].split(","); bad[5] = "crad"
    events.insert(4, ",".join(bad))  # the mistyped copy, then the good line with the same event_seq
    f = events[7].split(","); f[4] = "2026-11-24T19:00:00"  # no offset: set aside, and the next line still rises
    events[7] = ",".join(f)
    sp.write_text(CSV_HEADER + "\n" + "\n".join(events) + "\n", encoding="utf-8")
    con, _ = ingest(tmp_path / "in", tmp_path / "db.duckdb")
    assert con.execute("SELECT source_line, reason_code FROM core_quarantine ORDER BY 1").fetchall() == [
        (6, "unknown_event"), (9, "ts_no_offset")]
    seq = int(events[5].split(",")[3])
    assert con.execute("SELECT source_line FROM core_device_events WHERE event_seq = ?", [seq]).fetchall() == [(7,)]
