"""The report's sections as plain rows of display strings (the template only lays them out).

Each builder takes frames and returns lists of dicts or small records; amounts are formatted here in
their own currency (:mod:`pipelines.currency`) and never added across currencies. Escaping is the
template's job (Jinja2 autoescape): nothing here writes HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pipelines.currency import format_amount, format_money
from pipelines.id_cells import id_class
from pipelines.report.theory import above_by_decisions
from pipelines.stats.tests_frame import fmt_p

# the kinds of issue 11's statistical detectors; a finding with a p_value is statistical whatever its kind
STATISTICAL_KINDS = ("hold_anomaly", "player_luck_anomaly", "advantage_play", "collusion_pattern")
DATA_KINDS = ("sequence_gap", "unmatched_round", "source_changed")
NO_CURRENCY = "none (the data's findings)"  # the trend's row of a day's findings that name no currency


@dataclass
class Cell:
    """A table cell: the text shown, whether it is numeric (right-aligned; report.js sorts it by the number it
    shows), and a CSS class."""

    text: str
    num: bool = False
    cls: str = ""
    href: str | None = None  # a relative link (the pages the audit wrote beside the report)


def num(value, text: str | None = None, cls: str = "") -> Cell:
    if value is None:
        return Cell("", True, cls)
    return Cell(text if text is not None else f"{value:,}", True, cls)


def money(amount, currency, signed: bool = False) -> Cell:
    return Cell(format_amount(amount, currency, signed), True)


def pct(value, digits: int = 2) -> Cell:
    if value is None:
        return Cell("", True)
    return Cell(f"{100 * value:.{digits}f} %", True)


def text(value) -> Cell:
    return Cell("" if value is None else str(value))


def ident(value) -> Cell:
    """A table, dealer or player id (:mod:`pipelines.id_cells`: a short one keeps to one line)."""
    return Cell("" if value is None else str(value), False, id_class(value))


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]]
    note: str = ""


def _money_findings(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.filter(pl.col("difference").is_not_null() & (pl.col("difference") != 0))


def money_by_currency(findings: pl.DataFrame, totals: pl.DataFrame) -> Table:
    """Per currency: wagered, players' net as recorded and as the rules say, house win, at stake, over/underpaid."""
    m = _money_findings(findings)
    at_stake = m.group_by("currency").agg(
        pl.col("difference").abs().sum().alias("at_stake"),
        pl.col("difference").filter(pl.col("difference") > 0).sum().alias("overpaid"),
        (pl.col("difference") > 0).sum().alias("n_over"),
        (-pl.col("difference").filter(pl.col("difference") < 0)).sum().alias("underpaid"),
        (pl.col("difference") < 0).sum().alias("n_under"),
        pl.len().alias("n"),
    )
    t = totals.select("currency", "rounds", "wagers", "wagered", "recorded", "expected", "unsettled").join(
        at_stake, on="currency", how="full", coalesce=True).sort("currency", nulls_last=True)
    rows = []
    for r in t.iter_rows(named=True):
        c = r["currency"]
        rows.append([text(c), num(r["rounds"]), num(r["wagers"]), money(r["wagered"], c), money(r["recorded"], c, True),
                     money(r["expected"], c, True), num(r["unsettled"]), num(r["n"] or 0),
                     money(r["overpaid"] or 0, c), num(r["n_over"] or 0), money(r["underpaid"] or 0, c),
                     num(r["n_under"] or 0)])
    return Table(["currency", "rounds", "wagers", "wagered", "players' net as recorded",
                  "players' net as the rules say", "wagers not settleable", "money findings", "player overpaid",
                  "wagers overpaid", "player underpaid", "wagers underpaid"], rows)


def where_to_look(findings: pl.DataFrame, by: str, top: int = 5) -> list[dict]:
    """The values of ``by`` (table, dealer, player) with the most money findings (high), then the most findings.

    Ranked by counts, not by money: amounts of different currencies are not comparable; each one's money at
    stake is shown in its own currency.
    """
    data = findings.filter(pl.col(by).is_not_null())
    if data.height == 0:
        return []
    agg = data.group_by(by).agg(pl.len().alias("n"), (pl.col("severity") == "high").sum().alias("high")).sort(
        ["high", "n", by], descending=[True, True, False]).head(top)
    stakes = data.filter(pl.col(by).is_in(agg[by].implode()) & pl.col("difference").is_not_null()
                         & (pl.col("difference") != 0) & pl.col("currency").is_not_null()).group_by(by, "currency").agg(
        pl.col("difference").abs().sum().alias("stake")).sort(by, "currency")
    per = {}
    for r in stakes.iter_rows(named=True):
        per.setdefault(r[by], []).append(format_money(r["stake"], r["currency"]))
    return [{"name": r[by], "n": r["n"], "high": r["high"], "stake": " + ".join(per.get(r[by], []))}
            for r in agg.iter_rows(named=True)]


def hold_table(hold: pl.DataFrame, with_table: bool) -> Table:
    """Hold against theory (:func:`pipelines.report.theory.hold_by_table` columns), one row per game/table and currency."""
    rows = []
    for r in hold.iter_rows(named=True):
        c = r["currency"]
        status = ("above: players' decisions" if above_by_decisions(r)
                  else {True: "outside the band", False: "within", None: "not judged"}[r["outside"]])
        band = "" if r["band_lo_pct"] is None else f"{100 * r['band_lo_pct']:.2f} .. {100 * r['band_hi_pct']:.2f} %"
        row = [text(r["game"])] + ([ident(r["table_id"])] if with_table else []) + [
            text(c), num(r["wagers"]), money(r["handle"], c), money(r["house_win"], c, True),
            money(None if r["theo_win"] is None else round(r["theo_win"]), c, True),
            pct(r["hold_pct"]), pct(r["theo_pct"]), Cell(band, True),
            Cell(status, False, "bad verdict" if r["outside"] else "verdict"),
            money(r.get("handle_unrated") or 0, c)]
        if "band_from" in hold.columns:
            row.append(text(r["band_from"]))
        rows.append(row)
    headers = ["game"] + (["table"] if with_table else []) + [
        "currency", "wagers", "handle", "house win", "theory", "hold", "theory hold", "95 % band", "",
        "handle with no figure"] + (["band from"] if "band_from" in hold.columns else [])
    return Table(headers, rows)


def pairs_table(findings: pl.DataFrame, top: int = 50) -> Table:
    """Dealer x player pairs with overpayments, per currency: how often, how much, where."""
    over = findings.filter((pl.col("difference") > 0) & pl.col("dealer_id").is_not_null()
                           & pl.col("player_id").is_not_null())
    agg = over.group_by("dealer_id", "player_id", "currency").agg(
        pl.len().alias("n"), pl.col("difference").sum().alias("overpaid"), pl.col("difference").max().alias("largest"),
        pl.col("table_id").unique().sort().alias("tables"),
    ).sort(["n", "overpaid", "dealer_id", "player_id"], descending=[True, True, False, False]).head(top)
    rows = [[ident(r["dealer_id"]), ident(r["player_id"]), text(r["currency"]), num(r["n"]),
             money(r["overpaid"], r["currency"]), money(r["largest"], r["currency"]),
             text(", ".join(r["tables"][:6]) + (" ..." if len(r["tables"]) > 6 else ""))]
            for r in agg.iter_rows(named=True)]
    return Table(["dealer", "player", "currency", "overpayments", "overpaid in all", "largest", "tables"], rows,
                 note=f"{over.height:,} overpaid wagers with both a dealer and a player; the {top} pairs with the most.")


def readable(detail: str | None) -> str | None:
    """A statistical finding's detail as a person reads it: its sentence, q and window, without the JSON document
    that follows them (the test, the evidence, the parameters: in findings.csv and the subject's page). The table
    showed the JSON too, each row a screen of it."""
    if detail is None:
        return None
    said, sep, _ = detail.partition('. {"')
    return said + "." if sep else detail


def statistical(findings: pl.DataFrame, top: int = 200, investigations: dict[str, str] | None = None,
                where: dict[str, str] | None = None) -> Table | None:
    """The statistical findings with their probabilities (and the link to each subject's investigation, when the
    audit wrote them; and after a hold finding, where it came from: ``where``, pipelines.report.where);
    None when no detector has written any."""
    has_p = "p_value" in findings.columns
    cond = pl.col("kind").is_in(STATISTICAL_KINDS)
    if has_p:
        cond = cond | pl.col("p_value").is_not_null()
    stat = findings.filter(cond)
    if stat.height == 0:
        return None
    sort = ["q_value", "p_value"] if "q_value" in stat.columns else (["p_value"] if has_p else ["kind"])
    stat = stat.sort(sort + ["kind", "table_id"], nulls_last=True).head(top)
    rows = []
    for r in stat.iter_rows(named=True):
        p, q = r.get("p_value"), r.get("q_value")
        row = [text(r["kind"]), ident(r["table_id"]), ident(r["dealer_id"]), ident(r["player_id"]),
               num(p, "" if p is None else fmt_p(p)), num(q, "" if q is None else f"{q:.2g}"),
               text(" ".join(s for s in (readable(r["detail"]), (where or {}).get(r["finding_id"])) if s) or None)]
        if investigations is not None:
            href = investigations.get(r["finding_id"])
            row.append(Cell("investigation" if href else "", False, "", href))
        rows.append(row)
    headers = ["kind", "table", "dealer", "player", "p", "q (false discovery rate)", "detail"]
    return Table(headers + (["subject's page"] if investigations is not None else []), rows)


def files_table(files: pl.DataFrame) -> Table:
    rows = []
    for r in files.iter_rows(named=True):
        bad = r.get("status") == "unreadable"
        rows.append([text(r["source_file"]), text(r["kind"]),
                     Cell(r.get("status") or "", False, "bad" if bad else ""),
                     num(r["lines_read"]), num(r["rows_accepted"]), num(r["rows_quarantined"]),
                     num(r.get("rows_duplicate")), text(r.get("error"))])
    return Table(["file", "kind", "status", "lines read", "accepted", "quarantined", "duplicates", "why unreadable"], rows)


def quarantine_table(quarantine: pl.DataFrame) -> Table:
    """Quarantined lines by reason: how many, in how many files, the first one."""
    if quarantine.height == 0:
        return Table(["reason", "lines", "files", "first line"], [])
    agg = quarantine.group_by("reason").agg(
        pl.len().alias("n"), pl.col("source_file").n_unique().alias("files"),
        pl.struct("source_file", "source_line").sort_by("source_file", "source_line").first().alias("first"),
    ).sort(["n", "reason"], descending=[True, False])
    rows = [[text(r["reason"]), num(r["n"]), num(r["files"]),
             text(f"{r['first']['source_file']}:{r['first']['source_line']}")] for r in agg.iter_rows(named=True)]
    return Table(["reason", "lines", "files", "first line"], rows)


def data_findings_table(findings: pl.DataFrame) -> Table:
    """Gaps and changed sources (the data's own findings) per kind and table."""
    d = findings.filter(pl.col("kind").is_in(DATA_KINDS))
    agg = d.group_by("kind", "table_id").agg(pl.len().alias("n"), pl.col("detail").first().alias("example")).sort(
        ["kind", "n", "table_id"], descending=[False, True, False], nulls_last=True)
    rows = [[text(r["kind"]), ident(r["table_id"]), num(r["n"]), text(r["example"])] for r in agg.iter_rows(named=True)]
    return Table(["kind", "table", "findings", "for example"], rows)


def trend_table(trend: pl.DataFrame) -> Table:
    """Per gaming day (latest first) and currency: rounds, wagers, handle, players' net recorded and as the rules say,
    findings; tonight's days marked (``pipelines.audit.trend.TREND_SCHEMA``). A day's findings with no currency
    (the data's own: gaps, unmatched rounds, changed sources) are a row of findings alone: "0 rounds, 0 wagers"
    beside them read as a day with no play."""
    rows = []
    for r in trend.sort(["gaming_day", "currency"], descending=[True, False], nulls_last=True).iter_rows(named=True):
        c = r["currency"]
        day = Cell(("tonight " if r["tonight"] else "") + r["gaming_day"].isoformat(), False,
                   "day tonight" if r["tonight"] else "day")
        if c is None:
            rows.append([day, text(NO_CURRENCY), *(num(None) for _ in range(5)), num(r["findings"]),
                         num(r["high_findings"])])
            continue
        rows.append([day, text(c), num(r["rounds"]), num(r["wagers"]), money(r["handle"], c),
                     money(r["recorded_net"], c, True), money(r["expected_net"], c, True), num(r["findings"]),
                     num(r["high_findings"])])
    return Table(["gaming day", "currency", "rounds", "wagers", "handle", "players' net as recorded",
                  "players' net as the rules say", "findings", "high"], rows)
