"""What a Prefect user sees of a night in the UI: its summary as a markdown artifact, its top findings as a table.

Both are built from the flow's outcome (plain functions, testable without Prefect: :func:`summary_markdown`,
:func:`top_findings_rows`), and published under fixed keys so the UI lists one artifact per night in a series:
``pitaudit-night-summary`` and ``pitaudit-top-findings``. Values from the logs are escaped for markdown.
"""

from __future__ import annotations

import polars as pl

from pipelines.currency import format_money

SUMMARY_KEY = "pitaudit-night-summary"
TOP_FINDINGS_KEY = "pitaudit-top-findings"
TOP_N = 20
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()<>#+-.!|"})


def md(text) -> str:
    """A value from the logs as literal markdown text (no link, no markup, no table cell break)."""
    return "" if text is None else str(text).translate(_MD_SPECIAL).replace("\n", " ")


def summary_markdown(outcome) -> str:
    """The night in a few lines: days, rounds, partitions re-settled, findings by severity and kind, money, files."""
    f = outcome.findings
    by_sev = dict(f.group_by("severity").len().iter_rows()) if f.height else {}
    by_kind = sorted(f.group_by("kind").len().iter_rows(), key=lambda kv: (-kv[1], kv[0])) if f.height else []
    lines = [
        f"# pitaudit: gaming day(s) {md(outcome.scope.label())}",
        "",
        f"- rounds audited: **{outcome.rounds:,}** in {outcome.partitions:,} partition(s) (gaming day x table), "
        f"{outcome.resettled:,} re-settled tonight (the others unchanged since their last audit)",
        f"- findings: **{f.height:,}** ({by_sev.get('high', 0):,} high, {by_sev.get('medium', 0):,} medium, "
        f"{by_sev.get('low', 0):,} low)",
        f"- input lines quarantined: {outcome.quarantined:,}",
    ]
    money = f.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0)) if f.height else f
    if money.height:
        stake = money.group_by("currency").agg(pl.col("difference").cast(pl.Int128).abs().sum()).sort("currency")
        lines.append("- money at stake: " + ", ".join(md(format_money(int(v), c)) for c, v in stake.iter_rows()))
    if by_kind:
        lines += ["", "| kind | findings |", "|---|---:|"] + [f"| {md(k)} | {n:,} |" for k, n in by_kind]
    if outcome.paths.get("report"):
        lines += ["", f"Report: `{outcome.paths['report']}`"]
    return "\n".join(lines) + "\n"


def top_findings_rows(findings: pl.DataFrame, n: int = TOP_N) -> list[dict]:
    """The ``n`` findings that matter most: high severity first, then the most money at stake."""
    if findings.height == 0:
        return []
    top = (
        findings.with_columns(
            pl.col("severity").replace_strict(SEVERITY_RANK, default=3, return_dtype=pl.Int8).alias("_sev"),
            pl.col("difference").cast(pl.Int128).abs().fill_null(0).alias("_stake"),
        )
        .sort(["_sev", "_stake", "gaming_day", "table_id", "round_no", "finding_id"],
              descending=[False, True, False, False, False, False], nulls_last=True)
        .head(n)
    )
    cols = ["severity", "kind", "gaming_day", "table_id", "round_no", "wager_id", "difference", "rule_ref", "detail"]
    return [{c: (r[c].isoformat() if c == "gaming_day" and r[c] is not None else r[c]) for c in cols}
            for r in top.iter_rows(named=True)]


def publish_artifacts(outcome) -> None:
    """The markdown summary and the top-findings table, in the current flow run (nothing outside a flow run)."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is None:
        return
    days = md(outcome.scope.label())
    create_markdown_artifact(summary_markdown(outcome), key=SUMMARY_KEY, description=f"pitaudit night {days}")
    rows = top_findings_rows(outcome.findings)
    create_table_artifact(rows or [{"finding": "no findings"}], key=TOP_FINDINGS_KEY,
                          description=f"the {len(rows)} top findings of {days} (high first, then money at stake)")
