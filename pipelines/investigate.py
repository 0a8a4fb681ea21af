"""Questions surveillance investigators ask across days: one player, one dealer, one table.

Plain SQL over the audit's published tables (``out_settlements``, ``out_findings``), on a
read-only connection to the snapshot (``pipelines.db.open_snapshot``), so an investigation never
holds up the nightly run. Each function returns a polars frame the notebooks chart; money stays
in integer smallest units (per currency); only ratios such as hold are floats.
"""

from __future__ import annotations

import duckdb
import polars as pl


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())


def player_by_day(con: duckdb.DuckDBPyConnection, player_id: str) -> pl.DataFrame:
    """Per gaming day and currency: rounds, wagers, amount wagered, recorded and expected net, overpayment."""
    return _frame(
        con,
        """
        SELECT gaming_day, currency,
               count(DISTINCT table_id || '#' || round_no) AS rounds,
               count(*) AS wagers,
               sum(amount) AS wagered,
               sum(recorded_net) AS recorded_net,
               sum(expected_net) AS expected_net,
               sum(greatest(difference, 0)) AS overpaid,
               sum(CASE WHEN expected_net IS NULL THEN 1 ELSE 0 END) AS wagers_not_settleable
        FROM out_settlements WHERE player_id = ?
        GROUP BY ALL ORDER BY gaming_day, currency
        """,
        [player_id],
    )


def dealer_overpayments(con: duckdb.DuckDBPyConnection, dealer_id: str) -> pl.DataFrame:
    """Who this dealer overpaid, and how often: the first lead in a dealer-player collusion review."""
    return _frame(
        con,
        """
        SELECT coalesce(player_id, '(unrated)') AS player_id, currency,
               count(*) AS wagers,
               sum(CASE WHEN difference > 0 THEN 1 ELSE 0 END) AS overpaid_wagers,
               sum(greatest(difference, 0)) AS overpaid,
               sum(least(difference, 0)) AS underpaid
        FROM out_settlements WHERE dealer_id = ?
        GROUP BY ALL ORDER BY overpaid DESC, player_id
        """,
        [dealer_id],
    )


def table_hold_by_day(con: duckdb.DuckDBPyConnection, table_id: str) -> pl.DataFrame:
    """Per gaming day: drop (amount wagered), the house's win as recorded and as the rules say, and hold %."""
    return _frame(
        con,
        """
        SELECT gaming_day, currency, count(*) AS wagers, sum(amount) AS wagered,
               -sum(recorded_net) AS house_win_recorded,
               -sum(expected_net) AS house_win_expected,
               -sum(recorded_net) / nullif(sum(amount), 0) AS hold_recorded,
               -sum(expected_net) / nullif(sum(amount), 0) AS hold_expected
        FROM out_settlements WHERE table_id = ? AND status = 'settled'
        GROUP BY ALL ORDER BY gaming_day, currency
        """,
        [table_id],
    )


def findings_about(
    con: duckdb.DuckDBPyConnection,
    *,
    player_id: str | None = None,
    dealer_id: str | None = None,
    table_id: str | None = None,
) -> pl.DataFrame:
    """Every finding that names the subject, money findings first."""
    if not any((player_id, dealer_id, table_id)):
        raise ValueError("name a player, a dealer or a table")
    return _frame(
        con,
        """
        SELECT gaming_day, kind, severity, table_id, round_no, wager_id, player_id, dealer_id,
               expected_net, recorded_net, difference, rule_ref, detail, source_file, source_line
        FROM out_findings
        WHERE (? IS NULL OR player_id = ?) AND (? IS NULL OR dealer_id = ?) AND (? IS NULL OR table_id = ?)
        ORDER BY abs(coalesce(difference, 0)) DESC, gaming_day, table_id, round_no, finding_id
        """,
        [player_id, player_id, dealer_id, dealer_id, table_id, table_id],
    )
