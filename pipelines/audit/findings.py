"""Findings: building them, naming them stably, ordering them.

A finding's id is a hash of what makes it that finding (its kind and its keys: table, round,
wager, and a discriminator such as the device and event number of a gap), never of when the audit
ran, so a re-run over the same input yields the same ids and the same bytes.
"""

from __future__ import annotations

import hashlib

import polars as pl

from pipelines.currency import format_amount

from pipelines.audit.frames import FINDINGS_SCHEMA, conform, empty

# the contract's kinds (formats.md) and the ones this audit adds (docs/findings.md)
DETERMINISTIC_KINDS: tuple[str, ...] = (
    "payout_mismatch", "limit_breach", "differential_breach", "card_integrity", "drawing_rule_violation",
    "result_mismatch", "void_not_honoured", "free_hand_wager", "late_wager", "sequence_gap", "unmatched_round",
    "illegal_action", "source_changed",
)
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


def finding_id(kind: str, table_id: str | None, round_no: int | None, wager_id: str | None, key: str | None) -> str:
    text = "|".join("" if v is None else str(v) for v in (kind, table_id, round_no, wager_id, key))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def with_ids(df: pl.DataFrame, key: str | pl.Expr | None = None) -> pl.DataFrame:
    """Add ``finding_id`` from kind, table, round, wager and an optional discriminator column/expression."""
    if df.height == 0:
        return df.with_columns(pl.lit(None, dtype=pl.String).alias("finding_id"))
    key_expr = pl.lit(None, dtype=pl.String) if key is None else (pl.col(key) if isinstance(key, str) else key)
    parts = df.select(
        pl.col("kind"), pl.col("table_id"), pl.col("round_no"), pl.col("wager_id"), key_expr.cast(pl.String).alias("_key")
    )
    ids = [finding_id(*row) for row in parts.iter_rows()]
    return df.with_columns(pl.Series("finding_id", ids, dtype=pl.String))


def finalize(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """One findings frame in the published schema, in a stable order, one row per id."""
    frames = [conform(p, FINDINGS_SCHEMA) for p in parts if p is not None and p.height]
    if not frames:
        return empty(FINDINGS_SCHEMA)
    df = pl.concat(frames, how="vertical")
    df = df.unique(subset=["finding_id"], keep="first", maintain_order=True)
    return sort_findings(df)


def sort_findings(df: pl.DataFrame) -> pl.DataFrame:
    return df.sort(
        ["gaming_day", "table_id", "round_no", "kind", "wager_id", "finding_id"], nulls_last=True, maintain_order=True
    )


def money(amount: int | None, currency: str | None) -> str:
    """An amount for a sentence, in the currency's major units (ISO 4217 decimals), sign kept: ``-90.00``.

    A finding's sentence sits beside the report's and the pack's money columns, which are in major units:
    an integer of the smallest unit there ("overpaid 1,975" for 19.75 USD) read as a hundred times the money.
    The columns of the files keep the integers (docs/formats.md)."""
    if amount is None:
        return "nothing"
    return format_amount(amount, currency)



def thousands(expr: str | pl.Expr) -> pl.Expr:
    """An integer expression as text with thousands separators, vectorised (``-1234567`` -> ``-1,234,567``)."""
    e = (pl.col(expr) if isinstance(expr, str) else expr).cast(pl.Int64)
    a = e.abs()
    groups = [(a // 10 ** (3 * k)) % 1000 for k in range(6, -1, -1)]  # up to 10**21
    text = pl.lit("")
    started = pl.lit(False)
    for k, g in zip(range(6, -1, -1), groups):
        lead = a >= 10 ** (3 * k) if k else pl.lit(True)
        piece = (
            pl.when(started).then(pl.lit(",") + g.cast(pl.String).str.zfill(3))
            .when(lead).then(g.cast(pl.String))
            .otherwise(pl.lit(""))
        )
        text = text + piece
        started = started | lead
    return pl.when(e.is_null()).then(None).when(e < 0).then(pl.lit("-") + text).otherwise(text)
