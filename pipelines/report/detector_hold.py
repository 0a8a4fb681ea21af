"""The report's hold funnel and per-table bands from the hold detector (``out_stat_funnel``), so the two agree.

The hold detector (:mod:`pipelines.stats.hold`) judges each table's hold with the exact distribution of its
rounds (the Banker and Player bets of one round move together; the band carries the skew of the long-odds
bets). The report used to compute a normal band of its own from per-bet variances: two answers to one
question. Now the report draws the detector's rows:

- **the funnel**: one point per table of tonight's one-night window on all its bets (``entity_type = 'table'``,
  ``bet = 'all'``, ``window_days = 1``), or on its main game (``bet = 'main'``) for a table the detector judges on
  no all-bets level (Hold'em, blackjack), hold (not hold minus theory) against handle, with the detector's own
  band lines (:func:`pipelines.stats.run.funnel_curves_frame`: theory, 95 % and 99.7 % over a grid of
  handles; a row whose handle is beyond 64 bits, null in the table, is left out); a point outside its own 95 % band
  (``hold_low_95``..``hold_high_95``; a main game only below it: ``OUTSIDE``) is a red x;
- **the per-table table**: the tables the detector judged take its handle, house win, theory and band, and
  "outside" means outside the detector's band; the tables of games it does not judge keep the report's
  normal band (the note under the table says which).
"""

from __future__ import annotations

import datetime as dt

import plotly.graph_objects as go
import polars as pl

from pipelines.currency import format_money
from pipelines.report.figures import _empty, _layout, label, legend_below_log_axis, log_handle_axis, major

TONIGHT = (pl.col("entity_type") == "table") & (pl.col("bet") == "all") & (pl.col("window_days") == 1)
# a table the detector judges on no "all bets" level (Hold'em and blackjack: a seat's side bet and main game share
# its cards) is drawn by its main game
MAIN_GAME = (pl.col("entity_type") == "table") & (pl.col("bet") == "main") & (pl.col("window_days") == 1)
LEVEL_LABEL = {"all": "all bets", "main": "main game"}


def read_funnel(con, days) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """The detector's funnel rows and band lines of the audited nights, or (None, None) when it wrote none."""
    from pipelines.stats.hold import funnel_curves
    from pipelines.stats.run import FUNNEL_TABLE, funnel_frame

    have = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [FUNNEL_TABLE]).fetchall()[0][0]
    if not have:
        return None, None
    points, curves = [], []
    for night in sorted(set(days)):
        # a handle beyond 64 bits is null in the table (it is not drawn); the band lines are
        # funnel_curves_frame's, over the rows with a handle
        p = funnel_frame(con, night).filter(pl.col("handle").is_not_null() & (pl.col("handle") > 0))
        if p.height:
            points.append(p)
            curves.append(funnel_curves(p))
    if not points:
        return None, None
    return pl.concat(points, how="diagonal_relaxed"), pl.concat(curves, how="diagonal_relaxed")


#: a point outside its band: a main game's only below it (the detector tests it one-sided: a player who plays worse
#: than the stated strategy gives the house more, which is no anomaly; ``theory.DECISION_GAMES``)
OUTSIDE = (pl.col("hold") < pl.col("hold_low_95")) | ((pl.col("hold") > pl.col("hold_high_95")) & (pl.col("bet") != "main"))


def tonight(points: pl.DataFrame) -> pl.DataFrame:
    """The per-table rows on all bets of the one-night window (the nights audited), with ``outside`` (``OUTSIDE``)."""
    return points.filter(TONIGHT).with_columns(OUTSIDE.alias("outside")).sort("currency", "handle", "entity")


def funnel_points(points: pl.DataFrame) -> pl.DataFrame:
    """The funnel's points: each table of the one-night window on all its bets, or, for a table the detector
    judges on no such level (Hold'em, blackjack), on its main game; with ``outside`` (``OUTSIDE``)."""
    all_bets = points.filter(TONIGHT)
    main = points.filter(MAIN_GAME).join(all_bets.select("entity", "currency", *(["night"] if "night" in points.columns else [])),
                                         on=["entity", "currency", *(["night"] if "night" in points.columns else [])], how="anti")
    return pl.concat([all_bets, main], how="diagonal_relaxed").with_columns(OUTSIDE.alias("outside")).sort(
        "currency", "handle", "entity")


def with_detector_bands(hold_tables: pl.DataFrame, points: pl.DataFrame) -> pl.DataFrame:
    """The report's per-table hold frame with the detector's figures for the tables it judged (``band_from``
    says whose band a row carries)."""
    det = tonight(points).group_by("entity", "currency").agg(
        pl.col("handle").sum(), pl.col("house_win").sum(),
        # one night per row; several audited nights: the last night's band (the table is listed once per night
        # by the detector, once by the report)
        pl.col("theoretical_hold").last(), pl.col("hold_low_95").last(), pl.col("hold_high_95").last(),
        pl.col("outside").any(),
    ).rename({"entity": "table_id"})
    if det.height == 0:
        return hold_tables.with_columns(pl.lit("report").alias("band_from"))
    joined = hold_tables.join(det, on=["table_id", "currency"], how="left", suffix="_det")
    judged = pl.col("theoretical_hold").is_not_null()
    return joined.with_columns(
        pl.when(judged).then(pl.col("handle_det").cast(pl.Int128)).otherwise(pl.col("handle")).alias("handle"),
        pl.when(judged).then(pl.col("house_win_det").cast(pl.Int128)).otherwise(pl.col("house_win")).alias("house_win"),
        pl.when(judged).then(pl.col("house_win_det") / pl.col("handle_det")).otherwise(pl.col("hold_pct")).alias("hold_pct"),
        pl.when(judged).then(pl.col("theoretical_hold")).otherwise(pl.col("theo_pct")).alias("theo_pct"),
        pl.when(judged).then(pl.col("theoretical_hold") * pl.col("handle_det").cast(pl.Float64)).otherwise(
            pl.col("theo_win")).alias("theo_win"),
        pl.when(judged).then(pl.col("hold_low_95")).otherwise(pl.col("band_lo_pct")).alias("band_lo_pct"),
        pl.when(judged).then(pl.col("hold_high_95")).otherwise(pl.col("band_hi_pct")).alias("band_hi_pct"),
        pl.when(judged).then(pl.col("outside_det")).otherwise(pl.col("outside")).alias("outside"),
        pl.when(judged).then(pl.lit("hold detector")).otherwise(pl.lit("report")).alias("band_from"),
    ).select(*hold_tables.columns, "band_from")


def funnel_figure(points: pl.DataFrame, curves: pl.DataFrame | None, currency: str) -> go.Figure:
    """The detector's funnel for one currency: each table's hold against its handle, the band lines."""
    fig = go.Figure()
    every = funnel_points(points).filter((pl.col("currency") == currency) & (pl.col("handle") > 0))
    if every.height == 0:
        _empty(fig, "the hold detector judged no table in this currency")
        return _layout(fig, f"Hold per table against handle, {label(currency)}", height=420)
    for level, colour in (("all", "#1d4ed8"), ("main", "#059669")):
        data = every.filter(pl.col("bet") == level)
        if data.height:
            _level(fig, data, curves, currency, level, colour)
    log_handle_axis(fig, currency)
    fig.update_yaxes(title_text="hold (%)")
    return legend_below_log_axis(_layout(fig, f"Hold per table against handle, {label(currency)}, from the hold detector "
                                              "(red x: outside its own 95 % band)", height=440))


def _level(fig: go.Figure, data: pl.DataFrame, curves: pl.DataFrame | None, currency: str, level: str, colour: str) -> None:
    """One bet level's band lines and points ("tables, all bets" or "tables, main game")."""
    what = LEVEL_LABEL[level]
    cond = (pl.col("entity_type") == "table") & (pl.col("bet") == level) & (pl.col("window_days") == 1) & (
        pl.col("currency") == currency)
    lines = curves.filter(cond).sort(*(["night"] if "night" in curves.columns else []), "handle") \
        if curves is not None and curves.height else None
    if lines is not None and lines.height:
        x = [major(round(h), currency) for h in lines["handle"].to_list()]
        for col, name, dash, show in (("theoretical_hold", "theory", "solid", True), ("low_95", "95 % band", "dot", True),
                                      ("high_95", "95 % band", "dot", False), ("low_997", "99.7 % band", "dash", True),
                                      ("high_997", "99.7 % band", "dash", False)):
            fig.add_scatter(x=x, y=[100 * v for v in lines[col].to_list()], mode="lines", name=f"{name}, {what}",
                            legendgroup=f"{name}, {what}", showlegend=show, hoverinfo="skip",
                            line={"color": "#667085" if col == "theoretical_hold" else colour, "dash": dash, "width": 1.5})
    outside = data["outside"].to_list()
    fig.add_scatter(
        x=[major(h, currency) for h in data["handle"].to_list()], y=[100 * h for h in data["hold"].to_list()],
        mode="markers", name=f"tables, {what}",
        marker={"size": [10 if o else 7 for o in outside], "symbol": ["x" if o else "circle" for o in outside],
                "color": ["#b42318" if o else colour for o in outside]},
        text=[f"{label(t)} ({n}): hold {100 * h:.2f} % of {format_money(hd, currency)}, theory {100 * th:.2f} %, "
              f"band {100 * lo:.2f} .. {100 * hi:.2f} %, p = {p:.2g}"
              for t, n, h, hd, th, lo, hi, p in zip(
                  data["entity"].to_list(), [_night(d) for d in data["night"].to_list()] if "night" in data.columns
                  else [""] * data.height, data["hold"].to_list(), data["handle"].to_list(),
                  data["theoretical_hold"].to_list(), data["hold_low_95"].to_list(), data["hold_high_95"].to_list(),
                  data["p_value"].to_list())],
        hovertemplate="%{text}<extra></extra>",
    )


def _night(day) -> str:
    return day.isoformat() if isinstance(day, dt.date) else str(day)
