"""The investigation's plotly figures: functions of frames, rendered without plotly.js (the pages of an output folder
share one copy of it) and with fixed div ids, so the same rows give the same page. Amounts are drawn in the
currency's major units where the report's ISO 4217 table is installed (a chart's scale, never an amount anyone is
paid).

Each figure is built as the plain dict plotly's own validation would produce (``*_spec``; ``go.Figure(spec)``
gives it back unchanged, key order included: ``tests/test_investigate_command.py``), because validating a
30-day curve of tens of thousands of points copied every one of them several times: on a database of 10
nights, most of the audit's publish step. The ``*_figure`` functions wrap the same dicts in ``go.Figure`` for
the notebooks.
"""

from __future__ import annotations

import html
from functools import lru_cache

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl

MAX_POINTS = 2_000  # points drawn per trace of the results figure; the full series is in results_over_time.*
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
CONFIG = {"displaylogo": False, "responsive": True}


def _text(value) -> str:
    """A value from the log as plotly text, its ``&``, ``<`` and ``>`` HTML-escaped as the report's labels are
    (``pipelines.report.figures.label``): plotly reads ``<a href>``, ``<b>`` and ``<br>`` in a label, so a dealer id
    ``<a href="https://...">`` was drawn as a live link on the dealers' bars. Quotes stay (no tag can open without
    ``<``, and plotly draws ``&quot;`` as those six characters)."""
    return html.escape(str(value), quote=False)


def unit(currency: str | None) -> tuple[int, str]:
    """(divisor, label) that turn a smallest-unit amount into the chart's unit."""
    try:
        from pipelines.currency import minor_units
    except ImportError:
        return 1, f"{_text(currency)} (smallest unit)"
    digits = minor_units(currency)
    return (1, f"{_text(currency)} (smallest unit)") if digits is None else (10 ** digits, _text(currency))


@lru_cache(maxsize=1)
def _template() -> dict:
    """The default template plotly puts into every figure's layout (read once; only ever serialised)."""
    return go.Figure().to_dict()["layout"]["template"]


def _layout(fig: go.Figure, title: str, y: str, x: str, height: int = 380) -> go.Figure:
    """The investigation's look on a plotly figure (the notebooks' own charts)."""
    fig.update_layout(title={"text": title, "x": 0, "font": {"size": 14}}, font={"family": FONT, "size": 12}, height=height,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "y": -0.2},
                      plot_bgcolor="#fff", paper_bgcolor="#fff", xaxis_title=x, yaxis_title=y)
    fig.update_xaxes(gridcolor="#eef0f3", automargin=True)
    fig.update_yaxes(gridcolor="#eef0f3", automargin=True, zerolinecolor="#c5ccd3")
    return fig


def _layout_spec(title: str, y: str, x: str, height: int = 380) -> dict:
    """What :func:`_layout` gives a new figure's layout, as the dict plotly's validation makes of it."""
    return {"template": _template(), "title": {"font": {"size": 14}, "text": title, "x": 0},
            "font": {"family": FONT, "size": 12}, "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
            "legend": {"orientation": "h", "y": -0.2}, "height": height, "plot_bgcolor": "#fff", "paper_bgcolor": "#fff",
            "xaxis": {"title": {"text": x}, "gridcolor": "#eef0f3", "automargin": True},
            "yaxis": {"title": {"text": y}, "gridcolor": "#eef0f3", "automargin": True, "zerolinecolor": "#c5ccd3"}}


def thinned(c: pl.DataFrame, bound: int = MAX_POINTS) -> pl.DataFrame:
    """At most ``bound`` rows of one currency's curve (:func:`analysis.results_over_time`), chosen so the drawn shape
    is honest: the first and the last wager, and in each of ``(bound - 2) // 2`` equal buckets of the wagers between
    them, the two where the recorded net is farthest above and farthest below theory (min/max decimation: a peak
    or a dip the full curve has is never smoothed away, as taking every k-th point would). A curve of ``bound``
    rows or fewer is returned as it is.

    A 30-day curve holds a point per wager (tens of thousands); drawn whole, its five traces made most of each
    audit page's megabytes and of the publish step's time. The page says when a curve is thinned."""
    n = c.height
    if n <= max(bound, 2):
        return c
    buckets = max((bound - 2) // 2, 1)
    inner = c.select("cum_recorded", "cum_theory").slice(1, n - 2).with_row_index("_i", offset=1).with_columns(
        (pl.col("cum_recorded").cast(pl.Float64) - pl.col("cum_theory")).alias("_gap"),
        ((pl.col("_i").cast(pl.Int64) - 1) * buckets // (n - 2)).alias("_b"),
    )
    picks = inner.group_by("_b").agg(
        pl.col("_i").sort_by(["_gap", "_i"], nulls_last=True).first().alias("_lo"),
        pl.col("_i").sort_by([-pl.col("_gap"), "_i"], nulls_last=True).first().alias("_hi"),
    )
    keep = sorted({0, n - 1, *picks["_lo"].to_list(), *picks["_hi"].to_list()})
    return c[keep]


def results_spec(curve: pl.DataFrame, currency: str, max_points: int | None = MAX_POINTS) -> dict:
    """Cumulative net as recorded and as the rules settle it, against theory with its 95 % band; each trace at most
    ``max_points`` points (:func:`thinned`; None: every wager's point)."""
    c = curve.filter(pl.col("currency") == currency)
    if max_points is not None:
        c = thinned(c, max_points)
    div, label = unit(currency)
    x = c["at"].to_list() if c["at"].null_count() == 0 else c["n"].to_list()
    f = lambda col: (c[col].cast(pl.Float64) / div).to_list()  # noqa: E731
    data = [
        {"hoverinfo": "skip", "line": {"width": 0}, "mode": "lines", "showlegend": False, "x": x, "y": f("band_hi"),
         "type": "scatter"},
        {"fill": "tonexty", "fillcolor": "rgba(36,87,166,0.15)", "line": {"width": 0}, "mode": "lines",
         "name": "95 % band of chance", "x": x, "y": f("band_lo"), "type": "scatter"},
        {"line": {"color": "#2457a6", "dash": "dash"}, "mode": "lines", "name": "expected (theory)", "x": x,
         "y": f("cum_theory"), "type": "scatter"},
        {"line": {"color": "#039855"}, "mode": "lines", "name": "as the rules settle it", "x": x, "y": f("cum_rules"),
         "type": "scatter"},
        {"line": {"color": "#b42318"}, "mode": "lines", "name": "as recorded (paid)", "x": x, "y": f("cum_recorded"),
         "type": "scatter"},
    ]
    xlabel = "bets closed (UTC)" if x and not isinstance(x[0], int) else "wager"
    layout = _layout_spec(f"Cumulative net to the player(s), {label}", f"net ({label})", xlabel)
    # a time axis writes two rows of labels (Nov 8 / 2026) and its title under them, where the common legend (y = -0.2)
    # sat on the title: the legend goes below it
    layout["legend"] = {"orientation": "h", "y": -0.32, "yanchor": "top"}
    return {"data": data, "layout": layout}


def count_sample(rows: pl.DataFrame, bound: int = MAX_POINTS) -> pl.DataFrame:
    """At most about ``bound`` of the blackjack wagers (:func:`analysis.bet_vs_count`) to draw as markers, chosen so the
    drawn cloud is honest: ``bound`` wagers evenly spread through the rows (a systematic sample: the cloud's density
    where the wagers are dense), and, in each true count bucket of the ramp (floored, -3 to +5), its largest and its
    smallest bet (a big bet at a high count, what an investigator looks for, is never left out). At most ``bound``
    + 18 rows, in the rows' order; ``bound`` rows or fewer are returned as they are.

    A 30-day window of a busy blackjack table is tens of thousands of wagers, each a marker with its id: most of
    the page's bytes and a growing share of the publish step. The mean-bet line, the correlation and the ramp are
    computed from every wager (:func:`analysis.bet_ramp`); the page says when the markers are a sample."""
    n = rows.height
    if n <= max(bound, 1):
        return rows
    indexed = rows.with_row_index("_i").with_columns(
        pl.col("true_count").floor().clip(-3, 5).cast(pl.Int64).alias("_tc"))
    ends = indexed.group_by("_tc").agg(
        pl.col("_i").sort_by(["amount", "_i"]).first().alias("_lo"),
        pl.col("_i").sort_by([-pl.col("amount"), "_i"]).first().alias("_hi"),
    )
    keep = sorted({i * n // bound for i in range(bound)} | set(ends["_lo"].to_list()) | set(ends["_hi"].to_list()))
    return rows[keep]


def count_spec(rows: pl.DataFrame, ramp: dict, max_points: int | None = MAX_POINTS) -> dict:
    """Bet size against the true count before the round, with the mean bet per count (of every wager); the markers at
    most about ``max_points`` wagers (:func:`count_sample`; None: every wager)."""
    currency = ramp.get("currency", rows["currency"][0] if rows.height else None)
    if rows.height and currency is not None:
        rows = rows.filter(pl.col("currency") == currency)  # one scale: the ramp's currency (``analysis.bet_ramp``)
    div, label = unit(currency)
    if max_points is not None:
        rows = count_sample(rows, max_points)
    data = [
        {"marker": {"color": "#2457a6", "opacity": 0.55, "size": 7}, "mode": "markers", "name": "a wager",
         "text": [_text(w) for w in rows["wager_id"].to_list()], "x": rows["true_count"].to_list(),
         "y": (rows["amount"].cast(pl.Float64) / div).to_list(), "type": "scatter"},
        {"line": {"color": "#b42318"}, "mode": "lines+markers", "name": "mean bet per true count",
         "x": [b["tc"] + 0.5 for b in ramp["by_count"]], "y": [b["mean_bet"] / div for b in ramp["by_count"]],
         "type": "scatter"},
    ]
    r = ramp.get("correlation")
    title = "Bet size against the Hi-Lo true count before the round" + (f" (r = {r:.2f})" if r is not None else "")
    return {"data": data, "layout": _layout_spec(title, f"bet ({label})", "true count before the round")}


def bars_spec(labels: list, values: list, title: str, y: str, colour: str = "#2457a6") -> dict:
    """Bars of ids from the log on an axis of categories: plotly took ids that look like numbers ("007", "7", "1042")
    for a number line, one bar for "007" and "7". An id too long for a tick label is cut short on it."""
    from pipelines.report.figures import short_ticks

    data = [{"marker": {"color": colour}, "x": [_text(v) for v in labels], "y": list(values), "type": "bar"}]
    layout = _layout_spec(title, y, "", height=340)
    layout["xaxis"] = {**layout["xaxis"], "type": "category", **(short_ticks(labels) or {})}
    return {"data": data, "layout": layout}


def results_figure(curve: pl.DataFrame, currency: str, max_points: int | None = MAX_POINTS) -> go.Figure:
    return go.Figure(results_spec(curve, currency, max_points))


def count_figure(rows: pl.DataFrame, ramp: dict, max_points: int | None = MAX_POINTS) -> go.Figure:
    return go.Figure(count_spec(rows, ramp, max_points))


def bars(labels: list, values: list, title: str, y: str, colour: str = "#2457a6") -> go.Figure:
    return go.Figure(bars_spec(labels, values, title, y, colour))


def fragment(fig: go.Figure | dict, div_id: str) -> str:
    """The figure's div; a ``*_spec`` dict is written as it is (it is what validation would give)."""
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=CONFIG,
                       validate=not isinstance(fig, dict))
