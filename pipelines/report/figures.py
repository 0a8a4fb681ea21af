"""The report's plotly figures, each a function of a frame (no I/O).

Every figure is rendered to an HTML fragment without plotly.js (the report embeds it once) and with a
fixed div id, so the same frames give the same fragment. Plotly reads a small HTML subset in labels
(``<b>``, ``<a href>``): every label that comes from a log goes through :func:`label` first, so a player
id of ``<img src=x onerror=alert(1)>`` is drawn as those characters. Money is drawn in major units of one
currency per figure (never summed across currencies); the hover text carries the exact amount.
"""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go
import polars as pl

from pipelines.currency import format_money, minor_units

SEVERITY_COLOURS = {"high": "#b42318", "medium": "#dc6803", "low": "#98a2b3"}
SEVERITIES = ("high", "medium", "low")
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}


def label(value) -> str:
    """A value from the input as plotly text: its ``&``, ``<`` and ``>`` HTML-escaped, so plotly's tag subset cannot act
    on it. Quotes stay as they are: no tag opens without ``<``, and plotly drew an escaped ``"`` as the six characters
    ``&quot;`` (a dealer id ``D"1`` read ``D&quot;1`` on the charts)."""
    return html.escape("(none)" if value is None else str(value), quote=False)


# characters of a value from the input drawn as a tick label: a player id of 5,000 characters drawn whole took the
# chart's width and squeezed every bar into a sliver at its edge (the ids stay whole as the categories and in the tables)
LABEL_MAX = 40


def short_label(value) -> str:
    """:func:`label` of ``value`` cut to :data:`LABEL_MAX` characters (the last one an ellipsis) when longer."""
    text = "(none)" if value is None else str(value)
    return label(text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 1] + "…")


def short_ticks(values: list) -> dict | None:
    """The tick values and texts of a category axis of ``values`` (from the input) when one of them is longer than
    :data:`LABEL_MAX`, else None (the axis draws them as they are)."""
    if not any(len("(none)" if v is None else str(v)) > LABEL_MAX for v in values):
        return None
    return {"tickmode": "array", "tickvals": [label(v) for v in values], "ticktext": [short_label(v) for v in values]}


def major(amount: int | None, currency: str | None) -> float | None:
    """An amount in major units for a chart axis (display only: the exact amount is in the hover text)."""
    if amount is None:
        return None
    return amount / 10 ** (minor_units(currency) or 0)


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    fig.update_layout(
        template="none",
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


def log_handle_axis(fig: go.Figure, currency: str) -> None:
    """The handle on a log scale, its ticks at 1, 2 and 5 of each decade written whole (20k, 50k, 100k): plotly's
    default wrote the decade's other ticks as bare digits (2 3 4 ... 100k 2 3), which read as handles of 2 and 3."""
    fig.update_xaxes(type="log", dtick="D2", minorloglabels="complete", title_text=f"handle ({label(currency)}, log scale)")


def legend_below_log_axis(fig: go.Figure) -> go.Figure:
    """A funnel's legend clear of its x axis: a log axis writes its tick labels in two sizes (the decades larger) and
    its title under them, where the common legend (``y = -0.15``) sat on the title."""
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.32})
    return fig


def _empty(fig: go.Figure, text: str) -> None:
    fig.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")


def findings_by(findings: pl.DataFrame, by: str, title: str, top: int = 30) -> go.Figure:
    """Horizontal bars stacked by severity, the ``top`` values of ``by`` with the most findings."""
    fig = go.Figure()
    data = findings.filter(pl.col(by).is_not_null())
    if data.height:
        counts = data.group_by([by, "severity"]).len().rename({"len": "n"})
        order = (
            counts.group_by(by).agg(pl.col("n").sum()).sort(["n", by], descending=[True, False]).head(top)[by].to_list()
        )
        for sev in SEVERITIES:
            sub = counts.filter(pl.col("severity") == sev)
            lookup = dict(zip(sub[by].to_list(), sub["n"].to_list()))
            fig.add_bar(y=[label(k) for k in order][::-1], x=[lookup.get(k, 0) for k in order][::-1], name=sev,
                        orientation="h", marker_color=SEVERITY_COLOURS[sev])
        fig.update_yaxes(type="category", **(short_ticks(order[::-1]) or {}))
        n = len(order)
    else:
        _empty(fig, "no findings")
        n = 1
    return _layout(fig, title, height=max(260, 90 + 22 * n))


def findings_by_hour(findings: pl.DataFrame) -> go.Figure:
    """Findings per local hour of the round's close (findings with no round time are left out)."""
    fig = go.Figure()
    data = findings.filter(pl.col("hour").is_not_null()) if "hour" in findings.columns else findings.clear()
    if data.height:
        counts = data.group_by(["hour", "severity"]).len().rename({"len": "n"})
        for sev in SEVERITIES:
            sub = counts.filter(pl.col("severity") == sev)
            lookup = dict(zip(sub["hour"].to_list(), sub["n"].to_list()))
            fig.add_bar(x=[f"{h:02d}:00" for h in range(24)], y=[lookup.get(h, 0) for h in range(24)], name=sev,
                        marker_color=SEVERITY_COLOURS[sev])
        fig.update_xaxes(type="category")
    else:
        _empty(fig, "no findings with a round time")
    return _layout(fig, "Findings by local hour of the round (table's own clock)", height=300)


def money_by_kind(findings: pl.DataFrame, currency: str) -> go.Figure:
    """Player overpaid and underpaid per kind, in one currency's major units."""
    fig = go.Figure()
    m = findings.filter((pl.col("currency") == currency) & pl.col("difference").is_not_null()
                        & (pl.col("difference") != 0))
    if m.height:
        agg = m.group_by("kind").agg(
            pl.col("difference").filter(pl.col("difference") > 0).sum().alias("over"),
            (-pl.col("difference").filter(pl.col("difference") < 0)).sum().alias("under"),
        ).sort("kind")
        kinds = [label(k) for k in agg["kind"].to_list()]
        for col, name, colour in (("over", "player overpaid", "#b42318"), ("under", "player underpaid", "#1570ef")):
            vals = agg[col].to_list()
            fig.add_bar(x=kinds, y=[major(v or 0, currency) for v in vals], name=name, marker_color=colour,
                        hovertext=[label(format_money(v or 0, currency)) for v in vals], hoverinfo="text+name")
    else:
        _empty(fig, "no money at stake")
    fig = _layout(fig, f"Money at stake by kind, {label(currency)}", height=280)
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text=label(currency))
    return fig


def hold_funnel(hold: pl.DataFrame, currency: str) -> go.Figure:
    """A funnel plot per currency: each table's hold minus its theory (percentage points) against its handle,
    with each game's typical 95 % band (1.96 sd / handle), which narrows as the handle grows. A table is
    marked outside against its own band (its own bets), which the typical curve only approximates.

    ``hold`` has the columns of :func:`pipelines.report.theory.hold_by_table` (game, table_id, currency,
    handle, hold_pct, theo_pct, band_lo_pct, band_hi_pct, outside); a frame from the hold detector with the
    same columns draws the same way.
    """
    fig = go.Figure()
    data = hold.filter((pl.col("currency") == currency) & pl.col("hold_pct").is_not_null()
                       & pl.col("theo_pct").is_not_null() & (pl.col("handle") > 0)).sort("handle")
    palette = ("#1d4ed8", "#059669", "#7c3aed", "#b45309", "#0e7490", "#be185d")
    if data.height:
        for n, game in enumerate(sorted(data["game"].drop_nulls().unique().to_list())):
            g = data.filter(pl.col("game") == game)
            colour = palette[n % len(palette)]
            x = [major(h, currency) for h in g["handle"].to_list()]
            excess = [100 * (h - t) for h, t in zip(g["hold_pct"].to_list(), g["theo_pct"].to_list())]
            outside = [bool(o) for o in g["outside"].to_list()]
            fig.add_scatter(
                x=x, y=excess, mode="markers", name=label(game), legendgroup=label(game),
                marker={"size": [10 if o else 7 for o in outside], "symbol": ["x" if o else "circle" for o in outside],
                        "color": ["#b42318" if o else colour for o in outside]},
                text=[f"{label(t)}: hold {100 * h:.2f} %, theory {100 * th:.2f} %"
                      for t, h, th in zip(g["table_id"].to_list(), g["hold_pct"].to_list(), g["theo_pct"].to_list())],
                hovertemplate="%{text}<extra></extra>",
            )
            # the game's typical band: half width c / sqrt(handle), c the median over its tables of
            # (band half width) * sqrt(handle) (each table is judged against its own band, from its own bets)
            widths = sorted((b - t) * math.sqrt(h) for b, t, h in zip(
                g["band_hi_pct"].to_list(), g["theo_pct"].to_list(), g["handle"].to_list()) if b is not None)
            if widths:
                c = widths[len(widths) // 2]
                lo_h, hi_h = g["handle"].min(), g["handle"].max()
                hs = [lo_h * (hi_h / lo_h) ** (k / 40) for k in range(41)] if hi_h > lo_h else [lo_h * 0.8, lo_h * 1.25]
                xs = [major(round(h), currency) for h in hs]
                for sign, show in ((1, True), (-1, False)):
                    fig.add_scatter(x=xs, y=[sign * 100 * c / math.sqrt(h) for h in hs], mode="lines",
                                    line={"color": colour, "dash": "dot", "width": 1.5},
                                    name=f"{label(game)}: 95 % band", legendgroup=label(game), showlegend=show,
                                    hoverinfo="skip")
        fig.add_hline(y=0, line={"color": "#98a2b3", "width": 1})
        log_handle_axis(fig, currency)
        fig.update_yaxes(title_text="hold minus theory (points)")
    else:
        _empty(fig, "no handle with a theoretical figure")
    return legend_below_log_axis(_layout(fig, f"Hold minus theory per table, {label(currency)} (red x: outside its own 95 % band)",
                                         height=420))


def trend(trend_frame: pl.DataFrame, currency: str) -> go.Figure:
    """House win per gaming day in one currency (bars, tonight dark) and the findings (line, right axis).

    ``trend_frame``: ``pipelines.audit.trend.TREND_SCHEMA`` (gaming_day, currency, tonight, rounds, wagers, handle,
    recorded_net, expected_net, findings, high_findings); the house win is minus the players' recorded net.
    """
    fig = go.Figure()
    data = trend_frame.filter(pl.col("currency") == currency).sort("gaming_day")
    if data.height:
        days = [d.isoformat() for d in data["gaming_day"].to_list()]
        wins = [None if v is None else -int(v) for v in data["recorded_net"].to_list()]
        colours = ["#1d4ed8" if t else "#93c5fd" for t in data["tonight"].to_list()]
        fig.add_bar(x=days, y=[major(v, currency) for v in wins], name="house win", marker_color=colours,
                    hovertext=[label(format_money(v, currency)) for v in wins], hoverinfo="text+x")
        fig.add_scatter(x=days, y=data["findings"].to_list(), name="findings", yaxis="y2", mode="lines+markers",
                        line={"color": "#b42318"})
        # the findings' own ticks, whole numbers from 0: the overlaying axis's automatic ticks fell on the bars' grid
        # lines (2.58, 5.16 ... findings, and from 21 up where a night's house win was below 0)
        most = max([0, *(v for v in data["findings"].to_list() if v is not None)])
        fig.update_layout(yaxis2={"overlaying": "y", "side": "right", "title": {"text": "findings"}, "showgrid": False,
                                  "tickmode": "linear", "tick0": 0, "dtick": count_step(most), "tickformat": ",d",
                                  "range": [0, max(most, 1) * 1.08]},
                          yaxis={"title": {"text": f"house win ({label(currency)})"}})
        fig.update_xaxes(type="category")
    else:
        _empty(fig, "no nights")
    return _layout(fig, f"Night after night, {label(currency)}: house win (bars; dark: tonight) and findings (line)",
                   height=320)


def count_step(most: int, ticks: int = 6) -> int:
    """A whole tick step (1, 2, 5, 10, 20, 50 ...) that puts at most ``ticks`` steps between 0 and ``most``."""
    step = 1
    while most / step > ticks:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return step


def fragment(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG)
