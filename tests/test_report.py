"""The morning report: offline, escaped, money per currency in major units, hold against theory, and it works in a browser.

The structural checks parse the HTML and fail on anything that would fetch from the network; the browser
test (tests/browser.py) opens the report in headless Chromium with the network refused and checks that
nothing was requested, nothing was logged as an error, no injected script ran, every chart drew its SVG and
the findings table sorts, filters and searches.
"""

from __future__ import annotations

import datetime as dt
import html as htmllib
import json
import re
from pathlib import Path
from html.parser import HTMLParser

import polars as pl
import pytest

from pipelines.audit.frames import FINDINGS_SCHEMA, SETTLEMENTS_SCHEMA, conform
from pipelines.audit.publish import totals_of
from pipelines.report import ReportInputs, render_report, write_report
from pipelines.audit.trend import TREND_SCHEMA
from pipelines.report.links import evidence_command, evidence_href, evidence_relpath, table_segment
from pipelines.report import sections
from pipelines.id_cells import SHORT_ID
from pipelines.currency import format_amount, format_money, minor_units
from pipelines.report.payload import findings_payload, pack, script_json, unpack
from pipelines.stats.distributions import P_FLOOR
from pipelines.report.theory import BET_AGGREGATE_SCHEMA, Z95, hold_by_game, hold_by_table, outside_by_chance, second_moment

DAY = dt.date(2026, 11, 24)
HOSTILE = "<img src=x onerror=alert(1)>"


def _findings(player: str = "P-1") -> pl.DataFrame:
    rows = [
        {"finding_id": "a" * 16, "kind": "payout_mismatch", "severity": "high", "gaming_day": DAY, "table_id": "BAC-01",
         "round_no": 1, "wager_id": "W1", "dealer_id": "D1", "player_id": player, "expected_net": 200000,
         "recorded_net": 120000, "difference": -80000, "rule_ref": "TBAC-5.1.3", "currency": "USD", "game": "baccarat",
         "detail": "Banker won on 6 with three cards: Tiger pays 20:1 (TBAC-5.1.3); paid 12:1 <script>alert(1)</script>",
         "source_file": "rounds_night.jsonl", "source_line": 1},
        {"finding_id": "b" * 16, "kind": "sequence_gap", "severity": "low", "gaming_day": DAY, "table_id": "BAC-02",
         "round_no": 9, "rule_ref": "FORMATS-EVENT-SEQ", "detail": "device lost 2 events", "source_file": "shoe_a.csv",
         "source_line": 40, "currency": "USD"},
        {"finding_id": "c" * 16, "kind": "result_mismatch", "severity": "medium", "gaming_day": DAY, "table_id": "BAC-01",
         "round_no": 3, "dealer_id": "D2", "rule_ref": "TBAC-7.16", "detail": "the cards stand", "currency": "USD",
         "source_file": "rounds_night.jsonl", "source_line": 3},
        {"finding_id": "d" * 16, "kind": "payout_mismatch", "severity": "high", "gaming_day": DAY, "table_id": "VBJ-01",
         "round_no": 7, "wager_id": "W9", "dealer_id": "D1", "player_id": player, "expected_net": 1_000_000,
         "recorded_net": 1_500_000, "difference": 500_000, "rule_ref": "BJ-6.2.1", "currency": "VND", "game": "blackjack",
         "detail": "blackjack pays 3:2", "source_file": "rounds_vnd.jsonl", "source_line": 7},
    ]
    return conform(pl.DataFrame(rows, infer_schema_length=None), FINDINGS_SCHEMA)


def _settlements() -> pl.DataFrame:
    rows = [{"gaming_day": DAY, "table_id": "BAC-01", "round_no": 1, "wager_id": "W1", "currency": "USD", "amount": 10000,
             "expected_net": 200000, "recorded_net": 120000},
            {"gaming_day": DAY, "table_id": "VBJ-01", "round_no": 7, "wager_id": "W9", "currency": "VND",
             "amount": 1_000_000, "expected_net": 1_000_000, "recorded_net": 1_500_000}]
    return conform(pl.DataFrame(rows), SETTLEMENTS_SCHEMA)


def _bets() -> pl.DataFrame:
    return pl.DataFrame([
        {"game": "baccarat", "ruleset": "hoiana-tiger-baccarat/commission", "ruleset_version": "01/01.10.2024",
         "table_id": "BAC-01", "currency": "USD", "bet": "player", "wagers": 400, "handle": 4_000_000,
         "handle_sq": 400 * 10_000.0 ** 2, "house_win": -900_000},
        {"game": "baccarat", "ruleset": "hoiana-tiger-baccarat/commission", "ruleset_version": "01/01.10.2024",
         "table_id": "BAC-02", "currency": "USD", "bet": "player", "wagers": 400, "handle": 4_000_000,
         "handle_sq": 400 * 10_000.0 ** 2, "house_win": 60_000},
    ], schema=BET_AGGREGATE_SCHEMA)


def _inputs(**kw) -> ReportInputs:
    base = dict(findings=_findings(), totals=totals_of(_settlements()), quarantined=2)
    base.update(kw)
    return ReportInputs(**base)


class _Loads(HTMLParser):
    """Collects every attribute that would make a browser fetch something, and every element by tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fetches: list[str] = []
        self.scripts = 0
        self.inline_scripts = 0
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "script":
            self.scripts += 1
            if a.get("src"):
                self.fetches.append(f"<script src={a['src']}>")
            else:
                self.inline_scripts += 1
        if tag == "link" and a.get("href"):
            self.fetches.append(f"<link href={a['href']}>")
        for attr in ("src", "srcset", "data", "poster", "background"):
            if tag != "script" and a.get(attr):
                self.fetches.append(f"<{tag} {attr}={a[attr]}>")
        if tag in ("iframe", "embed", "object", "base", "img"):
            self.fetches.append(f"<{tag}>")


def assert_offline(html: str) -> None:
    parser = _Loads()
    parser.feed(html)
    assert parser.fetches == [], parser.fetches
    styles = "\n".join(re.findall(r"<style[^>]*>(.*?)</style>", html, flags=re.S))
    assert "@import" not in styles and "url(" not in styles and "@font-face" not in styles
    assert not re.search(r"""style=["'][^"']*url\(""", html)
    assert parser.inline_scripts >= 2  # plotly.js and the figures


def _body(html: str) -> str:
    return html.split("</head>", 1)[1]


# --- money -------------------------------------------------------------------------------------------------

def test_money_is_shown_in_major_units_with_the_currencys_own_decimals():
    assert format_amount(4_040_300, "USD") == "40,403.00"
    assert format_amount(4_040_300, "VND") == "4,040,300"  # ISO 4217: VND has no minor unit
    assert format_amount(4_040_300, "JPY") == "4,040,300"
    assert format_amount(4_040_300, "KWD") == "4,040.300"  # three decimals
    assert format_amount(-5, "SGD") == "-0.05" and format_amount(5, "AUD", signed=True) == "+0.05"
    assert format_amount(0, "USD", signed=True) == "0.00"
    assert format_money(-80_000, "USD") == "-800.00 USD"
    assert format_amount(None, "USD") == "" and format_money(None, "USD") == ""
    # an unknown code keeps the smallest unit and says so, rather than guessing decimals
    assert format_amount(123, "XYZ") == "123 (smallest unit)" and minor_units("XYZ") is None
    assert minor_units("usd") == 2


def test_money_formatting_is_exact_where_a_float_would_not_be():
    big = 2**63 - 1  # 92,233,720,368,547,758.07 USD: a float would round the cents away
    assert format_amount(big, "USD") == "92,233,720,368,547,758.07"
    assert format_amount(-big, "VND") == f"-{big:,}"


# --- evidence links ------------------------------------------------------------------------------------------

def test_evidence_links_follow_the_documented_layout():
    assert evidence_relpath("BAC-01", 16776).as_posix() == "evidence/BAC-01/16776"
    assert evidence_href("BAC-01", 16776) == "evidence/BAC-01/16776/index.html"
    assert evidence_command("BAC-01", 7, "pitaudit.duckdb") == (
        "pitaudit evidence --db pitaudit.duckdb --table BAC-01 --round 7 --out evidence/BAC-01/7")


@pytest.mark.parametrize("table_id", ["../../etc", ".", "..", ".hidden", "a/b", "BAC 01", HOSTILE, "%41", "é"])
def test_a_hostile_table_id_stays_one_folder_under_evidence(table_id):
    seg = table_segment(table_id)
    assert "/" not in seg and seg not in ("", ".", "..") and not seg.startswith(".")
    assert re.fullmatch(r"[A-Za-z0-9%._~-]+", seg)
    href = evidence_href(table_id, 3)
    parts = href.split("/")
    assert parts[0] == "evidence" and parts[2:] == ["3", "index.html"] and len(parts) == 4
    from urllib.parse import unquote

    assert unquote(parts[1]) == seg  # the browser's decoding of the link gives the folder's name
    assert unquote(seg) == table_id  # and the folder's name gives the table back


def test_a_chart_label_escapes_plotlys_tags_and_keeps_quotes():
    """formats.md, report.html: every value from a log is escaped. Plotly reads <b>, <a href> in a label, so < > & are
    escaped; it draws an escaped quote as "&quot;" (a dealer id D"1 read D&quot;1 on the charts), so quotes stay."""
    from pipelines.report.figures import label

    assert label('<a href="https://x.example/">D"1</a>') == '&lt;a href="https://x.example/"&gt;D"1&lt;/a&gt;'
    assert label("O'Neil & Co") == "O'Neil &amp; Co" and label(None) == "(none)" and label("BAC-01") == "BAC-01"


def test_a_long_id_on_a_findings_chart_is_cut_short_on_its_axis_one_bar_each():
    """One player id of 5,000 characters in a log was drawn whole as a tick label: the bars of every other player
    were squeezed into a sliver at the chart's right edge. Its label is cut (one bar each still: the full ids stay
    the categories); a chart of ordinary ids is drawn as before."""
    from pipelines.report.figures import LABEL_MAX, findings_by

    long_id, similar = "P" * 5000, "P" * 4999 + "Q"
    findings = pl.DataFrame({"player_id": [long_id, long_id, similar, "<b>P-1</b>"],
                             "severity": ["high", "low", "high", "medium"]})
    fig = findings_by(findings, "player_id", "Findings by player (top 30)")
    axis = fig.layout.yaxis
    assert list(axis.tickvals) == [similar, "&lt;b&gt;P-1&lt;/b&gt;", long_id]  # the most findings at the top
    assert all(len(t) <= LABEL_MAX for t in axis.ticktext) and axis.ticktext[1] == "&lt;b&gt;P-1&lt;/b&gt;"
    assert axis.ticktext[0].endswith("…") and axis.ticktext[2] == "P" * (LABEL_MAX - 1) + "…"
    assert {y for bar in fig.data for y in bar.y} == set(axis.tickvals)
    ordinary = findings_by(findings.filter(pl.col("player_id").str.len_chars() < 50), "player_id", "t")
    assert ordinary.layout.yaxis.tickvals is None and ordinary.layout.yaxis.ticktext is None


@pytest.mark.parametrize("table_id", ["T" * 300, "é" * 200, "<" * 100, "x" * 118 + "é", "T" * 300 + "-2"])
def test_a_long_id_is_still_one_folder_a_file_system_takes(tmp_path, table_id):
    """A 300-character table id in a log stopped the night's publish ("File name too long", 255 bytes a name):
    formats.md, Text: an identifier is kept as written, so its folder name must hold whatever the length."""
    seg = table_segment(table_id)
    assert len(seg.encode()) <= 255 and re.fullmatch(r"[A-Za-z0-9%._~-]+", seg)
    assert seg.count("%%") == 1 and re.fullmatch(r"(%[0-9A-F]{2}|[A-Za-z0-9._~-])*", seg.split("%%")[0])
    (tmp_path / evidence_relpath(table_id, 7)).mkdir(parents=True)
    assert table_segment(table_id) == seg  # the same id, the same folder
    others = {table_segment(t) for t in ("T" * 300, "T" * 301, "T" * 300 + "-2", seg, seg.split("%%")[0])}
    assert len(others) == 5  # no other id (not even one written like the segment) shares it


def test_the_suggested_command_quotes_the_table_for_the_shell():
    import shlex

    cmd = evidence_command("x; rm -rf ~", 4, "my db.duckdb")
    argv = shlex.split(cmd)
    assert argv[argv.index("--table") + 1] == "x; rm -rf ~"
    assert argv[argv.index("--db") + 1] == "my db.duckdb"
    assert argv[argv.index("--out") + 1] == evidence_relpath("x; rm -rf ~", 4).as_posix()


# --- hold against theory ---------------------------------------------------------------------------------------

def test_second_moment_of_a_one_price_bet():
    # a fair coin at evens: X = +-1, E[X^2] = 1
    assert second_moment(0.0, 0.5, 0.0) == pytest.approx(1.0)
    # 35:1 on 1/37 (single-zero roulette): edge 1/37, E[X^2] = 35^2/37 + 36/37
    assert second_moment(1 / 37, 1 / 37, 0.0) == pytest.approx((35**2 + 36) / 37)
    # a push takes probability from both: evens, win .45, push .1, loss .45
    assert second_moment(0.0, 0.45, 0.1) == pytest.approx(0.9)
    assert second_moment(0.1, None, None) is None


def test_hold_against_theory_per_table_with_the_95_percent_band():
    """Player bets only (one price, 1:1, exact): theory = handle x edge, sd = sqrt(sum a^2 (E[X^2] - edge^2))."""
    from rulebook.catalogue import load_catalogue
    from rulebook.odds import house_edges

    rs = [r for r in load_catalogue().versions("hoiana-tiger-baccarat/commission") if r.version == "01/01.10.2024"][0]
    player = house_edges(rs).bets["player"]
    edge, w, p = player.house_edge, player.win_probability, player.push_probability
    var_unit = w + (1 - w - p) - edge**2  # X = +1, 0, -1
    hold = hold_by_table(_bets())
    assert hold["table_id"].to_list() == ["BAC-01", "BAC-02"]
    row = hold.row(0, named=True)
    assert row["theo_win"] == pytest.approx(4_000_000 * edge)
    sd = (400 * 10_000**2 * var_unit) ** 0.5  # 400 wagers of 10,000
    assert row["sd"] == pytest.approx(sd)
    assert row["band_lo_pct"] == pytest.approx(edge - Z95 * sd / 4_000_000)
    assert row["band_hi_pct"] == pytest.approx(edge + Z95 * sd / 4_000_000)
    assert row["hold_pct"] == pytest.approx(-900_000 / 4_000_000)
    # -22.5 % is far outside (sd is about 4.75 %); +1.5 % is inside
    assert hold["outside"].to_list() == [True, False]
    game = hold_by_game(_bets()).row(0, named=True)
    assert game["handle"] == 8_000_000 and game["house_win"] == -840_000


def test_a_decision_games_table_above_its_band_is_the_players_decisions_not_outside():
    """Blackjack's theory assumes basic strategy: a table whose players stand on 12 against a 6 holds the house more,
    which is no anomaly (the hold detector tests the main game one-sided). Above the band: "above: players'
    decisions", not "outside the band" (a red line of every night's summary); below it: outside. Baccarat (no
    decisions) is judged both ways, as before (the test above)."""
    from pipelines.report.sections import hold_table
    from pipelines.report.theory import above_by_decisions

    from rulebook.catalogue import load_catalogue

    version = load_catalogue().versions("hoiana-blackjack")[0].version

    def rows(house_win: int) -> pl.DataFrame:
        bets = pl.DataFrame([{"game": "blackjack", "ruleset": "hoiana-blackjack", "ruleset_version": version,
                              "table_id": "BJ-01", "currency": "USD", "bet": "main", "wagers": 400, "handle": 4_000_000,
                              "handle_sq": 400 * 10_000.0 ** 2, "house_win": house_win}], schema=BET_AGGREGATE_SCHEMA)
        return hold_by_table(bets)

    high, low, near = rows(900_000), rows(-900_000), rows(20_000)  # +22.5 %, -22.5 %, +0.5 % of 40,000.00
    assert high["band_hi_pct"][0] < 0.225 and low["band_lo_pct"][0] > -0.225  # both far beyond the band (sd ~ 5.8 %)
    assert high["outside"].to_list() == [False] and above_by_decisions(high.row(0, named=True))
    assert low["outside"].to_list() == [True] and not above_by_decisions(low.row(0, named=True))
    assert near["outside"].to_list() == [False] and not above_by_decisions(near.row(0, named=True))
    status = {name: hold_table(frame, True).rows[0][10].text for name, frame in (("high", high), ("low", low), ("near", near))}
    assert status == {"high": "above: players' decisions", "low": "outside the band", "near": "within"}


def test_holdem_flop_turn_and_river_add_handle_but_no_theory_of_their_own():
    bets = pl.DataFrame([
        {"game": "holdem_bonus", "ruleset": "hoiana-holdem-bonus", "ruleset_version": "01/01.05.2025",
         "table_id": "HTB-01", "currency": "USD", "bet": b, "wagers": 10, "handle": h, "handle_sq": 10.0 * (h / 10) ** 2,
         "house_win": 0} for b, h in (("ante", 1000), ("flop", 2000), ("turn", 1000), ("made_up_bet", 500))],
        schema=BET_AGGREGATE_SCHEMA)
    from pipelines.report.theory import bet_figures

    edge = bet_figures("hoiana-holdem-bonus", "01/01.05.2025")["ante"][0]
    row = hold_by_table(bets).row(0, named=True)
    assert row["handle"] == 4500 and row["theo_win"] == pytest.approx(1000 * edge)
    assert row["handle_unrated"] == 500  # a bet with no figure: counted, not rated
    assert row["outside"] is None  # not judged when part of the handle has no figure


# --- the page ------------------------------------------------------------------------------------------------

def test_report_embeds_plotly_and_loads_nothing_from_the_network():
    html = render_report(_inputs(bets=_bets()))
    assert_offline(html)
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js itself, inline
    # and the browser is told to refuse any fetch (defence in depth: the page needs none)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp and "http" not in csp
    assert "cdn.plot.ly/plotly" not in _body(html)
    for div in ("fig-kind", "fig-table", "fig-dealer", "fig-player", "fig-hour", "fig-money-0", "fig-money-1",
                "fig-hold-0"):
        assert f'id="{div}"' in html


def test_hostile_values_from_the_logs_stay_text():
    """A player id, dealer, table, file name, quarantine reason and detail that are markup are escaped everywhere."""
    f = _findings(player=HOSTILE).with_columns(pl.lit(HOSTILE).alias("dealer_id"))
    q = pl.DataFrame({"source_file": [HOSTILE], "source_line": [1], "reason": [HOSTILE], "raw": [HOSTILE]})
    files = pl.DataFrame({"source_file": [HOSTILE], "kind": ["rounds_jsonl"], "status": ["unreadable"],
                          "lines_read": [0], "rows_accepted": [0], "rows_quarantined": [0], "rows_duplicate": [0],
                          "error": [HOSTILE]})
    html = render_report(_inputs(findings=f, quarantine=q, source_files=files, bets=_bets()))
    body = _body(html)
    assert "<img" not in body.lower() and "<script>alert" not in body
    assert htmllib.escape(HOSTILE, quote=True) in body or "&lt;img src=x onerror=alert(1)&gt;" in body
    parser = _Loads()
    parser.feed(html)
    assert not [t for t, _ in parser.tags if t == "img"]
    assert not [a for _, a in parser.tags if any(k.startswith("on") for k in a)]  # no event handler attribute
    # the findings data holds the value as data: unpacked, it is the exact string
    data = re.search(r'<script type="application/octet-stream" id="findings-data"[^>]*>(.*?)</script>', html, re.S).group(1)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", data)  # base64: nothing that could close the element
    assert HOSTILE in unpack(data)["cols"]["player"]["d"]


def test_script_json_cannot_close_its_element():
    text = script_json({"x": "</script><script>alert(1)</script>", "y": "a & b \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"x": "</script><script>alert(1)</script>", "y": "a & b \u2028"}


def test_money_appears_per_currency_in_major_units_and_is_never_summed_across_currencies():
    html = render_report(_inputs())
    body = _body(html)
    # USD underpaid 800.00; VND overpaid 500,000 (no decimals)
    assert "underpaid <b>800.00 USD</b>" in body
    assert "overpaid <b>500,000 VND</b>" in body
    # no total that adds 80,000 cents and 500,000 dong, in any unit
    for wrong in ("580,000", "5,800.00", "500,800", "580000"):
        assert wrong not in body
    assert 'id="fig-money-0"' in body and 'id="fig-money-1"' in body  # one money chart per currency


def test_report_shows_the_summary_and_where_to_look():
    html = render_report(_inputs())
    assert '<div class="v">4</div><div class="k">findings</div>' in html
    assert '<div class="v">2</div><div class="k">input lines quarantined</div>' in html
    summary = _body(html).split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert "<b>D1</b>: 2 findings, 2 high" in summary  # the dealer of both money findings comes first
    assert "800.00 USD + 500,000 VND at stake" in summary  # per currency, side by side, not added
    # the largest differences, each linked to its round's evidence pack
    assert "<b>-800.00 USD</b>: payout_mismatch (TBAC-5.1.3) at BAC-01, round 1" in summary
    assert '<a href="evidence/BAC-01/1/index.html">evidence</a>' in summary
    assert "<b>+500,000 VND</b>: payout_mismatch (BJ-6.2.1) at VBJ-01, round 7" in summary


def test_statistical_findings_show_their_probabilities_when_present():
    f = _findings()
    stat = conform(pl.DataFrame([{"finding_id": "e" * 16, "kind": "player_luck_anomaly", "severity": "medium",
                                  "gaming_day": DAY, "table_id": "BAC-01", "player_id": "P-9", "currency": "USD",
                                  "detail": "P-9 won 41 of 295 Big Tiger bets, 8.9 expected"}]), FINDINGS_SCHEMA)
    both = pl.concat([f, stat]).with_columns(
        pl.when(pl.col("kind") == "player_luck_anomaly").then(3e-9).otherwise(None).alias("p_value"),
        pl.when(pl.col("kind") == "player_luck_anomaly").then(2e-7).otherwise(None).alias("q_value"))
    section = _body(render_report(_inputs(findings=both))).split('id="statistical"', 1)[1].split("</section>", 1)[0]
    assert "player_luck_anomaly" in section and ">3.0e-9<" in section and ">2e-07<" in section
    # none tonight: the section says so
    section = _body(render_report(_inputs())).split('id="statistical"', 1)[1].split("</section>", 1)[0]
    assert "No statistical findings" in section and "<table" not in section


def _tables_outside(n_tables: int, n_outside: int, game: str = "baccarat") -> pl.DataFrame:
    """A per-table hold frame (``hold_by_table``'s columns) of ``n_tables`` judged tables, ``n_outside`` of them
    below their band."""
    rows = []
    for i in range(n_tables):
        out = i < n_outside
        rows.append({"game": game, "table_id": f"T-{i:02d}", "currency": "USD", "wagers": 1000, "handle": 1_000_000,
                     "house_win": -150_000 if out else 20_000, "theo_win": 12_000.0, "var": 2.5e9, "handle_unrated": 0,
                     "sd": 50_000.0, "hold_pct": -0.15 if out else 0.02, "theo_pct": 0.012, "band_lo_pct": -0.086,
                     "band_hi_pct": 0.11, "outside": out})
    return pl.DataFrame(rows, schema_overrides={"handle": pl.Int128, "house_win": pl.Int128, "handle_unrated": pl.Int128})


def test_the_hold_line_says_how_many_tables_chance_alone_puts_outside():
    """A 95 % band leaves 1 table in 20 outside by chance (1 in 40 at blackjack and Hold'em, judged below only): 24
    baccarat tables have 1.2 outside on an average night, and 3 or fewer on 96.6 % of nights (Poisson, mean 1.2). One
    table outside had been a red line of every such night's summary; it is marked now (a red bullet), and red past 3."""
    assert outside_by_chance(_tables_outside(24, 0)) == (24, pytest.approx(1.2), 3)
    assert outside_by_chance(_tables_outside(20, 0, "blackjack")) == (20, pytest.approx(0.5), 2)
    assert outside_by_chance(_tables_outside(0, 0)) == (0, 0.0, 0)

    def line(n_outside: int) -> str:
        body = _body(render_report(_inputs(hold=_tables_outside(24, n_outside))))
        return re.search(r'<li[^>]*>Hold: .*?</li>', body, flags=re.S).group(0)

    one, four = line(1), line(4)
    assert one.startswith('<li class="warn">Hold: 1 of 24 table(s) outside their 95 % band')
    assert "chance alone puts 1.2 of the 24 judged there on an average night)" in one
    assert four.startswith('<li class="bad">Hold: 4 of 24') and "more than chance explains" in four
    assert line(0).startswith("<li>Hold: 0 of 24")


def test_a_p_value_at_the_floor_reads_below_it_not_equal_to_it():
    """A detector floors p at 1e-12 (below it a float's tail means nothing) and its sentence says "p < 1e-12"; the
    statistical table printed "1e-12" and the findings table "1.0e-12", a figure no test gave."""
    stat = conform(pl.DataFrame([{"finding_id": "e" * 16, "kind": "advantage_play", "severity": "high",
                                  "gaming_day": DAY, "table_id": "BJ-01", "player_id": "P-9", "currency": "USD",
                                  "detail": "P-9 bet with the count; p < 1e-12"}]), FINDINGS_SCHEMA)
    both = pl.concat([_findings(), stat]).with_columns(
        pl.when(pl.col("kind") == "advantage_play").then(P_FLOOR).otherwise(None).alias("p_value"),
        pl.when(pl.col("kind") == "advantage_play").then(3.4e-10).otherwise(None).alias("q_value"))
    html = render_report(_inputs(findings=both))
    section = _body(html).split('id="statistical"', 1)[1].split("</section>", 1)[0]
    assert ">&lt; 1e-12<" in section and ">1e-12<" not in section
    # the findings table's cells are drawn by report.js from the payload: it carries the floor the script compares with
    assert findings_payload(both)["p_floor"] == P_FLOOR
    assert 'k === "p" && v <= D.p_floor' in html


def test_a_statistical_findings_row_reads_its_sentence_not_its_json():
    """A detector's detail is its sentence, q and window, then the test's JSON document: the statistical table shows
    the words (the JSON is in findings.csv and the subject's page); each row was a screen of JSON."""
    detail = ('P-9 won 41 of 295 Big Tiger bets, 8.9 expected; p = 3.0e-9; q = 2.0e-7 (1 gaming day to 2026-11-24). '
              '{"sentence":"P-9 won 41 of 295 Big Tiger bets","test":"luck","wagers":null,"evidence":{"wins":41}}')
    stat = conform(pl.DataFrame([{"finding_id": "e" * 16, "kind": "player_luck_anomaly", "severity": "medium",
                                  "gaming_day": DAY, "table_id": "BAC-01", "player_id": "P-9", "currency": "USD",
                                  "detail": detail}]), FINDINGS_SCHEMA)
    both = pl.concat([_findings(), stat]).with_columns(
        pl.when(pl.col("kind") == "player_luck_anomaly").then(3e-9).otherwise(None).alias("p_value"),
        pl.when(pl.col("kind") == "player_luck_anomaly").then(2e-7).otherwise(None).alias("q_value"))
    section = _body(render_report(_inputs(findings=both))).split('id="statistical"', 1)[1].split("</section>", 1)[0]
    assert ">P-9 won 41 of 295 Big Tiger bets, 8.9 expected; p = 3.0e-9; q = 2.0e-7 (1 gaming day to 2026-11-24).<" in section
    assert "&#34;test&#34;" not in section and '"test"' not in section and "null" not in section


def test_a_dealers_hold_row_says_at_which_tables_after_its_sentence():
    """The statistical table carries, after a dealer's hold sentence, where it came from (pipelines.report.where,
    from his page); a row without one is unchanged."""
    detail = ('dealer D7 held -3.0% of 11,183,920.00 USD wagered on all bets; p = 5.5e-7; q = 2.8e-4 (30 gaming days to '
              '2026-11-24). {"sentence":"dealer D7 held -3.0%","test":"hold_dealer"}')
    stat = conform(pl.DataFrame([{"finding_id": "e" * 16, "kind": "hold_anomaly", "severity": "medium",
                                  "gaming_day": DAY, "dealer_id": "D7", "currency": "USD", "detail": detail}]),
                   FINDINGS_SCHEMA)
    both = pl.concat([_findings(), stat]).with_columns(
        pl.when(pl.col("kind") == "hold_anomaly").then(5.5e-7).otherwise(None).alias("p_value"),
        pl.when(pl.col("kind") == "hold_anomaly").then(2.8e-4).otherwise(None).alias("q_value"))
    where = {"e" * 16: "At which tables (his wagers in the window): most at BAC-08 <b>."}
    section = _body(render_report(_inputs(findings=both, where=where))).split('id="statistical"', 1)[1]
    section = section.split("</section>", 1)[0]
    assert ("(30 gaming days to 2026-11-24). At which tables (his wagers in the window): most at BAC-08 &lt;b&gt;.<"
            in section)
    plain = _body(render_report(_inputs(findings=both))).split('id="statistical"', 1)[1].split("</section>", 1)[0]
    assert "(30 gaming days to 2026-11-24).<" in plain and "At which tables" not in plain


def test_the_trend_is_drawn_when_per_night_totals_are_given():
    trend = pl.DataFrame([{"gaming_day": DAY - dt.timedelta(days=i), "currency": "USD", "tonight": i == 0, "rounds": 100,
                           "wagers": 300, "handle": 1_000_000, "recorded_net": -20_000 - i, "expected_net": -20_000,
                           "findings": i, "high_findings": 0} for i in range(3)], schema=TREND_SCHEMA)
    html = render_report(_inputs(trend=trend))
    assert 'id="fig-trend-0"' in html
    section = _body(html).split('id="trend"', 1)[1].split("</section>", 1)[0]
    assert f"tonight {DAY.isoformat()}" in section and f"tonight {(DAY - dt.timedelta(days=1)).isoformat()}" not in section
    assert ">10,000.00<" in section and ">-200.02<" in section  # handle and the players' net, in dollars
    assert "No per-night totals" in render_report(_inputs())
    tonight_only = render_report(_inputs(trend=trend.filter(pl.col("gaming_day") == DAY)))
    assert "no night before tonight yet" in tonight_only and 'id="fig-trend-0"' not in tonight_only


def test_the_trends_findings_axis_counts_in_whole_numbers_from_zero():
    """The findings' right axis had its ticks on the bars' grid lines: 2.58, 5.16, 7.74 findings, and from 21 up where a
    night's house win was below 0. Its own ticks now: whole steps (1, 2, 5, 10 ...) from 0; the bars' axis names its
    money (its title had been set on no axis)."""
    from pipelines.report.figures import count_step, trend as trend_figure

    assert [count_step(m) for m in (0, 6, 7, 13, 30, 130, 1015)] == [1, 1, 2, 5, 5, 50, 200]
    trend = pl.DataFrame([{"gaming_day": DAY - dt.timedelta(days=i), "currency": "USD", "tonight": i == 0, "rounds": 100,
                           "wagers": 300, "handle": 1_000_000, "recorded_net": 20_000 if i == 1 else -20_000,
                           "expected_net": -20_000, "findings": 13 * i + 21, "high_findings": 0} for i in range(4)],
                         schema=TREND_SCHEMA)
    layout = trend_figure(trend, "USD").layout
    y2 = layout.yaxis2
    assert (y2.tickmode, y2.tick0, y2.dtick, y2.tickformat) == ("linear", 0, 10, ",d")
    assert y2.range[0] == 0 and y2.range[1] >= 60
    assert layout.yaxis.title.text == "house win (USD)"


def test_a_days_findings_without_a_currency_are_not_a_row_of_zero_rounds():
    """The data's findings (a gap, a changed source) name no currency: their trend row shows the findings and leaves
    the rounds, wagers and money empty; "0 rounds" read as a night nobody played."""
    row = {"gaming_day": DAY, "tonight": True, "recorded_net": -20_000, "expected_net": -20_000, "high_findings": 0}
    trend = pl.DataFrame([{**row, "currency": "USD", "rounds": 100, "wagers": 300, "handle": 1_000_000, "findings": 2},
                          {**row, "currency": None, "rounds": 0, "wagers": 0, "handle": None, "recorded_net": None,
                           "expected_net": None, "findings": 7}], schema=TREND_SCHEMA)
    table = sections.trend_table(trend)
    assert [c.text for c in table.rows[0]][1:4] == ["USD", "100", "300"]
    assert [c.text for c in table.rows[1]][1:] == [sections.NO_CURRENCY, "", "", "", "", "", "7", "0"]


def test_report_with_no_findings_still_renders():
    html = render_report(ReportInputs(findings=conform(pl.DataFrame(), FINDINGS_SCHEMA), totals=totals_of(_settlements())))
    assert_offline(html)
    assert "No wager settled at another amount" in html


def test_the_same_inputs_give_the_same_report():
    assert render_report(_inputs(bets=_bets())) == render_report(_inputs(bets=_bets()))


def test_packed_data_is_deterministic_and_round_trips():
    obj = findings_payload(_findings(player=HOSTILE))
    assert pack(obj) == pack(obj) and unpack(pack(obj)) == json.loads(json.dumps(obj))


def test_findings_payload_is_compact_and_exact():
    p = findings_payload(_findings(), "db.duckdb")
    assert p["n"] == 4
    kinds = p["cols"]["kind"]
    assert kinds["d"] == ["payout_mismatch", "result_mismatch", "sequence_gap"]  # dictionary-encoded
    assert [kinds["d"][i] for i in kinds["v"]] == _findings()["kind"].to_list()
    assert p["cols"]["diff"]["v"] == ["-80000", None, None, "500000"]  # exact integers, as text
    assert p["decimals"] == {"USD": 2, "VND": 0}
    href, before, after = p["links"]["BAC-01"]
    assert href + "1/index.html" == evidence_href("BAC-01", 1)
    assert before + "1" + after + "1" == evidence_command("BAC-01", 1, "db.duckdb")


# --- in a browser ----------------------------------------------------------------------------------------------

def _many_findings(n: int = 250) -> pl.DataFrame:
    rows = []
    for i in range(n):
        rows.append({"finding_id": f"{i:016x}", "kind": ("payout_mismatch", "limit_breach", "card_integrity")[i % 3],
                     "severity": ("high", "high", "medium")[i % 3], "gaming_day": DAY,
                     "table_id": f"BAC-{i % 7:02d}", "round_no": 1000 + i, "wager_id": f"W{i}",
                     "dealer_id": f"D{i % 5}", "player_id": HOSTILE if i == 3 else f"P-{i % 11}",
                     "expected_net": 10_000 * (i % 13), "recorded_net": 10_000 * (i % 13) + (i * 37 % 101 - 50) * 100,
                     "difference": (i * 37 % 101 - 50) * 100, "rule_ref": "TBAC-5.1.1", "currency": "USD",
                     "game": "baccarat", "detail": f"finding number {i} " + ("<b>bold?</b>" if i == 5 else ""),
                     "source_file": "rounds.jsonl", "source_line": i + 1})
    return conform(pl.DataFrame(rows, infer_schema_length=None), FINDINGS_SCHEMA)


def test_the_report_works_in_headless_chromium(browser, tmp_path):
    """No console error, no request off file://, no injected script run, every chart drawn, the table sorts."""
    f = pl.concat([_findings(player=HOSTILE), _many_findings()])
    times = pl.DataFrame({"finding_id": f["finding_id"], "hour": [i % 24 for i in range(f.height)],
                          "closed_local": ["23:15:02"] * f.height})
    path = write_report(tmp_path / "report.html", _inputs(findings=f, bets=_bets(), finding_times=times))
    visit = browser.open(path, "report")
    page = visit.page
    page.wait_for_selector("#findings-table[data-ready='1']")
    plots = browser.wait_for_plots(page)
    assert plots >= 8
    visit.screenshot("report-full")
    visit.assert_clean()
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    # the hostile player id is in the table as text
    page.fill("#f-search", "onerror")
    page.wait_for_function("document.querySelectorAll('#findings-body tr[data-i]').length === 3")  # 2 + 1 rows of it
    cells = page.eval_on_selector_all("#findings-body td", "tds => tds.map(td => td.textContent)")
    assert HOSTILE in cells
    page.fill("#f-search", "")
    page.wait_for_function("document.querySelectorAll('#findings-body tr[data-i]').length === 100")  # one page of 254

    def column(key):
        idx = page.evaluate(f"Array.from(document.querySelectorAll('#findings-head th')).findIndex(th => th.dataset.key === '{key}')")
        return page.eval_on_selector_all(f"#findings-body tr[data-i] > td:nth-child({idx + 1})",
                                         "tds => tds.map(td => td.textContent)")

    def amounts(texts):
        return [int(t.replace(",", "").replace(".", "")) for t in texts if t]

    page.click("#findings-head th[data-key=diff]")
    # money sorts within each currency (amounts of two currencies are not compared): USD before VND
    curs, up = column("cur"), column("diff")
    usd = amounts([d for c, d in zip(curs, up) if c == "USD"])
    assert usd == sorted(usd) and usd[0] == -80_000  # -800.00 USD, the most underpaid, first
    assert curs[:len(usd)] == ["USD"] * len(usd)
    assert page.get_attribute("#findings-head th[data-key=diff]", "aria-sort") == "ascending"
    page.click("#findings-head th[data-key=diff]")
    curs, down = column("cur"), amounts(column("diff"))
    assert set(curs) == {"USD"} and down == sorted(down, reverse=True) and down[0] == 5_000  # 50.00 USD first
    assert page.get_attribute("#findings-head th[data-key=diff]", "aria-sort") == "descending"
    visit.screenshot("findings-sorted", full_page=False)
    # a static table sorts too: hold per table, by hold (-22.50 % and 1.50 %)
    hold_col = page.evaluate("Array.from(document.querySelectorAll('#hold-tables th')).findIndex(th => th.textContent === 'hold')")
    page.click(f"#hold-tables th:nth-child({hold_col + 1})")
    holds = page.eval_on_selector_all(f"#hold-tables tbody td:nth-child({hold_col + 1})", "tds => tds.map(td => td.textContent)")
    assert holds == ["-22.50 %", "1.50 %"]
    page.click(f"#hold-tables th:nth-child({hold_col + 1})")
    holds = page.eval_on_selector_all(f"#hold-tables tbody td:nth-child({hold_col + 1})", "tds => tds.map(td => td.textContent)")
    assert holds == ["1.50 %", "-22.50 %"]
    # filter by table, then open a row's facts: the evidence link and the command to make the pack
    page.select_option("#f-table", "BAC-01")
    tables = column("table")
    assert tables and set(tables) == {"BAC-01"}
    page.click("#findings-body tr:first-child td:nth-child(2)")
    facts = page.text_content("#findings-body tr.facts")
    assert "pitaudit evidence --db pitaudit.duckdb --table BAC-01 --round" in facts
    href = page.get_attribute("#findings-body tr:first-child a", "href")
    assert re.fullmatch(r"evidence/BAC-01/\d+/index\.html", href)
    visit.assert_clean()


def test_stored_figures_are_used_only_for_the_content_they_were_computed_from(monkeypatch):
    from pipelines.report import theory
    from rulebook.catalogue import load_catalogue

    rs = [r for r in load_catalogue().versions("hoiana-tiger-baccarat/commission") if r.version == "01/01.10.2024"][0]
    fake = {rs.name: {rs.version: {"fingerprint": "not this content", "bets": {"player": [0.5, 9.0]}}}}
    monkeypatch.setattr(theory, "_stored", lambda: fake)
    figs = theory.bet_figures.__wrapped__(rs.name, rs.version)
    assert figs["player"][0] == pytest.approx(0.01235, abs=1e-5)  # computed, not the stale 0.5
    fake[rs.name][rs.version]["fingerprint"] = theory.fingerprint(rs)
    assert theory.bet_figures.__wrapped__(rs.name, rs.version) == {"player": (0.5, 9.0)}
    assert theory.bet_figures.__wrapped__("no such rule set", "1") == {}


@pytest.mark.slow
def test_the_stored_figures_are_what_the_rules_engine_computes_today():
    """theory_figures.json against a fresh computation of every shipped rule set (regenerate it with
    `python -m pipelines.report.theory` when a rule set or the odds change)."""
    from pipelines.report import theory
    from rulebook.catalogue import load_catalogue

    stored = theory._stored()
    for rs in load_catalogue().rulesets:
        entry = stored[rs.name][rs.version]
        assert entry["fingerprint"] == theory.fingerprint(rs), f"{rs.name} {rs.version} changed: regenerate"
        fresh = theory.compute_figures(rs)
        assert set(fresh) == set(entry["bets"])
        for bet, (edge, m2) in fresh.items():
            assert entry["bets"][bet][0] == pytest.approx(edge, rel=1e-9, abs=1e-12), (rs.name, bet)
            assert entry["bets"][bet][1] == pytest.approx(m2, rel=1e-9), (rs.name, bet)


# --- what the report reads from the database --------------------------------------------------------------

def test_gather_aggregates_the_database_in_sql(tmp_path):
    """bet aggregates, the findings' local hours, the files and the trend, against direct queries of a small night."""
    import duckdb

    from benchmarks.report import build_night
    from pipelines.report.gather import gather

    db = tmp_path / "night.duckdb"
    counts = build_night(db, rounds=600, tables=6, findings=40)
    keys = counts.pop("keys")
    got = gather(db, keys[:4])  # four of the six tables
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [k[1] for k in keys[:4]]
        expect = con.execute("""SELECT count(*), sum(amount), -sum(recorded_net) FROM out_settlements
                                WHERE table_id IN (SELECT unnest(?))""", [tables]).fetchall()[0]
        total_handle = con.execute("SELECT sum(amount) FROM out_settlements").fetchall()[0][0]
        hour = dict(con.execute("""SELECT f.finding_id,
                                          hour(r.bets_closed_at AT TIME ZONE 'UTC' + INTERVAL 420 MINUTE)
                                   FROM out_findings f JOIN core_rounds r USING (table_id, round_no)
                                   WHERE f.table_id IN (SELECT unnest(?))""", [tables]).fetchall())
    finally:
        con.close()
    bets = got["bets"]
    assert (bets["wagers"].sum(), bets["handle"].sum(), bets["house_win"].sum()) == expect
    assert set(bets["table_id"]) == set(tables)
    assert bets["bet"].n_unique() > 3  # one row per bet, as recorded
    times = got["times"]
    assert times.height == len(hour) > 0
    assert dict(zip(times["finding_id"], times["hour"])) == hour  # local = UTC + the table's offset (+07:00)
    assert all(len(t) == 8 for t in times["closed_local"])  # HH:MM:SS
    assert got["files"].height == counts["core_source_files"]
    trend = got["trend"]
    assert trend.columns == list(TREND_SCHEMA) and trend["gaming_day"].to_list()[-1] == DAY
    assert trend["handle"].sum() == total_handle  # the trend covers every table in the database, not just keys


def test_a_report_of_hostile_values_runs_nothing_in_a_browser(browser, tmp_path):
    """Every column a log fills set to markup: in every table, chart, label, hover and link, it stays text."""
    f = _findings().with_columns(
        *(pl.lit(HOSTILE).alias(c) for c in ("table_id", "dealer_id", "player_id", "currency", "kind", "rule_ref",
                                             "detail", "source_file", "game", "wager_id")))
    bets = _bets().with_columns(*(pl.lit(HOSTILE).alias(c) for c in ("table_id", "currency")))
    nights = pl.DataFrame([{"gaming_day": DAY - dt.timedelta(days=i), "currency": HOSTILE, "tonight": i == 0,
                            "rounds": 1, "wagers": 1, "handle": 100, "recorded_net": -5, "expected_net": -5,
                            "findings": 4, "high_findings": 2} for i in range(2)], schema=TREND_SCHEMA)
    q = pl.DataFrame({"source_file": [HOSTILE], "source_line": [1], "reason": [HOSTILE], "raw": [HOSTILE]})
    totals = totals_of(_settlements()).with_columns(pl.lit(HOSTILE).alias("currency"))
    path = write_report(tmp_path / "report.html", _inputs(findings=f, totals=totals, bets=bets, trend=nights,
                                                          quarantine=q, database=HOSTILE))
    visit = browser.open(path, "hostile")
    page = visit.page
    page.wait_for_selector("#findings-table[data-ready='1']")
    browser.wait_for_plots(page)
    page.click("#findings-body tr:first-child td:nth-child(2)")  # the facts, with the command
    bar = page.query_selector("#fig-money-0 .bars path")  # hover a money bar: its exact amount and currency
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector("#fig-money-0 .hoverlayer .hovertext")
    assert HOSTILE in page.text_content("#fig-money-0 .hoverlayer")
    visit.screenshot("hostile")
    visit.assert_clean()  # no dialog: no alert ran
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("Array.from(document.querySelectorAll('*')).filter(e => e.getAttribute('onerror')).length") == 0
    assert HOSTILE in page.text_content("#summary") and HOSTILE in page.text_content("#findings-body")
    hrefs = page.eval_on_selector_all("#findings-body a", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("evidence/") and h.count("/") == 3 and h.endswith("/index.html") for h in hrefs)


def test_an_empty_night_renders_every_section_empty():
    empty_f = conform(pl.DataFrame(), FINDINGS_SCHEMA)
    empty_t = totals_of(conform(pl.DataFrame(), SETTLEMENTS_SCHEMA))
    html = render_report(ReportInputs(
        findings=empty_f, totals=empty_t, bets=pl.DataFrame(schema=BET_AGGREGATE_SCHEMA),
        trend=pl.DataFrame(schema=TREND_SCHEMA), quarantine=pl.DataFrame(
            schema={"source_file": pl.String, "source_line": pl.Int64, "reason": pl.String, "raw": pl.String}),
        finding_times=pl.DataFrame(schema={"finding_id": pl.String, "hour": pl.Int32, "closed_local": pl.String})))
    assert_offline(html)
    assert "All findings (0)" in html and "No per-night totals" in html


def test_the_findings_table_shows_a_statistical_findings_words_and_keeps_its_json_a_click_away(browser, audited_sample):
    """The sample's statistical findings in the full findings table: the detail cell is the sentence, q and window;
    the JSON document after them is in the row's facts and found by the search. The cell showed it whole."""
    visit = browser.open(audited_sample / "out" / "report.html", "report-statistical")
    page = visit.page
    page.wait_for_selector("#findings-table[data-ready='1']")
    page.fill("#f-search", "overpaid_pair")  # a word of the JSON only (the test's name), not of the sentence
    page.wait_for_function("(() => { const d = [...document.querySelectorAll('#findings-body td.detail')];"
                           " return d.length >= 1 && d.every(td => td.textContent.includes(' overpaid ')); })()")
    cells = page.eval_on_selector_all("#findings-body td.detail", "tds => tds.map(td => td.textContent)")
    assert cells and all(c.endswith(").") and "overpaid" in c and '{"' not in c for c in cells), cells
    page.click("#findings-body tr[data-i]")
    facts = page.eval_on_selector("#findings-body tr.facts", "tr => tr.textContent")
    assert '"test":"overpaid_pair"' in facts
    visit.assert_clean()


def test_the_reports_script_keeps_ids_on_one_line_up_to_the_same_length_as_the_tables():
    """report.js classes the findings table's id cells itself; its bound must be the server-side tables' bound, or a
    20-character id would wrap in one table and not in the next."""
    script = (Path(sections.__file__).parent / "assets" / "report.js").read_text()
    assert re.search(r"var SHORT_ID = (\d+);", script).group(1) == str(SHORT_ID)
