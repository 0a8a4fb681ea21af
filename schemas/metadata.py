"""The vocabulary of the data contracts: a column, a check on it, a table.

Every column the pipeline reads or writes is described once, as a :class:`Field` (name, logical
type, meaning, whether it may be null, its checks). From these records ``schemas.pandera_models``
builds the pandera (polars) models and ``schemas.ddl`` the DuckDB DDL, so the documentation, the
validation and the database cannot drift apart (the pudl way: metadata first, code generated).

A :class:`Rule` is declarative data (a kind, an argument, the quarantine reason code it raises);
what each kind means as a polars expression or a SQL CHECK lives in ``schemas.rules``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Logical types -> (DuckDB type, polars dtype name). Money is always BIGINT, never a float.
LOGICAL_TYPES: dict[str, tuple[str, str]] = {
    "text": ("VARCHAR", "String"),
    "bigint": ("BIGINT", "Int64"),
    "integer": ("INTEGER", "Int32"),
    "smallint": ("SMALLINT", "Int16"),
    "boolean": ("BOOLEAN", "Boolean"),
    "timestamptz": ("TIMESTAMPTZ", "Datetime[us, UTC]"),
    "date": ("DATE", "Date"),
    "text[]": ("VARCHAR[]", "List[String]"),
    "json": ("JSON", "String"),
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One check on a column (or, with ``columns``, on a row across columns).

    ``kind`` names an implementation in ``schemas.rules``; ``arg`` is its parameter (a set of
    allowed values, a bound, another column's name); ``code`` is the quarantine reason code a
    failure of this rule produces (``schemas.reasons``).
    """

    kind: str
    code: str
    arg: Any = None


@dataclass(frozen=True, slots=True)
class Field:
    """One column: its name, logical type, meaning and checks.

    ``required`` means "must not be null" (for an input: the field must be present and not null).
    """

    name: str
    type: str
    description: str
    required: bool = False
    rules: tuple[Rule, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in LOGICAL_TYPES:
            raise ValueError(f"column {self.name}: unknown logical type {self.type!r}")

    @property
    def duckdb_type(self) -> str:
        return LOGICAL_TYPES[self.type][0]


@dataclass(frozen=True, slots=True)
class RowRule:
    """A check across the columns of one row (e.g. the bet must exist in the round's game)."""

    name: str
    kind: str
    code: str
    columns: tuple[str, ...]
    arg: Any = None


@dataclass(frozen=True, slots=True)
class Table:
    """A canonical table (``core_*``) or an input as read (``input_*``)."""

    name: str
    description: str
    fields: tuple[Field, ...]
    primary_key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    row_rules: tuple[RowRule, ...] = field(default=())

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: a column is defined twice")
        for key in (self.primary_key, *self.unique):
            missing = set(key) - set(names)
            if missing:
                raise ValueError(f"table {self.name}: key names unknown columns {sorted(missing)}")

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"table {self.name} has no column {name!r}")
