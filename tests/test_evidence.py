"""The dispute evidence pack (pitaudit evidence): a planted fault's pack names the right clause and amounts, the
cards are the device's in its order, tampering with any file fails --verify naming the file, hostile ids stay text."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.db import open_reader
from pipelines.evidence.cameras import CameraMapError, parse_camera_map, video_window
from pipelines.evidence.manifest import verify_pack
from pipelines.evidence.pack import write_pack

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
runner = CliRunner()


def _truth(kind: str, variant: str) -> list[dict]:
    with (SAMPLE / "ground_truth.csv").open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["kind"] == kind and r["detail"].startswith(variant + ":")]


def _pack(audited_sample: Path, tmp_path: Path, table: str, round_no: int, **kw) -> tuple[Path, dict, str, str]:
    out, seal = write_pack(audited_sample / "pitaudit.duckdb", table, round_no, tmp_path / "pack", **kw)
    data = json.loads((out / "round.json").read_text(encoding="utf-8"))
    return out, data, (out / "index.html").read_text(encoding="utf-8"), seal


def test_the_pack_of_a_planted_commission_fault_names_the_clause_and_the_amounts(audited_sample, tmp_path):
    """TBAC-5.1.1: a Banker win pays 19:20; the planted fault paid it 1:1. Ground truth gives both amounts."""
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    recorded, rules = map(int, re.search(r"recorded (-?\d+), rules (-?\d+)", row["detail"]).groups())
    out, data, page, _ = _pack(audited_sample, tmp_path, row["table_id"], int(row["round_no"]))
    wagers = {w["wager_id"]: w for w in data["wagers"]}
    w = wagers[row["wager_id"]]
    assert (w["recorded_net"], w["expected_net"], w["difference"], w["clause"]) == (recorded, rules, recorded - rules, "TBAC-5.1.1")
    assert w["same_as_audited"] is True
    # the other wagers of the round are right, and say so
    assert all(x["difference"] == 0 for k, x in wagers.items() if k != row["wager_id"])
    found = [f for f in data["findings"] if f["kind"] == "payout_mismatch"]
    assert [(f["wager_id"], f["difference"], f["rule_ref"]) for f in found] == [(row["wager_id"], recorded - rules, "TBAC-5.1.1")]
    # and the page shows them
    assert row["wager_id"] in page and "TBAC-5.1.1" in page
    assert f"{rules:,}" in page.replace(".", "") or f"{rules / 100:,.2f}" in page


def test_the_pack_of_a_wrong_pro_rata_names_the_differential_clause_for_each_wager(audited_sample, tmp_path):
    """TBAC-7.19: the larger side over the differential is settled pro rata; the fault settled it in full."""
    rows = _truth("payout_mismatch", "wrong_pro_rata")
    table, round_no = rows[0]["table_id"], int(rows[0]["round_no"])
    _, data, _, _ = _pack(audited_sample, tmp_path, table, round_no)
    wagers = {w["wager_id"]: w for w in data["wagers"]}
    for row in (r for r in rows if r["table_id"] == table and int(r["round_no"]) == round_no):
        recorded, rules = map(int, re.search(r"recorded (-?\d+), rules (-?\d+)", row["detail"]).groups())
        w = wagers[row["wager_id"]]
        assert (w["recorded_net"], w["expected_net"], w["clause"]) == (recorded, rules, "TBAC-7.19")
        assert w["settled_amount"] < w["amount"] and w["amount_clause"] == "TBAC-7.19"


def test_the_cards_are_the_devices_in_its_order_each_with_its_hand_and_clause(audited_sample, tmp_path):
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    _, data, page, _ = _pack(audited_sample, tmp_path, row["table_id"], int(row["round_no"]))
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    device = con.execute(
        "SELECT event, card, event_seq FROM core_device_events WHERE table_id = ? AND round_no = ? AND event IN ('card', 'burn') "
        "ORDER BY device_id, event_seq", [row["table_id"], int(row["round_no"])]).fetchall()
    con.close()
    assert [(c["event"], c["card"]["text"], c["event_seq"]) for c in data["cards"]] == device
    dealt = [c for c in data["cards"] if c["event"] == "card"]
    assert all(c["hand"] in ("Player", "Banker") and c["clause"].startswith("TBAC-4.") for c in dealt)
    assert [c["hand"] for c in dealt[:4]] == ["Player", "Banker", "Player", "Banker"]  # TBAC-4.9.1
    assert page.count('class="card ') == len(data["cards"])


def test_a_blackjack_round_puts_every_card_on_a_hand_with_its_clause(audited_sample, tmp_path):
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    table, round_no = con.execute(
        "SELECT table_id, round_no FROM out_findings WHERE kind = 'payout_mismatch' AND table_id LIKE 'BJ-%' "
        "ORDER BY table_id, round_no LIMIT 1").fetchall()[0]
    con.close()
    _, data, page, _ = _pack(audited_sample, tmp_path, table, round_no)
    assert data["cards"] and all(c["step"] is not None and c["clause"].startswith("BJ-") for c in data["cards"])
    # the deal mode is Hold'em's (docs/formats.md): not a blank cell a reviewer reads as missing data
    assert "<th>deal mode</th><td>does not apply (Hold'em only)</td>" in page
    assert any(c["hand"] == "dealer" for c in data["cards"])
    assert any(s["what"].startswith("settle ") for s in data["steps"])
    mismatched = [w for w in data["wagers"] if w["difference"]]
    assert mismatched and all(w["clause"].startswith("BJ-") for w in mismatched)


@pytest.mark.parametrize("game, like", [("blackjack", "BJ-%"), ("holdem_bonus", "%HB-%")])
def test_the_result_by_the_cards_is_data_in_the_json_and_words_on_the_page(audited_sample, tmp_path, game, like):
    """The dealer's cards are a list in round.json and "7s 9c 4h" on the page; a Hold'em round's seats an object. Both
    were Python's text of the value ("['7s', '9c', '4h']", "{'2': {'status': 'played', ...}}"): a string no program
    could read back, and Python shown to the reviewer."""
    import html

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    table, round_no = con.execute(
        "SELECT table_id, round_no FROM core_rounds WHERE status = 'settled' AND game = ? AND table_id LIKE ? "
        "ORDER BY table_id, round_no LIMIT 1", [game, like]).fetchall()[0]
    con.close()
    _, data, page, _ = _pack(audited_sample, tmp_path, table, round_no)
    engine = data["outcome"]["engine"]
    cards = engine["dealer_cards"] if game == "blackjack" else engine["community"]
    assert isinstance(cards, list) and len(cards) >= 2 and all(isinstance(c, str) and len(c) == 2 for c in cards)
    if game == "holdem_bonus":
        assert isinstance(engine["seats"], dict) and all(isinstance(s, dict) and "status" in s for s in engine["seats"].values())
    shown = html.unescape(re.search(r"result by the cards</th><td[^>]*>(.*?)</td>", page, re.S).group(1))
    assert " ".join(cards) in shown and "['" not in shown and "{'" not in shown and "True" not in shown and "False" not in shown


def test_the_pack_records_the_source_files_hashes_and_the_video_window(audited_sample, tmp_path):
    cams = tmp_path / "cameras.toml"
    cams.write_text('lead_seconds = 10\ntrail_seconds = 5\n[tables]\n"BAC-02" = ["CAM-0201", "CAM-0202"]\n')
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    assert row["table_id"] == "BAC-02"
    out, data, page, _ = _pack(audited_sample, tmp_path, row["table_id"], int(row["round_no"]), cameras=cams)
    import hashlib

    for s in data["sources"]:
        assert s["recorded_sha256"] == hashlib.sha256((SAMPLE / s["source_file"]).read_bytes()).hexdigest() == s["disk_sha256"]
    assert {s["source_file"] for s in data["sources"]} == {"rounds_BAC-02_2026-11-24.jsonl", "shoe_AE-0102_2026-11-24.csv"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["recorded_sha256"] for s in manifest["sources"]] == [s["recorded_sha256"] for s in data["sources"]]
    assert data["video"]["cameras"] == ["CAM-0201", "CAM-0202"] and "CAM-0202" in page
    assert data["video"]["from_utc"] < data["round"]["bets_open_at"] and data["video"]["to_utc"] > data["round"]["settled_at"]
    assert all(line["text"] for line in data["source_lines"])  # the round's own lines, read back from the unchanged files
    assert any(n["this_round"] for n in data["neighbours"]) and len(data["neighbours"]) > 1


def test_the_same_round_gives_the_same_bytes(audited_sample, tmp_path):
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    _, seal1 = write_pack(audited_sample / "pitaudit.duckdb", row["table_id"], int(row["round_no"]), tmp_path / "a")
    _, seal2 = write_pack(audited_sample / "pitaudit.duckdb", row["table_id"], int(row["round_no"]), tmp_path / "a")
    assert seal1 == seal2


@pytest.fixture
def sealed(audited_sample, tmp_path) -> tuple[Path, str]:
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    return write_pack(audited_sample / "pitaudit.duckdb", row["table_id"], int(row["round_no"]), tmp_path / "pack")


def test_an_untouched_pack_verifies(sealed):
    folder, seal = sealed
    verdict = verify_pack(folder, seal)
    assert verdict.ok, verdict.problems
    result = runner.invoke(app, ["evidence", "--verify", str(folder), "--seal", seal])
    assert result.exit_code == 0, result.output
    assert "verified" in result.output


def test_verifying_a_folder_that_does_not_exist_could_not_run(tmp_path):
    """formats.md, exit statuses: 2 is "could not run" (a missing folder); 1 is kept for a pack that fails its check."""
    result = runner.invoke(app, ["evidence", "--verify", str(tmp_path / "no-such-pack")])
    assert result.exit_code == 2, result.output
    assert "no such folder" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
def test_a_gaming_day_at_the_calendars_edge_could_not_run_with_one_line(audited_sample, tmp_path, day):
    """``--gaming-day 9999-12-31`` raised OverflowError with a traceback (status 1) while the pack's reads took the days
    around it; the audit's own --gaming-day keeps to the days a round can have, and so does the pack's."""
    result = runner.invoke(app, ["evidence", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", "BAC-01",
                                 "--round", "16776", "--gaming-day", day, "--out", str(tmp_path / "pack")])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"pitaudit: --gaming-day {day} is outside the gaming days a round can have (0001-12-30 to 9999-01-02)"]


@pytest.mark.parametrize("name", ["index.html", "round.json", "manifest.json", "SHA256SUMS"])
@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
def test_one_changed_byte_anywhere_fails_naming_the_file(sealed, name, where):
    folder, _ = sealed
    path = folder / name
    data = bytearray(path.read_bytes())
    i = min(int(len(data) * where), len(data) - 1)
    data[i] = data[i] ^ 0x01
    path.write_bytes(bytes(data))
    verdict = verify_pack(folder)
    assert not verdict.ok
    assert any(name in p for p in verdict.problems), verdict.problems
    result = runner.invoke(app, ["evidence", "--verify", str(folder)])
    assert result.exit_code == 1 and "FAILED" in result.output and name in result.output


def test_a_file_added_or_removed_fails_naming_it(sealed, tmp_path):
    folder, _ = sealed
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / "note.txt").write_text("added later")
    verdict = verify_pack(copy)
    assert not verdict.ok and any("note.txt" in p for p in verdict.problems)
    (folder / "round.json").unlink()
    verdict = verify_pack(folder)
    assert not verdict.ok and any("round.json" in p and "missing" in p for p in verdict.problems)


@pytest.mark.parametrize("name", ["index.html", "round.json", "manifest.json", "SHA256SUMS"])
def test_a_file_replaced_by_a_link_to_the_same_bytes_fails_naming_it(sealed, tmp_path, name):
    """A sealed file swapped for a symbolic link to a copy of itself has the right hash today, and whatever its target
    becomes tomorrow: the pack seals files, so a link in its place fails, however the seal itself reads."""
    folder, seal = sealed
    elsewhere = tmp_path / f"elsewhere-{name}"
    shutil.copyfile(folder / name, elsewhere)
    (folder / name).unlink()
    (folder / name).symlink_to(elsewhere)
    verdict = verify_pack(folder, seal)
    assert not verdict.ok and any(name in p and "symbolic link" in p for p in verdict.problems), verdict.problems
    result = runner.invoke(app, ["evidence", "--verify", str(folder), "--seal", seal])
    assert result.exit_code == 1 and "FAILED" in result.output and "symbolic link" in result.output


def test_a_rewritten_pack_fails_against_its_seal(sealed):
    """Rewriting a file and both hash records consistently passes the sums, but not the seal written down."""
    folder, seal = sealed
    import hashlib

    page = folder / "index.html"
    page.write_bytes(page.read_bytes().replace(b"Dispute evidence", b"Dispute evidenze"))
    h = hashlib.sha256(page.read_bytes()).hexdigest()
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["index.html"]["sha256"] = h
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    from pipelines.evidence.manifest import sha256_file, sums_text

    hashes = {n: sha256_file(folder / n) for n in ("index.html", "round.json", "manifest.json")}
    (folder / "SHA256SUMS").write_text(sums_text(hashes))
    assert verify_pack(folder).ok  # consistent forgery: only the seal can tell
    verdict = verify_pack(folder, seal)
    assert not verdict.ok and any("SHA256SUMS" in p and "seal" in p for p in verdict.problems)


def _ingest(night: Path, db: Path) -> None:
    result = runner.invoke(app, ["ingest", "--input", str(night), "--db", str(db)])
    assert result.exit_code == 0, result.output


def test_a_changed_source_file_fails_verification(audited_sample, tmp_path):
    """The pack records where the source files were; one changed after the pack was sealed fails --verify."""
    night = tmp_path / "night"
    night.mkdir()
    for name in ("rounds_BAC-02_2026-11-24.jsonl", "shoe_AE-0102_2026-11-24.csv"):
        shutil.copy(SAMPLE / name, night / name)
    _ingest(night, tmp_path / "db.duckdb")
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    folder, _ = write_pack(tmp_path / "db.duckdb", row["table_id"], int(row["round_no"]), tmp_path / "pack")
    assert verify_pack(folder).ok
    with (night / "shoe_AE-0102_2026-11-24.csv").open("ab") as f:
        f.write(b"\n")
    verdict = verify_pack(folder)
    assert not verdict.ok and any("shoe_AE-0102_2026-11-24.csv" in p and "changed" in p for p in verdict.problems)


HOSTILE_PLAYER = "<img src=x onerror=alert(1)>"
HOSTILE_DEALER = '"><script>alert(2)</script>'
HOSTILE_TABLE = "BAC'02<svg/onload=alert(3)>"


def test_hostile_ids_stay_text_in_the_page_and_are_bound_in_sql(tmp_path):
    night = tmp_path / "night"
    night.mkdir()
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    rounds = (SAMPLE / "rounds_BAC-02_2026-11-24.jsonl").read_text()
    rounds = rounds.replace(row["player_id"], HOSTILE_PLAYER.replace('"', '\\"')).replace(row["dealer_id"], HOSTILE_DEALER.replace('"', '\\"'))
    (night / "rounds_BAC-02_2026-11-24.jsonl").write_text(rounds.replace('"BAC-02"', json.dumps(HOSTILE_TABLE)))
    shoe = (SAMPLE / "shoe_AE-0102_2026-11-24.csv").read_text()
    (night / "shoe_AE-0102_2026-11-24.csv").write_text(shoe.replace(",BAC-02,", ',"BAC\'02<svg/onload=alert(3)>",'))
    _ingest(night, tmp_path / "db.duckdb")
    result = runner.invoke(app, ["evidence", "--db", str(tmp_path / "db.duckdb"), "--table", HOSTILE_TABLE,
                                 "--round", row["round_no"], "--out", str(tmp_path / "pack")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "pack" / "index.html").read_text()
    data = json.loads((tmp_path / "pack" / "round.json").read_text())
    assert data["round"]["table_id"] == HOSTILE_TABLE and data["round"]["dealer_id"] == HOSTILE_DEALER
    assert any(w["player_id"] == HOSTILE_PLAYER for w in data["wagers"])
    assert len(data["cards"]) == 6  # the device's events were found under the hostile table id
    for raw in (HOSTILE_PLAYER, HOSTILE_DEALER, HOSTILE_TABLE, "<svg", "<script"):
        assert raw not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "<script" not in page.lower()  # the page carries no script at all


def test_a_round_that_does_not_exist_is_one_line(audited_sample, tmp_path):
    result = runner.invoke(app, ["evidence", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", "BAC-02",
                                 "--round", "1", "--out", str(tmp_path / "pack")])
    assert result.exit_code == 2
    assert "no round 1 of table 'BAC-02'" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "pack").exists()


def test_a_folder_with_other_files_is_not_written_into(audited_sample, tmp_path):
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "mine.txt").write_text("keep")
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    result = runner.invoke(app, ["evidence", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", row["table_id"],
                                 "--round", row["round_no"], "--out", str(tmp_path / "pack")])
    assert result.exit_code == 2 and "holds other files" in result.output
    assert (tmp_path / "pack" / "mine.txt").read_text() == "keep"


def test_the_camera_map_is_strict_and_gives_the_window():
    m = parse_camera_map('lead_seconds = 15\n[tables]\n"BJ-01" = ["CAM-1"]\n"BJ-02" = "CAM-2"\n')
    assert m.cameras("BJ-01") == ("CAM-1",) and m.cameras("BJ-02") == ("CAM-2",) and m.cameras("BJ-03") == ()
    w = video_window({"table_id": "BJ-01", "bets_open_at": "2026-11-24T13:45:51Z", "settled_at": "2026-11-24T13:46:37Z",
                      "utc_offset_minutes": 420}, [], m)
    assert (w["from_utc"], w["to_utc"]) == ("2026-11-24T13:45:36Z", "2026-11-24T13:47:07Z")
    assert w["from_local"] == "2026-11-24T20:45:36+07:00"
    with pytest.raises(CameraMapError, match="lead_second"):
        parse_camera_map("lead_second = 15\n")
    with pytest.raises(CameraMapError, match="list of camera ids"):
        parse_camera_map('[tables]\n"BJ-01" = [1, 2]\n')


def test_with_the_rule_documents_configured_each_clause_shows_its_text(audited_sample, tmp_path, monkeypatch):
    """The casino's documents (a folder the user configures) give each clause's words; without them, the id alone."""
    docs = tmp_path / "rules"
    docs.mkdir()
    (docs / "index.toml").write_text('TBAC = "baccarat.txt"\n')
    (docs / "baccarat.txt").write_text(
        "Tiger Baccarat Game Rules\n\n5. PAYOUTS\n\n5.1. Odds\n\n5.1.1. A winning Banker wager is paid 19 to 20 <b>here</b>.\n\n"
        "5.1.2. A winning Player wager is paid 1 to 1.\n\n6. TIES\n\n6.1. Stand-off\n\n6.1.1. Main wagers.\n\n"
        "6.1.1.1. On a Tie.\n\n6.1.1.2. A losing Player wager is collected.\n")
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    monkeypatch.setenv("PITAUDIT_RULE_DOCS", str(docs))
    result = runner.invoke(app, ["evidence", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", row["table_id"],
                                 "--round", row["round_no"], "--out", str(tmp_path / "pack")])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "pack" / "round.json").read_text())
    assert "paid 19 to 20" in data["clause_texts"]["TBAC-5.1.1"]
    assert data["clause_texts"]["TBAC-5.1.1"].count("5.1.2") == 0  # the clause, not its siblings
    page = (tmp_path / "pack" / "index.html").read_text()
    assert "paid 19 to 20 &lt;b&gt;here&lt;/b&gt;" in page  # the document's words are data too
    monkeypatch.delenv("PITAUDIT_RULE_DOCS")
    _, data, page, _ = _pack(audited_sample, tmp_path / "plain", row["table_id"], int(row["round_no"]))
    assert set(data["clause_texts"].values()) == {None} and "shown by id" in page


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.binary(min_size=1, max_size=400), data=st.binary(min_size=1, max_size=400),
       which=st.sampled_from(["index.html", "round.json", "manifest.json", "SHA256SUMS"]),
       where=st.floats(min_value=0, max_value=1), bit=st.integers(min_value=0, max_value=7))
def test_any_flipped_bit_of_any_file_fails_naming_that_file(tmp_path_factory, index, data, which, where, bit):
    """The seal's invariant, on packs of any content: an untouched pack verifies; one flipped bit anywhere fails,
    and the failure names the file that was changed."""
    from pipelines.evidence.manifest import seal

    folder = tmp_path_factory.mktemp("p")
    seal(folder, {"index.html": index, "round.json": data}, {"table_id": "T", "round_no": 1}, [], "test")
    assert verify_pack(folder, check_sources=False).ok
    path = folder / which
    raw = bytearray(path.read_bytes())
    i = min(int(where * len(raw)), len(raw) - 1)
    raw[i] ^= 1 << bit
    path.write_bytes(bytes(raw))
    verdict = verify_pack(folder, check_sources=False)
    assert not verdict.ok
    assert any(which in p for p in verdict.problems), verdict.problems


def test_without_out_the_pack_goes_where_the_report_links_to_it(audited_sample, tmp_path, monkeypatch):
    from pipelines.report import links

    row = _truth("payout_mismatch", "commission_not_taken")[0]
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["evidence", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", row["table_id"],
                                 "--round", row["round_no"]])
    assert result.exit_code == 0, result.output
    href = links.evidence_href(row["table_id"], int(row["round_no"]))
    from urllib.parse import unquote

    assert (tmp_path / unquote(href)).is_file()


def test_a_card_seen_twice_in_a_round_goes_to_the_step_that_deals_it():
    """TBAC-4.14: a baccarat round As 2s 3s 2h, then 3s to the Player and Tc to the Banker, then a foreign card. The
    fifth card (3s, like the third) was paired with the tally "Player As 3s: 4 points" (no hand, TBAC-4.12), and the
    foreign card with no step; each now goes to its own "Card N" step: Player, TBAC-4.14; the foreign card, TBAC-7.7."""
    from pipelines.evidence.steps import card_rows
    from rulebook.cards import FOREIGN, parse_card

    steps = [{"what": w, "clause": c} for w, c in (
        ("Card 1 As to the Player", "TBAC-4.9.1.1"), ("Card 2 2s to the Banker", "TBAC-4.9.1.2"),
        ("Card 3 3s to the Player", "TBAC-4.9.1.1"), ("Card 4 2h to the Banker", "TBAC-4.9.1.2"),
        ("Player As 3s: 4 points", "TBAC-4.12"), ("Banker 2s 2h: 4 points", "TBAC-4.12"),
        ("Player 2 cards 4 points: draws", "TBAC-4.14"), ("Card 5 3s to the Player", "TBAC-4.14"),
        ("Banker 2 cards 4 points, Player's third card 3: draws", "TBAC-4.15"), ("Card 6 Tc to the Banker", "TBAC-4.15"),
        ("Card 7 a foreign card: not authorised by the drawing rules; begins the next hand, a Free Hand", "TBAC-7.7"),
        ("A card foreign to the decks in use: the round is void, every wager is returned", "TBAC-7.1"))]
    cards = ["As", "2s", "3s", "2h", "3s", "Tc", "Ah5"]
    events = [{"event": "card", "card": c, "card_code": FOREIGN if c == "Ah5" else parse_card(c), "device_id": "AE-1",
               "event_seq": i} for i, c in enumerate(cards)]
    rows = card_rows(events, steps)
    assert [(r["hand"], r["clause"]) for r in rows] == [
        ("Player", "TBAC-4.9.1.1"), ("Banker", "TBAC-4.9.1.2"), ("Player", "TBAC-4.9.1.1"), ("Banker", "TBAC-4.9.1.2"),
        ("Player", "TBAC-4.14"), ("Banker", "TBAC-4.15"), (None, "TBAC-7.7")]
    assert rows[4]["what"] == "Card 5 3s to the Player" and rows[6]["step"] == 10


def test_a_round_only_the_device_dealt_says_its_local_time_is_unknown(audited_sample, tmp_path):
    """A round the table system never recorded has no UTC offset for its table: the video window's local times said
    " / " (two empty values); they say why they are missing. The UTC window is still given."""
    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    found = con.execute("SELECT table_id, round_no FROM out_findings WHERE kind = 'unmatched_round' AND detail LIKE 'device %' "
                        "ORDER BY table_id, round_no LIMIT 1").fetchall()
    con.close()
    assert found, "the sample night has a round only a device dealt"
    _, data, page, _ = _pack(audited_sample, tmp_path, *found[0])
    assert data["video"]["from_utc"] and not data["video"].get("from_local")
    row = re.search(r"<th>from / to \(table's local time\)</th><td>(.*?)</td>", page, re.S).group(1)
    assert row == "unknown: no table-system record gives the table's UTC offset"


@pytest.mark.parametrize("variant,shoes", [("table_record_without_cards", ("none", "S-BAC08-0001")),
                                           ("cards_without_table_record", ("S-BAC03-0001", "none"))])
def test_a_shoe_only_one_side_recorded_says_which_side_has_none(audited_sample, tmp_path, variant, shoes):
    """The round's shoe is shown as "device / table system": a round the device logged no card of read " / S-BAC08-0001",
    a blank where the device's shoe goes, that a reader could take for the other side's."""
    row = _truth("unmatched_round", variant)[0]
    out, data, page, _ = _pack(audited_sample, tmp_path, row["table_id"], int(row["round_no"]))
    cell = re.search(r"<th>shoe \(device / table system\)</th><td>(.*?)</td>", page).group(1)
    assert cell == f"{shoes[0]} / {shoes[1]}"


def test_a_camera_map_that_is_not_utf8_is_one_line_naming_it(audited_sample, tmp_path):
    """A camera map saved in another encoding (or a binary file named by mistake) raised UnicodeDecodeError with a
    traceback from ``pitaudit evidence``, and stopped the audit's publish where an unreadable map is a warning."""
    from pipelines.evidence.cameras import CameraMapError, load_camera_map

    latin = tmp_path / "cameras.toml"
    latin.write_bytes('[tables]\n"BAC-02" = ["CAM-Café"]\n'.encode("latin-1"))
    with pytest.raises(CameraMapError, match="not UTF-8"):
        load_camera_map(latin)
    row = _truth("payout_mismatch", "commission_not_taken")[0]
    result = runner.invoke(app, ["evidence", "--db", str(audited_sample / "pitaudit.duckdb"), "--table", row["table_id"],
                                 "--round", row["round_no"], "--out", str(tmp_path / "pack"), "--cameras", str(latin)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and str(latin) in result.output
