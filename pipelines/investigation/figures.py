"""The investigation's plotly figures: functions of frames, rendered without plotly.js (the page embeds it once)
and with fixed div ids, so the same rows give the same page. Amounts are drawn in the currency's major units
where the report's ISO 4217 table is installed (a chart's scale, never an amount anyone is paid)."""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl

FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
CONFIG = {"displaylogo": False, "responsive": True}


def unit(currency: str | None) -> tuple[int, str]:
    """(divisor, label) that turn a smallest-unit amount into the chart's unit."""
    try:
        from pipelines.report.money import minor_units
    except ImportError:
        return 1, f"{currency} (smallest unit)"
    digits = minor_units(currency)
    return (1, f"{currency} (smallest unit)") if digits is None else (10 ** digits, str(currency))


def _layout(fig: go.Figure, title: str, y: str, x: str, height: int = 380) -> go.Figure:
    fig.update_layout(title={"text": title, "x": 0, "font": {"size": 14}}, font={"family": FONT, "size": 12}, height=height,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "y": -0.2},
                      plot_bgcolor="#fff", paper_bgcolor="#fff", xaxis_title=x, yaxis_title=y)
    fig.update_xaxes(gridcolor="#eef0f3", automargin=True)
    fig.update_yaxes(gridcolor="#eef0f3", automargin=True, zerolinecolor="#c5ccd3")
    return fig


def results_figure(curve: pl.DataFrame, currency: str) -> go.Figure:
    """Cumulative net as recorded and as the rules settle it, against theory with its 95 % band."""
    c = curve.filter(pl.col("currency") == currency)
    div, label = unit(currency)
    x = c["at"].to_list() if c["at"].null_count() == 0 else c["n"].to_list()
    f = lambda col: (c[col].cast(pl.Float64) / div).to_list()  # noqa: E731
    fig = go.Figure([
        go.Scatter(x=x, y=f("band_hi"), mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip"),
        go.Scatter(x=x, y=f("band_lo"), mode="lines", line={"width": 0}, fill="tonexty", fillcolor="rgba(36,87,166,0.15)",
                   name="95 % band of chance"),
        go.Scatter(x=x, y=f("cum_theory"), mode="lines", line={"color": "#2457a6", "dash": "dash"}, name="expected (theory)"),
        go.Scatter(x=x, y=f("cum_rules"), mode="lines", line={"color": "#039855"}, name="as the rules settle it"),
        go.Scatter(x=x, y=f("cum_recorded"), mode="lines", line={"color": "#b42318"}, name="as recorded (paid)"),
    ])
    return _layout(fig, f"Cumulative net to the player(s), {label}", f"net ({label})", "bets closed (UTC)" if x and not isinstance(x[0], int) else "wager")


def count_figure(rows: pl.DataFrame, ramp: dict) -> go.Figure:
    """Bet size against the true count before the round, with the mean bet per count."""
    currency = rows["currency"][0] if rows.height else None
    div, label = unit(currency)
    fig = go.Figure([
        go.Scatter(x=rows["true_count"].to_list(), y=(rows["amount"].cast(pl.Float64) / div).to_list(), mode="markers",
                   marker={"size": 7, "opacity": 0.55, "color": "#2457a6"}, name="a wager", text=rows["wager_id"].to_list()),
        go.Scatter(x=[b["tc"] + 0.5 for b in ramp["by_count"]], y=[b["mean_bet"] / div for b in ramp["by_count"]],
                   mode="lines+markers", line={"color": "#b42318"}, name="mean bet per true count"),
    ])
    r = ramp.get("correlation")
    title = "Bet size against the Hi-Lo true count before the round" + (f" (r = {r:.2f})" if r is not None else "")
    return _layout(fig, title, f"bet ({label})", "true count before the round")


def bars(labels: list, values: list, title: str, y: str, colour: str = "#2457a6") -> go.Figure:
    fig = go.Figure(go.Bar(x=[str(v) for v in labels], y=values, marker_color=colour))
    return _layout(fig, title, y, "", height=340)


def fragment(fig: go.Figure, div_id: str) -> str:
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=CONFIG)
