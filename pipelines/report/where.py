"""Where a hold finding came from, said beside it in the report: a dealer's at which tables, a table's under which
dealers.

Why: a dealer is tested for his hold against theory, not against the tables he dealt at. When one table drifts (a
stacked shoe, a big bettor on the side that wins), every dealer who worked there for long enough is flagged too: on
night 31 of the simulator's thirty nights, 13 of the 29 flagged subjects were dealers whose shortfall sat at table
BAC-08, itself flagged. Each dealer's page has the breakdown ("At which tables", ``tables.parquet``), but the nightly
reader sees the report's list first, thirteen lines that look like thirteen matters. The mirror question comes with
a table's finding: one dealer (his dealing is the matter), or every dealer alike (the shoe, or a player)? This puts
each page's first answer on the line: where most of it lies, how far from theory it is there, whether that table or
dealer has hold findings of its own tonight, and how far the others are together.

The figures are the page's own (its ``tables.parquet`` or ``dealers.parquet``, written before the report), so the
report and the page agree; a page that could not be written adds nothing (the report lists it among the pages not
written).
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from pipelines.currency import format_money
from pipelines.report.linked import detail_document

#: the tests whose subject is a dealer's hold (not his error rate: the tables' money says nothing of that)
DEALER_HOLD_TESTS = frozenset({"hold_dealer"})
#: the tests that flag a table's hold itself, or one of its shoes'
TABLE_HOLD_TESTS = frozenset({"hold_table", "hold_shoe"})
#: the tests whose subject is a table's hold (a shoe's finding links to its table's page too, but the table's dealers
#: over the window are not the shoe's)
TABLE_TESTS = frozenset({"hold_table"})


def _hold_tests(findings: pl.DataFrame) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
    """(finding_id, table, dealer, currency, test) of every hold finding without a player, each detail read once."""
    if findings.height == 0 or "detail" not in findings.columns:
        return []
    rows = findings.filter((pl.col("kind") == "hold_anomaly") & pl.col("player_id").is_null())
    return [(fid, table, dealer, currency, detail_document(detail).get("test"))
            for fid, table, dealer, currency, detail
            in rows.select("finding_id", "table_id", "dealer_id", "currency", "detail").iter_rows()]


def _tables_flagged(tests) -> set[str]:
    return {table for _, table, dealer, _, test in tests if table and dealer is None and test in TABLE_HOLD_TESTS}


def _dealers_flagged(tests) -> set[str]:
    return {dealer for _, _, dealer, _, test in tests if dealer is not None and test in DEALER_HOLD_TESTS}


def tables_with_hold_findings(findings: pl.DataFrame) -> set[str]:
    """The tables that have a hold finding of their own (the table's, or one of its shoes') among ``findings``."""
    return _tables_flagged(_hold_tests(findings))


def dealers_with_hold_findings(findings: pl.DataFrame) -> set[str]:
    """The dealers that have a hold finding of their own (not their error rate's) among ``findings``."""
    return _dealers_flagged(_hold_tests(findings))


def where_sentence(tables: pl.DataFrame, currency: str | None, flagged: set[str]) -> str | None:
    """One sentence from a dealer's ``tables`` (``pipelines.investigation.analysis.BY_TABLE_SCHEMA``) in ``currency``:
    the table that carries most of his departure from theory, in money and standard deviations, and his other tables
    together (their departures added, over the root of their variances added). None when there is nothing to say."""
    return _sentence(tables, "table_id", currency, flagged, "At which tables (his wagers in the window): most at",
                     "the table has hold findings of its own tonight", "his {n} other table{s} together")


def dealers_sentence(dealers: pl.DataFrame, currency: str | None, flagged: set[str]) -> str | None:
    """The same from a table's ``dealers`` (``pipelines.investigation.analysis.dealers_with_theory``): the dealer under
    whom most of the table's departure lies, and the table's other dealers together."""
    return _sentence(dealers, "dealer_id", currency, flagged,
                     "Under which dealers (the table's wagers in the window): most under",
                     "the dealer has hold findings of their own tonight", "the {n} other dealer{s} together")


def _sentence(rows: pl.DataFrame, key: str, currency: str | None, flagged: set[str], lead: str, own_findings: str,
              others: str) -> str | None:
    if "above_theory" not in rows.columns or "sd" not in rows.columns:
        return None
    rows = rows.filter(pl.col("currency") == currency) if currency is not None else rows
    rows = rows.filter(pl.col("above_theory").is_not_null() & pl.col("sd").is_not_null())
    if rows.height == 0:
        return None
    above = rows["above_theory"].to_list()
    direction = 1.0 if math.fsum(above) >= 0 else -1.0
    top = max(range(rows.height), key=lambda k: (direction * above[k], rows[key][k]))
    name, sd, away = rows[key][top], rows["sd"][top], above[top]
    z = f"{away / sd:+.1f} s.d." if sd > 0 else "no variance"
    own = f"; {own_findings}" if name in flagged else ""
    said = f"{lead} {name}, players' net {format_money(round(away), currency, signed=True)} against theory ({z}{own})"
    rest = [k for k in range(rows.height) if k != top]
    if rest:
        var = math.fsum(rows["sd"][k] ** 2 for k in rest)
        together = f"{math.fsum(above[k] for k in rest) / math.sqrt(var):+.1f} s.d." if var > 0 else "no variance"
        said += "; " + others.format(n=len(rest), s="s" if len(rest) != 1 else "") + " " + together
    return said if said.endswith(".") else said + "."


def hold_sources(folder: Path, findings: pl.DataFrame, investigations: dict[str, str] | None) -> dict[str, str]:
    """finding_id -> :func:`where_sentence` for every dealer hold finding, :func:`dealers_sentence` for every table
    hold finding, whose page was written into ``folder``."""
    if not investigations:
        return {}
    tests = _hold_tests(findings)
    tables_flagged, dealers_flagged = _tables_flagged(tests), _dealers_flagged(tests)
    out: dict[str, str] = {}
    read: dict[Path, pl.DataFrame | None] = {}
    for fid, _, dealer, currency, test in tests:
        href = investigations.get(fid)
        if href is None or test not in (DEALER_HOLD_TESTS if dealer is not None else TABLE_TESTS):
            continue
        path = (folder / href).parent / ("tables.parquet" if dealer is not None else "dealers.parquet")
        if path not in read:
            try:
                read[path] = pl.read_parquet(path)
            except (OSError, pl.exceptions.PolarsError):
                read[path] = None  # a page not written: the report says so among its pages
        if read[path] is not None:
            said = (where_sentence(read[path], currency, tables_flagged) if dealer is not None
                    else dealers_sentence(read[path], currency, dealers_flagged))
            if said:
                out[fid] = said
    return out
