"""At which tables a dealer's hold finding came from, said beside it in the report.

Why: a dealer is tested for his hold against theory, not against the tables he dealt at. When one table drifts (a
stacked shoe, a big bettor on the side that wins), every dealer who worked there for long enough is flagged too: on
night 31 of the simulator's thirty nights, 13 of the 29 flagged subjects were dealers whose shortfall sat at table
BAC-08, itself flagged. Each dealer's page has the breakdown ("At which tables", ``tables.parquet``), but the nightly
reader sees the report's list first, thirteen lines that look like thirteen matters. This puts the page's first
answer on the line: the table where most of it lies, how far it is from theory there, whether that table has hold
findings of its own tonight, and how far his other tables are together.

The figures are the page's own (its ``tables.parquet``, written before the report), so the report and the page
agree; a page that could not be written adds nothing (the report lists it among the pages not written).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl

from pipelines.currency import format_money

#: the tests whose subject is a dealer's hold (not his error rate: the tables' money says nothing of that)
DEALER_HOLD_TESTS = frozenset({"hold_dealer"})
#: the tests that flag a table's hold itself, or one of its shoes'
TABLE_HOLD_TESTS = frozenset({"hold_table", "hold_shoe"})


def _test_of(detail: str | None) -> str | None:
    start = (detail or "").find('{"sentence"')
    if start < 0:
        return None
    try:
        return json.loads(detail[start:]).get("test")
    except (ValueError, AttributeError):
        return None


def tables_with_hold_findings(findings: pl.DataFrame) -> set[str]:
    """The tables that have a hold finding of their own (the table's, or one of its shoes') among ``findings``."""
    if findings.height == 0 or "detail" not in findings.columns:
        return set()
    rows = findings.filter((pl.col("kind") == "hold_anomaly") & pl.col("table_id").is_not_null()
                           & pl.col("dealer_id").is_null() & pl.col("player_id").is_null())
    return {t for t, d in rows.select("table_id", "detail").iter_rows() if _test_of(d) in TABLE_HOLD_TESTS}


def where_sentence(tables: pl.DataFrame, currency: str | None, flagged: set[str]) -> str | None:
    """One sentence from a dealer's ``tables`` (``pipelines.investigation.analysis.BY_TABLE_SCHEMA``) in ``currency``:
    the table that carries most of his departure from theory, in money and standard deviations, and his other tables
    together (their departures added, over the root of their variances added). None when there is nothing to say."""
    rows = tables.filter(pl.col("currency") == currency) if currency is not None else tables
    rows = rows.filter(pl.col("above_theory").is_not_null() & pl.col("sd").is_not_null())
    if rows.height == 0:
        return None
    above = rows["above_theory"].to_list()
    direction = 1.0 if math.fsum(above) >= 0 else -1.0
    top = max(range(rows.height), key=lambda k: (direction * above[k], rows["table_id"][k]))
    table, sd, away = rows["table_id"][top], rows["sd"][top], above[top]
    z = f"{away / sd:+.1f} s.d." if sd > 0 else "no variance"
    own = "; the table has hold findings of its own tonight" if table in flagged else ""
    said = (f"At which tables (his wagers in the window): most at {table}, players' net "
            f"{format_money(round(away), currency, signed=True)} against theory ({z}{own})")
    others = [k for k in range(rows.height) if k != top]
    if others:
        var = math.fsum(rows["sd"][k] ** 2 for k in others)
        rest = math.fsum(above[k] for k in others)
        n = len(others)
        together = f"{rest / math.sqrt(var):+.1f} s.d." if var > 0 else "no variance"
        said += f"; his {n} other table{'s' if n != 1 else ''} together {together}"
    return said if said.endswith(".") else said + "."


def dealer_hold_tables(folder: Path, findings: pl.DataFrame, investigations: dict[str, str] | None) -> dict[str, str]:
    """finding_id -> :func:`where_sentence` for every dealer hold finding whose page was written into ``folder``."""
    if not investigations or findings.height == 0 or "dealer_id" not in findings.columns:
        return {}
    flagged = tables_with_hold_findings(findings)
    dealer = findings.filter((pl.col("kind") == "hold_anomaly") & pl.col("dealer_id").is_not_null()
                             & pl.col("player_id").is_null())
    out: dict[str, str] = {}
    read: dict[Path, pl.DataFrame | None] = {}
    for fid, currency, detail in dealer.select("finding_id", "currency", "detail").iter_rows():
        href = investigations.get(fid)
        if href is None or _test_of(detail) not in DEALER_HOLD_TESTS:
            continue
        path = (folder / href).parent / "tables.parquet"
        if path not in read:
            try:
                read[path] = pl.read_parquet(path)
            except (OSError, pl.exceptions.PolarsError):
                read[path] = None  # a page not written: the report says so among its pages
        if read[path] is not None:
            said = where_sentence(read[path], currency, flagged)
            if said:
                out[fid] = said
    return out
