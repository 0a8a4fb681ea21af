"""The default scope finds the gaming days the ingest's parser loads, through `pitaudit audit`: a round whose
``bets_closed_at`` is written with JSON escapes, a device log (alone) whose ``ts`` is its first column or quoted.

``"bets_closed\\u005fat"`` and ``"\\u0032026-11-20T..."`` are the same JSON as the plain text: the ingest's parser
decodes them and loads the round, but the default scope, which reads the days from the text, did not see them. The
round was in the database, on a gaming day no run audited, and no output said a word about it (an exporter, or
someone who can write the export, could keep an overpaid round out of every nightly report that way).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from pipelines.audit.scope import days_in_files
from pipelines.cli import app

SAMPLE = Path(__file__).parents[1] / "data" / "sample" / "rounds_BAC-01_2026-11-24.jsonl"


def _escaped_night(folder: Path) -> None:
    folder.mkdir()
    target = folder / SAMPLE.name
    shutil.copyfile(SAMPLE, target)
    first = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    lines = []
    for round_no, day, how in ((999_001, "2026-11-20", "value"), (999_002, "2026-11-21", "key")):
        r = dict(first, round_no=round_no, bets_closed_at=f"{day}T07:00:00+07:00")
        text = json.dumps(r)
        if how == "value":  # the first digit of the year as \u0032
            text = text.replace(f'"{day}T', f'"\\u0032{day[1:]}T')
        else:  # the key's underscore as \u005f
            text = text.replace('"bets_closed_at"', '"bets_closed\\u005fat"')
        assert json.loads(text)["bets_closed_at"] == r["bets_closed_at"]
        lines.append(text)
    with target.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def _rows(out: Path) -> list[dict]:
    with (out / "findings.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_round_closed_at_an_escaped_stamp_is_in_the_default_scope(tmp_path, prefect_harness):
    night = tmp_path / "night"
    _escaped_night(night)
    assert {d.isoformat() for d in days_in_files([("rounds_jsonl", night / SAMPLE.name)], 360)} == {
        "2026-11-20", "2026-11-21", "2026-11-24"}
    db, out = tmp_path / "a.duckdb", tmp_path / "out"
    result = CliRunner().invoke(app, ["audit", "--input", str(night), "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "gaming day(s) 2026-11-20..2026-11-24" in result.output
    found = {(r["gaming_day"], r["round_no"]) for r in _rows(out)}
    assert ("2026-11-20", "999001") in found and ("2026-11-21", "999002") in found
    # the same input again: the same days, the same findings
    first = (out / "findings.csv").read_bytes()
    again = CliRunner().invoke(app, ["audit", "--input", str(night), "--db", str(db), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert (out / "findings.csv").read_bytes() == first


def test_a_device_log_alone_with_ts_first_or_quoted_is_audited_as_in_the_usual_order(tmp_path, prefect_harness):
    """A night of device logs alone (rounds the table system never recorded) takes its days from each line's ``ts``.
    The header may order the columns as it likes and a field may be quoted (formats.md): a log with ``ts`` first, or
    quoted, was loaded and gave no gaming day, and the run said "nothing to audit" (status 4) where the same events in
    the usual order are audited (a round dealt that the table system never recorded is a finding)."""
    source = Path(__file__).parents[1] / "data" / "sample" / "shoe_SH-0115_2026-11-24.csv"
    rows = list(csv.reader(source.open(encoding="utf-8", newline="")))
    ts = rows[0].index("ts")
    order = [ts] + [i for i in range(len(rows[0])) if i != ts]
    outputs = []
    for name, write in (("usual", lambda r: r), ("ts-first", lambda r: [r[i] for i in order]),
                        ("quoted", lambda r: r)):
        night = tmp_path / name
        night.mkdir()
        with (night / source.name).open("w", encoding="utf-8", newline="") as fh:
            quoting = csv.QUOTE_ALL if name == "quoted" else csv.QUOTE_MINIMAL
            csv.writer(fh, lineterminator="\n", quoting=quoting).writerows(write(r) for r in rows)
        out = tmp_path / f"out-{name}"
        result = CliRunner().invoke(app, ["audit", "--input", str(night), "--db", str(tmp_path / f"{name}.duckdb"),
                                          "--out", str(out)])
        assert result.exit_code == 0, result.output
        outputs.append((out / "findings.csv").read_bytes())
    assert b",unmatched_round," in outputs[0]
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
