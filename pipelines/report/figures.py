"""The report's plotly figures, each a function of the findings frame (no I/O).

Every figure is rendered to an HTML fragment without plotly.js (the report embeds it once) and with
a fixed div id, so the same findings give the same fragment.
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

SEVERITY_COLOURS = {"high": "#b42318", "medium": "#dc6803", "low": "#98a2b3"}
SEVERITIES = ("high", "medium", "low")
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "font": {"size": 14}},
        font={"family": FONT, "size": 12},
        barmode="stack",
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.15},
        plot_bgcolor="#fff",
        paper_bgcolor="#fff",
    )
    fig.update_xaxes(gridcolor="#eef0f3", automargin=True)
    fig.update_yaxes(gridcolor="#eef0f3", automargin=True)
    return fig


def _stacked_by_severity(findings: pl.DataFrame, by: str, title: str, top: int = 30) -> go.Figure:
    fig = go.Figure()
    if findings.height:
        counts = findings.group_by([by, "severity"]).len().rename({"len": "n"})
        order = (
            counts.group_by(by).agg(pl.col("n").sum()).sort(["n", by], descending=[True, False]).head(top)[by].to_list()
        )
        for sev in SEVERITIES:
            sub = counts.filter(pl.col("severity") == sev)
            lookup = dict(zip(sub[by].to_list(), sub["n"].to_list()))
            fig.add_bar(
                y=[str(k) for k in order][::-1], x=[lookup.get(k, 0) for k in order][::-1], name=sev, orientation="h",
                marker_color=SEVERITY_COLOURS[sev],
            )
    else:
        fig.add_annotation(text="no findings", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    n = max(1, min(top, findings[by].n_unique() if findings.height else 1))
    return _layout(fig, title, height=max(260, 90 + 22 * n))


def findings_by_kind(findings: pl.DataFrame) -> go.Figure:
    return _stacked_by_severity(findings, "kind", "Findings by kind")


def findings_by_table(findings: pl.DataFrame) -> go.Figure:
    return _stacked_by_severity(findings.filter(pl.col("table_id").is_not_null()), "table_id", "Findings by table (top 30)")


def findings_by_dealer(findings: pl.DataFrame) -> go.Figure:
    return _stacked_by_severity(
        findings.filter(pl.col("dealer_id").is_not_null()), "dealer_id", "Findings by dealer (top 30; rounds with a dealer)"
    )


def money_by_kind(findings: pl.DataFrame) -> go.Figure:
    """Money at stake per kind, overpaid and underpaid apart (in the smallest unit, all currencies together)."""
    fig = go.Figure()
    m = findings.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))
    if m.height:
        agg = (
            m.group_by("kind")
            .agg(
                pl.col("difference").filter(pl.col("difference") > 0).sum().alias("over"),
                (-pl.col("difference").filter(pl.col("difference") < 0)).sum().alias("under"),
            )
            .sort("kind")
        )
        fig.add_bar(x=agg["kind"].to_list(), y=agg["over"].to_list(), name="player overpaid", marker_color="#b42318")
        fig.add_bar(x=agg["kind"].to_list(), y=agg["under"].to_list(), name="player underpaid", marker_color="#1570ef")
    else:
        fig.add_annotation(text="no money at stake", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig = _layout(fig, "Money at stake by kind (smallest currency unit)")
    fig.update_layout(barmode="group")
    return fig


def night_trend(trend: pl.DataFrame) -> go.Figure:
    """Findings per night (bars, by severity: high and the rest) and rounds per night (line, right axis):
    tonight against the nights before (pipelines.audit.trend.night_totals)."""
    fig = go.Figure()
    per_night = trend.group_by("gaming_day").agg(
        pl.col("rounds").sum(), pl.col("findings").sum(), pl.col("high_findings").sum(), pl.col("tonight").any()
    ).sort("gaming_day")
    days = [d.isoformat() for d in per_night["gaming_day"].to_list()]
    high = per_night["high_findings"].to_list()
    other = [a - b for a, b in zip(per_night["findings"].to_list(), high)]
    fig.add_bar(x=days, y=high, name="high findings", marker_color=SEVERITY_COLOURS["high"])
    fig.add_bar(x=days, y=other, name="other findings", marker_color=SEVERITY_COLOURS["low"])
    fig.add_scatter(x=days, y=per_night["rounds"].to_list(), name="rounds", yaxis="y2", mode="lines+markers",
                    line={"color": "#1570ef"})
    for day, tonight in zip(days, per_night["tonight"].to_list()):
        if tonight:
            fig.add_vline(x=day, line_dash="dot", line_color="#667085")
    fig = _layout(fig, "Night after night: findings (bars) and rounds (line)", height=320)
    fig.update_layout(yaxis2={"overlaying": "y", "side": "right", "showgrid": False, "rangemode": "tozero"},
                      xaxis={"type": "category"})
    return fig


def fragment(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG)
