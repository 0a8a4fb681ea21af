"""The pages the report links to exist: the audit writes every finding round's evidence pack and every flagged
subject's investigation beside report.html, with relative links, and each pack verifies.

The report's links are followed as a browser would: every href of the page outside its scripts, and every link
the findings table's script makes from its packed data (pipelines/report/assets/report.js, mirrored here).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import polars as pl
import pytest

from pipelines.report.payload import unpack


def _payload(page: str) -> dict:
    m = re.search(r'<script[^>]*id="findings-data"[^>]*>(.*?)</script>', page, re.S)
    return unpack(m.group(1).strip())


def _raw(data: dict, key: str, i: int):
    col = data["cols"].get(key)
    if col is None:
        return None
    v = col["v"][i]
    if "d" in col:
        return None if v < 0 else col["d"][v]
    return v


def report_links(folder: Path) -> tuple[list[str], list[str], list[int]]:
    """(the page's own hrefs, the findings table's links, the rows that show the command instead of a link)."""
    page = (folder / "report.html").read_text(encoding="utf-8")
    outside_scripts = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    static = [html.unescape(h) for h in re.findall(r'\shref="([^"]*)"', outside_scripts)]
    data = _payload(page)
    made, commands = [], []
    for i in range(data["n"]):
        inv = _raw(data, "inv", i)
        if inv:
            made.append(inv)
            continue
        t, r = _raw(data, "table", i), _raw(data, "round", i)
        if t is None or r is None or t not in data["links"]:
            continue
        if _raw(data, "pack", i) == 1:
            made.append(data["links"][t][0] + str(r) + "/index.html")
        else:
            commands.append(i)
    return static, made, commands


def page_scripts(folder: Path) -> list[tuple[Path, str]]:
    """(page, script src) of every script an investigation page under ``folder`` loads from a file."""
    return [(page, html.unescape(src)) for page in sorted((folder / "investigations").rglob("index.html"))
            for src in re.findall(r'<script[^>]*\ssrc="([^"]*)"', page.read_text(encoding="utf-8"))]


def _scripts_unresolved(folder: Path) -> list[str]:
    """The scripts of the investigation pages that do not open a file inside ``folder`` (relative, in the folder)."""
    root = folder.resolve()
    return [f"{page}: {src}" for page, src in page_scripts(folder)
            if src.startswith(("/", "file:")) or "://" in src or not (page.parent / unquote(src)).resolve().is_file()
            or root not in (page.parent / unquote(src)).resolve().parents]


def _unresolved(folder: Path, hrefs: list[str]) -> list[str]:
    return [h for h in hrefs if not h.startswith("#") and not (folder / unquote(h)).resolve().is_file()]


def _inside(folder: Path, hrefs: list[str]) -> list[str]:
    root = folder.resolve()
    return [h for h in hrefs if not h.startswith("#") and root not in (folder / unquote(h)).resolve().parents]


def test_every_link_of_the_report_opens_a_file_in_the_output_folder(audited_sample):
    out = audited_sample / "out"
    static, made, commands = report_links(out)
    pages = [h for h in static if not h.startswith("#")]
    assert len(pages) >= 5 and len(made) >= 100  # the summary's largest findings, statistical subjects, every row
    assert _unresolved(out, static + made) == []
    assert _inside(out, static + made) == []  # relative, inside the folder: the folder can be copied elsewhere
    assert all(not h.startswith(("/", "file:")) and "://" not in h for h in static + made)
    assert commands == []  # no bound reached on the sample: every finding round has its pack
    data = _payload((out / "report.html").read_text(encoding="utf-8"))
    stat = [i for i in range(data["n"]) if _raw(data, "p", i) is not None]
    linked = [i for i in stat if _raw(data, "inv", i)]
    assert stat and len(linked) >= len(stat) - 2  # a shoe's hold over several tables names no single subject
    assert any("/player/" in _raw(data, "inv", i) for i in linked) and any("/dealer/" in _raw(data, "inv", i) for i in linked)
    # the investigation pages share the folder's one plotly.js, each by a relative path to a file in the folder
    scripts = page_scripts(out)
    assert len(scripts) == len(list((out / "investigations").rglob("index.html"))) >= 2
    assert {(p.parent / unquote(s)).resolve() for p, s in scripts} == {(out / "investigations" / "plotly.min.js").resolve()}
    assert _scripts_unresolved(out) == []


def test_the_output_folder_copied_elsewhere_still_resolves_every_link(audited_sample, tmp_path):
    copy = tmp_path / "elsewhere" / "night"
    shutil.copytree(audited_sample / "out", copy)
    static, made, _ = report_links(copy)
    assert _unresolved(copy, static + made) == []
    assert page_scripts(copy) and _scripts_unresolved(copy) == []


def test_every_pack_the_audit_wrote_verifies_and_one_changed_byte_fails(audited_sample, tmp_path):
    from typer.testing import CliRunner

    from pipelines.cli import app
    from pipelines.evidence.manifest import verify_pack

    packs = sorted((audited_sample / "out" / "evidence").glob("*/*"))
    assert len(packs) >= 100
    failed = {p.name: verify_pack(p).problems for p in packs if not verify_pack(p).ok}
    assert failed == {}
    one = tmp_path / "pack"
    shutil.copytree(packs[0], one)
    assert CliRunner().invoke(app, ["evidence", "--verify", str(one)]).exit_code == 0
    page = one / "index.html"
    page.write_bytes(page.read_bytes().replace(b"</h1>", b" </h1>", 1))
    result = CliRunner().invoke(app, ["evidence", "--verify", str(one)])
    assert result.exit_code == 1 and "index.html changed" in result.output


def test_the_audits_pack_is_the_commands_pack(audited_sample, tmp_path):
    """Cross-check: the batch (one read, the recorded settlements) and `pitaudit evidence` (the partition re-audited)
    give the same document for a planted baccarat commission fault, a blackjack and a Hold'em round."""
    from pipelines.evidence.pack import write_pack

    out = audited_sample / "out" / "evidence"
    findings = pl.read_csv(audited_sample / "out" / "findings.csv", infer_schema_length=0).filter(
        pl.col("round_no").is_not_null() & (pl.col("round_no") != ""))
    chosen = []
    for prefix in ("BAC", "BJ", "HTB"):
        rows = findings.filter(pl.col("table_id").str.starts_with(prefix))
        if rows.height:
            chosen.append((rows["table_id"][0], int(rows["round_no"][0])))
    assert len(chosen) >= 2
    for table, round_no in chosen:
        folder, _ = write_pack(audited_sample / "pitaudit.duckdb", table, round_no, tmp_path / f"{table}-{round_no}")
        mine = json.loads((out / table / str(round_no) / "round.json").read_text(encoding="utf-8"))
        theirs = json.loads((folder / "round.json").read_text(encoding="utf-8"))
        for doc in (mine, theirs):
            doc.pop("database")
        assert mine == theirs, (table, round_no)


def test_beyond_the_bound_the_worst_rounds_get_packs_and_the_rest_show_the_command(audited_sample, tmp_path):
    from pipelines.db import open_reader
    from pipelines.evidence.batch import finding_rounds, write_packs
    from pipelines.report import ReportInputs, render_report

    con = open_reader(audited_sample / "pitaudit.readonly.duckdb")
    try:
        keys = [tuple(r) for r in con.execute("SELECT DISTINCT gaming_day, table_id FROM out_settlements").fetchall()]
        ranked = finding_rounds(con, keys)
        index = write_packs(con, keys, tmp_path, bound=5, database="db")
        findings = con.sql("SELECT * FROM out_findings").pl()
    finally:
        con.close()
    assert len(index.written) == 5 and index.over_bound == ranked.height - 5
    worst = ranked.head(5)
    assert set(index.written) == set(zip(worst["table_id"].to_list(), worst["round_no"].to_list()))
    assert set(worst["worst"].to_list()) == {0}  # high severity first
    assert len(list((tmp_path / "evidence").glob("*/*/index.html"))) == 5
    page = render_report(ReportInputs(findings=findings, totals=pl.DataFrame(
        schema={"currency": pl.String, "rounds": pl.Int64, "wagers": pl.Int64, "wagered": pl.Int64,
                "recorded": pl.Int64, "expected": pl.Int64, "unsettled": pl.Int64}), packs=index))
    (tmp_path / "report.html").write_text(page, encoding="utf-8")
    static, made, commands = report_links(tmp_path)
    assert _unresolved(tmp_path, static + made) == []
    assert len(commands) >= index.over_bound
    note = re.search(r'id="packs-note">(.*?)</p>', page, re.S).group(1)
    assert "wrote 5 evidence pack" in note and f"except {index.over_bound} round(s) beyond the bound of 5" in note


def test_a_new_run_replaces_the_previous_runs_folders_whole_and_a_failed_one_leaves_them(tmp_path):
    from pipelines.audit.outputs import output_folder

    out = tmp_path / "out"
    with output_folder(out) as partial:
        (partial / "evidence" / "T" / "1").mkdir(parents=True)
        (partial / "evidence" / "T" / "1" / "index.html").write_text("one")
        (partial / "report.html").write_text("first")
    with output_folder(out) as partial:
        (partial / "evidence" / "T" / "2").mkdir(parents=True)
        (partial / "evidence" / "T" / "2" / "index.html").write_text("two")
        (partial / "report.html").write_text("second")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "evidence/T/2/index.html", "report.html"]
    with pytest.raises(RuntimeError):
        with output_folder(out) as partial:
            (partial / "evidence" / "T" / "3").mkdir(parents=True)
            raise RuntimeError("disk full")
    assert (out / "evidence" / "T" / "2" / "index.html").read_text() == "two"
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_a_statistical_findings_subject_and_window():
    from pipelines.report.linked import subject_of

    detail = 'dealer D9 held ...; q = 0.001 (7 gaming days to 2026-11-24). ' + json.dumps({"sentence": "x", "window_days": 7})
    night = dt.date(2026, 11, 24)
    assert subject_of({"player_id": "P1", "dealer_id": "D9", "table_id": "T", "gaming_day": night, "detail": detail}) == (
        "player", "P1", dt.date(2026, 11, 18), night)
    assert subject_of({"player_id": None, "dealer_id": "D9", "table_id": None, "gaming_day": night, "detail": detail})[:2] == (
        "dealer", "D9")
    assert subject_of({"player_id": None, "dealer_id": None, "table_id": None, "gaming_day": night, "detail": ""}) is None


def test_the_report_opens_a_linked_pack_in_a_browser(browser, audited_sample):
    visit = browser.open(audited_sample / "out" / "report.html")
    page = visit.page
    page.wait_for_selector("#findings-table[data-ready='1']")
    link = page.locator("#findings-body a", has_text="evidence").first
    href = link.get_attribute("href")
    assert href and href.startswith("evidence/")
    link.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(href)
    assert page.locator(".deck .card").count() >= 4
    visit.assert_clean()
    visit.screenshot("report-linked-pack")


def test_a_rerun_with_no_packs_leaves_none_of_the_last_runs_and_links_the_commands(audited_sample, tmp_path):
    """PITAUDIT_EVIDENCE_PACKS=0: the evidence folder is replaced by an empty one (no pack of an earlier run stays
    beside the new report), every finding row shows the command, and every link still resolves."""
    from pipelines.audit.run import run_audit
    from pipelines.settings import Settings

    root = tmp_path / "copy"
    root.mkdir()
    shutil.copy(audited_sample / "pitaudit.duckdb", root / "pitaudit.duckdb")
    shutil.copytree(audited_sample / "out", root / "out")
    assert list((root / "out" / "evidence").glob("*/*/index.html"))
    settings = Settings.defaults().model_copy(update={"evidence_packs": 0})
    run_audit(Path(__file__).parents[1] / "data" / "sample", root / "pitaudit.duckdb", root / "out", "06:00",
              progress=False, settings=settings)
    out = root / "out"
    assert (out / "evidence").is_dir() and not any((out / "evidence").iterdir())
    static, made, commands = report_links(out)
    assert _unresolved(out, static + made) == []
    assert len(commands) >= 100 and not [h for h in made if h.startswith("evidence/")]
    note = re.search(r'id="packs-note">(.*?)</p>', (out / "report.html").read_text(encoding="utf-8"), re.S).group(1)
    assert "wrote 0 evidence pack" in note and "beyond the bound of 0" in note


def test_every_investigation_page_lists_and_links_exactly_the_files_beside_it(audited_sample):
    """The audit's pages write every table as Parquet and only the small ones as CSV too; each page links every file
    it lists, each link opens a file of its folder, and it lists every row file there (none it did not write)."""
    from pipelines.investigation.command import AUDIT_CSV_TABLES, TABLES

    pages = sorted((audited_sample / "out" / "investigations").rglob("index.html"))
    assert len(pages) >= 2
    for page in pages:
        text = page.read_text(encoding="utf-8")
        hrefs = [html.unescape(h) for h in re.findall(r'\shref="([^"]*)"', re.sub(r"<script\b.*?</script>", "", text, flags=re.S))]
        assert _unresolved(page.parent, hrefs) == [] and _inside(page.parent, hrefs) == []
        beside = {p.name for p in page.parent.iterdir()} - {"index.html"}
        assert set(hrefs) >= beside and beside == {f"{t}.parquet" for t in TABLES} | {f"{t}.csv" for t in AUDIT_CSV_TABLES}
        assert "pitaudit investigate --db " in text and "every table as CSV" in text
