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
from pipelines.report.where import (dealers_sentence, dealers_with_hold_findings, hold_sources, tables_with_hold_findings,
                                    where_sentence)

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
    assert dealers_with_hold_findings(findings) == {"D1"}


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
    where = hold_sources(out, findings, links)
    assert set(where) == {"h" * 16}
    assert where["h" * 16] == where_sentence(tables, "USD", {tables["table_id"][0]})
    assert hold_sources(out, findings, None) == {} and hold_sources(out, findings, {}) == {}


def test_a_tables_sentence_names_the_dealer_under_whom_most_of_it_lies_and_the_others_together_by_hand():
    """A table's page's dealers with their theory (``dealers_with_theory``): D5 +30,000.00 USD, s.d. 10,000.00 (+3.0);
    the other two together (8,000.00 + 0.00) / sqrt(6,000.00^2 + 8,000.00^2) = 8,000 / 10,000 = +0.8 s.d.; D5 has a
    hold finding of his own."""
    dealers = _tables([("D5", "USD", 3_000_000, 1_000_000), ("D6", "USD", 800_000, 600_000),
                       ("D7", "USD", 0, 800_000)]).rename({"table_id": "dealer_id"})
    assert dealers_sentence(dealers, "USD", {"D5"}) == (
        "Under which dealers (the table's wagers in the window): most under D5, players' net +30,000.00 USD against "
        "theory (+3.0 s.d.; the dealer has hold findings of their own tonight); the 2 other dealers together +0.8 s.d.")
    # a page written before its dealers had a theory: nothing said
    assert dealers_sentence(dealers.drop("above_theory", "sd", "theory", "z_recorded"), "USD", set()) is None


def test_a_table_hold_finding_reads_its_pages_dealers_and_a_shoes_does_not(audited_sample):
    """The sample's planted stacked shoe at NCB-04 flags the table: its page's dealers all stand above theory, so the
    sentence names the most and the others together, from the page's own file."""
    out = audited_sample / "out"
    page = next((out / "investigations" / "table" / "NCB-04").glob("*/index.html"))
    dealers = pl.read_parquet(page.parent / "dealers.parquet")
    assert dealers.height >= 2 and {"above_theory", "sd"} <= set(dealers.columns)
    findings = conform(pl.DataFrame([_finding("t" * 16, "hold_table", table="NCB-04"),
                                     _finding("s" * 16, "hold_shoe", table="NCB-04")], infer_schema_length=None),
                       FINDINGS_SCHEMA)
    href = str(page.relative_to(out))
    where = hold_sources(out, findings, {"t" * 16: href, "s" * 16: href})
    assert set(where) == {"t" * 16} and where["t" * 16] == dealers_sentence(dealers, "USD", set())
    assert where["t" * 16].startswith("Under which dealers (the table's wagers in the window): most under D")


def test_a_tables_dealers_theory_adds_up_to_the_tables_own(audited_sample):
    """``dealers_with_theory`` splits the table's wagers by dealer: their theories add up to the table's row in the
    same page's tables.parquet, and so do their variances and their nets above theory."""
    out = audited_sample / "out"
    page = next((out / "investigations" / "table" / "NCB-04").glob("*/index.html")).parent
    dealers, table = pl.read_parquet(page / "dealers.parquet"), pl.read_parquet(page / "tables.parquet")
    assert table.height == 1 and dealers.height >= 2
    assert dealers["theory"].sum() == pytest.approx(table["theory"][0], rel=1e-12)
    assert (dealers["sd"] ** 2).sum() == pytest.approx(table["sd"][0] ** 2, rel=1e-12)
    assert dealers["above_theory"].sum() == pytest.approx(table["above_theory"][0], rel=1e-12)
    assert int(dealers["wagers"].sum()) == table["wagers"][0]
