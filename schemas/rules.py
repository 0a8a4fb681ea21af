"""What each rule kind means, as a vectorised polars expression that is true where a row passes.

Every expression lets nulls pass (whether a column may be null is the model's ``nullable``), so a
missing field is reported once, as missing, and not again as "wrong type".

The text kinds (``int_text``, ``ts_text`` ...) check inputs as read (all text); the others check
typed canonical columns. ``parse_timestamp`` and ``json_kind`` are shared with the loader, so the
check and the conversion it guards are the same code.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable

import polars as pl

from schemas.metadata import Rule, RowRule
from schemas.vocabulary import Vocabulary

INT_TEXT = r"^-?[0-9]+$"
# an ISO 4217 code: three capital letters. ``usd`` beside ``USD`` was a second currency in every sum and test, shown
# in USD's decimals; a name (``US Dollar``) or a long text ran off the report's page
CURRENCY_CODE = r"^[A-Z]{3}$"
# characters an identifier never holds on purpose and a person cannot see (or that move the text around them): C0
# and C1 controls, DEL, the bidi marks, embeddings, overrides and isolates, zero-width spaces and joiners, the word
# joiner and the BOM. Two ids that differ only by one look the same in every report.
CONTROL_TEXT = "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
# a date-time with no offset at all (the one mistake the quarantine names specifically)
NAIVE_TS = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?$"
_TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.f%#z"  # %#z: Z, +07:00, +0700 and +07


# what the format alone lets through and the contract refuses: a year not of four digits (``+10000``), a leap second
# (``23:59:60``: polars reads it as the next second, a silent change; a UTC instant in microseconds cannot hold it)
TS_TEXT = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9]"
# an offset the format reads (up to 23:59) beyond the 18 hours the canonical tables hold (utc_offset_minutes): -23:59
# was read, then refused by the contract's safety net (contract_violation) instead of being "not a timestamp"
FAR_OFFSET = r"[+-](18:?(0[1-9]|[1-5][0-9])|19|2[0-9])(:?[0-9]{2})?$"
# the instants a timestamp may name: their local date and gaming day (an offset or a day start moves them by less
# than a day) stay within the years 1 to 9999 every date type here holds (year 0 failed a whole file's load), with a
# year to spare each side for the days the audit reads around a gaming day (its margins, the 30-day windows, the
# trend's 30 nights): a round on 9999-12-27 or 0001-01-02 was accepted and then stopped the night's audit
TS_MIN = dt.datetime(2, 1, 1, tzinfo=dt.timezone.utc)
TS_MAX = dt.datetime(9999, 1, 1, tzinfo=dt.timezone.utc)


def in_timestamp_range(instant: pl.Expr) -> pl.Expr:
    """The UTC instant where it lies from ``TS_MIN`` up to (not including) ``TS_MAX``; null elsewhere."""
    return pl.when(instant.is_between(pl.lit(TS_MIN), pl.lit(TS_MAX), closed="left")).then(instant)


def parse_timestamp(text: pl.Expr) -> pl.Expr:
    """ISO-8601 text with a UTC offset -> UTC instant (Datetime[us, UTC]); null when it is not one (nor in range).
    A fraction beyond microseconds is cut to microseconds (the stored precision)."""
    parsed = text.str.to_datetime(_TS_FORMAT, strict=False, time_zone="UTC", time_unit="us")
    return in_timestamp_range(pl.when(text.str.contains(TS_TEXT) & ~text.str.contains(FAR_OFFSET)).then(parsed))


def utc_offset_minutes(text: pl.Expr) -> pl.Expr:
    """The offset written at the end of an ISO-8601 timestamp, in minutes (``Z`` is 0)."""
    g = text.str.extract_groups(r"([+-])([0-9]{2}):?([0-9]{2})?$")
    sign = pl.when(g.struct.field("1") == "-").then(-1).otherwise(1)
    hours = g.struct.field("2").cast(pl.Int32, strict=False)
    minutes = g.struct.field("3").cast(pl.Int32, strict=False).fill_null(0)
    return (pl.when(text.str.ends_with("Z")).then(0).otherwise(sign * (hours * 60 + minutes))).cast(pl.Int16)


def ts_column(name: str) -> str:
    """Name of the derived column holding ``name`` parsed as a UTC instant."""
    return f"{name}__utc"


def with_parsed_timestamps(frame: pl.DataFrame, names) -> pl.DataFrame:
    """Parse each timestamp column once; checks and conversion both read ``<name>__utc``."""
    return frame.with_columns([parse_timestamp(pl.col(n)).alias(ts_column(n)) for n in names])


_KIND_BY_FIRST_CHAR = {'"': "string", "{": "object", "[": "array", "t": "boolean", "f": "boolean"}


def json_kind(literal: pl.Expr, tell_integers: bool = True) -> pl.Expr:
    """The JSON kind of a literal as DuckDB's ``from_json(..., 'JSON')`` hands it back.

    ``string``, ``integer`` (digits only: ``100.0`` and ``1e2`` are not), ``number``, ``boolean``,
    ``object``, ``array``; null for a missing field or a JSON null. With ``tell_integers=False``
    every number is ``number`` (cheaper: for fields where any number is the wrong kind anyway).
    """
    # one starts_with per kind, not the first character cut out and looked up (0.009 against 0.016 CPU s for a
    # 32 MiB batch's 103,000 wagers); the same answers as _KIND_BY_FIRST_CHAR, with "number" for anything else
    by_first = pl.when(literal.str.starts_with('"')).then(pl.lit("string"))
    for first, kind in _KIND_BY_FIRST_CHAR.items():
        if first != '"':
            by_first = by_first.when(literal.str.starts_with(first)).then(pl.lit(kind))
    by_first = by_first.otherwise(pl.lit("number"))
    if tell_integers:
        by_first = pl.when((by_first == "number") & literal.str.contains(INT_TEXT)).then(pl.lit("integer")).otherwise(by_first)
    return pl.when(literal.is_null()).then(None).otherwise(by_first)


def column_expr(rule: Rule, col: str, vocab: Vocabulary) -> pl.Expr:
    """Polars expression, true where ``col`` passes ``rule`` (nulls pass)."""
    c = pl.col(col)
    k, a = rule.kind, rule.arg
    if k == "isin":
        ok = c.is_in(list(a))
    elif k == "ruleset":
        ok = c.is_in(list(vocab.rulesets))
    elif k == "ge":
        ok = c >= a
    elif k == "between":
        ok = c.is_between(a[0], a[1])
    elif k == "nonempty":
        ok = c.str.len_bytes() > 0
    elif k == "no_control":
        ok = ~c.str.contains(CONTROL_TEXT)
    elif k == "currency_code":
        ok = c.str.contains(CURRENCY_CODE)
    elif k == "is_false":
        ok = ~c
    elif k == "int_text":
        ok = c.str.contains(INT_TEXT)
    elif k == "int_fits":  # an integer literal that does not fit in 64 bits
        ok = ~c.str.contains(INT_TEXT) | c.str.to_integer(strict=False).is_not_null()
    elif k == "int_min":
        v = c.str.to_integer(strict=False)
        ok = v.is_null() | (v >= a)
    elif k == "int_between":
        v = c.str.to_integer(strict=False)
        ok = v.is_null() | v.is_between(a[0], a[1])
    elif k == "not_negative_text":
        ok = ~c.str.starts_with("-")
    elif k == "ts_parsed":  # parsed with its offset, or at least a date-time missing only the offset
        ok = pl.col(ts_column(col)).is_not_null() | c.str.contains(NAIVE_TS)
    elif k == "ts_offset":
        ok = ~c.str.contains(NAIVE_TS)
    elif k == "json_kind":
        ok = c.is_in(list(a))
    elif k == "json_not_number":
        ok = c != "number"
    else:
        raise ValueError(f"unknown rule kind {k!r}")
    return (ok | c.is_null()).fill_null(True)


def _pairs(vocab: Vocabulary, name: str) -> list[str]:
    return list({
        "game_bet": vocab.game_bet_pairs,
        "game_action": vocab.game_action_pairs,
        "ruleset_game": vocab.ruleset_game_pairs,
    }[name]())


def row_expr(rule: RowRule, vocab: Vocabulary) -> pl.Expr:
    """Polars expression over several columns, true where the row passes."""
    cols = [pl.col(c) for c in rule.columns]
    if rule.kind == "pair_isin":  # "a/b" must be a known pair; a row missing either passes
        a, b = cols
        ok = (a + "/" + b).is_in(_pairs(vocab, rule.arg)) | a.is_null() | b.is_null()
    elif rule.kind == "required_if":  # columns[0] must be present when columns[1] == arg
        target, cond = cols
        ok = target.is_not_null() | (cond != rule.arg) | cond.is_null()
    elif rule.kind == "int_text_gt":  # int(columns[0]) > columns[1] (an integer column)
        text, bound = cols
        v = text.str.to_integer(strict=False)
        ok = v.is_null() | bound.is_null() | (v > bound)
    else:
        raise ValueError(f"unknown row rule kind {rule.kind!r}")
    return ok.fill_null(True)


RuleExpr = Callable[[Rule, str, Vocabulary], pl.Expr]


def passes_all(table, vocab: Vocabulary, skip_codes: tuple[str, ...] = ()) -> pl.Expr:
    """True where a row passes every check of ``table`` (required fields, column and row rules) but
    those whose reason code is in ``skip_codes``: the same expressions the pandera model runs, in
    one pass. The loader needs it where one row's check depends on which other rows are valid
    (event_seq must rise above the valid earlier events of the device)."""
    parts: list[pl.Expr] = []
    for f in table.fields:
        if f.required and "missing_field" not in skip_codes:
            parts.append(pl.col(f.name).is_not_null())
        parts += [column_expr(r, f.name, vocab) for r in f.rules if r.code not in skip_codes]
    parts += [row_expr(r, vocab) for r in table.row_rules if r.code not in skip_codes]
    return pl.all_horizontal(parts) if parts else pl.lit(True)
