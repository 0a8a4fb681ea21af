"""Every notebook in notebooks/ runs top to bottom in a real kernel (nbclient) on the audited sample night, shows its
charts (plotly outputs displayed, not collected), and raises no error; and the functions behind their cells."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from pipelines import investigate as q
from pipelines import notebooks as nb

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))
PLOTLY = "application/vnd.plotly.v1+json"


def test_the_three_notebooks_are_there():
    assert {p.name for p in NOTEBOOKS} >= {"investigate_player.ipynb", "review_disputed_round.ipynb", "dealer_error_trends.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_runs_top_to_bottom_and_shows_its_charts(audited_sample, monkeypatch, path):
    monkeypatch.setenv("PITAUDIT_NOTEBOOK_DB", str(audited_sample / "pitaudit.readonly.duckdb"))
    notebook = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code"), "commit notebooks without outputs"
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    charts = [o for o in outputs if o.output_type == "display_data" and PLOTLY in o.get("data", {})]
    assert len(charts) >= 2 if path.stem != "review_disputed_round" else len(charts) >= 1
    for chart in charts:
        assert chart["data"][PLOTLY]["data"], "a chart with no trace"
    # a figure the notebook only collected would show nowhere: every code cell that builds a figure displays it
    for cell in notebook.cells:
        if cell.cell_type == "code" and "figure" in cell.source and ".show()" not in cell.source:
            assert "figures" not in cell.source


def test_the_sample_subjects_exist_in_the_audited_night(audited_sample):
    s = nb.sample_subjects()
    con = nb.connect(audited_sample / "pitaudit.duckdb")
    try:
        assert q.subject_wagers(con, q.Subject("player", s["counter"])).height > 50
        assert q.subject_rounds(con, q.Subject("dealer", s["dealer"])).height > 20
        table, round_no, wager = s["dispute"]
        ev = nb.disputed_round(con, table, round_no)
        w = next(x for x in ev.wagers if x["wager_id"] == wager)
        assert w["difference"] != 0 and w["clause"] == "TBAC-5.1.1"
        assert nb.settlement_figure(ev).data[0].x == tuple(x["wager_id"] for x in ev.wagers)
        assert nb.cards_frame(ev).height == len(ev.cards) > 0
    finally:
        con.close()


def test_the_colluding_dealer_stands_out_of_the_funnel(audited_sample):
    """data/sample plants a dealer overpaying one player in many rounds: his error rate is the floor's highest and
    outside the 95 % funnel; the rates add up to the floor's."""
    s = nb.sample_subjects()
    con = nb.connect(audited_sample / "pitaudit.duckdb")
    try:
        rates = q.dealer_error_rates(con)
        rounds = con.execute("SELECT count(*) FROM core_rounds WHERE dealer_id IS NOT NULL").fetchall()[0][0]
        by_hour = q.dealer_errors_by_hour(con)
    finally:
        con.close()
    top = rates.row(0, named=True)
    assert top["dealer_id"] == s["dealer"]
    p0 = top["floor_per_1000"] / 1000
    assert top["errors_per_1000"] / 1000 > p0 + 1.96 * (p0 * (1 - p0) / top["rounds"]) ** 0.5
    assert int(rates["rounds"].sum()) == rounds == int(by_hour["rounds"].sum())
    assert int(rates["error_rounds"].sum()) == int(by_hour["error_rounds"].sum())
    fig = nb.dealer_funnel(rates)
    assert list(fig.data[-1].text) == rates["dealer_id"].to_list()


def test_the_notebooks_database_is_the_setting_when_given(tmp_path, monkeypatch):
    from pipelines.settings import Settings, load_settings

    target = tmp_path / "x.readonly.duckdb"
    assert nb.sample_database(Settings.model_construct(notebook_db=target)) == target
    monkeypatch.setenv("PITAUDIT_NOTEBOOK_DB", str(target))
    assert load_settings().notebook_db == target and nb.sample_database() == target
