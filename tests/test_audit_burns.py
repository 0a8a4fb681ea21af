"""A shoe dealt without its burn (TBAC-7.11, BJ-7.13): one ``card_integrity`` finding on its first round.

The burns of a new shoe come between its ``shoe_start`` and its first card, with no round (docs/formats.md).
A shoe is judged only when that evidence is whole: its start and first card loaded, and no ``event_seq`` jump
between them. The results stand: no settlement changes.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
from typer.testing import CliRunner

from test_audit_support import NightBuilder

PLAYER_NATURAL = "9c 2h Kd 3s"
BJ = "hoiana-blackjack"


def _card_findings(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.filter(pl.col("kind") == "card_integrity")


def test_a_baccarat_shoe_dealt_without_its_burn_is_one_finding_on_its_first_round_TBAC_7_11():
    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1")  # burned
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    nb.start_shoe("BAC-01", "S-2", at=dt.datetime(2026, 11, 24, 15, 1, 30, tzinfo=dt.timezone.utc), burns=())
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W2", "player", 10000, 10000)], shoe_id="S-2")
    nb.round("BAC-01", 3, PLAYER_NATURAL, [("W3", "player", 10000, 10000)], shoe_id="S-2")
    s, f = nb.audit()
    burn = _card_findings(f)
    assert burn.height == 1, burn.rows()
    row = burn.row(0, named=True)
    assert (row["table_id"], row["round_no"], row["rule_ref"], row["severity"]) == ("BAC-01", 2, "TBAC-7.11", "medium")
    assert row["gaming_day"] == dt.date(2026, 11, 24) and row["dealer_id"] == "D1" and row["device_id"] == "AE-BAC-01"
    assert "shoe S-2 was dealt without a burn: the first card of round 2 came straight after the shoe_start" in row["detail"]
    assert row["source_file"] == "shoe_AE-BAC-01.csv"
    assert f.height == 1  # nothing else: the results stand
    assert s["expected_net"].to_list() == [10000, 10000, 10000]


def test_a_blackjack_shoe_dealt_without_its_burn_is_one_finding_BJ_7_13():
    nb = NightBuilder()
    nb.start_shoe("BJ-01", "S-BJ", burns=())
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 10000, 1)], ruleset=BJ, shoe_id="S-BJ",
             actions=[(1, 1, "stand", None)])
    s, f = nb.audit()
    row = _card_findings(f).row(0, named=True)
    assert f.height == 1 and (row["round_no"], row["rule_ref"]) == (1, "BJ-7.13")
    assert "play continues with that card in play" in row["detail"]
    assert s["expected_net"].to_list() == [10000]


def test_the_same_shoes_with_their_burns_are_no_finding_TBAC_7_11_BJ_7_13():
    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", burns=("2c", "8s", "5s"))
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    nb.start_shoe("BJ-01", "S-BJ", burns=("Qh",))
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 10000, 1)], ruleset=BJ, shoe_id="S-BJ",
             actions=[(1, 1, "stand", None)])
    _, f = nb.audit()
    assert f.height == 0, f.rows()


def test_a_shoe_whose_burns_were_lost_is_a_sequence_gap_and_no_burn_finding_TBAC_7_11():
    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", burns=())
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1", skip_seq=3)
    _, f = nb.audit()
    assert f["kind"].to_list() == ["sequence_gap"]


def test_a_shoe_whose_start_is_not_loaded_is_not_judged_TBAC_7_11():
    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", burns=())
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    nb.events = [e for e in nb.events if e["event"] != "shoe_start"]
    _, f = nb.audit()
    assert _card_findings(f).height == 0, f.rows()


def test_a_holdem_shoe_without_a_burn_before_its_first_round_is_nothing_new_HTB_7_8():
    nb = NightBuilder()
    rs = "hoiana-holdem-bonus"
    nb.start_shoe("HTB-01", "S-H", burns=())
    cards = "b:2c 9s 3d As 4d b:5c Ks Qs 7h b:6c 2d b:8h 3c 8c 8d"
    nb.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500)], ruleset=rs, deal_mode="shoe", shoe_id="S-H",
             actions=[(1, 1, "check", None)])
    with_burns = NightBuilder()
    with_burns.start_shoe("HTB-01", "S-H")
    with_burns.round("HTB-01", 1, cards, [("H1", "ante", 2500, 2500)], ruleset=rs, deal_mode="shoe", shoe_id="S-H",
                     actions=[(1, 1, "check", None)])
    _, f = nb.audit()
    _, g = with_burns.audit()
    assert not (f["rule_ref"].is_in(["TBAC-7.11", "BJ-7.13"])).any()
    assert f.drop("finding_id", "source_line").equals(g.drop("finding_id", "source_line"))


def test_the_published_parquet_gives_the_same_shoe_openings_as_the_database(tmp_path):
    """The Dask path: the night-wide step reads the published Parquet (pipelines.audit.canon)."""
    from pipelines.audit.canon import open_source_reader, publish_canon
    from pipelines.audit.load import Window, load_shoe_openings
    from pipelines.audit.params import AuditParams

    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", burns=())
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    nb.start_shoe("BJ-01", "S-BJ")
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 10000, 1)], ruleset=BJ, shoe_id="S-BJ",
             actions=[(1, 1, "stand", None)])
    db = nb.write_db(tmp_path / "audit.duckdb")
    params = AuditParams()
    window = Window((dt.date(2026, 11, 24),))
    canon = publish_canon(db, params.day_start_minutes, days=window.days)
    opened = []
    for source in (db, canon):
        con = open_source_reader(source, "500MB")
        try:
            opened.append(load_shoe_openings(con, params, window))
        finally:
            con.close()
    assert opened[0].height == 2 and opened[0]["burned"].to_list() == [False, True]
    assert opened[0].equals(opened[1])


def test_the_cli_reports_a_shoe_without_its_burn_once_and_again_on_a_re_run(tmp_path, prefect_harness):
    """Through ``pitaudit audit`` on files: the finding is staged with its partition, and a re-run (partitions not
    re-settled: the night-wide findings replaced) publishes the same bytes."""
    from pipelines.cli import app

    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", burns=())
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    nb.round("BJ-01", 1, "Tc 7d 9h Kc", [("B1", "main", 10000, 10000, 1)], ruleset=BJ, actions=[(1, 1, "stand", None)])
    night = nb.write_input(tmp_path / "night")
    runs = []
    for out in ("out1", "out2"):
        result = CliRunner().invoke(app, ["audit", "--input", str(night), "--db", str(tmp_path / "audit.duckdb"),
                                          "--out", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
        runs.append((tmp_path / out / "findings.csv").read_bytes())
    assert runs[0] == runs[1]
    findings = pl.read_csv(tmp_path / "out1" / "findings.csv")
    assert findings.select("kind", "table_id", "round_no", "rule_ref").rows() == [("card_integrity", "BAC-01", 1, "TBAC-7.11")]


def test_a_late_export_holding_the_shoe_start_brings_the_finding_to_a_partition_not_re_settled_TBAC_7_11(
        tmp_path, prefect_harness):
    """The shoe_start and burns have no round, so the partition's fingerprint does not cover them: the finding is
    night-wide, replaced on a partition that is not re-settled (pipelines.audit.publish.night_wide_sql)."""
    from pipelines.cli import app

    nb = NightBuilder()
    nb.start_shoe("BAC-01", "S-1", burns=())
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000)], shoe_id="S-1")
    night = nb.write_input(tmp_path / "night")
    header, start, *cards = (night / "shoe_AE-BAC-01.csv").read_text().splitlines(keepends=True)
    assert ",shoe_start," in start
    (night / "shoe_AE-BAC-01.csv").write_text(header + "".join(cards))
    late = tmp_path / "late"
    late.mkdir()
    (late / "shoe_AE-BAC-01_start.csv").write_text(header + start)

    def audit(folder, out):
        result = CliRunner().invoke(app, ["audit", "--input", str(folder), "--db", str(tmp_path / "audit.duckdb"),
                                          "--out", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
        return pl.read_csv(tmp_path / out / "findings.csv"), result.output

    first, _ = audit(night, "first")
    assert first.filter(pl.col("kind") == "card_integrity").height == 0  # no start loaded: not judged
    after, said = audit(late, "late")
    assert "0 changed since their last audit" in said  # the partition is not re-settled
    assert after.select("kind", "table_id", "round_no", "rule_ref").rows() == [("card_integrity", "BAC-01", 1, "TBAC-7.11")]
    again, _ = audit(late, "again")
    assert again.equals(after)
