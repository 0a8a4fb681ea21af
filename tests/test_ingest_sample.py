"""Golden check against the simulator's committed sample night: the lines it planted to be quarantined
(ground_truth.csv, kind ``quarantine``) are exactly the lines the ingest quarantines, with the same reason."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from test_ingest_helpers import ingest

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
PLANTED = re.compile(r"(\S+) line (\d+): to quarantine as (\w+)")


def _planted() -> dict[tuple[str, int], str]:
    truth = SAMPLE / "ground_truth.csv"
    if not truth.is_file():
        pytest.skip("no committed sample night")
    out = {}
    with open(truth, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["kind"] == "quarantine":
                m = PLANTED.search(row["detail"])
                assert m, f"ground truth line not understood: {row['detail']}"
                out[(m.group(1), int(m.group(2)))] = m.group(3)
    if not out:
        pytest.skip("the sample night plants no quarantine lines")
    return out


def test_sample_night_quarantines_exactly_the_planted_lines(tmp_path: Path) -> None:
    planted = _planted()
    con, summary = ingest(SAMPLE, tmp_path / "db.duckdb")
    got = {(f, line): code for f, line, code in
           con.execute("SELECT source_file, source_line, reason_code FROM core_quarantine").fetchall()}
    assert got == planted
    assert summary.count("unreadable") == 0
    assert summary.lines_read == summary.rows_accepted + summary.rows_quarantined
