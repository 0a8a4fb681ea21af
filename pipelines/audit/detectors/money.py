"""Money findings: every wager whose recorded net is not what the rules prescribe, and why.

One wager gets at most one money finding, named after the reason the prescription differs from a
plain payout: ``void_not_honoured`` (the round is void, by the table's status or by the rules, and
the wager was not returned), ``free_hand_wager`` (a wager on a Free Hand, TBAC-7.8),
``limit_breach`` (the wager broke a table limit or a Hold'em ratio), ``differential_breach`` (the
round exceeded the baccarat differential, TBAC-7.19), else ``payout_mismatch``. Money findings are
``high``; ``difference`` is recorded minus expected (positive: the player was overpaid).

Breaches the table settled exactly as the rules prescribe are still findings (the wager should not
have been accepted as it was), at ``medium`` with a difference of 0.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from pipelines.audit.findings import money, with_ids

ROUND_INFO = ("table_id", "round_no", "dealer_id", "game", "ruleset", "ruleset_version", "currency")


def paid_as(recorded: int | None, amount: int | None) -> str:
    """What the table did with a wager, in words: ``paid 12:1 (120,000)``, ``collected 10,000``, ``returned``."""
    if recorded is None:
        return "nothing recorded"
    if recorded == 0:
        return "returned (0)"
    if recorded < 0:
        return f"collected {-recorded:,}"
    if amount:
        ratio = Fraction(recorded, amount)
        if ratio.denominator <= 40:
            return f"paid {ratio.numerator}:{ratio.denominator} ({recorded:,})"
    return f"paid {recorded:,}"


def _sentence(r: dict) -> str:
    exp, rec = r["expected_net"], r["recorded_net"]
    diff = rec - exp
    who = "overpaid" if diff > 0 else "underpaid"
    return (
        f"{r['detail'] or r['clause']}; {paid_as(rec, r['amount'])}, expected {money(exp)}: "
        f"the player was {who} {abs(diff):,}"
    )


def detect_money(wagers: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    if wagers.height == 0:
        return wagers.clear()
    w = wagers.filter(pl.col("expected_net").is_not_null())
    mismatch = pl.col("recorded_net") != pl.col("expected_net")
    void = pl.col("override").is_in(["void", "rules_void"])
    kind = (
        pl.when(void).then(pl.lit("void_not_honoured"))
        .when(pl.col("override") == "free_hand").then(pl.lit("free_hand_wager"))
        .when(pl.col("limit_issue").is_not_null() | (pl.col("override") == "returned")).then(pl.lit("limit_breach"))
        .when(pl.col("differential_issue").is_not_null()).then(pl.lit("differential_breach"))
        .otherwise(pl.lit("payout_mismatch"))
    )
    rule_ref = (
        pl.when(void | (pl.col("override") == "free_hand")).then(pl.col("override_clause"))
        .when(pl.col("limit_issue").is_not_null()).then(pl.col("limit_clause"))
        .when(pl.col("differential_issue").is_not_null()).then(pl.col("differential_clause"))
        .otherwise(pl.col("clause"))
    )
    w = w.with_columns(kind.alias("kind"), rule_ref.alias("rule_ref"), mismatch.alias("_mismatch"))
    # money findings, and breaches settled as prescribed (procedure)
    flagged = w.filter(
        pl.col("_mismatch")
        | pl.col("kind").is_in(["limit_breach", "free_hand_wager"])
    )
    rows = []
    for r in flagged.iter_rows(named=True):
        if r["_mismatch"]:
            detail = _sentence(r)
            severity = "high"
        else:
            detail = f"{r['limit_issue'] or r['override_detail'] or r['detail']}; settled as the rules prescribe ({paid_as(r['recorded_net'], r['amount'])})"
            severity = "medium"
        rows.append({**r, "detail": detail, "severity": severity})
    out = pl.DataFrame(rows, schema=flagged.schema | {"severity": pl.String}) if rows else flagged.with_columns(
        pl.lit(None, dtype=pl.String).alias("severity")
    )
    money_findings = with_ids(out)
    # a round over the differential whose wagers were all settled as prescribed: one procedure finding
    diff_rounds = (
        w.filter(pl.col("differential_issue").is_not_null())
        .group_by(ROUND_INFO + ("gaming_day",))
        .agg(
            pl.col("kind").filter(pl.col("_mismatch")).is_in(["differential_breach"]).any().alias("_has_money"),
            pl.col("differential_issue").first().alias("detail"),
            pl.col("source_file").first(),
            pl.col("source_line").first(),
            pl.col("differential_clause").filter(pl.col("differential_clause").str.ends_with(".19")).first().alias("rule_ref"),
        )
        .filter(~pl.col("_has_money"))
        .with_columns(
            pl.lit("differential_breach").alias("kind"),
            pl.lit("medium").alias("severity"),
            pl.lit(None, dtype=pl.String).alias("wager_id"),
            pl.col("detail").str.replace(r":.*$", "").alias("detail"),
        )
        .with_columns(
            pl.format("{}: the wagers were settled pro rata as TBAC-7.19 prescribes", pl.col("detail")).alias("detail"),
            pl.coalesce("rule_ref", pl.lit("TBAC-7.19")).alias("rule_ref"),
        )
    )
    return pl.concat([money_findings, with_ids(diff_rounds)], how="diagonal_relaxed")
