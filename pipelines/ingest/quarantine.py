"""Turn failures (line, reason code, detail) into quarantine rows: one row per line, with its reason.

A line may fail several checks; it is quarantined once, under the reason that comes first in
``schemas.reasons.REASONS`` (the most basic one: an unparseable line before a wrong type before an
unknown bet), and every failure of the line is listed in ``detail``. One row per line keeps the
count exact: lines read = rows accepted + rows quarantined.
"""

from __future__ import annotations

import polars as pl

from functools import cache

import pandera.polars as pa

from schemas.metadata import Table
from schemas.pandera_models import model, polars_schema, validate_frame
from schemas.rules import column_expr, passes_all, row_expr
from schemas.vocabulary import builtin_vocabulary
from schemas.reasons import PRIORITY, REASONS
from schemas.tables import CORE_QUARANTINE

FAILURE_SCHEMA = {"source_line": pl.Int64, "code": pl.String, "detail": pl.String}
QUARANTINE_SCHEMA = polars_schema(CORE_QUARANTINE)


def empty_failures() -> pl.DataFrame:
    return pl.DataFrame(schema=FAILURE_SCHEMA)


def failures_at(lines: pl.Series, code: str, detail: pl.Series | str | None = None) -> pl.DataFrame:
    """Failures with one code for the given source lines."""
    n = len(lines)
    if isinstance(detail, pl.Series):
        d = detail.cast(pl.String)
    else:
        d = pl.Series("detail", [detail] * n, dtype=pl.String)
    return pl.DataFrame({"source_line": lines.cast(pl.Int64), "code": [code] * n, "detail": d}, schema=FAILURE_SCHEMA)


def _short(value: object, limit: int = 80) -> str:
    text = "null" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_text(values: pl.Series, limit: int = 80) -> pl.Series:
    """Each value as :func:`_short` shows it, as a column: ``null`` for a missing one, cut to ``limit`` characters."""
    if values.dtype not in (pl.String, pl.Null):  # str() of a Python value (a bool reads True, not polars' true)
        return pl.Series([_short(v, limit) for v in values.to_list()], dtype=pl.String)
    return values.cast(pl.String).to_frame("v").select(
        pl.when(pl.col("v").is_null()).then(pl.lit("null"))
        .when(pl.col("v").str.len_chars() <= limit).then(pl.col("v"))
        .otherwise(pl.col("v").str.slice(0, limit - 1) + pl.lit("…"))).to_series()


def from_validation(fc: pl.DataFrame, frame: pl.DataFrame, table: Table, prefix: str = "",
                    order_col: str | None = None) -> pl.DataFrame:
    """Pandera failure cases of ``frame`` (validated against ``table``) -> failures per source line.

    ``prefix`` names where the frame's rows sit in the line (``wagers``: details read
    ``wagers[2].amount: negative amount (-500)``); ``order_col`` is the row's position in that list.
    The details are built as columns, not string by string: a line lacking eight fields has about fifteen failure
    cases, and a file of 200,000 such lines built three million Python strings here (1.75 CPU s; 0.85 as columns).
    """
    if fc.is_empty():
        return empty_failures()
    rows = fc["row"]
    codes = fc["code"]
    where = (f"{prefix}[" + frame[order_col].gather(rows).cast(pl.String).fill_null("None") + "]."
             if order_col else pl.repeat("", len(fc), dtype=pl.String, eager=True))
    reasons = codes.replace(REASONS).fill_null("None")  # REASONS.get(code, code), column by column
    details = where + fc["column"].str.strip_suffix("__json") + ": " + reasons + " (" + _short_text(fc["value"]) + ")"
    by_row_rule = (fc["column"].is_null() | (fc["column"] == table.name)).fill_null(True)
    if by_row_rule.any():  # a row rule's failure shows the values of its columns
        at = by_row_rule.arg_true()
        whose = codes.gather(at)
        row_rule_cols = {r.code: r.columns for r in table.row_rules}
        for code in whose.unique(maintain_order=True).to_list():
            sel = at.filter(whose.eq_missing(pl.Series([code], dtype=pl.String)))
            r = rows.gather(sel)
            shown = [where.gather(sel) + f"{c}=" + _short_text(frame[c].gather(r)) for c in row_rule_cols.get(code, ())]
            text = pl.select(pl.concat_str(shown, separator=", ")).to_series() if shown \
                else pl.repeat("", len(sel), dtype=pl.String, eager=True)
            details = details.scatter(sel, f"{REASONS.get(code, code)} (" + text + ")")
    known = codes.is_in(list(REASONS)).fill_null(False)
    return pl.DataFrame({
        "source_line": frame["source_line"].gather(rows),
        "code": codes.zip_with(known, pl.repeat("contract_violation", len(fc), dtype=pl.String, eager=True)),
        "detail": details,
    }, schema=FAILURE_SCHEMA)


def to_quarantine(failures: pl.DataFrame, raw: pl.DataFrame, source_file: str, kind: str) -> pl.DataFrame:
    """One quarantine row per failing line: primary reason by priority, all failures in ``detail``.

    ``raw`` maps ``source_line`` -> ``raw`` (the line as read) for at least the failing lines.
    """
    if failures.is_empty():
        return pl.DataFrame(schema=QUARANTINE_SCHEMA)
    ranked = failures.with_columns(
        pl.col("code").replace_strict(PRIORITY, default=len(PRIORITY), return_dtype=pl.Int32).alias("_rank")
    ).unique(["source_line", "code", "detail"], maintain_order=True).sort(["source_line", "_rank"], maintain_order=True)
    per_line = ranked.group_by("source_line", maintain_order=True).agg(
        pl.col("code").first().alias("reason_code"),
        pl.col("detail").drop_nulls().str.join("; ").alias("detail"),
    )
    out = per_line.join(raw.select("source_line", "raw"), on="source_line", how="left")
    return out.select(
        pl.lit(source_file).alias("source_file"),
        pl.col("source_line").cast(pl.Int64),
        pl.lit(kind).alias("kind"),
        pl.col("reason_code").replace_strict(REASONS, default="canonical contract violated").alias("reason"),
        pl.col("reason_code"),
        pl.when(pl.col("detail") == "").then(None).otherwise(pl.col("detail")).alias("detail"),
        pl.col("raw").fill_null(""),
    ).sort("source_line")


@cache
def _passes(table: Table) -> pl.Expr:
    return passes_all(table, builtin_vocabulary())


@cache
def _parts_passing(table: Table) -> tuple[tuple[str, ...], list[pl.Expr]]:
    """One expression per column (its required-ness and rules) and per row rule, true where the row passes it;
    and their names (a column's name, or the row rule's reason code)."""
    vocab = builtin_vocabulary()
    names: list[str] = []
    exprs: list[pl.Expr] = []
    for i, f in enumerate(table.fields):
        parts = ([pl.col(f.name).is_not_null()] if f.required else []) + [column_expr(r, f.name, vocab) for r in f.rules]
        if parts:
            names.append(f.name)
            exprs.append(pl.all_horizontal(parts).alias(f"_c{i}"))
    for j, r in enumerate(table.row_rules):
        names.append(r.code)
        exprs.append(row_expr(r, vocab).alias(f"_r{j}"))
    return tuple(names), exprs


@cache
def _model_of(table: Table, failing: tuple[str, ...]):
    """The table's pandera model narrowed to the columns and row rules in ``failing`` (names as
    :func:`_parts_passing` gives them), in the model's own order: its failure cases on a frame where nothing
    else fails are those of the whole model, without a check per column that has nothing to find."""
    full = model(table.name)
    keep = set(failing)
    return pa.DataFrameSchema(
        {name: col for name, col in full.columns.items() if name in keep},
        checks=[c for c in full.checks if c.name in keep],
        name=full.name, strict=False, ordered=False,
    )


def checked(frame: pl.DataFrame, table: Table, prefix: str = "", order_col: str | None = None,
            passing: pl.Series | None = None) -> pl.DataFrame:
    """The failures of ``frame`` against ``table``'s pandera model, found cheaply.

    One vectorised pass of the model's own check expressions (``schemas.rules.passes_all``, the
    expressions pandera runs) finds the rows that fail anything; only those rows go through
    pandera, which names every failure exactly as a validation of the whole frame would (its
    failure cases keep the frame's row order), and only with the columns and row rules that fail
    on them (a second vectorised pass over those few rows tells which): pandera's fixed cost is a
    check per column and call, so a chunk with one bad wager no longer pays for every column. The
    frame's columns and dtypes are compared with the model's here; a mismatch (a loader defect)
    goes to pandera whole, which raises. ``passing``: that first pass, when the caller already made it
    (the shoe CSV judges every other check before the sequence's).
    """
    if frame.schema != pl.Schema(polars_schema(table)):
        return from_validation(validate_frame(frame, model(table.name)), frame, table, prefix, order_col)
    if frame.is_empty():
        return empty_failures()
    # lazily, so polars computes a value the checks share once (an integer's parse: 0.053 -> 0.038 CPU s a batch)
    ok = frame.lazy().select(_passes(table)).collect().to_series() if passing is None else passing
    if ok.all():
        return empty_failures()
    bad = frame.filter(~ok)
    names, exprs = _parts_passing(table)
    passing = bad.select(exprs).select(pl.all().all()).row(0)
    failing = tuple(n for n, passed in zip(names, passing) if not passed)
    return from_validation(validate_frame(bad, _model_of(table, failing)), bad, table, prefix, order_col)
