"""Render the nightly audit report: totals, money at stake, findings by kind, table and dealer, top findings."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template

import polars as pl
import plotly.offline

from pipelines.report import figures

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


@dataclass(frozen=True)
class ReportInputs:
    findings: pl.DataFrame  # the published findings (FINDINGS_SCHEMA)
    # per currency: rounds, wagers, wagered, recorded, expected, unsettled (pipelines.audit.publish.settlement_totals)
    totals: pl.DataFrame
    days: tuple = ()  # the gaming days audited
    tables: int = 0  # the tables audited
    quarantined: int = 0
    input_files: tuple[tuple[str, str, int, int, int], ...] = ()  # (source_file, kind, lines, accepted, quarantined)
    extra: dict = field(default_factory=dict)  # label -> value, shown with the totals
    # per (gaming day, currency): tonight and the nights before (pipelines.audit.trend.night_totals, TREND_SCHEMA)
    trend: pl.DataFrame | None = None
    top_n: int = 50


def _asset(name: str) -> str:
    return (resources.files("pipelines.report") / "assets" / name).read_text(encoding="utf-8")


def _num(v) -> str:
    return "" if v is None else f"{v:,}" if isinstance(v, int) else html.escape(str(v))


def _card(value, label: str) -> str:
    return f'<div class="card"><div class="v">{_num(value)}</div><div class="k">{html.escape(label)}</div></div>'


def _table(headers: list[str], rows: list[list], numeric: set[int] = frozenset(), raw: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, v in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            text = v if i in raw else _num(v)
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _money_table(findings: pl.DataFrame, totals: pl.DataFrame) -> str:
    money = findings.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))
    at_stake = money.group_by("currency").agg(
        pl.col("difference").abs().sum().alias("at_stake"),
        pl.col("difference").filter(pl.col("difference") > 0).sum().alias("overpaid"),
        (-pl.col("difference").filter(pl.col("difference") < 0)).sum().alias("underpaid"),
        pl.len().alias("n"),
    )
    t = totals.select("currency", "wagered", "recorded", "expected").join(
        at_stake, on="currency", how="full", coalesce=True
    ).sort("currency", nulls_last=True)
    rows = [
        [r["currency"], r["wagered"], r["recorded"], r["expected"], r["n"] or 0, r["at_stake"] or 0, r["overpaid"] or 0,
         r["underpaid"] or 0]
        for r in t.iter_rows(named=True)
    ]
    return _table(
        ["currency", "wagered", "players' net as recorded", "players' net as the rules say", "money findings",
         "at stake", "player overpaid", "player underpaid"],
        rows, numeric={1, 2, 3, 4, 5, 6, 7},
    )


def _top_table(findings: pl.DataFrame, n: int) -> str:
    if findings.height == 0:
        return '<p class="note">No findings.</p>'
    top = (
        findings.with_columns(
            pl.col("difference").abs().fill_null(0).alias("_stake"),
            pl.col("severity").replace_strict(SEVERITY_ORDER, default=3, return_dtype=pl.Int8).alias("_sev"),
        )
        .sort(["_stake", "_sev", "gaming_day", "table_id", "round_no", "finding_id"],
              descending=[True, False, False, False, False, False], nulls_last=True)
        .head(n)
    )
    rows = []
    for r in top.iter_rows(named=True):
        sev = f'<span class="sev {html.escape(r["severity"] or "")}">{html.escape(r["severity"] or "")}</span>'
        where = f'{html.escape(r["source_file"] or "")}:{r["source_line"] or ""}'
        rows.append([sev, r["kind"], r["gaming_day"], r["table_id"], r["round_no"], r["wager_id"], r["dealer_id"],
                     r["expected_net"], r["recorded_net"], r["difference"], r["rule_ref"], r["detail"],
                     f"<code>{where}</code>"])
    return _table(
        ["severity", "kind", "gaming day", "table", "round", "wager", "dealer", "expected", "recorded", "difference",
         "rule", "detail", "source"],
        rows, numeric={4, 7, 8, 9}, raw={0, 12},
    )


def _trend_section(trend: pl.DataFrame | None) -> str:
    """The per-night totals as a figure and a table (tonight's rows marked)."""
    if trend is None or trend.height == 0:
        return '<p class="note">No night audited into this database yet.</p>'
    rows = [
        [("tonight " if r["tonight"] else "") + r["gaming_day"].isoformat(), r["currency"], r["rounds"], r["wagers"],
         r["handle"], r["recorded_net"], r["expected_net"], r["findings"], r["high_findings"]]
        for r in trend.sort(["gaming_day", "currency"], descending=[True, False], nulls_last=True).iter_rows(named=True)
    ]
    table = _table(["gaming day", "currency", "rounds", "wagers", "handle", "players' net as recorded",
                    "players' net as the rules say", "findings", "high"], rows, numeric={2, 3, 4, 5, 6, 7, 8})
    return figures.fragment(figures.night_trend(trend), "fig-trend") + table


def render_report(inputs: ReportInputs) -> str:
    """The whole report as one HTML string (plotly.js inline)."""
    f, t = inputs.findings, inputs.totals
    days = sorted(set(inputs.days) | set(f["gaming_day"].drop_nulls().to_list()))
    days_text = ", ".join(d.isoformat() for d in days) if days else "none"
    tables = inputs.tables or f["table_id"].drop_nulls().n_unique()
    by_sev = {k: v for k, v in f.group_by("severity").len().iter_rows()} if f.height else {}
    cards = [
        _card(int(t["rounds"].sum() or 0), "rounds with wagers"),
        _card(int(t["wagers"].sum() or 0), "wagers re-settled"),
        _card(int(t["unsettled"].sum() or 0), "wagers the evidence cannot settle"),
        _card(f.height, "findings"),
        _card(by_sev.get("high", 0), "high (money)"),
        _card(by_sev.get("medium", 0), "medium (procedure)"),
        _card(by_sev.get("low", 0), "low (data gaps)"),
        _card(inputs.quarantined, "input lines quarantined"),
    ] + [_card(v, k) for k, v in inputs.extra.items()]
    input_rows = [list(r) for r in inputs.input_files]
    input_table = _table(["file", "kind", "lines read", "accepted", "quarantined"], input_rows, numeric={2, 3, 4}) \
        if input_rows else '<p class="note">No input file list.</p>'
    page = Template(_asset("report.html.tmpl")).substitute(
        css=_asset("report.css"),
        plotlyjs=plotly.offline.get_plotlyjs(),
        days=html.escape(days_text),
        tables=tables,
        cards="\n".join(cards),
        money_table=_money_table(f, t),
        trend=_trend_section(inputs.trend),
        fig_kind=figures.fragment(figures.findings_by_kind(f), "fig-kind"),
        fig_money=figures.fragment(figures.money_by_kind(f), "fig-money"),
        fig_table=figures.fragment(figures.findings_by_table(f), "fig-table"),
        fig_dealer=figures.fragment(figures.findings_by_dealer(f), "fig-dealer"),
        top_n=inputs.top_n,
        top_table=_top_table(f, inputs.top_n),
        input_table=input_table,
    )
    return page


def write_report(path: Path, inputs: ReportInputs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(inputs), encoding="utf-8")
    return path
