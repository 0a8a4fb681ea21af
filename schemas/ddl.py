"""DuckDB DDL generated from the column metadata: CREATE TABLE, CHECK constraints, comments.

Only checks whose vocabulary is the formats contract's own become SQL CHECK constraints; checks
against the rule-set catalogue (which grows) stay in the pandera models, so an existing database
never rejects a rule set added later.

A database written by an earlier schema version gets the nullable columns added since
(``ALTER TABLE ... ADD COLUMN IF NOT EXISTS``, e.g. ``core_wagers.hand`` in version 2): one database
holds every night, so a new column must not stop the next night from loading. Such a column has no
CHECK constraint there (the pandera models still check every row the ingest writes).
"""

from __future__ import annotations

from schemas.metadata import Field, Table
from schemas.tables import CANONICAL_TABLES

# 2: core_wagers.hand (a blackjack Pair wager placed when splitting)
# 3: files known by content (core_source_files one row per read, grown files); core_source_changes replaces the
#    conflicting-duplicate flags
# 4: the statistical detectors' per-gaming-day summaries (stat_days, stat_day_*)
# 5: the Hold'em Bonus and blackjack bets' summaries (stat_day_games_*)
# 6: mid-shoe entry's summary (stat_day_entries)
# 7: the baccarat hold's rows by entity number (stat_day_hold.eid) and a round's all-bets row once (stat_day_hold_rounds)
SCHEMA_VERSION = 7


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_checks(f: Field) -> list[str]:
    """SQL CHECK expressions for a column (nulls pass, as in SQL)."""
    out: list[str] = []
    for r in f.rules:
        if r.kind == "isin":
            out.append(f"{f.name} IN ({', '.join(_quote(v) for v in r.arg)})")
        elif r.kind == "ge":
            out.append(f"{f.name} >= {int(r.arg)}")
        elif r.kind == "between":
            lo, hi = r.arg
            out.append(f"{f.name} BETWEEN {int(lo)} AND {int(hi)}")
        elif r.kind == "nonempty":
            out.append(f"length({f.name}) > 0")
    return out


def create_table_sql(t: Table) -> str:
    lines = []
    for f in t.fields:
        col = f"    {f.name} {f.duckdb_type}"
        if f.required:
            col += " NOT NULL"
        for expr in sql_checks(f):
            col += f" CHECK ({expr})"
        lines.append(col)
    if t.primary_key:
        lines.append(f"    PRIMARY KEY ({', '.join(t.primary_key)})")
    for key in t.unique:
        lines.append(f"    UNIQUE ({', '.join(key)})")
    return f"CREATE TABLE IF NOT EXISTS {t.name} (\n" + ",\n".join(lines) + "\n);"


def add_columns_sql(t: Table) -> list[str]:
    """Every nullable column, added to a table an earlier schema version created without it (a no-op otherwise)."""
    return [f"ALTER TABLE {t.name} ADD COLUMN IF NOT EXISTS {f.name} {f.duckdb_type};" for f in t.fields if not f.required]


def comment_sql(t: Table) -> list[str]:
    out = [f"COMMENT ON TABLE {t.name} IS {_quote(t.description)};"]
    out += [f"COMMENT ON COLUMN {t.name}.{f.name} IS {_quote(f.description)};" for f in t.fields]
    return out


def all_ddl(tables: tuple[Table, ...] = CANONICAL_TABLES) -> list[str]:
    """Every statement that creates the canonical tables (idempotent: IF NOT EXISTS)."""
    stmts = [
        "CREATE TABLE IF NOT EXISTS meta_schema (name VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);",
    ]
    for t in tables:
        stmts.append(create_table_sql(t))
        stmts += add_columns_sql(t)
        stmts += comment_sql(t)
    from schemas.derived import derived_ddl

    stmts += derived_ddl()  # schema 4: the statistical detectors' per-day summaries
    stmts.append(
        f"INSERT INTO meta_schema VALUES ('schema_version', '{SCHEMA_VERSION}') "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value;"
    )
    return stmts


def upgrade_sql(version: int) -> list[str]:
    """What turns the tables of an earlier schema ``version`` into this one's, before :func:`all_ddl` runs.

    Version 3 keeps one core_source_files row per read of a file (no longer one per name: the next night's file
    may reuse the name), with where the read started and the prefix it covered: the table is rebuilt without
    its primary key, each earlier row a read from the start of its file (its prefix unknown: a file loaded
    before the upgrade that grows is read again whole, its repeated lines identical duplicates). The
    conflicting-duplicate flags of versions 1 and 2 are left as they were (nothing writes them any more).

    Version 4 adds the statistical detectors' per-gaming-day summaries (``schemas.derived``): :func:`all_ddl`
    creates them empty; they are derived, and a window summarises the days it finds missing.

    Version 5 adds the Hold'em Bonus and blackjack bets' summaries (``stat_day_games_*``), created empty the same
    way; the summaries' format changed with them, so the days summarised before are summarised again when read.

    Version 6 adds mid-shoe entry's summary (``stat_day_entries``), created empty; the summaries' format is 3, so the
    days summarised before are summarised again when a window reads them.

    Version 7 stores the baccarat hold's rows by entity number and a round's all-bets row once
    (``schemas.derived.derived_upgrade_sql``): a schema-6 file's summaries are kept, renumbered.
    """
    from schemas.derived import derived_upgrade_sql

    if version >= 3:
        return derived_upgrade_sql(version)
    from schemas.tables import CORE_SOURCE_FILES

    return [
        "ALTER TABLE core_source_files RENAME TO core_source_files_v2;",
        create_table_sql(CORE_SOURCE_FILES),
        """INSERT INTO core_source_files (source_file, kind, sha256, size_bytes, first_line, start_byte, lines_read,
               rows_accepted, rows_quarantined, rows_duplicate, ingested_at, status, error, input_root)
           SELECT source_file, kind, sha256, size_bytes, 1, 0, lines_read, rows_accepted, rows_quarantined,
                  rows_duplicate, ingested_at, status, error, input_root FROM core_source_files_v2;""",
        "DROP TABLE core_source_files_v2;",
    ] + derived_upgrade_sql(version)


def ddl_text() -> str:
    """The whole DDL as one script (docs, and `python -m schemas.ddl`)."""
    return "\n\n".join(all_ddl()) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(ddl_text())
