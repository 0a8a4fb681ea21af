"""A subject's rounds, dealers and (a dealer's, a table's) players (``investigate.subject_rounds_of``,
``dealers_of_many``, ``played_with_many``) are summed in polars from the wagers already read. They equal the SQL they
replaced (kept here as the reference) for every kind of subject, with and without a range, and on a round whose totals
overflow BIGINT; and a player in two currencies with equal figures comes in the same order on every run."""

from __future__ import annotations

import datetime as dt

import duckdb
import polars as pl
from polars.testing import assert_frame_equal

from pipelines import investigate as q


def rounds_by_sql(con, subjects: list[q.Subject]) -> dict[q.Subject, pl.DataFrame]:
    """The former query: the subjects' wagers summed per round by DuckDB, the round's findings joined."""
    col, cond, params = q._group(subjects)
    days, days_params = q._days(subjects, "r")
    findings_days, findings_params = q._days(subjects, "f")
    return q._split(q._frame(con, f"""
        WITH w AS (SELECT {col} AS _subject, * FROM out_settlements w WHERE {cond.format(p="w.")}),
        per_round AS (
            SELECT _subject, gaming_day, table_id, round_no, any_value(game) AS game, any_value(dealer_id) AS dealer_id,
                   any_value(currency) AS currency, any_value(status) AS status, count(*) AS wagers,
                   CAST(sum(amount) AS DECIMAL(38,0)) AS wagered, CAST(sum(recorded_net) AS DECIMAL(38,0)) AS recorded_net,
                   CAST(sum(expected_net) AS DECIMAL(38,0)) AS expected_net,
                   CAST(sum(difference) AS DECIMAL(38,0)) AS difference,
                   count(*) FILTER (WHERE expected_net IS NULL) AS wagers_not_settleable
            FROM w GROUP BY _subject, gaming_day, table_id, round_no
        ),
        f AS (
            SELECT f.gaming_day, f.table_id, f.round_no, count(*) AS findings,
                   string_agg(DISTINCT f.kind, ', ' ORDER BY f.kind) AS finding_kinds
            FROM out_findings f SEMI JOIN per_round p USING (gaming_day, table_id, round_no) WHERE {findings_days}
            GROUP BY ALL
        )
        SELECT p._subject, p.gaming_day, r.bets_closed_at, p.table_id, p.round_no, p.game, p.dealer_id, p.currency, p.status,
               p.wagers, p.wagered, p.recorded_net, p.expected_net, p.difference, p.wagers_not_settleable,
               coalesce(f.findings, 0) AS findings, f.finding_kinds
        FROM per_round p
        LEFT JOIN f USING (gaming_day, table_id, round_no)
        LEFT JOIN core_rounds r ON r.table_id = p.table_id AND r.round_no = p.round_no AND r.gaming_day = p.gaming_day
                                   AND {days}
    """, params + findings_params + days_params).sort(*q.ROUNDS_ORDER, nulls_last=True, maintain_order=True), subjects)


def dealers_by_sql(con, subjects: list[q.Subject]) -> dict[q.Subject, pl.DataFrame]:
    """The former query (its order completed by the currency: a dealer in two currencies tied there)."""
    col, cond, params = q._group(subjects)
    return q._split(q._frame(con, f"""
        SELECT {col} AS _subject, coalesce(dealer_id, '(none recorded)') AS dealer_id, currency,
               count(DISTINCT (table_id, round_no, gaming_day)) FILTER (WHERE table_id IS NOT NULL AND round_no IS NOT NULL
                                                                      AND gaming_day IS NOT NULL) AS rounds,
               count(*) AS wagers,
               CAST(sum(amount) AS DECIMAL(38,0)) AS wagered, CAST(sum(recorded_net) AS DECIMAL(38,0)) AS recorded_net,
               CAST(sum(expected_net) AS DECIMAL(38,0)) AS expected_net,
               CAST(sum(greatest(difference, 0)) AS DECIMAL(38,0)) AS overpaid,
               CAST(sum(least(difference, 0)) AS DECIMAL(38,0)) AS underpaid,
               count(*) FILTER (WHERE difference <> 0) AS wrong_settlements
        FROM out_settlements WHERE {cond.format(p="")}
        GROUP BY ALL ORDER BY _subject, overpaid DESC, rounds DESC, dealer_id, currency
    """, params), subjects)


def played_with_by_sql(con, subjects: list[q.Subject]) -> dict[q.Subject, pl.DataFrame]:
    """The former query for a dealer or a table (its order completed by the currency)."""
    col, cond, params = q._group(subjects)
    return q._split(q._frame(con, f"""
        SELECT o.{col} AS _subject, {q._PLAYED_WITH.format(p="o.")}
        FROM out_settlements o WHERE {cond.format(p="o.")}
        GROUP BY ALL ORDER BY _subject, rounds_together DESC, overpaid DESC, player_id, currency
    """, params), subjects)


def _subjects(con) -> list[list[q.Subject]]:
    day = con.execute("SELECT max(gaming_day) FROM out_settlements").fetchall()[0][0]
    groups = []
    for kind, column in q.SUBJECT_COLUMNS.items():
        ids = [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM out_settlements WHERE {column} IS NOT NULL "
                                         f"ORDER BY 1 LIMIT 6").fetchall()]
        groups.append([q.Subject(kind, i) for i in ids])
        groups.append([q.Subject(kind, i, day, day) for i in ids])
        groups.append([q.Subject(kind, i, day + dt.timedelta(days=1), None) for i in ids])  # a range with no round
    groups.append([q.Subject("player", "no-such-player")])
    return groups


def _equal(con) -> int:
    rows = 0
    for group in _subjects(con):
        expected, got = rounds_by_sql(con, group), q.subject_rounds_of(con, group)
        assert list(got) == group
        for s in group:
            assert_frame_equal(got[s], expected[s])
            rows += got[s].height
            assert got[s].equals(q.subject_rounds(con, s))
        expected, got = dealers_by_sql(con, group), q.dealers_of_many(con, group, q.subject_wagers_of(con, group))
        assert list(got) == group
        for s in group:
            assert_frame_equal(got[s], expected[s])
            assert got[s].equals(q.dealers_of(con, s))
        if group[0].kind in q.ROUND_COLUMNS:
            expected, got = played_with_by_sql(con, group), q.played_with_many(con, group, q.subject_wagers_of(con, group))
            assert list(got) == group
            for s in group:
                assert_frame_equal(got[s], expected[s])
                assert got[s].equals(q.played_with(con, s))
    return rows


def test_the_rounds_summed_from_the_wagers_are_the_former_sql_for_every_kind_of_subject(audited_sample):
    con = duckdb.connect(str(audited_sample / "pitaudit.readonly.duckdb"), read_only=True)
    try:
        assert _equal(con) > 100
        # rounds with findings are among them, their kinds listed
        player = con.execute("SELECT player_id FROM out_findings WHERE player_id IS NOT NULL LIMIT 1").fetchall()[0][0]
        rounds = q.subject_rounds(con, q.Subject("player", player))
        assert rounds["findings"].sum() > 0 and rounds["finding_kinds"].drop_nulls().len() > 0
        # and a dealer with wrong settlements, the most overpaid first
        dealers = q.dealers_of(con, q.Subject("player", player))
        assert dealers["wrong_settlements"].sum() > 0 and dealers["overpaid"].is_sorted(descending=True)
    finally:
        con.close()


def _writable_copy(audited_sample, tmp_path) -> duckdb.DuckDBPyConnection:
    """A writable database holding the sample night's settlements, findings and rounds, to alter."""
    con = duckdb.connect(str(tmp_path / "copy.duckdb"))
    con.execute(f"ATTACH '{audited_sample / 'pitaudit.readonly.duckdb'}' AS src (READ_ONLY)")
    for table in ("out_settlements", "out_findings", "core_rounds"):
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM src.{table}")
    con.execute("DETACH src")
    return con


def test_a_rounds_totals_beyond_bigint_are_summed_exactly(audited_sample, tmp_path):
    """Two wagers of one round whose amounts sum past 2**63 - 1: Int128 totals, as DuckDB's DECIMAL(38,0) gave."""
    con = _writable_copy(audited_sample, tmp_path)
    try:
        table, round_no = con.execute("SELECT table_id, round_no FROM out_settlements GROUP BY ALL "
                                      "HAVING count(*) >= 2 ORDER BY ALL LIMIT 1").fetchall()[0]
        con.execute("UPDATE out_settlements SET amount = 9000000000000000000, recorded_net = -9000000000000000000 "
                    "WHERE table_id = ? AND round_no = ?", [table, round_no])
        rounds = q.subject_rounds(con, q.Subject("table", table))
        big = rounds.filter(pl.col("round_no") == round_no)
        n = big["wagers"].item()
        assert big["wagered"].item() == n * 9_000_000_000_000_000_000 > 2**63 - 1
        assert big["recorded_net"].item() == -n * 9_000_000_000_000_000_000
        assert q.dealers_of(con, q.Subject("table", table))["wagered"].max() >= n * 9_000_000_000_000_000_000
        assert _equal(con) > 100
    finally:
        con.close()


def test_round_keys_with_hostile_table_ids_and_extreme_round_numbers_find_their_findings(audited_sample, tmp_path):
    """The findings on a subject's rounds are matched by keys packed into one text parameter
    (``investigate._packed_round_keys``): table ids holding the packing's own separators, quotes, a backslash and
    letters beyond ASCII, and round numbers at both ends of BIGINT, give what the former SQL gives."""
    con = _writable_copy(audited_sample, tmp_path)
    try:
        hostile = "'T:1,2'' \\ é\n" + "'"
        for table in ("out_settlements", "out_findings", "core_rounds"):
            con.execute(f"UPDATE {table} SET table_id = ? || table_id WHERE table_id IS NOT NULL", [hostile])
        low, high = con.execute("SELECT min(round_no), max(round_no) FROM core_rounds").fetchall()[0]
        for table in ("out_settlements", "out_findings", "core_rounds"):  # the first round at -2^63, the last at 2^63 - 1
            con.execute(f"UPDATE {table} SET round_no = CASE round_no WHEN ? THEN -9223372036854775808 "
                        f"WHEN ? THEN 9223372036854775807 ELSE round_no END", [low, high])
        assert con.execute("SELECT count(*) FROM out_findings WHERE table_id LIKE '%:1,2%' AND round_no IS NOT NULL"
                           ).fetchall()[0][0] > 0
        assert _equal(con) > 100
        tables = [r[0] for r in con.execute("SELECT DISTINCT table_id FROM out_findings WHERE round_no IS NOT NULL "
                                            "ORDER BY 1").fetchall()]
        group = [q.Subject("table", t) for t in tables]
        rounds, expected = q.subject_rounds_of(con, group), rounds_by_sql(con, group)
        for s in group:
            assert_frame_equal(rounds[s], expected[s])
        assert sum(r["findings"].sum() for r in rounds.values()) > 0
        extreme = pl.concat(rounds.values()).filter(pl.col("round_no").is_in([-2**63, 2**63 - 1]))
        assert extreme.height == 2
    finally:
        con.close()


def test_a_player_in_two_currencies_with_equal_figures_is_listed_in_currency_order_every_time(tmp_path):
    """Found comparing two runs over 30 nights: a player who played with the subject in USD and in AUD, the same rounds
    together and the same overpaid, came out in either order (the sort stopped at the player). The currency now ends
    every such order, so a page is the same bytes on every run. The USD rows are stored first."""
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    try:
        con.execute("""CREATE TABLE out_settlements AS SELECT * FROM (VALUES
            (DATE '2026-11-01', 'T1', 1, 'P-1', 'D-1', 'USD', 100, 0),
            (DATE '2026-11-01', 'T1', 1, 'P-2', 'D-1', 'USD', 100, 0),
            (DATE '2026-11-01', 'T2', 1, 'P-1', 'D-1', 'AUD', 100, 0),
            (DATE '2026-11-01', 'T2', 1, 'P-2', 'D-1', 'AUD', 100, 0))
            t(gaming_day, table_id, round_no, player_id, dealer_id, currency, amount, difference)""")
        for column, kind in (("recorded_net", "BIGINT DEFAULT 0"), ("expected_net", "BIGINT DEFAULT 0"),
                             ("wager_id", "VARCHAR"), ("wager_order", "INTEGER DEFAULT 1"), ("seat", "INTEGER"),
                             ("game", "VARCHAR DEFAULT 'baccarat'"), ("ruleset", "VARCHAR"), ("ruleset_version", "VARCHAR"),
                             ("status", "VARCHAR DEFAULT 'settled'"), ("bet", "VARCHAR DEFAULT 'player'"),
                             ("settled_amount", "BIGINT"), ("clause", "VARCHAR"), ("unsettled_reason", "VARCHAR")):
            con.execute(f"ALTER TABLE out_settlements ADD COLUMN {column} {kind}")
        con.execute("""CREATE TABLE core_rounds AS SELECT DISTINCT gaming_day, table_id, round_no,
                       TIMESTAMPTZ '2026-11-01 20:00:00+00' AS bets_closed_at, TIMESTAMPTZ '2026-11-01 20:01:00+00' AS settled_at,
                       'S-1' AS shoe_id FROM out_settlements""")
        for _ in range(5):
            others = q.played_with(con, q.Subject("player", "P-1"))
            assert others.select("player_id", "currency").rows() == [("P-2", "AUD"), ("P-2", "USD")]
            table = q.played_with(con, q.Subject("dealer", "D-1"))
            assert table.select("player_id", "currency").rows() == [("P-1", "AUD"), ("P-1", "USD"), ("P-2", "AUD"),
                                                                     ("P-2", "USD")]
            paid = q.dealer_overpayments(con, "D-1")
            assert paid.select("player_id", "currency").rows() == [("P-1", "AUD"), ("P-1", "USD"), ("P-2", "AUD"),
                                                                   ("P-2", "USD")]
    finally:
        con.close()
