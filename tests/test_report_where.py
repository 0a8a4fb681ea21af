"""At which tables a dealer's hold finding came from (pipelines.report.where): figures by hand, the tests it reads,
the dealer's own page as its source."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from pipelines.audit.frames import FINDINGS_SCHEMA, conform
from pipelines.investigation.analysis import BY_TABLE_SCHEMA
from pipelines.report.where import dealer_hold_tables, tables_with_hold_findings, where_sentence

DAY = dt.date(2026, 12, 1)


def _tables(rows: list[tuple[str, str, float, float]]) -> pl.DataFrame:
    """(table, currency, players' net above theory, its s.d.) in the smallest unit; the other columns plausible."""
    return pl.DataFrame([{"table_id": t, "currency": c, "rounds": 100, "wagers": 400, "wagered": 4_000_000,
                          "recorded_net": int(a), "expected_net": int(a), "theory": 0.0, "sd": sd, "above_theory": a,
                          "z_recorded": a / sd} for t, c, a, sd in rows], schema=BY_TABLE_SCHEMA)


def _finding(fid: str, test: str, table: str | None = None, dealer: str | None = None) -> dict:
    doc = json.dumps({"sentence": f"{test} of {dealer or table}", "test": test, "window_days": 30})
    return {"finding_id": fid, "kind": "hold_anomaly", "severity": "medium", "gaming_day": DAY, "table_id": table,
            "dealer_id": dealer, "currency": "USD", "detail": f"{test} of {dealer or table}; p = 1e-6. {doc}"}


def test_the_sentence_names_the_table_carrying_the_shortfall_and_the_other_tables_together_by_hand():
    """BAC-08: players +247,589.00 USD above theory, s.d. 33,916.30: +7.3 s.d. The other two together:
    (10,000.00 - 5,000.00) / sqrt(20,000.00^2 + 15,000.00^2) = 5,000 / 25,000 = +0.2 s.d. A row in another
    currency is not his USD."""
    tables = _tables([("BAC-01", "USD", 1_000_000, 2_000_000), ("BAC-08", "USD", 24_758_900, 3_391_630),
                      ("BAC-02", "USD", -500_000, 1_500_000), ("MBS-01", "SGD", 90_000_000, 1_000_000)])
    said = where_sentence(tables, "USD", {"BAC-08"})
    assert said == ("At which tables (his wagers in the window): most at BAC-08, players' net +247,589.00 USD against "
                    "theory (+7.3 s.d.; the table has hold findings of its own tonight); his 2 other tables together "
                    "+0.2 s.d.")
    # not flagged itself: no such clause
    assert "hold findings of its own" not in where_sentence(tables, "USD", set())


def test_a_dealer_whose_players_lost_too_much_is_shown_at_his_lowest_table():
    tables = _tables([("BAC-01", "USD", -4_000_000, 1_000_000), ("BAC-02", "USD", 500_000, 1_000_000)])
    said = where_sentence(tables, "USD", set())
    assert "most at BAC-01, players' net -40,000.00 USD against theory (-4.0 s.d.)" in said
    assert said.endswith("his 1 other table together +0.5 s.d.")


def test_one_table_only_is_named_without_the_others():
    said = where_sentence(_tables([("BAC-03", "USD", 2_000_000, 1_000_000)]), "USD", set())
    assert said == "At which tables (his wagers in the window): most at BAC-03, players' net +20,000.00 USD against theory (+2.0 s.d.)."
    assert where_sentence(_tables([("BAC-03", "USD", 1.0, 1.0)]), "SGD", set()) is None


def test_the_tables_with_hold_findings_are_those_of_a_table_or_shoe_test_not_a_dealers():
    findings = conform(pl.DataFrame([
        _finding("a" * 16, "hold_table", table="BAC-08"), _finding("b" * 16, "hold_shoe", table="BAC-05"),
        _finding("c" * 16, "hold_dealer", table=None, dealer="D1"),
        _finding("d" * 16, "dealer_error_rate", table="BAC-09", dealer="D2"),
    ], infer_schema_length=None), FINDINGS_SCHEMA)
    assert tables_with_hold_findings(findings) == {"BAC-08", "BAC-05"}


@pytest.fixture
def dealer_page(audited_sample) -> tuple[Path, str, pl.DataFrame]:
    """The sample's report folder, the link of dealer D1011's page, and that page's tables (three: BAC-07, BAC-02,
    BAC-06)."""
    out = audited_sample / "out"
    page = next((out / "investigations" / "dealer" / "D1011").glob("*/index.html"))
    tables = pl.read_parquet(page.parent / "tables.parquet")
    return out, str(page.relative_to(out)), tables


def test_each_dealer_hold_finding_reads_its_own_page_and_nothing_else_does(dealer_page):
    out, href, tables = dealer_page
    assert tables.height >= 2  # the breakdown has something to say
    findings = conform(pl.DataFrame([
        _finding("h" * 16, "hold_dealer", dealer="D1011"),  # his hold: read from his page
        _finding("e" * 16, "dealer_error_rate", dealer="D1011"),  # his error rate: the tables' money says nothing of it
        _finding("m" * 16, "hold_dealer", dealer="D2000"),  # a page that was not written
        _finding("t" * 16, "hold_table", table=tables["table_id"][0]),  # his table flagged on its own
    ], infer_schema_length=None), FINDINGS_SCHEMA)
    links = {"h" * 16: href, "e" * 16: href, "m" * 16: "investigations/dealer/D2000/x/index.html"}
    where = dealer_hold_tables(out, findings, links)
    assert set(where) == {"h" * 16}
    assert where["h" * 16] == where_sentence(tables, "USD", {tables["table_id"][0]})
    assert dealer_hold_tables(out, findings, None) == {} and dealer_hold_tables(out, findings, {}) == {}
