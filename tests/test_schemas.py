"""The data contracts: every column documented, models and DDL generated from the same metadata."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.db import open_memory_writer
from schemas.ddl import SCHEMA_VERSION, all_ddl, create_table_sql
from schemas.inputs import INPUT_TABLES
from schemas.metadata import Field, Rule, Table
from schemas.pandera_models import model, polars_schema, validate_frame
from schemas.reasons import REASONS
from schemas.rules import column_expr, row_expr
from schemas.tables import CANONICAL_TABLES, TABLES_BY_NAME
from schemas.vocabulary import builtin_vocabulary

ALL_TABLES = (*CANONICAL_TABLES, *INPUT_TABLES)


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda t: t.name)
def test_every_column_and_table_has_a_description(table: Table) -> None:
    """Documented settings are tested (datasette): a column without its meaning fails here."""
    assert len(table.description) > 20, table.name
    for f in table.fields:
        assert f.description and len(f.description.strip()) >= 8, f"{table.name}.{f.name} lacks a description"


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda t: t.name)
def test_every_rule_names_a_known_reason(table: Table) -> None:
    for f in table.fields:
        for r in f.rules:
            assert r.code in REASONS, (table.name, f.name, r.code)
    for r in table.row_rules:
        assert r.code in REASONS, (table.name, r.name)


def test_canonical_tables_required_by_the_audit_exist_with_their_columns() -> None:
    """The names the audit codes against (issue 4 brief)."""
    expected = {
        "core_source_files": "source_file kind sha256 size_bytes lines_read rows_accepted rows_quarantined ingested_at status error",
        "core_device_events": "source_file source_line device_id table_id shoe_id event_seq ts event round_no card card_code decks",
        "core_rounds": "table_id round_no game ruleset shoe_id dealer_id currency deal_mode limit_min limit_max "
                       "limit_differential limit_side_min limit_side_max bets_open_at bets_closed_at settled_at status "
                       "recorded_winner recorded_player_points recorded_banker_points recorded_result jackpot_meter "
                       "gaming_day utc_offset_minutes source_file source_line",
        "core_wagers": "table_id round_no wager_order wager_id seat player_id bet amount placed_at net hand source_file source_line",
        "core_actions": "table_id round_no action_order seat hand action amount ts wager_ids source_file source_line",
        "core_quarantine": "source_file source_line reason reason_code raw",
        "core_source_changes": "kind row_key table_id round_no device_id event_seq gaming_day earlier_source_file "
                               "earlier_source_line earlier_content later_source_file later_source_line later_content",
    }
    for name, cols in expected.items():
        assert set(cols.split()) <= set(TABLES_BY_NAME[name].column_names), name


def test_money_columns_are_bigint_never_float() -> None:
    money = {"amount", "net", "limit_min", "limit_max", "limit_differential", "limit_side_min", "limit_side_max",
             "jackpot_meter"}
    for t in CANONICAL_TABLES:
        for f in t.fields:
            if f.name in money:
                assert f.type == "bigint", (t.name, f.name)
            assert f.type not in ("double", "float")


def test_ddl_creates_every_table_with_comments_and_is_idempotent() -> None:
    con = open_memory_writer()
    for stmt in all_ddl():  # a second time changes nothing
        con.execute(stmt)
    for t in CANONICAL_TABLES:
        cols = con.execute(
            "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index",
            [t.name]).fetchall()
        assert [c[0] for c in cols] == list(t.column_names)
        for (name, dtype, comment), f in zip(cols, t.fields):
            assert comment == f.description
            assert dtype == {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE"}.get(f.duckdb_type, f.duckdb_type), (t.name, name)


def test_ddl_check_constraints_reject_what_the_metadata_forbids() -> None:
    con = open_memory_writer()
    with pytest.raises(Exception, match="(?i)constraint"):
        con.execute("""INSERT INTO core_quarantine VALUES ('f', 1, 'pdf', 'r', 'c', NULL, 'x')""")
    with pytest.raises(Exception, match="(?i)constraint"):
        con.execute("""INSERT INTO core_wagers VALUES ('T', 1, 1, 'W', 1, NULL, 'banker', -5, now(), 0, NULL, 'f', 1)""")
    with pytest.raises(Exception, match="(?i)constraint"):  # a split-time pair wager's hand counts from 1
        con.execute("""INSERT INTO core_wagers VALUES ('T', 1, 1, 'W', 1, NULL, 'pair', 5, now(), 0, 0, 'f', 1)""")


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda t: t.name)
def test_models_are_generated_for_every_table_with_the_descriptions(table: Table) -> None:
    m = model(table.name)
    assert set(m.columns) == set(table.column_names)
    for f in table.fields:
        assert m.columns[f.name].description == f.description
        assert m.columns[f.name].nullable == (not f.required)


def test_rule_expressions_let_nulls_pass_and_catch_the_bad_value() -> None:
    v = builtin_vocabulary()
    df = pl.DataFrame({"x": ["12", None, "1.5", "-3", "99999999999999999999999"]})
    assert df.select(column_expr(Rule("int_text", "wrong_type"), "x", v))["x"].to_list() == [True, True, False, True, True]
    assert df.select(column_expr(Rule("int_fits", "out_of_range"), "x", v))["x"].to_list() == [True, True, True, True, False]
    assert df.select(column_expr(Rule("not_negative_text", "negative_amount"), "x", v))["x"].to_list() == [
        True, True, True, False, True]


def test_validate_frame_reports_the_row_and_the_reason_code() -> None:
    t = Table("t_demo", "a table for this test only, nothing else", (
        Field("a", "bigint", "a number that must be >= 0", required=True, rules=(Rule("ge", "negative_amount", 0),)),
    ))
    from schemas.pandera_models import build_model

    fc = validate_frame(pl.DataFrame({"a": [1, -2, None, 4]}), build_model(t, builtin_vocabulary()))
    got = sorted(zip(fc["row"].to_list(), fc["code"].to_list()))
    assert got == [(1, "negative_amount"), (2, "missing_field")]


def test_row_rule_bet_must_belong_to_the_game() -> None:
    v = builtin_vocabulary()
    rule = next(r for r in model("input_wager").checks if r.name == "unknown_bet")
    assert rule is not None
    from schemas.inputs import INPUT_WAGER

    rr = next(r for r in INPUT_WAGER.row_rules if r.code == "unknown_bet")
    df = pl.DataFrame({"game": ["baccarat", "baccarat", "blackjack", None], "bet": ["tiger", "main", "main", "x"]})
    assert df.select(row_expr(rr, v)).to_series().to_list() == [True, False, True, True]


def test_create_table_sql_marks_required_columns_not_null() -> None:
    sql = create_table_sql(TABLES_BY_NAME["core_rounds"])
    assert "gaming_day DATE NOT NULL" in sql
    assert "UNIQUE (table_id, round_no)" in sql
    assert polars_schema(TABLES_BY_NAME["core_wagers"])["amount"] == pl.Int64


def test_a_database_of_schema_version_1_is_upgraded_when_opened(tmp_path) -> None:
    """One database holds every night: a database of an earlier schema is upgraded in place when next opened for
    writing (core_wagers.hand added in version 2; core_source_files rebuilt, its rows kept, in version 3)."""
    from pipelines.db import get_meta, open_writer

    path = tmp_path / "old.duckdb"
    con = open_writer(path)
    con.execute("ALTER TABLE core_wagers DROP COLUMN hand")
    con.execute("UPDATE meta_schema SET value = '1' WHERE name = 'schema_version'")
    con.execute("INSERT INTO core_wagers (table_id, round_no, wager_order, wager_id, seat, bet, amount, placed_at, net, "
                "source_file, source_line) VALUES ('T', 1, 1, 'W', 1, 'main', 5, now(), 0, 'f', 1)")
    con.close()
    con = open_writer(path)
    try:
        assert con.execute("SELECT wager_id, hand FROM core_wagers").fetchall() == [("W", None)]
        assert get_meta(con, "schema_version") == str(SCHEMA_VERSION) == "7"
    finally:
        con.close()


def test_a_database_of_schema_version_2_keeps_its_files_and_loads_the_next_night_under_the_same_names(tmp_path) -> None:
    """Version 3 keeps a row per read of a file (the next night's export may reuse a name): an older database's
    core_source_files (one row per name, its primary key) is rebuilt with its rows, and the same names load."""
    import json

    from pipelines.db import get_meta, open_writer
    from pipelines.ingest.run import ingest_folder
    from pipelines.ingest.synthetic import table_log

    path = tmp_path / "old.duckdb"
    con = open_writer(path)
    con.execute("DROP TABLE core_source_files")
    con.execute("""CREATE TABLE core_source_files (source_file VARCHAR NOT NULL, kind VARCHAR NOT NULL,
                   sha256 VARCHAR NOT NULL, size_bytes BIGINT NOT NULL, lines_read BIGINT NOT NULL,
                   rows_accepted BIGINT NOT NULL, rows_quarantined BIGINT NOT NULL, rows_duplicate BIGINT NOT NULL,
                   ingested_at TIMESTAMPTZ NOT NULL, status VARCHAR NOT NULL, error VARCHAR, input_root VARCHAR,
                   PRIMARY KEY (source_file))""")
    con.execute("INSERT INTO core_source_files VALUES ('rounds_BAC-00.jsonl', 'rounds_jsonl', 'abc', 10, 1, 1, 0, 0, "
                "now(), 'loaded', NULL, '/old')")
    con.execute("UPDATE meta_schema SET value = '2' WHERE name = 'schema_version'")
    con.close()
    folder = tmp_path / "in"
    folder.mkdir()
    log = table_log(0, 3, seed=1)
    (folder / "rounds_BAC-00.jsonl").write_text("\n".join(log.round_lines) + "\n", encoding="utf-8")
    con = open_writer(path)
    try:
        assert get_meta(con, "schema_version") == "7"
        summary = ingest_folder(con, folder)
        assert [(f.source_file, str(f.status), f.rows_accepted) for f in summary.files] == [
            ("rounds_BAC-00.jsonl", "loaded", 3)]
        rows = con.execute("SELECT sha256, first_line, input_root FROM core_source_files ORDER BY ingested_at").fetchall()
        assert rows[0] == ("abc", 1, "/old") and len(rows) == 2
        assert json.loads(log.round_lines[0])["round_no"] == 1
    finally:
        con.close()


def test_a_database_of_a_later_schema_is_refused_with_a_one_line_reason(tmp_path) -> None:
    import pytest

    from pipelines.db import DatabaseError, open_writer

    path = tmp_path / "new.duckdb"
    con = open_writer(path)
    con.execute("UPDATE meta_schema SET value = '99' WHERE name = 'schema_version'")
    con.close()
    with pytest.raises(DatabaseError, match="schema 99") as caught:
        open_writer(path)
    assert "\n" not in str(caught.value)
