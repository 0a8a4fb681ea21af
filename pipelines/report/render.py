"""Render the nightly audit report: one self-contained HTML file, from frames, through Jinja2 templates.

The templates (``templates/``) autoescape every value; the only markup passed through unescaped is what
this package makes itself: plotly's figure fragments (their data JSON-encoded, every label from a log
HTML-escaped first, :func:`pipelines.report.figures.label`) and the CSS, script and plotly.js files. The
findings table's data is base64 text (:func:`pipelines.report.payload.pack`), escaped like any value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2
import plotly.offline
import polars as pl
from markupsafe import Markup

from pipelines.report import detector_hold, figures, sections
from pipelines.report.links import evidence_href
from pipelines.currency import format_money, minor_units
from pipelines.report.payload import findings_payload, pack
from pipelines.report.theory import hold_by_game, hold_by_table, outside_by_chance

SEVERITIES = ("high", "medium", "low")


@dataclass(frozen=True)
class ReportInputs:
    """What the report shows. Only ``findings`` and ``totals`` are required; each optional frame adds a section.

    - ``findings``: the published findings (FINDINGS_SCHEMA), plus, when known, ``p_value`` and ``q_value``
      (issue 11's statistical detectors) and ``hour``/``closed_local`` (:func:`pipelines.report.gather.finding_times`,
      joined here from ``finding_times``).
    - ``totals``: per currency: rounds, wagers, wagered, recorded, expected, unsettled
      (:func:`pipelines.audit.publish.settlement_totals`).
    - ``bets``: per game, rule-set version, table, currency and bet: wagers, handle, handle_sq, house_win
      (:func:`pipelines.report.gather.bet_aggregates`): the hold against theory is computed from it.
    - ``hold``: per table, the columns of :func:`pipelines.report.theory.hold_by_table`; when the hold
      detector provides this frame it replaces the one computed from ``bets`` in the funnel and the table.
    - ``trend``: tonight and the nights before, ``pipelines.audit.trend.TREND_SCHEMA`` (one row per gaming day
      and currency, ``tonight`` marking the audited days; ``pipelines.audit.trend.night_totals``).
    - ``quarantine`` (source_file, source_line, reason, raw) and ``source_files`` (core_source_files' columns).
    """

    findings: pl.DataFrame
    totals: pl.DataFrame
    days: tuple = ()  # the gaming days audited
    tables: int = 0  # the tables audited
    quarantined: int = 0
    input_files: tuple[tuple[str, str, int, int, int], ...] = ()  # (source_file, kind, lines, accepted, quarantined)
    extra: dict = field(default_factory=dict)  # label -> value, shown with the totals
    top_n: int = 5  # how many tables, dealers, players the summary names
    bets: pl.DataFrame | None = None
    hold: pl.DataFrame | None = None
    trend: pl.DataFrame | None = None
    quarantine: pl.DataFrame | None = None
    source_files: pl.DataFrame | None = None
    finding_times: pl.DataFrame | None = None  # finding_id, hour, closed_local
    database: str = "pitaudit.duckdb"  # named in the evidence command the report suggests
    # the pages the audit wrote beside the report (pipelines.report.linked): which rounds have an evidence pack
    # (pipelines.evidence.batch.PackIndex; None: the report links every round where `pitaudit evidence` writes)
    # and each statistical finding's investigation (finding_id -> relative link)
    packs: object = None
    investigations: dict | None = None
    # finding_id -> where a hold finding came from: a dealer's at which tables, a table's under which dealers, from the
    # subject's page (pipelines.report.where)
    where: dict | None = None
    # the hold detector's rows (pipelines.stats.run.funnel_frame, funnel_curves_frame of the audited nights): the
    # funnel is drawn from them and the tables they judge take their band (pipelines.report.detector_hold)
    funnel: pl.DataFrame | None = None
    funnel_curves: pl.DataFrame | None = None


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipelines.report", "templates"),
        autoescape=True,  # every {{ value }} is escaped, whatever the template's name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["n"] = lambda v: "" if v is None else f"{v:,}"
    return env


def _asset(name: str) -> str:
    return (resources.files("pipelines.report") / "assets" / name).read_text(encoding="utf-8")


def _with_times(findings: pl.DataFrame, times: pl.DataFrame | None) -> pl.DataFrame:
    drop = [c for c in ("hour", "closed_local") if c in findings.columns]
    if times is None or times.height == 0:
        if drop:
            return findings
        return findings.with_columns(pl.lit(None, pl.Int32).alias("hour"), pl.lit(None, pl.String).alias("closed_local"))
    t = times.select("finding_id", pl.col("hour").cast(pl.Int32), pl.col("closed_local").cast(pl.String)).unique(
        "finding_id", keep="first")
    return findings.drop(drop).join(t, on="finding_id", how="left", maintain_order="left")


def _files(inputs: ReportInputs) -> pl.DataFrame:
    if inputs.source_files is not None:
        return inputs.source_files
    return pl.DataFrame(
        [{"source_file": f[0], "kind": f[1], "status": "loaded", "lines_read": f[2], "rows_accepted": f[3],
          "rows_quarantined": f[4], "rows_duplicate": None, "error": None} for f in inputs.input_files],
        schema={"source_file": pl.String, "kind": pl.String, "status": pl.String, "lines_read": pl.Int64,
                "rows_accepted": pl.Int64, "rows_quarantined": pl.Int64, "rows_duplicate": pl.Int64, "error": pl.String})


def _summary(f: pl.DataFrame, totals: pl.DataFrame, hold: pl.DataFrame, files: pl.DataFrame, quarantined: int,
             stat: sections.Table | None, packs=None) -> dict:
    """The top of the report: what went wrong, how much, where to look, in sentences and short lists."""
    by_sev = dict(f.group_by("severity").len().iter_rows()) if f.height else {}
    money = f.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))
    per_currency = []
    for r in money.group_by("currency").agg(
            pl.col("difference").filter(pl.col("difference") > 0).sum().alias("over"),
            (pl.col("difference") > 0).sum().alias("n_over"),
            (-pl.col("difference").filter(pl.col("difference") < 0)).sum().alias("under"),
            (pl.col("difference") < 0).sum().alias("n_under")).sort("currency", nulls_last=True).iter_rows(named=True):
        per_currency.append({"currency": r["currency"] or "(no currency)",
                             "over": format_money(r["over"] or 0, r["currency"]), "n_over": r["n_over"],
                             "under": format_money(r["under"] or 0, r["currency"]), "n_under": r["n_under"]})
    largest = []
    for r in money.with_columns(pl.col("difference").abs().alias("_abs")).sort(
            ["_abs", "finding_id"], descending=[True, False]).group_by("currency", maintain_order=True).head(3).sort(
            ["currency", "_abs"], descending=[False, True], nulls_last=True).iter_rows(named=True):
        largest.append({
            "amount": format_money(r["difference"], r["currency"], signed=True), "kind": r["kind"],
            "table": r["table_id"], "round": r["round_no"], "player": r["player_id"], "dealer": r["dealer_id"],
            "rule": r["rule_ref"],
            "href": evidence_href(r["table_id"], r["round_no"]) if r["table_id"] and r["round_no"] is not None and (
                packs is None or packs.has_pack(r["table_id"], r["round_no"], r["gaming_day"])) else None,
        })
    outside = hold.filter(pl.col("outside").fill_null(False)).sort("house_win") if hold.height else hold
    judged, by_chance, chance_bound = outside_by_chance(hold)
    unreadable = files.filter(pl.col("status") == "unreadable") if files.height else files
    kinds = f.group_by("kind").len().sort(["len", "kind"], descending=[True, False]) if f.height else None
    return {
        "findings": f.height, "high": by_sev.get("high", 0), "medium": by_sev.get("medium", 0),
        "low": by_sev.get("low", 0),
        "kinds": [{"kind": k, "n": n} for k, n in kinds.iter_rows()] if kinds is not None else [],
        "money": per_currency,
        "largest": largest,
        "tables": sections.where_to_look(f, "table_id"),
        "dealers": sections.where_to_look(f, "dealer_id"),
        "players": sections.where_to_look(f, "player_id"),
        "outside": [{"table": r["table_id"], "game": r["game"],
                     "hold": f"{100 * r['hold_pct']:.2f} %" if r["hold_pct"] is not None else "",
                     "theory": f"{100 * r['theo_pct']:.2f} %" if r["theo_pct"] is not None else "",
                     "band": (f"{100 * r['band_lo_pct']:.2f} .. {100 * r['band_hi_pct']:.2f} %"
                              if r["band_lo_pct"] is not None else "")} for r in outside.head(5).iter_rows(named=True)],
        "n_outside": outside.height, "n_hold_tables": hold.height,
        "n_judged": judged, "outside_by_chance": by_chance, "beyond_chance": outside.height > chance_bound,
        "statistical": len(stat.rows) if stat else 0,
        "quarantined": quarantined, "unreadable": unreadable.height,
        "gaps": f.filter(pl.col("kind") == "sequence_gap").height,
        "unmatched": f.filter(pl.col("kind") == "unmatched_round").height,
        "changed": f.filter(pl.col("kind") == "source_changed").height,
        "unsettled": int(totals["unsettled"].sum() or 0) if totals.height else 0,
        "rounds": int(totals["rounds"].sum() or 0) if totals.height else 0,
        "wagers": int(totals["wagers"].sum() or 0) if totals.height else 0,
    }


def render_report(inputs: ReportInputs) -> str:
    """The whole report as one HTML string (plotly.js inline)."""
    f = _with_times(inputs.findings, inputs.finding_times)
    t = inputs.totals
    days = sorted(set(inputs.days) | set(f["gaming_day"].drop_nulls().to_list()))
    tables = inputs.tables or f["table_id"].drop_nulls().n_unique()
    bets = inputs.bets
    hold_tables = inputs.hold if inputs.hold is not None else (hold_by_table(bets) if bets is not None else None)
    hold_games = hold_by_game(bets) if bets is not None else None
    files = _files(inputs)
    quarantine = inputs.quarantine
    quarantined = quarantine.height if quarantine is not None else inputs.quarantined
    stat = sections.statistical(f, investigations=inputs.investigations if inputs.packs is not None else None,
                                where=inputs.where)
    currencies = sorted(set(t["currency"].drop_nulls().to_list()) | set(f["currency"].drop_nulls().to_list()))
    money_currencies = sorted(f.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))[
        "currency"].drop_nulls().unique().to_list())
    hold_currencies = sorted(hold_tables["currency"].drop_nulls().unique().to_list()) if hold_tables is not None else []
    nights = inputs.trend
    trend_currencies = sorted(nights["currency"].drop_nulls().unique().to_list()) if nights is not None else []

    figs = {
        "kind": figures.fragment(figures.findings_by(f, "kind", "Findings by kind"), "fig-kind"),
        "table": figures.fragment(figures.findings_by(f, "table_id", "Findings by table (top 30)"), "fig-table"),
        "dealer": figures.fragment(figures.findings_by(f, "dealer_id", "Findings by dealer (top 30)"), "fig-dealer"),
        "player": figures.fragment(figures.findings_by(f, "player_id", "Findings by player (top 30)"), "fig-player"),
        "hour": figures.fragment(figures.findings_by_hour(f), "fig-hour"),
    }
    money_figs = [Markup(figures.fragment(figures.money_by_kind(f, c), f"fig-money-{i}"))
                  for i, c in enumerate(money_currencies)]
    detector = inputs.funnel is not None and detector_hold.funnel_points(inputs.funnel).height > 0
    if detector:
        hold_tables = detector_hold.with_detector_bands(hold_tables, inputs.funnel) if hold_tables is not None else None
        funnel_currencies = sorted(detector_hold.funnel_points(inputs.funnel)["currency"].drop_nulls().unique().to_list())
        funnel_figs = [Markup(figures.fragment(detector_hold.funnel_figure(inputs.funnel, inputs.funnel_curves, c),
                                               f"fig-hold-{i}")) for i, c in enumerate(funnel_currencies)]
    else:
        funnel_figs = [Markup(figures.fragment(figures.hold_funnel(hold_tables, c), f"fig-hold-{i}"))
                       for i, c in enumerate(hold_currencies)]
    trend_figs = [Markup(figures.fragment(figures.trend(nights, c), f"fig-trend-{i}"))
                  for i, c in enumerate(trend_currencies)]
    if hold_tables is not None and hold_tables.height:
        # tables outside their band first, then by game and table
        hold_tables_sorted = hold_tables.with_columns(pl.col("outside").fill_null(False).not_().alias("_o")).sort(
            ["_o", "game", "table_id", "currency"], nulls_last=True)
    else:
        hold_tables_sorted = hold_tables

    page = _env().get_template("report.html.j2").render(
        css=Markup(_asset("report.css")),
        script=Markup(_asset("report.js")),
        plotlyjs=Markup(plotly.offline.get_plotlyjs()),
        days=", ".join(d.isoformat() for d in days) if days else "none",
        tables=tables,
        currencies=currencies,
        decimals={c: minor_units(c) for c in currencies},
        summary=_summary(f, t, hold_tables if hold_tables is not None else pl.DataFrame(
            schema={"outside": pl.Boolean, "house_win": pl.Int64}), files, quarantined, stat, inputs.packs),
        extra=inputs.extra,
        money_table=sections.money_by_currency(f, t),
        figs={k: Markup(v) for k, v in figs.items()},
        money_figs=money_figs,
        funnel_figs=funnel_figs,
        trend_figs=trend_figs,
        hold_games=sections.hold_table(hold_games, False) if hold_games is not None else None,
        hold_tables=sections.hold_table(hold_tables_sorted, True) if hold_tables_sorted is not None else None,
        hold_from_detector=inputs.hold is not None,
        funnel_from_detector=detector,
        pairs=sections.pairs_table(f),
        stat=stat,
        has_p="p_value" in f.columns,
        files=sections.files_table(files),
        files_total={"n": files.height, "lines": int(files["lines_read"].sum() or 0) if files.height else 0,
                     "accepted": int(files["rows_accepted"].sum() or 0) if files.height else 0,
                     "quarantined": int(files["rows_quarantined"].sum() or 0) if files.height else 0},
        quarantine=sections.quarantine_table(quarantine) if quarantine is not None else None,
        quarantined=quarantined,
        data_findings=sections.data_findings_table(f),
        nights=nights,
        trend_table=sections.trend_table(nights) if nights is not None else None,
        findings_data=pack(findings_payload(f, inputs.database, inputs.packs, inputs.investigations)),
        packs=inputs.packs,
        n_findings=f.height,
    )
    return page


def write_report(path: Path, inputs: ReportInputs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(inputs), encoding="utf-8")
    return path
