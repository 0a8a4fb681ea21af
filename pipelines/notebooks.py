"""What the notebooks in ``notebooks/`` compute and draw, as importable (and tested) functions: the cells stay thin.

Each notebook starts from a database of the sample night (:func:`sample_database`) and from subjects that exist
in ``data/sample/`` (:func:`sample_subjects`, read from its ground truth), so it runs top to bottom anywhere.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import duckdb
import plotly.graph_objects as go
import polars as pl

from pipelines import investigate as q
from pipelines.investigation import figures as F
from pipelines.investigation.analysis import Z95, bet_ramp, bet_vs_count, results_over_time
from pipelines.investigation.count import true_counts

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def sample_database(settings=None) -> Path:
    """The database a notebook reads: the ``notebook_db`` setting (``PITAUDIT_NOTEBOOK_DB``) if set; else
    ``out/pitaudit.readonly.duckdb`` (after ``make demo``); else the sample night audited now into a temporary
    folder (about half a minute)."""
    from pipelines.settings import load_settings

    settings = settings or load_settings()
    if settings.notebook_db is not None:
        return Path(settings.notebook_db)
    demo = ROOT / "out" / "pitaudit.readonly.duckdb"
    if demo.is_file():
        return demo
    from pipelines.audit.run import run_audit
    from pipelines.db import publish_snapshot

    folder = Path(tempfile.mkdtemp(prefix="pitaudit-notebook-"))
    run_audit(SAMPLE, folder / "pitaudit.duckdb", folder / "out", "06:00", progress=False)
    return publish_snapshot(folder / "pitaudit.duckdb")


def connect(db: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to ``db`` (its snapshot when it has one)."""
    from pipelines.db import open_reader
    from pipelines.evidence.pack import database_for_readers

    return open_reader(database_for_readers(db))


def ground_truth(sample: Path = SAMPLE) -> list[dict]:
    with (sample / "ground_truth.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def sample_subjects(sample: Path = SAMPLE) -> dict[str, object]:
    """Subjects the sample plants: the card counter, the colluding dealer and his player, a disputed payout."""
    truth = ground_truth(sample)
    first = lambda kind: next(r for r in truth if r["kind"] == kind)  # noqa: E731
    dispute = next(r for r in truth if r["kind"] == "payout_mismatch" and r["detail"].startswith("commission_not_taken"))
    collusion = first("collusion_pattern")
    return {
        "counter": first("advantage_play")["player_id"],
        "dealer": collusion["dealer_id"], "dealer_player": collusion["player_id"],
        "dispute": (dispute["table_id"], int(dispute["round_no"]), dispute["wager_id"]),
    }


# --- investigate a player ------------------------------------------------------------------------------------------

def player_investigation(con: duckdb.DuckDBPyConnection, player: str) -> dict[str, object]:
    """The player's rows (those ``pitaudit investigate`` writes), the curve against theory and the bet ramp."""
    s = q.Subject("player", player)
    wagers = q.subject_wagers(con, s)
    from pipelines.investigation.theory import exact_where_known

    curve = results_over_time(wagers, exact_where_known(q.bet_moments(con)))
    tables = sorted(wagers.filter(pl.col("game") == "blackjack")["table_id"].unique().to_list())
    counts = bet_vs_count(wagers, true_counts(q.blackjack_cards(con, tables)))
    # the rounds and dealers summed from the wagers read above, not read again
    return {"wagers": wagers, "rounds": q.subject_rounds_of(con, [s], {s: wagers})[s],
            "findings": q.subject_findings(con, s), "curve": curve, "bet_vs_count": counts, "ramp": bet_ramp(counts),
            "dealers": q.dealers_of_wagers(wagers), "played_with": q.played_with(con, s)}


def results_figures(curve: pl.DataFrame) -> list[go.Figure]:
    return [F.results_figure(curve, c) for c in sorted(curve["currency"].drop_nulls().unique().to_list())]


def count_figure(inv: dict) -> go.Figure:
    return F.count_figure(inv["bet_vs_count"], inv["ramp"])


# --- review a disputed round ---------------------------------------------------------------------------------------

def disputed_round(con: duckdb.DuckDBPyConnection, table_id: str, round_no: int):
    """The round's evidence, gathered as ``pitaudit evidence`` does (re-settled by the engine, read-only)."""
    from pipelines.evidence.gather import gather_round

    return gather_round(con, table_id, round_no)


def cards_frame(evidence) -> pl.DataFrame:
    return pl.DataFrame([{"n": c["n"], "card": c["card"]["text"], "to": c["hand"], "step": c["what"], "clause": c["clause"],
                          "time": c["ts"]} for c in evidence.cards])


def wagers_frame(evidence) -> pl.DataFrame:
    cols = ("wager_id", "seat", "player_id", "bet", "amount", "settled_amount", "recorded_net", "expected_net", "difference",
            "clause", "detail")
    return pl.DataFrame([{k: w[k] for k in cols} for w in evidence.wagers])


def settlement_figure(evidence) -> go.Figure:
    """Each wager's net as recorded against the rules' net, the difference marked."""
    ids = [w["wager_id"] for w in evidence.wagers]
    currency = evidence.round.get("currency")
    div, label = F.unit(currency)
    fig = go.Figure([
        go.Bar(x=ids, y=[(w["recorded_net"] or 0) / div for w in evidence.wagers], name="recorded", marker_color="#b42318"),
        go.Bar(x=ids, y=[(w["expected_net"] or 0) / div for w in evidence.wagers], name="the rules' net", marker_color="#039855",
               text=[w["clause"] or "" for w in evidence.wagers], textposition="outside"),
    ])
    fig.update_layout(barmode="group")
    return F._layout(fig, f"{evidence.round['table_id']} round {evidence.round['round_no']}: each wager, recorded and by the rules",
                     f"net ({label})", "wager")


def write_evidence(db: Path, table_id: str, round_no: int, out: Path | None = None) -> tuple[Path, str]:
    """Write and seal the round's pack (``pitaudit evidence``); returns its folder and seal."""
    from pipelines.evidence.pack import write_pack

    out = out or Path(tempfile.mkdtemp(prefix="pitaudit-evidence-")) / f"{table_id}-{round_no}"
    return write_pack(db, table_id, round_no, out)


# --- dealer error trends -------------------------------------------------------------------------------------------

def dealer_funnel(rates: pl.DataFrame) -> go.Figure:
    """Each dealer's error rate against the rounds dealt, with the floor's rate and its 95 % funnel (binomial)."""
    p0 = float(rates["floor_per_1000"][0]) / 1000 if rates.height else 0.0
    n_max = int(rates["rounds"].max() or 1) if rates.height else 1
    ns = list(range(1, n_max + 1, max(1, n_max // 200)))
    band = [1000 * Z95 * (p0 * (1 - p0) / n) ** 0.5 for n in ns]
    fig = go.Figure([
        go.Scatter(x=ns, y=[1000 * p0 + b for b in band], mode="lines", line={"color": "#98a2b3", "dash": "dot"}, name="95 % funnel"),
        go.Scatter(x=ns, y=[max(0.0, 1000 * p0 - b) for b in band], mode="lines", line={"color": "#98a2b3", "dash": "dot"}, showlegend=False),
        go.Scatter(x=ns, y=[1000 * p0] * len(ns), mode="lines", line={"color": "#2457a6"}, name="the floor's rate"),
        go.Scatter(x=rates["rounds"].to_list(), y=rates["errors_per_1000"].to_list(), mode="markers", text=rates["dealer_id"].to_list(),
                   marker={"size": 9, "color": "#b42318"}, name="a dealer"),
    ])
    return F._layout(fig, "Dealer errors per 1,000 rounds against rounds dealt", "rounds with a dealer error per 1,000", "rounds dealt")


def errors_by_hour_figure(by_hour: pl.DataFrame, top: int = 8) -> go.Figure:
    """Rounds with a dealer error per hour, for the dealers with the most errors."""
    worst = (by_hour.group_by("dealer_id").agg(pl.col("error_rounds").sum())
             .sort(["error_rounds", "dealer_id"], descending=[True, False]).head(top)["dealer_id"].to_list())
    fig = go.Figure([
        go.Scatter(x=g["hour"].to_list(), y=g["error_rounds"].cum_sum().to_list(), mode="lines+markers", name=str(d))
        for d in worst for g in [by_hour.filter(pl.col("dealer_id") == d).sort("hour")]
    ])
    return F._layout(fig, "Cumulative rounds with a dealer error, by hour (UTC)", "rounds with an error", "hour (UTC)")
