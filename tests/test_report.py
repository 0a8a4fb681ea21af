"""The audit report opens offline: plotly.js inline, no URL loaded, no web fonts; and it draws.

The structural test parses the HTML and fails on any element or style that would fetch from the
network. If /usr/bin/chromium exists, the report is also rendered headless with networking
disabled and the screenshot must not be blank.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from pipelines.audit.frames import FINDINGS_SCHEMA, SETTLEMENTS_SCHEMA, conform
from pipelines.audit.publish import totals_of
from pipelines.report import ReportInputs, render_report, write_report

DAY = dt.date(2026, 11, 24)


def _findings() -> pl.DataFrame:
    rows = [
        {"finding_id": "a" * 16, "kind": "payout_mismatch", "severity": "high", "gaming_day": DAY, "table_id": "BAC-01",
         "round_no": 1, "wager_id": "W1", "dealer_id": "D1", "expected_net": 200000, "recorded_net": 120000,
         "difference": -80000, "rule_ref": "TBAC-5.1.3", "currency": "USD",
         "detail": "Banker won on 6 with three cards: Tiger pays 20:1 (TBAC-5.1.3); paid 12:1 <script>alert(1)</script>",
         "source_file": "rounds_night.jsonl", "source_line": 1},
        {"finding_id": "b" * 16, "kind": "sequence_gap", "severity": "low", "gaming_day": DAY, "table_id": "BAC-02",
         "round_no": 9, "rule_ref": "FORMATS-EVENT-SEQ", "detail": "device lost 2 events", "source_file": "shoe_a.csv",
         "source_line": 40},
        {"finding_id": "c" * 16, "kind": "result_mismatch", "severity": "medium", "gaming_day": DAY, "table_id": "BAC-01",
         "round_no": 3, "dealer_id": "D2", "rule_ref": "TBAC-7.16", "detail": "the cards stand",
         "source_file": "rounds_night.jsonl", "source_line": 3},
    ]
    return conform(pl.DataFrame(rows, infer_schema_length=None), FINDINGS_SCHEMA)


def _settlements() -> pl.DataFrame:
    rows = [{"gaming_day": DAY, "table_id": "BAC-01", "round_no": 1, "wager_id": "W1", "currency": "USD", "amount": 10000,
             "expected_net": 200000, "recorded_net": 120000}]
    return conform(pl.DataFrame(rows), SETTLEMENTS_SCHEMA)


class _Loads(HTMLParser):
    """Collects every attribute that would make a browser fetch something."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fetches: list[str] = []
        self.scripts = 0
        self.inline_scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
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
        if tag in ("iframe", "embed", "object", "base"):
            self.fetches.append(f"<{tag}>")


def assert_offline(html: str) -> None:
    parser = _Loads()
    parser.feed(html)
    assert parser.fetches == [], parser.fetches
    styles = "\n".join(re.findall(r"<style[^>]*>(.*?)</style>", html, flags=re.S))
    assert "@import" not in styles and "url(" not in styles and "@font-face" not in styles
    assert not re.search(r"""style=["'][^"']*url\(""", html)
    assert parser.inline_scripts >= 2  # plotly.js and the figures


def test_report_embeds_plotly_and_loads_nothing_from_the_network():
    html = render_report(ReportInputs(findings=_findings(), totals=totals_of(_settlements()), quarantined=2))
    assert_offline(html)
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js itself, inline
    assert "cdn.plot.ly/plotly" not in html.split("</head>", 1)[1]
    # every figure is drawn, with a fixed id
    for div in ("fig-kind", "fig-money", "fig-table", "fig-dealer"):
        assert f'id="{div}"' in html


def test_report_escapes_what_the_input_says():
    html = render_report(ReportInputs(findings=_findings(), totals=totals_of(_settlements())))
    body = html.split("</head>", 1)[1]
    assert "<script>alert(1)</script>" not in body.replace("\\u003c", "<").split("<h2>Top findings</h2>", 1)[1].split("</table>")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_report_shows_totals_and_money_at_stake():
    html = render_report(ReportInputs(findings=_findings(), totals=totals_of(_settlements()), quarantined=2))
    assert '<div class="v">3</div><div class="k">findings</div>' in html
    assert '<div class="v">2</div><div class="k">input lines quarantined</div>' in html
    assert ">80,000<" in html  # at stake: |120,000 - 200,000|


def test_report_with_no_findings_still_renders():
    html = render_report(ReportInputs(findings=conform(pl.DataFrame(), FINDINGS_SCHEMA), totals=totals_of(_settlements())))
    assert_offline(html)
    assert "No findings." in html


def test_the_same_inputs_give_the_same_report():
    a = render_report(ReportInputs(findings=_findings(), totals=totals_of(_settlements())))
    b = render_report(ReportInputs(findings=_findings(), totals=totals_of(_settlements())))
    assert a == b


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium to render the report with")
def test_report_renders_headless_without_network(tmp_path):
    path = write_report(tmp_path / "report.html", ReportInputs(findings=_findings(), totals=totals_of(_settlements())))
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--proxy-server=127.0.0.1:9",
         "--proxy-bypass-list=<-loopback>", "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=5000",
         "--window-size=1200,1600", f"--screenshot={shot}", path.as_uri()],
        check=True, timeout=120, capture_output=True,
    )
    pixels = _png_pixels(shot.read_bytes())
    assert len(set(pixels)) > 20, "the screenshot is blank or nearly so"
    assert sum(1 for p in pixels if p != (255, 255, 255)) > 0.01 * len(pixels), "the report drew almost nothing"


def _png_pixels(data: bytes) -> list[tuple[int, int, int]]:
    """RGB pixels of an 8-bit, non-interlaced RGB/RGBA PNG (what chromium writes), without an imaging library."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    out: list[tuple[int, int, int]] = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if y % 4 == 0:  # every fourth row is plenty to tell a drawing from a blank page
            out.extend(tuple(line[x:x + 3]) for x in range(0, stride, bpp * 4))
    return out


def test_the_png_reader_decodes_every_filter_type():
    """The screenshot check's PNG reader against rows written with each PNG filter (0-4)."""
    import random
    import struct
    import zlib

    rnd = random.Random(5)
    width, height, bpp = 16, 20, 3
    rows = [bytes(rnd.randrange(256) for _ in range(width * bpp)) for _ in range(height)]

    def paeth(a, b, c):
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c

    raw, prev = bytearray(), bytes(width * bpp)
    for y, row in enumerate(rows):
        f = y % 5
        out = bytearray()
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][f]
            out.append((x - pred) & 255)
        raw += bytes([f]) + out
        prev = row

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))
    expected = [tuple(rows[y][x:x + 3]) for y in range(0, height, 4) for x in range(0, width * bpp, bpp * 4)]
    assert _png_pixels(png) == expected
