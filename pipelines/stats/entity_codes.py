"""The entities' ids of a chunk as small integers while it is summarised, their strings back at the end.

Every summary of a chunk (``summaries.summarise_chunk``) groups, joins, ranks or sorts its wagers and card events by
tables, players, dealers and shoes: ids read as strings (a night's 4,500,000 wagers, tens of thousands of distinct
players). Hashing and comparing those strings again in each of some forty group-bys was most of the summaries' time.
``coded`` turns the four id columns of every frame of the chunk into one ``pl.Enum`` whose categories are the chunk's
ids in sorted order: polars groups and joins an Enum by its 32-bit physical code, and sorts, ranks, compares and takes
the least or greatest of it by the categories' order, which is the strings' own order. So every group, every order
and every first row is the one the strings gave. One Enum for the four columns (a hold entity's ``key`` is a table, a
dealer or a shoe in one column; polars does not mix two Enums). ``decoded`` casts the Enum columns, and lists of
them, back to strings, for the summaries a chunk hands on (a summary row is far fewer than the wagers behind it).
"""

from __future__ import annotations

import polars as pl

from pipelines.stats.load import StatsInputs

#: the entities' id columns coded while a chunk is summarised
ID_COLUMNS = ("table_id", "player_id", "dealer_id", "shoe_id")


def id_enum(frames: list[pl.DataFrame]) -> pl.Enum:
    """One Enum over every id of ``frames``' id columns, its categories in the strings' sorted order."""
    values = [df[c].drop_nulls().unique() for df in frames for c in ID_COLUMNS if c in df.columns]
    values = [v for v in values if v.dtype == pl.String]
    if not values:
        return pl.Enum([])
    return pl.Enum(pl.concat(values).unique().sort())


def _coded_frame(df: pl.DataFrame, enum: pl.Enum) -> pl.DataFrame:
    cols = [pl.col(c).cast(enum) for c in ID_COLUMNS if c in df.columns and df.schema[c] == pl.String]
    return df.with_columns(cols) if cols else df


def coded(inputs: StatsInputs) -> StatsInputs:
    """``inputs`` with the id columns of its wagers, dealer errors and cards as one sorted ``pl.Enum``."""
    frames = [inputs.wagers, inputs.dealer_errors, inputs.cards]
    enum = id_enum(frames)
    return StatsInputs(*(_coded_frame(df, enum) for df in frames), inputs.first_day, inputs.last_day)


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
