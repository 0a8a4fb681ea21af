"""Money findings: every wager whose recorded net is not what the rules prescribe, and why.

One wager gets at most one money finding, named after the reason the prescription differs from a
plain payout: ``void_not_honoured`` (the round is void, by the table's status or by the rules, and
the wager was not returned), ``free_hand_wager`` (a wager on a Free Hand, TBAC-7.8),
``limit_breach`` (the wager broke a table limit or a Hold'em ratio: compared with the settlement
TBAC-7.17/7.18 or HTB-7.10 prescribe), else ``payout_mismatch`` (compared with the pay table, or
with the pro rata settlement of TBAC-7.19 when the round exceeded the differential). Money
findings are ``high``; ``difference`` is recorded minus expected (positive: the player was overpaid).

Breaches the table settled exactly as the rules prescribe are still findings (the wager should not
have been accepted as it was), at ``medium`` with a difference of 0. A round whose Banker and
Player totals exceed the differential is one ``differential_breach`` (``medium``), whatever its
wagers' settlement; the wagers not settled pro rata are payout mismatches of their own.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import money, with_ids
from pipelines.currency import format_money
from pipelines.step_money import step_in_major_units

ROUND_INFO = ("table_id", "round_no", "dealer_id", "game", "ruleset", "ruleset_version", "currency")


def paid_as(recorded: int | None, amount: int | None, currency: str | None) -> str:
    """What the table did with a wager, in words and major units: ``paid 12:1 (1,200.00)``, ``collected 100.00``,
    ``returned``."""
    if recorded is None:
        return "nothing recorded"
    if recorded == 0:
        return "returned (0)"
    if recorded < 0:
        return f"collected {money(-recorded, currency)}"
    if amount:
        ratio = Fraction(recorded, amount)
        if ratio.denominator <= 40:
            return f"paid {ratio.numerator}:{ratio.denominator} ({money(recorded, currency)})"
    return f"paid {money(recorded, currency)}"


def _sentence(r: dict) -> str:
    """The engine's own words (its amounts put in major units, pipelines.step_money), then what the table did."""
    exp, rec, cur = r["expected_net"], r["recorded_net"], r["currency"]
    diff = rec - exp
    who = "overpaid" if diff > 0 else "underpaid"
    why = step_in_major_units(r["detail"], cur) if r["detail"] else r["clause"]
    return (
        f"{why}; {paid_as(rec, r['amount'], cur)}, expected {money(exp, cur)}: "
        f"the player was {who} {format_money(abs(diff), cur)}"
    )


def free_hand_not_recorded(rounds: pl.DataFrame, shown: set[tuple[str, int]]) -> pl.DataFrame:
    """``free_hand_wager`` for a round the rules make a Free Hand (a card dealt in error in the round before,
    pipelines.audit.free_hand) that the table did not record as ``free_hand``, when none of its wagers' findings
    (``shown``: table, round) says so already: a round with no wagers, or a void one."""
    if rounds.height == 0 or "free_hand_after" not in rounds.columns:
        return pl.DataFrame()
    r = rounds.filter(pl.col("free_hand_after").is_not_null() & (pl.col("status") != "free_hand"))
    rows = []
    for x in r.iter_rows(named=True):
        if (x["table_id"], x["round_no"]) in shown:
            continue
        c = CLAUSES.get(x["clause_prefix"] or "")
        ref = (c.free_hand if c else None) or ""
        rows.append({
            **{k: x[k] for k in ROUND_INFO + ("gaming_day", "source_file", "source_line")},
            "kind": "free_hand_wager", "severity": "medium", "wager_id": None, "rule_ref": ref,
            "detail": (f"the card(s) dealt in error in round {x['free_hand_after']} ({x['free_hand_cause']}) begin this "
                       f"hand, a Free Hand ({ref}), but the table recorded the round as {x['status']} with "
                       f"{x['wager_count']} wager(s)"),
        })
    return with_ids(pl.DataFrame(rows), pl.lit("not_recorded")) if rows else pl.DataFrame()


def detect_money(wagers: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    if wagers.height == 0:
        return pl.concat([wagers.clear(), free_hand_not_recorded(rounds, set())], how="diagonal_relaxed")
    w = wagers
    mismatch = (pl.col("recorded_net") != pl.col("expected_net")).fill_null(False)
    void = pl.col("override").is_in(["void", "rules_void"])
    kind = (
        pl.when(void).then(pl.lit("void_not_honoured"))
        .when(pl.col("override") == "free_hand").then(pl.lit("free_hand_wager"))
        .when(pl.col("limit_issue").is_not_null() | (pl.col("override") == "returned")).then(pl.lit("limit_breach"))
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
        elif r["expected_net"] is None:
            detail = (f"{r['limit_issue'] or r['override_detail']}; {paid_as(r['recorded_net'], r['amount'], r['currency'])}; "
                      f"the settlement cannot be checked: {r['unsettled_reason']}")
            severity = "medium"
        else:
            detail = f"{r['limit_issue'] or r['override_detail'] or r['detail']}; settled as the rules prescribe ({paid_as(r['recorded_net'], r['amount'], r['currency'])})"
            severity = "medium"
        rows.append({**r, "detail": detail, "severity": severity})
    out = pl.DataFrame(rows, schema=flagged.schema | {"severity": pl.String}) if rows else flagged.with_columns(
        pl.lit(None, dtype=pl.String).alias("severity")
    )
    money_findings = with_ids(out)
    # a round the rules make void that the table settled, though no wager's net shows it (all returned or stand-offs)
    shown = set(out.filter(pl.col("kind") == "void_not_honoured").select("table_id", "round_no").iter_rows()) if out.height else set()
    void_rounds = (
        w.filter((pl.col("override") == "rules_void") & (pl.col("status") == "settled"))
        .group_by(ROUND_INFO + ("gaming_day",))
        .agg(pl.col("override_clause").first().alias("rule_ref"), pl.len().alias("_n"),
             pl.col("source_file").first(), pl.col("source_line").first())
    )
    if void_rounds.height:
        void_rounds = void_rounds.filter(
            ~pl.struct("table_id", "round_no").map_elements(lambda k: (k["table_id"], k["round_no"]) in shown, return_dtype=pl.Boolean)
        ).with_columns(
            pl.lit("void_not_honoured").alias("kind"),
            pl.lit("medium").alias("severity"),
            pl.lit(None, dtype=pl.String).alias("wager_id"),
            pl.format("the rules make the round void ({}) but the table recorded it as settled; its {} wager(s) "
                      "netted 0 all the same", pl.col("rule_ref"), pl.col("_n")).alias("detail"),
        )
        money_findings = pl.concat([money_findings, with_ids(void_rounds)], how="diagonal_relaxed")
    # a round over the differential: one procedure finding, whatever its wagers' settlement
    over = w.filter(pl.col("differential_issue").is_not_null())
    diff_rounds = (
        over.group_by(ROUND_INFO + ("gaming_day",))
        .agg(
            pl.col("differential_issue").first().str.replace(r":.*$", "").alias("_totals"),
            pl.col("differential_clause").filter(~pl.col("differential_clause").str.ends_with(".1")).len().alias("_prorated"),
            (pl.col("_mismatch") & ~pl.col("differential_clause").str.ends_with(".1")).sum().alias("_wrong"),
            pl.col("source_file").first(),
            pl.col("source_line").first(),
        )
        .with_columns(
            pl.lit("differential_breach").alias("kind"),
            pl.lit("medium").alias("severity"),
            pl.lit(None, dtype=pl.String).alias("wager_id"),
            pl.lit("TBAC-7.19").alias("rule_ref"),
            pl.format(
                "{}: {} wager(s) of the larger side are settled pro rata (TBAC-7.19); {}",
                pl.col("_totals"), pl.col("_prorated"),
                pl.when(pl.col("_wrong") > 0)
                .then(pl.format("{} of them were not (payout_mismatch)", pl.col("_wrong")))
                .otherwise(pl.lit("the table did so")),
            ).alias("detail"),
        )
    )
    flagged_free = set(out.filter(pl.col("kind") == "free_hand_wager").select("table_id", "round_no").iter_rows()) if out.height else set()
    return pl.concat([money_findings, with_ids(diff_rounds), free_hand_not_recorded(rounds, flagged_free)], how="diagonal_relaxed")
