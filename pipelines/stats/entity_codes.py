"""The entities' ids and the labels of a chunk as small integers while it is summarised, strings back at the end.

Every summary of a chunk (``summaries.summarise_chunk``) groups, joins, ranks or sorts its wagers and card events by
tables, players, dealers and shoes: ids read as strings (a night's 4,500,000 wagers, tens of thousands of distinct
players). Hashing and comparing those strings again in each of some forty group-bys was most of the summaries' time.
``coded`` turns the four id columns of every frame of the chunk into one ``pl.Enum`` whose categories are the chunk's
ids in sorted order: polars groups and joins an Enum by its 32-bit physical code, and sorts, ranks, compares and takes
the least or greatest of it by the categories' order, which is the strings' own order. So every group, every order
and every first row is the one the strings gave. One Enum for the four columns (a hold entity's ``key`` is a table, a
dealer or a shoe in one column; polars does not mix two Enums). The labels the summaries group by with them (the
currency, game, rule set and version, bet, status: a few values each, but hashed as strings in every multi-key group-by)
are a second sorted Enum, which also holds the labels the summaries make themselves (``MADE_LABELS``: a hold entity's
"all" bets level, luck's "side_bets", the Hold'em "main" game): such a literal is made in its column's type
(``like``), and a small table joined to the wagers (a bet's payout) is cast to theirs (``typed_as``).
``decoded`` casts the Enum columns, and lists of them, back to strings, for the summaries a chunk hands on (a summary
row is far fewer than the wagers behind it).
"""

from __future__ import annotations

import polars as pl

from pipelines.stats.load import StatsInputs

#: the entities' id columns coded while a chunk is summarised
ID_COLUMNS = ("table_id", "player_id", "dealer_id", "shoe_id")
#: the labels coded while a chunk is summarised (a second Enum)
LABEL_COLUMNS = ("currency", "game", "ruleset", "ruleset_version", "bet", "status")
#: labels the summaries write into those columns themselves
MADE_LABELS = ("all", "main", "side_bets")


def sorted_enum(frames: list[pl.DataFrame], columns: tuple[str, ...], extra: tuple[str, ...] = ()) -> pl.Enum:
    """One Enum over every value of ``frames``' ``columns`` (and ``extra``), its categories in the strings' sorted
    order."""
    values = [df[c].drop_nulls().unique() for df in frames for c in columns if c in df.columns]
    values = [v for v in values if v.dtype == pl.String] + [pl.Series(list(extra), dtype=pl.String)]
    return pl.Enum(pl.concat(values).unique().sort())


def _coded_frame(df: pl.DataFrame, enums: list[tuple[tuple[str, ...], pl.Enum]]) -> pl.DataFrame:
    cols = [pl.col(c).cast(enum) for columns, enum in enums for c in columns
            if c in df.columns and df.schema[c] == pl.String]
    return df.with_columns(cols) if cols else df


def coded(inputs: StatsInputs) -> StatsInputs:
    """``inputs`` with the id columns of its wagers, dealer errors and cards as one sorted ``pl.Enum``, and its
    wagers' labels as another."""
    frames = [inputs.wagers, inputs.dealer_errors, inputs.cards]
    ids = sorted_enum(frames, ID_COLUMNS)
    labels = sorted_enum([inputs.wagers], LABEL_COLUMNS, MADE_LABELS)
    wagers = _coded_frame(inputs.wagers, [(ID_COLUMNS, ids), (LABEL_COLUMNS, labels)])
    return StatsInputs(wagers, _coded_frame(inputs.dealer_errors, [(ID_COLUMNS, ids)]),
                       _coded_frame(inputs.cards, [(ID_COLUMNS, ids)]), inputs.first_day, inputs.last_day)


def like(value: str, df: pl.DataFrame, column: str) -> pl.Expr:
    """The literal ``value`` in the type of ``df``'s ``column`` (a string, or a coded label: ``MADE_LABELS``)."""
    return pl.lit(value).cast(df.schema[column])


def typed_as(table: pl.DataFrame, wagers: pl.DataFrame) -> pl.DataFrame:
    """``table``'s columns in the types the same columns have in ``wagers`` (a payout table built from strings, joined
    to coded wagers; its labels are the wagers' own)."""
    casts = [pl.col(c).cast(wagers.schema[c]) for c in table.columns
             if c in wagers.columns and table.schema[c] != wagers.schema[c]]
    return table.with_columns(casts) if casts else table


def _string_type(t: pl.DataType) -> pl.DataType | None:
    """The type of ``t`` with its Enum as strings (None when it holds no Enum)."""
    if isinstance(t, pl.Enum):
        return pl.String
    if isinstance(t, pl.List):
        inner = _string_type(t.inner)
        return None if inner is None else pl.List(inner)
    return None


def decoded(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with every Enum column (and list of Enums) as strings; itself when it has none."""
    casts = [pl.col(c).cast(s) for c, t in df.schema.items() if (s := _string_type(t)) is not None]
    return df.with_columns(casts) if casts else df
